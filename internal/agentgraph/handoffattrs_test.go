package agentgraph

import (
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/require"
	"go.opentelemetry.io/collector/pdata/ptrace"
)

// TestHandoffAttrCountIsExact: on every capture and corpus file (the shared corpus too when
// it is beside the checkout), under each content mode, the attribute room fillHandoff makes
// on a new HANDOFF span is exactly what it writes.
func TestHandoffAttrCountIsExact(t *testing.T) {
	edges := 0
	for _, path := range append(corpusFiles(t), sharedCorpusFiles(t)...) {
		for _, g := range BuildAll(readTraces(t, path), Options{}) {
			for _, e := range g.Edges {
				for _, policy := range []ContentPolicy{{}, {Mode: ContentCopy}, {Mode: ContentOmit}} {
					sp := ptrace.NewSpan()
					fillHandoff(g, e, sp, policy, true)
					want := handoffAttrCount(e, scopePrompt(e), handoffError(e) != nil, policy)
					require.Equal(t, want, sp.Attributes().Len(), "%s: %s -> %s (%s)", filepath.Base(path), e.From.Name, e.To.Name, policy.Mode)
				}
				edges++
			}
		}
	}
	require.Greater(t, edges, 30)
}

// TestSpanIDHex: spanIDHex writes what SpanID.String does.
func TestSpanIDHex(t *testing.T) {
	for _, path := range corpusFiles(t) {
		for _, g := range BuildAll(readTraces(t, path), Options{}) {
			for _, s := range g.Spans {
				require.Equal(t, s.ID.String(), spanIDHex(s.ID))
			}
		}
	}
	require.Empty(t, spanIDHex([8]byte{}))
}
