package assertionconnector

import (
	"context"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/open-telemetry/opentelemetry-collector-contrib/pkg/golden"
	"github.com/open-telemetry/opentelemetry-collector-contrib/pkg/pdatatest/ptracetest"
	"github.com/stretchr/testify/require"
	"go.opentelemetry.io/collector/component"
	"go.opentelemetry.io/collector/component/componenttest"
	"go.opentelemetry.io/collector/connector"
	"go.opentelemetry.io/collector/connector/connectortest"
	"go.opentelemetry.io/collector/consumer/consumertest"
	"go.opentelemetry.io/collector/pdata/pcommon"
	"go.opentelemetry.io/collector/pdata/plog"
	"go.opentelemetry.io/collector/pdata/pmetric"
	"go.opentelemetry.io/collector/pdata/ptrace"
	"go.opentelemetry.io/otel/attribute"
	"go.opentelemetry.io/otel/sdk/metric/metricdata"
	"go.opentelemetry.io/otel/sdk/metric/metricdata/metricdatatest"

	"github.com/otelcol-handoff/otelcol-handoff/connector/assertionconnector/internal/metadata"
	"github.com/otelcol-handoff/otelcol-handoff/connector/assertionconnector/internal/metadatatest"
	"github.com/otelcol-handoff/otelcol-handoff/internal/agentgraph"
	"github.com/otelcol-handoff/otelcol-handoff/internal/spanfile"
	"github.com/otelcol-handoff/otelcol-handoff/internal/spanwalk"
)

const tracesDir = "../../testdata/traces"

// released reads real-framework captures and adds the HANDOFF spans, as the handoff
// processor in front of the connector releases them.
func released(t testing.TB, files ...string) ptrace.Traces {
	t.Helper()
	return releasedWith(t, nil, files...)
}

// failingAgent makes the runs of agent fail (span status ERROR), before release.
func failingAgent(agent string) func(ptrace.Traces) {
	return func(td ptrace.Traces) {
		for _, g := range agentgraph.BuildAll(td, agentgraph.Options{}) {
			for _, inv := range g.Invocations {
				if inv.Name == agent {
					inv.Span.Pdata.Status().SetCode(ptrace.StatusCodeError)
					inv.Span.Pdata.Status().SetMessage("weather service unavailable")
				}
			}
		}
	}
}

// releasedWith is released with the captures changed by mutate first.
func releasedWith(t testing.TB, mutate func(ptrace.Traces), files ...string) ptrace.Traces {
	t.Helper()
	out := ptrace.NewTraces()
	for _, f := range files {
		td, err := spanfile.ReadAll(filepath.Join(tracesDir, f))
		require.NoError(t, err)
		if mutate != nil {
			mutate(td)
		}
		for _, g := range agentgraph.BuildAll(td, agentgraph.Options{}) {
			agentgraph.AppendHandoffs(g, td, agentgraph.ContentPolicy{})
		}
		td.ResourceSpans().MoveAndAppendTo(out.ResourceSpans())
	}
	return out
}

// harness is one configured connector wired the way the collector wires it: one instance
// per output signal, sharing the *Config, fed each batch in turn (the traces output gets a
// copy, as the fan-out gives mutating consumers).
type harness struct {
	tt      *componenttest.Telemetry
	cfg     *Config
	traces  *consumertest.TracesSink
	logs    *consumertest.LogsSink
	metrics *consumertest.MetricsSink
	comps   []connector.Traces
	ticks   chan time.Time
}

func newHarness(t testing.TB, cfg *Config) *harness {
	t.Helper()
	// The tests feed whole captured traces, without the handoff processor in front.
	cfg.Assertions.RequireHandoffProcessor = false
	h := &harness{
		tt: componenttest.NewTelemetry(), cfg: cfg, ticks: make(chan time.Time),
		traces: new(consumertest.TracesSink), logs: new(consumertest.LogsSink), metrics: new(consumertest.MetricsSink),
	}
	t.Cleanup(func() { require.NoError(t, h.tt.Shutdown(context.Background())) })
	set := metadatatest.NewSettings(h.tt)
	f := NewFactory()
	ctx := context.Background()
	tc, err := f.CreateTracesToTraces(ctx, set, cfg, h.traces)
	require.NoError(t, err)
	lc, err := f.CreateTracesToLogs(ctx, set, cfg, h.logs)
	require.NoError(t, err)
	mc, err := f.CreateTracesToMetrics(ctx, set, cfg, h.metrics)
	require.NoError(t, err)
	registryMu.Lock()
	registry[cfg].ticks = h.ticks
	registryMu.Unlock()
	h.comps = []connector.Traces{tc, lc, mc}
	for _, c := range h.comps {
		require.NoError(t, c.Start(ctx, componenttest.NewNopHost()))
	}
	return h
}

func (h *harness) consume(t *testing.T, td ptrace.Traces) {
	t.Helper()
	h.consumeIn(t, context.Background(), td)
}

// consumeIn is consume with the context of the call (the graphs of a handoff processor).
func (h *harness) consumeIn(t *testing.T, ctx context.Context, td ptrace.Traces) {
	t.Helper()
	require.True(t, h.comps[0].Capabilities().MutatesData)
	require.NoError(t, h.comps[0].ConsumeTraces(ctx, cloneTraces(td)))
	for _, c := range h.comps[1:] {
		require.False(t, c.Capabilities().MutatesData)
		require.NoError(t, c.ConsumeTraces(ctx, td))
	}
}

func (h *harness) shutdown(t *testing.T) {
	t.Helper()
	for _, c := range h.comps {
		require.NoError(t, c.Shutdown(context.Background()))
	}
}

func cloneTraces(td ptrace.Traces) ptrace.Traces {
	out := ptrace.NewTraces()
	td.CopyTo(out)
	return out
}

func weatherConfig(t testing.TB) *Config {
	return loadConfig(t, "config.yaml", "custom")
}

// spanOrder lists the span ids of a batch in order.
func spanOrder(td ptrace.Traces) []string {
	var out []string
	spanwalk.Each(td, func(_ pcommon.Resource, sp ptrace.Span) { out = append(out, sp.SpanID().String()) })
	return out
}

func TestTracesStampedGolden(t *testing.T) {
	in := released(t, "google-adk-ok.json", "strands-ok.json")
	h := newHarness(t, loadConfig(t, "config.yaml", "golden"))
	h.consume(t, in)
	h.shutdown(t)

	require.Len(t, h.traces.AllTraces(), 1)
	out := h.traces.AllTraces()[0]
	// Every span forwarded, in the order it came (nothing added, dropped or moved).
	require.Equal(t, spanOrder(in), spanOrder(out))

	expected, err := golden.ReadTraces(filepath.Join("testdata", "stamp", "expected.yaml"))
	require.NoError(t, err)
	require.NoError(t, ptracetest.CompareTraces(expected, out))
}

// rootVerdict finds the handoff.verdict of a trace's root agent span.
func rootVerdict(t *testing.T, td ptrace.Traces, rootAgentSpan string) (string, []any) {
	t.Helper()
	var verdict string
	var failed []any
	spanwalk.Each(td, func(_ pcommon.Resource, sp ptrace.Span) {
		if sp.SpanID().String() != rootAgentSpan {
			return
		}
		v, ok := sp.Attributes().Get(AttrVerdict)
		require.True(t, ok)
		verdict = v.Str()
		f, ok := sp.Attributes().Get(AttrVerdictFailed)
		require.True(t, ok)
		failed = f.Slice().AsRaw()
	})
	return verdict, failed
}

func agentSpans(t *testing.T, td ptrace.Traces) map[string]map[string]string {
	t.Helper()
	out := map[string]map[string]string{}
	for _, g := range agentgraph.BuildAll(td, agentgraph.Options{}) {
		m := map[string]string{"": g.Root.Span.ID.String()}
		for _, inv := range g.Invocations {
			m[inv.Name] = inv.Span.ID.String()
		}
		out[g.TraceID.String()] = m
	}
	return out
}

func TestVerdictAttributes(t *testing.T) {
	in := released(t, "google-adk-ok.json", "strands-ok.json")
	h := newHarness(t, weatherConfig(t))
	h.consume(t, in)
	h.shutdown(t)
	out := h.traces.AllTraces()[0]
	for id, agents := range agentSpans(t, in) {
		verdict, failed := rootVerdict(t, out, agents[""])
		require.Equal(t, VerdictFail, verdict, id)
		require.Equal(t, []any{"weather_overrun/EXPECT_AGENT_BUDGET#2", "weather_overrun/EXPECT_DELEGATION_TO#3"}, failed, id)
	}
}

// TestHandoffResultOnHandoffSpan: a result on one handoff is judged on its HANDOFF span,
// in the trace (span event) and in the logs (span id, handoff.source, handoff.target).
func TestHandoffResultOnHandoffSpan(t *testing.T) {
	in := released(t, "google-adk-ok.json", "strands-ok.json")
	h := newHarness(t, loadConfig(t, "config.yaml", "golden"))
	h.consume(t, in)
	h.shutdown(t)

	handoffs := map[string]string{} // trace id -> HANDOFF span id of triage -> weather_specialist
	spanwalk.Each(h.traces.AllTraces()[0], func(_ pcommon.Resource, sp ptrace.Span) {
		src, _ := sp.Attributes().Get(agentgraph.AttrSource)
		dst, _ := sp.Attributes().Get(agentgraph.AttrTarget)
		if src.Str() != "triage" || dst.Str() != "weather_specialist" {
			return
		}
		handoffs[sp.TraceID().String()] = sp.SpanID().String()
		require.Equal(t, 1, sp.Events().Len())
		ev := sp.Events().At(0)
		require.Equal(t, EventName, ev.Name())
		name, _ := ev.Attributes().Get(AttrEvaluationName)
		require.Equal(t, "weather_handoff/EXPECT_HANDOFF_CONTEXT#2", name.Str())
		label, _ := ev.Attributes().Get(AttrScoreLabel)
		require.Equal(t, "pass", label.Str(), "%v", ev.Attributes().AsRaw())
	})
	require.Len(t, handoffs, 2)
	seen := 0
	for _, ld := range h.logs.AllLogs() {
		forEachRecord(ld, func(lr plog.LogRecord) {
			name, _ := lr.Attributes().Get(AttrEvaluationName)
			if name.Str() != "weather_handoff/EXPECT_HANDOFF_CONTEXT#2" {
				return
			}
			seen++
			require.Equal(t, handoffs[lr.TraceID().String()], lr.SpanID().String())
			src, _ := lr.Attributes().Get(AttrHandoffSource)
			dst, _ := lr.Attributes().Get(AttrHandoffTarget)
			require.Equal(t, "triage -> weather_specialist", src.Str()+" -> "+dst.Str())
		})
	}
	require.Equal(t, 2, seen)
}

func TestLogsOneRecordPerResult(t *testing.T) {
	in := released(t, "google-adk-ok.json", "strands-ok.json")
	h := newHarness(t, weatherConfig(t))
	h.consume(t, in)
	h.shutdown(t)

	agents := agentSpans(t, in)
	type rec struct{ trace, span, label string }
	got := map[string]rec{}
	clusters := map[string][]string{} // evaluation name -> "cluster signature" per record
	n := 0
	for _, ld := range h.logs.AllLogs() {
		forEachRecord(ld, func(lr plog.LogRecord) {
			n++
			require.Equal(t, EventName, lr.EventName())
			attrs := lr.Attributes()
			name, _ := attrs.Get(AttrEvaluationName)
			label, _ := attrs.Get(AttrScoreLabel)
			expl, _ := attrs.Get(AttrExplanation)
			require.NotEmpty(t, expl.Str())
			for _, k := range []string{AttrExpected, AttrActual, AttrTestCaseName, AttrStep} {
				_, ok := attrs.Get(k)
				require.True(t, ok, k)
			}
			got[lr.TraceID().String()+" "+name.Str()] = rec{lr.TraceID().String(), lr.SpanID().String(), label.Str()}
			if c, ok := attrs.Get(AttrFailureCluster); ok {
				sig, _ := attrs.Get(AttrFailureSignature)
				clusters[name.Str()] = append(clusters[name.Str()], c.Str()+" "+sig.Str())
			}
		})
	}
	require.Equal(t, 12, n, "6 results per trace, 2 traces")
	// Each failure's record names its cluster; the same failure on both traces (other span
	// ids in its message) has one signature.
	require.Len(t, clusters, 2)
	for name, want := range map[string]string{
		"weather_overrun/EXPECT_AGENT_BUDGET#2": "budget_blowout", "weather_overrun/EXPECT_DELEGATION_TO#3": "wrong_dispatch",
	} {
		require.Len(t, clusters[name], 2, name)
		require.Equal(t, clusters[name][0], clusters[name][1], name)
		require.True(t, strings.HasPrefix(clusters[name][0], want+" "), clusters[name][0])
	}
	for id, a := range agents {
		want := map[string]rec{
			"weather_delegation/ASSERT_AGENT_TOPOLOGY#1": {id, a[""], "pass"},
			"weather_delegation/EXPECT_DELEGATION_TO#2":  {id, a["weather_specialist"], "pass"},
			"weather_delegation/EXPECT_AGENT_BUDGET#3":   {id, a["weather_specialist"], "pass"},
			"weather_overrun/ASSERT_AGENT_TOPOLOGY#1":    {id, a[""], "pass"},
			"weather_overrun/EXPECT_AGENT_BUDGET#2":      {id, a["weather_specialist"], "fail"},
			// No delegation back to triage: the result names no span, so the root agent's.
			"weather_overrun/EXPECT_DELEGATION_TO#3": {id, a[""], "fail"},
		}
		for name, w := range want {
			require.Equal(t, w, got[id+" "+name], name)
		}
	}
}

func forEachRecord(ld plog.Logs, fn func(plog.LogRecord)) {
	for i := 0; i < ld.ResourceLogs().Len(); i++ {
		sls := ld.ResourceLogs().At(i).ScopeLogs()
		for j := 0; j < sls.Len(); j++ {
			lrs := sls.At(j).LogRecords()
			for k := 0; k < lrs.Len(); k++ {
				fn(lrs.At(k))
			}
		}
	}
}

// metricsByName indexes the last flushed batch.
func lastMetrics(t *testing.T, sink *consumertest.MetricsSink) map[string]pmetric.Metric {
	t.Helper()
	all := sink.AllMetrics()
	require.NotEmpty(t, all)
	out := map[string]pmetric.Metric{}
	md := all[len(all)-1]
	for i := 0; i < md.ResourceMetrics().Len(); i++ {
		sms := md.ResourceMetrics().At(i).ScopeMetrics()
		for j := 0; j < sms.Len(); j++ {
			ms := sms.At(j).Metrics()
			for k := 0; k < ms.Len(); k++ {
				out[ms.At(k).Name()] = ms.At(k)
			}
		}
	}
	return out
}

func attrKey(m pcommon.Map, keys ...string) string {
	s := ""
	for _, k := range keys {
		v, _ := m.Get(k)
		s += k + "=" + v.AsString() + " "
	}
	return s
}

func TestMetricsExactCounts(t *testing.T) {
	in := released(t, "google-adk-ok.json", "strands-ok.json")
	h := newHarness(t, weatherConfig(t))
	h.consume(t, in)
	h.ticks <- time.Now()
	require.Eventually(t, func() bool { return len(h.metrics.AllMetrics()) == 1 }, 5*time.Second, time.Millisecond)
	// A second batch: the series are cumulative.
	h.consume(t, released(t, "google-adk-ok.json"))
	h.shutdown(t) // the last flush
	require.Len(t, h.metrics.AllMetrics(), 2)
	m := lastMetrics(t, h.metrics)

	results := map[string]int64{}
	sum := m[MetricResults].Sum()
	require.True(t, sum.IsMonotonic())
	require.Equal(t, pmetric.AggregationTemporalityCumulative, sum.AggregationTemporality())
	require.Equal(t, "{result}", m[MetricResults].Unit())
	for i := 0; i < sum.DataPoints().Len(); i++ {
		dp := sum.DataPoints().At(i)
		results[attrKey(dp.Attributes(), AttrCase, AttrStepShort, AttrOutcome)] = dp.IntValue()
		require.Equal(t, 1, dp.Exemplars().Len())
		require.False(t, dp.Exemplars().At(0).TraceID().IsEmpty())
	}
	require.Equal(t, map[string]int64{
		"case=weather_delegation step=ASSERT_AGENT_TOPOLOGY#1 outcome=pass ": 3,
		"case=weather_delegation step=EXPECT_DELEGATION_TO#2 outcome=pass ":  3,
		"case=weather_delegation step=EXPECT_AGENT_BUDGET#3 outcome=pass ":   3,
		"case=weather_overrun step=ASSERT_AGENT_TOPOLOGY#1 outcome=pass ":    3,
		"case=weather_overrun step=EXPECT_AGENT_BUDGET#2 outcome=fail ":      3,
		"case=weather_overrun step=EXPECT_DELEGATION_TO#3 outcome=fail ":     3,
	}, results)

	// The failures again, by failure cluster: the budget overrun is a budget_blowout, the
	// handback that never happened a wrong_dispatch.
	failures := map[string]int64{}
	fsum := m[MetricFailures].Sum()
	require.True(t, fsum.IsMonotonic())
	require.Equal(t, "{result}", m[MetricFailures].Unit())
	for i := 0; i < fsum.DataPoints().Len(); i++ {
		dp := fsum.DataPoints().At(i)
		failures[attrKey(dp.Attributes(), AttrCase, AttrStepShort, AttrCluster)] = dp.IntValue()
		require.Equal(t, 1, dp.Exemplars().Len())
		require.False(t, dp.Exemplars().At(0).TraceID().IsEmpty())
	}
	require.Equal(t, map[string]int64{
		"case=weather_overrun step=EXPECT_AGENT_BUDGET#2 cluster=budget_blowout ":  3,
		"case=weather_overrun step=EXPECT_DELEGATION_TO#3 cluster=wrong_dispatch ": 3,
	}, failures)

	// One run per agent per trace: triage and weather_specialist in ADK (twice) and Strands
	// (its swarm is a wrapper, not an agent).
	runs := histCounts(m[MetricAgentDuration], AttrAgentName)
	require.Equal(t, map[string]uint64{
		"gen_ai.agent.name=triage ": 3, "gen_ai.agent.name=weather_specialist ": 3,
	}, runs)
	require.Equal(t, "s", m[MetricAgentDuration].Unit())
	tokens := histCounts(m[MetricAgentTokens], AttrAgentName, AttrTokenType)
	require.Len(t, tokens, 4) // two agents, input and output
	require.Equal(t, uint64(3), tokens["gen_ai.agent.name=weather_specialist gen_ai.token.type=input "])
	require.Equal(t, runs, histCounts(m[MetricAgentToolCalls], AttrAgentName))
	require.Equal(t, runs, histCounts(m[MetricAgentLLMCalls], AttrAgentName))

	// The specialist uses 221 tokens in every trace: 221/8000 and 221/100 of the limits.
	budget := m[MetricBudgetUse].Histogram().DataPoints()
	use := map[string]float64{}
	for i := 0; i < budget.Len(); i++ {
		dp := budget.At(i)
		use[attrKey(dp.Attributes(), AttrCase, AttrStepShort, AttrAgentName, AttrBudget)] = dp.Sum() / float64(dp.Count())
	}
	require.InDeltaMapValues(t, map[string]float64{
		"case=weather_delegation step=EXPECT_AGENT_BUDGET#3 gen_ai.agent.name=weather_specialist budget=tokens ":     221.0 / 8000,
		"case=weather_delegation step=EXPECT_AGENT_BUDGET#3 gen_ai.agent.name=weather_specialist budget=tool_calls ": (2 + 2 + 2) / 3.0 / 6, // 2 calls each (Strands' structured-output routing call is a delegation call)
		"case=weather_overrun step=EXPECT_AGENT_BUDGET#2 gen_ai.agent.name=weather_specialist budget=tokens ":        2.21,
	}, use, 1e-9)

	edges := map[string]int64{}
	es := m[MetricEdgeTotal].Sum().DataPoints()
	for i := 0; i < es.Len(); i++ {
		edges[attrKey(es.At(i).Attributes(), AttrClient, AttrServer, AttrConnectionType, AttrFailed)] = es.At(i).IntValue()
	}
	require.Equal(t, map[string]int64{
		"client=triage server=weather_specialist connection_type=agent failed=false ": 3,
	}, edges)
	_, anyFailed := m[MetricEdgeFailedTotal]
	require.False(t, anyFailed, "no receiver errored")
	require.Equal(t, map[string]uint64{
		"client=triage server=weather_specialist ": 3,
	}, histCounts(m[MetricEdgeServerSecs], AttrClient, AttrServer))
}

func histCounts(m pmetric.Metric, keys ...string) map[string]uint64 {
	out := map[string]uint64{}
	dps := m.Histogram().DataPoints()
	for i := 0; i < dps.Len(); i++ {
		dp := dps.At(i)
		out[attrKey(dp.Attributes(), keys...)] += dp.Count()
		if dp.Exemplars().Len() != 1 || dp.Exemplars().At(0).TraceID().IsEmpty() {
			panic("histogram data point without a trace exemplar: " + m.Name())
		}
	}
	return out
}

// TestFailedEdges: a handoff whose receiver run errored counts in
// traces_service_graph_request_failed_total and under failed=true.
func TestFailedEdges(t *testing.T) {
	h := newHarness(t, weatherConfig(t))
	h.consume(t, releasedWith(t, failingAgent("weather_specialist"), "google-adk-ok.json", "strands-ok.json"))
	h.consume(t, released(t, "google-adk-ok.json"))
	h.shutdown(t)
	m := lastMetrics(t, h.metrics)
	count := func(name string) map[string]int64 {
		out := map[string]int64{}
		dps := m[name].Sum().DataPoints()
		for i := 0; i < dps.Len(); i++ {
			out[attrKey(dps.At(i).Attributes(), AttrClient, AttrServer, AttrFailed)] = dps.At(i).IntValue()
		}
		return out
	}
	require.Equal(t, map[string]int64{
		"client=triage server=weather_specialist failed=true ":  2,
		"client=triage server=weather_specialist failed=false ": 1,
	}, count(MetricEdgeTotal))
	require.Equal(t, map[string]int64{
		"client=triage server=weather_specialist failed=true ": 2,
	}, count(MetricEdgeFailedTotal))
}

func TestCardinalityFold(t *testing.T) {
	cfg := weatherConfig(t)
	cfg.MaxAgents = 1
	h := newHarness(t, cfg)
	h.consume(t, released(t, "google-adk-ok.json")) // triage first, then weather_specialist
	h.consume(t, released(t, "strands-ok.json"))    // the same two names again
	h.shutdown(t)
	m := lastMetrics(t, h.metrics)
	require.Equal(t, map[string]uint64{
		"gen_ai.agent.name=triage ": 2, "gen_ai.agent.name=other ": 2,
	}, histCounts(m[MetricAgentDuration], AttrAgentName))
	require.Equal(t, map[string]uint64{
		"client=triage server=other ": 2,
	}, histCounts(m[MetricEdgeServerSecs], AttrClient, AttrServer))
	metadatatest.AssertEqualConnectorAssertionAgentsFolded(t, h.tt, []metricdata.DataPoint[int64]{{Value: 2, Attributes: selfSet()}}, metricdatatest.IgnoreTimestamp())
}

// TestEvaluatedOnce: three outputs, one evaluation per trace (the engine's self-telemetry
// counts each trace once).
func TestEvaluatedOnce(t *testing.T) {
	h := newHarness(t, weatherConfig(t))
	h.consume(t, released(t, "google-adk-ok.json", "strands-ok.json"))
	h.shutdown(t)
	got, err := h.tt.GetMetric("otelcol_exporter_assertion_traces_evaluated")
	require.NoError(t, err)
	var total int64
	for _, dp := range got.Data.(metricdata.Sum[int64]).DataPoints {
		if v, _ := dp.Attributes.Value(attribute.Key("complete")); v.AsBool() {
			total += dp.Value
		}
	}
	require.Equal(t, int64(2), total)
	metadatatest.AssertEqualConnectorAssertionLogRecords(t, h.tt, []metricdata.DataPoint[int64]{
		{Value: 12, Attributes: selfSet(attribute.String("phase", "now"))},
	}, metricdatatest.IgnoreTimestamp())
}

func TestStartShutdownAlone(t *testing.T) {
	// Each output on its own (the others not configured), as a pipeline may use only one.
	for _, create := range []func(connector.Factory, *Config) (component.Component, error){
		func(f connector.Factory, c *Config) (component.Component, error) {
			return f.CreateTracesToLogs(context.Background(), connectortest.NewNopSettings(metadata.Type), c, consumertest.NewNop())
		},
		func(f connector.Factory, c *Config) (component.Component, error) {
			return f.CreateTracesToMetrics(context.Background(), connectortest.NewNopSettings(metadata.Type), c, consumertest.NewNop())
		},
	} {
		c, err := create(NewFactory(), weatherConfig(t))
		require.NoError(t, err)
		require.NoError(t, c.Start(context.Background(), componenttest.NewNopHost()))
		require.NoError(t, c.(connector.Traces).ConsumeTraces(context.Background(), released(t, "google-adk-ok.json")))
		require.NoError(t, c.Shutdown(context.Background()))
	}
}

// selfSet is an attribute set of the connector's self-telemetry: kvs plus its component id
// (metadatatest.NewSettings names it "assertion").
func selfSet(kvs ...attribute.KeyValue) attribute.Set {
	return attribute.NewSet(append(kvs, attribute.String("connector", "assertion"))...)
}

// TestMetricAgentNamesRedacted: agent names reach the metrics through the redaction
// policy, as they reach the verdict records: a card number in a name is masked.
func TestMetricAgentNamesRedacted(t *testing.T) {
	const secret = "4111111111111111"
	rename := func(td ptrace.Traces) {
		spanwalk.Each(td, func(_ pcommon.Resource, sp ptrace.Span) {
			sp.SetName(strings.ReplaceAll(sp.Name(), "weather_specialist", "weather_"+secret))
			for key, v := range sp.Attributes().All() {
				if v.Type() == pcommon.ValueTypeStr {
					sp.Attributes().PutStr(key, strings.ReplaceAll(v.Str(), "weather_specialist", "weather_"+secret))
				}
			}
		})
	}
	h := newHarness(t, weatherConfig(t))
	h.consume(t, releasedWith(t, rename, "google-adk-ok.json"))
	h.shutdown(t)
	m := lastMetrics(t, h.metrics)
	require.Equal(t, map[string]uint64{
		"gen_ai.agent.name=triage ": 1, "gen_ai.agent.name=weather_[REDACTED:card] ": 1,
	}, histCounts(m[MetricAgentDuration], AttrAgentName))
	require.Equal(t, map[string]uint64{
		"client=triage server=weather_[REDACTED:card] ": 1,
	}, histCounts(m[MetricEdgeServerSecs], AttrClient, AttrServer))
}
