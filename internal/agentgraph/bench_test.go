package agentgraph

import (
	"fmt"
	"testing"

	"go.opentelemetry.io/collector/pdata/ptrace"

	"github.com/otelcol-handoff/otelcol-handoff/internal/agentgraph/agentgraphtest"
	"github.com/otelcol-handoff/otelcol-handoff/internal/workload"
)

// The traces: a real capture scaled by internal/workload (its delegation subtree copied
// with fresh span ids, attribute sizes kept).

func BenchmarkBuild(b *testing.B) {
	capture := capture(b, "strands-ok")
	for _, n := range []int{17, 100, 500} {
		td := workload.Scale(capture, n)
		td.MarkReadOnly()
		spans := td.SpanCount()
		b.Run(fmt.Sprintf("spans=%d", spans), func(b *testing.B) {
			b.ReportAllocs()
			b.SetBytes(int64((&ptrace.ProtoMarshaler{}).TracesSize(td)))
			for b.Loop() {
				BuildAll(td, Options{})
			}
			b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(b.N*spans), "ns/span")
		})
	}
}

func BenchmarkAppendHandoffs(b *testing.B) {
	capture := capture(b, "strands-ok")
	for _, n := range []int{17, 500} {
		td := workload.Scale(capture, n)
		g := BuildAll(td, Options{})[0]
		b.Run(fmt.Sprintf("spans=%d/edges=%d", td.SpanCount(), len(g.Edges)), func(b *testing.B) {
			b.ReportAllocs()
			for b.Loop() {
				AppendHandoffs(g, ptrace.NewTraces(), ContentPolicy{MaxBytes: 4096})
			}
		})
	}
}

// BenchmarkBuildShapes: a deep chain of nested agents against a flat fan-out of the same
// span count. Linear work per trace keeps their ns/span close and flat as the size grows.
func BenchmarkBuildShapes(b *testing.B) {
	for _, spans := range []int{1000, 10000} {
		shapes := []struct {
			name string
			td   ptrace.Traces
		}{
			{"deep", agentgraphtest.DeepChain(spans / 3)},
			{"flat", agentgraphtest.FanOut(spans / 3)},
		}
		for _, sh := range shapes {
			sh.td.MarkReadOnly()
			n := sh.td.SpanCount()
			b.Run(fmt.Sprintf("%s/spans=%d", sh.name, spans), func(b *testing.B) {
				b.ReportAllocs()
				for b.Loop() {
					BuildAll(sh.td, Options{})
				}
				b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(b.N*n), "ns/span")
			})
		}
	}
}
