package assertionconnector

import (
	"context"
	"testing"

	"github.com/stretchr/testify/require"
	"go.opentelemetry.io/collector/pdata/pcommon"
	"go.opentelemetry.io/collector/pdata/plog"
	"go.opentelemetry.io/collector/pdata/ptrace"
	"go.opentelemetry.io/otel/attribute"
	"go.opentelemetry.io/otel/sdk/metric/metricdata"
	"go.opentelemetry.io/otel/sdk/metric/metricdata/metricdatatest"

	"github.com/otelcol-handoff/otelcol-handoff/connector/assertionconnector/internal/metadatatest"
	"github.com/otelcol-handoff/otelcol-handoff/internal/judge/judgetest"
	"github.com/otelcol-handoff/otelcol-handoff/internal/rubric"
	"github.com/otelcol-handoff/otelcol-handoff/internal/rules"
	"github.com/otelcol-handoff/otelcol-handoff/internal/rules/steps"
	"github.com/otelcol-handoff/otelcol-handoff/internal/spanwalk"
)

// TestGradedResultsFollowInLogsAndMetrics: the traces leave at once with the deterministic
// verdicts (and the count of pending gradings); the judge's results arrive later as log
// records on the HANDOFF spans and as verdict counts.
func TestGradedResultsFollowInLogsAndMetrics(t *testing.T) {
	srv := judgetest.New(t, judgetest.Always(judgetest.Pass))
	cfg := NewFactory().CreateDefaultConfig().(*Config)
	cfg.Assertions.Cases = []rules.CaseConfig{{Name: "seams", Steps: []rules.StepConfig{
		{Kind: &steps.TopologyStep{}},
		{Kind: &steps.RubricsStep{FromAgent: "triage", Rubrics: []string{rubric.Dispatch}}},
	}}}
	cfg.Assertions.Judge.Endpoint, cfg.Assertions.Judge.Model = srv.URL, "fake-judge"
	cfg.Assertions.Judge.Retries = 0
	h := newHarness(t, cfg)
	in := released(t, "strands-ok.json")
	h.consume(t, in)

	// The trace left before any grading: its root agent span says what is pending.
	out := h.traces.AllTraces()[0]
	agents := agentSpans(t, in)
	var pending int64
	spanwalk.Each(out, func(_ pcommon.Resource, sp ptrace.Span) {
		for _, a := range agents {
			if sp.SpanID().String() == a[""] {
				v, ok := sp.Attributes().Get(AttrVerdictPending)
				require.True(t, ok)
				pending = v.Int()
			}
		}
	})
	require.Equal(t, int64(1), pending)

	registryMu.Lock()
	s := registry[cfg]
	registryMu.Unlock()
	require.NoError(t, s.engine.Drain(context.Background()))

	var graded []plog.LogRecord
	for _, ld := range h.logs.AllLogs() {
		forEachRecord(ld, func(lr plog.LogRecord) {
			if name, _ := lr.Attributes().Get(AttrEvaluationName); name.Str() == "seams/EXPECT_HANDOFF_RUBRICS#2."+rubric.Dispatch {
				graded = append(graded, lr)
			}
		})
	}
	require.Len(t, graded, 1)
	lr := graded[0]
	score, ok := lr.Attributes().Get(AttrScoreValue)
	require.True(t, ok, "%v", lr.Attributes().AsRaw())
	require.Equal(t, pcommon.ValueTypeDouble, score.Type())
	label, _ := lr.Attributes().Get(AttrScoreLabel)
	require.Equal(t, "pass", label.Str())
	var handoffSpan string
	spanwalk.Each(out, func(_ pcommon.Resource, sp ptrace.Span) {
		if src, _ := sp.Attributes().Get(AttrHandoffSource); src.Str() == "triage" {
			handoffSpan = sp.SpanID().String()
		}
	})
	require.Equal(t, handoffSpan, lr.SpanID().String(), "judged on the HANDOFF span")
	metadatatest.AssertEqualConnectorAssertionLogRecords(t, h.tt, []metricdata.DataPoint[int64]{
		{Value: 1, Attributes: selfSet(attribute.String("phase", "now"))},
		{Value: 1, Attributes: selfSet(attribute.String("phase", "graded"))},
	}, metricdatatest.IgnoreTimestamp())

	h.shutdown(t)
	m := lastMetrics(t, h.metrics)
	dps := m[MetricResults].Sum().DataPoints()
	got := map[string]int64{}
	for i := 0; i < dps.Len(); i++ {
		got[attrKey(dps.At(i).Attributes(), AttrCase, AttrStepShort, AttrOutcome)] = dps.At(i).IntValue()
	}
	require.Equal(t, map[string]int64{
		"case=seams step=ASSERT_AGENT_TOPOLOGY#1 outcome=pass ":                          1,
		"case=seams step=EXPECT_HANDOFF_RUBRICS#2." + rubric.Dispatch + " outcome=pass ": 1,
	}, got)
}
