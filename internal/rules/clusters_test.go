package rules

import (
	"strings"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/otelcol-handoff/otelcol-handoff/internal/cluster"
	"github.com/otelcol-handoff/otelcol-handoff/internal/judge/judgetest"
	"github.com/otelcol-handoff/otelcol-handoff/internal/rubric"
	"github.com/otelcol-handoff/otelcol-handoff/internal/rules/steps"
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
		r := rubricResults(t, goodFlights(byte(0x41+i)).t.Graph(), steps.RubricsStep{Rubrics: []string{rubric.Dispatch, rubric.Scope}}, Options{Judge: c})
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
