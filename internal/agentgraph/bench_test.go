package agentgraph

import (
	"encoding/binary"
	"fmt"
	"testing"

	"go.opentelemetry.io/collector/pdata/pcommon"
	"go.opentelemetry.io/collector/pdata/ptrace"
)

// scaledTrace builds a realistic agent trace of about n spans from a real capture: the
// capture's spans are copied k times under one trace id with fresh span ids, so each copy
// is another delegation subtree (fan-out) with the capture's attribute sizes.
func scaledTrace(b *testing.B, capture ptrace.Traces, n int, traceID pcommon.TraceID) ptrace.Traces {
	b.Helper()
	per := capture.SpanCount()
	copies := max(1, n/per)
	out := ptrace.NewTraces()
	for c := 0; c < copies; c++ {
		rss := capture.ResourceSpans()
		for i := 0; i < rss.Len(); i++ {
			rs := out.ResourceSpans().AppendEmpty()
			rss.At(i).CopyTo(rs)
			sss := rs.ScopeSpans()
			for j := 0; j < sss.Len(); j++ {
				spans := sss.At(j).Spans()
				for k := 0; k < spans.Len(); k++ {
					sp := spans.At(k)
					sp.SetTraceID(traceID)
					sp.SetSpanID(remap(sp.SpanID(), c))
					if !sp.ParentSpanID().IsEmpty() {
						sp.SetParentSpanID(remap(sp.ParentSpanID(), c))
					}
				}
			}
		}
	}
	return out
}

// remap gives copy c of a span id its own id space.
func remap(id pcommon.SpanID, c int) pcommon.SpanID {
	binary.BigEndian.PutUint16(id[0:2], uint16(c)+1)
	return id
}

func BenchmarkBuild(b *testing.B) {
	capture := capture(b, "strands-ok")
	for _, n := range []int{17, 100, 500} {
		td := scaledTrace(b, capture, n, pcommon.TraceID{1})
		td.MarkReadOnly()
		spans := td.SpanCount()
		b.Run(fmt.Sprintf("spans=%d", spans), func(b *testing.B) {
			b.ReportAllocs()
			b.SetBytes(int64((&ptrace.ProtoMarshaler{}).TracesSize(td)))
			for b.Loop() {
				BuildAll(td, Options{})
			}
			b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(b.N*spans), "ns/span")
		})
	}
}

func BenchmarkAppendHandoffs(b *testing.B) {
	capture := capture(b, "strands-ok")
	for _, n := range []int{17, 500} {
		td := scaledTrace(b, capture, n, pcommon.TraceID{1})
		g := BuildAll(td, Options{})[0]
		b.Run(fmt.Sprintf("spans=%d/edges=%d", td.SpanCount(), len(g.Edges)), func(b *testing.B) {
			b.ReportAllocs()
			for b.Loop() {
				AppendHandoffs(g, ptrace.NewTraces(), ContentPolicy{MaxBytes: 4096})
			}
		})
	}
}
