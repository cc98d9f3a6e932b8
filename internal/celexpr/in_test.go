package celexpr

import (
	"context"
	"fmt"
	"testing"

	"github.com/google/cel-go/cel"
	"github.com/stretchr/testify/require"
)

// TestInExtension: `x in y` is a substring test on strings, and CEL's membership otherwise.
func TestInExtension(t *testing.T) {
	env, err := NewEnv(
		cel.Variable("context", cel.MapType(cel.StringType, cel.DynType)),
		cel.Variable("status", cel.StringType),
		cel.Variable("output", cel.DynType),
		cel.Variable("error", cel.StringType),
	)
	require.NoError(t, err)
	tests := []struct {
		expr   string
		output any
		want   string
	}{
		{`"hello" in output`, "well hello there", "true"},
		{`"hello" in output`, "hi", "false"},
		{`"hello" in output`, map[string]any{"hello": int64(1)}, "true"},
		{`"hello" in output`, map[string]any{"bye": int64(1)}, "false"},
		{`"hello" in output`, []any{"hello", "bye"}, "true"},
		{`1 in output`, []any{int64(1)}, "true"},
		{`"a" in output && output.size() == 1`, []any{"a"}, "true"},
		{`output.exists(x, "ell" in x)`, []any{"hello"}, "true"},
		{`1 in output`, "1", "error: `in` with a string on the right is a substring test: the left side must be a string, got int"},
		{`"a" in output`, int64(3), "error: no such overload: string in int (the right side of `in` must be a string, list or map)"},
	}
	for _, tt := range tests {
		e, err := Compile(env, tt.expr, DefaultCostLimit, cel.OptPartialEval)
		require.NoError(t, err, tt.expr)
		val, _, err := e.Eval(context.Background(), map[string]any{"output": tt.output, "status": "", "error": "", "context": map[string]any{}})
		got := fmt.Sprint(val)
		if err != nil {
			got = "error: " + err.Error()
		}
		require.Equal(t, tt.want, got, tt.expr)
	}
}
