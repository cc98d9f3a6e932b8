package agentgraph

import (
	"encoding/json"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"
)

// validEdgeValues are what JSON's grammar turns on: numbers, escapes, literals, white space,
// control characters, nesting at encoding/json's limit and beyond it.
var validEdgeValues = []string{
	``, ` `, `0`, `-0`, `01`, `-`, `1.`, `.5`, `1.5e`, `1e+`, `1E-7`, `-12.5e+10`, `1e400`, `+1`,
	`true`, `tru`, `truex`, `null `, ` false`, `nul`, `"`, `""`, `"\"`, `"\u00e9\n\/\b\f\r\t"`,
	`"\u00g0"`, `"\u12"`, `"\x"`, "\"a\tb\"", "\"\x7f\xff\"", `[]`, `[,]`, `[1,]`, `[1 2]`, `{}`,
	`{"a"}`, `{"a":}`, `{"a":1,}`, `{"a":1 "b":2}`, `{1:2}`, `{"a":1}}`, `[[]`, ` [ 1 , { "a" : [ ] } ] `,
	"\t\r\n[\n1\r]\t", "[1]\x00", `{"a":[true,false,null,-0.0e0,"x"]}`,
	strings.Repeat(`[`, maxJSONDepth) + strings.Repeat(`]`, maxJSONDepth),
	strings.Repeat(`[`, maxJSONDepth+1) + strings.Repeat(`]`, maxJSONDepth+1),
	strings.Repeat(`{"a":`, maxJSONDepth) + `1` + strings.Repeat(`}`, maxJSONDepth),
	strings.Repeat(`{"a":`, maxJSONDepth+1) + `1` + strings.Repeat(`}`, maxJSONDepth+1),
}

// TestValidJSONAgrees: validJSON says what json.Valid says on every value of the captures
// and the edge cases, and on each of them cut short and with a byte replaced at a spread
// of places (most of those invalid, in every way a value can break).
func TestValidJSONAgrees(t *testing.T) {
	valid := 0
	for _, v := range append(append(append(captureValues(t), edgeValues...), responseEdgeValues...), validEdgeValues...) {
		check := func(s string) {
			t.Helper()
			want := json.Valid([]byte(s))
			require.Equal(t, want, validJSON(s), "value %.300q", s)
			if want {
				valid++
			}
		}
		check(v)
		step := max(1, len(v)/16)
		for i := 0; i < len(v); i += step {
			check(v[:i])
			for _, b := range []byte{'"', '\\', ',', '}', ']', '0', 'e', '\n', 0x01} {
				check(v[:i] + string(b) + v[i+1:])
			}
		}
	}
	require.Greater(t, valid, 1000)
}

// FuzzValidJSON: validJSON and json.Valid agree on any input.
func FuzzValidJSON(f *testing.F) {
	for _, v := range append(append(edgeValues, responseEdgeValues...), validEdgeValues[:len(validEdgeValues)-4]...) {
		f.Add(v)
	}
	f.Fuzz(func(t *testing.T, s string) {
		if got, want := validJSON(s), json.Valid([]byte(s)); got != want {
			t.Fatalf("validJSON(%q) = %v, json.Valid = %v", s, got, want)
		}
	})
}
