package agentgraph

import (
	"fmt"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/require"
	"go.opentelemetry.io/collector/pdata/pcommon"
)

// linkTargetsByMap is LinkTargets as it was before CollectLinkTargets: each span's run
// through ownerRun's map, one slice of ids per run. The new one must report exactly the
// same runs, spans and order.
func linkTargetsByMap(g *Graph, fn func(t LinkTarget, spans []pcommon.SpanID)) {
	if len(g.Invocations) == 0 {
		return
	}
	owned := make([][]pcommon.SpanID, len(g.Invocations))
	for _, s := range g.Spans {
		if s.Role == RoleLLM || s.Role == RoleHandoff {
			continue
		}
		if inv := g.ownerRun(s); inv != nil && inv.Remote == nil {
			owned[inv.Index] = append(owned[inv.Index], s.ID)
		}
	}
	for _, inv := range g.Invocations {
		fn(LinkTarget{TraceID: g.TraceID, SpanID: inv.Span.ID, Agent: inv.Name}, owned[inv.Index])
	}
}

func renderLinkTargets(each func(func(LinkTarget, []pcommon.SpanID))) []string {
	var out []string
	each(func(t LinkTarget, spans []pcommon.SpanID) {
		out = append(out, fmt.Sprintf("%s %s %q %v", t.TraceID, t.SpanID, t.Agent, spans))
	})
	return out
}

// TestLinkTargetsAgreeWithTheMap: on every capture and corpus file (the shared corpus too
// when it is beside the checkout), CollectLinkTargets, through one LinkSpans reused for
// every graph, and LinkTargets report what the map-based reading did.
func TestLinkTargetsAgreeWithTheMap(t *testing.T) {
	files := append(corpusFiles(t), sharedCorpusFiles(t)...)
	var ls LinkSpans
	runs := 0
	for _, path := range files {
		for _, g := range BuildAll(readTraces(t, path), Options{}) {
			want := renderLinkTargets(func(fn func(LinkTarget, []pcommon.SpanID)) { linkTargetsByMap(g, fn) })
			require.Equal(t, want, renderLinkTargets(g.LinkTargets), filepath.Base(path))
			g.CollectLinkTargets(&ls)
			require.Equal(t, want, renderLinkTargets(func(fn func(LinkTarget, []pcommon.SpanID)) {
				for i := range ls.Len() {
					fn(ls.At(i))
				}
			}), filepath.Base(path))
			runs += len(want)
		}
	}
	t.Logf("%d files, %d runs", len(files), runs)
	require.Greater(t, runs, 50)
}
