package rules

import (
	"testing"

	"github.com/stretchr/testify/require"
	"go.opentelemetry.io/collector/pdata/pcommon"
	"go.opentelemetry.io/collector/pdata/ptrace"

	"github.com/otelcol-handoff/otelcol-handoff/internal/agentgraph"
	"github.com/otelcol-handoff/otelcol-handoff/internal/rules/steps"
)

// loopTrace: planner -> critic -> planner (an intentional review loop), and critic -> coder
// -> critic (one that is not).
func loopTrace() *agentgraph.Graph {
	td := ptrace.NewTraces()
	spans := td.ResourceSpans().AppendEmpty().ScopeSpans().AppendEmpty().Spans()
	add := func(id, parent byte, name string) {
		sp := spans.AppendEmpty()
		sp.SetTraceID(pcommon.TraceID{7})
		sp.SetSpanID(pcommon.SpanID{id})
		if parent != 0 {
			sp.SetParentSpanID(pcommon.SpanID{parent})
		}
		sp.SetName("invoke_agent " + name)
		sp.SetStartTimestamp(pcommon.Timestamp(id))
		sp.SetEndTimestamp(pcommon.Timestamp(100))
		sp.Attributes().PutStr("gen_ai.operation.name", "invoke_agent")
		sp.Attributes().PutStr("gen_ai.agent.name", name)
	}
	add(1, 0, "planner")
	add(2, 1, "critic")
	add(3, 2, "planner")
	return agentgraph.BuildAll(td, agentgraph.Options{})[0]
}

func TestAllowedCycles(t *testing.T) {
	g := loopTrace()
	require.Equal(t, [][]string{{"critic", "planner"}}, g.Cycles)
	for _, tt := range []struct {
		name    string
		step    StepConfig
		outcome Outcome
		message string
	}{
		{"cycles fail by default", StepConfig{Kind: &steps.TopologyStep{}}, Fail, "delegation cycle among agents {critic, planner}"},
		{
			"an allowed loop passes, in any order",
			StepConfig{Kind: &steps.TopologyStep{AllowedCycles: [][]string{{"planner", "critic"}}}},
			Pass, "topology ok: 3 agent invocations, 2 handoffs, depth 2, cycles {critic, planner}",
		},
		{
			"another loop allowed is not this one",
			StepConfig{Kind: &steps.TopologyStep{AllowedCycles: [][]string{{"critic", "coder"}}}},
			Fail, "delegation cycle among agents {critic, planner}",
		},
		{"allowCycles allows all", StepConfig{Kind: &steps.TopologyStep{AllowCycles: true}}, Pass, ""},
	} {
		t.Run(tt.name, func(t *testing.T) {
			ev, err := Compile([]CaseConfig{{Name: "c", Steps: []StepConfig{tt.step}}}, Options{})
			require.NoError(t, err)
			rs := ev.Evaluate(g, true)
			require.Len(t, rs, 1)
			require.Equal(t, tt.outcome, rs[0].Outcome, rs[0].Message)
			if tt.message != "" {
				require.Equal(t, tt.message, rs[0].Message)
			}
		})
	}
}

func TestHandoffContextConfigErrors(t *testing.T) {
	topo := StepConfig{Kind: &steps.TopologyStep{}}
	for _, tt := range []struct {
		step StepConfig
		want string
	}{
		{
			StepConfig{Kind: &steps.ContextStep{FromAgent: "a", ToAgent: "b"}},
			"cases[0] (c).steps[1].inlineRubric: set a rubric (inlineRubric or judgeRubricId) or a deterministic check",
		},
		{
			StepConfig{Kind: &steps.ContextStep{FromAgent: "a", ToAgent: "b", RequiredPatterns: []string{"("}}},
			"cases[0] (c).steps[1].requiredPatterns[0]: error parsing regexp: missing closing ): `(`",
		},
		{
			StepConfig{Kind: &steps.ContextStep{FromAgent: "a", ToAgent: "b", ContextExpression: "payload.x +"}},
			"cases[0] (c).steps[1].contextExpression: ERROR: <input>:1:12: Syntax error",
		},
		{
			StepConfig{Kind: &steps.ContextStep{FromAgent: "a", ToAgent: "b", ContextExpression: "scope_prompt"}},
			"cases[0] (c).steps[1].contextExpression: must be a boolean expression, got string",
		},
	} {
		_, err := Compile([]CaseConfig{{Name: "c", Steps: []StepConfig{topo, tt.step}}}, Options{})
		require.ErrorContains(t, err, tt.want)
	}
}
