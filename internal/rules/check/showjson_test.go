package check

import (
	"encoding/json"
	"math"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/require"
	"go.opentelemetry.io/collector/pdata/pcommon"
	"go.opentelemetry.io/collector/pdata/ptrace"

	"github.com/otelcol-handoff/otelcol-handoff/internal/agentgraph"
	"github.com/otelcol-handoff/otelcol-handoff/internal/spanfile"
	"github.com/otelcol-handoff/otelcol-handoff/internal/spanwalk"
	"github.com/otelcol-handoff/otelcol-handoff/internal/textsafe"
)

// marshalShown is what ShowJSON stands for: the value marshalled whole, then clipped.
func marshalShown(t testing.TB, v any, n int) string {
	b, err := json.Marshal(v)
	require.NoError(t, err)
	return textsafe.Clip(string(b), n)
}

var shownSizes = []int{0, 1, 7, 64, 200, 1 << 20}

func requireShownAsMarshalled(t testing.TB, v any, what string) {
	for _, n := range shownSizes {
		got, ok := ShowJSON(v, n)
		require.True(t, ok, what)
		require.Equal(t, marshalShown(t, v, n), got, "%s, cut at %d", what, n)
	}
}

// TestShowJSONOnTraces: every attribute value of the bundled traces that holds JSON (the
// outputs, inputs, tool arguments and results expected_result and expected_tool_calls
// quote), decoded as the rules decode it, is shown as json.Marshal and Clip show it.
func TestShowJSONOnTraces(t *testing.T) {
	var files []string
	for _, dir := range []string{"traces", "corpus", "seed000"} {
		m, err := filepath.Glob(filepath.Join("..", "..", "..", "testdata", dir, "*.json"))
		require.NoError(t, err)
		files = append(files, m...)
	}
	require.GreaterOrEqual(t, len(files), 29)
	values := 0
	for _, path := range files {
		td, err := spanfile.ReadAll(path)
		require.NoError(t, err, path)
		spanwalk.Each(td, func(_ pcommon.Resource, sp ptrace.Span) {
			sp.Attributes().Range(func(k string, a pcommon.Value) bool {
				text := a.AsString()
				if v, ok := agentgraph.ParseJSON(text); ok {
					requireShownAsMarshalled(t, v, path+" "+k)
					values++
				}
				if v := agentgraph.ContentValue(text, agentgraph.AssistantRoles); v != nil {
					requireShownAsMarshalled(t, v, path+" "+k+" (content)")
				}
				return true
			})
		})
	}
	require.Greater(t, values, 500)
}

// TestShowJSONRefuses: what json.Marshal refuses, or ShowJSON does not know, is left to the
// caller.
func TestShowJSONRefuses(t *testing.T) {
	for _, v := range []any{math.NaN(), math.Inf(1), []any{1.5, math.Inf(-1)}, map[string]any{"a": int(1)}, struct{}{}, []string{"a"}} {
		_, ok := ShowJSON(v, 200)
		require.False(t, ok, "%#v", v)
	}
	requireShownAsMarshalled(t, map[string]any{"b": []any{}, "a": map[string]any{}, "c": []any(nil), "d": map[string]any(nil)}, "empty and nil")
	requireShownAsMarshalled(t, []any{1e-7, 1e21, 123456789.0, math.Copysign(0, -1), 1e20, 5e-324, int64(-9)}, "numbers")
}

// FuzzShowJSON: ShowJSON of any text that parses as JSON (decoded as the rules decode it) is
// json.Marshal's text clipped. `go test -fuzz FuzzShowJSON ./internal/rules/check/` searches
// further.
func FuzzShowJSON(f *testing.F) {
	for _, s := range []string{
		`{"b":1,"a":[true,null,"x<y>&z"],"é":"\u2028\u2029\b\f\n\r\t\u0001"}`, `"\ud800"`, `[1e-7,1E21,0.1,-0,12345678901234567890]`,
		`{"text":"it is \"sunny\"","n":[1,{"a":"}"}]}`, `[{"role":"assistant","content":"Paris"}]`, `"plain"`, `{}`, `[]`, `3`,
	} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		v, ok := agentgraph.ParseJSON(s)
		if !ok {
			return
		}
		if _, err := json.Marshal(v); err != nil {
			_, ok := ShowJSON(v, 200)
			require.False(t, ok)
			return
		}
		requireShownAsMarshalled(t, v, s)
	})
}
