package gate

import (
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/otelcol-handoff/otelcol-handoff/internal/rubric"
)

func scoreOf(from, to, axis string, s float64) Score {
	return Score{From: from, To: to, Axis: axis, Score: s}
}

func TestGates(t *testing.T) {
	gs, err := Compile(Config{
		Default: map[string]float64{rubric.Dispatch: 0.85, rubric.Scope: 0.90, rubric.Integration: 0.80, rubric.Recovery: 0.85},
		Pairs: []PairConfig{
			{From: "planner", To: "researcher", Thresholds: map[string]float64{rubric.Scope: 0.5}},
			{To: "critic", Thresholds: map[string]float64{rubric.Integration: 0.95}},
		},
		MinSamples: 2, Window: WindowConfig{Size: 3},
	})
	require.NoError(t, err)
	th, ok := gs.Threshold("planner", "researcher", rubric.Scope)
	require.True(t, ok)
	require.Equal(t, 0.5, th)
	th, _ = gs.Threshold("planner", "researcher", rubric.Dispatch)
	require.Equal(t, 0.85, th, "an axis the pair does not set falls back to the default")
	th, _ = gs.Threshold("writer", "critic", rubric.Integration)
	require.Equal(t, 0.95, th, "a pair by receiver type")
	require.Equal(t, "planner -> researcher", gs.bucket("planner", "researcher"))
	require.Equal(t, "* -> critic", gs.bucket("anyone", "critic"))
	require.Equal(t, defaultPair, gs.bucket("writer", "editor"))
	require.Equal(t, []string{"planner -> researcher", "* -> critic", "default"}, gs.Buckets())

	tally := NewTally()
	tally.Add([]Score{
		scoreOf("planner", "researcher", rubric.Scope, 1), scoreOf("planner", "researcher", rubric.Scope, 0),
		scoreOf("planner", "researcher", rubric.Recovery, 0), scoreOf("planner", "researcher", rubric.Recovery, 1),
		scoreOf("planner", "researcher", rubric.Recovery, 1),
		scoreOf("writer", "critic", rubric.Integration, 1),
	})
	gates := tally.Evaluate(gs)
	require.Len(t, gates, 3)
	require.Equal(t, "planner -> researcher ScopeFidelity: mean 0.50 over 2 handoffs, threshold 0.50", gates[0].String())
	require.Equal(t, Pass, gates[0].Status)
	require.Equal(t, "planner -> researcher RecoveryOnError: mean 0.67 over 3 handoffs is below the threshold 0.85", gates[1].String())
	require.Equal(t, Fail, gates[1].Status)
	require.Equal(t, Insufficient, gates[2].Status, "1 sample, min_samples 2")
	require.Equal(t, 1, Failed(gates))

	w := NewWindow(gs)
	now := time.Unix(1_700_000_000, 0)
	got := w.Add(now, []Score{scoreOf("planner", "researcher", rubric.Scope, 1), scoreOf("a", "b", rubric.Scope, 0)})
	require.Equal(t, []WindowScore{{Pair: "default", Axis: rubric.Scope, Score: 0, Samples: 1}, {Pair: "planner -> researcher", Axis: rubric.Scope, Score: 1, Samples: 1}}, got)
	for i := 0; i < 3; i++ {
		got = w.Add(now, []Score{scoreOf("c", "d", rubric.Scope, 1)})
	}
	require.Equal(t, []WindowScore{{Pair: "default", Axis: rubric.Scope, Score: 1, Samples: 3}}, got, "the window keeps the last 3")
}

func TestGateWindowDuration(t *testing.T) {
	gs, err := Compile(Config{MinSamples: 1, Window: WindowConfig{Size: 10, Duration: time.Minute}})
	require.NoError(t, err)
	w := NewWindow(gs)
	now := time.Unix(1_700_000_000, 0)
	w.Add(now, []Score{scoreOf("a", "b", rubric.Recovery, 0)})
	got := w.Add(now.Add(2*time.Minute), []Score{scoreOf("a", "b", rubric.Recovery, 1)})
	require.Equal(t, []WindowScore{{Pair: "default", Axis: rubric.Recovery, Score: 1, Samples: 1}}, got)
	require.Empty(t, w.Scores(now.Add(10*time.Minute)))
}

func TestGateConfigErrors(t *testing.T) {
	err := Config{
		Default:    map[string]float64{"Helpfulness": 0.5, rubric.Scope: 1.5},
		Pairs:      []PairConfig{{Thresholds: map[string]float64{}}, {From: "a", To: "b", Thresholds: map[string]float64{rubric.Scope: 1}}, {From: "a", To: "b", Thresholds: map[string]float64{rubric.Scope: 1}}},
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
		"gates.window.size: must be between 0 (= 100) and 1000000, got -1",
	} {
		require.ErrorContains(t, err, want)
	}
	require.NoError(t, DefaultConfig().Validate("gates"))
}

// TestGateStarIsWildcard: "*" on a side matches any agent, as an empty side does (and as
// Validate already took it: {from: "*", to: b} and {to: b} are the same pair).
func TestGateStarIsWildcard(t *testing.T) {
	cfg := Config{MinSamples: 1, Pairs: []PairConfig{
		{From: "*", To: "critic", Thresholds: map[string]float64{rubric.Integration: 0.95}},
		{From: "planner", To: "*", Thresholds: map[string]float64{rubric.Scope: 0.5}},
	}}
	gs, err := Compile(cfg)
	require.NoError(t, err)
	th, ok := gs.Threshold("writer", "critic", rubric.Integration)
	require.True(t, ok, "from * matches any sender")
	require.Equal(t, 0.95, th)
	th, ok = gs.Threshold("planner", "researcher", rubric.Scope)
	require.True(t, ok, "to * matches any receiver")
	require.Equal(t, 0.5, th)
	_, ok = gs.Threshold("*", "researcher", rubric.Scope)
	require.False(t, ok, "* is not an agent name")
	require.Equal(t, "* -> critic", gs.bucket("writer", "critic"))
	require.Equal(t, "planner -> *", gs.bucket("planner", "researcher"))
	require.Equal(t, []string{"* -> critic", "planner -> *", "default"}, gs.Buckets())
	require.Equal(t, "*", cfg.Pairs[0].From, "Compile leaves the caller's config as written")

	require.EqualError(t, Config{Pairs: []PairConfig{
		{From: "*", To: "b", Thresholds: map[string]float64{rubric.Scope: 0.5}},
		{To: "b", Thresholds: map[string]float64{rubric.Scope: 0.6}},
		{From: "*", To: "*", Thresholds: map[string]float64{rubric.Scope: 0.6}},
	}}.Validate("gates"), "gates.pairs[1]: duplicate pair * -> b\n"+
		`gates.pairs[2]: set from, to or both ("*" matches any agent; thresholds for every pair go under default)`)
}
