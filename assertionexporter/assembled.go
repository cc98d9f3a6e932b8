package assertionexporter

import (
	"context"
	"errors"
	"fmt"
	"strings"

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

// The graphs the handoff processor hands on travel with the options it built them with. An
// exporter (or connector) with other chains would judge another DAG than the processor
// built, so its results are errors too, with one Error line naming the fix. Only the chains
// must agree: count_delegation_calls_as_tool_calls is an exporter-side option, so a
// different setting of it rebuilds the graph (agentgraph.SharedGraph returns none).

// chainsDiffer is the reason of every result of a trace whose graph the handoff processor
// built with other chains than the exporter's (keys: the chains that differ).
func chainsDiffer(keys []string) error {
	return fmt.Errorf("chains differ from the handoff processor's (%s): the exporter would judge another graph than the processor built, "+
		"so this trace was not judged; set the same chains in both, or remove them from the exporter", strings.Join(keys, ", "))
}

// errPricesDiffer is the reason of every result of a trace whose graph the handoff
// processor priced with other pricing overrides than the exporter's: its costs, on the
// spans and in the graph, are not the ones the exporter's cost budgets would judge.
var errPricesDiffer = errors.New("pricing differs from the handoff processor's: the exporter would judge other costs than the processor " +
	"wrote on the spans, so this trace was not judged; set the same pricing in both, or remove it from both")

// checkUpstream returns a trace's evaluation as the exporter records it: as evaluated, or
// with every result an error naming why when the handoff processor built its graph with
// other chains, or when the processor is required and did not hand the trace on.
func (e *assertionExporter) checkUpstream(ctx context.Context, id pcommon.TraceID, ev rules.Evaluation) rules.Evaluation {
	if opts, fp, ok := agentgraph.SharedOptions(ctx); ok && !fp.SameChains(e.graphFP) {
		keys := agentgraph.DifferingChains(opts.Chains, e.graphOpts.Chains)
		if e.chainsDifferLogged.CompareAndSwap(false, true) {
			e.logger.Error("assertion exporter has other chains than the handoff processor it reads from; "+
				"the results of every trace it hands on are errors",
				zap.Strings("chains", keys), zap.String("trace_id", id.String()),
				zap.String("fix", "set the same chains in the handoff processor and this exporter, or remove them from the exporter"))
		}
		return refused(ev, chainsDiffer(keys), "chains differ")
	}
	if _, fp, ok := agentgraph.SharedOptions(ctx); ok && !fp.SamePrices(e.graphFP) {
		if e.pricesDifferLogged.CompareAndSwap(false, true) {
			e.logger.Error("assertion exporter has other prices than the handoff processor it reads from; "+
				"the results of every trace it hands on are errors",
				zap.String("trace_id", id.String()),
				zap.String("fix", "set the same pricing in the handoff processor and this exporter, or remove it from both"))
		}
		return refused(ev, errPricesDiffer, "prices differ")
	}
	if !e.cfg.RequireHandoffProcessor || agentgraph.Assembled(ctx, id) {
		return ev
	}
	if e.unassembledLogged.CompareAndSwap(false, true) {
		e.logger.Error("assertion exporter received a trace the handoff processor did not assemble; "+
			"its results, and those of every such trace, are errors",
			zap.String("trace_id", id.String()),
			zap.String("fix", "put the handoff processor before this exporter in its traces pipeline (no batch processor between them), "+
				"or set require_handoff_processor: false if the traces arrive whole by another way"))
	}
	return refused(ev, errNotAssembled, "not assembled")
}

// refused returns ev with every result an error of reason why (the judge's gradings too:
// they are not sent).
func refused(ev rules.Evaluation, why error, actual string) rules.Evaluation {
	results := ev.Now
	if ev.Grading != nil {
		results, _ = ev.Grading.Fail(why)
	}
	out := make([]rules.Result, len(results))
	for i, r := range results {
		r.Outcome, r.Score, r.Judge = rules.Error, nil, nil
		r.Actual, r.Message = actual, why.Error()
		out[i] = r
	}
	return rules.Evaluation{Now: out, TimedOut: ev.TimedOut}
}
