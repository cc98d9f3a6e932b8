package rules

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"
	"go.opentelemetry.io/collector/pdata/pcommon"
	"go.opentelemetry.io/collector/pdata/ptrace"

	"github.com/otelcol-handoff/otelcol-handoff/internal/agentgraph"
	"github.com/otelcol-handoff/otelcol-handoff/internal/agentgraph/agentgraphtest"
	"github.com/otelcol-handoff/otelcol-handoff/internal/rules/check"
	"github.com/otelcol-handoff/otelcol-handoff/internal/rules/steps"
)

func readCapture(t *testing.T, name string) ptrace.Traces {
	raw, err := os.ReadFile(filepath.Join("..", "..", "testdata", "traces", name+".json"))
	require.NoError(t, err)
	td, err := (&ptrace.JSONUnmarshaler{}).UnmarshalTraces(raw)
	require.NoError(t, err)
	return td
}

// setEnd moves the end of the span with the given id.
func setEnd(t *testing.T, td ptrace.Traces, id string, end func(start pcommon.Timestamp) pcommon.Timestamp) {
	eachSpanByID(t, td, id, func(sp ptrace.Span) { sp.SetEndTimestamp(end(sp.StartTimestamp())) })
}

func budgetResult(t *testing.T, td ptrace.Traces, step StepConfig) Result {
	t.Helper()
	ev, err := Compile([]CaseConfig{{Name: "c", Steps: []StepConfig{{Kind: &steps.TopologyStep{AllowCycles: true}}, step}}}, Options{})
	require.NoError(t, err)
	rs := ev.Evaluate(agentgraph.BuildAll(td, agentgraph.Options{})[0], true)
	require.Len(t, rs, 2)
	return rs[1]
}

// TestBudgetUnknownDuration: the strands-ok capture with weather_specialist's agent span
// (6bcab0b4c887d392) ending before it starts. Its duration is unknown, not 0 ms: a duration
// budget on it, or on the swarm above it, is an error naming the span, never a pass; a
// budget the known part already exceeds still fails.
func TestBudgetUnknownDuration(t *testing.T) {
	limit := func(ms float64) *float64 { return &ms }
	const broken = "6bcab0b4c887d392"

	intact := budgetResult(t, readCapture(t, "strands-ok"), StepConfig{Kind: &steps.BudgetStep{AgentName: "weather_specialist", MaxDurationMs: limit(1000)}})
	require.Equal(t, Pass, intact.Outcome, intact.Message)

	for _, tt := range []struct {
		name string
		end  func(pcommon.Timestamp) pcommon.Timestamp
		why  string
	}{
		{"end before start", func(s pcommon.Timestamp) pcommon.Timestamp { return s - 1_000_000 }, "ends before it starts"},
		{"no end", func(pcommon.Timestamp) pcommon.Timestamp { return 0 }, "has no end time"},
	} {
		t.Run(tt.name, func(t *testing.T) {
			td := readCapture(t, "strands-ok")
			setEnd(t, td, broken, tt.end)
			// triage is the swarm's first agent (the swarm itself is a wrapper, not an
			// agent): its subtree holds weather_specialist.
			for _, agent := range []string{"weather_specialist", "triage"} {
				r := budgetResult(t, td, StepConfig{Kind: &steps.BudgetStep{AgentName: agent, MaxDurationMs: limit(1000)}})
				require.Equal(t, Error, r.Outcome, r.Message)
				require.Contains(t, r.Message, "the duration is unknown because span "+broken+" "+tt.why)
				require.Contains(t, r.Actual, "duration unknown (span "+broken+" "+tt.why+")")
			}
			// triage's own span already took 13.79 ms: over a 10 ms budget whatever the
			// broken span did.
			r := budgetResult(t, td, StepConfig{Kind: &steps.BudgetStep{AgentName: "triage", MaxDurationMs: limit(10)}})
			require.Equal(t, Fail, r.Outcome, r.Message)
			require.Contains(t, r.Message, "took at least 13.79ms, over maxDurationMs 10 (span "+broken+" "+tt.why+")")
			// A budget without maxDurationMs is not affected.
			calls := 6
			r = budgetResult(t, td, StepConfig{Kind: &steps.BudgetStep{AgentName: "weather_specialist", MaxToolCalls: &calls}})
			require.Equal(t, Pass, r.Outcome, r.Message)
		})
	}
}

// TestMessagesBounded: verdicts on huge traces list the first items and count the rest.
func TestMessagesBounded(t *testing.T) {
	// The longest chain of a 10000-deep trace: steps' TestLongestChainBounded.
	t.Run("budget over 10000 runs", func(t *testing.T) {
		calls := 0
		r := budgetResult(t, agentgraphtest.RecursiveChain(10000), StepConfig{Kind: &steps.BudgetStep{AgentName: "researcher", MaxToolCalls: &calls}})
		require.Equal(t, Fail, r.Outcome)
		require.Less(t, len(r.Message), 2000, r.Message)
		require.True(t, strings.HasSuffix(r.Message, "… and 9990 more"), r.Message)
		require.Less(t, len(r.Actual), 2000, r.Actual)
		require.Contains(t, r.Actual, "… and 9990 more runs")
		require.Len(t, r.Spans, check.MaxListed)
	})
}
