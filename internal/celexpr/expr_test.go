package celexpr

import (
	"context"
	"testing"

	"github.com/google/cel-go/cel"
	"github.com/stretchr/testify/require"
)

// TestEvalLoopsOnly: an expression is evaluated under its context only when it holds a
// comprehension (the macros all, exists, exists_one, map, filter), the one place CEL
// looks at it; either way a done context stops no expression without one, and stops one
// with one.
func TestEvalLoopsOnly(t *testing.T) {
	env, err := NewEnv(cel.Variable("xs", cel.ListType(cel.IntType)), cel.Variable("s", cel.StringType))
	require.NoError(t, err)
	done, cancel := context.WithCancel(context.Background())
	cancel()
	vars := map[string]any{"xs": []int64{1, 2, 3}, "s": "hello world"}
	for src, loops := range map[string]bool{
		`s == "hello world"`:                      false,
		`"world" in s && 2 in xs`:                 false,
		`size(xs) > 2 || s.startsWith("x")`:       false,
		`xs.all(x, x > 0)`:                        true,
		`xs.exists(x, x == 2) && s != ""`:         true,
		`xs.map(x, x * 2).filter(y, y > 2) != []`: true,
		`xs.exists_one(x, x == 3)`:                true,
	} {
		e, err := Compile(env, src, DefaultCostLimit, 0)
		require.NoError(t, err, src)
		require.Equal(t, loops, e.loops, src)
		val, _, err := e.Eval(context.Background(), vars)
		require.NoError(t, err, src)
		require.Equal(t, true, val.Value(), src)
		if !loops {
			// As cel-go's ContextEval: never looked at outside a comprehension.
			val, _, err = e.Eval(done, vars)
			require.NoError(t, err, src)
			require.Equal(t, true, val.Value(), src)
		}
	}
	// A long comprehension under a done context is interrupted.
	e, err := Compile(env, `[1,2,3,4,5,6,7,8,9,10].all(a, [1,2,3,4,5,6,7,8,9,10].all(b, [1,2,3,4,5,6,7,8,9,10].all(c, a + b + c > 0)))`, MaxCostLimit, 0)
	require.NoError(t, err)
	require.True(t, e.loops)
	_, _, err = e.Eval(done, vars)
	require.ErrorIs(t, err, context.Canceled)
}
