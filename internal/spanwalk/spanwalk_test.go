package spanwalk

import (
	"testing"

	"github.com/stretchr/testify/require"
	"go.opentelemetry.io/collector/pdata/pcommon"
	"go.opentelemetry.io/collector/pdata/ptrace"
)

// TestEach: every span of every scope of every resource, in order, with its resource.
func TestEach(t *testing.T) {
	td := ptrace.NewTraces()
	for _, svc := range []string{"a", "b"} {
		rs := td.ResourceSpans().AppendEmpty()
		rs.Resource().Attributes().PutStr("service.name", svc)
		for range 2 {
			ss := rs.ScopeSpans().AppendEmpty()
			ss.Spans().AppendEmpty().SetName(svc + "1")
			ss.Spans().AppendEmpty().SetName(svc + "2")
		}
		rs.ScopeSpans().AppendEmpty() // an empty scope
	}
	td.ResourceSpans().AppendEmpty() // an empty resource
	var got []string
	Each(td, func(res pcommon.Resource, sp ptrace.Span) {
		svc, _ := res.Attributes().Get("service.name")
		got = append(got, svc.Str()+":"+sp.Name())
	})
	require.Equal(t, []string{"a:a1", "a:a2", "a:a1", "a:a2", "b:b1", "b:b2", "b:b1", "b:b2"}, got)
}
