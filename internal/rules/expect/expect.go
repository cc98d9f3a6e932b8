// Package expect holds the seed-001 test-case fields (expected_result, expected_tool_calls,
// expected_tool_call_order, expected_no_tool_calls, expected_child_agents), one per file
// (expect_*.go), each with its typed config, ValidateField, compiled form and evaluation, asserted
// on one logical agent over its runs (testcase_agent.go). The case engine (internal/rules)
// compiles a case's fields (CompileFields) and evaluates them on the root agent
// (TraceEval.Evaluate).
package expect

import (
	"context"
	"errors"

	"github.com/otelcol-handoff/otelcol-handoff/internal/rules/check"
)

// A seed-001 test-case field is one check kind on an agent, as a step is: its typed config
// (a field of AgentExpectations, decoded from the field's snake_case key) with its own
// ValidateField, its compiled form and its evaluation in one file (expect_*.go).

// expectField is the typed config of one test-case field.
type expectField interface {
	// set reports whether the field is set (an unset field is inherited from the defaults).
	set() bool
	// ValidateField checks what CEL compilation does not; each error starts with the field's
	// key. Not named Validate: confmap.Validate would call it again, with a path of its own.
	ValidateField() error
	// compile builds the field's check; errors start with the field's key.
	compile(env check.Env) (expectation, error)
}

// expectation is one test-case field, compiled.
type expectation interface {
	// refs are the results it produces under prefix (step ids, action, expected), in order.
	refs(prefix string) []check.Ref
	// evaluate asserts the field on agent a (one run, or the root agent over its runs),
	// appending its results to out.
	evaluate(te *TraceEval, base check.Result, a *logicalAgent, prefix string, out []check.Result) []check.Result
}

// fields lists a's fields in evaluation order.
func (a AgentExpectations) fields() []expectField {
	return []expectField{a.ExpectedResult, a.ExpectedToolCalls, a.ExpectedToolCallOrder, a.ExpectedNoToolCalls, a.ExpectedChildAgents}
}

func (a AgentExpectations) Empty() bool {
	for _, f := range a.fields() {
		if f.set() {
			return false
		}
	}
	return true
}

// validateExpectations checks a's fields; at is their path.
func validateExpectations(at string, a AgentExpectations) []error {
	var errs []error
	for _, f := range a.fields() {
		errs = append(errs, check.Prefixed(at, f.ValidateField())...)
	}
	return errs
}

// CompiledFields are an agent's test-case fields compiled: one slot per field, in
// evaluation order (nil: not set).
type CompiledFields struct {
	slots []expectation
}

// CompileFields compiles the fields of a; at is their path.
func CompileFields(env check.Env, at string, a AgentExpectations) (*CompiledFields, []error) {
	c := &CompiledFields{}
	var errs []error
	for _, f := range a.fields() {
		var e expectation
		if f.set() {
			var err error
			e, err = f.compile(env)
			errs = append(errs, check.Prefixed(at, err)...)
		}
		c.slots = append(c.slots, e)
	}
	return c, errs
}

func (c *CompiledFields) Empty() bool {
	for _, e := range c.slots {
		if e != nil {
			return false
		}
	}
	return true
}

// Inherit fills every field c does not set from d (the compiled defaults).
func (c *CompiledFields) Inherit(d *CompiledFields) {
	if d == nil {
		return
	}
	for i, e := range c.slots {
		if e == nil {
			c.slots[i] = d.slots[i]
		}
	}
}

func (c *CompiledFields) Refs(prefix string) []check.Ref {
	var out []check.Ref
	for _, e := range c.slots {
		if e != nil {
			out = append(out, e.refs(prefix)...)
		}
	}
	return out
}

// Evaluate evaluates c on agent a; step ids start with prefix.
func (te *TraceEval) Evaluate(base check.Result, a *logicalAgent, c *CompiledFields, prefix string) []check.Result {
	return te.EvaluateTo(nil, base, a, c, prefix)
}

// EvaluateTo is Evaluate appending the results to out.
func (te *TraceEval) EvaluateTo(out []check.Result, base check.Result, a *logicalAgent, c *CompiledFields, prefix string) []check.Result {
	if te.Deadline.Err() != nil {
		for _, ref := range c.Refs(prefix) {
			r := base
			r.Step, r.Action, r.Outcome = ref.ID, ref.Action, check.Error
			r.Expected, r.Actual = ref.Expected, "not evaluated"
			r.Message = context.Cause(te.Deadline).Error() + ": not evaluated"
			out = append(out, r)
		}
		return out
	}
	for _, e := range c.slots {
		if e != nil {
			out = e.evaluate(te, base, a, prefix, out)
		}
	}
	return out
}

// fieldResult starts a result of a test-case field.
func fieldResult(base check.Result, id, action string) check.Result {
	r := base
	r.Step, r.Action = id, action
	return r
}

// toolListCheck is a field that lists tool names, compiled (expected_no_tool_calls,
// expected_tool_call_order): its key, the tools and what it expects (made once).
type toolListCheck struct {
	field string
	tools []string
	want  string
}

func (l toolListCheck) refs(prefix string) []check.Ref {
	return []check.Ref{{ID: prefix + l.field, Action: l.field, Expected: l.want}}
}

func (l toolListCheck) evaluate(te *TraceEval, base check.Result, a *logicalAgent, prefix string, out []check.Result) []check.Result {
	r := fieldResult(base, prefix+l.field, l.field)
	r.Expected = l.want
	// Called by name, not through a func value: r stays on the stack.
	if l.field == FieldExpectedNoToolCalls {
		noToolCalls(&r, a, l.tools, te.Quiet)
	} else {
		toolOrder(&r, a, l.tools, te.Quiet)
	}
	te.agentSpans(&r, a)
	return append(out, r)
}

// agentSpans puts agent a's spans first in the Spans of r, a field's result on a, before
// the ones its check named (none when quiet).
func (te *TraceEval) agentSpans(r *check.Result, a *logicalAgent) {
	if !te.Quiet {
		r.Spans = append(a.spanIDs(), r.Spans...)
	}
}

// joinErrs joins the errors of a field's ValidateField or compile.
func joinErrs(errs []error) error { return errors.Join(errs...) }
