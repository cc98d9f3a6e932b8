package rules

import (
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/otelcol-handoff/otelcol-handoff/internal/agentgraph"
	"github.com/otelcol-handoff/otelcol-handoff/internal/rules/steps"
)

// The framework shapes of issue 11 as the rules see them through the model, on real
// captures (testdata/traces; google-adk-transfer-text is an edited copy, see SOURCES.md).

func outcomes(t *testing.T, ev *Evaluator, capture string) map[string]string {
	t.Helper()
	g := agentgraph.BuildAll(readCapture(t, capture), agentgraph.Options{})[0]
	got := map[string]string{}
	for _, r := range ev.Evaluate(g, true) {
		got[r.Step] = string(r.Outcome)
		if r.Outcome != Pass {
			got[r.Step] += ": " + r.Message
		}
	}
	return got
}

// TestTransferTextReachesPayloadChecks: what triage's LLM response said with its
// transfer_to_agent call (a card number) is part of the dispatch payload: payload_raw
// holds it, payload.text is it, and forbiddenPatterns on the handoff catch it.
func TestTransferTextReachesPayloadChecks(t *testing.T) {
	ev := compileOne(t, `cases:
- name: adk
  expected_child_agents:
    weather_specialist:
      expected_payload: '"4111 1111 1111 1111" in payload_raw and payload.agentName == "weather_specialist" and "Card on file" in payload.text'
`)
	require.Equal(t, map[string]string{"expected_child_agents.weather_specialist.expected_payload": "pass"},
		outcomes(t, ev, "google-adk-transfer-text"))

	ctx, err := Compile([]CaseConfig{{Name: "leak", Steps: []StepConfig{
		{Kind: &steps.TopologyStep{}},
		{Kind: &steps.ContextStep{FromAgent: "triage", ToAgent: "weather_specialist", ForbiddenPatterns: []string{`\b4111[ -]?1111[ -]?1111[ -]?1111\b`}}},
	}}}, Options{})
	require.NoError(t, err)
	require.Equal(t, map[string]string{
		"ASSERT_AGENT_TOPOLOGY#1": "pass",
		"EXPECT_HANDOFF_CONTEXT#2": "fail: handoff triage -> weather_specialist (span 0220be9d21dc61d8): " +
			`the handoff content contains forbidden /\b4111[ -]?1111[ -]?1111[ -]?1111\b/`,
	}, outcomes(t, ctx, "google-adk-transfer-text"))
	// The capture it was edited from said nothing with the call.
	require.Equal(t, "pass", outcomes(t, ctx, "google-adk-ok")["EXPECT_HANDOFF_CONTEXT#2"])
}

// TestOpenInferenceParamsInRules: params.city on LangGraph's OpenInference tool spans,
// whose input.value is the bare "Paris".
func TestOpenInferenceParamsInRules(t *testing.T) {
	ev := compileOne(t, `cases:
- name: lg
  expected_child_agents:
    weather_specialist:
      expected_tool_calls:
      - get_weather: invocations == 1 and params.city == "Berlin"
      - get_weather: params.city == "Paris"
`)
	require.Equal(t, map[string]string{
		"expected_child_agents.weather_specialist.expected_tool_calls[0]": "pass",
		"expected_child_agents.weather_specialist.expected_tool_calls[1]": "pass",
	}, outcomes(t, ev, "langgraph-ok"))
}

// TestSwarmShapeInRules: in the Strands swarm, the root agent is triage (not the swarm),
// and the specialist's routing call does not count against maxToolCalls: two get_weather
// calls fit a budget of 2.
func TestSwarmShapeInRules(t *testing.T) {
	calls := 2
	r := budgetResult(t, readCapture(t, "strands-ok"), StepConfig{Kind: &steps.BudgetStep{AgentName: "weather_specialist", MaxToolCalls: &calls}})
	require.Equal(t, Pass, r.Outcome, r.Message)
	one := 1
	r = budgetResult(t, readCapture(t, "strands-ok"), StepConfig{Kind: &steps.BudgetStep{AgentName: "weather_specialist", MaxToolCalls: &one}})
	require.Equal(t, Fail, r.Outcome)
	require.Equal(t, "weather_specialist (span 6bcab0b4c887d392) made 2 tool calls, over maxToolCalls 1", r.Message)

	ev := compileOne(t, `cases:
- name: swarm
  when: root_agent == "triage"
  expected_no_tool_calls: [strands_structured_output]
  expected_child_agents:
    weather_specialist:
      expected_triggered: 1
      expected_payload: payload.message == "Get the weather for Paris and Berlin"
      expected_tool_call_order: [get_weather, get_weather]
      expected_no_tool_calls: [strands_structured_output]
`)
	require.Equal(t, map[string]string{
		"expected_no_tool_calls": "pass",
		"expected_child_agents.weather_specialist.expected_triggered":       "pass",
		"expected_child_agents.weather_specialist.expected_payload":         "pass",
		"expected_child_agents.weather_specialist.expected_tool_call_order": "pass",
		"expected_child_agents.weather_specialist.expected_no_tool_calls":   "pass",
	}, outcomes(t, ev, "strands-ok"))
}
