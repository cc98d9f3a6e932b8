package assertionexporter

import (
	"context"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/require"
	"go.opentelemetry.io/collector/component/componenttest"
	"go.opentelemetry.io/collector/processor/processortest"
	"go.uber.org/zap"
	"go.uber.org/zap/zapcore"
	"go.uber.org/zap/zaptest/observer"

	"github.com/otelcol-handoff/otelcol-handoff/assertionexporter/internal/metadatatest"
	"github.com/otelcol-handoff/otelcol-handoff/handoffprocessor"
	"github.com/otelcol-handoff/otelcol-handoff/internal/judge/judgetest"
	"github.com/otelcol-handoff/otelcol-handoff/internal/rubric"
	"github.com/otelcol-handoff/otelcol-handoff/internal/rules"
	"github.com/otelcol-handoff/otelcol-handoff/internal/rules/steps"
)

// assembledCases: deterministic steps, and a judged one, on the real Strands capture.
func assembledCases() []rules.CaseConfig {
	return []rules.CaseConfig{{Name: "weather", Steps: []rules.StepConfig{
		{Kind: &steps.TopologyStep{}},
		{Kind: &steps.DelegationStep{AgentName: "weather_specialist", FromAgent: "triage"}},
		{Kind: &steps.RubricsStep{FromAgent: "triage", Rubrics: []string{rubric.Dispatch}}},
	}}}
}

func newRequiringExporter(t *testing.T, judgeURL string, edit ...func(*Config)) (*assertionExporter, *componenttest.Telemetry, *observer.ObservedLogs, string) {
	t.Helper()
	cfg := createDefaultConfig().(*Config) // require_handoff_processor: true
	cfg.Cases = assembledCases()
	cfg.Judge.Endpoint, cfg.Judge.Model, cfg.Judge.Retries = judgeURL, "fake-judge", 0
	for _, f := range edit {
		f(cfg)
	}
	out := filepath.Join(t.TempDir(), "verdicts.jsonl")
	cfg.Reports.JSONLines = out
	require.NoError(t, cfg.Validate())
	tt := componenttest.NewTelemetry()
	t.Cleanup(func() { require.NoError(t, tt.Shutdown(context.Background())) })
	core, logs := observer.New(zapcore.InfoLevel)
	set := metadatatest.NewSettings(tt)
	set.Logger = zap.New(core)
	exp, err := newExporter(set, cfg)
	require.NoError(t, err)
	require.NoError(t, exp.Start(context.Background(), componenttest.NewNopHost()))
	return exp, tt, logs, out
}

// TestTraceNotAssembledIsAnError: traces that did not come from the handoff processor (here
// fed straight to the exporter, as a pipeline without the processor would) are never
// judged as they are: every result, the judged one too (the judge is not asked), is an
// error naming the fix, counted as outcome=error, and one Error line is logged for all.
func TestTraceNotAssembledIsAnError(t *testing.T) {
	srv := judgetest.New(t, judgetest.Always(judgetest.Pass))
	exp, tt, logs, out := newRequiringExporter(t, srv.URL)
	ctx := context.Background()
	for range 2 {
		require.NoError(t, exp.ConsumeTraces(ctx, readCapture(t, "strands-agent-tool")))
	}
	require.NoError(t, exp.Drain(ctx))
	require.NoError(t, exp.Shutdown(ctx))
	require.Zero(t, srv.Count(), "a fragment is never sent to the judge")

	results := (&harness{out: out}).results(t)
	require.Len(t, results, 6)
	for _, r := range results {
		require.Equal(t, rules.Error, r.Outcome, r.Step)
		require.Equal(t, "not assembled", r.Actual)
		require.Equal(t, errNotAssembled.Error(), r.Message)
	}
	counts := evaluations(t, tt)
	for _, step := range []string{"ASSERT_AGENT_TOPOLOGY#1", "EXPECT_DELEGATION_TO#2", "EXPECT_HANDOFF_RUBRICS#3.DispatchCorrectness"} {
		require.Equal(t, int64(2), counts[[3]string{"weather", step, "error"}], step)
	}
	errorLines := logs.FilterLevelExact(zapcore.ErrorLevel).FilterMessageSnippet("handoff processor did not assemble").All()
	require.Len(t, errorLines, 1)
	require.Contains(t, errorLines[0].ContextMap()["fix"], "set require_handoff_processor: false")
}

// TestTraceThroughTheProcessorIsJudged: the same trace through the handoff processor in
// process is judged as usual.
func TestTraceThroughTheProcessorIsJudged(t *testing.T) {
	srv := judgetest.New(t, judgetest.Always(judgetest.Pass))
	exp, _, logs, out := newRequiringExporter(t, srv.URL)
	pf := handoffprocessor.NewFactory()
	ctx := context.Background()
	proc, err := pf.CreateTraces(ctx, processortest.NewNopSettings(pf.Type()), pf.CreateDefaultConfig(), exp)
	require.NoError(t, err)
	require.NoError(t, proc.Start(ctx, componenttest.NewNopHost()))
	require.NoError(t, proc.ConsumeTraces(ctx, readCapture(t, "strands-agent-tool")))
	require.NoError(t, proc.(handoffprocessor.EndOfInput).EndOfInput(ctx))
	require.NoError(t, proc.Shutdown(ctx))
	require.NoError(t, exp.Drain(ctx))
	require.NoError(t, exp.Shutdown(ctx))

	results := (&harness{out: out}).results(t)
	require.Len(t, results, 3)
	for _, r := range results {
		require.Equal(t, rules.Pass, r.Outcome, r.Step+": "+r.Message)
	}
	require.Equal(t, 1, srv.Count())
	require.Empty(t, logs.FilterLevelExact(zapcore.ErrorLevel).All())
}
