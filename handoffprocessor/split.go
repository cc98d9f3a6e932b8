package handoffprocessor

import (
	"go.opentelemetry.io/collector/pdata/pcommon"
	"go.opentelemetry.io/collector/pdata/ptrace"

	"github.com/otelcol-handoff/otelcol-handoff/internal/spanwalk"
)

// fragment is the part of one incoming batch that belongs to one trace.
type fragment struct {
	id    pcommon.TraceID
	data  ptrace.Traces
	spans int
	// encoded is data as protobuf and bytes its protobuf size, set (bufferCodec.encode)
	// for a fragment offered to a shard.
	encoded storedFragment
	bytes   int
	hasRoot bool

	// where the last span went, so spans of one resource and scope stay together
	rsIdx, ssIdx int
	ss           ptrace.SpanSlice
}

// splitByTrace moves the spans of td into one fragment per trace id, each span keeping its
// resource and scope. td is left empty (the processor declares MutatesData).
//
// Spans are moved without copying where the batch allows: a resource's spans that all
// belong to one trace move with their resource and scopes as they are (no resource copy,
// no span copied into a new one); a scope's spans that all belong to one trace move as one
// slice. Only a scope mixing traces is split span by span.
func splitByTrace(td ptrace.Traces) []*fragment { return split(td, true) }

// split is splitByTrace; whole false moves every span on its own (the definition the
// tests compare the whole moves with).
func split(td ptrace.Traces, whole bool) []*fragment {
	var order []*fragment
	byID := make(map[pcommon.TraceID]*fragment)
	get := func(id pcommon.TraceID) *fragment {
		f := byID[id]
		if f == nil {
			f = &fragment{id: id, data: ptrace.NewTraces(), rsIdx: -1, ssIdx: -1}
			byID[id] = f
			order = append(order, f)
		}
		return f
	}
	rss := td.ResourceSpans()
	for i := 0; i < rss.Len(); i++ {
		rs := rss.At(i)
		sss := rs.ScopeSpans()
		if id, n, root, ok := oneTrace(rs); whole && ok {
			if n == 0 {
				continue // no spans: nothing to keep, as span by span
			}
			f := get(id)
			sss.RemoveIf(func(ss ptrace.ScopeSpans) bool { return ss.Spans().Len() == 0 })
			rs.MoveTo(f.data.ResourceSpans().AppendEmpty())
			f.rsIdx, f.ssIdx = -1, -1 // the next spans of f start a resource of their own
			f.spans += n
			f.hasRoot = f.hasRoot || root
			continue
		}
		for j := 0; j < sss.Len(); j++ {
			ss := sss.At(j)
			spans := ss.Spans()
			if id, root, ok := oneTraceSpans(spans); whole && ok && spans.Len() > 0 {
				f := get(id)
				f.scope(rs, ss, i, j)
				f.spans += spans.Len()
				f.hasRoot = f.hasRoot || root
				spans.MoveAndAppendTo(f.ss)
				continue
			}
			for k := 0; k < spans.Len(); k++ {
				sp := spans.At(k)
				f := get(sp.TraceID())
				f.scope(rs, ss, i, j)
				if sp.ParentSpanID().IsEmpty() {
					f.hasRoot = true
				}
				sp.MoveTo(f.ss.AppendEmpty())
				f.spans++
			}
		}
	}
	return order
}

// scope points f.ss at f's copy of resource i and scope j of the batch, making them when
// f's last span went elsewhere.
func (f *fragment) scope(rs ptrace.ResourceSpans, ss ptrace.ScopeSpans, i, j int) {
	if f.rsIdx == i && f.ssIdx == j {
		return
	}
	var dstRS ptrace.ResourceSpans
	if f.rsIdx == i {
		dstRS = f.data.ResourceSpans().At(f.data.ResourceSpans().Len() - 1)
	} else {
		dstRS = f.data.ResourceSpans().AppendEmpty()
		rs.Resource().CopyTo(dstRS.Resource())
		dstRS.SetSchemaUrl(rs.SchemaUrl())
	}
	dstSS := dstRS.ScopeSpans().AppendEmpty()
	ss.Scope().CopyTo(dstSS.Scope())
	dstSS.SetSchemaUrl(ss.SchemaUrl())
	f.rsIdx, f.ssIdx, f.ss = i, j, dstSS.Spans()
}

// oneTrace reports whether every span of rs has one trace id (true for none), how many
// spans it has, and whether one is a root.
func oneTrace(rs ptrace.ResourceSpans) (id pcommon.TraceID, n int, root, ok bool) {
	sss := rs.ScopeSpans()
	first := true
	for j := 0; j < sss.Len(); j++ {
		spans := sss.At(j).Spans()
		for k := 0; k < spans.Len(); k++ {
			sp := spans.At(k)
			if first {
				id, first = sp.TraceID(), false
			} else if sp.TraceID() != id {
				return pcommon.TraceID{}, 0, false, false
			}
			if sp.ParentSpanID().IsEmpty() {
				root = true
			}
			n++
		}
	}
	return id, n, root, true
}

// oneTraceSpans reports whether every span of spans has one trace id (true for none), and
// whether one is a root.
func oneTraceSpans(spans ptrace.SpanSlice) (id pcommon.TraceID, root, ok bool) {
	for k := 0; k < spans.Len(); k++ {
		sp := spans.At(k)
		if k == 0 {
			id = sp.TraceID()
		} else if sp.TraceID() != id {
			return pcommon.TraceID{}, false, false
		}
		if sp.ParentSpanID().IsEmpty() {
			root = true
		}
	}
	return id, root, true
}

// markSpans sets a boolean attribute on every span of td.
func markSpans(td ptrace.Traces, key string) {
	spanwalk.Each(td, func(_ pcommon.Resource, sp ptrace.Span) { sp.Attributes().PutBool(key, true) })
}
