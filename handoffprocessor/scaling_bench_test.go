package handoffprocessor

import (
	"context"
	"fmt"
	"math/rand/v2"
	"path/filepath"
	"testing"
	"time"

	"go.opentelemetry.io/collector/component/componenttest"
	"go.opentelemetry.io/collector/pdata/ptrace"
	"go.opentelemetry.io/collector/processor/processortest"

	"github.com/otelcol-handoff/otelcol-handoff/internal/workload"
)

// BenchmarkScalingProcessor sends traces of 10, 100, 1,000 and 10,000 spans (a 10-span real
// capture, google-adk-ok, scaled by internal/workload; fresh trace ids) through the
// processor, about 10,000 spans per iteration, each trace in one batch, until every span
// came out. cpu-ns/span (process CPU per span, as BenchmarkProcessors reports it) stays flat
// when buffering, assembly and release are linear in the trace.
func BenchmarkScalingProcessor(b *testing.B) {
	w, err := workload.Load([]string{filepath.Join("..", "testdata", "traces", "google-adk-ok.json")}, 1)
	if err != nil {
		b.Fatal(err)
	}
	capture := w.Templates[0]
	for _, n := range []int{10, 100, 1000, 10000} {
		tpl := workload.Scale(capture, n)
		tpl.MarkReadOnly()
		one := &workload.Workload{Templates: []ptrace.Traces{tpl}, Spans: tpl.SpanCount()}
		perIter := max(1, 10000/one.Spans)
		b.Run(fmt.Sprintf("spans=%d", one.Spans), func(b *testing.B) {
			cfg := createDefaultConfig().(*Config)
			cfg.QuietPeriod, cfg.MaxWait = 5*time.Millisecond, 10*time.Second
			cfg.NumTraces, cfg.MaxSpansPerTrace = 100000, 2*n
			sink := new(countingSink)
			p, err := NewFactory().CreateTraces(context.Background(), processortest.NewNopSettings(NewFactory().Type()), cfg, sink)
			if err != nil {
				b.Fatal(err)
			}
			if err := p.Start(context.Background(), componenttest.NewNopHost()); err != nil {
				b.Fatal(err)
			}
			defer func() { _ = p.Shutdown(context.Background()) }()
			rng := rand.New(rand.NewPCG(5, 6))
			want, iters := int64(0), 0
			b.ReportAllocs()
			cpu0 := cpuTime()
			for b.Loop() {
				for range perIter {
					if err := p.ConsumeTraces(context.Background(), one.Trace(0, rng, 1)[0]); err != nil {
						b.Fatal(err)
					}
				}
				want += int64(perIter * one.Spans)
				deadline := time.Now().Add(30 * time.Second)
				for sink.n.Load() < want {
					if time.Now().After(deadline) {
						b.Fatalf("released %d of %d spans", sink.n.Load(), want)
					}
					time.Sleep(time.Millisecond)
				}
				iters++
			}
			b.ReportMetric(float64((cpuTime()-cpu0).Nanoseconds())/float64(iters*perIter*one.Spans), "cpu-ns/span")
		})
	}
}
