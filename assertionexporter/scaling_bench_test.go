package assertionexporter

import (
	"context"
	"fmt"
	"path/filepath"
	"testing"

	"go.opentelemetry.io/collector/component/componenttest"
	"go.opentelemetry.io/collector/confmap"
	"go.opentelemetry.io/collector/exporter/exportertest"
	"go.opentelemetry.io/collector/pdata/pcommon"
	"go.yaml.in/yaml/v3"

	"github.com/otelcol-handoff/otelcol-handoff/assertionexporter/internal/metadata"
	"github.com/otelcol-handoff/otelcol-handoff/internal/agentgraph"
	"github.com/otelcol-handoff/otelcol-handoff/internal/rules"
	"github.com/otelcol-handoff/otelcol-handoff/internal/workload"
)

// BenchmarkScalingRules is the exporter's work per trace with 1, 10 and 100 assertions
// (workload.Rules: seed-000 steps and test-case fields) on the real captures of the six
// frameworks (internal/workload, 10-500 spans per trace), each trace handed over with the
// graph the handoff processor built, as in the collector. ns/trace/rule stays flat when the
// cost is in the rules; a per-trace cost beyond them shows as ns/trace/rule falling with
// more rules.
func BenchmarkScalingRules(b *testing.B) {
	w, err := workload.LoadCaptures(filepath.Join("..", "testdata", "traces"), 24)
	if err != nil {
		b.Fatal(err)
	}
	// Each trace with its graph in the context, as the processor passes it.
	opts := agentgraph.Options{}
	ctxs := make([]context.Context, len(w.Templates))
	for i, td := range w.Templates {
		g := agentgraph.BuildAll(td, opts)[0]
		ctxs[i] = agentgraph.ContextWithGraphs(context.Background(), opts, opts.Fingerprint(),
			map[pcommon.TraceID]agentgraph.Shared{g.TraceID: {Graph: g, Spans: td.SpanCount()}})
	}
	for _, n := range []int{1, 10, 100} {
		b.Run(fmt.Sprintf("rules=%d", n), func(b *testing.B) {
			exp := scalingExporter(b, n)
			// The rules ran on the processor's graph: n results per trace, none an error.
			for _, tv := range exp.evaluateBatch(ctxs[0], w.Templates[0], nil) {
				if len(tv.Results) != n {
					b.Fatalf("%d results per trace, want %d", len(tv.Results), n)
				}
				for _, r := range tv.Results {
					if r.Outcome == rules.Error {
						b.Fatalf("%s: %s", r.Step, r.Message)
					}
				}
			}
			b.ReportAllocs()
			traces := 0
			for b.Loop() {
				for i, td := range w.Templates {
					if err := exp.ConsumeTraces(ctxs[i], td); err != nil {
						b.Fatal(err)
					}
				}
				traces += len(w.Templates)
			}
			if built := exp.built.Load(); built != 0 {
				b.Fatalf("the exporter built %d graphs: the processor's were not reused", built)
			}
			perTrace := float64(b.Elapsed().Nanoseconds()) / float64(traces)
			b.ReportMetric(perTrace, "ns/trace")
			b.ReportMetric(perTrace/float64(n), "ns/trace/rule")
			_ = exp.Shutdown(context.Background())
		})
	}
}

// rulesExporter is the exporter with workload.Rules(n), verdict logs off as in the load
// test, its config validated.
func rulesExporter(tb testing.TB, n int) *assertionExporter {
	tb.Helper()
	var cases []any
	if err := yaml.Unmarshal([]byte(workload.Rules(n)), &cases); err != nil {
		tb.Fatal(err)
	}
	cfg := createDefaultConfig().(*Config)
	if err := confmap.NewFromStringMap(map[string]any{"log_verdicts": "none", "cases": cases}).Unmarshal(cfg); err != nil {
		tb.Fatal(err)
	}
	if err := cfg.Validate(); err != nil {
		tb.Fatalf("Rules(%d): %v", n, err)
	}
	exp, err := newExporter(exportertest.NewNopSettings(metadata.Type), cfg)
	if err != nil {
		tb.Fatal(err)
	}
	return exp
}

// scalingExporter is rulesExporter, started.
func scalingExporter(b *testing.B, n int) *assertionExporter {
	b.Helper()
	exp := rulesExporter(b, n)
	if err := exp.Start(context.Background(), componenttest.NewNopHost()); err != nil {
		b.Fatal(err)
	}
	return exp
}

// TestScalingRulesAreValidCases: the benchmark's rule sets load as exporter config, each
// with its number of assertions.
func TestScalingRulesAreValidCases(t *testing.T) {
	for _, n := range []int{1, 10, 13, 100} {
		exp := rulesExporter(t, n)
		for _, tv := range exp.evaluateBatch(context.Background(), readCapture(t, "strands-ok"), nil) {
			if len(tv.Results) != n {
				t.Errorf("Rules(%d): %d results per trace", n, len(tv.Results))
			}
		}
	}
}
