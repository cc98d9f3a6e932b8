package rules

import (
	"errors"
	"fmt"
	"strings"
	"sync"

	"github.com/google/cel-go/cel"
	"github.com/google/cel-go/common"
	"github.com/google/cel-go/common/ast"
	"github.com/google/cel-go/common/operators"
	"github.com/google/cel-go/common/types"
	"github.com/google/cel-go/common/types/ref"
	"github.com/google/cel-go/common/types/traits"
	"github.com/google/cel-go/parser"
)

// Seed-001 expressions are written in the seed's evaluator syntax (`and`, `or`, `not`,
// `"x" in output` as a substring test) or in native CEL. rewriteSeedSyntax translates the
// former token by token, keeping every token at its column so CEL's line:column positions
// point into the text the user wrote; the `in` operator is expanded (by a parser macro) to
// seed_in, which adds the substring test to CEL's list and map membership.

// seedInFunction is the function `x in y` becomes.
const seedInFunction = "seed_in"

// rewriteSeedSyntax translates the seed's boolean keywords to CEL operators of the same
// length (`and` → `&& `, `or` → `||`, `not` → `!  `) and the Python literals True, False
// and None to true, false and null. String literals, comments, quoted identifiers and
// field names after a dot are left untouched.
func rewriteSeedSyntax(src string) (string, error) {
	out := []byte(src)
	prevSignificant := byte(0) // last non-space byte outside literals
	prevWord := ""             // last identifier, when it was the last token
	i := 0
	for i < len(src) {
		c := src[i]
		switch {
		case c == '/' && i+1 < len(src) && src[i+1] == '/':
			for i < len(src) && src[i] != '\n' {
				i++
			}
			continue
		case c == '"' || c == '\'':
			end, err := skipString(src, i, false)
			if err != nil {
				return "", err
			}
			i = end
			prevSignificant, prevWord = '"', ""
			continue
		case c == '`':
			end := strings.IndexByte(src[i+1:], '`')
			if end < 0 {
				return src, nil // let the CEL parser report it
			}
			i += end + 2
			prevSignificant, prevWord = 'a', ""
			continue
		case isDigit(c):
			for i < len(src) && (isIdent(src[i]) || (src[i] == '.' && i+1 < len(src) && isDigit(src[i+1]))) {
				i++
			}
			prevSignificant, prevWord = '0', ""
			continue
		case isIdentStart(c):
			start := i
			for i < len(src) && isIdent(src[i]) {
				i++
			}
			word := src[start:i]
			// String prefixes: r"…", b'…', rb"…", br'…' (any case).
			if i < len(src) && (src[i] == '"' || src[i] == '\'') && isStringPrefix(word) {
				end, err := skipString(src, i, strings.ContainsAny(word, "rR"))
				if err != nil {
					return "", err
				}
				i = end
				prevSignificant, prevWord = '"', ""
				continue
			}
			afterDot := prevSignificant == '.'
			if !afterDot {
				repl := ""
				switch word {
				case "and":
					repl = "&& "
				case "or":
					repl = "||"
				case "not":
					repl = "!  "
				case "True":
					repl = "true"
				case "False":
					repl = "false"
				case "None":
					repl = "null"
				case "in":
					if prevWord == "not" {
						return "", fmt.Errorf("`not in` is not supported at column %d; write `not (x in y)` or `!(x in y)`", start+1)
					}
				}
				if repl != "" {
					copy(out[start:i], repl)
				}
			}
			prevSignificant, prevWord = 'a', word
			if afterDot {
				prevWord = "" // a field name, not a keyword
			}
			continue
		case c == ' ' || c == '\t' || c == '\n' || c == '\r':
			i++
			continue
		}
		prevSignificant, prevWord = c, ""
		i++
	}
	return string(out), nil
}

// skipString returns the index just past the string literal that starts with a quote at i.
func skipString(src string, i int, raw bool) (int, error) {
	q := src[i]
	if strings.HasPrefix(src[i:], string([]byte{q, q, q})) {
		end := strings.Index(src[i+3:], string([]byte{q, q, q}))
		if end < 0 {
			return 0, fmt.Errorf("unterminated string literal at column %d", i+1)
		}
		return i + 3 + end + 3, nil
	}
	for j := i + 1; j < len(src); j++ {
		switch src[j] {
		case '\\':
			if !raw {
				j++
			}
		case q:
			return j + 1, nil
		case '\n':
			return 0, fmt.Errorf("unterminated string literal at column %d", i+1)
		}
	}
	return 0, fmt.Errorf("unterminated string literal at column %d", i+1)
}

func isStringPrefix(w string) bool {
	switch strings.ToLower(w) {
	case "r", "b", "rb", "br":
		return true
	}
	return false
}

func isDigit(c byte) bool      { return c >= '0' && c <= '9' }
func isIdentStart(c byte) bool { return c == '_' || (c|0x20 >= 'a' && c|0x20 <= 'z') }
func isIdent(c byte) bool      { return isIdentStart(c) || isDigit(c) }

// seedIn is `x in y`: a substring test when y is a string, else CEL's membership (list
// element, map key).
func seedIn(x, y ref.Val) ref.Val {
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

var seedInMacro = cel.GlobalMacro(operators.In, 2,
	func(eh parser.ExprHelper, _ ast.Expr, args []ast.Expr) (ast.Expr, *common.Error) {
		return eh.NewCall(seedInFunction, args...), nil
	})

// seedEnvOptions are shared by the seed-001 expression environments.
func seedEnvOptions(vars ...cel.EnvOption) []cel.EnvOption {
	return append([]cel.EnvOption{
		cel.Macros(seedInMacro),
		cel.EnableMacroCallTracking(),
		cel.Function(seedInFunction, cel.Overload("seed_in_dyn_dyn",
			[]*cel.Type{cel.DynType, cel.DynType}, cel.BoolType, cel.BinaryBinding(seedIn))),
		cel.Variable("context", cel.MapType(cel.StringType, cel.DynType)),
	}, vars...)
}

// The seed-001 expression environments.
type seedEnvs struct {
	result, tool, payload *cel.Env
}

var (
	seedEnvsOnce sync.Once
	seedEnvsVal  seedEnvs
	seedEnvsErr  error
)

func getSeedEnvs() (seedEnvs, error) {
	seedEnvsOnce.Do(func() {
		var errs [3]error
		seedEnvsVal.result, errs[0] = cel.NewEnv(seedEnvOptions(
			cel.Variable("status", cel.StringType),
			cel.Variable("output", cel.DynType),
			cel.Variable("error", cel.StringType),
		)...)
		seedEnvsVal.tool, errs[1] = cel.NewEnv(seedEnvOptions(
			cel.Variable("invocations", cel.IntType),
			cel.Variable("params", cel.MapType(cel.StringType, cel.DynType)),
		)...)
		seedEnvsVal.payload, errs[2] = cel.NewEnv(seedEnvOptions(
			cel.Variable("payload", cel.DynType),
			cel.Variable("payload_raw", cel.StringType),
		)...)
		seedEnvsErr = errors.Join(errs[:]...)
	})
	return seedEnvsVal, seedEnvsErr
}

// expr is one compiled seed-001 expression.
type expr struct {
	src  string // as written
	env  *cel.Env
	ast  *cel.Ast
	prg  cel.Program
	refs map[string]bool // top-level variables referenced
	cost uint64
	// fresh returns a private copy of ast: cel-go's ResidualAst prunes the macro calls of
	// the AST it is given in place, so concurrent evaluations must not share one.
	fresh func() *cel.Ast

	mu        sync.Mutex
	residuals map[string]cel.Program // compiled residuals, bounded by maxResiduals
}

// maxResiduals bounds the residual programs cached per expression (residuals can inline
// values from traces, so their set is not bounded by the config).
const maxResiduals = 32

// compileExpr translates, parses and type-checks src. Errors carry the line:column of the
// text as written, with a caret under it.
func compileExpr(env *cel.Env, src string, costLimit uint64, opts cel.EvalOption) (*expr, error) {
	text, err := rewriteSeedSyntax(src)
	if err != nil {
		return nil, err
	}
	checked, iss := env.Compile(text)
	if iss.Err() != nil {
		errs := common.NewErrors(common.NewTextSource(src)).Append(iss.Errors())
		return nil, errors.New(errs.ToDisplayString())
	}
	if t := checked.OutputType(); !t.IsExactType(cel.BoolType) && !t.IsExactType(cel.DynType) {
		return nil, fmt.Errorf("must be a boolean expression, got %s", t)
	}
	prg, err := env.Program(checked, programOptions(costLimit, cel.EvalOptions(opts))...)
	if err != nil {
		return nil, err
	}
	pb, err := cel.AstToCheckedExpr(checked)
	if err != nil {
		return nil, err
	}
	e := &expr{
		src: src, env: env, ast: checked, prg: prg, refs: map[string]bool{}, cost: costLimit,
		fresh: func() *cel.Ast { return cel.CheckedExprToAst(pb) },
	}
	for _, r := range checked.NativeRep().ReferenceMap() {
		if r.Name != "" {
			e.refs[r.Name] = true
		}
	}
	return e, nil
}

// residual returns the residual AST of an evaluation of e (made with OptTrackState).
func (e *expr) residual(det *cel.EvalDetails) (*cel.Ast, error) {
	return e.env.ResidualAst(e.fresh(), det)
}

// residualProgram compiles (or returns the cached) program of a residual AST.
func (e *expr) residualProgram(res *cel.Ast) (cel.Program, string, error) {
	text, err := cel.AstToString(res)
	if err != nil {
		return nil, "", err
	}
	e.mu.Lock()
	prg, ok := e.residuals[text]
	e.mu.Unlock()
	if ok {
		return prg, text, nil
	}
	prg, err = e.env.Program(res, programOptions(e.cost)...)
	if err != nil {
		return nil, text, err
	}
	e.mu.Lock()
	if e.residuals == nil {
		e.residuals = map[string]cel.Program{}
	}
	if len(e.residuals) < maxResiduals {
		e.residuals[text] = prg
	}
	e.mu.Unlock()
	return prg, text, nil
}

// boolResult reads a CEL result as a verdict: ok is false (with a reason) when the value is
// neither a bool nor an unknown.
func boolResult(v ref.Val) (val, unknown bool, err error) {
	if types.IsUnknown(v) {
		return false, true, nil
	}
	if b, ok := v.(types.Bool); ok {
		return bool(b), false, nil
	}
	return false, false, fmt.Errorf("the expression evaluated to %s %v, not a bool", v.Type().TypeName(), v.Value())
}
