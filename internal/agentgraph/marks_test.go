package agentgraph

import (
	"testing"

	"github.com/stretchr/testify/require"
	"go.opentelemetry.io/collector/pdata/pcommon"
	"go.opentelemetry.io/collector/pdata/ptrace"
)

// Marks land on the span named by trace and span id, in place; a span the batch does not
// hold (another trace's span id, or one not sent) is not marked and reported so.
func TestSpansToMarkWritesOnTheNamedSpan(t *testing.T) {
	td := ptrace.NewTraces()
	spans := td.ResourceSpans().AppendEmpty().ScopeSpans().AppendEmpty().Spans()
	a, b := pcommon.TraceID{0xa}, pcommon.TraceID{0xb}
	for _, tr := range []pcommon.TraceID{a, b} {
		sp := spans.AppendEmpty()
		sp.SetTraceID(tr)
		sp.SetSpanID(pcommon.SpanID{1})
	}
	marks := SpansToMark(td)
	require.True(t, marks.Has(b, pcommon.SpanID{1}))
	require.False(t, marks.Has(b, pcommon.SpanID{2}))

	require.True(t, marks.SetAttributes(b, pcommon.SpanID{1}, func(m pcommon.Map) { m.PutStr("verdict", "fail") }))
	require.True(t, marks.AppendEvent(b, pcommon.SpanID{1}, "evaluated", 42, func(m pcommon.Map) { m.PutStr("case", "c") }))
	require.False(t, marks.SetAttributes(a, pcommon.SpanID{2}, func(pcommon.Map) { t.Fatal("wrote on a span not in the batch") }))
	require.False(t, marks.AppendEvent(pcommon.TraceID{0xc}, pcommon.SpanID{1}, "x", 0, func(pcommon.Map) { t.Fatal("wrote on a span not in the batch") }))

	untouched, marked := spans.At(0), spans.At(1)
	require.Zero(t, untouched.Attributes().Len(), "the same span id in another trace")
	require.Zero(t, untouched.Events().Len())
	v, _ := marked.Attributes().Get("verdict")
	require.Equal(t, "fail", v.Str())
	require.Equal(t, 1, marked.Events().Len())
	ev := marked.Events().At(0)
	require.Equal(t, "evaluated", ev.Name())
	require.Equal(t, pcommon.Timestamp(42), ev.Timestamp())
	c, _ := ev.Attributes().Get("case")
	require.Equal(t, "c", c.Str())
}

// The resource of records about a whole trace is the root agent span's, not the trace
// root's (a gateway in front of the agents), else the trace root's; a graph without spans
// leaves the destination as it was.
func TestCopyRootResourceToTakesTheRootAgentsResource(t *testing.T) {
	id := pcommon.TraceID{7}
	td := ptrace.NewTraces()
	addSpan := func(service string, sid, parent pcommon.SpanID, attrs map[string]string) {
		rs := td.ResourceSpans().AppendEmpty()
		rs.Resource().Attributes().PutStr("service.name", service)
		sp := rs.ScopeSpans().AppendEmpty().Spans().AppendEmpty()
		sp.SetTraceID(id)
		sp.SetSpanID(sid)
		sp.SetParentSpanID(parent)
		sp.SetName(service)
		for k, v := range attrs {
			sp.Attributes().PutStr(k, v)
		}
	}
	serviceOf := func(g *Graph) string {
		res := pcommon.NewResource()
		res.Attributes().PutStr("service.name", "untouched")
		g.CopyRootResourceTo(res)
		v, _ := res.Attributes().Get("service.name")
		return v.Str()
	}
	addSpan("gateway", pcommon.SpanID{1}, pcommon.SpanID{}, nil)
	require.Equal(t, "gateway", serviceOf(Build(id, SpansOfTrace(td), Options{})), "no agent span: the trace root's")
	addSpan("planner", pcommon.SpanID{2}, pcommon.SpanID{1},
		map[string]string{"gen_ai.operation.name": "invoke_agent", "gen_ai.agent.name": "planner"})
	g := Build(id, SpansOfTrace(td), Options{})
	require.NotNil(t, g.Root)
	require.Equal(t, "planner", serviceOf(g))
	require.Equal(t, "untouched", serviceOf(Build(id, nil, Options{})))
}
