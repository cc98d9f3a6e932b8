package assertionconnector

import (
	"go.opentelemetry.io/collector/pdata/pcommon"
	"go.opentelemetry.io/collector/pdata/ptrace"

	"github.com/otelcol-handoff/otelcol-handoff/assertionexporter"
	"github.com/otelcol-handoff/otelcol-handoff/internal/agentgraph"
)

// stampVerdicts writes, in place, each trace's verdict on its root agent span (handoff.verdict,
// handoff.verdict.failed, and handoff.verdict.pending when judge gradings are still to
// come) and each result as a gen_ai.evaluation.result span event on its judged span, timed
// at that span's end. It adds and removes no span and moves none. The model finds the
// spans by id (agentgraph.SpansToMark); a span the batch does not hold is not marked.
func stampVerdicts(td ptrace.Traces, verdicts []assertionexporter.TraceVerdict) {
	if len(verdicts) == 0 {
		return
	}
	spans := agentgraph.SpansToMark(td)
	for _, v := range verdicts {
		g := v.Graph
		verdict, failed, ok := verdictOf(v.Results)
		if !ok && v.Pending == 0 {
			continue // no case selected the trace
		}
		spans.SetAttributes(g.TraceID, rootAgentSpan(g), func(attrs pcommon.Map) {
			attrs.PutStr(AttrVerdict, verdict)
			list := attrs.PutEmptySlice(AttrVerdictFailed)
			for _, f := range failed {
				list.AppendEmpty().SetStr(f)
			}
			if v.Pending > 0 {
				attrs.PutInt(AttrVerdictPending, int64(v.Pending))
			}
		})
		x := indexGraph(g)
		present := func(s pcommon.SpanID) bool { return spans.Has(g.TraceID, s) }
		for _, r := range v.Results {
			id, e := judgedSpan(g, x, r, present)
			spans.AppendEvent(g.TraceID, id, EventName, endOf(g, x, id), func(attrs pcommon.Map) {
				putResultAttributes(attrs, r, e)
			})
		}
	}
}
