package rules

import (
	"fmt"
	"os"
	"path/filepath"
	"testing"

	"go.opentelemetry.io/collector/pdata/ptrace"

	"github.com/otelcol-handoff/otelcol-handoff/internal/agentgraph"
	"github.com/otelcol-handoff/otelcol-handoff/internal/agentgraph/agentgraphtest"
	"github.com/otelcol-handoff/otelcol-handoff/internal/rules/steps"
)

// benchRules builds exactly n rules of the kinds a real config mixes: topology, delegation
// and budget steps, three to a case.
func benchRules(n int) []CaseConfig {
	depth, calls := 3, 6
	kinds := []StepConfig{
		{Kind: &steps.TopologyStep{MaxDepth: &depth}},
		{Kind: &steps.DelegationStep{AgentName: "weather_specialist", FromAgent: "triage"}},
		{Kind: &steps.BudgetStep{AgentName: "weather_specialist", MaxToolCalls: &calls}},
	}
	var cases []CaseConfig
	for i := 0; i < n; i++ {
		if i%len(kinds) == 0 {
			cases = append(cases, CaseConfig{Name: fmt.Sprintf("case%d", len(cases))})
		}
		c := &cases[len(cases)-1]
		c.Steps = append(c.Steps, kinds[i%len(kinds)])
	}
	return cases
}

// BenchmarkEvaluate: rule evaluation per trace, for 1, 10 and 50 rules, on a real capture.
func BenchmarkEvaluate(b *testing.B) {
	raw, err := os.ReadFile(filepath.Join("..", "..", "testdata", "traces", "strands-ok.json"))
	if err != nil {
		b.Fatal(err)
	}
	td, err := (&ptrace.JSONUnmarshaler{}).UnmarshalTraces(raw)
	if err != nil {
		b.Fatal(err)
	}
	g := agentgraph.BuildAll(td, agentgraph.Options{})[0]
	for _, n := range []int{1, 10, 50} {
		cases := benchRules(n)
		ev, err := Compile(cases, Options{})
		if err != nil {
			b.Fatal(err)
		}
		b.Run(fmt.Sprintf("rules=%d", n), func(b *testing.B) {
			b.ReportAllocs()
			results := 0
			for b.Loop() {
				results = len(ev.Evaluate(g, true))
			}
			if results != n {
				b.Fatalf("%d results, want %d", results, n)
			}
			b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(b.N*n), "ns/rule")
		})
	}
}

// rubricCases grades every handoff on the four rubrics, after a topology step.
func rubricCases() []CaseConfig {
	return []CaseConfig{{Name: "rubrics", Steps: []StepConfig{
		{Kind: &steps.TopologyStep{AllowCycles: true}},
		{Kind: &steps.RubricsStep{}},
	}}}
}

// BenchmarkRubrics: the handoff rubrics on a receiver with 2,000 tool calls, on a deep
// chain and on a flat fan-out of the same span count; ns/span.
func BenchmarkRubrics(b *testing.B) {
	ev, err := Compile(rubricCases(), Options{})
	if err != nil {
		b.Fatal(err)
	}
	for _, sh := range []struct {
		name string
		td   ptrace.Traces
	}{
		{"toolcalls=2000", agentgraphtest.ToolCalls(2000)},
		{"deep/spans=10000", agentgraphtest.DeepChain(10000 / 3)},
		{"flat/spans=10000", agentgraphtest.FanOut(10000 / 3)},
	} {
		g := agentgraph.BuildAll(sh.td, agentgraph.Options{})[0]
		n := len(g.Spans)
		b.Run(sh.name, func(b *testing.B) {
			b.ReportAllocs()
			for b.Loop() {
				ev.Evaluate(g, true)
			}
			b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(b.N*n), "ns/span")
		})
	}
}
