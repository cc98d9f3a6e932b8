package agentgraph

import (
	"fmt"
	"path/filepath"
	"syscall"
	"testing"
	"time"

	"go.opentelemetry.io/collector/pdata/pcommon"
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

// benchWorkload is the processor benchmarks' workload (internal/workload): the six real
// captures scaled to 48 traces.
func benchWorkload(b *testing.B) *workload.Workload {
	w, err := workload.LoadCaptures(filepath.Join("..", "..", "testdata", "traces"), 48)
	if err != nil {
		b.Fatal(err)
	}
	return w
}

// BenchmarkBuildWorkload builds the graph of every trace of the processor benchmarks'
// workload (internal/workload: the six real captures, Google ADK, Strands, LangGraph,
// OpenAI Agents, Mastra and the Vercel AI SDK, scaled to 10-500 spans; 48 traces), from
// the wrapping of its spans on, as the handoff processor does for each released trace.
// cpu-ns/span is process CPU (garbage collection included), steadier than wall time on a
// shared machine.
func BenchmarkBuildWorkload(b *testing.B) {
	w := benchWorkload(b)
	var ids []pcommon.TraceID
	for _, td := range w.Templates {
		ids = append(ids, td.ResourceSpans().At(0).ScopeSpans().At(0).Spans().At(0).TraceID())
	}
	b.ReportAllocs()
	cpu0 := perfProcessCPU()
	for b.Loop() {
		for i, td := range w.Templates {
			Build(ids[i], SpansOf(td)[ids[i]], Options{})
		}
	}
	b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(b.N*w.Spans), "ns/span")
	b.ReportMetric(float64((perfProcessCPU()-cpu0).Nanoseconds())/float64(b.N*w.Spans), "cpu-ns/span")
}

func perfProcessCPU() time.Duration {
	var ru syscall.Rusage
	_ = syscall.Getrusage(syscall.RUSAGE_SELF, &ru)
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}
