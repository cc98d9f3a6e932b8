package handoffprocessor

import (
	"context"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
	"go.opentelemetry.io/collector/consumer/consumertest"
	"go.opentelemetry.io/collector/pdata/pcommon"
	"go.opentelemetry.io/collector/pdata/ptrace"

	"github.com/otelcol-handoff/otelcol-handoff/handoffprocessor/internal/metadatatest"
)

// A trace released early (too large) leaves its deadline entry in the shard's heap. Once
// the late-span ring has forgotten its id, spans of that id start a new trace; the old
// entry, reached first, must not release it: the new trace keeps its own max_wait.
func TestEarlierTracesDeadlineEntryDoesNotReleaseANewTraceOfItsId(t *testing.T) {
	sink := new(consumertest.TracesSink)
	h := newHarness(t, testConfig(func(c *Config) {
		c.NumShards = 1
		c.MaxSpansPerTrace = 2
		c.LateSpanCacheSize = 1
	}), sink, true) // quiet_period 2s, max_wait 30s
	d, a, f := pcommon.TraceID{0xd}, pcommon.TraceID{0xa}, pcommon.TraceID{0xf}

	h.consume(rootlessSpans(d, 0x10, 1)) // t0: D, due t0+30s, on top of the heap
	h.advanceAndTick(time.Second)
	h.consume(rootlessSpans(a, 0x20, 1)) // t0+1s: A, due t0+31s
	h.consume(rootlessSpans(a, 0x30, 2)) // A too large: released, its entry stays under D's
	h.consume(rootlessSpans(f, 0x40, 3)) // F too large: the ring of one remembers F, not A
	h.advanceAndTick(4 * time.Second)
	h.consume(rootlessSpans(a, 0x50, 1)) // t0+5s: a new A, due t0+35s
	h.advanceAndTick(25 * time.Second)   // t0+30s: D times out
	h.advanceAndTick(time.Second)        // t0+31s: the first A's entry comes up

	// Whatever is still buffered leaves now, as end_of_input: the new A must be among it.
	require.NoError(t, h.p.EndOfInput(context.Background()))
	require.Eventually(t, func() bool { return sink.SpanCount() == 8 }, waitFor, time.Millisecond)
	metadatatest.AssertEqualProcessorHandoffTracesReleased(t, h.tt, releasedDPs(map[string]int64{
		triggerTooLarge: 2, triggerTimeout: 1, triggerEndOfInput: 1,
	}), ignoreTime)
}

// rootlessSpans is one batch of n spans of trace id whose parent is elsewhere (no root),
// their span ids starting at first.
func rootlessSpans(id pcommon.TraceID, first byte, n int) ptrace.Traces {
	td := ptrace.NewTraces()
	spans := td.ResourceSpans().AppendEmpty().ScopeSpans().AppendEmpty().Spans()
	for i := range n {
		sp := spans.AppendEmpty()
		sp.SetTraceID(id)
		sp.SetSpanID(pcommon.SpanID{first + byte(i), 1})
		sp.SetParentSpanID(pcommon.SpanID{0xee})
		sp.SetName("step")
	}
	return td
}
