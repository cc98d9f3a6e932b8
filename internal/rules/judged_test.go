package rules

import (
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/otelcol-handoff/otelcol-handoff/internal/judge"
	"github.com/otelcol-handoff/otelcol-handoff/internal/judge/judgetest"
	"github.com/otelcol-handoff/otelcol-handoff/internal/rubric"
	tr "github.com/otelcol-handoff/otelcol-handoff/internal/rules/rulestest"
	"github.com/otelcol-handoff/otelcol-handoff/internal/rules/steps"
)

func fakeJudge(t *testing.T, respond judgetest.Responder, tune ...func(*judge.Config)) (*judge.Client, *judgetest.Server) {
	t.Helper()
	srv := judgetest.New(t, respond)
	cfg := judge.DefaultConfig()
	cfg.Endpoint, cfg.Model = srv.URL, "fake-judge"
	cfg.Timeout, cfg.Retries, cfg.RetryBackoff = 200*time.Millisecond, 1, time.Millisecond
	for _, f := range tune {
		f(&cfg)
	}
	c, err := judge.New(cfg)
	require.NoError(t, err)
	return c, srv
}

// goodFlights: researcher stays in scope, planner reads its answer.
func goodFlights(id byte) *flights {
	f := newFlights(id)
	f.search(12, 20).Result(`[{"flight": "BA117"}]`)
	f.research.Reply("BA117 departs 08:25")
	f.t.LLM(f.planner, "gpt-x", tr.UserMessages("plan a trip", "BA117 departs 08:25"), 61, 70)
	return f
}

func rubricsOf(srv *judgetest.Server) []string {
	var out []string
	for _, r := range srv.Requests() {
		line, _, _ := strings.Cut(r.User(), "\n")
		out = append(out, strings.TrimPrefix(line, "Rubric: "))
	}
	return out
}

func TestRubricsJudged(t *testing.T) {
	c, srv := fakeJudge(t, judgetest.ByContent(judgetest.Pass, judgetest.Route{Contains: "Rubric: DispatchCorrectness", Fixture: judgetest.Fail}))
	got := rubricResults(t, goodFlights(0x41).t.Graph(), steps.RubricsStep{}, Options{Judge: c})

	s := got["planner->researcher/ScopeFidelity"]
	require.Equal(t, Pass, s.Outcome)
	require.Equal(t, 0.92, score(s), "deterministic parts passed: the judge's score")
	require.Equal(t, &JudgeVerdict{
		Model: "fake-judge", Template: "handoff_v1", Score: 0.92, Pass: true, Samples: 1,
		Reason: "The receiver stayed within the dispatched scope and used only the offered tools.",
	}, s.Judge)
	require.Equal(t, "judge: The receiver stayed within the dispatched scope and used only the offered tools. (score 0.92, pass); "+
		"deterministic checks passed: researcher made 1 tool call, all in handoff.allowed_tools; every identifier in researcher's tool arguments was supplied", s.Message)
	require.Equal(t, "score 0.92 (judge): allowed tools pass, context supplied pass", s.Actual)

	d := got["planner->researcher/DispatchCorrectness"]
	require.Equal(t, Fail, d.Outcome)
	require.Equal(t, 0.2, score(d))
	require.Equal(t, "judge: The handoff dropped the customer's constraint on the date range. (score 0.20, fail)", d.Message)

	require.Equal(t, Pass, got["planner->researcher/ResultIntegration"].Outcome)
	require.Equal(t, Skipped, got["planner->researcher/RecoveryOnError"].Outcome, "no error: the judge is not asked")
	require.ElementsMatch(t, []string{rubric.Dispatch, rubric.Scope, rubric.Integration}, rubricsOf(srv))

	// What the judge read for ScopeFidelity.
	for _, r := range srv.Requests() {
		if strings.HasPrefix(r.User(), "Rubric: ScopeFidelity") {
			require.Contains(t, r.User(), rubric.Builtin[rubric.Scope])
			require.Contains(t, r.User(), "<scope_prompt>\nfind flights LHR to JFK on 2026-05-01 for order A-1001\n</scope_prompt>")
			require.Contains(t, r.User(), "<allowed_tools>\nsearch_flights\n</allowed_tools>")
			require.Contains(t, r.User(), "<receiver_trace>\ntool search_flights args {\"from\": \"LHR\", \"to\": \"JFK\", \"date\": \"2026-05-01\"} -> [{\"flight\": \"BA117\"}]\noutput: BA117 departs 08:25\n</receiver_trace>")
		}
	}
}

// TestDeterministicFailureCapsAtZero: a failing deterministic part decides the rubric; the
// judge is not asked.
func TestDeterministicFailureCapsAtZero(t *testing.T) {
	c, srv := fakeJudge(t, judgetest.Always(judgetest.Pass))
	f := goodFlights(0x42)
	f.t.Tool(f.research, "book_flight", `{"flight": "BA117"}`, 31, 32)
	got := rubricResults(t, f.t.Graph(), steps.RubricsStep{Rubrics: []string{rubric.Scope}}, Options{Judge: c})
	r := got["planner->researcher/ScopeFidelity"]
	require.Equal(t, Fail, r.Outcome)
	require.Equal(t, 0.0, score(r))
	require.Nil(t, r.Judge)
	require.Zero(t, srv.Count())
}

// TestJudgeErrors: malformed, off-schema, 429 after the retries and timeouts end the
// rubric in error with the judge's message (no score); a spent budget skips it.
func TestJudgeErrors(t *testing.T) {
	for _, tt := range []struct {
		fixture string
		tune    func(*judge.Config)
		outcome Outcome
		message string
	}{
		{judgetest.Malformed, nil, Error, "judge error: judge answered off-schema: the answer is not a JSON object"},
		{judgetest.OffSchema, nil, Error, `judge error: judge answered off-schema: unexpected field "verdict"`},
		{judgetest.RateLimited, nil, Error, "judge error: judge rate-limited the request (HTTP 429) (2 attempts)"},
		{judgetest.Timeout, func(c *judge.Config) { c.Timeout = 50 * time.Millisecond }, Error, "judge error: judge request timed out after 50ms (2 attempts)"},
		{
			judgetest.Timeout, func(c *judge.Config) { c.Timeout, c.TraceTimeout = time.Minute, 50*time.Millisecond }, Error,
			"judge error: no answer within the trace's time for judging (judge.trace_timeout)",
		},
		{judgetest.Pass, func(c *judge.Config) { c.MaxCalls = 1 }, Skipped, "not graded: judge call budget exhausted (max_calls 1)"},
	} {
		t.Run(tt.fixture, func(t *testing.T) {
			tune := []func(*judge.Config){func(c *judge.Config) { c.Concurrency = 1 }}
			if tt.tune != nil {
				tune = append(tune, tt.tune)
			}
			c, _ := fakeJudge(t, judgetest.Always(tt.fixture), tune...)
			got := rubricResults(t, goodFlights(0x43).t.Graph(), steps.RubricsStep{Rubrics: []string{rubric.Dispatch, rubric.Scope}}, Options{Judge: c})
			r := got["planner->researcher/ScopeFidelity"]
			require.Equal(t, tt.outcome, r.Outcome, r.Message)
			require.Contains(t, r.Message, tt.message)
			require.Nil(t, r.Score)
			if tt.outcome == Error {
				require.Contains(t, r.Message, "; deterministic checks passed: researcher made 1 tool call")
			}
		})
	}
}

func TestNamedRubricReplacesBuiltin(t *testing.T) {
	c, srv := fakeJudge(t, judgetest.Always(judgetest.Pass))
	_ = rubricResults(t, goodFlights(0x44).t.Graph(), steps.RubricsStep{Rubrics: []string{rubric.Dispatch}},
		Options{Judge: c, Rubrics: map[string]string{rubric.Dispatch: "Penalise over-dispatch: the researcher is expensive."}})
	require.Equal(t, 1, srv.Count())
	require.Contains(t, srv.Requests()[0].User(), "Rubric: DispatchCorrectness\nPenalise over-dispatch: the researcher is expensive.\n")
}

// TestHandoffContextJudged: EXPECT_HANDOFF_CONTEXT graded against the receiving span's
// input: rubricType + inlineRubric, judgeRubricId, and content capture disabled.
func TestHandoffContextJudged(t *testing.T) {
	c, srv := fakeJudge(t, judgetest.ByContent(judgetest.Pass, judgetest.Route{Contains: "must not include", Fixture: judgetest.Fail}))
	named := map[string]string{"refund_payload": "The payload carries the order id."}
	eval := func(step steps.ContextStep, g func() *flights) Result {
		step.FromAgent, step.ToAgent = "planner", "researcher"
		ev, err := Compile([]CaseConfig{{Name: "c", Steps: []StepConfig{{Kind: &steps.TopologyStep{}}, {Kind: &step}}}}, Options{Judge: c, Rubrics: named})
		require.NoError(t, err)
		rs := ev.Evaluate(g().t.Graph(), true)
		require.Len(t, rs, 2)
		return rs[1]
	}
	good := func() *flights { return goodFlights(0x45) }

	r := eval(steps.ContextStep{RubricType: "GROUNDEDNESS", InlineRubric: "The payload includes the order id."}, good)
	require.Equal(t, Pass, r.Outcome, r.Message)
	require.Equal(t, "judge: handoff planner -> researcher (span 0000000000004503): The receiver stayed within the dispatched scope and used only the offered tools. (score 0.92)", r.Message)
	require.Equal(t, 0.92, score(r))
	user := srv.Requests()[srv.Count()-1].User()
	require.Contains(t, user, "Rubric: GROUNDEDNESS\n"+rubric.Builtin[rubric.Groundedness]+"\nCriteria: The payload includes the order id.")
	require.Contains(t, user, "<scope_prompt>\nfind flights LHR to JFK on 2026-05-01 for order A-1001\n</scope_prompt>")
	require.Contains(t, user, "<dispatch_call>\n"+task+"\n</dispatch_call>")

	r = eval(steps.ContextStep{RubricType: "GROUNDEDNESS", InlineRubric: "It must not include card numbers.", RequiredPatterns: []string{"A-\\d+"}}, good)
	require.Equal(t, Fail, r.Outcome)
	require.Equal(t, "deterministic checks passed; judge: handoff planner -> researcher (span 0000000000004503): The handoff dropped the customer's constraint on the date range. (score 0.20)", r.Message)

	r = eval(steps.ContextStep{JudgeRubricID: "refund_payload"}, good)
	require.Equal(t, Pass, r.Outcome)
	require.Contains(t, srv.Requests()[srv.Count()-1].User(), "Rubric: refund_payload\nCriteria: The payload carries the order id.")

	r = eval(steps.ContextStep{RubricType: "ScopeFidelity"}, good)
	require.Equal(t, Pass, r.Outcome)
	require.Contains(t, srv.Requests()[srv.Count()-1].User(), "Rubric: ScopeFidelity\n"+rubric.Builtin[rubric.Scope])

	before := srv.Count()
	r = eval(steps.ContextStep{RubricType: "GROUNDEDNESS", InlineRubric: "x"}, func() *flights {
		f := goodFlights(0x46)
		f.research.Attributes().Remove("input.value")
		return f
	})
	require.Equal(t, Fail, r.Outcome)
	require.Contains(t, r.Message, "content capture disabled on the exporter: the receiving researcher span 0000000000004603 has none of")
	require.Equal(t, before, srv.Count(), "nothing to grade, nothing sent")
}

// TestJudgedResultsKeepOrder: gradings run in parallel; results come out in evaluation
// order whatever the order of the answers.
func TestJudgedResultsKeepOrder(t *testing.T) {
	c, _ := fakeJudge(t, func(req judgetest.Request, n int) judgetest.Reply {
		r := judgetest.Fixture(judgetest.Pass)
		if strings.Contains(req.User(), "Rubric: DispatchCorrectness") {
			r.Delay = 30 * time.Millisecond
		}
		return r
	}, func(c *judge.Config) { c.Concurrency = 4 })
	ev, err := Compile([]CaseConfig{{Name: "c", Steps: []StepConfig{{Kind: &steps.TopologyStep{}}, {Kind: &steps.RubricsStep{}}}}}, Options{Judge: c})
	require.NoError(t, err)
	var steps []string
	for _, r := range ev.Evaluate(goodFlights(0x47).t.Graph(), true) {
		steps = append(steps, r.Step)
	}
	require.Equal(t, []string{
		"ASSERT_AGENT_TOPOLOGY#1", "EXPECT_HANDOFF_RUBRICS#2.DispatchCorrectness", "EXPECT_HANDOFF_RUBRICS#2.ScopeFidelity",
		"EXPECT_HANDOFF_RUBRICS#2.ResultIntegration", "EXPECT_HANDOFF_RUBRICS#2.RecoveryOnError",
	}, steps)
}
