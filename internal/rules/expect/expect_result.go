package expect

import (
	"fmt"
	"strconv"
	"strings"

	"github.com/google/cel-go/cel"
	"github.com/google/cel-go/interpreter"

	"github.com/otelcol-handoff/otelcol-handoff/internal/celexpr"
	"github.com/otelcol-handoff/otelcol-handoff/internal/rules/check"
)

// evalResult evaluates expected_result on the status, error and output of a's last run
// (the earlier runs' statuses are named in Actual).
func (te *TraceEval) evalResult(r *check.Result, a *logicalAgent, e *celexpr.Expr) {
	inv := a.last()
	f := te.factsOf(inv)
	r.Expected = e.Src
	if !te.Quiet {
		r.Actual = te.shown(inv)
		r.Spans = a.spanIDs()
		if n := len(a.runs); n > 1 {
			var earlier []string
			for i, run := range a.runs[:n-1] {
				// Only the status of an earlier run is shown: its output is not decoded.
				earlier = append(earlier, "run "+strconv.Itoa(i+1)+": "+run.Status().State)
			}
			r.Actual = fmt.Sprintf("run %d of %d: %s (%s)", n, n, r.Actual, strings.Join(earlier, ", "))
		}
	}
	vars := &te.vars
	*vars = resultVars{status: f.status, err: f.err, ctx: te.contextOf(e)}
	switch {
	case !f.outputFound:
		vars.unknown = outputUnknown
	case e.Uses("output"): // else only Actual quotes it, from its first bytes
		vars.output, vars.hasOutput = te.output(inv), true
	}
	val, _, err := e.Eval(te.Deadline, vars)
	*vars = resultVars{} // nothing of the trace held past the evaluation
	if err != nil {
		setError(r, "expected_result of agent %s could not be evaluated: %v%s", a.label(), err, te.contextHint(err, e))
		return
	}
	ok, isUnknown, err := celexpr.Bool(val)
	switch {
	case err != nil:
		setError(r, "expected_result of agent %s: %v", a.label(), err)
	case te.Quiet: // the outcome alone
		r.Outcome = check.PassIf(ok && !isUnknown)
	case isUnknown:
		r.Outcome = check.Fail
		r.Message = fmt.Sprintf("content capture disabled on the exporter: the output of agent %s (span %s) was not captured "+
			"(none of %s), so `%s` cannot be judged", a.label(), inv.Span.ID, strings.Join(inv.Output.Tried, ", "), e.Src)
	case ok:
		r.Outcome = check.Pass
		r.Message = fmt.Sprintf("agent %s: `%s` holds", a.label(), e.Src)
	default:
		r.Outcome = check.Fail
		r.Message = fmt.Sprintf("agent %s: expected `%s`, got %s (status: %s)", a.label(), e.Src, r.Actual, f.statusWhy)
	}
}

// resultVars bind expected_result's variables for one evaluation (a partial activation,
// as cel.PartialVars makes of a map): status, error, context (nil when the expression does
// not read it), output when it was captured and is read, and output unknown when it was not
// captured.
type resultVars struct {
	status, err string
	ctx         map[string]any
	output      any
	hasOutput   bool
	unknown     []*cel.AttributePatternType
}

// The run statuses as values, made once (a string put in an interface is allocated).
var (
	completedValue        any = StatusCompleted
	failedValue           any = StatusFailed
	awaitingApprovalValue any = StatusAwaitingApproval
)

// statusValue is status as expected_result's status variable.
func statusValue(status string) any {
	switch status {
	case StatusCompleted:
		return completedValue
	case StatusFailed:
		return failedValue
	case StatusAwaitingApproval:
		return awaitingApprovalValue
	}
	return status
}

// outputUnknown marks output unknown: content capture was disabled.
var outputUnknown = []*cel.AttributePatternType{cel.AttributePattern("output")}

func (v *resultVars) ResolveName(name string) (any, bool) {
	switch name {
	case "status":
		return statusValue(v.status), true
	case "error":
		return v.err, true
	case "context":
		return v.ctx, true
	case "output":
		return v.output, v.hasOutput
	}
	return nil, false
}

func (v *resultVars) Parent() interpreter.Activation { return nil }

func (v *resultVars) UnknownAttributePatterns() []*interpreter.AttributePattern { return v.unknown }

// AsPartialActivation is how cel-go finds the unknowns of an activation.
func (v *resultVars) AsPartialActivation() (interpreter.PartialActivation, bool) { return v, true }

// ExpectedResult is expected_result: an expression over status, output, error and context,
// asserted on the status, error and output of the agent's last run.
type ExpectedResult string

func (e ExpectedResult) set() bool { return e != "" }

// ValidateField has nothing to check: the expression is checked when it compiles.
func (e ExpectedResult) ValidateField() error { return nil }

func (e ExpectedResult) compile(env check.Env) (expectation, error) {
	x, err := celexpr.Compile(env.Exprs.Result, string(e), env.CostLimit, cel.OptPartialEval)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", FieldExpectedResult, err)
	}
	return resultCheck{x}, nil
}

// resultCheck is expected_result compiled.
type resultCheck struct{ e *celexpr.Expr }

func (c resultCheck) refs(prefix string) []check.Ref {
	return []check.Ref{{ID: prefix + FieldExpectedResult, Action: FieldExpectedResult, Expected: c.e.Src}}
}

func (c resultCheck) evaluate(te *TraceEval, base check.Result, a *logicalAgent, prefix string, out []check.Result) []check.Result {
	r := fieldResult(base, prefix+FieldExpectedResult, FieldExpectedResult)
	te.evalResult(&r, a, c.e)
	return append(out, r)
}
