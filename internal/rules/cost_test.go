package rules

import (
	"os"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/require"
	"go.opentelemetry.io/collector/pdata/ptrace"

	"github.com/otelcol-handoff/otelcol-handoff/internal/agentgraph"
	"github.com/otelcol-handoff/otelcol-handoff/internal/pricing"
	"github.com/otelcol-handoff/otelcol-handoff/internal/rules/steps"
)

func usdLimit(v float64) *float64 { return &v }

func readCorpus(t *testing.T, name string) ptrace.Traces {
	t.Helper()
	return readFile(t, filepath.Join("..", "..", "testdata", "corpus", name+".otlp.json"))
}

func readFile(t *testing.T, path string) ptrace.Traces {
	t.Helper()
	raw, err := os.ReadFile(path)
	require.NoError(t, err)
	td, err := (&ptrace.JSONUnmarshaler{}).UnmarshalTraces(raw)
	require.NoError(t, err)
	return td
}

// costResult evaluates one budget step on td's graph built with opts.
func costResult(t *testing.T, td ptrace.Traces, opts agentgraph.Options, step steps.BudgetStep) Result {
	t.Helper()
	ev, err := Compile([]CaseConfig{{Name: "c", Steps: []StepConfig{{Kind: &steps.TopologyStep{AllowCycles: true}}, {Kind: &step}}}}, Options{})
	require.NoError(t, err)
	rs := ev.Evaluate(agentgraph.BuildAll(td, opts)[0], true)
	require.Len(t, rs, 2)
	return rs[1]
}

// TestCostBudgetReported: Pydantic AI reports operation.cost on its chat spans
// (testdata/corpus/lf-pydantic-ai-multiagent): the first joke_agent run's two calls cost
// 0.00009435 + 0.00008355; the second run's one 0.0000837, plus evaluator_agent's 0.00006105
// in its subtree (an inferred handoff).
func TestCostBudgetReported(t *testing.T) {
	td := readCorpus(t, "lf-pydantic-ai-multiagent")
	step := steps.BudgetStep{AgentName: "joke_agent", MaxCostUsd: usdLimit(0.00015)}
	r := costResult(t, td, agentgraph.Options{}, step)
	require.Equal(t, Fail, r.Outcome)
	require.Equal(t, "joke_agent subtree: cost <= $0.00015", r.Expected)
	require.Equal(t, "joke_agent (span 5b5c52d029f28206) cost $0.0001779, over maxCostUsd 0.00015", r.Message)
	require.Contains(t, r.Actual, "tool calls 3, cost $0.0001779; ")
	require.Contains(t, r.Actual, "cost $0.00014475")

	step.MaxCostUsd = usdLimit(0.0002)
	r = costResult(t, td, agentgraph.Options{}, step)
	require.Equal(t, Pass, r.Outcome, r.Message)
}

// TestCostBudgetTable: the CrewAI capture (OpenInference, no reported cost) has one
// gpt-4o-mini call of 190 input and 164 output tokens under Task._execute_core: priced from
// the table ($0.15 and $0.60 per million), $0.0001269.
func TestCostBudgetTable(t *testing.T) {
	td := readCorpus(t, "lf-crewai-openinference")
	r := costResult(t, td, agentgraph.Options{}, steps.BudgetStep{AgentName: "Task._execute_core", MaxCostUsd: usdLimit(0.0001)})
	require.Equal(t, Fail, r.Outcome)
	require.Equal(t, "Task._execute_core (span a8bf77474d6f9a1d) cost $0.0001269, over maxCostUsd 0.0001", r.Message)
}

// TestCostBudgetIncomplete: the strands-ok capture runs on stub models no table prices
// (gen_ai.request.model mock-triage-1, mock-weather-1). The cost is unknown: the budget is
// an error that says it is incomplete and which model has no price, never a pass at $0;
// with the known part already over the limit it fails all the same.
func TestCostBudgetIncomplete(t *testing.T) {
	td := readCapture(t, "strands-ok")
	r := costResult(t, td, agentgraph.Options{}, steps.BudgetStep{AgentName: "weather_specialist", MaxCostUsd: usdLimit(1)})
	require.Equal(t, Error, r.Outcome)
	require.Equal(t, "incomplete: no price for model mock-weather-1 (weather_specialist (span 6bcab0b4c887d392)): the cost is unknown, "+
		"so maxCostUsd 1 cannot be checked; price the model under pricing.models", r.Message)
	require.Equal(t, "tokens 221, duration 9.07ms, tool calls 2, cost at least $0 (incomplete)", r.Actual)

	// Unpriced models are named, sorted: triage's subtree runs on both.
	r = costResult(t, td, agentgraph.Options{}, steps.BudgetStep{AgentName: "triage", MaxCostUsd: usdLimit(1)})
	require.Equal(t, Error, r.Outcome)
	require.Equal(t, "incomplete: no price for models mock-triage-1, mock-weather-1 (triage (span fa02bab16782b0b7)): the cost is unknown, "+
		"so maxCostUsd 1 cannot be checked; price the models under pricing.models", r.Message)

	// mock-triage-1 priced (triage's one call: 50 input, 12 output tokens at $10 and $20
	// per million = $0.00074), mock-weather-1 not.
	prices, err := pricing.Config{Models: []pricing.ModelPrice{{Model: "mock-triage-1", Input: usdLimit(10), Output: usdLimit(20)}}}.Compile()
	require.NoError(t, err)
	r = costResult(t, td, agentgraph.Options{Prices: prices}, steps.BudgetStep{AgentName: "triage", MaxCostUsd: usdLimit(0.0005)})
	require.Equal(t, Fail, r.Outcome)
	require.Equal(t, "triage (span fa02bab16782b0b7) cost at least $0.00074, over maxCostUsd 0.0005 (no price for model mock-weather-1)", r.Message)
}

// TestCostBudgetOverride: with both stub models priced in config, weather_specialist's three
// calls (190 input, 31 output tokens) at $1 and $4 per million cost $0.000314; its agent span
// lasts 9.07 ms.
func TestCostBudgetOverride(t *testing.T) {
	prices, err := pricing.Config{Models: []pricing.ModelPrice{
		{Model: "mock-weather-1", Input: usdLimit(1), Output: usdLimit(4)},
		{Model: "mock-triage-1", Input: usdLimit(1), Output: usdLimit(4)},
	}}.Compile()
	require.NoError(t, err)
	opts := agentgraph.Options{Prices: prices}
	td := readCapture(t, "strands-ok")
	step := steps.BudgetStep{AgentName: "weather_specialist", MaxCostUsd: usdLimit(0.0003)}
	r := costResult(t, td, opts, step)
	require.Equal(t, Fail, r.Outcome)
	require.Equal(t, "weather_specialist (span 6bcab0b4c887d392) cost $0.000314, over maxCostUsd 0.0003", r.Message)
	step.MaxCostUsd = usdLimit(0.001)
	r = costResult(t, td, opts, step)
	require.Equal(t, Pass, r.Outcome)
	require.Equal(t, "tokens 221, duration 9.07ms, tool calls 2, cost $0.000314", r.Actual)
}

func TestCostBudgetConfig(t *testing.T) {
	_, err := Compile([]CaseConfig{{Name: "c", Steps: []StepConfig{
		{Kind: &steps.TopologyStep{}},
		{Kind: &steps.BudgetStep{AgentName: "a", MaxCostUsd: usdLimit(-1)}},
	}}}, Options{})
	require.ErrorContains(t, err, "cases[0] (c).steps[1].maxCostUsd: must be a finite amount of 0 or more, got -1")
	_, err = Compile([]CaseConfig{{Name: "c", Steps: []StepConfig{
		{Kind: &steps.TopologyStep{}},
		{Kind: &steps.BudgetStep{AgentName: "a", MaxCostUsd: usdLimit(0)}},
	}}}, Options{})
	require.NoError(t, err, "maxCostUsd alone is a budget")
}
