package rules

import (
	"context"
	"encoding/binary"
	"strconv"
	"testing"

	"github.com/stretchr/testify/require"
	"go.opentelemetry.io/collector/pdata/pcommon"
	"go.opentelemetry.io/collector/pdata/ptrace"

	"github.com/otelcol-handoff/otelcol-handoff/internal/agentgraph"
	"github.com/otelcol-handoff/otelcol-handoff/internal/judge"
	"github.com/otelcol-handoff/otelcol-handoff/internal/rubric"
	"github.com/otelcol-handoff/otelcol-handoff/internal/rules/check"
	tr "github.com/otelcol-handoff/otelcol-handoff/internal/rules/rulestest"
	"github.com/otelcol-handoff/otelcol-handoff/internal/rules/steps"
)

// The deterministic rubric parts on real-framework traces (testdata/captures/SOURCES.md):
// no false verdict on a fan-out, a hand-back, a date, a year or an id inside a span id.

func captureGraph(t *testing.T, path string) *agentgraph.Graph { return tr.FileGraph(t, path) }

const noJudge = "; the judge part was not graded: no judge is configured"

// TestResultIntegrationADKFanOut: Google ADK runs the three AgentTool calls of one model
// response one after the other. They are one step: triage's next step is the call_llm after
// all three returned, which carries each return value. Before, the next step of the first
// two was the next AgentTool call, and they failed.
func TestResultIntegrationADKFanOut(t *testing.T) {
	got := rubricResults(t, captureGraph(t, "testdata/captures/adk-fanout-ok.json"),
		steps.RubricsStep{FromAgent: "triage", Rubrics: []string{rubric.Integration}}, Options{})
	require.Len(t, got, 3)
	for _, to := range []string{"weather_specialist", "time_specialist", "currency_specialist"} {
		r := got["triage->"+to+"/ResultIntegration"]
		require.Equal(t, Pass, r.Outcome, r.Message)
		require.Equal(t, 1.0, score(r))
		require.Equal(t, "triage's next step (LLM call call_llm (span 2c0bc515900b7814), the first after all 3 dispatches of its model response returned) "+
			"carries "+to+"'s return value; triage did not redo "+to+"'s work"+noJudge, r.Message)
	}

	// The same fan-out, with triage's before-model callback dropping the currency result from
	// the request: that handoff fails, the two others still pass.
	got = rubricResults(t, captureGraph(t, "testdata/captures/adk-fanout-dropped.json"),
		steps.RubricsStep{FromAgent: "triage", Rubrics: []string{rubric.Integration}}, Options{})
	require.Len(t, got, 3)
	r := got["triage->currency_specialist/ResultIntegration"]
	require.Equal(t, Fail, r.Outcome)
	require.Equal(t, 0.0, score(r))
	require.Equal(t, "triage's next step (LLM call call_llm (span 78b0b7be65532517), the first after all 3 dispatches of its model response returned) "+
		"does not carry currency_specialist's return value (17% of its words)", r.Message)
	require.Equal(t, Pass, got["triage->weather_specialist/ResultIntegration"].Outcome)
	require.Equal(t, Pass, got["triage->time_specialist/ResultIntegration"].Outcome)
}

// TestDispatchRoundsADKFanOut: the model-level fact the rubric reads.
func TestDispatchRoundsADKFanOut(t *testing.T) {
	g := captureGraph(t, "testdata/captures/adk-fanout-ok.json")
	require.Equal(t, "triage", g.Root.Name)
	rounds := g.Root.DispatchRounds()
	require.Len(t, rounds, 1, "three AgentTool calls of one model response")
	var names []string
	for _, e := range rounds[0] {
		names = append(names, e.To.Name)
	}
	require.Equal(t, []string{"weather_specialist", "time_specialist", "currency_specialist"}, names)

	// One dispatch per model response (the planner's LLM call, then researcher, then the
	// next LLM call, then writer): two rounds. Dispatches before any LLM call: one each.
	tt := tr.New(0x71)
	planner := tt.Agent(nil, "planner", 0, 100)
	tt.LLM(planner, "gpt-x", tr.UserMessages("plan"), 1, 5)
	tt.Agent(tt.Tool(planner, "researcher", `{"q": "a"}`, 6, 20), "researcher", 7, 19)
	tt.LLM(planner, "gpt-x", tr.UserMessages("plan", "a"), 21, 25)
	tt.Agent(tt.Tool(planner, "writer", `{"q": "b"}`, 26, 40), "writer", 27, 39)
	g = tt.Graph()
	require.Len(t, g.Root.DispatchRounds(), 2)
	tt = tr.New(0x72)
	planner = tt.Agent(nil, "planner", 0, 100)
	tt.Agent(planner, "researcher", 6, 20)
	tt.Agent(planner, "writer", 26, 40)
	require.Len(t, tt.Graph().Root.DispatchRounds(), 2, "no LLM call: code-driven dispatches are steps of their own")
}

// TestRecoveryStrandsHandBack: a Strands swarm where weather_specialist's get_weather fails
// on Atlantis and the specialist hands control back to triage. Handing control back is not
// a fallback (before, it passed as "weather_specialist fell back to triage"); what triage
// does next decides.
func TestRecoveryStrandsHandBack(t *testing.T) {
	for _, tt := range []struct {
		file    string
		outcome Outcome
		message string
	}{
		{
			"strands-handback-swallowed", Fail,
			`get_weather (span 7bd8701239704d0a) failed ("Error: weather service: unknown city Atlantis"); weather_specialist did not retry it, ` +
				"fall back or fail, and triage, to which weather_specialist handed control back (span 6effc93119a0a2a3), did not retry, " +
				"fall back, escalate or fail: the error was swallowed",
		},
		{
			"strands-handback-surfaced", Pass,
			`get_weather (span b7a1c46fc9e236d5) failed ("Error: weather service: unknown city Atlantis"); triage surfaced it in its answer ` +
				`after weather_specialist handed control back (span f01419b6685bb45b: "could not")` + noJudge,
		},
		{
			"strands-handback-retried", Pass,
			`get_weather (span 29e20abdcd431fe7) failed ("Error: weather service: unknown city Atlantis"); triage retried: ` +
				"dispatched weather_specialist again (span d91f2eb5e17073f6)" + noJudge,
		},
	} {
		t.Run(tt.file, func(t *testing.T) {
			got := rubricResults(t, captureGraph(t, "testdata/captures/"+tt.file+".json"),
				steps.RubricsStep{FromAgent: "triage", ToAgent: "weather_specialist", Rubrics: []string{rubric.Recovery}}, Options{})
			r := got["triage->weather_specialist/RecoveryOnError"]
			require.Equal(t, tt.outcome, r.Outcome, r.Message)
			require.Equal(t, tt.message, r.Message)
			ri := rubricResults(t, captureGraph(t, "testdata/captures/"+tt.file+".json"),
				steps.RubricsStep{FromAgent: "triage", ToAgent: "weather_specialist", Rubrics: []string{rubric.Integration}}, Options{})["triage->weather_specialist/ResultIntegration"]
			require.Equal(t, Skipped, ri.Outcome)
			require.Regexp(t, `^weather_specialist handed control back to triage as a new run \(span [0-9a-f]{16}\), a hand-off of its own `+
				`\(graded as the handoff weather_specialist -> triage\): no return value to integrate$`, ri.Message)
			if tt.file == "strands-handback-retried" {
				require.Equal(t, Skipped, got["triage->weather_specialist/RecoveryOnError#2"].Outcome, "the retry succeeded: nothing to recover from")
			}
		})
	}
}

// TestRecoveryAnswerSurfacesError: the failure reported in an answer is not swallowed:
// the receiver's, when control never came back to the sender; the sender's, when it did.
func TestRecoveryAnswerSurfacesError(t *testing.T) {
	recovery := func(f *flights) Result {
		return rubricResults(t, f.t.Graph(), steps.RubricsStep{Rubrics: []string{rubric.Recovery}}, Options{})["planner->researcher/RecoveryOnError"]
	}
	// Control came back to planner (its next LLM call); planner's answer reports the failure.
	f := newFlights(0x73)
	f.search(12, 20).Error("ValueError", "no route LHR-JFK")
	f.research.Reply("I could not search the flights.")
	f.t.LLM(f.planner, "gpt-x", tr.UserMessages("plan a trip for order A-1001", "I could not search the flights."), 61, 70)
	f.planner.Reply("Sorry: there is no direct route from LHR to JFK on that day.")
	r := recovery(f)
	require.Equal(t, Pass, r.Outcome, r.Message)
	require.Contains(t, r.Message, `planner surfaced it in its answer (span `+f.planner.SpanID().String()+`: "route")`)

	// The same, planner answering as if nothing failed: swallowed, though researcher had
	// reported it.
	f = newFlights(0x74)
	f.search(12, 20).Error("ValueError", "no route LHR-JFK")
	f.research.Reply("I could not search the flights.")
	f.t.LLM(f.planner, "gpt-x", tr.UserMessages("plan a trip for order A-1001", "I could not search the flights."), 61, 70)
	f.planner.Reply("Your trip is planned.")
	r = recovery(f)
	require.Equal(t, Fail, r.Outcome, r.Message)
	require.Contains(t, r.Message, "the error was swallowed")

	// Researcher reported it, and planner's answer was not captured: not decidable here.
	f = newFlights(0x75)
	f.search(12, 20).Error("ValueError", "no route LHR-JFK")
	f.research.Reply("I could not search the flights.")
	f.t.LLM(f.planner, "gpt-x", tr.UserMessages("plan a trip for order A-1001", "I could not search the flights."), 61, 70)
	r = recovery(f)
	require.Equal(t, Skipped, r.Outcome, r.Message)
	require.Contains(t, r.Message, `researcher reported it to planner ("could not"), and what planner answered after it was not captured`)

	// A one-way transfer: the receiver's answer is the last word.
	t2 := tr.New(0x76)
	triage := t2.Agent(nil, "triage", 0, 10)
	t2.Tool(triage, "transfer_to_billing", `{}`, 5, 6)
	billing := t2.Agent(nil, "billing", 11, 30).Input("refund order A-1")
	t2.Tool(billing, "refund", `{"order": "A-1"}`, 12, 20).Error("PaymentError", "card expired")
	billing.Reply("The refund failed: the card on file has expired.")
	r = rubricResults(t, t2.Graph(), steps.RubricsStep{Rubrics: []string{rubric.Recovery}}, Options{})["triage->billing/RecoveryOnError"]
	require.Equal(t, Pass, r.Outcome, r.Message)
	require.Contains(t, r.Message, `billing surfaced it in its answer ("failed")`)
}

// TestScopeFidelityIdentifierTokens: Google ADK's booking_specialist calls find_table with a
// date it worked out from "Christmas Eve 2026", the year and the party size: none of them is
// an identifier (before, "2026-12-24" failed as context never supplied). A loyalty card
// number nobody supplied still fails.
func TestScopeFidelityIdentifierTokens(t *testing.T) {
	step := steps.RubricsStep{FromAgent: "triage", Rubrics: []string{rubric.Scope}}
	r := rubricResults(t, captureGraph(t, "testdata/captures/adk-scope-ok.json"), step, Options{})["triage->booking_specialist/ScopeFidelity"]
	require.Equal(t, Pass, r.Outcome, r.Message)
	// ADK records the offered tools in its llm_request (config.tools): checked, and kept to.
	require.Equal(t, "score 1: allowed tools pass, context supplied pass", r.Actual)

	r = rubricResults(t, captureGraph(t, "testdata/captures/adk-scope-fabricated.json"), step, Options{})["triage->booking_specialist/ScopeFidelity"]
	require.Equal(t, Fail, r.Outcome)
	require.Equal(t, `booking_specialist used context triage never supplied: "LC-88412" in book_table (span 70365334b33c59e3) `+
		"(not in its input, the dispatch, or an earlier result)", r.Message)
}

// TestScopeFidelitySpanIDsAreNotSources: Mastra records span ids as attributes of the
// specialist's spans; "d641c8", found only inside the span id f5005c1d641c8d76, was not
// supplied (before, it passed as a substring of that attribute).
func TestScopeFidelitySpanIDsAreNotSources(t *testing.T) {
	step := steps.RubricsStep{FromAgent: "triage", Rubrics: []string{rubric.Scope}}
	r := rubricResults(t, captureGraph(t, "testdata/captures/mastra-invented-station.json"), step, Options{})["triage->weather_specialist/ScopeFidelity"]
	require.Equal(t, Fail, r.Outcome)
	require.Equal(t, `weather_specialist used context triage never supplied: "d641c8" in get_weather (span 44d43aacbe85badc) `+
		"(not in its input, the dispatch, or an earlier result)", r.Message)
	r = rubricResults(t, captureGraph(t, "../../testdata/traces/mastra-ok.json"), step, Options{})["triage->weather_specialist/ScopeFidelity"]
	require.Equal(t, Pass, r.Outcome, r.Message)
}

// TestScopeFidelityTimestampsAreNotSources: a Unix timestamp of the trace recorded on the
// receiver's span is no source of a booking number; the same number in the dispatch is.
func TestScopeFidelityTimestampsAreNotSources(t *testing.T) {
	started := strconv.FormatInt(tr.Origin/1e6+11, 10) // the receiver's start, in Unix milliseconds
	build := func(id byte, task string) *agentgraph.Graph {
		tt := tr.New(id)
		planner := tt.Agent(nil, "planner", 0, 100)
		via := tt.Tool(planner, "researcher", task, 10, 60)
		research := tt.Agent(via, "researcher", 11, 59).Input(task).Attr("run.started_at", started).Attr("run.started_iso", "2023-11-14T22:13:20.011Z")
		tt.Tool(research, "book", `{"booking": "`+started+`", "at": "2023-11-14T22:13:20Z"}`, 12, 20)
		return tt.Graph()
	}
	r := rubricResults(t, build(0x77, `{"task": "book a flight"}`), steps.RubricsStep{Rubrics: []string{rubric.Scope}}, Options{})["planner->researcher/ScopeFidelity"]
	require.Equal(t, Fail, r.Outcome)
	require.Contains(t, r.Message, `researcher used context planner never supplied: "`+started+`" in book`)
	require.NotContains(t, r.Message, "2023-11-14", "a timestamp is not an identifier")
	r = rubricResults(t, build(0x78, `{"task": "book a flight, booking `+started+`"}`), steps.RubricsStep{Rubrics: []string{rubric.Scope}}, Options{})["planner->researcher/ScopeFidelity"]
	require.Equal(t, Pass, r.Outcome, r.Message)

	// A span that never ended does not stretch the window to the Unix epoch: a 10-digit
	// account number on the receiver's span is still a source.
	tt := tr.New(0x7a)
	planner := tt.Agent(nil, "planner", 0, 100)
	via := tt.Tool(planner, "researcher", `{"task": "check the account"}`, 10, 60)
	research := tt.Agent(via, "researcher", 11, 59).Input(`{"task": "check the account"}`).Attr("account.number", "1234567890")
	tt.Tool(research, "lookup", `{"account": "1234567890"}`, 12, 20)
	tt.Other(research, "stream", 21, 22).SetEndTimestamp(0)
	r = rubricResults(t, tt.Graph(), steps.RubricsStep{Rubrics: []string{rubric.Scope}}, Options{})["planner->researcher/ScopeFidelity"]
	require.Equal(t, Pass, r.Outcome, r.Message)
}

// TestRubricWorkFanOutOfOneResponse: 2,000 agents-as-tools issued in one model response, run
// one after the other, then the sender's next LLM call with every result: one round, graded
// in at most rubricWorkPerItem visits per span and edge, and every handoff's next step is that
// LLM call.
func TestRubricWorkFanOutOfOneResponse(t *testing.T) {
	const n = 2000
	td := ptrace.NewTraces()
	spans := td.ResourceSpans().AppendEmpty().ScopeSpans().AppendEmpty().Spans()
	var next uint64
	span := func(parent pcommon.SpanID, name string, start, end int, attrs map[string]string) pcommon.SpanID {
		next++
		var id pcommon.SpanID
		binary.BigEndian.PutUint64(id[:], next)
		sp := spans.AppendEmpty()
		sp.SetTraceID(pcommon.TraceID{0x79})
		sp.SetSpanID(id)
		sp.SetParentSpanID(parent)
		sp.SetName(name)
		sp.SetStartTimestamp(pcommon.Timestamp(tr.Origin + int64(start)*1000))
		sp.SetEndTimestamp(pcommon.Timestamp(tr.Origin + int64(end)*1000))
		for k, v := range attrs {
			sp.Attributes().PutStr(k, v)
		}
		return id
	}
	sender := span(pcommon.SpanID{}, "invoke_agent planner", 0, 10*n+100,
		map[string]string{"gen_ai.operation.name": "invoke_agent", "gen_ai.agent.name": "planner", "gen_ai.input.messages": "plan the work"})
	span(sender, "chat model", 1, 5, map[string]string{"gen_ai.operation.name": "chat", "gen_ai.input.messages": tr.UserMessages("plan the work")})
	var results []string
	for i := 0; i < n; i++ {
		start, name := 10+10*i, "worker_"+strconv.Itoa(i)
		task, result := `{"task": "T`+strconv.Itoa(i)+`"}`, "result R"+strconv.Itoa(i)
		via := span(sender, "execute_tool "+name, start, start+8, map[string]string{
			"gen_ai.operation.name": "execute_tool", "gen_ai.tool.name": name,
			"gen_ai.tool.call.arguments": task, "gen_ai.tool.call.result": result,
		})
		span(via, "invoke_agent "+name, start+1, start+7, map[string]string{
			"gen_ai.operation.name": "invoke_agent", "gen_ai.agent.name": name,
			"gen_ai.input.messages": task, "gen_ai.output.messages": result,
		})
		results = append(results, result)
	}
	span(sender, "chat model", 10*n+20, 10*n+30, map[string]string{"gen_ai.operation.name": "chat", "gen_ai.input.messages": tr.UserMessages(results...)})
	g := agentgraph.BuildAll(td, agentgraph.Options{})[0]
	require.Len(t, g.Edges, n)
	require.Len(t, g.Root.DispatchRounds(), 1)

	ev, err := Compile(rubricCases(), Options{})
	require.NoError(t, err)
	cache := &traceCache{Trace: &check.Trace{Ctx: context.Background(), G: g, Batch: &judge.Batch{}}, traceID: g.TraceID.String()}
	out := &check.Out{}
	ev.cases[0].evaluate(cache, true, out)
	got := out.Results
	require.Len(t, got, 1+4*n)
	items := len(g.Spans) + len(g.Edges)
	require.LessOrEqual(t, cache.Index().Work(), rubricWorkPerItem*items, "work %d for %d spans + %d edges", cache.Index().Work(), len(g.Spans), len(g.Edges))
	passed := 0
	for _, r := range got {
		if r.Axis == rubric.Integration {
			require.Equal(t, Pass, r.Outcome, r.Message)
			require.Contains(t, r.Message, "the first after all 2000 dispatches of its model response returned")
			passed++
		}
	}
	require.Equal(t, n, passed)
}
