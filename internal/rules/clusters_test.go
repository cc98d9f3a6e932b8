package rules

import (
	"strings"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/otelcol-handoff/otelcol-handoff/internal/cluster"
	"github.com/otelcol-handoff/otelcol-handoff/internal/judge/judgetest"
)

// TestJudgedFailureCluster: a rubric the judge fails takes its rubric's cluster, and signs
// with what was expected rather than the judge's free-text reason: two traces whose gradings
// give other reasons for the same failure have one signature.
func TestJudgedFailureCluster(t *testing.T) {
	var got []Result
	for i, reason := range []string{"The planner should have answered inline.", "Dispatching was not needed for a one-line answer."} {
		c, _ := fakeJudge(t, func(req judgetest.Request, _ int) judgetest.Reply {
			if strings.Contains(req.User(), "Rubric: DispatchCorrectness") {
				return judgetest.Verdict(0.2, false, reason)
			}
			return judgetest.Verdict(0.9, true, "fine")
		})
		r := rubricResults(t, goodFlights(byte(0x41+i)).t.Graph(), StepConfig{Rubrics: []string{AxisDispatch, AxisScope}}, Options{Judge: c})
		got = append(got, r["planner->researcher/DispatchCorrectness"])
		require.Equal(t, Pass, r["planner->researcher/ScopeFidelity"].Outcome)
		require.Empty(t, r["planner->researcher/ScopeFidelity"].Cluster, "only a failure has a cluster")
		require.Empty(t, r["planner->researcher/ScopeFidelity"].Signature)
	}
	require.NotEqual(t, got[0].Message, got[1].Message, "the judge gave other reasons")
	for _, r := range got {
		require.Equal(t, Fail, r.Outcome)
		require.Equal(t, cluster.WrongDispatch, r.Cluster)
	}
	require.Equal(t, got[0].Signature, got[1].Signature)
}

// TestRubricPartClusters: a failed deterministic part names its own cluster when it has
// one (ScopeFidelity's context part: dropped_constraint), else the rubric's (its allowed
// tools part: scope_bleed).
func TestRubricPartClusters(t *testing.T) {
	failed := func(name string) part { return part{name: name, state: partFail} }
	ctx := failed("context supplied")
	ctx.cluster = cluster.DroppedConstraint
	require.Equal(t, cluster.ScopeBleed, rubricCluster(AxisScope, []part{{name: "allowed tools", state: partPass}, failed("allowed tools")}))
	require.Equal(t, cluster.DroppedConstraint, rubricCluster(AxisScope, []part{{name: "allowed tools", state: partPass}, ctx}))
	require.Equal(t, cluster.IntegrationSkip, rubricCluster(AxisIntegration, []part{failed("return value read")}))
	require.Equal(t, cluster.RecoveryBlind, rubricCluster(AxisRecovery, nil))
	require.Equal(t, cluster.WrongDispatch, rubricCluster(AxisDispatch, nil))
	require.Equal(t, cluster.Other, rubricCluster("bogus", nil))
}
