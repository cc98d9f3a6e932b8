package rules

import (
	"context"
	"os"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/require"
	"go.opentelemetry.io/collector/pdata/ptrace"

	"github.com/otelcol-handoff/otelcol-handoff/internal/agentgraph"
	tr "github.com/otelcol-handoff/otelcol-handoff/internal/rules/rulestest"
)

// TestEvaluateOutcomes: evaluated for the outcomes alone (EvaluateOutcomesTo, the exporter
// whose metrics are its only output), every result has the case, step, action, outcome,
// cluster and rubric fields it has with its texts (EvaluateDeferred), in the same order,
// and no signature. Rules that pass and rules that fail (testdata/outcomes.yaml) on every
// real capture of the repository; the seed-001 examples on their passing and failing
// traces.
func TestEvaluateOutcomes(t *testing.T) {
	var paths []string
	for _, glob := range []string{
		filepath.Join("..", "..", "testdata", "traces", "*.json"),
		filepath.Join("testdata", "captures", "*.json"),
		filepath.Join("..", "..", "testdata", "corpus", "*.json"),
	} {
		found, err := filepath.Glob(glob)
		require.NoError(t, err)
		require.NotEmpty(t, found, glob)
		paths = append(paths, found...)
	}
	spec := loadSpec(t, "outcomes.yaml")
	ev, err := Compile(spec.Cases, Options{})
	require.NoError(t, err)
	seen := map[Outcome]int{}
	for _, path := range paths {
		b, err := os.ReadFile(path)
		require.NoError(t, err)
		td, err := (&ptrace.JSONUnmarshaler{}).UnmarshalTraces(b)
		require.NoError(t, err, path)
		for _, g := range agentgraph.BuildAll(td, agentgraph.Options{}) {
			for _, o := range sameOutcomes(t, ev, g, path) {
				seen[o]++
			}
		}
	}
	// The rules decide both ways on the captures, and the budget of an agent that did not
	// run is skipped.
	require.NotZero(t, seen[Pass], "outcomes %v", seen)
	require.NotZero(t, seen[Fail], "outcomes %v", seen)
	require.NotZero(t, seen[Skipped], "outcomes %v", seen)

	seed := loadSpec(t, "seed001.yaml")
	for _, c := range seed.Cases {
		ev, err := Compile([]CaseConfig{c}, Options{})
		require.NoError(t, err, c.Name)
		for i, build := range []func(byte) *tr.Trace{tr.Seed001[c.Name].Pass, tr.Seed001[c.Name].Fail} {
			sameOutcomes(t, ev, build(byte(i+1)).Graph(), c.Name)
		}
	}
}

// sameOutcomes evaluates g both ways, requires the same verdicts and returns the outcomes.
func sameOutcomes(t *testing.T, ev *Evaluator, g *agentgraph.Graph, name string) []Outcome {
	t.Helper()
	ctx := context.Background()
	loud := ev.EvaluateDeferred(ctx, g, true)
	quiet := ev.EvaluateOutcomesTo(ctx, g, true, nil)
	require.Nil(t, loud.Grading, name)
	require.Nil(t, quiet.Grading, name)
	require.Len(t, quiet.Now, len(loud.Now), name)
	var out []Outcome
	for i, want := range loud.Now {
		got := quiet.Now[i]
		require.Empty(t, got.Signature, "%s: %s %s", name, got.Case, got.Step)
		// What the metrics and the gates read is all there is to compare.
		want.Expected, want.Actual, want.Message, want.Spans, want.Signature = "", "", "", nil, ""
		got.Expected, got.Actual, got.Message, got.Spans = "", "", "", nil
		require.Equal(t, want, got, "%s: %s %s", name, want.Case, want.Step)
		out = append(out, got.Outcome)
	}
	return out
}
