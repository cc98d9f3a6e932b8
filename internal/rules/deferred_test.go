package rules

import (
	"context"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/otelcol-handoff/otelcol-handoff/internal/judge"
	"github.com/otelcol-handoff/otelcol-handoff/internal/judge/judgetest"
	"github.com/otelcol-handoff/otelcol-handoff/internal/rules/expect"
	"github.com/otelcol-handoff/otelcol-handoff/internal/rules/steps"
)

// TestEvaluateDeferred: the deterministic results come at once and no judge call is made;
// Run then returns every result in config order, the same as evaluateContext.
func TestEvaluateDeferred(t *testing.T) {
	c, srv := fakeJudge(t, judgetest.Always(judgetest.Pass))
	cases := []CaseConfig{{Name: "c", Steps: []StepConfig{{Kind: &steps.TopologyStep{AllowCycles: true}}, {Kind: &steps.RubricsStep{}}}}}
	ev, err := Compile(cases, Options{Judge: c})
	require.NoError(t, err)
	g := goodFlights(0x42).t.Graph()

	e := ev.EvaluateDeferred(context.Background(), g, true)
	require.Zero(t, srv.Count(), "no judge call while evaluating")
	require.NotNil(t, e.Grading)
	require.False(t, e.TimedOut)
	require.Equal(t, ActionTopology, e.Now[0].Action)
	all, graded := e.Grading.Run(context.Background())
	require.Len(t, graded, e.Grading.Len())
	require.Len(t, all, len(e.Now)+len(graded))
	require.Positive(t, srv.Count())
	want := ev.evaluateContext(context.Background(), g, true) // the same answers, cached
	require.Equal(t, want, all)
}

// TestGradingFail: Fail decides the pending results as errors naming the reason; the
// deterministic ones are untouched.
func TestGradingFail(t *testing.T) {
	c, srv := fakeJudge(t, judgetest.Always(judgetest.Pass))
	cases := []CaseConfig{{Name: "c", Steps: []StepConfig{{Kind: &steps.TopologyStep{AllowCycles: true}}, {Kind: &steps.RubricsStep{}}}}}
	ev, err := Compile(cases, Options{Judge: c})
	require.NoError(t, err)
	e := ev.EvaluateDeferred(context.Background(), goodFlights(0x43).t.Graph(), true)
	all, graded := e.Grading.Fail(judge.ErrShutDown)
	require.Zero(t, srv.Count())
	require.Equal(t, e.Now[0], all[0])
	for _, r := range graded {
		require.Equal(t, Error, r.Outcome)
		require.Equal(t, "shut down before grading", r.Message)
		require.Nil(t, r.Score)
	}
	// A context canceled for shutdown sends nothing either.
	ctx, cancel := context.WithCancelCause(context.Background())
	cancel(judge.ErrShutDown)
	e = ev.EvaluateDeferred(context.Background(), goodFlights(0x44).t.Graph(), true)
	_, graded = e.Grading.Run(ctx)
	require.Zero(t, srv.Count())
	require.Equal(t, "shut down before grading", graded[0].Message)
}

// TestEvalTimeoutSeedExpression: a seed-001 expression in a long comprehension is
// interrupted at eval_timeout, and the result says so.
func TestEvalTimeoutSeedExpression(t *testing.T) {
	list := make([]string, 100)
	for i := range list {
		list[i] = fmt.Sprint(i)
	}
	l := "[" + strings.Join(list, ",") + "]"
	slow := fmt.Sprintf(`%s.all(a, %s.all(b, %s.all(c, a + b + c >= 0))) && status == "completed"`, l, l, l)
	cases := []CaseConfig{{Name: "c", TestFields: TestFields{AgentExpectations: expect.AgentExpectations{ExpectedResult: expect.ExpectedResult(slow)}}}}
	ev, err := Compile(cases, Options{CostLimit: MaxCostLimit, EvalTimeout: 5 * time.Millisecond})
	require.NoError(t, err)
	e := ev.EvaluateDeferred(context.Background(), goodFlights(0x45).t.Graph(), true)
	require.True(t, e.TimedOut)
	require.Len(t, e.Now, 1)
	require.Equal(t, Error, e.Now[0].Outcome)
	require.Contains(t, e.Now[0].Message, "evaluation exceeded eval_timeout (5ms)")
}
