package agentgraph

import (
	"fmt"
	"testing"

	"go.opentelemetry.io/collector/pdata/ptrace"

	"github.com/otelcol-handoff/otelcol-handoff/internal/workload"
)

// scalingSizes are the spans per trace of the scaling benchmarks (docs/performance.md,
// drawn by cmd/perfplot).
var scalingSizes = []int{10, 100, 1000, 10000}

// BenchmarkScalingBuild is the processor's work per released trace (the delegation DAG,
// then its HANDOFF spans) over spans per trace, on two 10-span real captures scaled by
// internal/workload to exactly 10, 100, 1,000 and 10,000 spans. ns/span stays flat when the
// work is linear in the trace.
func BenchmarkScalingBuild(b *testing.B) {
	for _, name := range []string{"google-adk-ok", "vercel-ai-ok"} {
		capture := capture(b, name)
		for _, n := range scalingSizes {
			td := workload.Scale(capture, n)
			td.MarkReadOnly()
			spans := td.SpanCount()
			if spans != n {
				b.Fatalf("%s scaled to %d spans, want %d", name, spans, n)
			}
			b.Run(fmt.Sprintf("capture=%s/spans=%d", name, spans), func(b *testing.B) {
				b.ReportAllocs()
				b.SetBytes(int64((&ptrace.ProtoMarshaler{}).TracesSize(td)))
				for b.Loop() {
					for _, g := range BuildAll(td, Options{}) {
						AppendHandoffs(g, ptrace.NewTraces(), ContentPolicy{MaxBytes: 4096})
					}
				}
				b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(b.N*spans), "ns/span")
			})
		}
	}
}
