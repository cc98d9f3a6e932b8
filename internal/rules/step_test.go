package rules

import (
	"testing"

	"github.com/stretchr/testify/require"
	"go.opentelemetry.io/collector/confmap"

	"github.com/otelcol-handoff/otelcol-handoff/internal/rules/steps"
)

// stepFromKeys decodes a step from its seed keys, as a config file gives them.
func stepFromKeys(keys map[string]any) StepConfig {
	var s StepConfig
	if err := s.Unmarshal(confmap.NewFromStringMap(keys)); err != nil {
		panic(err)
	}
	return s
}

// TestStepUnmarshal: a step decodes into its action's typed config; a key no kind has is a
// decoding error, a key of another kind a validation error naming the kinds it applies to.
func TestStepUnmarshal(t *testing.T) {
	s := stepFromKeys(map[string]any{"action": ActionBudget, "name": "cap", "agentName": "triage", "maxTokens": 1200})
	require.Equal(t, "cap", s.ID(3))
	budget := int64(1200)
	require.Equal(t, &steps.BudgetStep{AgentName: "triage", MaxTokens: &budget}, s.Kind)

	var bad StepConfig
	err := bad.Unmarshal(confmap.NewFromStringMap(map[string]any{"action": ActionBudget, "agentName": "a", "maxTokenz": 1}))
	require.ErrorContains(t, err, "has invalid keys: maxTokenz")
	err = bad.Unmarshal(confmap.NewFromStringMap(map[string]any{"action": "EXPECT_MAGIC", "fromAgent": "a", "colour": "red"}))
	require.ErrorContains(t, err, "has invalid keys: colour")

	topo := StepConfig{Kind: &steps.TopologyStep{}}
	for _, tt := range []struct {
		keys map[string]any
		want string
	}{
		{
			map[string]any{"action": ActionBudget, "agentName": "a", "maxTokens": 5, "fromAgent": "b"},
			"cases[0] (c).steps[1].fromAgent: applies only to EXPECT_DELEGATION_TO, EXPECT_HANDOFF_CONTEXT, EXPECT_HANDOFF_RUBRICS and EXPECT_TRAJECTORY",
		},
		{
			map[string]any{"action": ActionDelegation, "agentName": "a", "maxDepth": 2},
			"cases[0] (c).steps[1].maxDepth: applies only to ASSERT_AGENT_TOPOLOGY",
		},
		{
			map[string]any{"action": ActionDelegation, "agentName": "a", "maxCostUsd": 0.5, "reference": []any{"x"}},
			"cases[0] (c).steps[1].maxCostUsd: applies only to EXPECT_AGENT_BUDGET",
		},
		{
			map[string]any{"action": ActionDelegation, "agentName": "a", "reference": []any{"x"}},
			"cases[0] (c).steps[1].reference: applies only to EXPECT_TRAJECTORY",
		},
		{
			map[string]any{"action": ActionRubrics, "maxTokens": 2},
			"cases[0] (c).steps[1].maxTokens: does not apply to EXPECT_HANDOFF_RUBRICS (its keys: fromAgent, toAgent, rubrics, ignoredTools, transientErrors)",
		},
		{
			map[string]any{"action": "EXPECT_MAGIC", "fromAgent": "a"},
			`cases[0] (c).steps[1].action: unknown action "EXPECT_MAGIC" (want one of ` + "ASSERT_AGENT_TOPOLOGY, EXPECT_DELEGATION_TO, " +
				"EXPECT_HANDOFF_CONTEXT, EXPECT_AGENT_BUDGET, EXPECT_HANDOFF_RUBRICS, EXPECT_TRAJECTORY, EXPECT_AGENT_TOOLS)",
		},
		{
			map[string]any{"agentName": "a"},
			"cases[0] (c).steps[1].action: must be set (one of ASSERT_AGENT_TOPOLOGY",
		},
	} {
		_, err := Compile([]CaseConfig{{Name: "c", Steps: []StepConfig{topo, stepFromKeys(tt.keys)}}}, Options{})
		require.ErrorContains(t, err, tt.want, tt.keys)
	}
}
