package rules

import (
	"context"
	"errors"
)

// A seed-001 test-case field is one check kind on an agent, as a step is: its typed config
// (a field of AgentExpectations, decoded from the field's snake_case key) with its own
// Validate, its compiled form and its evaluation in one file (expect_*.go).

// expectField is the typed config of one test-case field.
type expectField interface {
	// set reports whether the field is set (an unset field is inherited from the defaults).
	set() bool
	// Validate checks what CEL compilation does not; each error starts with the field's key.
	Validate() error
	// compile builds the field's check; errors start with the field's key.
	compile(env compileEnv) (expectation, error)
}

// expectation is one test-case field, compiled.
type expectation interface {
	// refs are the results it produces under prefix (step ids, action, expected), in order.
	refs(prefix string) []stepRef
	// evaluate asserts the field on agent a (one run, or the root agent over its runs).
	evaluate(te *traceEval, base Result, a *logicalAgent, prefix string) []Result
}

// stepRef is one assertion a compiled step or field produces: its step id, its action and
// what it expects.
type stepRef struct{ id, action, expected string }

// fields lists a's fields in evaluation order.
func (a AgentExpectations) fields() []expectField {
	return []expectField{a.ExpectedResult, a.ExpectedToolCalls, a.ExpectedToolCallOrder, a.ExpectedNoToolCalls, a.ExpectedChildAgents}
}

func (a AgentExpectations) empty() bool {
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
		errs = append(errs, prefixed(at, f.Validate())...)
	}
	return errs
}

// compiledExpectations are an agent's test-case fields compiled: one slot per field, in
// evaluation order (nil: not set).
type compiledExpectations struct {
	slots []expectation
}

// compileExpectations compiles the fields of a; at is their path.
func compileExpectations(env compileEnv, at string, a AgentExpectations) (*compiledExpectations, []error) {
	c := &compiledExpectations{}
	var errs []error
	for _, f := range a.fields() {
		var e expectation
		if f.set() {
			var err error
			e, err = f.compile(env)
			errs = append(errs, prefixed(at, err)...)
		}
		c.slots = append(c.slots, e)
	}
	return c, errs
}

func (c *compiledExpectations) empty() bool {
	for _, e := range c.slots {
		if e != nil {
			return false
		}
	}
	return true
}

// inherit fills every field c does not set from d (the compiled defaults).
func (c *compiledExpectations) inherit(d *compiledExpectations) {
	if d == nil {
		return
	}
	for i, e := range c.slots {
		if e == nil {
			c.slots[i] = d.slots[i]
		}
	}
}

func (c *compiledExpectations) steps(prefix string) []stepRef {
	var out []stepRef
	for _, e := range c.slots {
		if e != nil {
			out = append(out, e.refs(prefix)...)
		}
	}
	return out
}

// evalExpectations evaluates c on agent a; step ids start with prefix.
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
	for _, e := range c.slots {
		if e != nil {
			out = append(out, e.evaluate(te, base, a, prefix)...)
		}
	}
	return out
}

// fieldResult starts a result of a test-case field.
func fieldResult(base Result, id, action string) Result {
	r := base
	r.Step, r.Action = id, action
	return r
}

// joinErrs joins the errors of a field's Validate or compile.
func joinErrs(errs []error) error { return errors.Join(errs...) }
