package agentgraph

import (
	"math"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/require"
	"go.opentelemetry.io/collector/pdata/pcommon"
	"go.opentelemetry.io/collector/pdata/ptrace"

	"github.com/otelcol-handoff/otelcol-handoff/internal/spanwalk"
)

// TestTokenCountsOutOfRange: a negative token count, a double past int64, or counters
// that would overflow the sum are no counts. Budgets compare the sums: a -5000 beside a
// 9000 used to pass a maxTokens of 8000, and two int64 maximums summed to -2.
func TestTokenCountsOutOfRange(t *testing.T) {
	path := filepath.Join("..", "..", "testdata", "traces", "google-adk-ok.json")
	rootTokens := func(set func(i int, attrs pcommon.Map)) int64 {
		td := readTraces(t, path)
		i := 0
		spanwalk.Each(td, func(_ pcommon.Resource, s ptrace.Span) {
			if _, ok := s.Attributes().Get("gen_ai.usage.input_tokens"); ok {
				set(i, s.Attributes())
				i++
			}
		})
		require.Positive(t, i)
		g := BuildAll(td, Options{})[0]
		return g.Invocations[0].Subtree.InputTokens
	}
	var first int64
	all := rootTokens(func(i int, attrs pcommon.Map) {
		if i == 0 {
			v, _ := attrs.Get("gen_ai.usage.input_tokens")
			first = v.Int()
		}
	})
	require.Positive(t, first)
	withoutFirst := all - first
	for name, set := range map[string]func(pcommon.Map){
		"negative int":    func(m pcommon.Map) { m.PutInt("gen_ai.usage.input_tokens", -5000) },
		"negative string": func(m pcommon.Map) { m.PutStr("gen_ai.usage.input_tokens", "-5000") },
		"huge double":     func(m pcommon.Map) { m.PutDouble("gen_ai.usage.input_tokens", 1e300) },
		"NaN double":      func(m pcommon.Map) { m.PutDouble("gen_ai.usage.input_tokens", math.NaN()) },
		"int64 maximum":   func(m pcommon.Map) { m.PutInt("gen_ai.usage.input_tokens", math.MaxInt64) },
	} {
		got := rootTokens(func(i int, attrs pcommon.Map) {
			if i == 0 {
				set(attrs)
			}
		})
		require.Equal(t, withoutFirst, got, name)
	}
	// Every call at int64's maximum: no count, no wrap.
	require.Zero(t, rootTokens(func(_ int, attrs pcommon.Map) { attrs.PutInt("gen_ai.usage.input_tokens", math.MaxInt64) }))

	n, ok := intValue(pcommon.NewValueDouble(1234.9))
	require.True(t, ok)
	require.Equal(t, int64(1234), n)
}
