package rules

import (
	"fmt"
	"os"
	"testing"

	"github.com/stretchr/testify/require"
	"go.opentelemetry.io/collector/pdata/ptrace"

	"github.com/otelcol-handoff/otelcol-handoff/internal/agentgraph"
	"github.com/otelcol-handoff/otelcol-handoff/internal/rubric"
	tr "github.com/otelcol-handoff/otelcol-handoff/internal/rules/rulestest"
	"github.com/otelcol-handoff/otelcol-handoff/internal/rules/steps"
)

// rubricResults grades every handoff of g with EXPECT_HANDOFF_RUBRICS (no judge) and
// returns the results by "from->to/Axis".
func rubricResults(t *testing.T, g *agentgraph.Graph, step steps.RubricsStep, opts Options) map[string]Result {
	t.Helper()
	ev, err := Compile([]CaseConfig{{Name: "c", Steps: []StepConfig{{Kind: &steps.TopologyStep{AllowCycles: true}}, {Kind: &step}}}}, opts)
	require.NoError(t, err)
	out := map[string]Result{}
	for _, r := range ev.Evaluate(g, true) {
		if r.Action == ActionRubrics {
			key := r.From + "->" + r.To + "/" + r.Axis
			for n := 2; ; n++ { // later handoffs of the same pair: key#2, key#3...
				if _, dup := out[key]; !dup {
					break
				}
				key = fmt.Sprintf("%s->%s/%s#%d", r.From, r.To, r.Axis, n)
			}
			out[key] = r
		}
	}
	return out
}

func score(r Result) any {
	if r.Score == nil {
		return nil
	}
	return *r.Score
}

// planner hands a flight search to researcher as a tool (agent as tool); researcher may
// search, book, fail; planner then continues with an LLM call.
type flights struct {
	t                 *tr.Trace
	planner, research *tr.Span
	dispatch          *tr.Span
}

const task = `{"task": "find flights LHR to JFK on 2026-05-01 for order A-1001"}`

func newFlights(id byte) *flights {
	t := tr.New(id)
	f := &flights{t: t}
	f.planner = t.Agent(nil, "planner", 0, 100).Input("plan a trip for order A-1001")
	f.dispatch = t.Tool(f.planner, "researcher", task, 10, 60)
	f.research = t.Agent(f.dispatch, "researcher", 11, 59).
		Input("find flights LHR to JFK on 2026-05-01 for order A-1001").Tools("search_flights")
	return f
}

func (f *flights) search(start, end int) *tr.Span {
	return f.t.Tool(f.research, "search_flights", `{"from": "LHR", "to": "JFK", "date": "2026-05-01"}`, start, end)
}

func TestScopeFidelityToolOutsideScopeAndInventedContext(t *testing.T) {
	f := newFlights(0x31)
	f.search(12, 20).Result(`[{"flight": "BA117", "departs": "08:25"}]`)
	book := f.t.Tool(f.research, "book_flight", `{"flight": "BA117", "order": "A-9931"}`, 21, 30)
	f.research.Reply("BA117 departs 08:25")
	f.t.LLM(f.planner, "gpt-x", tr.UserMessages("plan a trip", "BA117 departs 08:25"), 61, 70)
	got := rubricResults(t, f.t.Graph(), steps.RubricsStep{}, Options{})

	r := got["planner->researcher/ScopeFidelity"]
	require.Equal(t, Fail, r.Outcome)
	require.Equal(t, 0.0, score(r))
	require.Equal(t, "EXPECT_HANDOFF_RUBRICS#2.ScopeFidelity", r.Step)
	require.Equal(t, "researcher called book_flight (span "+book.SpanID().String()+"), outside handoff.allowed_tools [search_flights]; "+
		`researcher used context planner never supplied: "A-9931" in book_flight (span `+book.SpanID().String()+
		`) (not in its input, the dispatch, or an earlier result)`, r.Message)
	require.Equal(t, "score 0: allowed tools fail, context supplied fail", r.Actual)
	require.Equal(t, []string{f.research.SpanID().String(), f.dispatch.SpanID().String()}, r.Spans)

	// The integration and the recovery of the same handoff.
	require.Equal(t, Pass, got["planner->researcher/ResultIntegration"].Outcome, got["planner->researcher/ResultIntegration"].Message)
	require.Equal(t, 1.0, score(got["planner->researcher/ResultIntegration"]))
	require.Equal(t, Skipped, got["planner->researcher/RecoveryOnError"].Outcome)
	require.Equal(t, "no error on the handoff planner -> researcher: nothing to recover from", got["planner->researcher/RecoveryOnError"].Message)
	d := got["planner->researcher/DispatchCorrectness"]
	require.Equal(t, Skipped, d.Outcome)
	require.Equal(t, "judge-graded rubric: no judge is configured, so DispatchCorrectness was not graded", d.Message)
	require.Nil(t, d.Score)
}

func TestScopeFidelityPasses(t *testing.T) {
	f := newFlights(0x32)
	f.search(12, 20).Result(`[{"flight": "BA117"}]`)
	f.t.Tool(f.research, "strands_structured_output", `{"message": "BA117 at 08:25, ref Z-4417"}`, 21, 22) // plumbing
	got := rubricResults(t, f.t.Graph(), steps.RubricsStep{Rubrics: []string{"SCOPE_FIDELITY"}}, Options{})
	require.Len(t, got, 1)
	r := got["planner->researcher/ScopeFidelity"]
	require.Equal(t, Pass, r.Outcome)
	require.Equal(t, 1.0, score(r))
	require.Equal(t, "researcher made 1 tool call, all in handoff.allowed_tools; every identifier in researcher's tool arguments was supplied; "+
		"the judge part was not graded: no judge is configured", r.Message)

	// ignoredTools: a tool the step declares plumbing is not held against the scope.
	f = newFlights(0x33)
	f.t.Tool(f.research, "log_progress", `{"step": 1}`, 12, 13)
	require.Equal(t, Fail, rubricResults(t, f.t.Graph(), steps.RubricsStep{Rubrics: []string{rubric.Scope}}, Options{})["planner->researcher/ScopeFidelity"].Outcome)
	require.Equal(t, Pass, rubricResults(t, f.t.Graph(), steps.RubricsStep{Rubrics: []string{rubric.Scope}, IgnoredTools: []string{"log_progress"}},
		Options{})["planner->researcher/ScopeFidelity"].Outcome)
}

func TestResultIntegrationIgnoredReturnValue(t *testing.T) {
	f := newFlights(0x34)
	f.search(12, 20).Result(`[{"flight": "BA117"}]`)
	f.research.Reply("BA117 departs 08:25 from terminal 5, the only nonstop with seats left")
	next := f.t.LLM(f.planner, "gpt-x", tr.UserMessages("plan a trip for order A-1001", "now search the flights yourself"), 61, 70)
	redo := f.t.Tool(f.planner, "search_flights", `{"date": "2026-05-01", "from": "LHR", "to": "JFK"}`, 71, 80)
	r := rubricResults(t, f.t.Graph(), steps.RubricsStep{Rubrics: []string{rubric.Integration}}, Options{})["planner->researcher/ResultIntegration"]
	require.Equal(t, Fail, r.Outcome)
	require.Equal(t, 0.0, score(r))
	require.Equal(t, "planner's next step (LLM call chat gpt-x (span "+next.SpanID().String()+")) does not carry researcher's return value (10% of its words); "+
		"planner repeated researcher's work after it returned: search_flights (span "+redo.SpanID().String()+") `{\"date\": \"2026-05-01\", \"from\": \"LHR\", \"to\": \"JFK\"}`",
		r.Message)

	// A one-way transfer: control never comes back to the sender, nothing to integrate.
	t2 := tr.New(0x35)
	triage := t2.Agent(nil, "triage", 0, 10)
	t2.Tool(triage, "transfer_to_billing", `{}`, 5, 6)
	t2.Agent(nil, "billing", 11, 20).Input("refund order A-1")
	r = rubricResults(t, t2.Graph(), steps.RubricsStep{Rubrics: []string{rubric.Integration}}, Options{})["triage->billing/ResultIntegration"]
	require.Equal(t, Skipped, r.Outcome)
	require.Equal(t, "triage took no further step after billing returned (a one-way transfer): no result to integrate", r.Message)
}

func TestRecoveryRetrySucceeds(t *testing.T) {
	f := newFlights(0x36)
	failed := f.search(12, 20).Error("TimeoutError", "upstream timed out after 10s")
	retry := f.search(21, 30).Result(`[{"flight": "BA117"}]`)
	r := rubricResults(t, f.t.Graph(), steps.RubricsStep{Rubrics: []string{rubric.Recovery}}, Options{})["planner->researcher/RecoveryOnError"]
	require.Equal(t, Pass, r.Outcome)
	require.Equal(t, 1.0, score(r))
	require.Equal(t, "search_flights (span "+failed.SpanID().String()+`) failed ("TimeoutError: upstream timed out after 10s"); researcher retried it (search_flights (span `+
		retry.SpanID().String()+")); the judge part was not graded: no judge is configured", r.Message)
}

func TestRecoveryRetryLoopOnNonTransientError(t *testing.T) {
	f := newFlights(0x37)
	f.search(12, 20).Error("ValueError", "unknown airport code")
	f.search(21, 30).Error("ValueError", "unknown airport code")
	r := rubricResults(t, f.t.Graph(), steps.RubricsStep{Rubrics: []string{rubric.Recovery}}, Options{})["planner->researcher/RecoveryOnError"]
	require.Equal(t, Fail, r.Outcome)
	require.Contains(t, r.Message, "researcher retried it with the same arguments")
	require.Contains(t, r.Message, "after a non-transient error: a retry loop on the same scope")
	require.Contains(t, r.Message, "the error was swallowed", "the last failure is handled by nobody")

	// The same loop on an error the step declares transient is a fine retry (the second
	// failure is still swallowed).
	rs := rubricResults(t, f.t.Graph(), steps.RubricsStep{Rubrics: []string{rubric.Recovery}, TransientErrors: []string{"unknown airport"}}, Options{})
	require.NotContains(t, rs["planner->researcher/RecoveryOnError"].Message, "retry loop")
}

func TestRecoveryReceiverFailure(t *testing.T) {
	for _, tt := range []struct {
		name    string
		build   func(f *flights)
		outcome Outcome
		message string
	}{
		{"swallowed: the sender carries on", func(f *flights) {
			f.t.LLM(f.planner, "gpt-x", tr.UserMessages("write the itinerary"), 61, 70)
		}, Fail, "planner did not retry, fall back, escalate or fail: the error was swallowed"},
		{"escalated: the sender fails", func(f *flights) {
			f.planner.Fail("could not find flights")
		}, Pass, "planner escalated: its run ended failed (error on the agent span (status))"},
		{"fallback: the same scope to another agent", func(f *flights) {
			via := f.t.Tool(f.planner, "backup_researcher", task, 61, 80)
			f.t.Agent(via, "backup_researcher", 62, 79)
		}, Pass, "planner fell back: gave the same scope to backup_researcher"},
		{"retry with a changed scope", func(f *flights) {
			via := f.t.Tool(f.planner, "researcher", `{"task": "find flights LHR to JFK, any date in May"}`, 61, 80)
			f.t.Agent(via, "researcher", 62, 79)
		}, Pass, "planner retried: dispatched researcher again"},
		{"retry loop: the same scope after a non-transient error", func(f *flights) {
			via := f.t.Tool(f.planner, "researcher", task, 61, 80)
			f.t.Agent(via, "researcher", 62, 79)
		}, Fail, "planner dispatched researcher again with the same scope"},
		{"recorded recovery", func(f *flights) {
			f.t.Other(f.planner, "notify on-call", 61, 62).Attr(agentgraph.AttrRecovery, "escalation")
		}, Pass, `planner recorded the recovery handoff.recovery="escalation"`},
	} {
		t.Run(tt.name, func(t *testing.T) {
			f := newFlights(0x38)
			f.research.Error("ValueError", "no route LHR-JFK")
			tt.build(f)
			got := rubricResults(t, f.t.Graph(), steps.RubricsStep{Rubrics: []string{rubric.Recovery}}, Options{})
			r := got["planner->researcher/RecoveryOnError"]
			require.Equal(t, tt.outcome, r.Outcome, r.Message)
			require.Contains(t, r.Message, `researcher (span `+f.research.SpanID().String()+`) failed ("ValueError: no route LHR-JFK")`)
			require.Contains(t, r.Message, tt.message)
		})
	}
}

// TestStrandsSwallowedToolError: the real Strands capture whose get_weather call fails on
// Atlantis; the specialist answers "unavailable" and nobody retries, falls back or fails.
func TestStrandsSwallowedToolError(t *testing.T) {
	b, err := os.ReadFile("../../testdata/traces/strands-tool-error.json")
	require.NoError(t, err)
	td, err := (&ptrace.JSONUnmarshaler{}).UnmarshalTraces(b)
	require.NoError(t, err)
	g := agentgraph.BuildAll(td, agentgraph.Options{})[0]
	got := rubricResults(t, g, steps.RubricsStep{FromAgent: "triage"}, Options{})
	require.Len(t, got, 4, "one handoff (triage -> weather_specialist), four rubrics")
	r := got["triage->weather_specialist/RecoveryOnError"]
	require.Equal(t, Fail, r.Outcome)
	require.Equal(t, 0.0, score(r))
	require.Equal(t, `get_weather (span 461375ab589be194) failed ("Error: weather service: unknown city Atlantis"); weather_specialist did not retry it, `+
		"fall back or fail, and triage did not retry, fall back, escalate or fail: the error was swallowed", r.Message)
	s := got["triage->weather_specialist/ScopeFidelity"]
	require.Equal(t, Pass, s.Outcome, "strands_structured_output is plumbing, get_weather is allowed")
	require.Equal(t, Skipped, got["triage->weather_specialist/ResultIntegration"].Outcome, "a swarm hand-off is one-way")
}

func TestRubricsStepIDsAndConfigErrors(t *testing.T) {
	ev, err := Compile([]CaseConfig{{Name: "c", Steps: []StepConfig{
		{Kind: &steps.TopologyStep{}},
		{Name: "seams", Kind: &steps.RubricsStep{Rubrics: []string{"recovery_on_error", "DispatchCorrectness"}}},
	}}}, Options{})
	require.NoError(t, err)
	require.Equal(t, map[string][]string{"c": {"ASSERT_AGENT_TOPOLOGY#1", "seams.DispatchCorrectness", "seams.RecoveryOnError"}}, ev.Cases())

	topo := StepConfig{Kind: &steps.TopologyStep{}}
	for _, tt := range []struct {
		step StepConfig
		want string
	}{
		{
			StepConfig{Kind: &steps.RubricsStep{Rubrics: []string{"Helpfulness"}}},
			`cases[0] (c).steps[1].rubrics[0]: unknown rubric "Helpfulness" (want one of DispatchCorrectness, ScopeFidelity, ResultIntegration, RecoveryOnError)`,
		},
		{StepConfig{Kind: &steps.RubricsStep{Rubrics: []string{"ScopeFidelity", "scope_fidelity"}}}, "cases[0] (c).steps[1].rubrics[1]: rubric ScopeFidelity is listed twice"},
		{StepConfig{Kind: &steps.RubricsStep{TransientErrors: []string{"("}}}, "cases[0] (c).steps[1].transientErrors[0]: error parsing regexp"},
		{stepFromKeys(map[string]any{"action": ActionRubrics, "inlineRubric": "x"}), "cases[0] (c).steps[1].inlineRubric: does not apply to EXPECT_HANDOFF_RUBRICS"},
		{stepFromKeys(map[string]any{"action": ActionDelegation, "agentName": "a", "rubrics": []any{rubric.Scope}}), "cases[0] (c).steps[1].rubrics: applies only to EXPECT_HANDOFF_RUBRICS"},
		{
			StepConfig{Kind: &steps.ContextStep{FromAgent: "a", ToAgent: "b", RubricType: "HELPFULNESS"}},
			`cases[0] (c).steps[1].rubricType: unknown rubric type "HELPFULNESS" (want one of GROUNDEDNESS, DispatchCorrectness, ScopeFidelity, ResultIntegration, RecoveryOnError)`,
		},
		{
			StepConfig{Kind: &steps.ContextStep{FromAgent: "a", ToAgent: "b", JudgeRubricID: "refund_payload"}},
			`cases[0] (c).steps[1].judgeRubricId: no rubric "refund_payload" is defined under rubrics: none is defined`,
		},
	} {
		_, err := Compile([]CaseConfig{{Name: "c", Steps: []StepConfig{topo, tt.step}}}, Options{})
		require.ErrorContains(t, err, tt.want)
	}
	_, err = Compile([]CaseConfig{{Name: "c", Steps: []StepConfig{{Kind: &steps.RubricsStep{}}}}}, Options{})
	require.ErrorContains(t, err, "EXPECT_HANDOFF_RUBRICS reads the DAG of an earlier ASSERT_AGENT_TOPOLOGY step")
}

func TestRubricsNoHandoff(t *testing.T) {
	tt := tr.New(0x39)
	tt.Agent(nil, "solo", 0, 10)
	ev, err := Compile([]CaseConfig{{Name: "c", Steps: []StepConfig{
		{Kind: &steps.TopologyStep{}},
		{Kind: &steps.RubricsStep{ToAgent: "researcher", Rubrics: []string{rubric.Scope}}},
	}}}, Options{})
	require.NoError(t, err)
	rs := ev.Evaluate(tt.Graph(), true)
	require.Len(t, rs, 2)
	require.Equal(t, Skipped, rs[1].Outcome)
	require.Equal(t, "no handoff any agent -> researcher in this trace: nothing to grade; agent researcher did not run; agents that ran: solo", rs[1].Message)
}
