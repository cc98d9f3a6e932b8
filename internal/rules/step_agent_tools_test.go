package rules

import (
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/otelcol-handoff/otelcol-handoff/internal/agentgraph"
	"github.com/otelcol-handoff/otelcol-handoff/internal/cluster"
	"github.com/otelcol-handoff/otelcol-handoff/internal/rules/steps"
)

// agentToolsResult runs one EXPECT_AGENT_TOOLS step, decoded from its keys, after a
// topology step.
func agentToolsResult(t *testing.T, g *agentgraph.Graph, keys map[string]any) Result {
	t.Helper()
	keys["action"] = ActionAgentTools
	ev, err := Compile([]CaseConfig{{Name: "c", Steps: []StepConfig{{Kind: &steps.TopologyStep{AllowCycles: true}}, stepFromKeys(keys)}}}, Options{})
	require.NoError(t, err)
	rs := ev.Evaluate(g, true)
	require.Len(t, rs, 2)
	return rs[1]
}

// TestAgentTools on the recorded ADK and Strands captures: booking_specialist calls
// find_table (span 40cc9e87efae0ff5) then book_table (21384e13a3847a99); triage only
// delegates (its AgentTool call to booking_specialist is a handoff, not a tool call); the
// Strands weather_specialist runs twice, calling get_weather twice, then once.
func TestAgentTools(t *testing.T) {
	adk := captureGraph(t, "testdata/captures/adk-scope-ok.json")

	r := agentToolsResult(t, adk, map[string]any{"agentName": "booking_specialist", "allowedTools": []any{"find_table", "book_table"}})
	require.Equal(t, Pass, r.Outcome, r.Message)
	require.Equal(t, "EXPECT_AGENT_TOOLS#2", r.Step)
	require.Equal(t, "booking_specialist calls only find_table, book_table", r.Expected)
	require.Equal(t, "2 tool calls in 1 runs", r.Actual)
	require.Equal(t, "booking_specialist made 2 tool calls, all in allowedTools", r.Message)

	r = agentToolsResult(t, adk, map[string]any{"agentName": "booking_specialist", "allowedTools": []any{"find_table"}})
	require.Equal(t, Fail, r.Outcome)
	require.Equal(t, "booking_specialist called tools outside allowedTools [find_table]: book_table x1", r.Message)
	require.Equal(t, cluster.ScopeBleed, r.Cluster)
	require.Equal(t, []string{"21384e13a3847a99"}, r.Spans)

	r = agentToolsResult(t, adk, map[string]any{"agentName": "triage", "allowedTools": []any{"lookup"}})
	require.Equal(t, Pass, r.Outcome, "a delegation call is not a tool call: %s", r.Message)
	require.Equal(t, "triage made 0 tool calls, all in allowedTools", r.Message)

	strands := captureGraph(t, "testdata/captures/strands-handback-retried.json")
	r = agentToolsResult(t, strands, map[string]any{"agentName": "weather_specialist", "allowedTools": []any{"get_time"}})
	require.Equal(t, Fail, r.Outcome)
	require.Equal(t, "3 tool calls in 2 runs, outside the list: get_weather x3", r.Actual)
	require.Equal(t, []string{"e178098818ef3ceb", "29e20abdcd431fe7", "6960d02c5202ec38"}, r.Spans)

	r = agentToolsResult(t, adk, map[string]any{"agentName": "booking_specialst", "allowedTools": []any{"find_table"}})
	require.Equal(t, Skipped, r.Outcome)
	require.Equal(t, "agent booking_specialst did not run; agents that ran: booking_specialist, triage; no tool call to check", r.Message)
}

func TestAgentToolsConfigErrors(t *testing.T) {
	topo := StepConfig{Kind: &steps.TopologyStep{}}
	for _, tt := range []struct {
		keys map[string]any
		want string
	}{
		{map[string]any{"allowedTools": []any{"a"}}, "cases[0] (c).steps[1].agentName: must name the agent whose tool calls are limited"},
		{map[string]any{"agentName": "a"}, "cases[0] (c).steps[1].allowedTools: list at least one tool the agent may call"},
		{map[string]any{"agentName": "a", "allowedTools": []any{"b", " "}}, "cases[0] (c).steps[1].allowedTools[1]: the tool name must not be empty"},
		{map[string]any{"agentName": "a", "allowedTools": []any{"b"}, "maxToolCalls": 2}, "cases[0] (c).steps[1].maxToolCalls: applies only to EXPECT_AGENT_BUDGET"},
	} {
		tt.keys["action"] = ActionAgentTools
		_, err := Compile([]CaseConfig{{Name: "c", Steps: []StepConfig{topo, stepFromKeys(tt.keys)}}}, Options{})
		require.ErrorContains(t, err, tt.want)
	}
	_, err := Compile([]CaseConfig{{Name: "c", Steps: []StepConfig{{Kind: &steps.AgentToolsStep{AgentName: "a", AllowedTools: []string{"b"}}}}}}, Options{})
	require.ErrorContains(t, err, "cases[0] (c).steps[0].action: EXPECT_AGENT_TOOLS reads the DAG of an earlier ASSERT_AGENT_TOPOLOGY step")
}
