package check

import (
	"errors"
	"sync"

	"github.com/google/cel-go/cel"

	"github.com/otelcol-handoff/otelcol-handoff/internal/celexpr"
)

// The expression environments: what each place an expression is written sees. All are of
// the celexpr family, so `when`, `contextExpression` and the expected_* fields accept the
// same dialect.
type Exprs struct {
	When, Context         *cel.Env // a case's when, a handoff-context step's contextExpression
	Result, Tool, Payload *cel.Env // expected_result, expected_tool_calls, expected_payload
	// Trajectory is an EXPECT_TRAJECTORY reference step's params: params (the call's
	// arguments) and context, as expected_tool_calls sees them, without invocations.
	Trajectory *cel.Env
}

var (
	exprEnvsOnce sync.Once
	exprEnvsVal  Exprs
	exprEnvsErr  error
)

// ContextVar is the test-case context (ContextPrefix attributes), seen by the expected_* fields.
var ContextVar = cel.Variable("context", cel.MapType(cel.StringType, cel.DynType))

func LoadExprs() (Exprs, error) {
	exprEnvsOnce.Do(func() {
		var errs [6]error
		exprEnvsVal.When, errs[0] = celexpr.NewEnv(
			cel.Variable("root_agent", cel.StringType),
			cel.Variable("agents", cel.ListType(cel.StringType)),
			cel.Variable("service_name", cel.StringType),
			cel.Variable("root_span_name", cel.StringType),
			cel.Variable("resource", cel.MapType(cel.StringType, cel.DynType)),
			cel.Variable("attributes", cel.MapType(cel.StringType, cel.DynType)),
		)
		exprEnvsVal.Context, errs[1] = celexpr.NewEnv(
			cel.Variable("from", cel.StringType),
			cel.Variable("to", cel.StringType),
			cel.Variable("scope_prompt", cel.StringType),
			cel.Variable("reason", cel.StringType),
			cel.Variable("context_summary", cel.StringType),
			cel.Variable("return_value", cel.StringType),
			cel.Variable("allowed_tools", cel.ListType(cel.StringType)),
			cel.Variable("payload", cel.MapType(cel.StringType, cel.DynType)),
		)
		exprEnvsVal.Result, errs[2] = celexpr.NewEnv(ContextVar,
			cel.Variable("status", cel.StringType),
			cel.Variable("output", cel.DynType),
			cel.Variable("error", cel.StringType),
		)
		exprEnvsVal.Tool, errs[3] = celexpr.NewEnv(ContextVar,
			cel.Variable("invocations", cel.IntType),
			cel.Variable("params", cel.MapType(cel.StringType, cel.DynType)),
		)
		exprEnvsVal.Payload, errs[4] = celexpr.NewEnv(ContextVar,
			cel.Variable("payload", cel.DynType),
			cel.Variable("payload_raw", cel.StringType),
		)
		exprEnvsVal.Trajectory, errs[5] = celexpr.NewEnv(ContextVar,
			cel.Variable("params", cel.MapType(cel.StringType, cel.DynType)),
		)
		exprEnvsErr = errors.Join(errs[:]...)
	})
	return exprEnvsVal, exprEnvsErr
}
