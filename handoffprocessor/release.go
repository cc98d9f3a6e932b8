package handoffprocessor

import (
	"context"
	"time"

	"go.opentelemetry.io/collector/pdata/pcommon"
	"go.opentelemetry.io/collector/pdata/ptrace"

	"github.com/otelcol-handoff/otelcol-handoff/internal/agentgraph"
)

// assemble builds the delegation DAG of each released trace, adds its HANDOFF spans, marks
// incomplete traces, and returns all of them as one batch, with a context that carries
// the graphs downstream (agentgraph.SharedGraph) so the assertion exporter need not
// rebuild them.
func (p *handoffProcessor) assemble(ctx context.Context, batch []release) (context.Context, ptrace.Traces) {
	out := ptrace.NewTraces()
	now := p.now()
	graphs := make(map[pcommon.TraceID]agentgraph.Shared, len(batch))
	for _, r := range batch {
		t := r.trace
		began := time.Now()
		g := agentgraph.Build(t.id, agentgraph.SpansOf(t.data)[t.id], p.graphOpts)
		added := agentgraph.AppendHandoffs(g, t.data, p.policy)
		// Complete: the root arrived (and the quiet period passed, or the input ended) and no
		// span misses its parent. Orphans mean part of the trace is elsewhere: sent before a
		// restart, or to another instance.
		reason := r.trigger
		complete := r.trigger == triggerRoot || (r.trigger == triggerEndOfInput && t.rootSeen)
		if complete && g.Orphans > 0 {
			complete, reason = false, reasonOrphans
		}
		if !complete && g.RootSpan != nil {
			attrs := g.RootSpan.Span.Attributes()
			attrs.PutBool(agentgraph.AttrTraceComplete, false)
			attrs.PutStr(agentgraph.AttrReleaseReason, reason)
		}
		p.telemetry.released(ctx, releaseStats{
			trigger:     r.trigger,
			spans:       t.spans,
			handoffs:    added,
			orphans:     g.Orphans,
			duplicates:  g.Duplicates,
			brokenLinks: g.BrokenLinks,
			hold:        now.Sub(t.first),
			assembly:    time.Since(began),
		})
		graphs[t.id] = agentgraph.Shared{Graph: g, Spans: t.spans + added}
		t.data.ResourceSpans().MoveAndAppendTo(out.ResourceSpans())
	}
	return agentgraph.ContextWithGraphs(ctx, p.graphOpts, graphs), out
}
