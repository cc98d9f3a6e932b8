package rules

import (
	"testing"

	"github.com/stretchr/testify/require"
)

// TestExpectFieldsValidate: each test-case field validates itself, its errors starting
// with its own key; the case (or defaults, or a child entry) adds the path.
func TestExpectFieldsValidate(t *testing.T) {
	require.NoError(t, ExpectedResult(`status == "completed"`).Validate())
	require.EqualError(t, ExpectedToolCalls{{Tool: "a"}, {Tool: " "}}.Validate(), "expected_tool_calls[1]: the tool name must not be empty")
	require.EqualError(t, ExpectedToolCallOrder{"", "b"}.Validate(), "expected_tool_call_order[0]: the tool name must not be empty")
	require.EqualError(t, ExpectedNoToolCalls{"shell.exec", ""}.Validate(), "expected_no_tool_calls[1]: the tool name must not be empty")
	neg := -1
	err := NewChildAgents(map[string]*ChildAgentSpec{
		"writer":    {ExpectedTriggered: &neg},
		"publisher": {AgentExpectations: AgentExpectations{ExpectedNoToolCalls: ExpectedNoToolCalls{""}}},
		"idle":      nil,
	}).Validate()
	require.EqualError(t, err, "expected_child_agents.idle: set at least one of expected_payload, expected_triggered, expected_result, "+
		"expected_tool_calls, expected_tool_call_order, expected_no_tool_calls, expected_child_agents\n"+
		"expected_child_agents.publisher.expected_no_tool_calls[0]: the tool name must not be empty\n"+
		"expected_child_agents.writer.expected_triggered: must not be negative, got -1")

	_, err = Compile([]CaseConfig{{Name: "c", TestFields: TestFields{AgentExpectations: AgentExpectations{
		ExpectedChildAgents: NewChildAgents(map[string]*ChildAgentSpec{"writer": {ExpectedPayload: "payload."}}),
	}}}}, Options{})
	require.ErrorContains(t, err, "cases[0] (c).expected_child_agents.writer.expected_payload: ")
}
