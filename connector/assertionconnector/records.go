package assertionconnector

// records.go builds the connector's log records and metric data points and writes their
// attributes; what it needs of a span, its end time and the root's resource included,
// comes from the model (agentgraph's only-reader check tells these attributes from a
// span's by their types). The
// forwarded spans are marked in stamp.go, through the model.

import (
	"time"

	"go.opentelemetry.io/collector/pdata/pcommon"
	"go.opentelemetry.io/collector/pdata/plog"
	"go.opentelemetry.io/collector/pdata/pmetric"

	"github.com/otelcol-handoff/otelcol-handoff/assertionexporter"
	"github.com/otelcol-handoff/otelcol-handoff/connector/assertionconnector/internal/metadata"
	"github.com/otelcol-handoff/otelcol-handoff/internal/agentgraph"
	"github.com/otelcol-handoff/otelcol-handoff/internal/rules"
)

// putResultAttributes writes one result's gen_ai.evaluation.result attributes; e is the
// handoff the result is about (nil: none).
func putResultAttributes(attrs pcommon.Map, r rules.Result, e *agentgraph.Edge) {
	attrs.PutStr(AttrEvaluationName, r.Case+"/"+r.Step)
	if r.Score != nil {
		attrs.PutDouble(AttrScoreValue, *r.Score)
	}
	attrs.PutStr(AttrScoreLabel, string(r.Outcome))
	attrs.PutStr(AttrExplanation, r.Message)
	if r.Outcome == rules.Error {
		attrs.PutStr(AttrErrorType, errorTypeOf(r))
	}
	attrs.PutStr(AttrExpected, r.Expected)
	attrs.PutStr(AttrActual, r.Actual)
	attrs.PutStr(AttrTestCaseName, r.Case)
	attrs.PutStr(AttrStep, r.Step)
	if r.Outcome == rules.Fail {
		attrs.PutStr(AttrFailureCluster, string(r.Cluster.Or()))
		attrs.PutStr(AttrFailureSignature, r.Signature)
	}
	switch {
	case r.From != "" || r.To != "":
		attrs.PutStr(AttrHandoffSource, r.From)
		attrs.PutStr(AttrHandoffTarget, r.To)
	case e != nil:
		attrs.PutStr(AttrHandoffSource, e.From.Name)
		attrs.PutStr(AttrHandoffTarget, e.To.Name)
	}
}

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
		g.CopyRootResourceTo(rl.Resource())
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

// endOf is the end time of span id: a span of the graph, or a HANDOFF span (which ends
// with its receiver).
func endOf(g *agentgraph.Graph, x spanIndex, id pcommon.SpanID) pcommon.Timestamp {
	if s := x[id.String()]; s != nil {
		return s.End()
	}
	for _, e := range g.Edges {
		if g.HandoffSpanIDOf(e) == id {
			return e.To.Span.End()
		}
	}
	return 0
}

func putExemplar(exs pmetric.ExemplarSlice, ex exemplar) {
	e := exs.AppendEmpty()
	e.SetTraceID(ex.trace)
	e.SetSpanID(ex.span)
	e.SetTimestamp(ex.at)
	e.SetDoubleValue(ex.value)
}

// newMetric appends a metric with its name, unit and description to ms.
func newMetric(ms pmetric.MetricSlice, name, unit, desc string) pmetric.Metric {
	m := ms.AppendEmpty()
	m.SetName(name)
	m.SetUnit(unit)
	m.SetDescription(desc)
	return m
}

func sums[K comparable](ms pmetric.MetricSlice, name, unit, desc string, points map[K]*sumPoint, ts, start pcommon.Timestamp,
	attrs func(K, pcommon.Map), less func(a, b K) bool,
) {
	if len(points) == 0 {
		return
	}
	s := newMetric(ms, name, unit, desc).SetEmptySum()
	s.SetIsMonotonic(true)
	s.SetAggregationTemporality(pmetric.AggregationTemporalityCumulative)
	for _, k := range sortedKeys(points, less) {
		p := points[k]
		dp := s.DataPoints().AppendEmpty()
		attrs(k, dp.Attributes())
		dp.SetStartTimestamp(start)
		dp.SetTimestamp(ts)
		dp.SetIntValue(p.value)
		putExemplar(dp.Exemplars(), p.ex)
	}
}

func hists[K comparable](ms pmetric.MetricSlice, name, unit, desc string, bounds []float64, points map[K]*histPoint, ts, start pcommon.Timestamp,
	attrs func(K, pcommon.Map), less func(a, b K) bool,
) {
	if len(points) == 0 {
		return
	}
	h := newMetric(ms, name, unit, desc).SetEmptyHistogram()
	h.SetAggregationTemporality(pmetric.AggregationTemporalityCumulative)
	for _, k := range sortedKeys(points, less) {
		p := points[k]
		dp := h.DataPoints().AppendEmpty()
		attrs(k, dp.Attributes())
		dp.SetStartTimestamp(start)
		dp.SetTimestamp(ts)
		dp.ExplicitBounds().FromRaw(bounds)
		dp.BucketCounts().FromRaw(p.counts)
		dp.SetCount(p.count)
		dp.SetSum(p.sum)
		dp.SetMin(p.minV)
		dp.SetMax(p.maxV)
		putExemplar(dp.Exemplars(), p.ex)
	}
}
