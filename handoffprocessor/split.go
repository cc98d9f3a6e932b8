package handoffprocessor

import (
	"go.opentelemetry.io/collector/pdata/pcommon"
	"go.opentelemetry.io/collector/pdata/ptrace"
)

// fragment is the part of one incoming batch that belongs to one trace.
type fragment struct {
	id      pcommon.TraceID
	data    ptrace.Traces
	spans   int
	bytes   int
	hasRoot bool

	// where the last span went, so spans of one resource and scope stay together
	rsIdx, ssIdx int
	ss           ptrace.SpanSlice
}

// splitByTrace moves the spans of td into one fragment per trace id, each span keeping its
// resource and scope. td is left empty (the processor declares MutatesData).
func splitByTrace(td ptrace.Traces) []*fragment {
	var order []*fragment
	byID := make(map[pcommon.TraceID]*fragment)
	rss := td.ResourceSpans()
	for i := 0; i < rss.Len(); i++ {
		rs := rss.At(i)
		sss := rs.ScopeSpans()
		for j := 0; j < sss.Len(); j++ {
			ss := sss.At(j)
			spans := ss.Spans()
			for k := 0; k < spans.Len(); k++ {
				sp := spans.At(k)
				f := byID[sp.TraceID()]
				if f == nil {
					f = &fragment{id: sp.TraceID(), data: ptrace.NewTraces(), rsIdx: -1, ssIdx: -1}
					byID[f.id] = f
					order = append(order, f)
				}
				if f.rsIdx != i || f.ssIdx != j {
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

// markSpans sets a boolean attribute on every span of td.
func markSpans(td ptrace.Traces, key string) {
	rss := td.ResourceSpans()
	for i := 0; i < rss.Len(); i++ {
		sss := rss.At(i).ScopeSpans()
		for j := 0; j < sss.Len(); j++ {
			spans := sss.At(j).Spans()
			for k := 0; k < spans.Len(); k++ {
				spans.At(k).Attributes().PutBool(key, true)
			}
		}
	}
}
