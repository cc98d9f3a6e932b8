package assertionconnector

import (
	"testing"

	"github.com/open-telemetry/opentelemetry-collector-contrib/pkg/pdatatest/ptracetest"
	"github.com/stretchr/testify/require"
	"go.opentelemetry.io/collector/pdata/pcommon"
	"go.opentelemetry.io/collector/pdata/ptrace"

	"github.com/otelcol-handoff/otelcol-handoff/internal/agentgraph"
	"github.com/otelcol-handoff/otelcol-handoff/internal/rules"
	"github.com/otelcol-handoff/otelcol-handoff/internal/spanwalk"
)

// TestUnjudgedSpansPassUnchanged: spans no case judges leave exactly as they came — a
// trace no case selects, late spans (their trace was judged already) and spans of the
// all-zero trace id — and yield no log record or result.
func TestUnjudgedSpansPassUnchanged(t *testing.T) {
	cfg := weatherConfig(t)
	for i := range cfg.Assertions.Cases {
		cfg.Assertions.Cases[i].When = `root_agent == "nobody"`
	}
	h := newHarness(t, cfg)
	in := released(t, "google-adk-ok.json", "strands-ok.json")
	late := released(t, "mastra-ok.json")
	spanwalk.Each(late, func(_ pcommon.Resource, sp ptrace.Span) { sp.Attributes().PutBool(agentgraph.AttrLateSpan, true) })
	late.ResourceSpans().MoveAndAppendTo(in.ResourceSpans())
	zero := released(t, "vercel-ai-ok.json")
	spanwalk.Each(zero, func(_ pcommon.Resource, sp ptrace.Span) { sp.SetTraceID(pcommon.NewTraceIDEmpty()) })
	zero.ResourceSpans().MoveAndAppendTo(in.ResourceSpans())

	h.consume(t, in)
	h.shutdown(t)
	require.NoError(t, ptracetest.CompareTraces(in, h.traces.AllTraces()[0]))
	require.Zero(t, h.logs.LogRecordCount())
	m := lastMetrics(t, h.metrics)
	_, any := m[MetricResults]
	require.False(t, any, "no result")
}

// TestVerdictOf: fail wins over error, error over pass; skipped and gated results decide
// nothing.
func TestVerdictOf(t *testing.T) {
	r := func(step string, o rules.Outcome, gated bool) rules.Result {
		return rules.Result{Case: "c", Step: step, Outcome: o, Gated: gated}
	}
	for _, tc := range []struct {
		results []rules.Result
		verdict string
		failed  []string
		ok      bool
	}{
		{nil, VerdictPass, nil, false},
		{[]rules.Result{r("a", rules.Pass, false), r("b", rules.Skipped, false)}, VerdictPass, nil, true},
		{[]rules.Result{r("a", rules.Error, false), r("b", rules.Pass, false)}, VerdictError, []string{"c/a"}, true},
		{[]rules.Result{r("a", rules.Error, false), r("b", rules.Fail, false)}, VerdictFail, []string{"c/a", "c/b"}, true},
		{[]rules.Result{r("a", rules.Fail, true), r("b", rules.Pass, false)}, VerdictPass, nil, true},
	} {
		verdict, failed, ok := verdictOf(tc.results)
		require.Equal(t, tc.verdict, verdict)
		require.Equal(t, tc.failed, failed)
		require.Equal(t, tc.ok, ok)
	}
}
