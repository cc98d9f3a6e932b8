package assertionexporter

import (
	"context"
	"errors"

	"go.opentelemetry.io/collector/pdata/pcommon"
	"go.uber.org/zap"

	"github.com/otelcol-handoff/otelcol-handoff/internal/agentgraph"
	"github.com/otelcol-handoff/otelcol-handoff/internal/rules"
)

// No component can learn its pipeline in collector v0.161.0 (see README, "Behind the handoff
// processor"), so the check is made on the data: a trace the handoff processor did not hand
// on (agentgraph.Assembled) may be a fragment of a trace, and judging it would give verdicts
// on part of a run. Its results are errors instead, and the first such trace logs one Error
// line naming the fix.

// errNotAssembled is the reason of every result of a trace that did not come whole from the
// handoff processor.
var errNotAssembled = errors.New("not assembled by the handoff processor: this trace may be a fragment, so it was not judged; " +
	"put the handoff processor before the assertion exporter in the traces pipeline (with no batch processor between " +
	"them), or set require_handoff_processor: false if the traces arrive whole by another way")

// checkAssembled returns a trace's evaluation as the exporter records it: as evaluated, or,
// when the handoff processor is required and did not hand the trace on, with every result
// an error naming why (the judge's gradings too: they are not sent); the first such trace
// logs the fix.
func (e *assertionExporter) checkAssembled(ctx context.Context, id pcommon.TraceID, ev rules.Evaluation) rules.Evaluation {
	if !e.cfg.RequireHandoffProcessor || agentgraph.Assembled(ctx, id) {
		return ev
	}
	results := ev.Now
	if ev.Grading != nil {
		results, _ = ev.Grading.Fail(errNotAssembled)
	}
	out := make([]rules.Result, len(results))
	for i, r := range results {
		r.Outcome, r.Score, r.Judge = rules.Error, nil, nil
		r.Actual, r.Message = "not assembled", errNotAssembled.Error()
		out[i] = r
	}
	if e.unassembledLogged.CompareAndSwap(false, true) {
		e.logger.Error("assertion exporter received a trace the handoff processor did not assemble; "+
			"its results, and those of every such trace, are errors",
			zap.String("trace_id", id.String()),
			zap.String("fix", "put the handoff processor before this exporter in its traces pipeline (no batch processor between them), "+
				"or set require_handoff_processor: false if the traces arrive whole by another way"))
	}
	return rules.Evaluation{Now: out, TimedOut: ev.TimedOut}
}
