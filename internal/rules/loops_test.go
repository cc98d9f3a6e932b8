package rules

import (
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/otelcol-handoff/otelcol-handoff/internal/agentgraph"
	"github.com/otelcol-handoff/otelcol-handoff/internal/cluster"
	"github.com/otelcol-handoff/otelcol-handoff/internal/rules/steps"
)

// The loop rules on real cyclic handoffs. scenario-langgraph-pingpong (LangGraph +
// OpenInference, e2e/clients/langgraph-pingpong.mjs) runs the nodes writer, critic,
// writer, critic, writer, critic, each handing to the next with a transfer_to_* call and
// Command(goto): five handoffs, writer -> critic three times and critic -> writer twice, one
// loop of two agents entered at writer and brought back to it twice.
// scenario-strands-error-retried (Strands swarm) hands triage -> weather_specialist ->
// triage -> backup_weather: a loop that turned once, and one handoff out of it.

func topologyOn(t *testing.T, capture string, s steps.TopologyStep) Result {
	t.Helper()
	ev, err := Compile([]CaseConfig{{Name: "c", Steps: []StepConfig{{Kind: &s}}}}, Options{})
	require.NoError(t, err)
	rs := ev.Evaluate(agentgraph.BuildAll(readCapture(t, capture), agentgraph.Options{})[0], true)
	require.Len(t, rs, 1)
	return rs[0]
}

func TestLoopRulesOnPingPong(t *testing.T) {
	const actual = "6 agent invocations, 5 handoffs, depth 5, cycles {critic, writer}"
	for _, tc := range []struct {
		name     string
		step     steps.TopologyStep
		outcome  Outcome
		expected string
		message  string
	}{
		{
			name: "maxHandoffs", step: steps.TopologyStep{AllowCycles: true, MaxHandoffs: ptr(4)}, outcome: Fail,
			expected: "handoffs <= 4, at least one agent",
			message:  "5 handoffs, over maxHandoffs 4 (loop writer -> critic -> writer turned 2 times (5 handoffs))",
		},
		{
			name: "maxHandoffs met", step: steps.TopologyStep{AllowCycles: true, MaxHandoffs: ptr(5)}, outcome: Pass,
			expected: "handoffs <= 5, at least one agent",
			message:  "topology ok: " + actual,
		},
		{
			name: "maxPairRepeats names every pair over it", step: steps.TopologyStep{AllowCycles: true, MaxPairRepeats: ptr(1)}, outcome: Fail,
			expected: "handoffs per sender -> receiver pair <= 1, at least one agent",
			message: "writer -> critic handed off 3 times, over maxPairRepeats 1 (loop writer -> critic -> writer turned 2 times (5 handoffs)); " +
				"critic -> writer handed off 2 times, over maxPairRepeats 1 (loop writer -> critic -> writer turned 2 times (5 handoffs))",
		},
		{
			name: "maxPairRepeats 2 catches only the busier pair", step: steps.TopologyStep{AllowCycles: true, MaxPairRepeats: ptr(2)}, outcome: Fail,
			expected: "handoffs per sender -> receiver pair <= 2, at least one agent",
			message:  "writer -> critic handed off 3 times, over maxPairRepeats 2 (loop writer -> critic -> writer turned 2 times (5 handoffs))",
		},
		{
			name: "maxCycleLength", step: steps.TopologyStep{AllowCycles: true, MaxCycleLength: ptr(1)}, outcome: Fail,
			expected: "agents per loop <= 1, at least one agent",
			message:  "loop writer -> critic -> writer turned 2 times (5 handoffs) has 2 agents, over maxCycleLength 1",
		},
		{
			name: "an allowed loop within maxCycleLength", step: steps.TopologyStep{AllowedCycles: [][]string{{"writer", "critic"}}, MaxCycleLength: ptr(2)}, outcome: Pass,
			expected: "no delegation cycles but {writer, critic}, agents per loop <= 2, at least one agent",
			message:  "topology ok: " + actual,
		},
		{
			name: "the cycle rule and a loop rule together", step: steps.TopologyStep{MaxPairRepeats: ptr(2)}, outcome: Fail,
			expected: "no delegation cycles, handoffs per sender -> receiver pair <= 2, at least one agent",
			message: "delegation cycle among agents {critic, writer}; " +
				"writer -> critic handed off 3 times, over maxPairRepeats 2 (loop writer -> critic -> writer turned 2 times (5 handoffs))",
		},
	} {
		t.Run(tc.name, func(t *testing.T) {
			r := topologyOn(t, "scenario-langgraph-pingpong", tc.step)
			require.Equal(t, tc.outcome, r.Outcome, r.Message)
			require.Equal(t, tc.expected, r.Expected)
			require.Equal(t, actual, r.Actual)
			require.Equal(t, tc.message, r.Message)
		})
	}
}

func TestLoopRulesOnStrandsHandBack(t *testing.T) {
	r := topologyOn(t, "scenario-strands-error-retried", steps.TopologyStep{AllowCycles: true, MaxHandoffs: ptr(2), MaxPairRepeats: ptr(1), MaxCycleLength: ptr(2)})
	require.Equal(t, Fail, r.Outcome)
	require.Equal(t, "3 handoffs, over maxHandoffs 2 (loop triage -> weather_specialist -> triage turned 1 time (2 handoffs))", r.Message)
	require.Equal(t, cluster.Loop, r.Cluster)
	// No pair repeats, and the loop is two agents long.
	r = topologyOn(t, "scenario-strands-error-retried", steps.TopologyStep{AllowCycles: true, MaxHandoffs: ptr(3), MaxPairRepeats: ptr(1), MaxCycleLength: ptr(2)})
	require.Equal(t, Pass, r.Outcome, r.Message)
	// An acyclic trace over maxHandoffs names no loop.
	r = topologyOn(t, "scenario-strands-refund-swarm", steps.TopologyStep{MaxHandoffs: ptr(1)})
	require.Equal(t, "2 handoffs, over maxHandoffs 1", r.Message)
}

func TestLoopConfigErrors(t *testing.T) {
	for _, tc := range []struct {
		step steps.TopologyStep
		want string
	}{
		{steps.TopologyStep{MaxHandoffs: ptr(-1)}, "cases[0] (c).steps[0].maxHandoffs: must be at least 0, got -1"},
		{steps.TopologyStep{MaxPairRepeats: ptr(0)}, "cases[0] (c).steps[0].maxPairRepeats: must be at least 1, got 0"},
		{steps.TopologyStep{AllowCycles: true, MaxCycleLength: ptr(0)}, "cases[0] (c).steps[0].maxCycleLength: must be at least 1, got 0"},
		{steps.TopologyStep{MaxCycleLength: ptr(2)}, "cases[0] (c).steps[0].maxCycleLength: bounds the loops allowCycles or allowedCycles let through"},
	} {
		_, err := Compile([]CaseConfig{{Name: "c", Steps: []StepConfig{{Kind: &tc.step}}}}, Options{})
		require.ErrorContains(t, err, tc.want)
	}
}
