package agentgraph

import (
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/require"
	"go.opentelemetry.io/collector/pdata/ptrace"
)

// spansOfTraceByLiteral is SpansOfTrace as it was: every wrapper written whole from a
// literal, appended through a callback.
func spansOfTraceByLiteral(td ptrace.Traces) []*Span {
	var out []*Span
	rss := td.ResourceSpans()
	for i := 0; i < rss.Len(); i++ {
		rs := rss.At(i)
		for j := 0; j < rs.ScopeSpans().Len(); j++ {
			ss := rs.ScopeSpans().At(j)
			for k := 0; k < ss.Spans().Len(); k++ {
				sp := ss.Spans().At(k)
				out = append(out, &Span{Pdata: sp, Resource: rs.Resource(), Scope: ss.Scope(), ID: sp.SpanID(), ParentID: sp.ParentSpanID()})
			}
		}
	}
	return out
}

// TestSpansOfTraceAgreesWithTheLiteral: on every capture and corpus file (the shared
// corpus too when it is beside the checkout), SpansOfTrace and SpansOf wrap the same spans
// in the same order with the same fields (every other field zero) as the literal did.
func TestSpansOfTraceAgreesWithTheLiteral(t *testing.T) {
	for _, path := range append(corpusFiles(t), sharedCorpusFiles(t)...) {
		td := readTraces(t, path)
		want := spansOfTraceByLiteral(td)
		got := SpansOfTrace(td)
		require.Len(t, got, len(want), filepath.Base(path))
		byTrace := SpansOf(td)
		at := map[[16]byte]int{}
		for i := range want {
			require.Equal(t, *want[i], *got[i], "%s span %d", filepath.Base(path), i)
			id := want[i].Pdata.TraceID()
			require.Equal(t, *want[i], *byTrace[id][at[id]], "%s span %d", filepath.Base(path), i)
			at[id]++
		}
	}
}
