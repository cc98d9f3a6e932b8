package agentgraph

import (
	"testing"

	"go.opentelemetry.io/collector/pdata/ptrace"
)

// BenchmarkAppendHandoffsWorkload writes the HANDOFF spans of every trace of the processor
// benchmarks' workload (the six real captures scaled to 48 traces, benchWorkload) with the
// processor's default content policy (redact, 4096 bytes), as the processor does for each
// released trace. The graphs are built once; a framework's own handoff span is enriched in
// place on the first pass, so later passes only look its attributes up. cpu-ns/handoff is
// process CPU (garbage collection included), steadier than wall time on a shared machine.
func BenchmarkAppendHandoffsWorkload(b *testing.B) {
	w := benchWorkload(b)
	var graphs []*Graph
	handoffs := 0
	for _, tmpl := range w.Templates {
		td := ptrace.NewTraces() // mutable: a framework's handoff span is enriched in place
		tmpl.CopyTo(td)
		for _, g := range BuildAll(td, Options{}) {
			graphs = append(graphs, g)
			handoffs += len(g.Edges)
		}
	}
	policy := ContentPolicy{MaxBytes: 4096}
	b.ReportAllocs()
	cpu0 := perfProcessCPU()
	for b.Loop() {
		for _, g := range graphs {
			AppendHandoffs(g, ptrace.NewTraces(), policy)
		}
	}
	b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(b.N*handoffs), "ns/handoff")
	b.ReportMetric(float64((perfProcessCPU()-cpu0).Nanoseconds())/float64(b.N*handoffs), "cpu-ns/handoff")
}
