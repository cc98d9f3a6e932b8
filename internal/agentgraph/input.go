package agentgraph

import (
	"bytes"
	"encoding/json"
	"sort"

	"go.opentelemetry.io/collector/pdata/pcommon"
	"go.opentelemetry.io/collector/pdata/ptrace"
)

// SpansOf wraps every span of td for Build, grouped by trace id. The wrappers reference
// td's spans, so td must stay alive (and unchanged) while the graphs are used. They are
// made in one allocation.
func SpansOf(td ptrace.Traces) map[pcommon.TraceID][]*Span {
	out := make(map[pcommon.TraceID][]*Span)
	slab := make([]Span, td.SpanCount())
	wrapAll(td, slab)
	for i := range slab {
		s := &slab[i]
		id := s.Pdata.TraceID()
		out[id] = append(out[id], s)
	}
	return out
}

// SpansOfTrace wraps every span of td, which holds the spans of one trace (the handoff
// processor's buffer of a released trace), for Build: no grouping by trace id, the
// wrappers and the slice made in two allocations. As with SpansOf, td must stay alive and
// unchanged while the graph is used.
func SpansOfTrace(td ptrace.Traces) []*Span {
	slab := make([]Span, td.SpanCount())
	wrapAll(td, slab)
	out := make([]*Span, len(slab))
	for i := range slab {
		out[i] = &slab[i]
	}
	return out
}

// wrapAll fills slab (one Span per span of td, freshly made: zero) in td's order. Only the
// fields it sets are written: the rest of each wrapper is already zero.
func wrapAll(td ptrace.Traces, slab []Span) {
	n := 0
	rss := td.ResourceSpans()
	for i := 0; i < rss.Len(); i++ {
		rs := rss.At(i)
		res := rs.Resource()
		sss := rs.ScopeSpans()
		for j := 0; j < sss.Len(); j++ {
			ss := sss.At(j)
			scope := ss.Scope()
			spans := ss.Spans()
			for k := 0; k < spans.Len(); k++ {
				sp := spans.At(k)
				s := &slab[n]
				n++
				s.Pdata, s.Resource, s.Scope = sp, res, scope
				s.ID, s.ParentID = sp.SpanID(), sp.ParentSpanID()
			}
		}
	}
}

// BuildAll builds the graph of every trace in td, ordered by trace id, and resolves the
// span links between them (ResolveLinksAmong).
func BuildAll(td ptrace.Traces, opts Options) []*Graph {
	byTrace := SpansOf(td)
	ids := make([]pcommon.TraceID, 0, len(byTrace))
	for id := range byTrace {
		ids = append(ids, id)
	}
	sort.Slice(ids, func(i, j int) bool { return bytes.Compare(ids[i][:], ids[j][:]) < 0 })
	graphs := make([]*Graph, 0, len(ids))
	for _, id := range ids {
		graphs = append(graphs, Build(id, byTrace[id], opts))
	}
	ResolveLinksAmong(graphs)
	return graphs
}

// jsonText renders a decoded JSON value back as text (strings stay bare).
func jsonText(v any) string {
	if s, ok := v.(string); ok {
		return s
	}
	b, err := json.Marshal(v)
	if err != nil {
		return ""
	}
	return string(b)
}
