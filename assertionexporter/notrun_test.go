package assertionexporter

import (
	"context"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/otelcol-handoff/otelcol-handoff/internal/rubric"
	"github.com/otelcol-handoff/otelcol-handoff/internal/rules"
	"github.com/otelcol-handoff/otelcol-handoff/internal/rules/expect"
	"github.com/otelcol-handoff/otelcol-handoff/internal/rules/steps"
)

// TestMisspelledAgentIsVisible: every rule that names an agent that did not run (here
// weather_specialst, for the weather_specialist of the real ADK capture) says so with the
// agents that ran; a rule that needs the run fails, one that measures it is skipped, one
// that forbids it passes; the skipped results are counted by case, step and outcome.
func TestMisspelledAgentIsVisible(t *testing.T) {
	const typo = "weather_specialst"
	one, zero := 1, 0
	tokens := int64(8000)
	h := newHarness(t, &Config{LogVerdicts: LogNone, Cases: []rules.CaseConfig{{
		Name: "typo",
		Steps: []rules.StepConfig{
			{Kind: &steps.TopologyStep{}},
			{Name: "delegates", Kind: &steps.DelegationStep{AgentName: typo, FromAgent: "triage"}},
			{Name: "never_delegates", Kind: &steps.DelegationStep{AgentName: typo, MinInvocations: &zero, MaxInvocations: &zero}},
			{Name: "budget", Kind: &steps.BudgetStep{AgentName: typo, MaxTokens: &tokens}},
			{Name: "context", Kind: &steps.ContextStep{FromAgent: "triage", ToAgent: typo, ForbiddenPatterns: []string{`\d{16}`}}},
			{Name: "rubrics", Kind: &steps.RubricsStep{ToAgent: typo, Rubrics: []string{rubric.Scope}, DeterministicOnly: true}},
		},
		TestFields: rules.TestFields{AgentExpectations: expect.AgentExpectations{
			ExpectedChildAgents: expect.NewChildAgents(map[string]*expect.ChildAgentSpec{typo: {ExpectedTriggered: &one}}),
		}},
	}}})
	ctx := context.Background()
	require.NoError(t, h.exp.ConsumeTraces(ctx, readCapture(t, "google-adk-ok")))
	require.NoError(t, h.exp.Shutdown(ctx))

	const note = "agent weather_specialst did not run; agents that ran: triage, weather_specialist"
	got := map[string]string{}
	for _, r := range h.results(t) {
		got[r.Step] = string(r.Outcome) + ": " + r.Message
	}
	require.Equal(t, map[string]string{
		"ASSERT_AGENT_TOPOLOGY#1": "pass: topology ok: 2 agent invocations, 1 handoffs, depth 1, cycles none",
		"delegates":               "fail: expected triage delegating to weather_specialst at least 1 times, saw 0 times; " + note,
		"never_delegates":         "pass: any agent delegated to weather_specialst 0 times; " + note,
		"budget":                  "skipped: " + note + "; nothing to budget",
		"context":                 "fail: no handoff from triage to weather_specialst in this trace; " + note,
		"rubrics.ScopeFidelity":   "skipped: no handoff any agent -> weather_specialst in this trace: nothing to grade; " + note,
		"expected_child_agents.weather_specialst.expected_triggered": "fail: expected agent triage to trigger weather_specialst 1 times, saw 0 times; " + note,
	}, got)

	counts := evaluations(t, h.tt)
	require.Equal(t, int64(1), counts[[3]string{"typo", "budget", "skipped"}])
	require.Equal(t, int64(1), counts[[3]string{"typo", "rubrics.ScopeFidelity", "skipped"}])
	require.Equal(t, int64(1), counts[[3]string{"typo", "delegates", "fail"}])
}
