package handoffprocessor

import (
	"context"
	"fmt"
	"math/rand/v2"
	"testing"
	"time"

	"go.opentelemetry.io/collector/component/componenttest"
	"go.opentelemetry.io/collector/processor/processortest"

	"github.com/otelcol-handoff/otelcol-handoff/internal/agentgraph"
)

// BenchmarkReleaseOutsideBuild is the processor's own work on released traces other than
// building their DAGs: wrapping the spans for Build (SpansOfTrace), remembering the runs in
// the link cache, resolving links, writing costs, adding the HANDOFF spans, sizing, batching
// and handing the batches downstream (a counting sink), as assemble and forwardReleased do
// it. Each iteration releases the load-test workload's 240 traces (fresh copies, fresh ids)
// with the default configuration (a full-size link cache), in chunks of one trace (timed
// releases at a moderate rate: the load test at 50k spans/s) or of all 240 (a burst; still
// under release.max_batch_spans); the copies and agentgraph.Build run with the timer
// stopped, so ns/span, cpu-ns/span (process CPU in the timed parts, GC included), B/op and
// allocs/op are the release path's own.
func BenchmarkReleaseOutsideBuild(b *testing.B) {
	w := loadWorkload(b, 240)
	for _, chunk := range []int{1, len(w.Templates)} {
		b.Run(fmt.Sprintf("chunk=%d", chunk), func(b *testing.B) { benchReleaseOutsideBuild(b, w, chunk) })
	}
}

func benchReleaseOutsideBuild(b *testing.B, w *benchWorkload, chunk int) {
	cfg := createDefaultConfig().(*Config)
	p, err := newProcessor(processortest.NewNopSettings(NewFactory().Type()), cfg, new(countingSink))
	if err != nil {
		b.Fatal(err)
	}
	if err := p.Start(context.Background(), componenttest.NewNopHost()); err != nil {
		b.Fatal(err)
	}
	defer func() { _ = p.Shutdown(context.Background()) }()
	rng := rand.New(rand.NewPCG(7, 8))
	now := time.Now()
	fresh := func() []release {
		rs := make([]release, len(w.Templates))
		for i := range w.Templates {
			td := w.Trace(i, rng, 1)[0]
			id := td.ResourceSpans().At(0).ScopeSpans().At(0).Spans().At(0).TraceID()
			rs[i] = release{trigger: triggerRoot, trace: &pendingTrace{id: id, data: td, spans: td.SpanCount(), first: now, rootSeen: true}}
		}
		return rs
	}
	// Fill the link cache first: every remembered span then evicts the oldest, as in a
	// collector that has run for a while.
	for p.links.len() < cfg.LinkCacheSize {
		for _, r := range fresh() {
			p.links.remember(agentgraph.Build(r.trace.id, agentgraph.SpansOfTrace(r.trace.data), p.graphOpts))
		}
	}
	var cpu time.Duration
	spans := 0
	b.ReportAllocs()
	for b.Loop() {
		b.StopTimer()
		rs := fresh()
		b.StartTimer()
		cpu0 := cpuTime()
		wrapped := make([][]*agentgraph.Span, len(rs))
		for i, r := range rs {
			wrapped[i] = agentgraph.SpansOfTrace(r.trace.data)
		}
		cpu += cpuTime() - cpu0
		b.StopTimer()
		graphs := make([]*agentgraph.Graph, len(rs))
		for i, r := range rs {
			graphs[i] = agentgraph.Build(r.trace.id, wrapped[i], p.graphOpts)
		}
		b.StartTimer()
		cpu0 = cpuTime()
		for from := 0; from < len(rs); from += chunk {
			to := min(from+chunk, len(rs))
			for _, g := range graphs[from:to] {
				p.links.remember(g)
			}
			bt := batcher{p: p, send: func(bt *batch) error { return p.deliver(context.Background(), bt) }}
			for _, u := range p.finishAll(rs[from:to], graphs[from:to], make([]time.Duration, to-from)) {
				bt.add(u)
			}
			bt.flush()
			if err := bt.err(); err != nil {
				b.Fatal(err)
			}
		}
		cpu += cpuTime() - cpu0
		spans += w.Spans
	}
	b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(spans), "ns/span")
	b.ReportMetric(float64(cpu.Nanoseconds())/float64(spans), "cpu-ns/span")
}
