package rules

import (
	"testing"
	"time"

	"github.com/stretchr/testify/require"
)

func scoredResult(from, to, axis string, s float64) Result {
	return Result{From: from, To: to, Axis: axis, Score: &s, Outcome: Pass}
}

func TestGates(t *testing.T) {
	gs, err := CompileGates(GateConfig{
		Default: map[string]float64{AxisDispatch: 0.85, AxisScope: 0.90, AxisIntegration: 0.80, AxisRecovery: 0.85},
		Pairs: []PairGateConfig{
			{From: "planner", To: "researcher", Thresholds: map[string]float64{AxisScope: 0.5}},
			{To: "critic", Thresholds: map[string]float64{AxisIntegration: 0.95}},
		},
		MinSamples: 2, Window: WindowConfig{Size: 3},
	})
	require.NoError(t, err)
	th, ok := gs.Threshold("planner", "researcher", AxisScope)
	require.True(t, ok)
	require.Equal(t, 0.5, th)
	th, _ = gs.Threshold("planner", "researcher", AxisDispatch)
	require.Equal(t, 0.85, th, "an axis the pair does not set falls back to the default")
	th, _ = gs.Threshold("writer", "critic", AxisIntegration)
	require.Equal(t, 0.95, th, "a pair by receiver type")
	require.Equal(t, "planner -> researcher", gs.Bucket("planner", "researcher"))
	require.Equal(t, "* -> critic", gs.Bucket("anyone", "critic"))
	require.Equal(t, DefaultPair, gs.Bucket("writer", "editor"))
	require.Equal(t, []string{"planner -> researcher", "* -> critic", "default"}, gs.Buckets())

	tally := NewGateTally()
	tally.Add([]Result{
		scoredResult("planner", "researcher", AxisScope, 1), scoredResult("planner", "researcher", AxisScope, 0),
		scoredResult("planner", "researcher", AxisRecovery, 0), scoredResult("planner", "researcher", AxisRecovery, 1),
		scoredResult("planner", "researcher", AxisRecovery, 1),
		scoredResult("writer", "critic", AxisIntegration, 1),
		{From: "planner", To: "researcher", Axis: AxisDispatch, Outcome: Skipped}, // no score: not counted
	})
	gates := tally.Evaluate(gs)
	require.Len(t, gates, 3)
	require.Equal(t, "planner -> researcher ScopeFidelity: mean 0.50 over 2 handoffs, threshold 0.50", gates[0].String())
	require.Equal(t, GatePass, gates[0].Status)
	require.Equal(t, "planner -> researcher RecoveryOnError: mean 0.67 over 3 handoffs is below the threshold 0.85", gates[1].String())
	require.Equal(t, GateFail, gates[1].Status)
	require.Equal(t, GateInsufficient, gates[2].Status, "1 sample, min_samples 2")
	require.Equal(t, 1, GatesFailed(gates))

	w := NewGateWindow(gs)
	now := time.Unix(1_700_000_000, 0)
	got := w.Add(now, []Result{scoredResult("planner", "researcher", AxisScope, 1), scoredResult("a", "b", AxisScope, 0)})
	require.Equal(t, []WindowScore{{Pair: "default", Axis: AxisScope, Score: 0, Samples: 1}, {Pair: "planner -> researcher", Axis: AxisScope, Score: 1, Samples: 1}}, got)
	for i := 0; i < 3; i++ {
		got = w.Add(now, []Result{scoredResult("c", "d", AxisScope, 1)})
	}
	require.Equal(t, []WindowScore{{Pair: "default", Axis: AxisScope, Score: 1, Samples: 3}}, got, "the window keeps the last 3")
}

func TestGateWindowDuration(t *testing.T) {
	gs, err := CompileGates(GateConfig{MinSamples: 1, Window: WindowConfig{Size: 10, Duration: time.Minute}})
	require.NoError(t, err)
	w := NewGateWindow(gs)
	now := time.Unix(1_700_000_000, 0)
	w.Add(now, []Result{scoredResult("a", "b", AxisRecovery, 0)})
	got := w.Add(now.Add(2*time.Minute), []Result{scoredResult("a", "b", AxisRecovery, 1)})
	require.Equal(t, []WindowScore{{Pair: "default", Axis: AxisRecovery, Score: 1, Samples: 1}}, got)
	require.Empty(t, w.Scores(now.Add(10*time.Minute)))
}

func TestGateConfigErrors(t *testing.T) {
	err := GateConfig{
		Default:    map[string]float64{"Helpfulness": 0.5, AxisScope: 1.5},
		Pairs:      []PairGateConfig{{Thresholds: map[string]float64{}}, {From: "a", To: "b", Thresholds: map[string]float64{AxisScope: 1}}, {From: "a", To: "b", Thresholds: map[string]float64{AxisScope: 1}}},
		MinSamples: -1,
		Window:     WindowConfig{Size: -1},
	}.Validate("gates")
	for _, want := range []string{
		"gates.default.Helpfulness: unknown axis (want one of DispatchCorrectness, ScopeFidelity, ResultIntegration, RecoveryOnError)",
		"gates.default.ScopeFidelity: threshold must be between 0 and 1, got 1.5",
		"gates.pairs[0]: set from, to or both",
		"gates.pairs[0].thresholds: set at least one axis",
		"gates.pairs[2]: duplicate pair a -> b",
		"gates.min_samples: must not be negative, got -1",
		"gates.window.size: must be between 1 and 1000000, got -1",
	} {
		require.ErrorContains(t, err, want)
	}
	require.NoError(t, DefaultGateConfig().Validate("gates"))
}

// TestGatedResults: a rubric result whose axis has a threshold for its pair is marked
// gated (its pass/fail alone does not fail a run).
func TestGatedResults(t *testing.T) {
	gs, err := CompileGates(GateConfig{
		MinSamples: 1, Window: WindowConfig{Size: 1},
		Pairs: []PairGateConfig{{From: "planner", Thresholds: map[string]float64{AxisScope: 0.9}}},
	})
	require.NoError(t, err)
	got := rubricResults(t, goodFlights(0x48).t.Graph(), RubricsStep{Rubrics: []string{AxisScope, AxisIntegration}}, Options{Gates: gs})
	require.True(t, got["planner->researcher/ScopeFidelity"].Gated)
	require.False(t, got["planner->researcher/ResultIntegration"].Gated)
}
