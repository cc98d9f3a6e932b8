package assertionexporter

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
	"go.opentelemetry.io/collector/component/componenttest"
	"go.opentelemetry.io/collector/pdata/pcommon"
	"go.opentelemetry.io/collector/pdata/ptrace"
	"go.opentelemetry.io/otel/attribute"
	"go.opentelemetry.io/otel/sdk/metric/metricdata"
	"go.opentelemetry.io/otel/sdk/metric/metricdata/metricdatatest"
	"go.uber.org/zap"
	"go.uber.org/zap/zapcore"
	"go.uber.org/zap/zaptest/observer"

	"github.com/otelcol-handoff/otelcol-handoff/assertionexporter/internal/metadatatest"
	"github.com/otelcol-handoff/otelcol-handoff/internal/judge"
	"github.com/otelcol-handoff/otelcol-handoff/internal/judge/judgetest"
	"github.com/otelcol-handoff/otelcol-handoff/internal/rules"
	"github.com/otelcol-handoff/otelcol-handoff/internal/rules/steps"
)

// blockedJudge is a fake judge whose answers wait until the test releases them; asked
// receives once per request as it arrives.
type blockedJudge struct {
	srv     *judgetest.Server
	asked   chan int
	release chan struct{}
	once    sync.Once
}

func newBlockedJudge(t *testing.T) *blockedJudge {
	b := &blockedJudge{asked: make(chan int, 64), release: make(chan struct{})}
	b.srv = judgetest.New(t, func(_ judgetest.Request, n int) judgetest.Reply {
		b.asked <- n
		<-b.release
		return judgetest.Fixture(judgetest.Pass)
	})
	// Registered after the server: runs before its Close, which waits for the handlers.
	t.Cleanup(b.unblock)
	return b
}

func (b *blockedJudge) unblock() { b.once.Do(func() { close(b.release) }) }

// judgedConfig is the rubric cases with the fake judge, one grading at a time.
func judgedConfig(b *blockedJudge) *Config {
	cfg := withTimeouts(&Config{LogVerdicts: LogNone, Cases: rubricCases(), Judge: judge.DefaultConfig()})
	cfg.Judge.Endpoint, cfg.Judge.Model = b.srv.URL, "fake-judge"
	cfg.Judge.Concurrency, cfg.Judge.Retries = 1, 0
	return cfg
}

// traceWithID is a capture with every span moved to trace id.
func traceWithID(t *testing.T, name string, id byte) ptrace.Traces {
	td := readCapture(t, name)
	tid := pcommon.TraceID{id}
	if id == 0 {
		tid = pcommon.NewTraceIDEmpty()
	}
	rss := td.ResourceSpans()
	for i := 0; i < rss.Len(); i++ {
		sss := rss.At(i).ScopeSpans()
		for j := 0; j < sss.Len(); j++ {
			spans := sss.At(j).Spans()
			for k := 0; k < spans.Len(); k++ {
				spans.At(k).SetTraceID(tid)
			}
		}
	}
	return td
}

func byTrace(results []rules.Result) map[string][]rules.Result {
	out := map[string][]rules.Result{}
	for _, r := range results {
		out[r.TraceID] = append(out[r.TraceID], r)
	}
	return out
}

func isRubric(r rules.Result) bool { return r.Action == rules.ActionRubrics }

// TestSlowJudgeDoesNotDelayConsumeTraces: ConsumeTraces returns while the judge holds its
// answer, with the trace's deterministic results already written; the graded ones follow
// when the judge answers.
func TestSlowJudgeDoesNotDelayConsumeTraces(t *testing.T) {
	b := newBlockedJudge(t)
	h := newHarness(t, judgedConfig(b))
	ctx := context.Background()
	require.NoError(t, h.exp.ConsumeTraces(ctx, traceWithID(t, "strands-agent-tool", 1)))
	<-b.asked // the grading is running, and blocked in the judge

	now := h.results(t)
	require.NotEmpty(t, now)
	for _, r := range now {
		require.False(t, r.Action == rules.ActionRubrics && r.Judge != nil, "nothing graded yet: %+v", r)
	}
	require.Equal(t, rules.ActionTopology, now[0].Action)
	require.Equal(t, rules.Pass, now[0].Outcome)
	metadatatest.AssertEqualExporterAssertionJudgeQueueSize(t, h.tt, []metricdata.DataPoint[int64]{{Value: 1, Attributes: idSet()}}, metricdatatest.IgnoreTimestamp())
	metadatatest.AssertEqualExporterAssertionTracesEvaluated(t, h.tt, []metricdata.DataPoint[int64]{
		{Value: 1, Attributes: idSet(attribute.Bool("complete", true))},
		{Value: 0, Attributes: idSet(attribute.Bool("complete", false))},
	}, metricdatatest.IgnoreTimestamp())

	b.unblock()
	require.NoError(t, h.exp.Drain(ctx))
	all := h.results(t)
	graded := 0
	for _, r := range all[len(now):] {
		require.True(t, isRubric(r), "only graded results follow: %+v", r)
		require.NotNil(t, r.Judge, r.Message)
		require.Equal(t, rules.Pass, r.Outcome)
		graded++
	}
	require.Positive(t, graded)
	metadatatest.AssertEqualExporterAssertionJudgeQueueSize(t, h.tt, []metricdata.DataPoint[int64]{{Value: 0, Attributes: idSet()}}, metricdatatest.IgnoreTimestamp())
	require.NoError(t, h.exp.Shutdown(ctx))
}

// TestJudgeQueueFull: with one worker busy and the one queue slot taken, the next trace's
// judge-graded results are errors at once, counted; the others are graded.
func TestJudgeQueueFull(t *testing.T) {
	b := newBlockedJudge(t)
	cfg := judgedConfig(b)
	cfg.Judge.QueueSize = 1
	h := newHarness(t, cfg)
	ctx := context.Background()
	require.NoError(t, h.exp.ConsumeTraces(ctx, traceWithID(t, "strands-agent-tool", 1)))
	<-b.asked                                                                             // the worker holds trace 1
	require.NoError(t, h.exp.ConsumeTraces(ctx, traceWithID(t, "strands-agent-tool", 2))) // queued
	require.NoError(t, h.exp.ConsumeTraces(ctx, traceWithID(t, "strands-agent-tool", 3))) // queue full

	full := 0
	for _, r := range byTrace(h.results(t))[pcommon.TraceID{3}.String()] {
		if isRubric(r) && r.Outcome == rules.Error {
			require.Equal(t, "judge queue full (judge.queue_size): not graded", r.Message)
			require.Equal(t, "not graded", r.Actual)
			full++
		}
	}
	require.Positive(t, full)
	metadatatest.AssertEqualExporterAssertionJudgeNotGraded(t, h.tt, []metricdata.DataPoint[int64]{
		{Value: int64(full), Attributes: idSet(attribute.String("reason", "queue_full"))},
		{Value: 0, Attributes: idSet(attribute.String("reason", "shutdown"))},
	}, metricdatatest.IgnoreTimestamp())

	b.unblock()
	require.NoError(t, h.exp.Drain(ctx))
	require.NoError(t, h.exp.Shutdown(ctx))
	got := byTrace(h.results(t))
	for _, id := range []byte{1, 2} {
		n := 0
		for _, r := range got[pcommon.TraceID{id}.String()] {
			if isRubric(r) && r.Judge != nil {
				n++
			}
		}
		require.Equal(t, full, n, "trace %d is graded", id)
	}
}

// TestShutdownCancelsGradings: Shutdown with the judge holding its answer cancels the
// request in flight and the queued trace (never sent), records their results as "shut down
// before grading" in the JSON lines and the JUnit report, and returns within its budget.
func TestShutdownCancelsGradings(t *testing.T) {
	b := newBlockedJudge(t)
	cfg := judgedConfig(b)
	cfg.ShutdownTimeout = 20 * time.Second
	cfg.Reports.JUnit = filepath.Join(t.TempDir(), "assertions.junit.xml")
	h := newHarness(t, cfg)
	ctx := context.Background()
	require.NoError(t, h.exp.ConsumeTraces(ctx, traceWithID(t, "strands-agent-tool", 1)))
	<-b.asked
	require.NoError(t, h.exp.ConsumeTraces(ctx, traceWithID(t, "strands-agent-tool", 2)))

	began := time.Now()
	require.NoError(t, h.exp.Shutdown(ctx))
	t.Logf("shutdown took %s with the judge blocked", time.Since(began))
	require.Less(t, time.Since(began), cfg.ShutdownTimeout, "a generous bound: the budget itself")
	require.Equal(t, 1, b.srv.Count(), "the queued trace's gradings were never sent")

	shut := 0
	got := byTrace(h.results(t))
	for _, id := range []byte{1, 2} {
		n := 0
		for _, r := range got[pcommon.TraceID{id}.String()] {
			if isRubric(r) && r.Outcome == rules.Error {
				require.Contains(t, r.Message, "shut down before grading")
				n++
			}
			require.Nil(t, r.Judge)
		}
		require.Positive(t, n, "trace %d", id)
		shut += n
	}
	metadatatest.AssertEqualExporterAssertionJudgeNotGraded(t, h.tt, []metricdata.DataPoint[int64]{
		{Value: 0, Attributes: idSet(attribute.String("reason", "queue_full"))},
		{Value: int64(shut), Attributes: idSet(attribute.String("reason", "shutdown"))},
	}, metricdatatest.IgnoreTimestamp())
	junit, err := os.ReadFile(cfg.Reports.JUnit)
	require.NoError(t, err)
	require.Equal(t, shut, strings.Count(string(junit), "shut down before grading"), string(junit))
	require.NoError(t, h.exp.Shutdown(ctx), "a second Shutdown does nothing")
}

// roundTripFunc is an http.RoundTripper.
type roundTripFunc func(*http.Request) (*http.Response, error)

func (f roundTripFunc) RoundTrip(r *http.Request) (*http.Response, error) { return f(r) }

// TestShutdownGivesUpOnStuckJudge: a judge transport that ignores cancellation cannot hold
// Shutdown past its context's deadline (sooner than shutdown_timeout): the trace is
// recorded as shut down before grading and the reports are written.
func TestShutdownGivesUpOnStuckJudge(t *testing.T) {
	stuck := make(chan struct{})
	asked := make(chan struct{}, 8)
	t.Cleanup(func() { close(stuck) }) // lets the stuck worker end after the test
	rt := roundTripFunc(func(*http.Request) (*http.Response, error) {
		asked <- struct{}{}
		<-stuck
		return nil, errors.New("released")
	})
	tt := componenttest.NewTelemetry()
	t.Cleanup(func() { require.NoError(t, tt.Shutdown(context.Background())) })
	cfg := withTimeouts(&Config{LogVerdicts: LogNone, Cases: rubricCases(), Judge: judge.DefaultConfig()})
	cfg.Judge.Endpoint, cfg.Judge.Model, cfg.Judge.Retries = "http://127.0.0.1:1/v1", "fake-judge", 0
	cfg.Reports.JSONLines = filepath.Join(t.TempDir(), "verdicts.jsonl")
	require.NoError(t, cfg.Validate())
	exp, err := newExporter(metadatatest.NewSettings(tt), cfg, judge.WithHTTPClient(&http.Client{Transport: rt}))
	require.NoError(t, err)
	require.NoError(t, exp.Start(context.Background(), componenttest.NewNopHost()))
	require.NoError(t, exp.ConsumeTraces(context.Background(), traceWithID(t, "strands-agent-tool", 1)))
	<-asked

	ctx, cancel := context.WithTimeout(context.Background(), 100*time.Millisecond)
	defer cancel()
	began := time.Now()
	require.NoError(t, exp.Shutdown(ctx))
	t.Logf("shutdown gave up on the stuck judge after %s", time.Since(began))
	require.Less(t, time.Since(began), cfg.ShutdownTimeout, "bounded by the context's deadline, not the judge")
	h := &harness{out: cfg.Reports.JSONLines}
	n := 0
	for _, r := range h.results(t) {
		if isRubric(r) && r.Outcome == rules.Error {
			require.Equal(t, "shut down before grading", r.Message)
			n++
		}
	}
	require.Positive(t, n)
}

// TestReportWriteFailureNotReturned: a JSON-lines report on a full disk never fails
// ConsumeTraces (the spans were delivered); each failed write is counted, and logged at
// most once a minute.
func TestReportWriteFailureNotReturned(t *testing.T) {
	if _, err := os.Stat("/dev/full"); err != nil {
		t.Fatalf("this test needs /dev/full (Linux): %v", err)
	}
	tt := componenttest.NewTelemetry()
	t.Cleanup(func() { require.NoError(t, tt.Shutdown(context.Background())) })
	core, logs := observer.New(zapcore.InfoLevel)
	set := metadatatest.NewSettings(tt)
	set.Logger = zap.New(core)
	cfg := withTimeouts(&Config{LogVerdicts: LogNone, Cases: weatherCases()})
	cfg.Reports.JSONLines = "/dev/full"
	require.NoError(t, cfg.Validate())
	exp, err := newExporter(set, cfg)
	require.NoError(t, err)
	clock := time.Date(2026, 12, 1, 9, 0, 0, 0, time.UTC)
	exp.now = func() time.Time { return clock }
	ctx := context.Background()
	require.NoError(t, exp.Start(ctx, componenttest.NewNopHost()))
	for i := 0; i < 3; i++ {
		require.NoError(t, exp.ConsumeTraces(ctx, readCapture(t, "strands-agent-tool")))
	}
	clock = clock.Add(2 * time.Minute)
	require.NoError(t, exp.ConsumeTraces(ctx, readCapture(t, "strands-agent-tool")))
	metadatatest.AssertEqualExporterAssertionReportWriteFailures(t, tt, []metricdata.DataPoint[int64]{{Value: 4, Attributes: idSet()}}, metricdatatest.IgnoreTimestamp())
	lines := logs.FilterMessageSnippet("could not write the JSON lines report").All()
	require.Len(t, lines, 2, "the first failure, then one a minute later")
	require.Equal(t, int64(2), lines[1].ContextMap()["failures_not_logged"])
	require.Contains(t, lines[0].ContextMap()["error"], "no space left on device")
	require.NoError(t, exp.Shutdown(ctx), "the failed batches were dropped: nothing is left to flush")
}

// TestEvalTimeout: a trace whose rules overrun eval_timeout ends with error results naming
// it (a long comprehension is interrupted, later cases are not evaluated), counted; it
// never stalls the caller.
func TestEvalTimeout(t *testing.T) {
	list := make([]string, 100)
	for i := range list {
		list[i] = fmt.Sprint(i)
	}
	l := "[" + strings.Join(list, ",") + "]"
	// A million comprehension steps: far beyond a few milliseconds on any machine, within
	// the cost cap.
	slow := fmt.Sprintf("%s.all(a, %s.all(b, %s.all(c, a + b + c >= 0)))", l, l, l)
	cfg := &Config{
		LogVerdicts: LogNone, EvalCostLimit: rules.MaxCostLimit, EvalTimeout: 5 * time.Millisecond,
		Cases: []rules.CaseConfig{
			{Name: "slow", When: slow, Steps: []rules.StepConfig{{Kind: &steps.TopologyStep{}}}},
			{Name: "after", Steps: []rules.StepConfig{{Kind: &steps.TopologyStep{}}}},
		},
	}
	h := newHarness(t, cfg)
	require.NoError(t, h.exp.ConsumeTraces(context.Background(), readCapture(t, "strands-agent-tool")))
	require.NoError(t, h.exp.Shutdown(context.Background()))
	got := h.results(t)
	require.Len(t, got, 2)
	require.Equal(t, "when", got[0].Step)
	require.Equal(t, rules.Error, got[0].Outcome)
	require.Contains(t, got[0].Message, "evaluation exceeded eval_timeout (5ms)")
	require.Equal(t, "after", got[1].Case)
	require.Equal(t, rules.Error, got[1].Outcome)
	require.Equal(t, "evaluation exceeded eval_timeout (5ms): not evaluated", got[1].Message)
	metadatatest.AssertEqualExporterAssertionEvalTimeouts(t, h.tt, []metricdata.DataPoint[int64]{{Value: 1, Attributes: idSet()}}, metricdatatest.IgnoreTimestamp())
}

// TestZeroTraceIDSkipped: spans with an all-zero trace id are never evaluated, counted.
func TestZeroTraceIDSkipped(t *testing.T) {
	h := newHarness(t, &Config{LogVerdicts: LogNone, Cases: weatherCases()})
	td := traceWithID(t, "strands-agent-tool", 0)
	require.NoError(t, h.exp.ConsumeTraces(context.Background(), td))
	require.NoError(t, h.exp.Shutdown(context.Background()))
	require.Empty(t, h.results(t))
	metadatatest.AssertEqualExporterAssertionZeroTraceIDSpans(t, h.tt, []metricdata.DataPoint[int64]{{Value: int64(td.SpanCount()), Attributes: idSet()}}, metricdatatest.IgnoreTimestamp())
}

// TestConcurrentShutdownConsumeTraces: ConsumeTraces racing Shutdown neither panics nor
// loses a trace's gradings: every rubric result is graded or says why not.
func TestConcurrentShutdownConsumeTraces(t *testing.T) {
	srv := judgetest.New(t, judgetest.Always(judgetest.Pass))
	cfg := withTimeouts(&Config{LogVerdicts: LogNone, Cases: rubricCases(), Judge: judge.DefaultConfig()})
	cfg.Judge.Endpoint, cfg.Judge.Model, cfg.Judge.QueueSize = srv.URL, "fake-judge", 4
	h := newHarness(t, cfg)
	var wg sync.WaitGroup
	for i := 1; i <= 8; i++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			require.NoError(t, h.exp.ConsumeTraces(context.Background(), traceWithID(t, "strands-agent-tool", byte(i))))
		}()
	}
	require.NoError(t, h.exp.Shutdown(context.Background()))
	wg.Wait()
	for _, r := range h.results(t) {
		if isRubric(r) && r.Outcome == rules.Error {
			require.Regexp(t, "shut down before grading|judge queue full", r.Message)
		}
	}
}
