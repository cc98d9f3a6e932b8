package assertionexporter

import (
	"context"
	"fmt"
	"math/rand/v2"
	"path/filepath"
	"syscall"
	"testing"
	"time"

	"go.opentelemetry.io/collector/component/componenttest"
	"go.opentelemetry.io/collector/confmap"
	"go.opentelemetry.io/collector/pdata/pcommon"
	"go.opentelemetry.io/collector/pdata/ptrace"

	"github.com/otelcol-handoff/otelcol-handoff/assertionexporter/internal/metadatatest"
	"github.com/otelcol-handoff/otelcol-handoff/internal/agentgraph"
	"github.com/otelcol-handoff/otelcol-handoff/internal/workload"
)

// benchCases are the load test's 10 rules (cmd/loadtest): a topology case of five steps and
// a test case of five expectations. copies > 1 repeats both under new names (10 rules each).
func benchCases(copies int) []any {
	var out []any
	for i := range copies {
		suffix := ""
		if copies > 1 {
			suffix = fmt.Sprintf("-%d", i)
		}
		out = append(out,
			map[string]any{"name": "topology" + suffix, "steps": []any{
				map[string]any{"action": "ASSERT_AGENT_TOPOLOGY", "maxDepth": 5},
				map[string]any{"action": "EXPECT_DELEGATION_TO", "agentName": "weather_specialist", "fromAgent": "triage"},
				map[string]any{"action": "EXPECT_AGENT_BUDGET", "agentName": "weather_specialist", "maxTokens": 100000, "maxToolCalls": 600},
				map[string]any{"action": "EXPECT_AGENT_BUDGET", "agentName": "triage", "maxDurationMs": 600000},
				map[string]any{"action": "EXPECT_DELEGATION_TO", "agentName": "triage", "maxInvocations": 100},
			}},
			map[string]any{
				"name": "tests" + suffix, "expected_result": `status == "completed"`,
				"expected_tool_calls":    []any{"get_weather", "get_weather: invocations >= 1"},
				"expected_no_tool_calls": []any{"delete_everything"}, "expected_tool_call_order": []any{"get_weather"},
			})
	}
	return out
}

// releasedTrace is one trace as the handoff processor hands it on: HANDOFF spans added, its
// graph riding in the context.
type releasedTrace struct {
	td  ptrace.Traces
	ctx context.Context
}

// BenchmarkExporterTrace is the exporter's whole per-trace work on traces the handoff
// processor assembled (the graph comes in the context, as in the collector), with real
// telemetry (the SDK meter provider of componenttest): the cases' evaluation, the
// verdict counters and latency histogram, the gate window. The workload is the
// processor benchmarks' (real captures scaled to 10-500 spans, 188 on average).
// ns/trace/rule is the cost of one rule on one trace, everything included; cpu-ns/trace/rule
// the same in process CPU time.
func BenchmarkExporterTrace(b *testing.B) {
	w, err := workload.LoadCaptures(filepath.Join("..", "testdata", "traces"), 48)
	if err != nil {
		b.Fatal(err)
	}
	rng := rand.New(rand.NewPCG(5, 6))
	opts, err := createDefaultConfig().(*Config).graphOptions()
	if err != nil {
		b.Fatal(err)
	}
	fp := opts.Fingerprint()
	var traces []releasedTrace
	for i := range w.Templates {
		td := w.Trace(i, rng, 1)[0]
		g := agentgraph.BuildAll(td, opts)[0]
		agentgraph.AppendHandoffs(g, td, agentgraph.ContentPolicy{})
		td.MarkReadOnly()
		ctx := agentgraph.ContextWithGraphs(context.Background(), opts, fp,
			map[pcommon.TraceID]agentgraph.Shared{g.TraceID: {Graph: g, Spans: td.SpanCount()}})
		traces = append(traces, releasedTrace{td: td, ctx: ctx})
	}
	for _, copies := range []int{1, 5} {
		rules := 10 * copies
		b.Run(fmt.Sprintf("rules=%d", rules), func(b *testing.B) {
			cfg := createDefaultConfig().(*Config)
			if err := confmap.NewFromStringMap(map[string]any{"log_verdicts": "none", "cases": benchCases(copies)}).Unmarshal(cfg); err != nil {
				b.Fatal(err)
			}
			tt := componenttest.NewTelemetry()
			defer func() { _ = tt.Shutdown(context.Background()) }()
			exp, err := newExporter(metadatatest.NewSettings(tt), cfg)
			if err != nil {
				b.Fatal(err)
			}
			if err := exp.Start(context.Background(), componenttest.NewNopHost()); err != nil {
				b.Fatal(err)
			}
			defer func() { _ = exp.Shutdown(context.Background()) }()
			b.ReportAllocs()
			i := 0
			cpu0 := perfProcessCPU()
			for b.Loop() {
				tr := traces[i%len(traces)]
				if err := exp.ConsumeTraces(tr.ctx, tr.td); err != nil {
					b.Fatal(err)
				}
				i++
			}
			if exp.built.Load() != 0 {
				b.Fatalf("the exporter built %d graphs itself; every trace came with its graph", exp.built.Load())
			}
			b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(b.N*rules), "ns/trace/rule")
			// Process CPU (garbage collection included): steadier than wall time on a
			// shared machine.
			b.ReportMetric(float64((perfProcessCPU()-cpu0).Nanoseconds())/float64(b.N*rules), "cpu-ns/trace/rule")
		})
	}
}

func perfProcessCPU() time.Duration {
	var ru syscall.Rusage
	_ = syscall.Getrusage(syscall.RUSAGE_SELF, &ru)
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}
