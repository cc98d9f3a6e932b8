package celexpr

import (
	"testing"

	"github.com/stretchr/testify/require"
)

func TestRewrite(t *testing.T) {
	tests := []struct{ in, out, err string }{
		{in: `status == "failed" and "missing vendor" in error`, out: `status == "failed" &&  "missing vendor" in error`},
		{in: `a or b`, out: `a || b`},
		{in: `not a`, out: `!   a`},
		{in: `not(a) and not b`, out: `!  (a) &&  !   b`},
		{in: `"and or not" in output`, out: `"and or not" in output`},
		{in: `'it\'s and' in output or x`, out: `'it\'s and' in output || x`},
		{in: `r"\d and" == x`, out: `r"\d and" == x`},
		{in: `"""a "and" b""" == x and y`, out: `"""a "and" b""" == x &&  y`},
		{in: `output.and == 1 and output.not`, out: `output.and == 1 &&  output.not`},
		{in: "output . or == 1", out: "output . or == 1"},
		{in: "a and // and a comment\n b", out: "a &&  // and a comment\n b"},
		{in: `x == True or y == None and z != False`, out: `x == true || y == null &&  z != false`},
		{in: `band == 1 and orx == nota`, out: `band == 1 &&  orx == nota`},
		{in: "1.5 and 2e3", out: "1.5 &&  2e3"},
		{in: "a.`not` and b", out: "a.`not` &&  b"},
		{in: `x && y || !z`, out: `x && y || !z`},
		{in: `"a" not in output`, err: "`not in` is not supported at column 9; write `not (x in y)` or `!(x in y)`"},
		{in: `"abc and`, err: "unterminated string literal at column 1"},
	}
	for _, tt := range tests {
		got, err := Rewrite(tt.in)
		if tt.err != "" {
			require.EqualError(t, err, tt.err, tt.in)
			continue
		}
		require.NoError(t, err, tt.in)
		require.Equal(t, tt.out, got, tt.in)
		require.Len(t, got, len(tt.in), "columns are preserved")
	}
}
