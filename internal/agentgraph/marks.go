package agentgraph

import (
	"go.opentelemetry.io/collector/pdata/pcommon"
	"go.opentelemetry.io/collector/pdata/ptrace"

	"github.com/otelcol-handoff/otelcol-handoff/internal/spanwalk"
)

// Spans marked by id. A component that marks the spans it forwards (the assertion
// connector's verdicts) names a span by trace and span id; the model finds it in the batch
// and hands over what is to be written, as it writes costs, incomplete marks and HANDOFF
// spans itself. Nothing here reads the spans' content.

// BatchSpans are the spans of one batch by trace and span id, for marking.
type BatchSpans struct {
	spans map[batchSpanKey]ptrace.Span
}

type batchSpanKey struct {
	trace pcommon.TraceID
	span  pcommon.SpanID
}

// SpansToMark indexes every span of td.
func SpansToMark(td ptrace.Traces) BatchSpans {
	b := BatchSpans{spans: make(map[batchSpanKey]ptrace.Span, td.SpanCount())}
	spanwalk.Each(td, func(_ pcommon.Resource, sp ptrace.Span) {
		b.spans[batchSpanKey{sp.TraceID(), sp.SpanID()}] = sp
	})
	return b
}

// Has reports whether the batch holds span of trace.
func (b BatchSpans) Has(trace pcommon.TraceID, span pcommon.SpanID) bool {
	_, ok := b.spans[batchSpanKey{trace, span}]
	return ok
}

// SetAttributes lets set write attributes on span of trace; false when the batch does not
// hold it.
func (b BatchSpans) SetAttributes(trace pcommon.TraceID, span pcommon.SpanID, set func(pcommon.Map)) bool {
	sp, ok := b.spans[batchSpanKey{trace, span}]
	if ok {
		set(sp.Attributes())
	}
	return ok
}

// AppendEvent appends to span of trace an event named name at at, its attributes written
// by set; false when the batch does not hold the span.
func (b BatchSpans) AppendEvent(trace pcommon.TraceID, span pcommon.SpanID, name string, at pcommon.Timestamp, set func(pcommon.Map)) bool {
	sp, ok := b.spans[batchSpanKey{trace, span}]
	if ok {
		ev := sp.Events().AppendEmpty()
		ev.SetName(name)
		ev.SetTimestamp(at)
		set(ev.Attributes())
	}
	return ok
}

// CopyRootResourceTo copies the resource of g's root agent span (else of its root span)
// into dst: the resource of records a component makes about the whole trace (the assertion
// connector's verdict logs). dst is left as it is when g has neither.
func (g *Graph) CopyRootResourceTo(dst pcommon.Resource) {
	switch {
	case g.Root != nil && g.Root.Span != nil:
		g.Root.Span.Resource.CopyTo(dst)
	case g.RootSpan != nil:
		g.RootSpan.Resource.CopyTo(dst)
	}
}
