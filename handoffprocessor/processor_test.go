package handoffprocessor

import (
	"context"
	"errors"
	"fmt"
	"math/rand/v2"
	"os"
	"path/filepath"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"go.opentelemetry.io/collector/component/componenttest"
	"go.opentelemetry.io/collector/consumer"
	"go.opentelemetry.io/collector/consumer/consumertest"
	"go.opentelemetry.io/collector/pdata/pcommon"
	"go.opentelemetry.io/collector/pdata/ptrace"
	"go.opentelemetry.io/collector/processor/processortest"
	"go.opentelemetry.io/otel/attribute"
	"go.opentelemetry.io/otel/sdk/metric/metricdata"
	"go.opentelemetry.io/otel/sdk/metric/metricdata/metricdatatest"

	"github.com/otelcol-handoff/otelcol-handoff/handoffprocessor/internal/metadatatest"
	"github.com/otelcol-handoff/otelcol-handoff/internal/agentgraph"
)

// Real captures (testdata/traces/SOURCES.md): triage hands off to weather_specialist.
const (
	adkOK     = "google-adk-ok" // 10 spans, root "invocation", transfer_to_agent handoff
	strandsOK = "strands-ok"    // 17 spans, root "invoke_swarm weather_swarm" (a wrapper), one edge
)

var allCaptures = []string{
	"google-adk-ok", "google-adk-agent-tool", "google-adk-tool-error",
	"strands-ok", "strands-agent-tool", "strands-tool-error", "strands-ok-latest-semconv",
}

// waitFor bounds how long an async release may take to reach the sink; it is a liveness
// guard, not a speed assertion.
const waitFor = 10 * time.Second

// ---------------------------------------------------------------------------------------
// Test harness: fake clock, processor under test, telemetry.

// fakeClock replaces p.now. It is read from the shard goroutines, the release workers and
// ConsumeTraces, hence the mutex.
type fakeClock struct {
	mu  sync.Mutex
	now time.Time
}

func newFakeClock() *fakeClock {
	return &fakeClock{now: time.Date(2026, 3, 1, 12, 0, 0, 0, time.UTC)}
}

func (c *fakeClock) Now() time.Time {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.now
}

func (c *fakeClock) Advance(d time.Duration) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.now = c.now.Add(d)
}

type harness struct {
	t     *testing.T
	p     *handoffProcessor
	tt    *componenttest.Telemetry
	clock *fakeClock
	cfg   *Config
}

// testConfig is the default config (quiet_period 2s, max_wait 30s) with two shards, so
// routing between shards is exercised too.
func testConfig(mods ...func(*Config)) *Config {
	cfg := createDefaultConfig().(*Config)
	cfg.NumShards = 2
	for _, m := range mods {
		m(cfg)
	}
	return cfg
}

// newHarness creates the processor through the factory with a fake clock. start=false
// leaves it unstarted.
func newHarness(t *testing.T, cfg *Config, next consumer.Traces, start bool) *harness {
	t.Helper()
	require.NoError(t, cfg.Validate())
	tt := componenttest.NewTelemetry()
	proc, err := NewFactory().CreateTraces(context.Background(), metadatatest.NewSettings(tt), cfg, next)
	require.NoError(t, err)
	p := proc.(*handoffProcessor)
	clock := newFakeClock()
	p.now = clock.Now
	if start {
		require.NoError(t, p.Start(context.Background(), componenttest.NewNopHost()))
	}
	t.Cleanup(func() {
		require.NoError(t, p.Shutdown(context.Background()))
		require.NoError(t, tt.Shutdown(context.Background()))
	})
	return &harness{t: t, p: p, tt: tt, clock: clock, cfg: cfg}
}

func (h *harness) consume(td ptrace.Traces) {
	h.t.Helper()
	require.NoError(h.t, h.p.ConsumeTraces(context.Background(), td))
}

// advanceAndTick moves the fake clock and makes every shard release what is due. When
// tick returns, every due trace has been handed to the release workers.
func (h *harness) advanceAndTick(d time.Duration) {
	h.clock.Advance(d)
	h.p.tick()
}

// ---------------------------------------------------------------------------------------
// Metrics.

var allTriggers = []string{triggerRoot, triggerTimeout, triggerEvicted, triggerTooLarge, triggerShutdown, triggerEndOfInput}

var ignoreTime = metricdatatest.IgnoreTimestamp()

func dps(v int64) []metricdata.DataPoint[int64] {
	return []metricdata.DataPoint[int64]{{Value: v}}
}

func releasedDPs(counts map[string]int64) []metricdata.DataPoint[int64] {
	out := make([]metricdata.DataPoint[int64], 0, len(allTriggers))
	for _, tr := range allTriggers {
		out = append(out, metricdata.DataPoint[int64]{
			Attributes: attribute.NewSet(attribute.String("trigger", tr)),
			Value:      counts[tr],
		})
	}
	return out
}

func lateDPs(v int64) []metricdata.DataPoint[int64] {
	return []metricdata.DataPoint[int64]{{
		Attributes: attribute.NewSet(attribute.String("action", "forwarded")),
		Value:      v,
	}}
}

// wantMetrics is the expected state of the processor's counters and gauges.
type wantMetrics struct {
	released                          map[string]int64
	spansReleased, handoffs, orphans  int64
	late, evicted, tooLarge, failures int64
	tracesInMemory, spansInMemory     int64
}

func (h *harness) assertMetrics(w wantMetrics) {
	t, tt := h.t, h.tt
	t.Helper()
	metadatatest.AssertEqualProcessorHandoffTracesReleased(t, tt, releasedDPs(w.released), ignoreTime)
	metadatatest.AssertEqualProcessorHandoffSpansReleased(t, tt, dps(w.spansReleased), ignoreTime)
	metadatatest.AssertEqualProcessorHandoffHandoffsSynthesized(t, tt, dps(w.handoffs), ignoreTime)
	metadatatest.AssertEqualProcessorHandoffOrphanSpans(t, tt, dps(w.orphans), ignoreTime)
	metadatatest.AssertEqualProcessorHandoffLateSpans(t, tt, lateDPs(w.late), ignoreTime)
	metadatatest.AssertEqualProcessorHandoffTracesEvicted(t, tt, dps(w.evicted), ignoreTime)
	metadatatest.AssertEqualProcessorHandoffTracesTooLarge(t, tt, dps(w.tooLarge), ignoreTime)
	metadatatest.AssertEqualProcessorHandoffReleaseFailures(t, tt, dps(w.failures), ignoreTime)
	metadatatest.AssertEqualProcessorHandoffConfNumTraces(t, tt, dps(int64(h.cfg.NumTraces)), ignoreTime)
	metadatatest.AssertEqualProcessorHandoffTracesInMemory(t, tt, dps(w.tracesInMemory), ignoreTime)
	metadatatest.AssertEqualProcessorHandoffSpansInMemory(t, tt, dps(w.spansInMemory), ignoreTime)
}

// sumOf adds up every data point of an int64 sum (for totals that depend on a race).
func sumOf(t *testing.T, tt *componenttest.Telemetry, name string) int64 {
	t.Helper()
	m, err := tt.GetMetric("otelcol_processor_handoff_" + name)
	require.NoError(t, err)
	sum, ok := m.Data.(metricdata.Sum[int64])
	require.True(t, ok, "%s is not an int64 sum", name)
	var total int64
	for _, dp := range sum.DataPoints {
		total += dp.Value
	}
	return total
}

// histogramDP is one int64 histogram data point holding a single recorded value.
func histogramDP(bounds []float64, v int64) []metricdata.HistogramDataPoint[int64] {
	counts := make([]uint64, len(bounds)+1)
	i := 0
	for i < len(bounds) && float64(v) > bounds[i] {
		i++
	}
	counts[i] = 1
	return []metricdata.HistogramDataPoint[int64]{{
		Count: 1, Bounds: bounds, BucketCounts: counts, Sum: v,
		Min: metricdata.NewExtrema(v), Max: metricdata.NewExtrema(v),
	}}
}

// ---------------------------------------------------------------------------------------
// Traces.

func loadCapture(t testing.TB, name string) ptrace.Traces {
	t.Helper()
	path := filepath.Join("..", "testdata", "traces", name+".json")
	if _, err := os.Stat(path); err != nil {
		path = filepath.Join("/work/shared/corpus/realclients", name+".json")
	}
	b, err := os.ReadFile(path)
	require.NoError(t, err)
	td, err := (&ptrace.JSONUnmarshaler{}).UnmarshalTraces(b)
	require.NoError(t, err)
	require.Positive(t, td.SpanCount())
	return td
}

type spanKey struct {
	trace pcommon.TraceID
	span  pcommon.SpanID
}

// outSpan is a span with the scope it was found under.
type outSpan struct {
	span  ptrace.Span
	scope string
}

func allSpans(tds ...ptrace.Traces) []outSpan {
	var out []outSpan
	for _, td := range tds {
		rss := td.ResourceSpans()
		for i := 0; i < rss.Len(); i++ {
			sss := rss.At(i).ScopeSpans()
			for j := 0; j < sss.Len(); j++ {
				ss := sss.At(j)
				for k := 0; k < ss.Spans().Len(); k++ {
					out = append(out, outSpan{span: ss.Spans().At(k), scope: ss.Scope().Name()})
				}
			}
		}
	}
	return out
}

func sinkSpans(sink *consumertest.TracesSink) []outSpan { return allSpans(sink.AllTraces()...) }

func keysOf(td ptrace.Traces) []spanKey {
	var keys []spanKey
	for _, s := range allSpans(td) {
		keys = append(keys, spanKey{s.span.TraceID(), s.span.SpanID()})
	}
	return keys
}

// filterSpans copies the spans matching keep into a new Traces, keeping resource and scope.
func filterSpans(td ptrace.Traces, keep func(ptrace.Span) bool) ptrace.Traces {
	out := ptrace.NewTraces()
	rss := td.ResourceSpans()
	for i := 0; i < rss.Len(); i++ {
		rs := rss.At(i)
		var dstRS ptrace.ResourceSpans
		sss := rs.ScopeSpans()
		for j := 0; j < sss.Len(); j++ {
			ss := sss.At(j)
			var dst ptrace.SpanSlice
			for k := 0; k < ss.Spans().Len(); k++ {
				sp := ss.Spans().At(k)
				if !keep(sp) {
					continue
				}
				if dst == (ptrace.SpanSlice{}) {
					if dstRS == (ptrace.ResourceSpans{}) {
						dstRS = out.ResourceSpans().AppendEmpty()
						rs.Resource().CopyTo(dstRS.Resource())
						dstRS.SetSchemaUrl(rs.SchemaUrl())
					}
					dstSS := dstRS.ScopeSpans().AppendEmpty()
					ss.Scope().CopyTo(dstSS.Scope())
					dstSS.SetSchemaUrl(ss.SchemaUrl())
					dst = dstSS.Spans()
				}
				sp.CopyTo(dst.AppendEmpty())
			}
		}
	}
	return out
}

func not(f func(ptrace.Span) bool) func(ptrace.Span) bool {
	return func(s ptrace.Span) bool { return !f(s) }
}

func isRoot(s ptrace.Span) bool { return s.ParentSpanID().IsEmpty() }

func hasID(id pcommon.SpanID) func(ptrace.Span) bool {
	return func(s ptrace.Span) bool { return s.SpanID() == id }
}

// spanNamed returns the only span called name.
func spanNamed(t *testing.T, spans []outSpan, name string) ptrace.Span {
	t.Helper()
	var found []ptrace.Span
	for _, s := range spans {
		if s.span.Name() == name {
			found = append(found, s.span)
		}
	}
	require.Len(t, found, 1, "spans named %q", name)
	return found[0]
}

// latestNonRoot is the id of the last-starting non-root span: the natural straggler.
func latestNonRoot(td ptrace.Traces) pcommon.SpanID {
	var best ptrace.Span
	for _, s := range allSpans(td) {
		if isRoot(s.span) {
			continue
		}
		if best == (ptrace.Span{}) || s.span.StartTimestamp() > best.StartTimestamp() {
			best = s.span
		}
	}
	return best.SpanID()
}

func traceIDOf(t *testing.T, td ptrace.Traces) pcommon.TraceID {
	t.Helper()
	ids := map[pcommon.TraceID]bool{}
	for _, s := range allSpans(td) {
		ids[s.span.TraceID()] = true
	}
	require.Len(t, ids, 1)
	for id := range ids {
		return id
	}
	return pcommon.TraceID{}
}

func setTraceID(td ptrace.Traces, id pcommon.TraceID) {
	for _, s := range allSpans(td) {
		s.span.SetTraceID(id)
	}
}

// handoffs returns the synthesized HANDOFF spans.
func handoffs(spans []outSpan) []outSpan {
	var out []outSpan
	for _, s := range spans {
		if s.scope == agentgraph.ScopeName {
			out = append(out, s)
		}
	}
	return out
}

// graphStats is what assembling td should produce: the HANDOFF spans added and the
// orphan spans counted (the metrics handoffs_synthesized and orphan_spans).
func graphStats(td ptrace.Traces) (handoffs, orphans int64) {
	for _, g := range agentgraph.BuildAll(td, agentgraph.Options{}) {
		orphans += int64(g.Orphans)
		for _, e := range g.Edges {
			if e.Via == nil || e.Via.Role != agentgraph.RoleHandoff {
				handoffs++
			}
		}
	}
	return handoffs, orphans
}

// withAttr returns the spans carrying key.
func withAttr(spans []outSpan, key string) []outSpan {
	var out []outSpan
	for _, s := range spans {
		if _, ok := s.span.Attributes().Get(key); ok {
			out = append(out, s)
		}
	}
	return out
}

// requireIncomplete checks that exactly one span carries the incompleteness marks, and
// that it is want with the given reason.
func requireIncomplete(t *testing.T, spans []outSpan, want pcommon.SpanID, reason string) {
	t.Helper()
	marked := withAttr(spans, agentgraph.AttrTraceComplete)
	require.Len(t, marked, 1)
	s := marked[0].span
	require.Equal(t, want, s.SpanID(), "marked span %q", s.Name())
	complete, _ := s.Attributes().Get(agentgraph.AttrTraceComplete)
	require.Equal(t, pcommon.ValueTypeBool, complete.Type())
	require.False(t, complete.Bool())
	r, ok := s.Attributes().Get(agentgraph.AttrReleaseReason)
	require.True(t, ok)
	require.Equal(t, reason, r.Str())
	require.Len(t, withAttr(spans, agentgraph.AttrReleaseReason), 1)
}

func requireNoMarks(t *testing.T, spans []outSpan, keys ...string) {
	t.Helper()
	for _, key := range keys {
		require.Empty(t, withAttr(spans, key), "spans with %s", key)
	}
}

// requireExactlyOnce checks that each input span appears exactly once in out, and that
// everything else in out is a HANDOFF span.
func requireExactlyOnce(t *testing.T, in []spanKey, out []outSpan) {
	t.Helper()
	seen := make(map[spanKey]int, len(out))
	extra := 0
	for _, s := range out {
		if s.scope == agentgraph.ScopeName {
			extra++
			continue
		}
		seen[spanKey{s.span.TraceID(), s.span.SpanID()}]++
	}
	for _, k := range in {
		require.Equal(t, 1, seen[k], "span %s/%s", k.trace, k.span)
	}
	require.Len(t, seen, len(in), "spans out that never went in")
	require.Len(t, out, len(in)+extra)
}

// oneSpan is a batch with a single span.
func oneSpan(traceID pcommon.TraceID, spanID, parent pcommon.SpanID, name string) ptrace.Traces {
	td := ptrace.NewTraces()
	rs := td.ResourceSpans().AppendEmpty()
	rs.Resource().Attributes().PutStr("service.name", "handoff-test")
	sp := rs.ScopeSpans().AppendEmpty().Spans().AppendEmpty()
	sp.SetTraceID(traceID)
	sp.SetSpanID(spanID)
	sp.SetParentSpanID(parent)
	sp.SetName(name)
	sp.SetStartTimestamp(pcommon.Timestamp(1_000_000))
	sp.SetEndTimestamp(pcommon.Timestamp(2_000_000))
	return td
}

// smallBatches cuts td into batches of 1..maxSpans spans, each from one resource and scope.
func smallBatches(td ptrace.Traces, rng *rand.Rand, maxSpans int) []ptrace.Traces {
	var out []ptrace.Traces
	rss := td.ResourceSpans()
	for i := 0; i < rss.Len(); i++ {
		rs := rss.At(i)
		for j := 0; j < rs.ScopeSpans().Len(); j++ {
			ss := rs.ScopeSpans().At(j)
			for k := 0; k < ss.Spans().Len(); {
				n := min(1+rng.IntN(maxSpans), ss.Spans().Len()-k)
				b := ptrace.NewTraces()
				brs := b.ResourceSpans().AppendEmpty()
				rs.Resource().CopyTo(brs.Resource())
				bss := brs.ScopeSpans().AppendEmpty()
				ss.Scope().CopyTo(bss.Scope())
				for ; n > 0; n-- {
					ss.Spans().At(k).CopyTo(bss.Spans().AppendEmpty())
					k++
				}
				out = append(out, b)
			}
		}
	}
	return out
}

// errSink records what it receives and rejects it.
type errSink struct {
	consumertest.TracesSink
	err error
}

func (s *errSink) ConsumeTraces(ctx context.Context, td ptrace.Traces) error {
	_ = s.TracesSink.ConsumeTraces(ctx, td)
	return s.err
}

// ---------------------------------------------------------------------------------------
// 1. Completion by root + quiet period.

func TestReleaseOnRootAfterQuietPeriod(t *testing.T) {
	sink := new(consumertest.TracesSink)
	h := newHarness(t, testConfig(), sink, true)

	in := loadCapture(t, adkOK)
	traceID := traceIDOf(t, in)
	inSpans := allSpans(in)
	sender := spanNamed(t, inSpans, "invoke_agent triage").SpanID()
	receiver := spanNamed(t, inSpans, "invoke_agent weather_specialist").SpanID()
	inKeys := keysOf(in)
	require.Len(t, inKeys, 10)

	h.consume(in)
	h.advanceAndTick(h.cfg.QuietPeriod - time.Millisecond)
	// Nothing due: the trace is still buffered (updated by the shard before tick returns).
	h.assertMetrics(wantMetrics{tracesInMemory: 1, spansInMemory: 10})
	require.Zero(t, sink.SpanCount())

	h.advanceAndTick(100 * time.Millisecond)
	require.Eventually(t, func() bool { return sink.SpanCount() == 11 }, waitFor, time.Millisecond)

	out := sinkSpans(sink)
	requireExactlyOnce(t, inKeys, out)
	hs := handoffs(out)
	require.Len(t, hs, 1)
	hand := hs[0].span
	require.Equal(t, "handoff triage -> weather_specialist", hand.Name())
	require.Equal(t, traceID, hand.TraceID())
	require.Equal(t, sender, hand.ParentSpanID())
	require.Equal(t, agentgraph.HandoffSpanID(traceID, receiver), hand.SpanID())
	src, _ := hand.Attributes().Get(agentgraph.AttrSource)
	require.Equal(t, "triage", src.Str())
	dst, _ := hand.Attributes().Get(agentgraph.AttrTarget)
	require.Equal(t, "weather_specialist", dst.Str())
	// Complete traces carry no incompleteness or late marks.
	requireNoMarks(t, out, agentgraph.AttrTraceComplete, agentgraph.AttrReleaseReason, agentgraph.AttrLateSpan)

	h.assertMetrics(wantMetrics{
		released:      map[string]int64{triggerRoot: 1},
		spansReleased: 10, handoffs: 1,
	})
	holdMs := (h.cfg.QuietPeriod + 99*time.Millisecond).Milliseconds()
	metadatatest.AssertEqualProcessorHandoffTraceHoldTime(t, h.tt,
		histogramDP([]float64{10, 50, 100, 250, 500, 1000, 2500, 5000, 10000, 30000, 60000}, holdMs), ignoreTime)
	metadatatest.AssertEqualProcessorHandoffTraceSize(t, h.tt,
		histogramDP([]float64{1, 5, 10, 25, 50, 100, 250, 500, 1000, 5000, 10000}, 10), ignoreTime)
}

// 2. A straggler after the root restarts the quiet period.
func TestStragglerRestartsQuietPeriod(t *testing.T) {
	sink := new(consumertest.TracesSink)
	h := newHarness(t, testConfig(), sink, true)

	in := loadCapture(t, adkOK)
	inKeys := keysOf(in)
	straggler := latestNonRoot(in)
	first := filterSpans(in, not(hasID(straggler))) // includes the root
	late := filterSpans(in, hasID(straggler))
	require.Equal(t, 1, late.SpanCount())

	h.consume(first)
	h.advanceAndTick(h.cfg.QuietPeriod - 500*time.Millisecond)
	h.consume(late) // restarts the quiet period: due at +QuietPeriod from now
	h.advanceAndTick(time.Second)
	// Past the first quiet period, but not the restarted one.
	h.assertMetrics(wantMetrics{tracesInMemory: 1, spansInMemory: 10})
	require.Zero(t, sink.SpanCount())

	h.advanceAndTick(h.cfg.QuietPeriod - time.Second)
	require.Eventually(t, func() bool { return sink.SpanCount() == 11 }, waitFor, time.Millisecond)
	out := sinkSpans(sink)
	requireExactlyOnce(t, inKeys, out)
	require.Len(t, handoffs(out), 1)
	requireNoMarks(t, out, agentgraph.AttrTraceComplete, agentgraph.AttrReleaseReason, agentgraph.AttrLateSpan)
	h.assertMetrics(wantMetrics{released: map[string]int64{triggerRoot: 1}, spansReleased: 10, handoffs: 1})
}

// 3. Without its root, a trace leaves at max_wait, marked incomplete on its earliest span;
// new spans never extend max_wait.
func TestReleaseOnMaxWaitWithoutRoot(t *testing.T) {
	sink := new(consumertest.TracesSink)
	h := newHarness(t, testConfig(), sink, true)

	in := filterSpans(loadCapture(t, adkOK), not(isRoot))
	inKeys := keysOf(in)
	require.Len(t, inKeys, 9)
	triage := spanNamed(t, allSpans(in), "invoke_agent triage").SpanID() // earliest span left
	straggler := latestNonRoot(in)

	h.consume(filterSpans(in, not(hasID(straggler))))
	h.advanceAndTick(h.cfg.MaxWait - time.Second)
	h.consume(filterSpans(in, hasID(straggler))) // must not extend max_wait
	h.advanceAndTick(999 * time.Millisecond)
	h.assertMetrics(wantMetrics{tracesInMemory: 1, spansInMemory: 9})
	require.Zero(t, sink.SpanCount())

	h.advanceAndTick(time.Millisecond) // exactly first span + max_wait
	require.Eventually(t, func() bool { return sink.SpanCount() == 10 }, waitFor, time.Millisecond)
	out := sinkSpans(sink)
	requireExactlyOnce(t, inKeys, out)
	require.Len(t, handoffs(out), 1, "an incomplete trace still gets its HANDOFF spans")
	requireIncomplete(t, out, triage, triggerTimeout)
	requireNoMarks(t, out, agentgraph.AttrLateSpan)
	h.assertMetrics(wantMetrics{
		released:      map[string]int64{triggerTimeout: 1},
		spansReleased: 9, handoffs: 1, orphans: 1, // triage's parent (the root) is missing
	})
}

// 3b. A root arriving just before max_wait does not buy a full quiet period: max_wait wins
// and the trace is released as timed out.
func TestMaxWaitCapsQuietPeriodOfLateRoot(t *testing.T) {
	sink := new(consumertest.TracesSink)
	h := newHarness(t, testConfig(), sink, true)

	in := loadCapture(t, adkOK)
	inKeys := keysOf(in)
	root := filterSpans(in, isRoot)
	rootID := allSpans(root)[0].span.SpanID()

	h.consume(filterSpans(in, not(isRoot)))
	h.advanceAndTick(h.cfg.MaxWait - 500*time.Millisecond)
	h.consume(root) // quiet period would end 1.5s after max_wait
	h.advanceAndTick(499 * time.Millisecond)
	h.assertMetrics(wantMetrics{tracesInMemory: 1, spansInMemory: 10})

	h.advanceAndTick(time.Millisecond)
	require.Eventually(t, func() bool { return sink.SpanCount() == 11 }, waitFor, time.Millisecond)
	out := sinkSpans(sink)
	requireExactlyOnce(t, inKeys, out)
	requireIncomplete(t, out, rootID, triggerTimeout)
	h.assertMetrics(wantMetrics{released: map[string]int64{triggerTimeout: 1}, spansReleased: 10, handoffs: 1})
}

// 4a. A trace over max_spans_per_trace leaves at once, through the release workers (the
// client's request does not wait for its assembly or its destination).
func TestTooLargeReleasedEarly(t *testing.T) {
	sink := new(consumertest.TracesSink)
	h := newHarness(t, testConfig(func(c *Config) { c.MaxSpansPerTrace = 5 }), sink, true)

	in := loadCapture(t, adkOK)
	inKeys := keysOf(in)
	rootID := allSpans(filterSpans(in, isRoot))[0].span.SpanID()
	var n int
	part1 := filterSpans(in, func(ptrace.Span) bool { n++; return n <= 4 })
	n = 0
	part2 := filterSpans(in, func(ptrace.Span) bool { n++; return n > 4 })
	require.Equal(t, 4, part1.SpanCount())

	h.consume(part1) // within the bound: buffered
	require.Zero(t, sink.SpanCount())
	h.assertMetrics(wantMetrics{tracesInMemory: 1, spansInMemory: 4})

	h.consume(part2) // 10 > 5: released now, without waiting for a deadline
	require.Eventually(t, func() bool { return sink.SpanCount() == 11 }, waitFor, time.Millisecond)
	out := sinkSpans(sink)
	requireExactlyOnce(t, inKeys, out)
	require.Len(t, handoffs(out), 1)
	requireIncomplete(t, out, rootID, triggerTooLarge)
	h.assertMetrics(wantMetrics{
		released:      map[string]int64{triggerTooLarge: 1},
		spansReleased: 10, handoffs: 1, tooLarge: 1,
	})
}

// 4a'. Over max_trace_size_bytes, likewise, whichever way the buffer holds the spans (the
// bound is on the protobuf size, compressed or not).
func TestTooManyBytesReleasedEarly(t *testing.T) {
	for _, encoding := range []string{bufferProto, bufferProtoS2, bufferDecoded} {
		t.Run(encoding, func(t *testing.T) { testTooManyBytesReleasedEarly(t, encoding) })
	}
}

func testTooManyBytesReleasedEarly(t *testing.T, encoding string) {
	sink := new(consumertest.TracesSink)
	in := loadCapture(t, adkOK)
	inKeys := keysOf(in)
	rootID := allSpans(filterSpans(in, isRoot))[0].span.SpanID()
	var n int
	part1 := filterSpans(in, func(ptrace.Span) bool { n++; return n <= 4 })
	n = 0
	part2 := filterSpans(in, func(ptrace.Span) bool { n++; return n > 4 })
	var sizer ptrace.ProtoMarshaler
	bound := sizer.TracesSize(part1) + 1 // part1 fits, part1 + part2 does not
	h := newHarness(t, testConfig(func(c *Config) { c.MaxTraceSizeBytes, c.BufferEncoding = bound, encoding }), sink, true)

	h.consume(part1) // within the bound: buffered
	h.assertMetrics(wantMetrics{tracesInMemory: 1, spansInMemory: 4})
	h.consume(part2)
	require.Eventually(t, func() bool { return sink.SpanCount() == 11 }, waitFor, time.Millisecond,
		"released without waiting for a deadline, HANDOFF span included")
	out := sinkSpans(sink)
	requireExactlyOnce(t, inKeys, out)
	require.Len(t, handoffs(out), 1)
	requireIncomplete(t, out, rootID, triggerTooLarge)
	h.assertMetrics(wantMetrics{
		released:      map[string]int64{triggerTooLarge: 1},
		spansReleased: 10, handoffs: 1, tooLarge: 1,
	})
}

// 4b. Over num_traces, the oldest trace is evicted at once.
// With more shards than num_traces, the shards still hold num_traces at most.
func TestOldestTraceEvicted(t *testing.T) {
	for _, shards := range []int{1, 4} {
		t.Run(fmt.Sprintf("%d shards", shards), func(t *testing.T) { testOldestTraceEvicted(t, shards) })
	}
}

func testOldestTraceEvicted(t *testing.T, shards int) {
	sink := new(consumertest.TracesSink)
	h := newHarness(t, testConfig(func(c *Config) { c.NumTraces, c.NumShards = 1, shards }), sink, true)

	a := loadCapture(t, adkOK)
	aKeys := keysOf(a)
	aRoot := allSpans(filterSpans(a, isRoot))[0].span.SpanID()
	b := loadCapture(t, strandsOK)
	bKeys := keysOf(b)

	h.consume(a)
	require.Zero(t, sink.SpanCount())
	h.consume(b) // a second trace does not fit: a leaves now
	require.Eventually(t, func() bool { return sink.SpanCount() == 11 }, waitFor, time.Millisecond)
	out := sinkSpans(sink)
	requireExactlyOnce(t, aKeys, out)
	requireIncomplete(t, out, aRoot, triggerEvicted)
	h.assertMetrics(wantMetrics{
		released:      map[string]int64{triggerEvicted: 1},
		spansReleased: 10, handoffs: 1, evicted: 1,
		tracesInMemory: 1, spansInMemory: 17,
	})

	// b is complete and leaves normally: 17 spans and one HANDOFF span (the swarm is a
	// wrapper, not an agent: triage -> weather_specialist is its only handoff).
	sink.Reset()
	h.advanceAndTick(h.cfg.QuietPeriod)
	require.Eventually(t, func() bool { return sink.SpanCount() == 18 }, waitFor, time.Millisecond)
	out = sinkSpans(sink)
	requireExactlyOnce(t, bKeys, out)
	requireNoMarks(t, out, agentgraph.AttrTraceComplete, agentgraph.AttrLateSpan)
	h.assertMetrics(wantMetrics{
		released:      map[string]int64{triggerEvicted: 1, triggerRoot: 1},
		spansReleased: 27, handoffs: 2, evicted: 1,
	})
}

// 5. A span of a released trace is forwarded at once, marked late, and not assembled.
func TestLateSpanForwardedImmediately(t *testing.T) {
	sink := new(consumertest.TracesSink)
	h := newHarness(t, testConfig(), sink, true)

	in := loadCapture(t, adkOK)
	traceID := traceIDOf(t, in)
	triage := spanNamed(t, allSpans(in), "invoke_agent triage").SpanID()
	h.consume(in)
	h.advanceAndTick(h.cfg.QuietPeriod)
	require.Eventually(t, func() bool { return sink.SpanCount() == 11 }, waitFor, time.Millisecond)
	sink.Reset()

	lateID := pcommon.SpanID{0xa, 0xb, 0xc, 0xd, 1, 2, 3, 4}
	h.consume(oneSpan(traceID, lateID, triage, "late tool call"))
	require.Equal(t, 1, sink.SpanCount(), "forwarded inside ConsumeTraces")
	out := sinkSpans(sink)
	require.Equal(t, lateID, out[0].span.SpanID())
	v, ok := out[0].span.Attributes().Get(agentgraph.AttrLateSpan)
	require.True(t, ok)
	require.True(t, v.Bool())
	requireNoMarks(t, out, agentgraph.AttrTraceComplete)

	// Ticking later does not release it again.
	h.advanceAndTick(h.cfg.MaxWait)
	require.Equal(t, 1, sink.SpanCount())
	h.assertMetrics(wantMetrics{
		released:      map[string]int64{triggerRoot: 1},
		spansReleased: 10, handoffs: 1, late: 1,
	})
}

// 6. Shutdown releases pending traces (incomplete, trigger shutdown), is idempotent, and
// afterwards spans are forwarded unbuffered, marked late.
func TestShutdownFlushesPendingTraces(t *testing.T) {
	sink := new(consumertest.TracesSink)
	h := newHarness(t, testConfig(), sink, true)

	a := loadCapture(t, adkOK) // complete, but its quiet period has not passed
	aRoot := allSpans(filterSpans(a, isRoot))[0].span.SpanID()
	b := filterSpans(loadCapture(t, strandsOK), not(isRoot)) // root never arrives
	bTop := spanNamed(t, allSpans(b), "node triage").SpanID()
	in := append(keysOf(a), keysOf(b)...)
	bID := traceIDOf(t, b)
	aHandoffs, _ := graphStats(a)
	bHandoffs, bOrphans := graphStats(b)
	require.Equal(t, int64(1), bHandoffs, "without the swarm root only triage -> weather_specialist is left")

	h.consume(a)
	h.consume(b)
	h.advanceAndTick(time.Second)
	require.Zero(t, sink.SpanCount())

	require.NoError(t, h.p.Shutdown(context.Background()))
	// Shutdown waits for the release workers: the output is complete when it returns.
	out := sinkSpans(sink)
	requireExactlyOnce(t, in, out)
	require.Len(t, handoffs(out), int(aHandoffs+bHandoffs))
	marked := withAttr(out, agentgraph.AttrTraceComplete)
	require.Len(t, marked, 2)
	requireIncomplete(t, filterOut(out, func(s ptrace.Span) bool { return s.TraceID() != bID }), aRoot, triggerShutdown)
	requireIncomplete(t, filterOut(out, func(s ptrace.Span) bool { return s.TraceID() == bID }), bTop, triggerShutdown)
	requireNoMarks(t, out, agentgraph.AttrLateSpan)

	require.NoError(t, h.p.Shutdown(context.Background()), "second Shutdown")

	// After Shutdown nothing is buffered or dropped: spans pass through, marked late.
	sink.Reset()
	extra := oneSpan(bID, pcommon.SpanID{9, 9, 9, 9, 9, 9, 9, 9}, bTop, "after shutdown")
	h.consume(extra)
	require.Equal(t, 1, sink.SpanCount())
	v, ok := sinkSpans(sink)[0].span.Attributes().Get(agentgraph.AttrLateSpan)
	require.True(t, ok)
	require.True(t, v.Bool())

	h.assertMetrics(wantMetrics{
		released:      map[string]int64{triggerShutdown: 2},
		spansReleased: 26, handoffs: aHandoffs + bHandoffs, orphans: bOrphans, late: 1,
	})
}

func filterOut(spans []outSpan, keep func(ptrace.Span) bool) []outSpan {
	var out []outSpan
	for _, s := range spans {
		if keep(s.span) {
			out = append(out, s)
		}
	}
	return out
}

// Before Start nothing is buffered either: spans pass through, marked late.
func TestConsumeBeforeStartForwardsUnbuffered(t *testing.T) {
	sink := new(consumertest.TracesSink)
	h := newHarness(t, testConfig(), sink, false)

	in := loadCapture(t, adkOK)
	inKeys := keysOf(in)
	h.consume(in)
	out := sinkSpans(sink)
	requireExactlyOnce(t, inKeys, out)
	require.Empty(t, handoffs(out))
	require.Len(t, withAttr(out, agentgraph.AttrLateSpan), 10)
	metadatatest.AssertEqualProcessorHandoffLateSpans(t, h.tt, lateDPs(10), ignoreTime)
}

// A caller that gave up (ctx done) gets its spans passed through unbuffered. They leave
// outside their trace, so like every such span they must be marked and counted as late:
// unmarked, the assertion exporter would judge the fragment as a whole, complete trace.
func TestCanceledContextPassThroughIsMarkedLate(t *testing.T) {
	sink := new(consumertest.TracesSink)
	h := newHarness(t, testConfig(), sink, true)

	in := loadCapture(t, adkOK)
	inKeys := keysOf(in)
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	require.NoError(t, h.p.ConsumeTraces(ctx, in))
	out := sinkSpans(sink)
	requireExactlyOnce(t, inKeys, out)
	require.Len(t, withAttr(out, agentgraph.AttrLateSpan), len(inKeys))
	metadatatest.AssertEqualProcessorHandoffLateSpans(t, h.tt, lateDPs(int64(len(inKeys))), ignoreTime)
	metadatatest.AssertEqualProcessorHandoffTracesReleased(t, h.tt, releasedDPs(nil), ignoreTime)
}

// A Shutdown call after the flush finished reports success whatever its context says:
// there is nothing left to time out.
func TestShutdownAgainWithDoneContext(t *testing.T) {
	sink := new(consumertest.TracesSink)
	h := newHarness(t, testConfig(), sink, true)
	h.consume(loadCapture(t, adkOK))
	require.NoError(t, h.p.Shutdown(context.Background()))
	require.Equal(t, 11, sink.SpanCount())

	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	for i := range 64 {
		require.NoError(t, h.p.Shutdown(ctx), "Shutdown #%d after completion", i+2)
	}
	h.assertMetrics(wantMetrics{released: map[string]int64{triggerShutdown: 1}, spansReleased: 10, handoffs: 1})
}

// 7. Downstream errors: the caller's own spans forwarded synchronously (late spans) return
// them; every assembled trace (timed or released early) counts them.
func TestDownstreamErrors(t *testing.T) {
	errDown := errors.New("downstream is full")

	t.Run("too_large", func(t *testing.T) {
		sink := &errSink{err: errDown}
		h := newHarness(t, testConfig(func(c *Config) { c.MaxSpansPerTrace = 5 }), sink, true)
		// The trace holds spans of earlier, acknowledged requests too: the client cannot
		// resend those, so the rejection is counted and logged, not returned.
		require.NoError(t, h.p.ConsumeTraces(context.Background(), loadCapture(t, adkOK)))
		require.Eventually(t, func() bool { return sink.SpanCount() == 11 }, waitFor, time.Millisecond)
		require.NoError(t, h.p.Shutdown(context.Background())) // waits for the worker's count
		h.assertMetrics(wantMetrics{
			released:      map[string]int64{triggerTooLarge: 1},
			spansReleased: 10, handoffs: 1, tooLarge: 1,
			failures: 11,
		})
	})

	t.Run("late_span", func(t *testing.T) {
		sink := &errSink{err: errDown}
		h := newHarness(t, testConfig(func(c *Config) { c.MaxSpansPerTrace = 5 }), sink, true)
		in := loadCapture(t, adkOK)
		traceID := traceIDOf(t, in)
		require.NoError(t, h.p.ConsumeTraces(context.Background(), in))
		require.Eventually(t, func() bool { return sink.SpanCount() == 11 }, waitFor, time.Millisecond)
		err := h.p.ConsumeTraces(context.Background(), oneSpan(traceID, pcommon.SpanID{1, 1, 1, 1, 1, 1, 1, 1}, pcommon.SpanID{}, "late"))
		require.ErrorIs(t, err, errDown, "a late span is only the caller's: its error goes back")
		require.Equal(t, 12, sink.SpanCount())
		require.NoError(t, h.p.Shutdown(context.Background()))
		h.assertMetrics(wantMetrics{
			released:      map[string]int64{triggerTooLarge: 1},
			spansReleased: 10, handoffs: 1, tooLarge: 1, late: 1,
			failures: 11,
		})
	})

	t.Run("timed_release", func(t *testing.T) {
		sink := &errSink{err: errDown}
		h := newHarness(t, testConfig(), sink, true)
		require.NoError(t, h.p.ConsumeTraces(context.Background(), loadCapture(t, adkOK)))
		h.advanceAndTick(h.cfg.QuietPeriod)
		require.Eventually(t, func() bool { return sink.SpanCount() == 11 }, waitFor, time.Millisecond)
		// The failure is counted after the consumer returns; Shutdown waits for the workers.
		require.NoError(t, h.p.Shutdown(context.Background()))
		h.assertMetrics(wantMetrics{
			released:      map[string]int64{triggerRoot: 1},
			spansReleased: 10, handoffs: 1,
			failures: 11, // every span of the rejected batch, the HANDOFF span included
		})
	})
}

// 8. Nothing is lost or duplicated: real captures, several copies each under its own trace
// id, cut into small batches and shuffled across shards.
func TestNothingLostShuffledBatches(t *testing.T) {
	sink := new(consumertest.TracesSink)
	h := newHarness(t, testConfig(func(c *Config) { c.NumShards = 4 }), sink, true)
	rng := rand.New(rand.NewPCG(2026, 3))

	const copies = 3
	var batches []ptrace.Traces
	var inKeys []spanKey
	var wantHandoffs, wantOrphans int64
	traces := 0
	for _, name := range allCaptures {
		for c := range copies {
			td := loadCapture(t, name)
			id := traceIDOf(t, td)
			id[15] ^= byte(c) // copy 0 keeps the captured id
			setTraceID(td, id)
			inKeys = append(inKeys, keysOf(td)...)
			hs, orph := graphStats(td)
			wantHandoffs += hs
			wantOrphans += orph
			traces++
			batches = append(batches, smallBatches(td, rng, 3)...)
		}
	}
	rng.Shuffle(len(batches), func(i, j int) { batches[i], batches[j] = batches[j], batches[i] })
	require.Greater(t, len(batches), 100)

	// Spread the arrivals over less than one quiet period, so no trace is due early.
	step := h.cfg.QuietPeriod / time.Duration(2*len(batches))
	for _, b := range batches {
		h.consume(b)
		h.clock.Advance(step)
	}
	h.advanceAndTick(0)
	h.assertMetrics(wantMetrics{tracesInMemory: int64(traces), spansInMemory: int64(len(inKeys))})

	h.advanceAndTick(h.cfg.QuietPeriod)
	want := len(inKeys) + int(wantHandoffs)
	require.Eventually(t, func() bool { return sink.SpanCount() == want }, waitFor, time.Millisecond)
	out := sinkSpans(sink)
	requireExactlyOnce(t, inKeys, out)
	require.Len(t, handoffs(out), int(wantHandoffs))
	requireNoMarks(t, out, agentgraph.AttrTraceComplete, agentgraph.AttrReleaseReason, agentgraph.AttrLateSpan)
	h.assertMetrics(wantMetrics{
		released:      map[string]int64{triggerRoot: int64(traces)},
		spansReleased: int64(len(inKeys)), handoffs: wantHandoffs, orphans: wantOrphans,
	})
}

// 9. ConsumeTraces racing Shutdown: no panic, no deadlock, every span that went in comes
// out exactly once (buffered then flushed, or forwarded as late).
func TestConcurrentConsumeTracesAndShutdown(t *testing.T) {
	sink := new(consumertest.TracesSink)
	h := newHarness(t, testConfig(func(c *Config) { c.NumShards = 4 }), sink, true)

	const goroutines, batchesEach, spansPerBatch = 8, 40, 5
	var sent atomic.Int64
	var running, wg sync.WaitGroup
	keys := make([][]spanKey, goroutines)
	running.Add(goroutines)
	for g := range goroutines {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for b := range batchesEach {
				td := syntheticBatch(g, b, spansPerBatch)
				keys[g] = append(keys[g], keysOf(td)...)
				// Before or after Shutdown, ConsumeTraces must not fail with a good consumer.
				assert.NoError(t, h.p.ConsumeTraces(context.Background(), td))
				sent.Add(spansPerBatch)
				if b == batchesEach/4 {
					running.Done()
				}
			}
		}()
	}
	running.Wait() // every goroutine is mid-stream
	shutdownDone := make(chan error, 1)
	go func() { shutdownDone <- h.p.Shutdown(context.Background()) }()
	select {
	case err := <-shutdownDone:
		require.NoError(t, err)
	case <-time.After(waitFor):
		require.FailNow(t, "Shutdown deadlocked against ConsumeTraces")
	}
	wg.Wait()

	var in []spanKey
	for _, k := range keys {
		in = append(in, k...)
	}
	require.Len(t, in, goroutines*batchesEach*spansPerBatch)
	require.EqualValues(t, len(in), sent.Load())
	out := sinkSpans(sink)
	requireExactlyOnce(t, in, out)
	require.Empty(t, handoffs(out))

	// Every span left either inside a released trace or as a late span.
	released := sumOf(t, h.tt, "spans_released")
	late := sumOf(t, h.tt, "late_spans")
	require.Equal(t, int64(len(in)), released+late)
	require.Equal(t, int64(len(withAttr(out, agentgraph.AttrLateSpan))), late)
	// The clock never moved: only shutdown released traces.
	shutdownReleases := sumOf(t, h.tt, "traces_released")
	metadatatest.AssertEqualProcessorHandoffTracesReleased(t, h.tt,
		releasedDPs(map[string]int64{triggerShutdown: shutdownReleases}), ignoreTime)
	metadatatest.AssertEqualProcessorHandoffTracesInMemory(t, h.tt, dps(0), ignoreTime)
	metadatatest.AssertEqualProcessorHandoffSpansInMemory(t, h.tt, dps(0), ignoreTime)
}

// syntheticBatch is batch b of goroutine g: every two batches form one trace, the first
// of them carries its root.
func syntheticBatch(g, b, n int) ptrace.Traces {
	td := ptrace.NewTraces()
	rs := td.ResourceSpans().AppendEmpty()
	rs.Resource().Attributes().PutStr("service.name", fmt.Sprintf("worker-%d", g))
	spans := rs.ScopeSpans().AppendEmpty().Spans()
	traceID := pcommon.TraceID{0xfe, byte(g), byte(b / 2), 1}
	rootID := pcommon.SpanID{byte(g), byte(b / 2 * 2), 0, 1}
	for k := range n {
		sp := spans.AppendEmpty()
		sp.SetTraceID(traceID)
		sp.SetSpanID(pcommon.SpanID{byte(g), byte(b), byte(k), 1})
		if b%2 != 0 || k != 0 {
			sp.SetParentSpanID(rootID)
		}
		sp.SetName(fmt.Sprintf("op %d.%d.%d", g, b, k))
		sp.SetStartTimestamp(pcommon.Timestamp(uint64(1+b*n+k) * 1_000_000))
		sp.SetEndTimestamp(pcommon.Timestamp(uint64(2+b*n+k) * 1_000_000))
	}
	return td
}

// The eviction FIFO must not keep an entry for every trace ever buffered: on a shard that
// never drains (one long trace held while short ones come and go), it has to stay bounded.
func TestArrivalQueueStaysBounded(t *testing.T) {
	sink := new(consumertest.TracesSink)
	h := newHarness(t, testConfig(func(c *Config) {
		c.NumShards = 1
		c.MaxWait = 24 * time.Hour
	}), sink, true)

	// A long trace whose root never comes keeps the shard from draining.
	h.consume(oneSpan(pcommon.TraceID{0xee, 1}, pcommon.SpanID{0xee, 1}, pcommon.SpanID{0xee}, "held"))
	const short = 500
	for i := range short {
		h.consume(oneSpan(pcommon.TraceID{0xdd, byte(i >> 8), byte(i)}, pcommon.SpanID{0xdd, byte(i >> 8), byte(i)}, pcommon.SpanID{}, "short"))
		h.advanceAndTick(h.cfg.QuietPeriod)
	}
	require.Eventually(t, func() bool { return sink.SpanCount() == short }, waitFor, time.Millisecond)
	h.assertMetrics(wantMetrics{
		released:      map[string]int64{triggerRoot: short},
		spansReleased: short, tracesInMemory: 1, spansInMemory: 1,
	})
	// Read after tick: the shard goroutine wrote arrival before answering the tick, and
	// nothing else writes it while no span arrives.
	s := h.p.shards[0]
	// Any bound proportional to the live traces will do; what must not happen is one entry
	// per trace ever seen (short+1).
	require.Less(t, len(s.arrival), short/4,
		"arrival holds %d entries for 1 buffered trace after %d released", len(s.arrival), short)
}

// TestEndOfInputReleasesEverythingNow: a replay that runs out of input gets every buffered
// trace back before EndOfInput returns; a trace whose root arrived counts as complete.
func TestEndOfInputReleasesEverythingNow(t *testing.T) {
	sink := new(consumertest.TracesSink)
	h := newHarness(t, testConfig(), sink, true)

	a := loadCapture(t, adkOK)                               // root present: complete
	b := filterSpans(loadCapture(t, strandsOK), not(isRoot)) // root never arrives
	bTop := spanNamed(t, allSpans(b), "node triage").SpanID()
	bID := traceIDOf(t, b)
	in := append(keysOf(a), keysOf(b)...)
	h.consume(a)
	h.consume(b)
	require.Zero(t, sink.SpanCount())

	require.NoError(t, h.p.EndOfInput(context.Background()))
	out := sinkSpans(sink) // synchronous: no waiting
	requireExactlyOnce(t, in, out)
	marked := withAttr(out, agentgraph.AttrTraceComplete)
	require.Len(t, marked, 1, "only the trace without its root is marked")
	requireIncomplete(t, filterOut(out, func(s ptrace.Span) bool { return s.TraceID() == bID }), bTop, triggerEndOfInput)
	h.assertMetrics(wantMetrics{released: map[string]int64{triggerEndOfInput: 2}, spansReleased: int64(len(in)), handoffs: 2, orphans: 2}) // both swarm nodes lost their parent

	// Downstream errors come back to the caller.
	failing := newHarness(t, testConfig(), consumertest.NewErr(errors.New("backend down")), true)
	failing.consume(loadCapture(t, adkOK))
	require.ErrorContains(t, failing.p.EndOfInput(context.Background()), "backend down")
}

// TestMalformedTraceIsForwardedAndCounted: a parent loop and a repeated span id are bad
// input, not a reason to lose spans: all are forwarded, and counted.
func TestMalformedTraceIsForwardedAndCounted(t *testing.T) {
	tt := componenttest.NewTelemetry()
	t.Cleanup(func() { require.NoError(t, tt.Shutdown(context.Background())) })
	sink := new(consumertest.TracesSink)
	p, err := newProcessor(metadatatest.NewSettings(tt), testConfig(), sink)
	require.NoError(t, err)
	require.NoError(t, p.Start(context.Background(), componenttest.NewNopHost()))
	id := pcommon.TraceID{4, 2}
	a, b, c := pcommon.SpanID{1}, pcommon.SpanID{2}, pcommon.SpanID{3}
	for _, td := range []ptrace.Traces{
		oneSpan(id, a, b, "a"), oneSpan(id, b, a, "b"), // a under b under a
		oneSpan(id, c, pcommon.SpanID{}, "root"), oneSpan(id, c, pcommon.SpanID{}, "root again"),
	} {
		require.NoError(t, p.ConsumeTraces(context.Background(), td))
	}
	require.NoError(t, p.EndOfInput(context.Background()))
	require.Equal(t, 4, sink.SpanCount(), "every span forwarded, the duplicate included")
	metadatatest.AssertEqualProcessorHandoffDuplicateSpans(t, tt, []metricdata.DataPoint[int64]{{Value: 1}}, metricdatatest.IgnoreTimestamp())
	metadatatest.AssertEqualProcessorHandoffBrokenParentLinks(t, tt, []metricdata.DataPoint[int64]{{Value: 1}}, metricdatatest.IgnoreTimestamp())
	require.NoError(t, p.Shutdown(context.Background()))
}

// TestRootWithOrphansIsIncomplete: the root arrived, but a span's parent never did (part of
// the trace went elsewhere, e.g. before a restart): released on the root, marked incomplete.
func TestRootWithOrphansIsIncomplete(t *testing.T) {
	sink := new(consumertest.TracesSink)
	h := newHarness(t, testConfig(), sink, true)
	id := pcommon.TraceID{7, 7}
	root, child := pcommon.SpanID{1}, pcommon.SpanID{2}
	h.consume(oneSpan(id, root, pcommon.SpanID{}, "root"))
	h.consume(oneSpan(id, child, pcommon.SpanID{9}, "child of a span that never came"))
	require.NoError(t, h.p.EndOfInput(context.Background()))
	requireIncomplete(t, sinkSpans(sink), root, reasonOrphans)
}

// The shards' capacities add up to num_traces exactly: not rounded up to a multiple of
// the shard count.
func TestShardsShareNumTracesExactly(t *testing.T) {
	for _, c := range []struct{ traces, shards, wantShards int }{
		{10, 4, 4}, {2, 4, 2}, {1, 8, 1}, {12, 4, 4}, {10000, 3, 3},
	} {
		cfg := testConfig(func(cfg *Config) { cfg.NumTraces, cfg.NumShards = c.traces, c.shards })
		p, err := newProcessor(processortest.NewNopSettings(NewFactory().Type()), cfg, consumertest.NewNop())
		require.NoError(t, err)
		total := 0
		for _, s := range p.shards {
			require.Positive(t, s.capacity)
			total += s.capacity
		}
		require.Len(t, p.shards, c.wantShards, "num_traces %d, num_shards %d", c.traces, c.shards)
		require.Equal(t, c.traces, total, "num_traces %d, num_shards %d", c.traces, c.shards)
	}
}
