package rules

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/google/cel-go/cel"
	"github.com/google/cel-go/common/types"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"go.opentelemetry.io/collector/confmap"
	"go.opentelemetry.io/collector/pdata/ptrace"
	"go.yaml.in/yaml/v3"

	"github.com/otelcol-handoff/otelcol-handoff/internal/agentgraph"
	"github.com/otelcol-handoff/otelcol-handoff/internal/celexpr"
	"github.com/otelcol-handoff/otelcol-handoff/internal/cluster"
	"github.com/otelcol-handoff/otelcol-handoff/internal/rules/check"
	"github.com/otelcol-handoff/otelcol-handoff/internal/rules/expect"
	tr "github.com/otelcol-handoff/otelcol-handoff/internal/rules/rulestest"
)

// TestPartialEvaluationExample is the worked example of DESIGN.md section 7, step by step:
// `invocations == 1 and params.a == 4` over calls a=4, a=7, a=4.
func TestPartialEvaluationExample(t *testing.T) {
	envs, err := check.LoadExprs()
	require.NoError(t, err)
	e, err := celexpr.Compile(envs.Tool, "invocations == 1 and params.a == 4", DefaultCostLimit, cel.OptPartialEval|cel.OptTrackState)
	require.NoError(t, err)
	require.True(t, e.Uses("invocations"))

	var residuals []string
	matching := 0
	for _, a := range []int64{4, 7, 4} {
		act, err := cel.PartialVars(map[string]any{"params": map[string]any{"a": a}, "context": map[string]any{}},
			cel.AttributePattern("invocations"))
		require.NoError(t, err)
		val, det, err := e.Eval(context.Background(), act)
		require.NoError(t, err)
		if a == 7 {
			require.Equal(t, types.False, val, "a=7 is filtered out")
			continue
		}
		require.True(t, types.IsUnknown(val), "a=4 depends only on invocations")
		res, err := e.Residual(det)
		require.NoError(t, err)
		text, err := cel.AstToString(res)
		require.NoError(t, err)
		residuals = append(residuals, text)
		matching++
	}
	require.Equal(t, []string{"invocations == 1", "invocations == 1"}, residuals)
	require.Equal(t, 2, matching)

	// The same through the evaluator: 2 matching calls, so the residual is false.
	ev, err := Compile([]CaseConfig{{Name: "pairs", TestFields: TestFields{AgentExpectations: expect.AgentExpectations{
		ExpectedToolCalls: []expect.ToolCallSpec{
			{Tool: "math.calculator.add", Expr: "invocations == 1 and params.a == 4"},
			{Tool: "math.calculator.add", Expr: "invocations == 1 and params.a == 7"},
		},
	}}}}, Options{})
	require.NoError(t, err)
	g := tr.AddPairs(3, [2]int{4, 6}, [2]int{7, 8}, [2]int{4, 1}).Graph()
	results := ev.Evaluate(g, true)
	require.Len(t, results, 2)
	r := results[0]
	require.Equal(t, Result{
		TraceID: g.TraceID.String(), Case: "pairs", Step: "expected_tool_calls[0]", Action: "expected_tool_calls",
		Outcome: Fail, Expected: "math.calculator.add: invocations == 1 and params.a == 4", Actual: "3 calls, 2 matching",
		Message: "agent assistant: 2 of 3 math.calculator.add calls match `invocations == 1 and params.a == 4`, " +
			"and the residual `invocations == 1` is false with invocations = 2",
		Spans:    []string{"0000000000000301", "0000000000000302", "0000000000000304"},
		Complete: true, Cluster: cluster.Other, Signature: r.Signature, // the signature: internal/cluster's tests
	}, r)
	require.Equal(t, Pass, results[1].Outcome, "each entry is its own assertion")
	require.Equal(t, []string{"0000000000000301", "0000000000000303"}, results[1].Spans)
}

// TestInvalidSpecs: each invalid spec is rejected with a message naming the case, the field
// and, for CEL, the line:column with the text as written.
func TestInvalidSpecs(t *testing.T) {
	tests := map[string]struct{ yaml, want string }{
		"bad CEL with column": {
			yaml: "cases:\n- name: c\n  expected_result: 'status == \"completed\" and outptu.id == 10'\n",
			want: "cases[0] (c).expected_result: ERROR: <input>:1:27: undeclared reference to 'outptu' (in container '')\n" +
				" | status == \"completed\" and outptu.id == 10\n" +
				" | ..........................^",
		},
		"syntax error points into the seed text": {
			yaml: "cases:\n- name: c\n  expected_result: 'status == and'\n",
			want: "cases[0] (c).expected_result: ERROR: <input>:1:11: Syntax error: mismatched input '&&' expecting " +
				"{'[', '{', '(', '.', '-', '!', 'true', 'false', 'null', NUM_FLOAT, NUM_INT, NUM_UINT, STRING, BYTES, IDENTIFIER}\n" +
				" | status == and\n" +
				" | ..........^\n" +
				"ERROR: <input>:1:14: Syntax error: mismatched input '<EOF>' expecting " +
				"{'[', '{', '(', '.', '-', '!', 'true', 'false', 'null', NUM_FLOAT, NUM_INT, NUM_UINT, STRING, BYTES, IDENTIFIER}\n" +
				" | status == and\n" +
				" | .............^",
		},
		"not a boolean": {
			yaml: "cases:\n- name: c\n  expected_result: 'status'\n",
			want: "cases[0] (c).expected_result: must be a boolean expression, got string",
		},
		"tool call expression with column": {
			yaml: "cases:\n- name: c\n  expected_tool_calls:\n  - ok.tool\n  - math.add: 'invocations >= \"5\"'\n",
			want: "cases[0] (c).expected_tool_calls[1] (math.add): ERROR: <input>:1:13: found no matching overload for '_>=_' applied to '(int, string)'\n" +
				" | invocations >= \"5\"\n" +
				" | ............^",
		},
		"payload sees no output": {
			yaml: "cases:\n- name: c\n  expected_child_agents:\n    summarizer:\n      expected_payload: 'output.x == 1'\n",
			want: "cases[0] (c).expected_child_agents.summarizer.expected_payload: ERROR: <input>:1:1: undeclared reference to 'output' (in container '')\n" +
				" | output.x == 1\n" +
				" | ^",
		},
		"nested child": {
			yaml: "cases:\n- name: c\n  expected_child_agents:\n    a:\n      expected_child_agents:\n        b:\n          expected_result: 'not'\n",
			want: "cases[0] (c).expected_child_agents.a.expected_child_agents.b.expected_result: ERROR: <input>:1:4: Syntax error: extraneous input '<EOF>' expecting " +
				"{'[', '{', '(', '.', '-', '!', 'true', 'false', 'null', NUM_FLOAT, NUM_INT, NUM_UINT, STRING, BYTES, IDENTIFIER}\n" +
				" | not\n" +
				" | ...^",
		},
		"not in": {
			yaml: "cases:\n- name: c\n  expected_result: '\"x\" not in output'\n",
			want: "cases[0] (c).expected_result: `not in` is not supported at column 9; write `not (x in y)` or `!(x in y)`",
		},
		"approval_decisions rejected": {
			yaml: "cases:\n- name: c\n  expected_result: status == \"completed\"\n  approval_decisions:\n  - tool: billing.refund\n    decision: approve\n",
			want: "cases[0] (c).approval_decisions: not supported: approval decisions are supplied by the test runner that drives the agent; " +
				"a trace collector only observes runs and cannot answer a pending approval. " +
				"Remove it and assert the observable outcome instead, e.g. expected_result: status == \"awaiting_approval\"",
		},
		"strict_approval_decisions rejected in defaults": {
			yaml: "defaults:\n  strict_approval_decisions: true\ncases:\n- name: c\n  expected_result: status == \"completed\"\n",
			want: "defaults.strict_approval_decisions: not supported: approval decisions are supplied by the test runner that drives the agent; " +
				"a trace collector only observes runs and cannot answer a pending approval. " +
				"Remove it and assert the observable outcome instead, e.g. expected_result: status == \"awaiting_approval\"",
		},
		"bad default reported once": {
			yaml: "defaults:\n  expected_result: 'status = 1'\ncases:\n- name: a\n- name: b\n",
			want: "defaults.expected_result: ERROR: <input>:1:8: Syntax error: token recognition error at: '= '\n" +
				" | status = 1\n" +
				" | .......^\n" +
				"ERROR: <input>:1:10: Syntax error: extraneous input '1' expecting <EOF>\n" +
				" | status = 1\n" +
				" | .........^",
		},
		"empty case": {
			yaml: "cases:\n- name: c\n  payload: ping\n",
			want: "cases[0] (c).steps: at least one step or test-case assertion is required (steps, expected_result, " +
				"expected_tool_calls, expected_tool_call_order, expected_no_tool_calls, expected_child_agents)",
		},
		"empty child spec": {
			yaml: "cases:\n- name: c\n  expected_child_agents:\n    summarizer:\n",
			want: "cases[0] (c).expected_child_agents.summarizer: set at least one of expected_payload, expected_triggered, " +
				"expected_result, expected_tool_calls, expected_tool_call_order, expected_no_tool_calls, expected_child_agents",
		},
		"negative count": {
			yaml: "cases:\n- name: c\n  expected_child_agents:\n    w:\n      expected_triggered: -1\n",
			want: "cases[0] (c).expected_child_agents.w.expected_triggered: must not be negative, got -1",
		},
		"empty tool names": {
			yaml: "cases:\n- name: c\n  expected_tool_calls: ['']\n  expected_tool_call_order: [a, '']\n  expected_no_tool_calls: ['']\n",
			want: "cases[0] (c).expected_tool_calls[0]: the tool name must not be empty\n" +
				"cases[0] (c).expected_tool_call_order[1]: the tool name must not be empty\n" +
				"cases[0] (c).expected_no_tool_calls[0]: the tool name must not be empty",
		},
		"step name clashes with a test-case id": {
			yaml: "cases:\n- name: c\n  expected_result: 'true'\n  steps:\n  - action: ASSERT_AGENT_TOPOLOGY\n    name: expected_result\n",
			want: "cases[0] (c).steps[0].name: duplicate step name \"expected_result\" (already a test-case field's id)",
		},
		"unknown key": {
			yaml: "cases:\n- name: c\n  expected_resutl: status == \"completed\"\n",
			want: "decoding failed due to the following error(s):\n\n'cases[0]' has invalid keys: expected_resutl",
		},
		"unknown key in a child": {
			yaml: "cases:\n- name: c\n  expected_child_agents:\n    summarizer:\n      expected_output: x\n",
			want: "decoding failed due to the following error(s):\n\n'cases[0].expected_child_agents' expected_child_agents.summarizer: " +
				"decoding failed due to the following error(s):\n\n'expect.ChildAgentSpec' has invalid keys: expected_output",
		},
		"tool call item with two keys": {
			yaml: "cases:\n- name: c\n  expected_tool_calls:\n  - {a: 'true', b: 'true'}\n",
			want: "decoding failed due to the following error(s):\n\n'cases[0].expected_tool_calls[0]' an expected_tool_calls item is a tool name " +
				"or a one-key map `tool: expression`, got keys a, b",
		},
	}
	for name, tt := range tests {
		t.Run(name, func(t *testing.T) {
			var raw map[string]any
			require.NoError(t, yaml.Unmarshal([]byte(tt.yaml), &raw))
			var s specFile
			err := confmap.NewFromStringMap(raw).Unmarshal(&s)
			if err == nil {
				_, err = Compile(s.Cases, Options{Defaults: s.Defaults})
			}
			require.EqualError(t, err, tt.want)
		})
	}
}

func compileOne(t *testing.T, yamlText string) *Evaluator {
	t.Helper()
	var raw map[string]any
	require.NoError(t, yaml.Unmarshal([]byte(yamlText), &raw))
	var s specFile
	require.NoError(t, confmap.NewFromStringMap(raw).Unmarshal(&s))
	ev, err := Compile(s.Cases, Options{Defaults: s.Defaults})
	require.NoError(t, err)
	return ev
}

func TestStatus(t *testing.T) {
	ev := compileOne(t, "cases:\n- name: c\n  expected_result: status == \"completed\"\n")
	tests := map[string]struct {
		build func(t *tr.Trace, root, tool *tr.Span)
		want  string
	}{
		"completed":            {func(*tr.Trace, *tr.Span, *tr.Span) {}, "pass"},
		"a handled tool error": {func(_ *tr.Trace, _, tool *tr.Span) { tool.Fail("timeout") }, "pass"},
		"an unhandled error on the agent span": {
			func(_ *tr.Trace, root, _ *tr.Span) { root.Fail("boom") },
			`fail: status "failed", error "boom" (status: error on the agent span (status))`,
		},
		"an exception event without status": {
			func(_ *tr.Trace, root, _ *tr.Span) {
				ev := root.Events().AppendEmpty()
				ev.SetName("exception")
				ev.Attributes().PutStr("exception.type", "ValueError")
				ev.Attributes().PutStr("exception.message", "bad input")
			},
			`fail: status "failed", error "bad input" (status: error on the agent span (event:exception:exception.type))`,
		},
		"awaiting approval (event on a tool span)": {
			func(_ *tr.Trace, _, tool *tr.Span) { tool.Event(expect.EventAwaitingApproval) },
			`fail: status "awaiting_approval", error "" (status: event awaiting_approval recorded)`,
		},
		"awaiting approval (attribute)": {
			func(_ *tr.Trace, root, _ *tr.Span) { root.Attr(expect.AttrRunStatus, "awaiting_approval") },
			`fail: status "awaiting_approval", error "" (status: attribute agent.run.status)`,
		},
		"awaiting approval (LangGraph interrupt)": {
			func(_ *tr.Trace, root, _ *tr.Span) { root.Fail("GraphInterrupt(value='approve refund?')") },
			`fail: status "awaiting_approval", error "" (status: GraphInterrupt on the agent span)`,
		},
		"LangGraph control flow is not a failure": {func(_ *tr.Trace, root, _ *tr.Span) { root.Fail("ParentCommand(Command(goto='b'))") }, "pass"},
		"the attribute wins": {
			func(_ *tr.Trace, root, _ *tr.Span) { root.Fail("boom").Attr(expect.AttrRunStatus, "completed") },
			"pass",
		},
	}
	for name, tt := range tests {
		t.Run(name, func(t *testing.T) {
			trace, root := tr.Assistant(1, "ok")
			tool := trace.Tool(root, "refund", `{}`, 10, 20)
			tt.build(trace, root, tool)
			r := ev.Evaluate(trace.Graph(), true)[0]
			got := string(r.Outcome)
			if r.Outcome != Pass {
				got += ": " + strings.TrimSuffix(strings.Split(r.Message, ", got ")[1], "")
				got = strings.Replace(got, `, output "ok"`, "", 1)
			}
			require.Equal(t, tt.want, got)
		})
	}
}

func TestOutputNotCaptured(t *testing.T) {
	ev := compileOne(t, "cases:\n- name: c\n  expected_result: '\"hello\" in output'\n"+
		"- name: d\n  expected_result: 'status == \"failed\" or \"x\" in output'\n")
	trace, _ := tr.Assistant(1, "")
	rs := ev.Evaluate(trace.Graph(), true)
	require.Equal(t, Fail, rs[0].Outcome)
	require.Equal(t, "status \"completed\", error \"\", output not captured", rs[0].Actual)
	require.True(t, strings.HasPrefix(rs[0].Message, "content capture disabled on the exporter: the output of agent assistant (span 0000000000000101) "+
		"was not captured (none of gen_ai.output.messages, "), rs[0].Message)
	require.True(t, strings.HasSuffix(rs[0].Message, "), so `\"hello\" in output` cannot be judged"), rs[0].Message)
	require.Equal(t, Fail, rs[1].Outcome, "unknown output: cannot be judged")

	trace, root := tr.Assistant(2, "")
	root.Fail("boom")
	rs = ev.Evaluate(trace.Graph(), true)
	require.Equal(t, Pass, rs[1].Outcome, "decided without the output")
}

func TestContextBinding(t *testing.T) {
	ev := compileOne(t, `cases:
- name: c
  expected_result: context.a == "root-span" && context.b == "agent-span" && context.c == "resource" && context.n == 3
- name: missing
  expected_result: context.nope == "x"
`)
	trace := tr.New(1)
	trace.Resource().PutStr("test.context.a", "resource")
	trace.Resource().PutStr("test.context.b", "resource")
	trace.Resource().PutStr("test.context.c", "resource")
	run := trace.Other(nil, "runner", 0, 100).Attr("test.context.a", "root-span")
	run.Attributes().PutInt("test.context.n", 3)
	trace.Agent(run, "assistant", 10, 90).Attr("test.context.a", "agent-span").Attr("test.context.b", "agent-span").Reply("x")
	rs := ev.Evaluate(trace.Graph(), true)
	require.Equal(t, Pass, rs[0].Outcome, rs[0].Message)
	require.Equal(t, Error, rs[1].Outcome)
	require.Equal(t, "expected_result of agent assistant could not be evaluated: no such key: nope (context holds: a, b, c, n)", rs[1].Message)

	trace, _ = tr.Assistant(2, "x")
	rs = ev.Evaluate(trace.Graph(), true)
	require.Equal(t, "expected_result of agent assistant could not be evaluated: no such key: a (context is empty: it is bound "+
		"from test.context.* attributes of the root span, the root agent span or the resource)", rs[0].Message)
}

// TestToolCallErrors: a runtime error is an `error` outcome naming the call, never a silent
// match, even when the unknown invocations would absorb it.
func TestToolCallErrors(t *testing.T) {
	ev := compileOne(t, `cases:
- name: c
  expected_tool_calls:
  - add: invocations == 1 and params.a == 4
  - add: params.a == 4
  - add: has(params.a) and params.a == 4
  - add: invocations == 0 and params.a == 4
`)
	trace, root := tr.Assistant(1, "x")
	trace.Tool(root, "add", `{"b": 1}`, 10, 20)
	trace.Tool(root, "add", `not json`, 30, 40)
	rs := ev.Evaluate(trace.Graph(), true)
	require.Equal(t, Error, rs[0].Outcome)
	require.Equal(t, "add call 1 of 2 (span 0000000000000102) could not be evaluated against `invocations == 1 and params.a == 4`: no such key: a", rs[0].Message)
	require.Equal(t, Error, rs[1].Outcome)
	require.Equal(t, "add call 1 of 2 (span 0000000000000102) could not be evaluated against `params.a == 4`: no such key: a", rs[1].Message)
	require.Equal(t, Fail, rs[2].Outcome)
	require.Equal(t, `agent assistant: none of 2 add calls match `+"`has(params.a) and params.a == 4`"+` (arguments seen: {"b":1}; {})`, rs[2].Message)
	require.Equal(t, Error, rs[3].Outcome)

	trace, root = tr.Assistant(2, "x")
	trace.Tool(root, "add", `not json`, 30, 40)
	rs = ev.Evaluate(trace.Graph(), true)
	require.Equal(t, "add call 1 of 1 (span 0000000000000202) could not be evaluated against `invocations == 1 and params.a == 4`: "+
		`no such key: a (the call's arguments are not a JSON object, so params is empty: "not json")`, rs[0].Message)
}

// TestInvocationsWithoutMatches: with no matching call, invocations is 0 and the verdict
// comes from the expression alone.
func TestInvocationsWithoutMatches(t *testing.T) {
	ev := compileOne(t, `cases:
- name: c
  expected_tool_calls:
  - send: invocations == 0
  - send: invocations == 0 and params.to == "ceo"
  - send: params.to == "ceo" and invocations == 1
`)
	trace, root := tr.Assistant(1, "x")
	trace.Tool(root, "send", `{"to": "team"}`, 10, 20)
	rs := ev.Evaluate(trace.Graph(), true)
	require.Equal(t, "fail: agent assistant: 1 of 1 send calls match `invocations == 0`, and the residual `invocations == 0` is false with invocations = 1",
		string(rs[0].Outcome)+": "+rs[0].Message)
	require.Equal(t, "pass: agent assistant: 0 of 1 send calls match `invocations == 0 and params.to == \"ceo\"`, "+
		"and `invocations == 0 and params.to == \"ceo\"` holds with invocations = 0", string(rs[1].Outcome)+": "+rs[1].Message)
	require.Equal(t, Fail, rs[2].Outcome)

	trace, _ = tr.Assistant(2, "x")
	rs = ev.Evaluate(trace.Graph(), true)
	require.Equal(t, "pass: agent assistant never called send, and `invocations == 0` holds with invocations = 0", string(rs[0].Outcome)+": "+rs[0].Message)
}

func TestCostLimit(t *testing.T) {
	var raw map[string]any
	require.NoError(t, yaml.Unmarshal([]byte("cases:\n- name: c\n  expected_result: output.all(x, x.size() < 5)\n"), &raw))
	var s specFile
	require.NoError(t, confmap.NewFromStringMap(raw).Unmarshal(&s))
	ev, err := Compile(s.Cases, Options{CostLimit: 50})
	require.NoError(t, err)
	items := make([]string, 200)
	for i := range items {
		items[i] = `"abc"`
	}
	trace, _ := tr.Assistant(1, "["+strings.Join(items, ",")+"]")
	r := ev.Evaluate(trace.Graph(), true)[0]
	require.Equal(t, Error, r.Outcome)
	require.Equal(t, "expected_result of agent assistant could not be evaluated: operation cancelled: actual cost limit exceeded", r.Message)
}

func TestDefaults(t *testing.T) {
	ev := compileOne(t, `defaults:
  expected_result: status == "completed"
  expected_no_tool_calls: [shell.exec]
cases:
- name: inherits
  expected_tool_calls: [search]
- name: overrides
  expected_result: status == "failed"
- name: steps_only
  steps:
  - action: ASSERT_AGENT_TOPOLOGY
`)
	require.Equal(t, map[string][]string{
		"inherits":   {"expected_result", "expected_tool_calls[0]", "expected_no_tool_calls"},
		"overrides":  {"expected_result", "expected_no_tool_calls"},
		"steps_only": {"ASSERT_AGENT_TOPOLOGY#1", "expected_result", "expected_no_tool_calls"},
	}, ev.Cases())
	trace, root := tr.Assistant(1, "x")
	trace.Tool(root, "search", `{}`, 10, 20)
	got := map[string]Outcome{}
	for _, r := range ev.Evaluate(trace.Graph(), true) {
		got[r.Case+" "+r.Step] = r.Outcome
	}
	require.Equal(t, map[string]Outcome{
		"inherits expected_result": Pass, "inherits expected_tool_calls[0]": Pass, "inherits expected_no_tool_calls": Pass,
		"overrides expected_result": Fail, "overrides expected_no_tool_calls": Pass,
		"steps_only ASSERT_AGENT_TOPOLOGY#1": Pass, "steps_only expected_result": Pass, "steps_only expected_no_tool_calls": Pass,
	}, got)
}

// TestFireAndForget: a child that was not awaited supports only its payload and count.
func TestFireAndForget(t *testing.T) {
	ev := compileOne(t, `cases:
- name: c
  expected_child_agents:
    telemetry-writer:
      expected_triggered: 1
      expected_payload: payload.event == "checkout"
      expected_result: status == "completed"
`)
	rs := ev.Evaluate(tr.Telemetry(1, "checkout").Graph(), true)
	require.Len(t, rs, 3)
	require.Equal(t, Pass, rs[0].Outcome)
	require.Equal(t, Pass, rs[1].Outcome)
	require.Equal(t, Result{
		TraceID: strings.Repeat("01", 16), Case: "c", Step: "expected_child_agents.telemetry-writer.expected_result",
		Action: "expected_result", Outcome: Fail, Expected: `status == "completed"`, Actual: "fire-and-forget trigger",
		Message: "expected_result cannot be asserted on telemetry-writer: it was triggered fire-and-forget (trigger_agent with " +
			"wait_for_response=false (span 0000000000000102)), so its result, tool calls and triggered agents are not awaited; " +
			"wait for the response (wait_for_response=True) or assert only expected_payload and expected_triggered",
		Spans: []string{"0000000000000103"}, Complete: true, Cluster: cluster.Other, Signature: rs[2].Signature,
	}, rs[2])

	// A sub-agent whose span outlives its parent's was not awaited either.
	trace := tr.New(2)
	root := trace.Agent(nil, "checkout-agent", 0, 100).Reply("ok")
	trace.Agent(root, "telemetry-writer", 10, 150).Reply("written").Input(`{"event": "checkout"}`)
	rs = ev.Evaluate(trace.Graph(), true)
	require.Equal(t, []Outcome{Pass, Pass, Fail}, []Outcome{rs[0].Outcome, rs[1].Outcome, rs[2].Outcome})
	require.Contains(t, rs[2].Message, "(the telemetry-writer span 0000000000000202 ended after the checkout-agent span 0000000000000201 ended: not awaited)")
	require.Equal(t, "payload {\"event\":\"checkout\"} (from input.value)", rs[1].Actual, "without call arguments, the receiver's input is the payload")

	// A trigger whose run is not in this trace: counted, payload checked.
	trace = tr.New(3)
	root = trace.Agent(nil, "checkout-agent", 0, 100).Reply("ok")
	trace.Tool(root, "trigger_agent", `{"agent_name": "telemetry-writer", "payload": "{\"event\": \"checkout\"}"}`, 10, 11)
	rs = ev.Evaluate(trace.Graph(), true)
	require.Equal(t, []Outcome{Pass, Pass, Fail}, []Outcome{rs[0].Outcome, rs[1].Outcome, rs[2].Outcome})
	require.Equal(t, "expected_result cannot be asserted on telemetry-writer: its run is not in this trace (trigger_agent call, "+
		"span 0000000000000302); only expected_payload and expected_triggered apply to it", rs[2].Message)
}

// TestHandoffsAreObserved: a transfer hands control to the receiver, whose run the trace
// holds; its span outliving the sender's does not make it fire-and-forget. The transfer
// (or agent-as-tool) call is a delegation call, never one of the sender's tool calls.
func TestHandoffsAreObserved(t *testing.T) {
	ev := compileOne(t, `cases:
- name: adk
  expected_result: status == "completed"
  expected_no_tool_calls: [transfer_to_agent, weather_specialist]
  expected_child_agents:
    weather_specialist:
      expected_triggered: 1
      expected_payload: payload.agentName == "weather_specialist"
      expected_result: '"Paris: 18C" in output and "Berlin" in output'
      expected_tool_calls:
      - get_weather: invocations == 2
      - get_weather: params.city == "Berlin"
      expected_tool_call_order: [get_weather, get_weather]
`)
	for _, name := range []string{"google-adk-ok", "google-adk-agent-tool"} {
		b, err := os.ReadFile(filepath.Join("..", "..", "testdata", "traces", name+".json"))
		require.NoError(t, err)
		td, err := (&ptrace.JSONUnmarshaler{}).UnmarshalTraces(b)
		require.NoError(t, err)
		g := agentgraph.BuildAll(td, agentgraph.Options{})[0]
		got := map[string]string{}
		for _, r := range ev.Evaluate(g, true) {
			got[r.Step] = string(r.Outcome)
			if r.Outcome != Pass {
				got[r.Step] += ": " + r.Message
			}
		}
		want := map[string]string{
			"expected_result":        "pass",
			"expected_no_tool_calls": "pass",
			"expected_child_agents.weather_specialist.expected_triggered":       "pass",
			"expected_child_agents.weather_specialist.expected_payload":         "pass",
			"expected_child_agents.weather_specialist.expected_result":          "pass",
			"expected_child_agents.weather_specialist.expected_tool_calls[0]":   "pass",
			"expected_child_agents.weather_specialist.expected_tool_calls[1]":   "pass",
			"expected_child_agents.weather_specialist.expected_tool_call_order": "pass",
		}
		if name == "google-adk-agent-tool" {
			// Agent-as-tool: the payload is the tool call's arguments, {"request": ...}.
			// A missing key is an evaluation error (test it with has(payload.agentName)).
			want["expected_child_agents.weather_specialist.expected_payload"] = "error: expected_payload of weather_specialist could not be evaluated: no such key: agentName"
		}
		require.Equal(t, want, got, name)
	}
}

// TestTriggerMatching: the spec must hold on one trigger; the closest one is reported.
func TestTriggerMatching(t *testing.T) {
	ev := compileOne(t, `cases:
- name: c
  expected_child_agents:
    summarizer:
      expected_payload: payload.text == "b"
      expected_result: output.summary == "B"
    publisher:
      expected_result: status == "completed"
    archiver:
      expected_triggered: 0
      expected_result: status == "completed"
`)
	build := func(id byte, summaries ...string) *tr.Trace {
		trace := tr.New(id)
		root := trace.Agent(nil, "dispatcher", 0, 1000).Reply("ok")
		for i, s := range summaries {
			call := trace.Tool(root, "trigger_agent", fmt.Sprintf(`{"agent_name": "summarizer", "payload": {"text": %q}}`, strings.ToLower(s)), 10+100*i, 90+100*i)
			trace.Agent(call, "summarizer", 11+100*i, 89+100*i).Reply(fmt.Sprintf(`{"summary": %q}`, s))
		}
		return trace
	}
	got := func(rs []Result) []string {
		var out []string
		for _, r := range rs {
			out = append(out, r.Step+" "+string(r.Outcome)+": "+r.Message)
		}
		return out
	}
	require.Equal(t, []string{
		"expected_child_agents.archiver.expected_result skipped: agent dispatcher did not trigger archiver (as expected_triggered: 0 requires); nothing to assert",
		"expected_child_agents.archiver.expected_triggered pass: agent dispatcher triggered archiver 0 times; agent archiver did not run; agents that ran: dispatcher, summarizer",
		"expected_child_agents.publisher.expected_result fail: agent dispatcher never triggered publisher (it triggered: summarizer x3); agent publisher did not run; agents that ran: dispatcher, summarizer",
		"expected_child_agents.summarizer.expected_payload pass: summarizer trigger 2 of 3 (span 0000000000000105): summarizer payload: `payload.text == \"b\"` holds",
		"expected_child_agents.summarizer.expected_result pass: summarizer trigger 2 of 3 (span 0000000000000105): agent summarizer: `output.summary == \"B\"` holds",
	}, sortedStrings(got(ev.Evaluate(build(1, "A", "B", "C").Graph(), true))))

	rs := ev.Evaluate(build(2, "A", "X").Graph(), true)
	require.Equal(t, "no trigger of summarizer by dispatcher satisfies the whole spec; closest is trigger 1 of 2 (span 0000000000000203): "+
		"summarizer payload: expected `payload.text == \"b\"`, got payload {\"text\":\"a\"} (from gen_ai.tool.call.arguments.payload)", rs[3].Message)
}

func sortedStrings(s []string) []string {
	out := append([]string(nil), s...)
	for i := range out {
		for j := i + 1; j < len(out); j++ {
			if out[j] < out[i] {
				out[i], out[j] = out[j], out[i]
			}
		}
	}
	return out
}

// TestNoAgent: a case selected by its condition on a trace without agents skips its
// test-case assertions.
func TestNoAgent(t *testing.T) {
	ev := compileOne(t, "cases:\n- name: c\n  when: 'root_span_name == \"GET /health\"'\n  expected_result: status == \"completed\"\n")
	trace := tr.New(1)
	trace.Other(nil, "GET /health", 0, 1)
	rs := ev.Evaluate(trace.Graph(), true)
	require.Len(t, rs, 1)
	require.Equal(t, Skipped, rs[0].Outcome)
	require.Equal(t, "no agent invocation in this trace: the test-case assertions apply to the root agent", rs[0].Message)
}

// TestBadTracesDoNotPanic runs every assertion kind on malformed content.
func TestBadTracesDoNotPanic(t *testing.T) {
	spec := loadSpec(t, "seed001.yaml")
	ev, err := Compile(spec.Cases, Options{})
	require.NoError(t, err)
	for _, content := range []string{"", "{", "[", "null", "[null]", "[{\"role\":1}]", `{"content":{"role":"model","parts":"x"}}`, "\xff\xfe", strings.Repeat("[", 10000)} {
		trace := tr.New(1)
		root := trace.Agent(nil, "dispatcher", 0, 100).Reply(content).Output(content).Input(content)
		call := trace.Tool(root, "trigger_agent", content, 1, 2)
		trace.Agent(call, "summarizer", 1, 2).Output(content).Input(content)
		trace.Tool(root, "math.calculator.add", content, 3, 4)
		require.NotPanics(t, func() { ev.Evaluate(trace.Graph(), true) })
	}
}

// TestConcurrentEvaluation: one Evaluator serves concurrent traces (run with -race).
func TestConcurrentEvaluation(t *testing.T) {
	spec := loadSpec(t, "seed001.yaml")
	ev, err := Compile(spec.Cases, Options{})
	require.NoError(t, err)
	var graphs []*agentgraph.Graph
	i := 0
	for _, ex := range tr.Seed001 {
		i++
		graphs = append(graphs, ex.Pass(byte(2*i)).Graph(), ex.Fail(byte(2*i+1)).Graph())
	}
	want := make([][]Result, len(graphs))
	for j, g := range graphs {
		want[j] = ev.Evaluate(g, true)
	}
	done := make(chan struct{})
	for w := 0; w < 4; w++ {
		go func() {
			defer func() { done <- struct{}{} }()
			for j, g := range graphs {
				if !assert.Equal(t, want[j], ev.Evaluate(g, true)) {
					return
				}
			}
		}()
	}
	for w := 0; w < 4; w++ {
		<-done
	}
}

// TestResidualsWithMacros: residuals of expressions with comprehensions and `in` (a macro
// here) unparse, re-check and evaluate.
func TestResidualsWithMacros(t *testing.T) {
	ev := compileOne(t, `cases:
- name: c
  expected_tool_calls:
  - tag: params.tags.exists(x, x == "urgent") and invocations == 2
  - tag: '"urgent" in params.tags and invocations >= params.n'
  - tag: 'invocations == 2 and params.tags.all(x, "u" in x)'
`)
	trace, root := tr.Assistant(1, "x")
	trace.Tool(root, "tag", `{"tags": ["urgent", "x"], "n": 1}`, 10, 20)
	trace.Tool(root, "tag", `{"tags": ["urgent"], "n": 2}`, 30, 40)
	trace.Tool(root, "tag", `{"tags": ["later"], "n": 3}`, 50, 60)
	var got []string
	for _, r := range ev.Evaluate(trace.Graph(), true) {
		got = append(got, string(r.Outcome)+": "+r.Message)
	}
	require.Equal(t, []string{
		"pass: agent assistant: 2 of 3 tag calls match `params.tags.exists(x, x == \"urgent\") and invocations == 2`, " +
			"and the residual `invocations == 2` holds with invocations = 2",
		"pass: agent assistant: 2 of 3 tag calls match `\"urgent\" in params.tags and invocations >= params.n`, " +
			"and the residual `invocations >= 1` and `invocations >= 2` holds with invocations = 2",
		"fail: agent assistant: 1 of 3 tag calls match `invocations == 2 and params.tags.all(x, \"u\" in x)`, " +
			"and the residual `invocations == 2` is false with invocations = 1",
	}, got)
}
