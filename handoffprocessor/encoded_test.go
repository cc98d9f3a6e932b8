package handoffprocessor

import (
	"context"
	"math"
	"strings"
	"testing"
	"time"

	"github.com/klauspost/compress/s2"
	"github.com/open-telemetry/opentelemetry-collector-contrib/pkg/pdatatest/ptracetest"
	"github.com/stretchr/testify/require"
	"go.opentelemetry.io/collector/consumer/consumertest"
	"go.opentelemetry.io/collector/pdata/pcommon"
	"go.opentelemetry.io/collector/pdata/ptrace"
	"go.uber.org/zap"
	"go.uber.org/zap/zapcore"
	"go.uber.org/zap/zaptest/observer"

	"github.com/otelcol-handoff/otelcol-handoff/handoffprocessor/internal/metadatatest"
)

// hostileBatch is one batch of a trace whose spans carry what the wire allows and a naive
// encoder might not keep: invalid UTF-8 and control characters in keys and values, bytes,
// deeply nested maps and arrays, empty values, links, events and a status message. Its
// spans' ids start with first; with root its first span is the trace's root, and every
// other span is a child of rootID.
func hostileBatch(id pcommon.TraceID, first byte, root bool) ptrace.Traces {
	td := ptrace.NewTraces()
	rs := td.ResourceSpans().AppendEmpty()
	rs.SetSchemaUrl("https://opentelemetry.io/schemas/1.26.0")
	rs.Resource().Attributes().PutStr("service.name", "svc\x00\x1b[31m\xff")
	for scope := range 2 {
		ss := rs.ScopeSpans().AppendEmpty()
		ss.Scope().SetName("scope\xc3\x28")
		ss.Scope().SetVersion(strings.Repeat("v", scope+1))
		for k := range 3 {
			sp := ss.Spans().AppendEmpty()
			sp.SetTraceID(id)
			sp.SetSpanID(pcommon.SpanID{first, byte(scope), byte(k), 1})
			if !root || scope+k > 0 {
				sp.SetParentSpanID(rootID)
			}
			sp.SetName("span\t\r\n\u2028\xed\xa0\x80")
			sp.SetKind(ptrace.SpanKindClient)
			sp.SetStartTimestamp(pcommon.Timestamp(1_700_000_000_000_000_000 + int64(k)))
			sp.SetEndTimestamp(pcommon.Timestamp(1_700_000_001_000_000_000))
			attrs := sp.Attributes()
			attrs.PutStr("bad.utf8\xff", "\xfe\xff\x00 ok")
			attrs.PutStr("empty", "")
			attrs.PutEmpty("nil")
			attrs.PutEmptyBytes("bytes").FromRaw([]byte{0, 1, 2, 255})
			attrs.PutDouble("negative-zero", math.Copysign(0, -1))
			attrs.PutInt("min", -1<<63)
			nested := attrs.PutEmptyMap("deep")
			for range 64 {
				nested = nested.PutEmptyMap("m")
				nested.PutEmptySlice("a").AppendEmpty().SetStr("\x7f")
			}
			ev := sp.Events().AppendEmpty()
			ev.SetName("event\x01")
			ev.Attributes().PutStr("gen_ai.prompt", strings.Repeat("\x00\x1f", 100))
			ln := sp.Links().AppendEmpty()
			ln.SetTraceID(pcommon.TraceID{9, 9})
			ln.SetSpanID(pcommon.SpanID{9})
			ln.TraceState().FromRaw("k=v")
			sp.Status().SetCode(ptrace.StatusCodeError)
			sp.Status().SetMessage("boom\x00")
		}
	}
	return td
}

// rootID is the span id hostileBatch gives a root made with first = 12.
var rootID = pcommon.SpanID{12, 0, 0, 1}

func TestBufferedSpansLeaveAsTheyCame(t *testing.T) {
	for _, encoding := range []string{bufferProto, bufferProtoS2, bufferDecoded} {
		t.Run(encoding, func(t *testing.T) { testBufferedSpansLeaveAsTheyCame(t, encoding) })
	}
}

func testBufferedSpansLeaveAsTheyCame(t *testing.T, encoding string) {
	sink := new(consumertest.TracesSink)
	h := newHarness(t, testConfig(func(c *Config) { c.BufferEncoding = encoding }), sink, true)
	require.Equal(t, encoding != bufferDecoded, h.p.codec.encoded)
	require.Equal(t, encoding == bufferProtoS2, h.p.codec.compress)
	id := pcommon.TraceID{0xab, 1}
	want := ptrace.NewTraces()
	// Three batches, the root in the last: the trace is buffered across all three.
	for i, root := range []bool{false, false, true} {
		td := hostileBatch(id, byte(10+i), root)
		td.ResourceSpans().At(0).CopyTo(want.ResourceSpans().AppendEmpty())
		h.consume(td)
	}
	require.Zero(t, sink.SpanCount(), "buffered until the quiet period ends")
	h.advanceAndTick(3 * time.Second)
	require.Eventually(t, func() bool { return sink.SpanCount() == want.SpanCount() }, waitFor, time.Millisecond)
	got := sink.AllTraces()
	require.Len(t, got, 1)
	// Byte for byte, in arrival order: nothing in a non-agent trace is rewritten.
	require.NoError(t, ptracetest.CompareTraces(want, got[0]))
	h.assertMetrics(wantMetrics{released: map[string]int64{triggerRoot: 1}, spansReleased: int64(want.SpanCount())})
}

// TestUndecodableFragmentCountedAndLogged: buffered bytes that do not decode whole (only a
// bug could make them) lose their spans visibly. A fragment cut inside a span fails to
// decode; one cut at a message boundary decodes without error but short; a compressed
// block cut short fails to decompress. Either way the rest of the trace leaves, the lost
// spans are counted and logged, and the gauges return to zero.
func TestUndecodableFragmentCountedAndLogged(t *testing.T) {
	id := pcommon.TraceID{0xcd, 2}
	// bad holds two resources; cuts keep what of it they keep.
	bad := &fragment{id: id, data: hostileBatch(id, 13, false)}
	hostileBatch(id, 14, false).ResourceSpans().MoveAndAppendTo(bad.data.ResourceSpans())
	codecFor(bufferProto).encode(bad)
	raw := bad.encoded.b
	firstResource := ptrace.NewTraces()
	bad.data.ResourceSpans().At(0).CopyTo(firstResource.ResourceSpans().AppendEmpty())
	atBoundary := (&ptrace.ProtoMarshaler{}).TracesSize(firstResource)
	compressed := storedFragment{b: s2.Encode(nil, raw), compressed: true}
	cuts := map[string]struct {
		codec           bufferCodec
		stored          storedFragment
		keptBad, failed int
	}{
		"inside a span":                  {codecFor(bufferProto), storedFragment{b: raw[:len(raw)-1]}, 0, 1},
		"at a message boundary":          {codecFor(bufferProto), storedFragment{b: raw[:atBoundary]}, firstResource.SpanCount(), 0},
		"s2, inside a span":              {codecFor(bufferProtoS2), storedFragment{b: s2.Encode(nil, raw[:len(raw)-1]), compressed: true}, 0, 1},
		"s2, at a message boundary":      {codecFor(bufferProtoS2), storedFragment{b: s2.Encode(nil, raw[:atBoundary]), compressed: true}, firstResource.SpanCount(), 0},
		"s2, compressed block cut short": {codecFor(bufferProtoS2), storedFragment{b: compressed.b[:len(compressed.b)/2], compressed: true}, 0, 1},
	}
	for name, cut := range cuts {
		t.Run(name, func(t *testing.T) {
			sink := new(consumertest.TracesSink)
			h := newHarness(t, testConfig(), sink, true)
			h.p.codec = cut.codec
			core, logs := observer.New(zapcore.ErrorLevel)
			h.p.logger = zap.New(core)
			good := &fragment{id: id, data: hostileBatch(id, 12, true)}
			cut.codec.encode(good)
			require.Equal(t, good.bytes, (&ptrace.ProtoMarshaler{}).TracesSize(good.data), "the protobuf size, compressed or not")
			require.Equal(t, cut.codec.compress, good.encoded.compressed)
			spans := good.data.SpanCount() + bad.data.SpanCount()
			tr := &pendingTrace{
				id: id, encoded: encodedSpans{good.encoded, cut.stored}, data: ptrace.NewTraces(),
				spans: spans, first: h.p.now(), rootSeen: true,
			}
			h.p.hold(1, int64(spans)) // as the shard did when it buffered them

			h.p.forwardReleased(context.Background(), []release{{trace: tr, trigger: triggerRoot}})

			kept := good.data.SpanCount() + cut.keptBad
			require.Equal(t, kept, sink.SpanCount(), "the rest of the trace left")
			lost := spans - kept
			metadatatest.AssertEqualProcessorHandoffUndecodableSpans(t, h.tt, dps(int64(lost)), ignoreTime)
			h.assertMetrics(wantMetrics{released: map[string]int64{triggerRoot: 1}, spansReleased: int64(kept)})
			entries := logs.All()
			require.Len(t, entries, 1)
			fields := entries[0].ContextMap()
			require.Equal(t, id.String(), fields["trace_id"])
			require.EqualValues(t, cut.failed, fields["failed_fragments"])
			require.EqualValues(t, lost, fields["spans"])
		})
	}
}
