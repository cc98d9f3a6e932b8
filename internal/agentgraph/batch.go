package agentgraph

import (
	"context"

	"go.opentelemetry.io/collector/pdata/pcommon"
	"go.opentelemetry.io/collector/pdata/ptrace"

	"github.com/otelcol-handoff/otelcol-handoff/internal/spanwalk"
)

// BatchTrace is what one pass over a batch of spans learns of one trace without wrapping
// its spans: how many spans to judge, how many the handoff processor marked late
// (AttrLateSpan: their trace was judged already), and whether it marked the trace
// incomplete (AttrTraceComplete=false).
type BatchTrace struct {
	Kept, Late int
	Complete   bool
}

// BatchTraces is what ScanBatch learns of td, read from the handoff processor's hand-off
// in ctx (ContextWithGraphs) when its entries account for every span of td: each entry's
// spans are all kept, none late, and the trace complete unless the processor marked it
// incomplete. Otherwise (no hand-off: replayed files, a processor in between that drops the
// context; or spans no entry accounts for: late spans, spans without a trace id, spans a
// processor in between dropped) it scans td as ScanBatch does.
func BatchTraces(ctx context.Context, td ptrace.Traces) map[pcommon.TraceID]*BatchTrace {
	if s := sharedIn(ctx); s != nil {
		if out := s.batch(td.SpanCount()); out != nil {
			return out
		}
	}
	return ScanBatch(td)
}

// batch returns the hand-off's entries as BatchTraces, or nil when they do not hold
// exactly spans spans.
func (s *sharedGraphs) batch(spans int) map[pcommon.TraceID]*BatchTrace {
	n := 0
	for _, sh := range s.graphs {
		n += sh.Spans
	}
	if n != spans || n == 0 {
		return nil
	}
	out := make(map[pcommon.TraceID]*BatchTrace, len(s.graphs))
	traces := make([]BatchTrace, 0, len(s.graphs))
	for id, sh := range s.graphs {
		traces = append(traces, BatchTrace{Kept: sh.Spans, Complete: !sh.Incomplete})
		out[id] = &traces[len(traces)-1]
	}
	return out
}

// ScanBatch reads the processor's markers of every span of td, by trace id.
func ScanBatch(td ptrace.Traces) map[pcommon.TraceID]*BatchTrace {
	out := map[pcommon.TraceID]*BatchTrace{}
	spanwalk.Each(td, func(_ pcommon.Resource, sp ptrace.Span) {
		bt := out[sp.TraceID()]
		if bt == nil {
			bt = &BatchTrace{Complete: true}
			out[sp.TraceID()] = bt
		}
		attrs := sp.Attributes()
		if v, ok := attrs.Get(AttrLateSpan); ok && v.Bool() {
			bt.Late++
			return
		}
		if v, ok := attrs.Get(AttrTraceComplete); ok && !v.Bool() {
			bt.Complete = false
		}
		bt.Kept++
	})
	return out
}

// WithoutLate drops the spans the processor marked late (AttrLateSpan), in place.
func WithoutLate(spans []*Span) []*Span {
	kept := spans[:0]
	for _, s := range spans {
		if v, ok := s.Pdata.Attributes().Get(AttrLateSpan); ok && v.Bool() {
			continue
		}
		kept = append(kept, s)
	}
	return kept
}

// MarkIncomplete marks the graph's trace as released before it was complete, for the
// reason given: AttrTraceComplete=false and AttrReleaseReason on its root span (or, without
// one, its earliest top-level span). A graph without spans is left as it is.
func (g *Graph) MarkIncomplete(reason string) {
	if g.RootSpan == nil {
		return
	}
	attrs := g.RootSpan.Pdata.Attributes()
	attrs.PutBool(AttrTraceComplete, false)
	attrs.PutStr(AttrReleaseReason, reason)
}
