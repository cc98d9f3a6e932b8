package handoffprocessor

import (
	"context"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
	"go.opentelemetry.io/collector/pdata/pcommon"
)

// blockedDownstream is a processor whose one release worker is in a downstream call that
// does not return (until the test opens the sink) and whose release queue is full, with
// its one shard waiting to hand it more: backpressure, as a destination that hangs makes
// it. The five traces it buffered are its keys.
func blockedDownstream(t *testing.T) (*harness, *gatedSink, []spanKey) {
	t.Helper()
	sink := newGatedSink(true) // returns when its context is cancelled
	h := newHarness(t, testConfig(func(c *Config) {
		c.NumShards = 1             // one shard, one release worker, a queue of two chunks
		c.Release.MaxBatchSpans = 1 // a chunk per trace
		c.ShutdownTimeout = 500 * time.Millisecond
	}), sink, true)
	t.Cleanup(sink.open) // before the harness' Shutdown (cleanups run last-in first-out)
	keys := singleSpanTraces(h, 5)
	// Due at the shard's next message: the worker takes the first trace into the blocked
	// call, the queue takes two, and the shard waits with the other two.
	h.clock.Advance(h.cfg.QuietPeriod)
	return h, sink, keys
}

// A caller whose context ends while its request waits on backpressure gets an error then,
// not when the destination returns. The span the shard took stays buffered and is
// forwarded (or counted as dropped) like every other.
func TestCallerGivesUpUnderBackpressure(t *testing.T) {
	h, sink, keys := blockedDownstream(t)
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	late := spanKey{pcommon.TraceID{9}, pcommon.SpanID{9}}
	consumed := make(chan error, 1)
	go func() { consumed <- h.p.ConsumeTraces(ctx, oneSpan(late.trace, late.span, pcommon.SpanID{}, "x")) }()
	// The call's message made the shard release the five: it is in the shard's hands.
	requireEntered(t, sink)
	cancel()
	select {
	case err := <-consumed:
		require.ErrorIs(t, err, context.Canceled)
		require.ErrorContains(t, err, "release queue is full")
	case <-time.After(waitFor):
		require.FailNow(t, "ConsumeTraces did not return when its caller gave up")
	}

	sink.open()
	h.advanceAndTick(h.cfg.QuietPeriod)
	require.Eventually(t, func() bool { return sink.SpanCount() == len(keys)+1 }, waitFor, time.Millisecond)
	requireExactlyOnce(t, append(keys, late), sinkSpans(&sink.TracesSink))
}

// Shutdown keeps to its budget even when an intake call holds the lock it needs: the call
// waits (no deadline of its own) to give a shard its message while the shard waits on
// backpressure. The budget's end stops the run, the shard drops what it was handing over,
// and everything is counted: forwarded or dropped, nothing else.
func TestShutdownKeepsItsBudgetBehindBlockedIntake(t *testing.T) {
	h, sink, keys := blockedDownstream(t)
	// Sixteen calls fill the shard's inbox behind the one that made it release; the
	// seventeenth waits to send, holding the intake lock.
	const calls = 1 + 16 + 1
	var wg sync.WaitGroup
	errs := make(chan error, calls)
	for i := range calls {
		wg.Add(1)
		go func() {
			defer wg.Done()
			id := pcommon.TraceID{0x77, byte(i), 1}
			errs <- h.p.ConsumeTraces(context.Background(), oneSpan(id, pcommon.SpanID{0x77, byte(i), 1}, pcommon.SpanID{}, "x"))
		}()
		if i == 0 {
			requireEntered(t, sink) // the first call's message made the shard release
		}
	}
	require.Eventually(t, func() bool { return len(h.p.shards[0].in) == cap(h.p.shards[0].in) }, waitFor, time.Millisecond,
		"the shard's inbox fills")

	shutdownErr := make(chan error, 1)
	go func() { shutdownErr <- h.p.Shutdown(context.Background()) }()
	select {
	case err := <-shutdownErr:
		require.ErrorContains(t, err, "shutdown timed out")
	case <-time.After(waitFor):
		require.FailNow(t, "Shutdown (shutdown_timeout 500ms) did not return while intake waited on backpressure")
	}
	wg.Wait() // every intake call ended: the shard let go once the budget ran out
	close(errs)
	for err := range errs {
		require.NoError(t, err, "a call whose spans were taken (and then forwarded or dropped, counted)")
	}

	sink.open()
	requireStopped(t, h)
	// The call in progress when the budget ran out was cancelled: a release failure.
	forwarded, dropped, failed := int64(sink.SpanCount()), h.p.droppedSpans.Load(), sumOf(t, h.tt, "release_failures")
	require.Equal(t, int64(len(keys)+calls), forwarded+dropped+failed,
		"every span taken is forwarded, dropped or failed, counted (%d, %d, %d)", forwarded, dropped, failed)
	require.Equal(t, int64(1), failed)
	require.Positive(t, dropped, "the budget ran out with spans held")
}

// requireEntered waits for a downstream call to begin.
func requireEntered(t *testing.T, sink *gatedSink) {
	t.Helper()
	select {
	case n := <-sink.entered:
		require.Equal(t, 1, n, "spans of the call")
	case <-time.After(waitFor):
		require.FailNow(t, "no downstream call began")
	}
}
