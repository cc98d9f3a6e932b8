package rules

import (
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/otelcol-handoff/otelcol-handoff/internal/rules/expect"
)

// TestExpectFieldsValidate: each test-case field validates itself, its errors starting
// with its own key; the case (or defaults, or a child entry) adds the path.
func TestExpectFieldsValidate(t *testing.T) {
	require.NoError(t, expect.ExpectedResult(`status == "completed"`).ValidateField())
	require.EqualError(t, expect.ExpectedToolCalls{{Tool: "a"}, {Tool: " "}}.ValidateField(), "expected_tool_calls[1]: the tool name must not be empty")
	require.EqualError(t, expect.ExpectedToolCallOrder{"", "b"}.ValidateField(), "expected_tool_call_order[0]: the tool name must not be empty")
	require.EqualError(t, expect.ExpectedNoToolCalls{"shell.exec", ""}.ValidateField(), "expected_no_tool_calls[1]: the tool name must not be empty")
	neg := -1
	err := expect.NewChildAgents(map[string]*expect.ChildAgentSpec{
		"writer":    {ExpectedTriggered: &neg},
		"publisher": {AgentExpectations: expect.AgentExpectations{ExpectedNoToolCalls: expect.ExpectedNoToolCalls{""}}},
		"idle":      nil,
	}).ValidateField()
	require.EqualError(t, err, "expected_child_agents.idle: set at least one of expected_payload, expected_triggered, expected_result, "+
		"expected_tool_calls, expected_tool_call_order, expected_no_tool_calls, expected_child_agents\n"+
		"expected_child_agents.publisher.expected_no_tool_calls[0]: the tool name must not be empty\n"+
		"expected_child_agents.writer.expected_triggered: must not be negative, got -1")

	_, err = Compile([]CaseConfig{{Name: "c", TestFields: TestFields{AgentExpectations: expect.AgentExpectations{
		ExpectedChildAgents: expect.NewChildAgents(map[string]*expect.ChildAgentSpec{"writer": {ExpectedPayload: "payload."}}),
	}}}}, Options{})
	require.ErrorContains(t, err, "cases[0] (c).expected_child_agents.writer.expected_payload: ")
}
