package rules

import (
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/otelcol-handoff/otelcol-handoff/internal/gate"
	"github.com/otelcol-handoff/otelcol-handoff/internal/rubric"
	"github.com/otelcol-handoff/otelcol-handoff/internal/rules/steps"
)

// TestScores: only rubric results with a score and a sender feed the gates.
func TestScores(t *testing.T) {
	s := 0.5
	require.Equal(t, []gate.Score{{From: "planner", To: "researcher", Axis: rubric.Scope, Score: 0.5}}, Scores([]Result{
		{From: "planner", To: "researcher", Axis: rubric.Scope, Score: &s, Outcome: Pass},
		{From: "planner", To: "researcher", Axis: rubric.Dispatch, Outcome: Skipped}, // no score: not counted
		{Step: "EXPECT_DELEGATION_TO#2", Outcome: Pass},
	}))
}

// TestGatedResults: a rubric result whose axis has a threshold for its pair is marked
// gated (its pass/fail alone does not fail a run).
func TestGatedResults(t *testing.T) {
	gs, err := gate.Compile(gate.Config{
		MinSamples: 1, Window: gate.WindowConfig{Size: 1},
		Pairs: []gate.PairConfig{{From: "planner", Thresholds: map[string]float64{rubric.Scope: 0.9}}},
	})
	require.NoError(t, err)
	got := rubricResults(t, goodFlights(0x48).t.Graph(), steps.RubricsStep{Rubrics: []string{rubric.Scope, rubric.Integration}}, Options{Gates: gs})
	require.True(t, got["planner->researcher/ScopeFidelity"].Gated)
	require.False(t, got["planner->researcher/ResultIntegration"].Gated)
}
