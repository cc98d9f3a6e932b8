package rules

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"sort"
	"strconv"
	"strings"

	"github.com/google/cel-go/cel"

	"github.com/otelcol-handoff/otelcol-handoff/internal/agentgraph"
	"github.com/otelcol-handoff/otelcol-handoff/internal/celexpr"
	"github.com/otelcol-handoff/otelcol-handoff/internal/textsafe"
)

// compiledExpectations are AgentExpectations with their expressions compiled.
type compiledExpectations struct {
	result   *celexpr.Expr
	tools    []*compiledTool
	order    []string
	noTools  []string
	children []*compiledChild // sorted by agent name
}

type compiledTool struct {
	spec ToolCallSpec
	e    *celexpr.Expr // nil for a bare tool name
	// counts is true when the expression reads invocations.
	counts bool
}

type compiledChild struct {
	name      string
	payload   *celexpr.Expr
	triggered *int
	compiledExpectations
}

func (c *compiledExpectations) empty() bool {
	return c.result == nil && len(c.tools) == 0 && len(c.order) == 0 && len(c.noTools) == 0 && len(c.children) == 0
}

// inherit fills every empty part of c from d (the compiled defaults).
func (c *compiledExpectations) inherit(d *compiledExpectations) {
	if d == nil {
		return
	}
	if c.result == nil {
		c.result = d.result
	}
	if len(c.tools) == 0 {
		c.tools = d.tools
	}
	if len(c.order) == 0 {
		c.order = d.order
	}
	if len(c.noTools) == 0 {
		c.noTools = d.noTools
	}
	if len(c.children) == 0 {
		c.children = d.children
	}
}

// stepRef is one assertion a compiled spec produces: its step id, field (the action) and
// what it expects.
type stepRef struct{ id, action, expected string }

func (c *compiledExpectations) steps(prefix string) []stepRef {
	var out []stepRef
	if c.result != nil {
		out = append(out, stepRef{prefix + FieldExpectedResult, FieldExpectedResult, c.result.Src})
	}
	for i, ct := range c.tools {
		out = append(out, stepRef{fmt.Sprintf("%s%s[%d]", prefix, FieldExpectedToolCalls, i), FieldExpectedToolCalls, ct.expected()})
	}
	if len(c.order) > 0 {
		out = append(out, stepRef{prefix + FieldExpectedToolCallOrder, FieldExpectedToolCallOrder, orderExpected(c.order)})
	}
	if len(c.noTools) > 0 {
		out = append(out, stepRef{prefix + FieldExpectedNoToolCalls, FieldExpectedNoToolCalls, noToolsExpected(c.noTools)})
	}
	for _, ch := range c.children {
		out = append(out, ch.steps(childPrefix(prefix, ch.name))...)
	}
	return out
}

// steps of a child entry: its count, its payload, then its expectations on the receiver.
func (ch *compiledChild) steps(p string) []stepRef {
	var out []stepRef
	if ch.triggered != nil {
		out = append(out, stepRef{p + FieldExpectedTriggered, FieldExpectedTriggered, fmt.Sprintf("%s triggered %d times", ch.name, *ch.triggered)})
	}
	if ch.payload != nil {
		out = append(out, stepRef{p + FieldExpectedPayload, FieldExpectedPayload, ch.payload.Src})
	}
	return append(out, ch.compiledExpectations.steps(p)...)
}

func (ct *compiledTool) expected() string {
	if ct.e == nil {
		return ct.spec.Tool + " called at least once"
	}
	return ct.spec.Tool + ": " + ct.e.Src
}

func orderExpected(order []string) string {
	return strings.Join(order, " -> ") + " in this relative order"
}

func noToolsExpected(tools []string) string {
	return "none of " + strings.Join(tools, ", ") + " called"
}

func childPrefix(prefix, name string) string {
	return prefix + FieldExpectedChildAgents + "." + name + "."
}

// compileExpectations compiles the expressions of a at path at.
func compileExpectations(envs exprEnvs, at string, a AgentExpectations, costLimit uint64) (*compiledExpectations, []error) {
	c := &compiledExpectations{order: a.ExpectedToolCallOrder, noTools: a.ExpectedNoToolCalls}
	var errs []error
	if a.ExpectedResult != "" {
		e, err := celexpr.Compile(envs.result, a.ExpectedResult, costLimit, cel.OptPartialEval)
		if err != nil {
			errs = append(errs, fmt.Errorf("%s.%s: %w", at, FieldExpectedResult, err))
		}
		c.result = e
	}
	for i, spec := range a.ExpectedToolCalls {
		ct := &compiledTool{spec: spec}
		if strings.TrimSpace(spec.Expr) != "" {
			e, err := celexpr.Compile(envs.tool, spec.Expr, costLimit, cel.OptPartialEval|cel.OptTrackState)
			if err != nil {
				errs = append(errs, fmt.Errorf("%s.%s[%d] (%s): %w", at, FieldExpectedToolCalls, i, spec.Tool, err))
			} else {
				ct.e, ct.counts = e, e.Uses("invocations")
			}
		}
		c.tools = append(c.tools, ct)
	}
	for _, name := range sortedKeys(a.ExpectedChildAgents.specs) {
		spec := a.ExpectedChildAgents.specs[name]
		if spec == nil {
			continue
		}
		where := at + "." + FieldExpectedChildAgents + "." + name
		ch := &compiledChild{name: name, triggered: spec.ExpectedTriggered}
		if spec.ExpectedPayload != "" {
			e, err := celexpr.Compile(envs.payload, spec.ExpectedPayload, costLimit, cel.OptPartialEval)
			if err != nil {
				errs = append(errs, fmt.Errorf("%s.%s: %w", where, FieldExpectedPayload, err))
			}
			ch.payload = e
		}
		sub, subErrs := compileExpectations(envs, where, spec.AgentExpectations, costLimit)
		errs = append(errs, subErrs...)
		ch.compiledExpectations = *sub
		c.children = append(c.children, ch)
	}
	return c, errs
}

// traceEval holds what the seed-001 assertions share on one trace.
type traceEval struct {
	g     *agentgraph.Graph
	ctx   map[string]any
	facts map[*agentgraph.Invocation]runFacts
	// root is the root agent over its runs (rootAgent), once per trace.
	root *logicalAgent
	// deadline bounds the evaluation (eval_timeout): CEL is evaluated under it and each
	// agent's assertions check it first.
	deadline context.Context
}

func newTraceEval(g *agentgraph.Graph) *traceEval {
	return &traceEval{g: g, ctx: g.TestContext(), facts: map[*agentgraph.Invocation]runFacts{}, deadline: context.Background()}
}

// rootAgent is the trace's root agent as one logical agent (g.Root must be set).
func (te *traceEval) rootAgent() *logicalAgent {
	if te.root == nil {
		te.root = rootAgent(te.g)
	}
	return te.root
}

func (te *traceEval) factsOf(inv *agentgraph.Invocation) runFacts {
	f, ok := te.facts[inv]
	if !ok {
		f = factsOf(inv)
		te.facts[inv] = f
	}
	return f
}

// evalExpectations evaluates c on agent a (one run, or the root agent over all its runs);
// step ids start with prefix.
func (te *traceEval) evalExpectations(base Result, a *logicalAgent, c *compiledExpectations, prefix string) []Result {
	var out []Result
	if te.deadline.Err() != nil {
		for _, ref := range c.steps(prefix) {
			r := base
			r.Step, r.Action, r.Outcome = ref.id, ref.action, Error
			r.Expected, r.Actual = ref.expected, "not evaluated"
			r.Message = context.Cause(te.deadline).Error() + ": not evaluated"
			out = append(out, r)
		}
		return out
	}
	mk := func(id, action string) Result {
		r := base
		r.Step, r.Action = id, action
		return r
	}
	if c.result != nil {
		r := mk(prefix+FieldExpectedResult, FieldExpectedResult)
		te.evalResult(&r, a, c.result)
		out = append(out, r)
	}
	for i, ct := range c.tools {
		r := mk(fmt.Sprintf("%s%s[%d]", prefix, FieldExpectedToolCalls, i), FieldExpectedToolCalls)
		te.evalTool(&r, a, ct)
		r.Spans = append(a.spanIDs(), r.Spans...)
		out = append(out, r)
	}
	if len(c.order) > 0 {
		r := mk(prefix+FieldExpectedToolCallOrder, FieldExpectedToolCallOrder)
		toolOrder(&r, a, c.order)
		r.Spans = append(a.spanIDs(), r.Spans...)
		out = append(out, r)
	}
	if len(c.noTools) > 0 {
		r := mk(prefix+FieldExpectedNoToolCalls, FieldExpectedNoToolCalls)
		noToolCalls(&r, a, c.noTools)
		r.Spans = append(a.spanIDs(), r.Spans...)
		out = append(out, r)
	}
	for _, ch := range c.children {
		out = append(out, te.evalChild(base, a, ch, childPrefix(prefix, ch.name))...)
	}
	return out
}

// evalResult evaluates expected_result on the status, error and output of a's last run
// (the earlier runs' statuses are named in Actual).
func (te *traceEval) evalResult(r *Result, a *logicalAgent, e *celexpr.Expr) {
	inv := a.last()
	f := te.factsOf(inv)
	r.Expected = e.Src
	out := "not captured"
	if f.outputFound {
		out = show(f.output)
	}
	r.Actual = fmt.Sprintf("status %q, error %s, output %s", f.status, show(f.err), out)
	r.Spans = a.spanIDs()
	if n := len(a.runs); n > 1 {
		var earlier []string
		for i, run := range a.runs[:n-1] {
			earlier = append(earlier, fmt.Sprintf("run %d: %s", i+1, te.factsOf(run).status))
		}
		r.Actual = fmt.Sprintf("run %d of %d: %s (%s)", n, n, r.Actual, strings.Join(earlier, ", "))
	}
	vars := map[string]any{"status": f.status, "error": f.err, "context": te.ctx}
	var unknown []*cel.AttributePatternType
	if f.outputFound {
		vars["output"] = f.output
	} else {
		unknown = append(unknown, cel.AttributePattern("output"))
	}
	act, err := cel.PartialVars(vars, unknown...)
	if err != nil {
		setError(r, "expected_result of agent %s could not be evaluated: %v", a.label(), err)
		return
	}
	val, _, err := e.Eval(te.deadline, act)
	if err != nil {
		setError(r, "expected_result of agent %s could not be evaluated: %v%s", a.label(), err, contextHint(err, te.ctx, e))
		return
	}
	ok, isUnknown, err := celexpr.Bool(val)
	switch {
	case err != nil:
		setError(r, "expected_result of agent %s: %v", a.label(), err)
	case isUnknown:
		r.Outcome = Fail
		r.Message = fmt.Sprintf("content capture disabled on the exporter: the output of agent %s (span %s) was not captured "+
			"(none of %s), so `%s` cannot be judged", a.label(), inv.Span.ID, strings.Join(inv.Output.Tried, ", "), e.Src)
	case ok:
		r.Outcome = Pass
		r.Message = fmt.Sprintf("agent %s: `%s` holds", a.label(), e.Src)
	default:
		r.Outcome = Fail
		r.Message = fmt.Sprintf("agent %s: expected `%s`, got %s (status: %s)", a.label(), e.Src, r.Actual, f.statusWhy)
	}
}

// evalTool evaluates one expected_tool_calls entry with filter-then-count semantics: each
// call of the tool is evaluated with invocations unknown, and matches unless the result is
// false; invocations is then bound to the number of matching calls and the residual of each
// matching call evaluated.
func (te *traceEval) evalTool(r *Result, a *logicalAgent, ct *compiledTool) {
	tool := ct.spec.Tool
	var calls []*agentgraph.ToolCall
	for _, tc := range a.toolCalls {
		if tc.Name == tool {
			calls = append(calls, tc)
		}
	}
	r.Expected = ct.expected()
	if ct.e == nil {
		r.Actual = fmt.Sprintf("%d calls", len(calls))
		r.Spans = callSpans(calls)
		if len(calls) == 0 {
			r.Outcome = Fail
			r.Message = fmt.Sprintf("%s was never called by agent %s (%s)", tool, a.label(), toolSummary(a))
			return
		}
		r.Outcome = Pass
		r.Message = fmt.Sprintf("agent %s called %s %d times", a.label(), tool, len(calls))
		return
	}
	e := ct.e
	type residual struct {
		text string
		prg  cel.Program
	}
	var residuals []residual
	seen := map[string]bool{}
	var matching []*agentgraph.ToolCall
	var argsSeen []string
	for i, tc := range calls {
		params, isObject := tc.ParsedArgs()
		if len(argsSeen) < 3 {
			argsSeen = append(argsSeen, show(params))
		}
		act, err := cel.PartialVars(map[string]any{"params": params, "context": te.ctx}, cel.AttributePattern("invocations"))
		if err != nil {
			setError(r, "%s: %v", tool, err)
			return
		}
		val, det, err := e.Eval(te.deadline, act)
		if err != nil {
			r.Spans = []string{tc.Span.ID.String()}
			setError(r, "%s call %d of %d (span %s) could not be evaluated against `%s`: %v%s%s",
				tool, i+1, len(calls), tc.Span.ID, e.Src, err, argsHint(tc, isObject), contextHint(err, te.ctx, e))
			return
		}
		ok, isUnknown, err := celexpr.Bool(val)
		if err != nil {
			setError(r, "%s call %d of %d (span %s): %v", tool, i+1, len(calls), tc.Span.ID, err)
			return
		}
		if !isUnknown && !ok {
			continue
		}
		text := "true"
		var prg cel.Program
		if isUnknown {
			res, err := e.Residual(det)
			if err != nil {
				setError(r, "%s call %d of %d (span %s): residual of `%s`: %v", tool, i+1, len(calls), tc.Span.ID, e.Src, err)
				return
			}
			if celexpr.References(res)["params"] {
				// Only an error keeps params in the residual (e.g. a missing key, absorbed
				// by the unknown invocations).
				r.Spans = []string{tc.Span.ID.String()}
				setError(r, "%s call %d of %d (span %s) could not be evaluated against `%s`: %s%s",
					tool, i+1, len(calls), tc.Span.ID, e.Src, celexpr.StateError(det), argsHint(tc, isObject))
				return
			}
			prg, text, err = e.ResidualProgram(res)
			if err != nil {
				setError(r, "%s call %d of %d (span %s): residual of `%s`: %v", tool, i+1, len(calls), tc.Span.ID, e.Src, err)
				return
			}
		}
		matching = append(matching, tc)
		if !seen[text] {
			seen[text] = true
			residuals = append(residuals, residual{text, prg})
		}
	}
	n := len(matching)
	r.Actual = fmt.Sprintf("%d calls, %d matching", len(calls), n)
	r.Spans = callSpans(matching)
	if n == 0 {
		r.Spans = callSpans(calls)
	}
	filter := fmt.Sprintf("%d of %d %s calls match `%s`", n, len(calls), tool, e.Src)
	if !ct.counts {
		if n == 0 {
			r.Outcome = Fail
			if len(calls) == 0 {
				r.Message = fmt.Sprintf("%s was never called by agent %s (%s); `%s` needs at least one matching call", tool, a.label(), toolSummary(a), e.Src)
			} else {
				r.Message = fmt.Sprintf("agent %s: none of %d %s calls match `%s` (arguments seen: %s)", a.label(), len(calls), tool, e.Src, strings.Join(argsSeen, "; "))
			}
			return
		}
		r.Outcome = Pass
		r.Message = fmt.Sprintf("agent %s: %s", a.label(), filter)
		return
	}
	if n == 0 {
		// No call to take a residual from: evaluate with params unknown. Unknown means the
		// verdict depends only on the (absent) calls' params: it holds.
		act, err := cel.PartialVars(map[string]any{"invocations": int64(0), "context": te.ctx}, cel.AttributePattern("params"))
		if err != nil {
			setError(r, "%s: %v", tool, err)
			return
		}
		val, _, err := e.Eval(te.deadline, act)
		if err != nil {
			setError(r, "%s: `%s` could not be evaluated with invocations = 0: %v%s", tool, e.Src, err, contextHint(err, te.ctx, e))
			return
		}
		ok, isUnknown, err := celexpr.Bool(val)
		switch {
		case err != nil:
			setError(r, "%s: %v", tool, err)
		case ok || isUnknown:
			r.Outcome = Pass
			r.Message = fmt.Sprintf("agent %s: %s, and `%s` holds with invocations = 0", a.label(), filter, e.Src)
			if len(calls) == 0 {
				r.Message = fmt.Sprintf("agent %s never called %s, and `%s` holds with invocations = 0", a.label(), tool, e.Src)
			}
		case len(calls) == 0:
			r.Outcome = Fail
			r.Message = fmt.Sprintf("%s was never called by agent %s (%s), and `%s` is false with invocations = 0", tool, a.label(), toolSummary(a), e.Src)
		default:
			r.Outcome = Fail
			r.Message = fmt.Sprintf("agent %s: %s (arguments seen: %s), and `%s` is false with invocations = 0",
				a.label(), filter, strings.Join(argsSeen, "; "), e.Src)
		}
		return
	}
	var held []string
	for _, res := range residuals {
		if res.prg == nil {
			continue // the call matched outright (true)
		}
		val, _, err := res.prg.ContextEval(te.deadline, map[string]any{"invocations": int64(n), "context": te.ctx})
		if err != nil {
			setError(r, "%s: residual `%s` could not be evaluated with invocations = %d: %v", tool, res.text, n, err)
			return
		}
		ok, _, err := celexpr.Bool(val)
		if err != nil {
			setError(r, "%s: residual `%s`: %v", tool, res.text, err)
			return
		}
		if !ok {
			r.Outcome = Fail
			r.Message = fmt.Sprintf("agent %s: %s, and the residual `%s` is false with invocations = %d", a.label(), filter, res.text, n)
			return
		}
		held = append(held, "`"+res.text+"`")
	}
	r.Outcome = Pass
	if len(held) == 0 {
		r.Message = fmt.Sprintf("agent %s: %s", a.label(), filter)
		return
	}
	r.Message = fmt.Sprintf("agent %s: %s, and the residual %s holds with invocations = %d", a.label(), filter, strings.Join(held, " and "), n)
}

func argsHint(tc *agentgraph.ToolCall, isObject bool) string {
	if isObject {
		return ""
	}
	if !tc.Args.Found() {
		return fmt.Sprintf(" (the call's arguments were not captured: none of %s)", strings.Join(tc.Args.Tried, ", "))
	}
	return fmt.Sprintf(" (the call's arguments are not a JSON object, so params is empty: %s)", show(tc.Args.Text))
}

// contextHint lists the context keys when an expression that reads context failed on a
// missing key.
func contextHint(err error, ctx map[string]any, e *celexpr.Expr) string {
	if err == nil || !e.Uses("context") || !strings.Contains(err.Error(), "no such key") {
		return ""
	}
	keys := sortedKeys(ctx)
	if len(keys) == 0 {
		return " (context is empty: it is bound from " + ContextPrefix + "* attributes of the root span, the root agent span or the resource)"
	}
	return " (context holds: " + strings.Join(keys, ", ") + ")"
}

func toolOrder(r *Result, a *logicalAgent, order []string) {
	r.Expected = orderExpected(order)
	j := 0
	var spans []string
	for _, tc := range a.toolCalls {
		if j < len(order) && tc.Name == order[j] {
			spans = append(spans, tc.Span.ID.String())
			j++
		}
	}
	r.Actual = toolSequence(a)
	r.Spans = spans
	if j == len(order) {
		r.Outcome = Pass
		r.Message = fmt.Sprintf("agent %s called %s in order", a.label(), strings.Join(order, " -> "))
		return
	}
	r.Outcome = Fail
	if j == 0 {
		r.Message = fmt.Sprintf("agent %s: expected %s in this order, but %s was never called (calls: %s)",
			a.label(), strings.Join(order, " -> "), order[0], r.Actual)
		return
	}
	r.Message = fmt.Sprintf("agent %s: expected %s in this order, but no %s call follows %s (calls: %s)",
		a.label(), strings.Join(order, " -> "), order[j], strings.Join(order[:j], " -> "), r.Actual)
}

func noToolCalls(r *Result, a *logicalAgent, forbidden []string) {
	r.Expected = noToolsExpected(forbidden)
	bad := map[string]bool{}
	for _, name := range forbidden {
		bad[name] = true
	}
	counts := map[string]int{}
	for _, tc := range a.toolCalls {
		if bad[tc.Name] {
			counts[tc.Name]++
			r.Spans = append(r.Spans, tc.Span.ID.String())
		}
	}
	if len(counts) == 0 {
		r.Outcome, r.Actual = Pass, "none of them called"
		r.Message = fmt.Sprintf("agent %s called none of %s", a.label(), strings.Join(forbidden, ", "))
		return
	}
	r.Outcome, r.Actual = Fail, "called: "+formatCounts(counts)
	r.Message = fmt.Sprintf("agent %s called tools it must not call: %s", a.label(), formatCounts(counts))
}

// trigger is one time a parent triggered (handed off to, or called) a child agent.
type trigger struct {
	edge     *agentgraph.Edge       // nil when the receiver's run is not in this trace
	call     *agentgraph.ToolCall   // the delegating tool call, when there is one
	receiver *agentgraph.Invocation // nil when not in this trace
	args     agentgraph.Value       // the arguments recorded at call time
	// fireAndForget: the parent did not wait for the child (why says how we know), or the
	// child's run is not in this trace (receiver nil).
	fireAndForget bool
	why           string
	spanID        string
	start         uint64
}

// agentArgKeys are the argument keys that name a transfer's target agent (the model's).
var agentArgKeys = agentgraph.TargetArgKeys()

// transferByName matches transfer tool names, transfer_to_X and handoff_to_X (the model's).
var transferByName = agentgraph.TransferNamePattern()

// handoffDetections pass control from sender to receiver (an explicit handoff span, a
// transfer call, a graph's parent pointer, or consecutive sibling runs): the receiver runs
// after the sender by design, and its run is in the trace.
var handoffDetections = map[string]bool{
	agentgraph.DetectHandoffSpan: true, agentgraph.DetectTransferTool: true,
	agentgraph.DetectParentPointer: true, agentgraph.DetectInferredSibling: true,
	agentgraph.DetectCommandGoto: true,
}

// triggersOf lists the triggers of the agent called name by inv, in start order: every
// outgoing edge to it, plus trigger and transfer calls to it whose receiver did not run in
// this trace (their payload and count are still observable).
func (te *traceEval) triggersOf(inv *agentgraph.Invocation, name string) []*trigger {
	var out []*trigger
	via := map[*agentgraph.Span]bool{}
	// Trigger and transfer calls are delegation calls in the model, not tool calls (with
	// count_delegation_calls_as_tool_calls they are in both lists: each is seen once).
	calls := append(append([]*agentgraph.ToolCall(nil), inv.DelegationCalls...), inv.ToolCalls...)
	for _, e := range inv.Out {
		if e.Via != nil {
			via[e.Via] = true
		}
		if e.Call != nil {
			via[e.Call.Span] = true // a transfer call recorded by a HANDOFF span carried e
		}
		if e.To.Name != name {
			continue
		}
		t := &trigger{edge: e, receiver: e.To, args: e.Payload, spanID: e.To.Span.ID.String(), start: uint64(e.To.Span.Start())}
		if tc := viaCall(e); tc != nil && tc.Span.Owner() == inv {
			t.call = tc // the sender's own call carried the trigger
			t.start = uint64(tc.Span.Start())
		}
		t.fireAndForget, t.why = fireAndForget(e, t.call)
		out = append(out, t)
	}
	for _, tc := range calls {
		if via[tc.Span] || tc.TriggerTarget() != name {
			continue
		}
		via[tc.Span] = true
		out = append(out, &trigger{
			call: tc, args: tc.Args, fireAndForget: true,
			why:    fmt.Sprintf("its run is not in this trace (%s call, span %s)", tc.Name, tc.Span.ID),
			spanID: tc.Span.ID.String(), start: uint64(tc.Span.Start()),
		})
	}
	sort.SliceStable(out, func(i, j int) bool { return out[i].start < out[j].start })
	return out
}

// triggersOfAgent lists the triggers of the agent called name by all runs of a, in start
// order; a trigger of one of a's own runs (the same logical agent resumed) is none.
func (te *traceEval) triggersOfAgent(a *logicalAgent, name string) []*trigger {
	if len(a.runs) == 1 {
		return te.triggersOf(a.runs[0], name)
	}
	var out []*trigger
	for _, inv := range a.runs {
		for _, t := range te.triggersOf(inv, name) {
			if t.receiver == nil || !a.member[t.receiver] {
				out = append(out, t)
			}
		}
	}
	sort.SliceStable(out, func(i, j int) bool { return out[i].start < out[j].start })
	return out
}

// viaCall is the tool call that carried an edge's dispatch (nil: none, or the via span is
// not a tool call).
func viaCall(e *agentgraph.Edge) *agentgraph.ToolCall {
	if e.Via == nil {
		return nil
	}
	return e.Via.ToolCall()
}

// fireAndForget decides whether the sender waited for the receiver:
//  1. a seed trigger call says so: wait_for_response false (or trigger_agent_at, scheduled)
//     is fire-and-forget, wait_for_response true is awaited;
//  2. a handoff (explicit handoff span, transfer call other than a seed trigger, graph
//     parent pointer, inferred sibling) passes control to the receiver, whose run is then
//     observed in the trace: not fire-and-forget;
//  3. otherwise (sub-agent, agent-as-tool, trigger without the flag) the receiver's agent
//     span ending after the sender's agent span ended means nobody waited for it.
func fireAndForget(e *agentgraph.Edge, call *agentgraph.ToolCall) (bool, string) {
	if call != nil && call.IsTriggerAgentCall() {
		params, _ := call.ParsedArgs()
		if w, ok := params["wait_for_response"].(bool); ok {
			if !w {
				return true, fmt.Sprintf("%s with wait_for_response=false (span %s)", call.Name, call.Span.ID)
			}
			return false, "wait_for_response=true"
		}
		if call.Name == "trigger_agent_at" {
			return true, fmt.Sprintf("trigger_agent_at schedules the run (span %s)", call.Span.ID)
		}
	} else if handoffDetections[e.Detection] {
		return false, "handoff"
	}
	if e.From.Remote != nil || e.From.Span == nil || e.To.Span == nil {
		return false, "awaited"
	}
	if e.To.Span.End() > e.From.Span.End() {
		return true, fmt.Sprintf("the %s span %s ended after the %s span %s ended: not awaited", e.To.Name, e.To.Span.ID, e.From.Name, e.From.Span.ID)
	}
	return false, "awaited"
}

// evalChild evaluates one expected_child_agents entry under a. Its count is asserted on
// all triggers; the rest of the spec (payload, result, tools, nested children) must be
// satisfied by at least one trigger: the first trigger satisfying all of it is reported,
// else the one closest to it (most assertions passing, earliest on a tie).
func (te *traceEval) evalChild(base Result, a *logicalAgent, ch *compiledChild, p string) []Result {
	triggers := te.triggersOfAgent(a, ch.name)
	var out []Result
	if ch.triggered != nil {
		r := base
		r.Step, r.Action = p+FieldExpectedTriggered, FieldExpectedTriggered
		r.Expected = fmt.Sprintf("%s triggered %d times", ch.name, *ch.triggered)
		ff := 0
		for _, t := range triggers {
			r.Spans = append(r.Spans, t.spanID)
			if t.fireAndForget {
				ff++
			}
		}
		if len(triggers) == 0 {
			r.Spans = a.spanIDs()
		}
		r.Actual = fmt.Sprintf("%d times", len(triggers))
		if ff > 0 {
			r.Actual += fmt.Sprintf(" (%d fire-and-forget)", ff)
		}
		if len(triggers) == *ch.triggered {
			r.Outcome = Pass
			r.Message = fmt.Sprintf("agent %s triggered %s %s", a.label(), ch.name, r.Actual)
		} else {
			r.Outcome = Fail
			r.Message = fmt.Sprintf("expected agent %s to trigger %s %d times, saw %s", a.label(), ch.name, *ch.triggered, r.Actual)
		}
		if len(triggers) == 0 {
			r.Message = withNotRun(te.g, r.Message, ch.name)
		}
		out = append(out, r)
	}
	rest := ch.steps(p)
	if ch.triggered != nil {
		rest = rest[1:]
	}
	if len(rest) == 0 {
		return out
	}
	if len(triggers) == 0 {
		for _, ref := range rest {
			r := base
			r.Step, r.Action, r.Expected = ref.id, ref.action, ref.expected
			r.Actual = "not triggered"
			r.Spans = a.spanIDs()
			if ch.triggered != nil && *ch.triggered == 0 {
				r.Outcome = Skipped
				r.Message = fmt.Sprintf("agent %s did not trigger %s (as expected_triggered: 0 requires); nothing to assert", a.label(), ch.name)
			} else {
				r.Outcome = Fail
				r.Message = withNotRun(te.g, fmt.Sprintf("agent %s never triggered %s (%s)", a.label(), ch.name, childSummary(a)), ch.name)
			}
			out = append(out, r)
		}
		return out
	}
	var best []Result
	bestScore, bestIndex := -1, 0
	for i, t := range triggers {
		rs := te.evalTrigger(base, t, ch, p)
		score, ok := 0, true
		for _, r := range rs {
			switch r.Outcome {
			case Pass, Skipped:
				score++
			default:
				ok = false
			}
		}
		if ok {
			best, bestIndex = rs, i
			break
		}
		if score > bestScore {
			best, bestScore, bestIndex = rs, score, i
		}
	}
	t := triggers[bestIndex]
	for i := range best {
		if len(triggers) > 1 {
			if best[i].Outcome == Pass || best[i].Outcome == Skipped {
				best[i].Message = fmt.Sprintf("%s trigger %d of %d (span %s): %s", ch.name, bestIndex+1, len(triggers), t.spanID, best[i].Message)
			} else {
				best[i].Message = fmt.Sprintf("no trigger of %s by %s satisfies the whole spec; closest is trigger %d of %d (span %s): %s",
					ch.name, a.label(), bestIndex+1, len(triggers), t.spanID, best[i].Message)
			}
		}
	}
	return append(out, best...)
}

// evalTrigger evaluates a child spec (without its count) on one trigger.
func (te *traceEval) evalTrigger(base Result, t *trigger, ch *compiledChild, p string) []Result {
	var out []Result
	if ch.payload != nil {
		r := base
		r.Step, r.Action = p+FieldExpectedPayload, FieldExpectedPayload
		te.evalPayload(&r, t, ch)
		out = append(out, r)
	}
	if ch.compiledExpectations.empty() {
		return out
	}
	if t.fireAndForget {
		for _, ref := range ch.compiledExpectations.steps(p) {
			r := base
			r.Step, r.Action, r.Expected = ref.id, ref.action, ref.expected
			r.Outcome, r.Actual = Fail, "fire-and-forget trigger"
			r.Spans = []string{t.spanID}
			if t.receiver == nil {
				r.Actual = "run not in this trace"
				r.Message = fmt.Sprintf("%s cannot be asserted on %s: %s; only expected_payload and expected_triggered apply to it",
					ref.action, ch.name, t.why)
			} else {
				r.Message = fmt.Sprintf("%s cannot be asserted on %s: it was triggered fire-and-forget (%s), so its result, tool calls and "+
					"triggered agents are not awaited; wait for the response (wait_for_response=True) or assert only expected_payload and expected_triggered",
					ref.action, ch.name, t.why)
			}
			out = append(out, r)
		}
		return out
	}
	return append(out, te.evalExpectations(base, oneRun(t.receiver), &ch.compiledExpectations, p)...)
}

func (te *traceEval) evalPayload(r *Result, t *trigger, ch *compiledChild) {
	e := ch.payload
	value, raw, from, found := payloadOf(t)
	r.Expected = e.Src
	r.Spans = []string{t.spanID}
	vars := map[string]any{"context": te.ctx}
	var unknown []*cel.AttributePatternType
	if found {
		vars["payload"], vars["payload_raw"] = value, raw
		r.Actual = fmt.Sprintf("payload %s (from %s)", show(value), from)
	} else {
		unknown = append(unknown, cel.AttributePattern("payload"), cel.AttributePattern("payload_raw"))
		r.Actual = "payload not captured"
	}
	act, err := cel.PartialVars(vars, unknown...)
	if err != nil {
		setError(r, "expected_payload of %s: %v", ch.name, err)
		return
	}
	val, _, err := e.Eval(te.deadline, act)
	if err != nil {
		setError(r, "expected_payload of %s could not be evaluated: %v%s", ch.name, err, contextHint(err, te.ctx, e))
		return
	}
	ok, isUnknown, err := celexpr.Bool(val)
	switch {
	case err != nil:
		setError(r, "expected_payload of %s: %v", ch.name, err)
	case isUnknown:
		tried := "no receiving span"
		if t.receiver != nil {
			tried = "none of " + strings.Join(t.receiver.Input.Tried, ", ")
		}
		r.Outcome = Fail
		r.Message = fmt.Sprintf("content capture disabled on the exporter: the payload of %s (span %s) was not captured: "+
			"the trigger recorded no arguments and the receiving span has %s", ch.name, t.spanID, tried)
	case ok:
		r.Outcome = Pass
		r.Message = fmt.Sprintf("%s payload: `%s` holds", ch.name, e.Src)
	default:
		r.Outcome = Fail
		r.Message = fmt.Sprintf("%s payload: expected `%s`, got %s", ch.name, e.Src, r.Actual)
	}
}

func setError(r *Result, format string, args ...any) {
	r.Outcome = Error
	if r.Actual == "" {
		r.Actual = "evaluation error"
	}
	r.Message = fmt.Sprintf(format, args...)
}

func callSpans(calls []*agentgraph.ToolCall) []string {
	var out []string
	for _, tc := range calls {
		out = append(out, tc.Span.ID.String())
	}
	return out
}

// toolSummary names the tools an agent called, with counts.
func toolSummary(a *logicalAgent) string {
	if len(a.toolCalls) == 0 {
		return "it made no tool calls"
	}
	counts := map[string]int{}
	for _, tc := range a.toolCalls {
		counts[tc.Name]++
	}
	return "its tool calls: " + formatCounts(counts)
}

// childSummary names the agents an agent triggered, with counts.
func childSummary(a *logicalAgent) string {
	edges := a.out()
	if len(edges) == 0 {
		return "it triggered no agents"
	}
	counts := map[string]int{}
	for _, e := range edges {
		counts[e.To.Name]++
	}
	return "it triggered: " + formatCounts(counts)
}

// toolSequence lists an agent's tool calls in order (at most 20).
func toolSequence(a *logicalAgent) string {
	if len(a.toolCalls) == 0 {
		return "no tool calls"
	}
	var names []string
	for i, tc := range a.toolCalls {
		if i == 20 {
			names = append(names, fmt.Sprintf("... (%d more)", len(a.toolCalls)-20))
			break
		}
		names = append(names, tc.Name)
	}
	return strings.Join(names, ", ")
}

// maxShown bounds trace content quoted in results.
const maxShown = 200

// show renders a value for a message: strings quoted, other values as JSON, cut at
// maxShown bytes.
func show(v any) string {
	var s string
	switch v := v.(type) {
	case string:
		s = strconv.Quote(textsafe.Clip(v, maxShown))
		return s
	case nil:
		return "null"
	default:
		b, err := json.Marshal(v)
		if err != nil {
			s = fmt.Sprint(v)
		} else {
			s = string(b)
		}
	}
	return textsafe.Clip(s, maxShown)
}

var errNoRoot = errors.New("no agent invocation in this trace")
