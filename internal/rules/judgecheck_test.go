package rules

import (
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/otelcol-handoff/otelcol-handoff/internal/rubric"
	"github.com/otelcol-handoff/otelcol-handoff/internal/rules/steps"
)

// TestCheckJudged: without a judge, every judge-graded step is named with the fix; the
// deterministicOnly form of each passes, and steps the judge never grades are not named.
func TestCheckJudged(t *testing.T) {
	topology := StepConfig{Kind: &steps.TopologyStep{}}
	contextStep := &steps.ContextStep{FromAgent: "a", ToAgent: "b", InlineRubric: "carries the order id"}
	context := StepConfig{Kind: contextStep}
	rubrics := StepConfig{Kind: &steps.RubricsStep{Rubrics: []string{rubric.Dispatch, rubric.Scope}}}
	onlyDispatch := StepConfig{Kind: &steps.RubricsStep{Rubrics: []string{rubric.Dispatch}}}
	err := CheckJudged([]CaseConfig{{Name: "c", Steps: []StepConfig{topology, context, rubrics, onlyDispatch}}})
	require.EqualError(t, err, "cases[0] (c).steps[1].inlineRubric: EXPECT_HANDOFF_CONTEXT#2 is graded by the judge (inlineRubric), "+
		"but no judge is configured: configure judge (judge.endpoint and judge.model), or replace the rubric with deterministic checks "+
		"(requiredPatterns, forbiddenPatterns, contextExpression) and set deterministicOnly: true on the step\n"+
		"cases[0] (c).steps[2].rubrics: EXPECT_HANDOFF_RUBRICS#3 grades DispatchCorrectness, ScopeFidelity with the judge, but no judge "+
		"is configured: configure judge (judge.endpoint and judge.model), or keep only the deterministic checks with deterministicOnly: "+
		"true on the step and rubrics: [ScopeFidelity] (DispatchCorrectness is graded by the judge alone)\n"+
		"cases[0] (c).steps[3].rubrics: EXPECT_HANDOFF_RUBRICS#4 grades DispatchCorrectness with the judge, but no judge is "+
		"configured: configure judge (judge.endpoint and judge.model): DispatchCorrectness has no deterministic part")

	contextStep.ForbiddenPatterns, contextStep.DeterministicOnly = []string{`\d{16}`}, true
	require.NoError(t, CheckJudged([]CaseConfig{{Name: "c", Steps: []StepConfig{
		topology, context,
		{Kind: &steps.RubricsStep{DeterministicOnly: true}},
		{Kind: &steps.ContextStep{FromAgent: "a", ToAgent: "b", RequiredPatterns: []string{"A-1"}}},
		{Kind: &steps.DelegationStep{AgentName: "b"}},
	}}}))
}
