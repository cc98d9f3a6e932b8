package celexpr

import "github.com/google/cel-go/cel"

// NewEnv returns an environment of the family every rule expression is compiled in: the
// `in` extension (a substring test on strings) with macro call tracking, plus vars (the
// variables of one place an expression is written).
func NewEnv(vars ...cel.EnvOption) (*cel.Env, error) {
	return cel.NewEnv(append([]cel.EnvOption{
		cel.Macros(inMacro),
		cel.EnableMacroCallTracking(),
		cel.Function(inFunction, cel.Overload("seed_in_dyn_dyn",
			[]*cel.Type{cel.DynType, cel.DynType}, cel.BoolType, cel.BinaryBinding(in))),
	}, vars...)...)
}
