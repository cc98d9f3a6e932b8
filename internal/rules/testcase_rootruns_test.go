package rules

import (
	"os"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/require"
	"go.opentelemetry.io/collector/pdata/pcommon"
	"go.opentelemetry.io/collector/pdata/ptrace"

	"github.com/otelcol-handoff/otelcol-handoff/internal/agentgraph"
	"github.com/otelcol-handoff/otelcol-handoff/internal/spanwalk"
)

// Issue 11, behaviour 4: a supervisor resumed as new runs is one logical agent for the
// test-case fields on the root. These tests read real captures: LangGraph resumes its
// supervisor as a new top-level run (langgraph-ok), a Strands swarm hands control back to
// triage, which then hands off to another agent (scenario-strands-error-retried), and
// Pydantic AI runs its root agent twice before an evaluator (lf-pydantic-ai-multiagent).

// results evaluates ev on the only graph of td, by step.
func results(t *testing.T, ev *Evaluator, td ptrace.Traces) map[string]Result {
	t.Helper()
	g := agentgraph.BuildAll(td, agentgraph.Options{})[0]
	got := map[string]Result{}
	for _, r := range ev.Evaluate(g, true) {
		got[r.Step] = r
	}
	return got
}

func corpusCapture(t *testing.T, name string) ptrace.Traces {
	t.Helper()
	raw, err := os.ReadFile(filepath.Join("..", "..", "testdata", "corpus", name+".otlp.json"))
	require.NoError(t, err)
	td, err := (&ptrace.JSONUnmarshaler{}).UnmarshalTraces(raw)
	require.NoError(t, err)
	return td
}

// TestRootRunsLangGraphSupervisor: in langgraph-ok the supervisor triage runs, hands off to
// weather_specialist, and is resumed as a second top-level run that writes the answer. The
// root's expected_result reads the second run's output (the graph state, whose last message
// is the answer; the first run's output is the LLM generation with the transfer call), and
// the first run's child counts.
func TestRootRunsLangGraphSupervisor(t *testing.T) {
	td := readCapture(t, "langgraph-ok")
	g := agentgraph.BuildAll(td, agentgraph.Options{})[0]
	require.Len(t, g.RootRuns, 2, "triage resumed as a second top-level run")

	ev := compileOne(t, `cases:
- name: lg
  expected_result: 'status == "completed" and output.messages[size(output.messages) - 1].kwargs.content == "Here is the weather report from our specialist."'
  expected_no_tool_calls: [transfer_to_weather_specialist, get_weather]
  expected_child_agents:
    weather_specialist:
      expected_triggered: 1
      expected_tool_calls:
      - get_weather: invocations == 2
`)
	got := results(t, ev, td)
	require.Equal(t, map[string]string{
		"expected_result":        "pass",
		"expected_no_tool_calls": "pass",
		"expected_child_agents.weather_specialist.expected_triggered":     "pass",
		"expected_child_agents.weather_specialist.expected_tool_calls[0]": "pass",
	}, outcomesOf(got))
	res := got["expected_result"]
	require.Equal(t, []string{"a2aa424860cbbbfa", "7fed0f92bcdb4428"}, res.Spans, "both runs of triage")
	require.Regexp(t, `^run 2 of 2: status "completed", error "", output \{"messages":.* \(run 1: completed\)$`, res.Actual)
	require.Contains(t, res.Message, "agent triage (2 runs): ")
	require.Equal(t, "agent triage (2 runs) triggered weather_specialist 1 times",
		got["expected_child_agents.weather_specialist.expected_triggered"].Message)
	require.Equal(t, "agent triage (2 runs) called none of transfer_to_weather_specialist, get_weather", got["expected_no_tool_calls"].Message)

	// The first run's output is not the logical agent's: a spec written against it fails.
	ev = compileOne(t, `cases:
- name: lg
  expected_result: '"generations" in output'
`)
	r := results(t, ev, td)["expected_result"]
	require.Equal(t, Fail, r.Outcome, r.Message)
}

// TestRootRunsStrandsHandBack: in the retried Strands swarm, triage hands off to
// weather_specialist, whose tool fails; it hands control back to triage, whose second run
// hands off to backup_weather. The model's RootRuns hold only the first triage run (the
// second was handed off to); the test-case fields take the hand-back as triage resumed, so
// the root's children are weather_specialist and backup_weather, and its output is the
// second run's (the handoff to backup_weather).
func TestRootRunsStrandsHandBack(t *testing.T) {
	td := readCapture(t, "scenario-strands-error-retried")
	g := agentgraph.BuildAll(td, agentgraph.Options{})[0]
	require.Len(t, g.RootRuns, 1)
	require.Equal(t, "weather_specialist", g.Invocations[2].In.From.Name)

	ev := compileOne(t, `cases:
- name: retried
  expected_result: 'status == "completed" and output[0].input.agentId == "backup_weather"'
  expected_no_tool_calls: [strands_structured_output]
  expected_child_agents:
    weather_specialist:
      expected_triggered: 1
      expected_payload: '"Atlantis" in payload_raw'
      expected_tool_calls:
      - get_weather: invocations == 1 and params.city == "Atlantis"
      expected_child_agents:
        triage:
          expected_triggered: 1
          expected_payload: '"unknown city Atlantis" in payload_raw'
    backup_weather:
      expected_triggered: 1
      expected_payload: '"use the archive" in payload_raw'
      expected_tool_calls:
      - get_weather_archive: invocations == 1
    triage:
      expected_triggered: 0
`)
	got := results(t, ev, td)
	require.Equal(t, map[string]string{
		"expected_result":        "pass",
		"expected_no_tool_calls": "pass",
		"expected_child_agents.weather_specialist.expected_triggered":                              "pass",
		"expected_child_agents.weather_specialist.expected_payload":                                "pass",
		"expected_child_agents.weather_specialist.expected_tool_calls[0]":                          "pass",
		"expected_child_agents.weather_specialist.expected_child_agents.triage.expected_triggered": "pass",
		"expected_child_agents.weather_specialist.expected_child_agents.triage.expected_payload":   "pass",
		"expected_child_agents.backup_weather.expected_triggered":                                  "pass",
		"expected_child_agents.backup_weather.expected_payload":                                    "pass",
		"expected_child_agents.backup_weather.expected_tool_calls[0]":                              "pass",
		"expected_child_agents.triage.expected_triggered":                                          "pass",
	}, outcomesOf(got))
	require.Equal(t, "agent triage (2 runs) triggered backup_weather 1 times", got["expected_child_agents.backup_weather.expected_triggered"].Message)
	require.Equal(t, "agent weather_specialist triggered triage 1 times",
		got["expected_child_agents.weather_specialist.expected_child_agents.triage.expected_triggered"].Message,
		"a child's spec reads that child's run alone")

	// The swallowed variant: triage's second run answers itself; backup_weather never ran.
	got = results(t, compileOne(t, `cases:
- name: swallowed
  expected_child_agents:
    backup_weather:
      expected_triggered: 1
`), readCapture(t, "scenario-strands-error-swallowed"))
	require.Equal(t, Fail, got["expected_child_agents.backup_weather.expected_triggered"].Outcome)
	require.Equal(t, "expected agent triage (2 runs) to trigger backup_weather 1 times, saw 0 times; agent backup_weather did not run; "+
		"agents that ran: triage, weather_specialist", got["expected_child_agents.backup_weather.expected_triggered"].Message)
}

// TestRootRunsToolsAcrossRuns: Pydantic AI's joke_agent runs twice at top level: the first
// run calls three suggestion tools, the second writes the joke, then evaluator_agent runs
// after it. The root's tool calls are the first run's, its child is the second run's, its
// output the second run's.
func TestRootRunsToolsAcrossRuns(t *testing.T) {
	td := corpusCapture(t, "lf-pydantic-ai-multiagent")
	ev := compileOne(t, `cases:
- name: jokes
  expected_result: 'status == "completed" and "hate nature" in output and not ("dark mode" in output)'
  expected_tool_calls:
  - get_pun_suggestion: invocations == 1 and params.topic == "programming"
  - get_dad_joke_suggestion
  expected_tool_call_order: [get_pun_suggestion, get_dad_joke_suggestion, get_one_liner_suggestion]
  expected_no_tool_calls: [final_result]
  expected_child_agents:
    evaluator_agent:
      expected_triggered: 1
`)
	got := results(t, ev, td)
	require.Equal(t, map[string]string{
		"expected_result":          "pass",
		"expected_tool_calls[0]":   "pass",
		"expected_tool_calls[1]":   "pass",
		"expected_tool_call_order": "pass",
		"expected_no_tool_calls":   "pass",
		"expected_child_agents.evaluator_agent.expected_triggered": "pass",
	}, outcomesOf(got))
	require.Equal(t, "get_pun_suggestion, get_dad_joke_suggestion, get_one_liner_suggestion", got["expected_tool_call_order"].Actual)
	require.Equal(t, []string{"5b5c52d029f28206", "49ae06cbfa06611f"}, got["expected_tool_call_order"].Spans[:2], "the runs' spans come first")
}

// TestRootRunsStatusIsTheLastRuns: the logical agent's status, error and output are its
// last run's; the earlier runs' statuses are named in the result. A supervisor paused for
// an approval (GraphInterrupt) and resumed as a new run completed; one whose first run
// failed and whose resumed run completed recovered; one whose last run failed failed. The
// runs' statuses are set on langgraph-ok's two triage spans.
func TestRootRunsStatusIsTheLastRuns(t *testing.T) {
	ev := compileOne(t, `cases:
- name: lg
  expected_result: status == "completed"
`)
	setStatus := func(td ptrace.Traces, id, msg string) {
		eachSpanByID(t, td, id, func(sp ptrace.Span) {
			sp.Status().SetCode(ptrace.StatusCodeError)
			sp.Status().SetMessage(msg)
		})
	}
	for _, tc := range []struct {
		name, first, last string
		outcome           Outcome
		actual            string
	}{
		{"paused then resumed", "GraphInterrupt(approval)", "", Pass, `(run 1: awaiting_approval)`},
		{"failed then resumed", "supervisor crashed", "", Pass, `(run 1: failed)`},
		{"failed last", "", "supervisor crashed", Fail, `^run 2 of 2: status "failed", error "supervisor crashed", .* \(run 1: completed\)$`},
	} {
		t.Run(tc.name, func(t *testing.T) {
			td := readCapture(t, "langgraph-ok")
			if tc.first != "" {
				setStatus(td, "a2aa424860cbbbfa", tc.first)
			}
			if tc.last != "" {
				setStatus(td, "7fed0f92bcdb4428", tc.last)
			}
			r := results(t, ev, td)["expected_result"]
			require.Equal(t, tc.outcome, r.Outcome, r.Message)
			require.Regexp(t, tc.actual, r.Actual)
		})
	}
}

func outcomesOf(rs map[string]Result) map[string]string {
	out := map[string]string{}
	for step, r := range rs {
		out[step] = string(r.Outcome)
		if r.Outcome != Pass {
			out[step] += ": " + r.Message
		}
	}
	return out
}

// eachSpanByID calls f on the span of td with the given id (hex), which must exist.
func eachSpanByID(t *testing.T, td ptrace.Traces, id string, f func(ptrace.Span)) {
	t.Helper()
	n := 0
	spanwalk.Each(td, func(_ pcommon.Resource, sp ptrace.Span) {
		if sp.SpanID().String() == id {
			f(sp)
			n++
		}
	})
	require.Equal(t, 1, n, "span %s", id)
}

// TestRootRunsNestedRunIsAChild: a run of the root agent's name that another agent's span
// encloses (called as an agent-as-tool) is a child of that agent, not the root resumed. The
// Strands agent-as-tool capture, with its sub-agent renamed to the root's name (triage calls
// a nested triage through the tool weather_specialist).
func TestRootRunsNestedRunIsAChild(t *testing.T) {
	td := readCapture(t, "strands-agent-tool")
	eachSpanByID(t, td, "7de4f819fa3bf3ec", func(sp ptrace.Span) {
		sp.Attributes().PutStr("gen_ai.agent.name", "triage")
	})
	g := agentgraph.BuildAll(td, agentgraph.Options{})[0]
	require.Len(t, g.Invocations, 2)
	require.Equal(t, agentgraph.DetectAgentAsTool, g.Invocations[1].In.Detection)
	// rootAgent's runs: expect's TestRootAgentRuns.

	got := results(t, compileOne(t, `cases:
- name: nested
  expected_no_tool_calls: [get_weather]
  expected_child_agents:
    triage:
      expected_triggered: 1
      expected_tool_calls:
      - get_weather: invocations == 2
`), td)
	require.Equal(t, map[string]string{
		"expected_no_tool_calls":                              "pass",
		"expected_child_agents.triage.expected_triggered":     "pass",
		"expected_child_agents.triage.expected_tool_calls[0]": "pass",
	}, outcomesOf(got))
	require.Equal(t, "agent triage triggered triage 1 times", got["expected_child_agents.triage.expected_triggered"].Message)
}
