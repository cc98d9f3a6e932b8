package celexpr

import (
	"strings"

	"github.com/google/cel-go/cel"
	"github.com/google/cel-go/common"
	"github.com/google/cel-go/common/ast"
	"github.com/google/cel-go/common/operators"
	"github.com/google/cel-go/common/types"
	"github.com/google/cel-go/common/types/ref"
	"github.com/google/cel-go/common/types/traits"
	"github.com/google/cel-go/parser"
)

// inFunction is the function `x in y` becomes.
const inFunction = "seed_in"

// in is `x in y`: a substring test when y is a string, else CEL's membership (list
// element, map key).
func in(x, y ref.Val) ref.Val {
	if s, ok := y.(types.String); ok {
		sub, ok := x.(types.String)
		if !ok {
			return types.NewErr("`in` with a string on the right is a substring test: the left side must be a string, got %s", x.Type().TypeName())
		}
		return types.Bool(strings.Contains(string(s), string(sub)))
	}
	if types.IsUnknownOrError(y) {
		return y
	}
	if c, ok := y.(traits.Container); ok {
		return c.Contains(x)
	}
	return types.NewErr("no such overload: %s in %s (the right side of `in` must be a string, list or map)", x.Type().TypeName(), y.Type().TypeName())
}

// inMacro expands `x in y` to the inFunction call.
var inMacro = cel.GlobalMacro(operators.In, 2,
	func(eh parser.ExprHelper, _ ast.Expr, args []ast.Expr) (ast.Expr, *common.Error) {
		return eh.NewCall(inFunction, args...), nil
	})
