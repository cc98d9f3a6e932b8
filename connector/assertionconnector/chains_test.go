package assertionconnector

import (
	"context"
	"testing"

	"github.com/stretchr/testify/require"
	"go.opentelemetry.io/collector/pdata/pcommon"
	"go.opentelemetry.io/collector/pdata/plog"
	"go.opentelemetry.io/collector/pdata/ptrace"

	"github.com/otelcol-handoff/otelcol-handoff/internal/agentgraph"
)

// withProcessorGraphs is ctx as the handoff processor (default chains) hands td on: with
// the graph of each of its traces.
func withProcessorGraphs(td ptrace.Traces) context.Context {
	graphs := map[pcommon.TraceID]agentgraph.Shared{}
	scans := agentgraph.ScanBatch(td)
	for _, g := range agentgraph.BuildAll(td, agentgraph.Options{}) {
		graphs[g.TraceID] = agentgraph.Shared{Graph: g, Spans: scans[g.TraceID].Kept}
	}
	return agentgraph.ContextWithGraphs(context.Background(), agentgraph.Options{}, agentgraph.Options{}.Fingerprint(), graphs)
}

// TestChainsDifferFromTheProcessorsAreErrors: the connector shares the exporter's engine,
// so with other chains than the handoff processor in front of it every result is an error
// naming the chains that differ, on every signal.
func TestChainsDifferFromTheProcessorsAreErrors(t *testing.T) {
	cfg := weatherConfig(t)
	cfg.Assertions.Chains = agentgraph.Chains{ErrorType: agentgraph.Chain{"my.error"}}
	requireAllRefused(t, cfg, "chains differ from the handoff processor's (error_type)")
}

// requireAllRefused runs the two captures, as the handoff processor with its defaults hands
// them on, through a connector of cfg: every result of both is an error explained by why.
func requireAllRefused(t *testing.T, cfg *Config, why string) {
	t.Helper()
	h := newHarness(t, cfg)
	in := released(t, "google-adk-ok.json", "strands-ok.json")
	h.consumeIn(t, withProcessorGraphs(in), in)
	h.shutdown(t)

	n := 0
	for _, ld := range h.logs.AllLogs() {
		forEachRecord(ld, func(lr plog.LogRecord) {
			n++
			label, _ := lr.Attributes().Get(AttrScoreLabel)
			require.Equal(t, "error", label.Str())
			expl, _ := lr.Attributes().Get(AttrExplanation)
			require.Contains(t, expl.Str(), why)
		})
	}
	require.Equal(t, 12, n, "6 results per trace, 2 traces")
}

// TestSameChainsAreJudged: the same ctx with the connector's chains left to the defaults
// is judged as usual (TestLogsOneRecordPerResult's verdicts hold a pass).
func TestSameChainsAreJudged(t *testing.T) {
	h := newHarness(t, weatherConfig(t))
	in := released(t, "google-adk-ok.json", "strands-ok.json")
	h.consumeIn(t, withProcessorGraphs(in), in)
	h.shutdown(t)
	labels := map[string]int{}
	for _, ld := range h.logs.AllLogs() {
		forEachRecord(ld, func(lr plog.LogRecord) {
			label, _ := lr.Attributes().Get(AttrScoreLabel)
			labels[label.Str()]++
		})
	}
	require.Equal(t, map[string]int{"pass": 8, "fail": 4}, labels)
}
