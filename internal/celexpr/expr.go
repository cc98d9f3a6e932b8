package celexpr

import (
	"context"
	"errors"
	"fmt"
	"sort"
	"sync"

	"github.com/google/cel-go/cel"
	"github.com/google/cel-go/common"
	"github.com/google/cel-go/common/ast"
	"github.com/google/cel-go/common/types"
	"github.com/google/cel-go/common/types/ref"
)

// DefaultCostLimit bounds one evaluation (cel-go cost units).
const DefaultCostLimit = 100000

// MaxCostLimit is the highest eval_cost_limit accepted: about a tenth of a second of CPU
// for one evaluation on a 2-core CI machine (cel-go spends roughly 10 ns per cost unit).
const MaxCostLimit = 10_000_000

// interruptEvery is how many comprehension iterations CEL runs between looks at its
// context: often enough that eval_timeout stops a long comprehension within microseconds.
const interruptEvery = 100

// programOptions are the options of every program built here: the cost limit, and
// interruption by the evaluation's context (Eval).
func programOptions(costLimit uint64, extra ...cel.ProgramOption) []cel.ProgramOption {
	return append([]cel.ProgramOption{cel.CostLimit(costLimit), cel.InterruptCheckFrequency(interruptEvery)}, extra...)
}

// Expr is one compiled expression. It is safe for concurrent use.
type Expr struct {
	Src  string // as written
	env  *cel.Env
	prg  cel.Program
	refs map[string]bool // top-level variables referenced
	cost uint64
	// loops is true when the expression holds a comprehension (all, exists, map, filter):
	// the only place CEL looks at its context (Eval).
	loops bool
	// fresh returns a private copy of the checked AST: cel-go's ResidualAst prunes the macro
	// calls of the AST it is given in place, so concurrent evaluations must not share one.
	fresh func() *cel.Ast

	mu        sync.Mutex
	residuals map[string]cel.Program // compiled residuals, bounded by maxResiduals
}

// maxResiduals bounds the residual programs cached per expression (residuals can inline
// values from traces, so their set is not bounded by the config).
const maxResiduals = 32

// Compile translates, parses and type-checks src in env (made by NewEnv); the result must
// be a bool (or dyn, decided at evaluation). Errors carry the line:column of the text as
// written, with a caret under it. opts are the evaluation options (cel.OptPartialEval,
// cel.OptTrackState), 0 for none.
func Compile(env *cel.Env, src string, costLimit uint64, opts cel.EvalOption) (*Expr, error) {
	text, err := Rewrite(src)
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
	return &Expr{
		Src: src, env: env, prg: prg, refs: References(checked), cost: costLimit, loops: hasComprehension(checked),
		fresh: func() *cel.Ast { return cel.CheckedExprToAst(pb) },
	}, nil
}

// Eval evaluates e on vars (a map or an activation, partial ones included), stopping when
// ctx is done (eval_timeout) or the cost limit is reached. CEL looks at ctx only between
// the iterations of a comprehension: an expression without one is evaluated without it,
// the same way, sparing the evaluation's own cancelable context.
func (e *Expr) Eval(ctx context.Context, vars any) (ref.Val, *cel.EvalDetails, error) {
	if !e.loops {
		return e.prg.Eval(vars)
	}
	return e.prg.ContextEval(ctx, vars)
}

// hasComprehension reports whether a checked AST holds a comprehension.
func hasComprehension(a *cel.Ast) bool {
	return len(ast.MatchDescendants(ast.NavigateAST(a.NativeRep()), ast.KindMatcher(ast.ComprehensionKind))) > 0
}

// Uses reports whether e references the top-level variable name.
func (e *Expr) Uses(name string) bool { return e.refs[name] }

// Residual returns the residual AST of an evaluation of e (made with cel.OptTrackState).
func (e *Expr) Residual(det *cel.EvalDetails) (*cel.Ast, error) {
	return e.env.ResidualAst(e.fresh(), det)
}

// ResidualProgram compiles (or returns the cached) program of a residual AST, with e's
// cost limit, and its text.
func (e *Expr) ResidualProgram(res *cel.Ast) (cel.Program, string, error) {
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

// Bool reads a result as a verdict: err is set when the value is neither a bool nor an
// unknown.
func Bool(v ref.Val) (val, unknown bool, err error) {
	if types.IsUnknown(v) {
		return false, true, nil
	}
	if b, ok := v.(types.Bool); ok {
		return bool(b), false, nil
	}
	return false, false, fmt.Errorf("the expression evaluated to %s %v, not a bool", v.Type().TypeName(), v.Value())
}

// References returns the top-level variables a checked AST references.
func References(a *cel.Ast) map[string]bool {
	out := map[string]bool{}
	for _, r := range a.NativeRep().ReferenceMap() {
		if r.Name != "" {
			out[r.Name] = true
		}
	}
	return out
}

// StateError returns the first error recorded in an evaluation's state.
func StateError(det *cel.EvalDetails) string {
	if det == nil || det.State() == nil {
		return "evaluation error"
	}
	ids := det.State().IDs()
	sort.Slice(ids, func(i, j int) bool { return ids[i] < ids[j] })
	for _, id := range ids {
		if v, ok := det.State().Value(id); ok && types.IsError(v) {
			return fmt.Sprint(v.Value())
		}
	}
	return "evaluation error"
}
