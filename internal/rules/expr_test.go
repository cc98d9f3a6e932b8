package rules

import (
	"testing"

	"github.com/stretchr/testify/require"

	tr "github.com/otelcol-handoff/otelcol-handoff/internal/rules/rulestest"
	"github.com/otelcol-handoff/otelcol-handoff/internal/rules/steps"
)

// TestOneDialect: a case's when and a handoff-context step's contextExpression take the
// dialect of the expected_* fields (and/or/not, `in` as a substring test on strings); they
// used to reject it.
func TestOneDialect(t *testing.T) {
	g := loopTrace() // planner -> critic -> planner
	topo := StepConfig{Kind: &steps.TopologyStep{AllowCycles: true}}
	for _, tt := range []struct {
		when     string
		selected bool
	}{
		{`root_agent == "planner" and "critic" in agents and not ("coder" in agents)`, true},
		{`root_agent == "coder" or "critic" in agents`, true},
		{`"plan" in root_agent and service_name == ""`, true},
		{`root_agent == "planner" && !("critic" in agents)`, false},
		{`not ("planner" in agents) or root_agent == "coder"`, false},
	} {
		ev, err := Compile([]CaseConfig{{Name: "c", When: tt.when, Steps: []StepConfig{topo}}}, Options{})
		require.NoError(t, err, tt.when)
		rs := ev.Evaluate(g, true)
		if !tt.selected {
			require.Empty(t, rs, tt.when)
			continue
		}
		require.Len(t, rs, 1, tt.when)
		require.Equal(t, Pass, rs[0].Outcome, rs[0].Message)
	}

	b := tr.New(8)
	planner := b.Agent(nil, "planner", 1, 100)
	b.Agent(planner, "critic", 2, 90).Input("review the plan for order A-1")
	hg := b.Graph()
	for _, tt := range []struct {
		expr    string
		outcome Outcome
	}{
		{`from == "planner" and to == "critic" and not ("x" in allowed_tools) and "A-1" in scope_prompt`, Pass},
		{`from == "critic" or to == "planner"`, Fail},
		{`"A-2" in scope_prompt or not ("A-1" in scope_prompt)`, Fail},
	} {
		step := StepConfig{Kind: &steps.ContextStep{FromAgent: "planner", ToAgent: "critic", ContextExpression: tt.expr}}
		ev, err := Compile([]CaseConfig{{Name: "c", Steps: []StepConfig{topo, step}}}, Options{})
		require.NoError(t, err, tt.expr)
		rs := ev.Evaluate(hg, true)
		require.Len(t, rs, 2, tt.expr)
		require.Equal(t, tt.outcome, rs[1].Outcome, rs[1].Message)
		if tt.outcome == Fail {
			require.Contains(t, rs[1].Message, "contextExpression is false")
		}
	}
}

// TestDialectErrorPositions: errors point at the line:column of the text as written, in
// when and contextExpression as in the expected_* fields.
func TestDialectErrorPositions(t *testing.T) {
	_, err := Compile([]CaseConfig{{Name: "c", When: "root_agent == \"a\" and\n  agents.size() >", Steps: []StepConfig{{Kind: &steps.TopologyStep{}}}}}, Options{})
	require.EqualError(t, err, "cases[0] (c).when: ERROR: <input>:2:18: Syntax error: mismatched input '<EOF>' expecting {'[', '{', '(', '.', '-', '!', 'true', 'false', 'null', NUM_FLOAT, NUM_INT, NUM_UINT, STRING, BYTES, IDENTIFIER}\n |   agents.size() >\n | .................^")
	step := StepConfig{Kind: &steps.ContextStep{FromAgent: "a", ToAgent: "b", ContextExpression: `reason == "x" or no_such_var`}}
	_, err = Compile([]CaseConfig{{Name: "c", Steps: []StepConfig{{Kind: &steps.TopologyStep{}}, step}}}, Options{})
	require.EqualError(t, err, "cases[0] (c).steps[1].contextExpression: ERROR: <input>:1:18: undeclared reference to 'no_such_var' (in container '')\n | reason == \"x\" or no_such_var\n | .................^")
}
