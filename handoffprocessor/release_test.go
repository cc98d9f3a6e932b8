package handoffprocessor

import (
	"context"
	"errors"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
	"go.opentelemetry.io/collector/component/componenttest"
	"go.opentelemetry.io/collector/consumer/consumertest"
	"go.opentelemetry.io/collector/pdata/pcommon"
	"go.opentelemetry.io/collector/pdata/ptrace"
	"go.uber.org/zap"
	"go.uber.org/zap/zapcore"
	"go.uber.org/zap/zaptest/observer"

	"github.com/otelcol-handoff/otelcol-handoff/handoffprocessor/internal/metadatatest"
	"github.com/otelcol-handoff/otelcol-handoff/internal/agentgraph"
)

// copiesOf returns n copies of a capture, copy i under its own trace id, with their keys.
func copiesOf(t *testing.T, name string, n int) ([]ptrace.Traces, []spanKey) {
	t.Helper()
	var tds []ptrace.Traces
	var keys []spanKey
	for i := range n {
		td := loadCapture(t, name)
		id := traceIDOf(t, td)
		id[14], id[15] = byte(i>>8), byte(i)
		setTraceID(td, id)
		keys = append(keys, keysOf(td)...)
		tds = append(tds, td)
	}
	return tds, keys
}

// requireBounded checks every downstream batch against the release bounds: a batch over
// one holds a single trace. It also checks that no trace was split over two batches, and
// returns how many traces each batch held.
func requireBounded(t *testing.T, batches []ptrace.Traces, lim ReleaseConfig) []int {
	t.Helper()
	var sizer ptrace.ProtoMarshaler
	batchOf := map[pcommon.TraceID]int{}
	perBatch := make([]int, len(batches))
	for i, td := range batches {
		ids := map[pcommon.TraceID]bool{}
		for _, s := range allSpans(td) {
			ids[s.span.TraceID()] = true
		}
		for id := range ids {
			prev, seen := batchOf[id]
			require.False(t, seen, "trace %s split over batches %d and %d", id, prev, i)
			batchOf[id] = i
		}
		perBatch[i] = len(ids)
		if len(ids) > 1 {
			require.LessOrEqual(t, td.SpanCount(), lim.MaxBatchSpans, "batch %d (%d traces)", i, len(ids))
			require.LessOrEqual(t, sizer.TracesSize(td), lim.MaxBatchBytes, "batch %d (%d traces)", i, len(ids))
		}
	}
	return perBatch
}

// Many traces due at the same instant leave in several batches, none over either bound,
// and every span arrives exactly once.
func TestSimultaneousReleasesAreBatched(t *testing.T) {
	const traces = 60
	oneTrace := func() (spans, bytes int) {
		// Size of one assembled Google ADK trace (10 spans + 1 HANDOFF span).
		td := loadCapture(t, adkOK)
		g := agentgraph.Build(traceIDOf(t, td), agentgraph.SpansOf(td)[traceIDOf(t, td)], agentgraph.Options{})
		agentgraph.AppendHandoffs(g, td, createDefaultConfig().(*Config).contentPolicy())
		var sizer ptrace.ProtoMarshaler
		return td.SpanCount(), sizer.TracesSize(td)
	}
	spansEach, bytesEach := oneTrace()
	require.Equal(t, 11, spansEach)

	for name, lim := range map[string]ReleaseConfig{
		// 4 traces fit by spans (44 <= 50), bytes never bind.
		"by_spans": {MaxBatchSpans: 50, MaxBatchBytes: 3 << 20},
		// 3 traces fit by bytes, spans never bind.
		"by_bytes": {MaxBatchSpans: 8192, MaxBatchBytes: 3*bytesEach + bytesEach/2},
	} {
		t.Run(name, func(t *testing.T) {
			sink := new(consumertest.TracesSink)
			h := newHarness(t, testConfig(func(c *Config) { c.Release = lim }), sink, true)
			tds, keys := copiesOf(t, adkOK, traces)
			for _, td := range tds {
				h.consume(td)
			}
			h.advanceAndTick(h.cfg.QuietPeriod) // every quiet period ends now
			want := traces * spansEach
			require.Eventually(t, func() bool { return sink.SpanCount() == want }, waitFor, time.Millisecond)

			batches := sink.AllTraces()
			perBatch := requireBounded(t, batches, lim)
			fit := min(lim.MaxBatchSpans/spansEach, lim.MaxBatchBytes/bytesEach)
			// Two shards release their share each, in batches of at most fit traces.
			require.GreaterOrEqual(t, len(batches), traces/fit, "batches per trace count %v", perBatch)
			for i, n := range perBatch {
				require.LessOrEqual(t, n, fit, "batch %d", i)
			}
			requireExactlyOnce(t, keys, sinkSpans(sink))
			h.assertMetrics(wantMetrics{
				released:      map[string]int64{triggerRoot: traces},
				spansReleased: int64(traces * 10), handoffs: traces,
			})
		})
	}
}

// A trace larger than a bound is not split: it leaves whole, alone in its batch, on every
// path (timed release, too_large inside ConsumeTraces, shutdown).
func TestTraceOverBoundLeavesAlone(t *testing.T) {
	lim := ReleaseConfig{MaxBatchSpans: 5, MaxBatchBytes: 3 << 20} // every capture is larger
	sink := new(consumertest.TracesSink)
	h := newHarness(t, testConfig(func(c *Config) {
		c.Release = lim
		c.MaxSpansPerTrace = 15 // a strands trace (17 spans) leaves early
	}), sink, true)

	timed, timedKeys := copiesOf(t, adkOK, 3)
	for _, td := range timed {
		h.consume(td)
	}
	h.advanceAndTick(h.cfg.QuietPeriod)
	require.Eventually(t, func() bool { return sink.SpanCount() == 3*11 }, waitFor, time.Millisecond)

	big := loadCapture(t, strandsOK)
	bigKeys := keysOf(big)
	bigHandoffs, _ := graphStats(big)
	h.consume(big) // too_large: released at once

	pending, _ := copiesOf(t, adkOK, 2)
	var pendingKeys []spanKey
	for _, td := range pending {
		id := traceIDOf(t, td)
		id[0] ^= 0xff // unlike the timed copies' ids, which are released already
		setTraceID(td, id)
		pendingKeys = append(pendingKeys, keysOf(td)...)
		h.consume(td)
	}
	require.NoError(t, h.p.Shutdown(context.Background()))

	batches := sink.AllTraces()
	perBatch := requireBounded(t, batches, lim)
	require.Len(t, batches, 3+1+2, "one batch per trace")
	for i, n := range perBatch {
		require.Equal(t, 1, n, "batch %d", i)
	}
	requireExactlyOnce(t, append(append(timedKeys, bigKeys...), pendingKeys...), sinkSpans(sink))
	h.assertMetrics(wantMetrics{
		released:      map[string]int64{triggerRoot: 3, triggerTooLarge: 1, triggerShutdown: 2},
		spansReleased: 3*10 + 17 + 2*10, handoffs: 3 + bigHandoffs + 2, tooLarge: 1,
	})
}

// gatedSink records every batch and blocks each call until the test lets it go (or, when
// honorCtx, until the caller's context ends, returning its error).
type gatedSink struct {
	consumertest.TracesSink
	entered  chan int // spans of each batch, as its call starts
	release  chan struct{}
	honorCtx bool
	once     sync.Once
}

func newGatedSink(honorCtx bool) *gatedSink {
	return &gatedSink{entered: make(chan int, 1024), release: make(chan struct{}), honorCtx: honorCtx}
}

func (s *gatedSink) ConsumeTraces(ctx context.Context, td ptrace.Traces) error {
	s.entered <- td.SpanCount()
	if s.honorCtx {
		select {
		case <-s.release:
		case <-ctx.Done():
			return ctx.Err()
		}
	} else {
		<-s.release
	}
	return s.TracesSink.ConsumeTraces(ctx, td)
}

// open lets every blocked and future call through.
func (s *gatedSink) open() { s.once.Do(func() { close(s.release) }) }

// singleSpanTraces consumes n one-span traces (roots) and returns their keys.
func singleSpanTraces(h *harness, n int) []spanKey {
	keys := make([]spanKey, 0, n)
	for i := range n {
		id := pcommon.TraceID{0x5a, byte(i >> 8), byte(i), 1}
		sid := pcommon.SpanID{0x5a, byte(i >> 8), byte(i), 1}
		h.consume(oneSpan(id, sid, pcommon.SpanID{}, "op"))
		keys = append(keys, spanKey{id, sid})
	}
	return keys
}

// Traces released but still queued for a release worker stay in the gauges: a trace
// leaves traces_in_memory / spans_in_memory when it is handed downstream.
func TestGaugesCountQueuedTraces(t *testing.T) {
	sink := newGatedSink(false)
	h := newHarness(t, testConfig(func(c *Config) {
		c.NumShards = 1
		c.Release.MaxBatchSpans = 1 // one trace per chunk
	}), sink, true)
	t.Cleanup(sink.open) // before the harness' Shutdown (cleanups run last-in first-out)

	keys := singleSpanTraces(h, 3)
	h.advanceAndTick(h.cfg.QuietPeriod)
	// One worker holds the first trace in the (blocked) downstream call; the shard queued
	// the other two before answering the tick.
	require.Equal(t, 1, <-sink.entered)
	h.assertMetrics(wantMetrics{
		released:       map[string]int64{triggerRoot: 1},
		spansReleased:  1,
		tracesInMemory: 2, spansInMemory: 2,
	})

	sink.open()
	require.Eventually(t, func() bool { return sink.SpanCount() == 3 }, waitFor, time.Millisecond)
	requireExactlyOnce(t, keys, sinkSpans(&sink.TracesSink))
	h.assertMetrics(wantMetrics{released: map[string]int64{triggerRoot: 3}, spansReleased: 3})
}

// Shutdown with a large buffer flushes it in bounded batches, one chunk after another:
// while the first batch is downstream, the rest is still held (and counted in the gauges).
func TestShutdownFlushesInBoundedBatches(t *testing.T) {
	const traces = 500
	lim := ReleaseConfig{MaxBatchSpans: 20, MaxBatchBytes: 3 << 20}
	sink := newGatedSink(false)
	h := newHarness(t, testConfig(func(c *Config) {
		c.NumShards = 1
		c.Release = lim
	}), sink, true)
	t.Cleanup(sink.open)
	keys := singleSpanTraces(h, traces)

	done := make(chan error, 1)
	go func() { done <- h.p.Shutdown(context.Background()) }()
	require.Equal(t, lim.MaxBatchSpans, <-sink.entered, "first shutdown batch")
	// One batch is downstream; the queued chunks and the rest of the buffer still count.
	held := sumOf(t, h.tt, "traces_in_memory")
	require.Equal(t, int64(traces-lim.MaxBatchSpans), held)
	sink.open()
	require.NoError(t, <-done)

	batches := sink.AllTraces()
	perBatch := requireBounded(t, batches, lim)
	require.Len(t, batches, traces/lim.MaxBatchSpans, "batches of %v traces", perBatch)
	requireExactlyOnce(t, keys, sinkSpans(&sink.TracesSink))
	h.assertMetrics(wantMetrics{released: map[string]int64{triggerShutdown: traces}, spansReleased: traces})
}

// When the shutdown budget runs out, Shutdown stops sending, returns an error, and counts
// what was not forwarded; every goroutine still ends (goleak, TestMain) once the blocked
// downstream call returns.
func TestShutdownBudgetRunsOut(t *testing.T) {
	const traces, chunk = 100, 10
	cases := map[string]struct {
		honorCtx bool
		// ctxTimeout set: the shutdown context's deadline is the budget, not shutdown_timeout.
		ctxTimeout time.Duration
		// The first batch: rejected (the consumer returns the cancellation), or delivered
		// when the consumer is let go after Shutdown returned.
		failed int64
	}{
		"consumer_honors_cancel":  {honorCtx: true, failed: chunk},
		"consumer_ignores_cancel": {honorCtx: false},
		"context_deadline":        {honorCtx: true, ctxTimeout: time.Second, failed: chunk},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			sink := newGatedSink(tc.honorCtx)
			core, logs := observer.New(zapcore.InfoLevel)
			h := newHarness(t, testConfig(func(c *Config) {
				c.NumShards = 1
				c.Release.MaxBatchSpans = chunk
				c.ShutdownTimeout = 500 * time.Millisecond
				if tc.ctxTimeout > 0 {
					c.ShutdownTimeout = time.Hour
				}
			}), sink, false)
			h.p.logger = zap.New(core)
			require.NoError(t, h.p.Start(context.Background(), componenttest.NewNopHost()))
			t.Cleanup(sink.open)
			singleSpanTraces(h, traces)

			ctx := context.Background()
			if tc.ctxTimeout > 0 {
				var cancel context.CancelFunc
				ctx, cancel = context.WithTimeout(ctx, tc.ctxTimeout)
				defer cancel()
			}
			deadline, hasDeadline := ctx.Deadline()
			shutdownErr := make(chan error, 1)
			go func() { shutdownErr <- h.p.Shutdown(ctx) }()
			select {
			case n := <-sink.entered:
				require.Equal(t, chunk, n, "the one batch that goes downstream")
			case <-time.After(waitFor):
				require.FailNow(t, "no shutdown batch reached the consumer")
			}
			var err error
			select {
			case err = <-shutdownErr:
			case <-time.After(waitFor):
				require.FailNow(t, "Shutdown did not return while the consumer blocked")
			}
			if hasDeadline {
				require.True(t, time.Now().Before(deadline), "Shutdown returned after its context's deadline")
			}
			require.ErrorContains(t, err, "shutdown timed out")
			require.ErrorContains(t, err, "not forwarded")

			// The blocked call returns (cancelled, or let go): the goroutines end.
			sink.open()
			requireStopped(t, h)
			metadatatest.AssertEqualProcessorHandoffTracesDroppedOnShutdown(t, h.tt, dps(traces-chunk), ignoreTime)
			metadatatest.AssertEqualProcessorHandoffSpansDroppedOnShutdown(t, h.tt, dps(traces-chunk), ignoreTime)
			metadatatest.AssertEqualProcessorHandoffReleaseFailures(t, h.tt, dps(tc.failed), ignoreTime)
			metadatatest.AssertEqualProcessorHandoffReleaseFailedTraces(t, h.tt, dps(tc.failed), ignoreTime)
			metadatatest.AssertEqualProcessorHandoffTracesReleased(t, h.tt, releasedDPs(map[string]int64{triggerShutdown: chunk}), ignoreTime)
			metadatatest.AssertEqualProcessorHandoffTracesInMemory(t, h.tt, dps(0), ignoreTime)
			metadatatest.AssertEqualProcessorHandoffSpansInMemory(t, h.tt, dps(0), ignoreTime)
			require.Equal(t, 1, logs.FilterMessageSnippet("shutdown budget ran out").Len())
			if tc.honorCtx {
				require.Zero(t, sink.SpanCount())
			} else {
				require.Equal(t, chunk, sink.SpanCount())
			}
			// A repeated Shutdown after the goroutines ended succeeds.
			require.NoError(t, h.p.Shutdown(context.Background()))
		})
	}
}

// A downstream rejection of timed releases is counted in spans and in traces, and logged
// once per batch at error level with the counts.
func TestDownstreamRejectionCountedInSpansAndTraces(t *testing.T) {
	const traces = 12
	sink := &errSink{err: errors.New("message larger than max")}
	core, logs := observer.New(zapcore.InfoLevel)
	h := newHarness(t, testConfig(func(c *Config) {
		c.NumShards = 1
		c.Release.MaxBatchSpans = 4 * 11 // four assembled Google ADK traces per batch
	}), sink, false)
	h.p.logger = zap.New(core)
	require.NoError(t, h.p.Start(context.Background(), componenttest.NewNopHost()))

	tds, _ := copiesOf(t, adkOK, traces)
	for _, td := range tds {
		h.consume(td)
	}
	h.advanceAndTick(h.cfg.QuietPeriod)
	require.Eventually(t, func() bool { return sink.SpanCount() == traces*11 }, waitFor, time.Millisecond)
	require.NoError(t, h.p.Shutdown(context.Background())) // the workers have counted

	h.assertMetrics(wantMetrics{
		released:      map[string]int64{triggerRoot: traces},
		spansReleased: traces * 10, handoffs: traces,
		failures: traces * 11,
	})
	metadatatest.AssertEqualProcessorHandoffReleaseFailedTraces(t, h.tt, dps(traces), ignoreTime)
	rejected := logs.FilterMessage("downstream rejected released traces")
	require.Equal(t, 3, rejected.Len(), "one log per rejected batch")
	for _, e := range rejected.All() {
		require.Equal(t, zapcore.ErrorLevel, e.Level)
		fields := e.ContextMap()
		require.EqualValues(t, 4, fields["traces"])
		require.EqualValues(t, 44, fields["spans"])
	}
}

// Spans with an all-zero trace id are forwarded at once, marked handoff.invalid_trace_id
// (not late), counted, and never assembled; the other spans of the batch are buffered.
func TestZeroTraceIDForwardedAndCounted(t *testing.T) {
	sink := new(consumertest.TracesSink)
	h := newHarness(t, testConfig(), sink, true)

	in := loadCapture(t, adkOK)
	inKeys := keysOf(in)
	zero := filterSpans(loadCapture(t, strandsOK), func(ptrace.Span) bool { return true })
	setTraceID(zero, pcommon.TraceID{})
	zeroKeys := keysOf(zero)
	require.Len(t, zeroKeys, 17)
	zero.ResourceSpans().MoveAndAppendTo(in.ResourceSpans()) // one request with both

	h.consume(in)
	out := sinkSpans(sink)
	requireExactlyOnce(t, zeroKeys, out)
	require.Len(t, withAttr(out, agentgraph.AttrInvalidTraceID), 17)
	requireNoMarks(t, out, agentgraph.AttrLateSpan, agentgraph.AttrTraceComplete)
	require.Empty(t, handoffs(out))
	metadatatest.AssertEqualProcessorHandoffInvalidTraceIDSpans(t, h.tt, dps(17), ignoreTime)
	h.assertMetrics(wantMetrics{tracesInMemory: 1, spansInMemory: 10})

	sink.Reset()
	h.advanceAndTick(h.cfg.QuietPeriod)
	require.Eventually(t, func() bool { return sink.SpanCount() == 11 }, waitFor, time.Millisecond)
	requireExactlyOnce(t, inKeys, sinkSpans(sink))
	requireNoMarks(t, sinkSpans(sink), agentgraph.AttrInvalidTraceID)

	// After Shutdown too, such spans are marked invalid, not late.
	require.NoError(t, h.p.Shutdown(context.Background()))
	sink.Reset()
	h.consume(oneSpan(pcommon.TraceID{}, pcommon.SpanID{1}, pcommon.SpanID{}, "no trace"))
	require.Len(t, withAttr(sinkSpans(sink), agentgraph.AttrInvalidTraceID), 1)
	requireNoMarks(t, sinkSpans(sink), agentgraph.AttrLateSpan)
	metadatatest.AssertEqualProcessorHandoffInvalidTraceIDSpans(t, h.tt, dps(18), ignoreTime)
	metadatatest.AssertEqualProcessorHandoffLateSpans(t, h.tt, lateDPs(0), ignoreTime)
}

// Early releases and the EndOfInput flush obey the bounds too: five traces evicted by one
// request leave in bounded batches, and so does the EndOfInput flush, before it returns.
func TestEarlyReleasesAreBatched(t *testing.T) {
	lim := ReleaseConfig{MaxBatchSpans: 2 * 11, MaxBatchBytes: 3 << 20} // two assembled traces
	sink := new(consumertest.TracesSink)
	h := newHarness(t, testConfig(func(c *Config) {
		c.NumShards, c.NumTraces = 1, 5
		c.Release = lim
	}), sink, true)

	tds, keys := copiesOf(t, adkOK, 10)
	for _, td := range tds[:5] {
		h.consume(td)
	}
	require.Zero(t, sink.SpanCount())
	// One request with five new traces: each evicts one of the five buffered.
	req := ptrace.NewTraces()
	for _, td := range tds[5:] {
		td.ResourceSpans().MoveAndAppendTo(req.ResourceSpans())
	}
	h.consume(req)
	require.Eventually(t, func() bool { return sink.SpanCount() == 5*11 }, waitFor, time.Millisecond, "evicted")
	perBatch := requireBounded(t, sink.AllTraces(), lim)
	require.Equal(t, []int{2, 2, 1}, perBatch)
	out := sinkSpans(sink)

	sink.Reset()
	require.NoError(t, h.p.EndOfInput(context.Background()))
	require.Equal(t, 5*11, sink.SpanCount(), "released inside EndOfInput")
	perBatch = requireBounded(t, sink.AllTraces(), lim)
	require.Equal(t, []int{2, 2, 1}, perBatch)
	requireExactlyOnce(t, keys, append(out, sinkSpans(sink)...))
	h.assertMetrics(wantMetrics{
		released:      map[string]int64{triggerEvicted: 5, triggerEndOfInput: 5},
		spansReleased: 100, handoffs: 10, evicted: 5,
	})
}

// requireStopped waits for the processor's goroutines to end (after a Shutdown).
func requireStopped(t *testing.T, h *harness) {
	t.Helper()
	select {
	case <-h.p.done:
	case <-time.After(waitFor):
		require.FailNow(t, "the processor's goroutines did not end")
	}
}
