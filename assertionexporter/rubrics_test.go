package assertionexporter

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
	"go.opentelemetry.io/collector/component/componenttest"
	"go.opentelemetry.io/otel/attribute"
	"go.opentelemetry.io/otel/sdk/metric/metricdata"
	"go.opentelemetry.io/otel/sdk/metric/metricdata/metricdatatest"

	"github.com/otelcol-handoff/otelcol-handoff/assertionexporter/internal/metadatatest"
	"github.com/otelcol-handoff/otelcol-handoff/internal/gate"
	"github.com/otelcol-handoff/otelcol-handoff/internal/judge"
	"github.com/otelcol-handoff/otelcol-handoff/internal/judge/judgetest"
	"github.com/otelcol-handoff/otelcol-handoff/internal/rubric"
	"github.com/otelcol-handoff/otelcol-handoff/internal/rules"
	"github.com/otelcol-handoff/otelcol-handoff/internal/rules/steps"
)

func rubricCases() []rules.CaseConfig {
	return []rules.CaseConfig{{Name: "seams", Steps: []rules.StepConfig{
		{Kind: &steps.TopologyStep{}},
		{Kind: &steps.RubricsStep{FromAgent: "triage"}},
	}}}
}

func gateConfig() gate.Config {
	return gate.Config{
		Default:    map[string]float64{rubric.Scope: 0.9, rubric.Recovery: 0.85},
		Pairs:      []gate.PairConfig{{From: "triage", To: "weather_specialist", Thresholds: map[string]float64{rubric.Recovery: 0.5}}},
		MinSamples: 1, Window: gate.WindowConfig{Size: 3},
	}
}

func gauge(axis, pair string, v float64) metricdata.DataPoint[float64] {
	return metricdata.DataPoint[float64]{Value: v, Attributes: idSet(attribute.String("axis", axis), attribute.String("pair", pair))}
}

// deterministicRubricCases is rubricCases with only the deterministic parts
// (deterministicOnly: true), as a config without a judge must say.
func deterministicRubricCases() []rules.CaseConfig {
	cases := rubricCases()
	cases[0].Steps[1].Kind.(*steps.RubricsStep).DeterministicOnly = true
	return cases
}

// TestRubricsWithoutJudge: the deterministic parts grade the real captures; the window of
// the configured pair feeds the gate gauges; the report has a gate section.
func TestRubricsWithoutJudge(t *testing.T) {
	md := filepath.Join(t.TempDir(), "report.md")
	h := newHarness(t, &Config{
		LogVerdicts: LogFailures, Cases: deterministicRubricCases(), Gates: gateConfig(),
		Reports: ReportsConfig{Markdown: md},
	})
	ctx := context.Background()
	for _, name := range []string{"strands-tool-error", "strands-ok"} {
		require.NoError(t, h.exp.ConsumeTraces(ctx, readCapture(t, name)))
	}
	require.NoError(t, h.exp.Shutdown(ctx))

	var recovery []rules.Result
	for _, r := range h.results(t) {
		if r.Axis == rubric.Recovery {
			recovery = append(recovery, r)
		}
	}
	require.Len(t, recovery, 2)
	require.Equal(t, rules.Fail, recovery[0].Outcome, "strands-tool-error: swallowed")
	require.True(t, recovery[0].Gated)
	require.Equal(t, rules.Skipped, recovery[1].Outcome, "strands-ok: no error")

	// Gauges: the configured pair's window, thresholds for every pair and axis configured.
	metadatatest.AssertEqualExporterAssertionGateScore(t, h.tt, []metricdata.DataPoint[float64]{
		gauge(rubric.Scope, "triage -> weather_specialist", 1),
		gauge(rubric.Recovery, "triage -> weather_specialist", 0),
	}, metricdatatest.IgnoreTimestamp(), metricdatatest.IgnoreValue())
	m, err := h.tt.GetMetric("otelcol_exporter_assertion_gate_score")
	require.NoError(t, err)
	scores := map[string]float64{}
	for _, dp := range m.Data.(metricdata.Gauge[float64]).DataPoints {
		a, _ := dp.Attributes.Value("axis")
		scores[a.AsString()] = dp.Value
	}
	require.Equal(t, map[string]float64{rubric.Scope: 1, rubric.Recovery: 0}, scores)
	metadatatest.AssertEqualExporterAssertionGateThreshold(t, h.tt, []metricdata.DataPoint[float64]{
		gauge(rubric.Scope, "triage -> weather_specialist", 0.9),
		gauge(rubric.Recovery, "triage -> weather_specialist", 0.5),
		gauge(rubric.Scope, "default", 0.9),
		gauge(rubric.Recovery, "default", 0.85),
	}, metricdatatest.IgnoreTimestamp())

	report, err := os.ReadFile(md)
	require.NoError(t, err)
	require.Contains(t, string(report), `| triage -\> weather\_specialist | RecoveryOnError | 0.00 | 0.50 | 1 | **FAIL** |`)
	require.Contains(t, string(report), `| triage -\> weather\_specialist | ScopeFidelity | 1.00 | 0.90 | 2 | pass |`)
	require.Contains(t, string(report), "No judge is configured")
}

// TestRubricsWithJudge: a fake judge grades; its calls are counted; verdicts carry the
// model and template; the log record carries the score.
func TestRubricsWithJudge(t *testing.T) {
	t.Setenv("FAKE_JUDGE_KEY", "sk-test-exporter")
	srv := judgetest.New(t, judgetest.ByContent(judgetest.Pass, judgetest.Route{Contains: "Rubric: DispatchCorrectness", Fixture: judgetest.Fail}))
	cfg := &Config{LogVerdicts: LogAll, Cases: rubricCases(), Gates: gateConfig(), Judge: judge.DefaultConfig()}
	cfg.Judge.Endpoint, cfg.Judge.Model, cfg.Judge.APIKeyEnv = srv.URL, "fake-judge", "FAKE_JUDGE_KEY"
	h := newHarness(t, cfg)
	ctx := context.Background()
	require.NoError(t, h.exp.ConsumeTraces(ctx, readCapture(t, "strands-agent-tool")))
	// Gradings run off ConsumeTraces: the first trace's answers must be in the cache before
	// the second trace asks.
	require.NoError(t, h.exp.Drain(ctx))
	require.NoError(t, h.exp.ConsumeTraces(ctx, readCapture(t, "strands-agent-tool"))) // the same content: cached
	require.NoError(t, h.exp.Drain(ctx))
	require.NoError(t, h.exp.Shutdown(ctx))

	got := map[string]rules.Result{}
	for _, r := range h.results(t) {
		got[r.Step] = r
	}
	d := got["EXPECT_HANDOFF_RUBRICS#2.DispatchCorrectness"]
	require.Equal(t, rules.Fail, d.Outcome)
	require.Equal(t, &rules.JudgeVerdict{
		Model: "fake-judge", Template: "handoff_v1", Score: 0.2, Pass: false, Samples: 1,
		Reason: "The handoff dropped the customer's constraint on the date range.",
	}, d.Judge)
	require.Equal(t, rules.Pass, got["EXPECT_HANDOFF_RUBRICS#2.ScopeFidelity"].Outcome)
	require.Equal(t, 3, srv.Count(), "DispatchCorrectness, ScopeFidelity, ResultIntegration once; the second trace hits the cache")
	for _, r := range srv.Requests() {
		require.Equal(t, "Bearer sk-test-exporter", r.Authorization)
	}

	metadatatest.AssertEqualExporterAssertionJudgeCalls(t, h.tt, []metricdata.DataPoint[int64]{
		{Value: 3, Attributes: idSet(attribute.String("outcome", "ok"))},
		{Value: 3, Attributes: idSet(attribute.String("outcome", "cached"))},
		{Value: 0, Attributes: idSet(attribute.String("outcome", "timeout"))},
		{Value: 0, Attributes: idSet(attribute.String("outcome", "rate_limited"))},
		{Value: 0, Attributes: idSet(attribute.String("outcome", "http_error"))},
		{Value: 0, Attributes: idSet(attribute.String("outcome", "network_error"))},
		{Value: 0, Attributes: idSet(attribute.String("outcome", "off_schema"))},
		{Value: 0, Attributes: idSet(attribute.String("outcome", "budget_exhausted"))},
		{Value: 0, Attributes: idSet(attribute.String("outcome", "canceled"))},
	}, metricdatatest.IgnoreTimestamp())
	lat, err := h.tt.GetMetric("otelcol_exporter_assertion_judge_latency")
	require.NoError(t, err)
	require.Equal(t, uint64(3), lat.Data.(metricdata.Histogram[float64]).DataPoints[0].Count)

	var logged map[string]any
	for _, e := range h.logs.All() {
		if e.ContextMap()["step"] == "EXPECT_HANDOFF_RUBRICS#2.DispatchCorrectness" {
			logged = e.ContextMap()
			break
		}
	}
	require.Equal(t, 0.2, logged["gen_ai.evaluation.score.value"])
	require.Equal(t, "triage", logged["handoff.source"])
	require.Equal(t, "fake-judge", logged["judge.model"])
	for _, e := range h.logs.All() {
		for _, v := range e.ContextMap() {
			s, _ := v.(string)
			require.NotContains(t, s, "sk-test-exporter", "the key is never logged")
		}
		require.NotContains(t, e.Message, "sk-test-exporter")
	}
}

// TestJudgeKeyMissing: a judge whose key variable is unset stops the exporter's creation,
// naming the variable.
func TestJudgeKeyMissing(t *testing.T) {
	cfg := withTimeouts(&Config{LogVerdicts: LogFailures, Judge: judge.DefaultConfig()})
	cfg.Judge.Endpoint, cfg.Judge.Model, cfg.Judge.APIKeyEnv = "http://127.0.0.1:1/v1", "m", "NO_SUCH_JUDGE_KEY_VAR"
	require.NoError(t, cfg.Validate(), "validation does not read the environment")
	_, err := newExporter(metadatatest.NewSettings(componenttest.NewTelemetry()), cfg)
	require.EqualError(t, err, "judge.api_key_env: environment variable NO_SUCH_JUDGE_KEY_VAR is not set or empty")
}

// TestJudgeDoesNotBlockForever: a judge that never answers holds a trace at most
// trace_timeout; the rubric ends in error and ConsumeTraces returns.
func TestJudgeDoesNotBlockForever(t *testing.T) {
	srv := judgetest.New(t, judgetest.Always(judgetest.Timeout))
	cfg := &Config{LogVerdicts: LogNone, Cases: rubricCases(), Judge: judge.DefaultConfig()}
	cfg.Judge.Endpoint, cfg.Judge.Model = srv.URL, "fake-judge"
	cfg.Judge.Timeout, cfg.Judge.TraceTimeout = time.Minute, 100*time.Millisecond
	h := newHarness(t, cfg)
	began := time.Now()
	require.NoError(t, h.exp.ConsumeTraces(context.Background(), readCapture(t, "strands-agent-tool")))
	require.Less(t, time.Since(began), 10*time.Second)
	// The grading runs off ConsumeTraces; wait for its trace_timeout to end it.
	require.NoError(t, h.exp.Drain(context.Background()))
	require.NoError(t, h.exp.Shutdown(context.Background()))
	for _, r := range h.results(t) {
		if r.Axis == rubric.Dispatch {
			require.Equal(t, rules.Error, r.Outcome)
			require.True(t, strings.HasPrefix(r.Message, "judge error: no answer within the trace's time for judging"), r.Message)
		}
	}
}

// TestDeterministicOnlyNeverAsksTheJudge: a deterministicOnly step runs its deterministic
// checks alone, even with a judge configured: no request reaches the judge, and every
// result says why its judge part was not graded.
func TestDeterministicOnlyNeverAsksTheJudge(t *testing.T) {
	srv := judgetest.New(t, judgetest.Always(judgetest.Fail))
	cases := deterministicRubricCases()
	cases[0].Steps = append(cases[0].Steps, rules.StepConfig{Kind: &steps.ContextStep{FromAgent: "triage", ToAgent: "weather_specialist", RubricType: rubric.Groundedness, ForbiddenPatterns: []string{`\b(?:\d[ -]?){13,16}\b`}, DeterministicOnly: true}})
	cfg := &Config{LogVerdicts: LogNone, Cases: cases, Judge: judge.DefaultConfig()}
	cfg.Judge.Endpoint, cfg.Judge.Model = srv.URL, "fake-judge"
	h := newHarness(t, cfg)
	ctx := context.Background()
	require.NoError(t, h.exp.ConsumeTraces(ctx, readCapture(t, "strands-agent-tool")))
	require.NoError(t, h.exp.Drain(ctx))
	require.NoError(t, h.exp.Shutdown(ctx))
	require.Zero(t, srv.Count(), "the judge was asked")

	got := map[string]rules.Result{}
	for _, r := range h.results(t) {
		got[r.Step] = r
	}
	require.NotContains(t, got, "EXPECT_HANDOFF_RUBRICS#2.DispatchCorrectness", "deterministicOnly leaves out the judge-only rubric")
	scope := got["EXPECT_HANDOFF_RUBRICS#2.ScopeFidelity"]
	require.Equal(t, rules.Pass, scope.Outcome)
	require.Nil(t, scope.Judge)
	require.True(t, strings.HasSuffix(scope.Message, "; the judge part was not graded: the step is deterministicOnly"), scope.Message)
	c := got["EXPECT_HANDOFF_CONTEXT#3"]
	require.Equal(t, rules.Pass, c.Outcome, c.Message)
	require.Equal(t, "handoff triage -> weather_specialist whose content satisfies never /\\b(?:\\d[ -]?){13,16}\\b/", c.Expected)
	require.Equal(t, "1 handoffs triage -> weather_specialist carry the expected content; the GROUNDEDNESS rubric was not graded: the step is deterministicOnly", c.Message)
}

// evaluations is the evaluations counter by case, step and outcome.
func evaluations(t *testing.T, tt *componenttest.Telemetry) map[[3]string]int64 {
	t.Helper()
	m, err := tt.GetMetric("otelcol_exporter_assertion_evaluations")
	require.NoError(t, err)
	out := map[[3]string]int64{}
	for _, dp := range m.Data.(metricdata.Sum[int64]).DataPoints {
		c, _ := dp.Attributes.Value("case")
		s, _ := dp.Attributes.Value("step")
		o, _ := dp.Attributes.Value("outcome")
		out[[3]string{c.AsString(), s.AsString(), o.AsString()}] = dp.Value
	}
	return out
}

// TestGradingErrorIsAnError: a judge answer that cannot be read is an `error` result (never
// a pass or a skip), logged, and counted as outcome=error.
func TestGradingErrorIsAnError(t *testing.T) {
	srv := judgetest.New(t, judgetest.Always(judgetest.Malformed))
	cfg := &Config{LogVerdicts: LogFailures, Cases: rubricCases(), Judge: judge.DefaultConfig()}
	cfg.Judge.Endpoint, cfg.Judge.Model, cfg.Judge.Retries = srv.URL, "fake-judge", 0
	h := newHarness(t, cfg)
	ctx := context.Background()
	require.NoError(t, h.exp.ConsumeTraces(ctx, readCapture(t, "strands-agent-tool")))
	require.NoError(t, h.exp.Drain(ctx))
	require.NoError(t, h.exp.Shutdown(ctx))

	const step = "EXPECT_HANDOFF_RUBRICS#2.DispatchCorrectness"
	var d rules.Result
	for _, r := range h.results(t) {
		if r.Step == step {
			d = r
		}
	}
	require.Equal(t, rules.Error, d.Outcome)
	require.True(t, strings.HasPrefix(d.Message, "judge error: "), d.Message)
	counts := evaluations(t, h.tt)
	require.Equal(t, int64(1), counts[[3]string{"seams", step, "error"}])
	require.Zero(t, counts[[3]string{"seams", step, "pass"}])
	require.Zero(t, counts[[3]string{"seams", step, "skipped"}])
	logged := false
	for _, e := range h.logs.All() {
		if e.ContextMap()["step"] == step {
			logged = true
		}
	}
	require.True(t, logged, "an error result is logged with the failures")
}
