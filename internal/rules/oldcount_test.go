package rules

import (
	"os"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/require"
	"go.opentelemetry.io/collector/pdata/ptrace"

	"github.com/otelcol-handoff/otelcol-handoff/internal/agentgraph"
	"github.com/otelcol-handoff/otelcol-handoff/internal/rubric"
	"github.com/otelcol-handoff/otelcol-handoff/internal/rules/steps"
)

// TestRubricsDoNotDependOnTheCounting: the handoff rubrics judge the receiver's own tool
// calls (agentgraph's OwnToolCalls), so on every real capture their deterministic results
// are the same under the default counting and under count_delegation_calls_as_tool_calls,
// which puts the delegation calls among the tool calls.
func TestRubricsDoNotDependOnTheCounting(t *testing.T) {
	files, err := filepath.Glob(filepath.Join("..", "..", "testdata", "traces", "*.json"))
	require.NoError(t, err)
	require.NotEmpty(t, files)
	graded, counted := 0, 0
	for _, file := range files {
		b, err := os.ReadFile(file)
		require.NoError(t, err)
		td, err := (&ptrace.JSONUnmarshaler{}).UnmarshalTraces(b)
		require.NoError(t, err)
		def := agentgraph.BuildAll(td, agentgraph.Options{})
		old := agentgraph.BuildAll(td, agentgraph.Options{CountDelegationCallsAsToolCalls: true})
		require.Len(t, old, len(def), file)
		for i := range def {
			for _, inv := range old[i].Invocations {
				counted += len(inv.DelegationCalls)
			}
			want := rubricResults(t, def[i], steps.RubricsStep{}, Options{})
			got := rubricResults(t, old[i], steps.RubricsStep{}, Options{})
			require.Equal(t, want, got, filepath.Base(file))
			graded += len(want)
		}
	}
	require.Greater(t, counted, 10, "the corpus has delegation calls to count")
	require.Greater(t, graded, 20, "and handoffs to grade")
}

// TestScopeFidelityOwnCallsUnderTheOldCounting: a receiver that runs another agent as a tool
// made a delegation call, not a call outside its allowed tools, under either counting
// (under the old one the call is among its ToolCalls, and the rubric leaves it out).
func TestScopeFidelityOwnCallsUnderTheOldCounting(t *testing.T) {
	f := newFlights(0x3c)
	f.search(12, 20).Result(`[{"flight": "BA117"}]`)
	dispatch := f.t.Tool(f.research, "booker", `{"flight": "BA117", "order": "A-1001"}`, 21, 40)
	f.t.Agent(dispatch, "booker", 22, 39).Input(`{"flight": "BA117", "order": "A-1001"}`).Reply("booked")
	f.research.Reply("BA117 booked")
	for _, counted := range []bool{false, true} {
		g := agentgraph.BuildAll(f.t.Traces(), agentgraph.Options{CountDelegationCallsAsToolCalls: counted})[0]
		var research *agentgraph.Invocation
		for _, inv := range g.Invocations {
			if inv.Name == "researcher" {
				research = inv
			}
		}
		require.NotNil(t, research)
		want := 1
		if counted {
			want = 2
		}
		require.Len(t, research.ToolCalls, want, "counted=%v", counted)
		require.Len(t, research.OwnToolCalls(), 1)
		r := rubricResults(t, g, steps.RubricsStep{Rubrics: []string{rubric.Scope}}, Options{})["planner->researcher/ScopeFidelity"]
		require.Equal(t, Pass, r.Outcome, "counted=%v: %s", counted, r.Message)
		require.Equal(t, "researcher made 1 tool call, all in handoff.allowed_tools; every identifier in researcher's tool arguments was supplied; "+
			"the judge part was not graded: no judge is configured", r.Message)
	}
}
