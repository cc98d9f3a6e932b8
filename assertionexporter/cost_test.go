package assertionexporter

import (
	"testing"

	"github.com/stretchr/testify/require"
	"go.uber.org/zap/zapcore"
	"go.uber.org/zap/zaptest/observer"

	"github.com/otelcol-handoff/otelcol-handoff/handoffprocessor"
	"github.com/otelcol-handoff/otelcol-handoff/internal/pricing"
	"github.com/otelcol-handoff/otelcol-handoff/internal/rules"
	"github.com/otelcol-handoff/otelcol-handoff/internal/rules/steps"
)

func price(v float64) *float64 { return &v }

// stubPrices prices the stub models of the Strands captures (mock-triage-1,
// mock-weather-1) at $1 input and $4 output per million tokens.
func stubPrices() pricing.Config {
	return pricing.Config{Models: []pricing.ModelPrice{
		{Model: "mock-weather-1", Input: price(1), Output: price(4)},
		{Model: "mock-triage-1", Input: price(1), Output: price(4)},
	}}
}

// costRun sends the strands-ok capture through a handoff processor priced with pp into an
// exporter priced with ep, whose one case budgets weather_specialist's cost.
func costRun(t *testing.T, pp, ep pricing.Config) ([]rules.Result, map[[3]string]int64, *observer.ObservedLogs, int64) {
	t.Helper()
	exp, tt, logs, out := newRequiringExporter(t, "", func(cfg *Config) {
		cfg.Judge.Endpoint = "" // no judge: the case has no judged step
		cfg.Cases = []rules.CaseConfig{{Name: "cost", Steps: []rules.StepConfig{
			{Kind: &steps.TopologyStep{}},
			{Kind: &steps.BudgetStep{AgentName: "weather_specialist", MaxCostUsd: price(0.0003)}},
		}}}
		cfg.Pricing = ep
	})
	runProcessor(t, exp, func(c *handoffprocessor.Config) { c.Pricing = pp }, "strands-ok")
	return (&harness{out: out}).results(t), evaluations(t, tt), logs, exp.built.Load()
}

// TestCostBudgetBehindTheProcessor: priced the same in the processor and the exporter, the
// processor's graph is judged: weather_specialist's three calls (190 input, 31 output
// tokens) cost $0.000314, over maxCostUsd 0.0003. Unpriced, the step is an error that
// says it is incomplete, counted as outcome=error (so handoffcheck's default --fail-on
// fail,error exits 1 on it).
func TestCostBudgetBehindTheProcessor(t *testing.T) {
	results, counts, logs, built := costRun(t, stubPrices(), stubPrices())
	require.Zero(t, built, "the processor's graph was reused")
	require.Len(t, results, 2)
	require.Equal(t, rules.Fail, results[1].Outcome)
	require.Equal(t, "weather_specialist (span 6bcab0b4c887d392) cost $0.000314, over maxCostUsd 0.0003", results[1].Message)
	require.Equal(t, int64(1), counts[[3]string{"cost", "EXPECT_AGENT_BUDGET#2", "fail"}])
	require.Empty(t, logs.FilterLevelExact(zapcore.ErrorLevel).All())

	results, counts, _, _ = costRun(t, pricing.Config{}, pricing.Config{})
	require.Equal(t, rules.Error, results[1].Outcome)
	require.Contains(t, results[1].Message, "incomplete: no price for model mock-weather-1")
	require.Equal(t, int64(1), counts[[3]string{"cost", "EXPECT_AGENT_BUDGET#2", "error"}])
}

// TestPricesDifferFromTheProcessorsAreErrors: an exporter priced otherwise than the
// processor it reads from would judge other costs than the processor wrote on the spans:
// every result is an error naming the fix, with one Error line.
func TestPricesDifferFromTheProcessorsAreErrors(t *testing.T) {
	results, counts, logs, _ := costRun(t, pricing.Config{}, stubPrices())
	require.Len(t, results, 2)
	for _, r := range results {
		require.Equal(t, rules.Error, r.Outcome)
		require.Equal(t, "prices differ", r.Actual)
		require.Equal(t, errPricesDiffer.Error(), r.Message)
	}
	require.Equal(t, int64(1), counts[[3]string{"cost", "ASSERT_AGENT_TOPOLOGY#1", "error"}])
	lines := logs.FilterLevelExact(zapcore.ErrorLevel).All()
	require.Len(t, lines, 1)
	require.Equal(t, "set the same pricing in the handoff processor and this exporter, or remove it from both", lines[0].ContextMap()["fix"])
}
