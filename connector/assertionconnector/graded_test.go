package assertionconnector

import (
	"context"
	"sync"
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

// TestGradingRefusedAtOnceStaysOnTheHandoffSpan: a grading the engine hands back before
// Evaluate returns (the queue was full) is reported on its HANDOFF span, as one a worker
// grades later is, and no trace is left remembered once every grading is back. The judge
// holds its first answer until released, so which trace finds the queue full is decided
// by the test, not by timing.
func TestGradingRefusedAtOnceStaysOnTheHandoffSpan(t *testing.T) {
	asked, release := make(chan struct{}, 8), make(chan struct{})
	var once sync.Once
	unblock := func() { once.Do(func() { close(release) }) }
	srv := judgetest.New(t, func(judgetest.Request, int) judgetest.Reply {
		asked <- struct{}{}
		<-release
		return judgetest.Fixture(judgetest.Pass)
	})
	t.Cleanup(unblock) // before the server's Close, which waits for the handler
	cfg := NewFactory().CreateDefaultConfig().(*Config)
	cfg.Assertions.Cases = []rules.CaseConfig{{Name: "seams", Steps: []rules.StepConfig{
		{Kind: &steps.TopologyStep{}},
		{Kind: &steps.RubricsStep{FromAgent: "triage", Rubrics: []string{rubric.Dispatch}}},
	}}}
	cfg.Assertions.Judge.Endpoint, cfg.Assertions.Judge.Model = srv.URL, "fake-judge"
	cfg.Assertions.Judge.Retries, cfg.Assertions.Judge.Concurrency, cfg.Assertions.Judge.QueueSize = 0, 1, 1
	h := newHarness(t, cfg)
	withID := func(id byte) func(ptrace.Traces) {
		return func(td ptrace.Traces) {
			spanwalk.Each(td, func(_ pcommon.Resource, sp ptrace.Span) { sp.SetTraceID(pcommon.TraceID{id}) })
		}
	}
	h.consume(t, releasedWith(t, withID(1), "strands-ok.json"))
	<-asked                                                     // the one worker holds trace 1
	h.consume(t, releasedWith(t, withID(2), "strands-ok.json")) // takes the one queue slot
	h.consume(t, releasedWith(t, withID(3), "strands-ok.json")) // finds the queue full

	// The HANDOFF span triage sent, per trace, as forwarded.
	handoffOf := map[string]string{}
	for _, td := range h.traces.AllTraces() {
		spanwalk.Each(td, func(_ pcommon.Resource, sp ptrace.Span) {
			if src, _ := sp.Attributes().Get(AttrHandoffSource); src.Str() == "triage" {
				handoffOf[sp.TraceID().String()] = sp.SpanID().String()
			}
		})
	}
	require.Len(t, handoffOf, 3)
	// graded lists the rubric's records per trace: error.type (empty when graded) and span.
	graded := func() map[string][]string {
		out := map[string][]string{}
		for _, ld := range h.logs.AllLogs() {
			forEachRecord(ld, func(lr plog.LogRecord) {
				if name, _ := lr.Attributes().Get(AttrEvaluationName); name.Str() == "seams/EXPECT_HANDOFF_RUBRICS#2."+rubric.Dispatch {
					et, _ := lr.Attributes().Get(AttrErrorType)
					out[lr.TraceID().String()] = append(out[lr.TraceID().String()], et.Str()+" on "+lr.SpanID().String())
				}
			})
		}
		return out
	}
	third := pcommon.TraceID{3}.String()
	require.Equal(t, map[string][]string{third: {"queue_full on " + handoffOf[third]}}, graded())

	unblock()
	registryMu.Lock()
	s := registry[cfg]
	registryMu.Unlock()
	require.NoError(t, s.engine.Drain(context.Background()))
	want := map[string][]string{}
	for id, span := range handoffOf {
		want[id] = []string{" on " + span}
	}
	want[third] = []string{"queue_full on " + handoffOf[third]}
	require.Equal(t, want, graded())
	s.pending.mu.Lock()
	left := len(s.pending.m)
	s.pending.mu.Unlock()
	require.Zero(t, left, "every trace handed back is forgotten")
	h.shutdown(t)
}
