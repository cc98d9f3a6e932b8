package assertionconnector

import (
	"time"

	"go.opentelemetry.io/collector/pdata/pcommon"
	"go.opentelemetry.io/collector/pdata/plog"

	"github.com/otelcol-handoff/otelcol-handoff/assertionexporter"
	"github.com/otelcol-handoff/otelcol-handoff/connector/assertionconnector/internal/metadata"
	"github.com/otelcol-handoff/otelcol-handoff/internal/agentgraph"
	"github.com/otelcol-handoff/otelcol-handoff/internal/rules"
)

// buildLogs makes one gen_ai.evaluation.result log record per result: the judged span's
// trace and span id, timed at that span's end (observed now), under the resource of the
// trace's root agent span. handoffs are the HANDOFF spans present in the trace.
func buildLogs(verdicts []assertionexporter.TraceVerdict, handoffs map[pcommon.SpanID]bool, now time.Time) plog.Logs {
	ld := plog.NewLogs()
	observed := pcommon.NewTimestampFromTime(now)
	present := func(id pcommon.SpanID) bool { return handoffs[id] }
	for _, v := range verdicts {
		if len(v.Results) == 0 {
			continue
		}
		g := v.Graph
		rl := ld.ResourceLogs().AppendEmpty()
		if rs := rootResource(g); rs != nil {
			rs.CopyTo(rl.Resource())
		}
		sl := rl.ScopeLogs().AppendEmpty()
		sl.Scope().SetName(metadata.ScopeName)
		x := indexGraph(g)
		for _, r := range v.Results {
			id, e := judgedSpan(g, x, r, present)
			lr := sl.LogRecords().AppendEmpty()
			lr.SetEventName(EventName)
			lr.SetTraceID(g.TraceID)
			lr.SetSpanID(id)
			lr.SetTimestamp(endOf(g, x, id))
			lr.SetObservedTimestamp(observed)
			lr.SetSeverityNumber(severityOf(r.Outcome))
			lr.SetSeverityText(lr.SeverityNumber().String())
			putResultAttributes(lr.Attributes(), r, e)
		}
	}
	return ld
}

func severityOf(o rules.Outcome) plog.SeverityNumber {
	switch o {
	case rules.Fail:
		return plog.SeverityNumberWarn
	case rules.Error:
		return plog.SeverityNumberError
	}
	return plog.SeverityNumberInfo
}

// rootResource is the resource of the root agent's span (else of the trace's root span).
func rootResource(g *agentgraph.Graph) *pcommon.Resource {
	switch {
	case g.Root != nil && g.Root.Span != nil:
		return &g.Root.Span.Resource
	case g.RootSpan != nil:
		return &g.RootSpan.Resource
	}
	return nil
}

// endOf is the end time of span id: a span of the graph, or a HANDOFF span (which ends
// with its receiver).
func endOf(g *agentgraph.Graph, x spanIndex, id pcommon.SpanID) pcommon.Timestamp {
	if s := x[id.String()]; s != nil {
		return s.Span.EndTimestamp()
	}
	for _, e := range g.Edges {
		if g.HandoffSpanIDOf(e) == id {
			return e.To.Span.Span.EndTimestamp()
		}
	}
	return 0
}
