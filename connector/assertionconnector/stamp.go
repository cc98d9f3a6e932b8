package assertionconnector

import (
	"go.opentelemetry.io/collector/pdata/pcommon"
	"go.opentelemetry.io/collector/pdata/ptrace"

	"github.com/otelcol-handoff/otelcol-handoff/assertionexporter"
)

// stamper writes verdicts onto the spans being forwarded.
type stamper struct{}

type spanKey struct {
	trace pcommon.TraceID
	span  pcommon.SpanID
}

// stamp writes, in place, each trace's verdict on its root agent span (handoff.verdict,
// handoff.verdict.failed, and handoff.verdict.pending when judge gradings are still to
// come) and each result as a gen_ai.evaluation.result span event on its judged span, timed
// at that span's end. It adds and removes no span and moves none.
func (*stamper) stamp(td ptrace.Traces, verdicts []assertionexporter.TraceVerdict) {
	if len(verdicts) == 0 {
		return
	}
	spans := map[spanKey]ptrace.Span{}
	forEachSpan(td, func(_ pcommon.Resource, sp ptrace.Span) {
		spans[spanKey{sp.TraceID(), sp.SpanID()}] = sp
	})
	present := func(id pcommon.TraceID) func(pcommon.SpanID) bool {
		return func(s pcommon.SpanID) bool { _, ok := spans[spanKey{id, s}]; return ok }
	}
	for _, v := range verdicts {
		g := v.Graph
		verdict, failed, ok := verdictOf(v.Results)
		if !ok && v.Pending == 0 {
			continue // no case selected the trace
		}
		if root, found := spans[spanKey{g.TraceID, rootAgentSpan(g)}]; found {
			attrs := root.Attributes()
			attrs.PutStr(AttrVerdict, verdict)
			list := attrs.PutEmptySlice(AttrVerdictFailed)
			for _, f := range failed {
				list.AppendEmpty().SetStr(f)
			}
			if v.Pending > 0 {
				attrs.PutInt(AttrVerdictPending, int64(v.Pending))
			}
		}
		x := indexGraph(g)
		for _, r := range v.Results {
			id, e := judgedSpan(g, x, r, present(g.TraceID))
			sp, found := spans[spanKey{g.TraceID, id}]
			if !found {
				continue
			}
			ev := sp.Events().AppendEmpty()
			ev.SetName(EventName)
			ev.SetTimestamp(sp.EndTimestamp())
			putResultAttributes(ev.Attributes(), r, e)
		}
	}
}
