package rules

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
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

func setError(r *Result, format string, args ...any) {
	r.Outcome = Error
	if r.Actual == "" {
		r.Actual = "evaluation error"
	}
	r.Message = fmt.Sprintf(format, args...)
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
