package assertionexporter

import (
	"bufio"
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"sort"
	"testing"

	"github.com/stretchr/testify/require"
	"go.opentelemetry.io/collector/component/componenttest"
	"go.opentelemetry.io/collector/pdata/ptrace"
	"go.opentelemetry.io/otel/attribute"
	"go.opentelemetry.io/otel/sdk/metric/metricdata"
	"go.opentelemetry.io/otel/sdk/metric/metricdata/metricdatatest"
	"go.uber.org/zap"
	"go.uber.org/zap/zapcore"
	"go.uber.org/zap/zaptest/observer"

	"github.com/otelcol-handoff/otelcol-handoff/assertionexporter/internal/metadatatest"
	"github.com/otelcol-handoff/otelcol-handoff/internal/rules"
	"github.com/otelcol-handoff/otelcol-handoff/internal/rules/steps"
)

func readCapture(t *testing.T, name string) ptrace.Traces {
	t.Helper()
	b, err := os.ReadFile(filepath.Join("..", "testdata", "traces", name+".json"))
	require.NoError(t, err)
	td, err := (&ptrace.JSONUnmarshaler{}).UnmarshalTraces(b)
	require.NoError(t, err)
	return td
}

// The cases of seed 000 against the real captures: one that holds, one that is broken.
func weatherCases() []rules.CaseConfig {
	return []rules.CaseConfig{
		{Name: "ok", Steps: []rules.StepConfig{
			{Kind: &steps.TopologyStep{Source: rules.SourceLive, MaxDepth: intp(3)}},
			{Kind: &steps.DelegationStep{AgentName: "weather_specialist", FromAgent: "triage"}},
			{Kind: &steps.BudgetStep{AgentName: "weather_specialist", MaxTokens: int64p(8000), MaxToolCalls: intp(6)}},
		}},
		{Name: "broken", Steps: []rules.StepConfig{
			{Kind: &steps.TopologyStep{MaxDepth: intp(0)}},
			{Kind: &steps.DelegationStep{AgentName: "triage", FromAgent: "weather_specialist", MaxInvocations: intp(2)}},
			{Kind: &steps.BudgetStep{AgentName: "weather_specialist", MaxTokens: int64p(100), MaxDurationMs: float64p(1)}},
			{Name: "ghost_budget", Kind: &steps.BudgetStep{AgentName: "ghost", MaxToolCalls: intp(1)}},
		}},
	}
}

type harness struct {
	exp  *assertionExporter
	tt   *componenttest.Telemetry
	logs *observer.ObservedLogs
	out  string
}

func newHarness(t *testing.T, cfg *Config) *harness {
	t.Helper()
	tt := componenttest.NewTelemetry()
	t.Cleanup(func() { require.NoError(t, tt.Shutdown(context.Background())) })
	core, logs := observer.New(zapcore.InfoLevel)
	set := metadatatest.NewSettings(tt)
	set.Logger = zap.New(core)
	h := &harness{tt: tt, logs: logs, out: filepath.Join(t.TempDir(), "verdicts.jsonl")}
	cfg.Reports.JSONLines = h.out
	cfg.RequireHandoffProcessor = false // the tests feed whole captured traces, without the processor
	withTimeouts(cfg)
	require.NoError(t, cfg.Validate())
	exp, err := newExporter(set, cfg)
	require.NoError(t, err)
	require.NoError(t, exp.Start(context.Background(), componenttest.NewNopHost()))
	h.exp = exp
	return h
}

// withTimeouts gives a config built as a literal the factory's time budgets.
func withTimeouts(cfg *Config) *Config {
	if cfg.EvalTimeout == 0 {
		cfg.EvalTimeout = defaultEvalTimeout
	}
	if cfg.ShutdownTimeout == 0 {
		cfg.ShutdownTimeout = defaultShutdownTimeout
	}
	return cfg
}

func (h *harness) results(t *testing.T) []rules.Result {
	f, err := os.Open(h.out)
	require.NoError(t, err)
	defer f.Close()
	var out []rules.Result
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		var r rules.Result
		require.NoError(t, json.Unmarshal(sc.Bytes(), &r))
		out = append(out, r)
	}
	return out
}

func TestStepsOnRealCaptures(t *testing.T) {
	h := newHarness(t, &Config{LogVerdicts: LogFailures, Cases: weatherCases()})
	td := readCapture(t, "google-adk-ok")
	traceID := "f4f85fa1287a499869aa8f6a54cd202a"
	require.NoError(t, h.exp.ConsumeTraces(context.Background(), td))
	require.NoError(t, h.exp.Shutdown(context.Background()))

	got := map[string]rules.Result{}
	for _, r := range h.results(t) {
		require.Equal(t, traceID, r.TraceID)
		require.True(t, r.Complete)
		got[r.Case+"/"+r.Step] = r
	}
	outcomes := map[string]rules.Outcome{}
	for k, r := range got {
		outcomes[k] = r.Outcome
	}
	require.Equal(t, map[string]rules.Outcome{
		"ok/ASSERT_AGENT_TOPOLOGY#1":     rules.Pass,
		"ok/EXPECT_DELEGATION_TO#2":      rules.Pass,
		"ok/EXPECT_AGENT_BUDGET#3":       rules.Pass,
		"broken/ASSERT_AGENT_TOPOLOGY#1": rules.Fail,
		"broken/EXPECT_DELEGATION_TO#2":  rules.Fail,
		"broken/EXPECT_AGENT_BUDGET#3":   rules.Fail,
		"broken/ghost_budget":            rules.Skipped,
	}, outcomes)

	require.Equal(t, "delegation depth 1 exceeds maxDepth 0 (triage -> weather_specialist)",
		got["broken/ASSERT_AGENT_TOPOLOGY#1"].Message)
	require.Equal(t, "expected weather_specialist delegating to triage between 1 and 2 times, saw 0 times",
		got["broken/EXPECT_DELEGATION_TO#2"].Message)
	budget := got["broken/EXPECT_AGENT_BUDGET#3"]
	require.Equal(t, "weather_specialist subtree: tokens <= 100, duration <= 1ms", budget.Expected)
	require.Equal(t, "tokens 221, duration 7.72ms, tool calls 2", budget.Actual)
	require.Equal(t, "weather_specialist (span 0220be9d21dc61d8) used 221 tokens, over maxTokens 100; "+
		"weather_specialist (span 0220be9d21dc61d8) took 7.72ms, over maxDurationMs 1", budget.Message)
	require.Equal(t, []string{"0220be9d21dc61d8"}, budget.Spans)
	require.Equal(t, "triage delegated to weather_specialist 1 times", got["ok/EXPECT_DELEGATION_TO#2"].Message)

	// One short structured record per failure: the message once (as the record's message),
	// no GenAI duplicates of it (the connector's logs output has those records).
	failures := h.logs.FilterMessageSnippet("assertion fail").All()
	require.Len(t, failures, 3)
	var budgetLog observer.LoggedEntry
	for _, e := range failures {
		if e.ContextMap()["step"] == "EXPECT_AGENT_BUDGET#3" {
			budgetLog = e
		}
	}
	require.Equal(t, zapcore.WarnLevel, budgetLog.Level)
	require.Equal(t, "assertion fail: "+budget.Message, budgetLog.Message)
	require.Equal(t, map[string]any{
		"trace_id": traceID,
		"case":     "broken",
		"step":     "EXPECT_AGENT_BUDGET#3",
		"outcome":  "fail",
		"expected": budget.Expected,
		"actual":   budget.Actual,
		// The failure's cluster, as the budget check named it, and its signature.
		"cluster":   "budget_blowout",
		"signature": budget.Signature,
	}, budgetLog.ContextMap())
	require.Empty(t, h.logs.FilterMessageSnippet("assertion pass").All(), "log_verdicts: failures")
	// One info line for the judged trace, with every outcome counted.
	summary := h.logs.FilterMessageSnippet("trace " + traceID).All()
	require.Len(t, summary, 1)
	require.Equal(t, zapcore.InfoLevel, summary[0].Level)
	require.Equal(t, "trace "+traceID+" root triage: 3 pass, 3 fail, 1 skipped", summary[0].Message)
	require.Empty(t, summary[0].Context)

	// Metrics: every configured (case, step, outcome) series is zero-initialized, and each
	// evaluation counted once under its outcome.
	m, err := h.tt.GetMetric("otelcol_exporter_assertion_evaluations")
	require.NoError(t, err)
	counted := map[string]int64{}
	for _, dp := range m.Data.(metricdata.Sum[int64]).DataPoints {
		c, _ := dp.Attributes.Value("case")
		st, _ := dp.Attributes.Value("step")
		o, _ := dp.Attributes.Value("outcome")
		counted[c.AsString()+"/"+st.AsString()+"/"+o.AsString()] = dp.Value
	}
	want := map[string]int64{}
	for c, steps := range h.exp.eval.Cases() {
		for _, st := range steps {
			for _, o := range rules.Outcomes {
				want[c+"/"+st+"/"+string(o)] = 0
			}
			want[c+"/"+st+"/"+string(outcomes[c+"/"+st])] = 1
		}
	}
	require.Equal(t, want, counted)
	metadatatest.AssertEqualExporterAssertionTracesEvaluated(t, h.tt, []metricdata.DataPoint[int64]{
		{Value: 1, Attributes: idSet(attribute.Bool("complete", true))},
		{Value: 0, Attributes: idSet(attribute.Bool("complete", false))},
	}, metricdatatest.IgnoreTimestamp())
	// The three failures by cluster: the chain over maxDepth a loop, the handback that never
	// happened a wrong dispatch, the tokens and duration over budget a budget blowout.
	failure := func(step, c string) metricdata.DataPoint[int64] {
		return metricdata.DataPoint[int64]{Value: 1, Attributes: idSet(attribute.String("case", "broken"),
			attribute.String("step", step), attribute.String("cluster", c))}
	}
	metadatatest.AssertEqualExporterAssertionFailures(t, h.tt, []metricdata.DataPoint[int64]{
		failure("ASSERT_AGENT_TOPOLOGY#1", "loop"), failure("EXPECT_DELEGATION_TO#2", "wrong_dispatch"),
		failure("EXPECT_AGENT_BUDGET#3", "budget_blowout"),
	}, metricdatatest.IgnoreTimestamp())
}

// TestSelectionAndMarks covers case selection by CEL, traces released incomplete, late
// spans (skipped), and traces without agents (not judged by a case without a condition).
func TestSelectionAndMarks(t *testing.T) {
	cases := []rules.CaseConfig{
		{Name: "adk_only", When: `service_name == "realclient-google-adk"`, Steps: []rules.StepConfig{{Kind: &steps.TopologyStep{}}}},
		// A Strands swarm is a wrapper, not an agent: the root agent is the first agent the
		// swarm ran (triage in this capture), and the swarm is never among the agents.
		{Name: "swarm_rooted", When: `root_agent == "triage" && "weather_specialist" in agents && !("weather_swarm" in agents) && service_name == "realclient-strands"`, Steps: []rules.StepConfig{{Kind: &steps.TopologyStep{}}}},
		{Name: "every_agent_trace", Steps: []rules.StepConfig{{Kind: &steps.TopologyStep{}}}},
		{Name: "bad_lookup", When: `attributes["no.such.key"] == "x"`, Steps: []rules.StepConfig{{Kind: &steps.TopologyStep{}}}},
	}
	h := newHarness(t, &Config{LogVerdicts: LogAll, Cases: cases})
	ctx := context.Background()

	adk := readCapture(t, "google-adk-ok")
	strands := readCapture(t, "strands-ok")
	// The processor marks the root of an early-released trace and every late span.
	root := strands.ResourceSpans().At(0).ScopeSpans().At(0).Spans()
	for i := 0; i < root.Len(); i++ {
		if root.At(i).ParentSpanID().IsEmpty() {
			root.At(i).Attributes().PutBool("handoff.trace.complete", false)
		}
	}
	late := ptrace.NewTraces()
	adk.ResourceSpans().At(0).CopyTo(late.ResourceSpans().AppendEmpty())
	ls := late.ResourceSpans().At(0).ScopeSpans().At(0).Spans()
	for i := 0; i < ls.Len(); i++ {
		ls.At(i).Attributes().PutBool("handoff.late_span", true)
	}
	noAgents := ptrace.NewTraces()
	sp := noAgents.ResourceSpans().AppendEmpty().ScopeSpans().AppendEmpty().Spans().AppendEmpty()
	sp.SetTraceID([16]byte{9})
	sp.SetSpanID([8]byte{9})
	sp.SetName("GET /healthz")

	for _, td := range []ptrace.Traces{adk, strands, late, noAgents} {
		require.NoError(t, h.exp.ConsumeTraces(ctx, td))
	}
	require.NoError(t, h.exp.Shutdown(ctx))

	var got []string
	for _, r := range h.results(t) {
		got = append(got, r.TraceID[:4]+" "+r.Case+" "+string(r.Outcome)+" complete="+map[bool]string{true: "y", false: "n"}[r.Complete])
	}
	sort.Strings(got)
	require.Equal(t, []string{
		// a condition that errors is reported on every trace, agents or not
		"0900 bad_lookup error complete=y",
		"ee43 bad_lookup error complete=n",
		"ee43 every_agent_trace pass complete=n",
		"ee43 swarm_rooted pass complete=n",
		"f4f8 adk_only pass complete=y",
		"f4f8 bad_lookup error complete=y",
		"f4f8 every_agent_trace pass complete=y",
	}, got)
	require.Len(t, h.logs.FilterMessageSnippet("assertion pass").All(), 4, "log_verdicts: all")
	require.Len(t, h.logs.FilterMessageSnippet("assertion error: case condition failed to evaluate: no such key: no.such.key").All(), 3)

	metadatatest.AssertEqualExporterAssertionLateSpans(t, h.tt, []metricdata.DataPoint[int64]{{Value: 10, Attributes: idSet()}}, metricdatatest.IgnoreTimestamp())
	metadatatest.AssertEqualExporterAssertionTracesEvaluated(t, h.tt, []metricdata.DataPoint[int64]{
		{Value: 2, Attributes: idSet(attribute.Bool("complete", true))},
		{Value: 1, Attributes: idSet(attribute.Bool("complete", false))},
	}, metricdatatest.IgnoreTimestamp())
}

// TestFileSource: a case whose topology reads recorded spans (source FILE) is judged once,
// at start-up, on every trace of its file; live traces do not re-run it.
func TestFileSource(t *testing.T) {
	fileCase := rules.CaseConfig{Name: "recorded", Steps: []rules.StepConfig{
		{Kind: &steps.TopologyStep{Source: rules.SourceFile, OtelSpansFile: filepath.Join("..", "testdata", "traces", "google-adk-ok.json")}},
		{Kind: &steps.DelegationStep{AgentName: "weather_specialist", FromAgent: "triage"}},
		{Kind: &steps.BudgetStep{AgentName: "weather_specialist", MaxTokens: int64p(100)}},
	}}
	live := rules.CaseConfig{Name: "live", Steps: []rules.StepConfig{{Kind: &steps.TopologyStep{}}}}
	h := newHarness(t, &Config{LogVerdicts: LogFailures, Cases: []rules.CaseConfig{fileCase, live}})
	require.NoError(t, h.exp.ConsumeTraces(context.Background(), readCapture(t, "strands-ok")))
	require.NoError(t, h.exp.Shutdown(context.Background()))

	var got []string
	for _, r := range h.results(t) {
		got = append(got, r.Case+" "+r.Step+" "+string(r.Outcome)+" "+r.TraceID[:4])
	}
	require.Equal(t, []string{
		"recorded ASSERT_AGENT_TOPOLOGY#1 pass f4f8",
		"recorded EXPECT_DELEGATION_TO#2 pass f4f8",
		"recorded EXPECT_AGENT_BUDGET#3 fail f4f8",
		"live ASSERT_AGENT_TOPOLOGY#1 pass ee43",
	}, got)

	// A file that cannot be read is a config error, and (gone after validation) stops the
	// start, naming the case.
	bad := rules.CaseConfig{Name: "missing", Steps: []rules.StepConfig{
		{Kind: &steps.TopologyStep{Source: rules.SourceFile, OtelSpansFile: "no/such/spans.json"}},
	}}
	cfg := withTimeouts(&Config{LogVerdicts: LogFailures, Cases: []rules.CaseConfig{bad}})
	require.EqualError(t, cfg.Validate(), "cases[0] (missing).steps[0].otelSpansFile: file no/such/spans.json does not exist")
	exp, err := newExporter(metadatatest.NewSettings(componenttest.NewTelemetry()), cfg)
	require.NoError(t, err)
	require.ErrorContains(t, exp.Start(context.Background(), componenttest.NewNopHost()),
		"case missing: otelSpansFile: stat no/such/spans.json: no such file or directory")
	require.NoError(t, exp.Shutdown(context.Background()))
}

// idSet is an attribute set of the exporter's self-telemetry: kvs plus the component id
// (metadatatest.NewSettings names the component "assertion").
func idSet(kvs ...attribute.KeyValue) attribute.Set {
	return attribute.NewSet(append(kvs, attribute.String(ExporterAttr, "assertion"))...)
}
