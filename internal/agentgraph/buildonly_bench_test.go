package agentgraph

import (
	"slices"
	"testing"

	"go.opentelemetry.io/collector/pdata/pcommon"
)

// BenchmarkBuildOnly is BenchmarkBuildWorkload without the wrapping: the 48 traces are
// wrapped once (SpansOf, outside the loop), and every iteration builds each trace from its
// spans in the order SpansOf gave them (Build sets every field it reads, so building the
// same spans again gives the same graph). cpu-ns/span is then the DAG build's alone.
func BenchmarkBuildOnly(b *testing.B) {
	w := benchWorkload(b)
	type trace struct {
		id    pcommon.TraceID
		spans []*Span
	}
	var traces []trace
	for _, td := range w.Templates {
		for id, spans := range SpansOf(td) {
			traces = append(traces, trace{id, spans})
		}
	}
	work := make([][]*Span, len(traces))
	for i, tr := range traces {
		work[i] = slices.Clone(tr.spans)
	}
	b.ReportAllocs()
	cpu0 := perfProcessCPU()
	for b.Loop() {
		for i, tr := range traces {
			copy(work[i], tr.spans) // Build sorts its input in place
			Build(tr.id, work[i], Options{})
		}
	}
	b.ReportMetric(float64((perfProcessCPU()-cpu0).Nanoseconds())/float64(b.N*w.Spans), "cpu-ns/span")
}
