package assertionexporter

import (
	"context"
	"encoding/xml"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"
	"go.opentelemetry.io/collector/component"
	"go.opentelemetry.io/collector/component/componenttest"
	"go.opentelemetry.io/collector/confmap"
	"go.opentelemetry.io/collector/confmap/confmaptest"
	"go.opentelemetry.io/otel/sdk/metric/metricdata"
	"go.opentelemetry.io/otel/sdk/metric/metricdata/metricdatatest"

	"github.com/otelcol-handoff/otelcol-handoff/assertionexporter/internal/metadata"
	"github.com/otelcol-handoff/otelcol-handoff/assertionexporter/internal/metadatatest"
	"github.com/otelcol-handoff/otelcol-handoff/internal/rules"
	"github.com/otelcol-handoff/otelcol-handoff/internal/rules/expect"
	"github.com/otelcol-handoff/otelcol-handoff/internal/rules/rulestest"
)

func loadSeedConfig(t *testing.T) *Config {
	t.Helper()
	cm, err := confmaptest.LoadConf(filepath.Join("testdata", "seed001.yaml"))
	require.NoError(t, err)
	sub, err := cm.Sub(component.NewIDWithName(metadata.Type, "seed001").String())
	require.NoError(t, err)
	cfg := NewFactory().CreateDefaultConfig().(*Config)
	require.NoError(t, sub.Unmarshal(cfg))
	require.NoError(t, confmap.Validate(cfg))
	return cfg
}

// TestSeed001ConfigLoads: the seed's examples load verbatim through the factory, with
// defaults and the report paths.
func TestSeed001ConfigLoads(t *testing.T) {
	cfg := loadSeedConfig(t)
	require.Equal(t, ReportsConfig{JUnit: "/tmp/assertions.junit.xml", Markdown: "/tmp/assertions.md"}, cfg.Reports)
	require.Equal(t, expect.ExpectedNoToolCalls{"shell.exec"}, cfg.Defaults.ExpectedNoToolCalls)

	// The same list as the rules' testdata, so the two cannot drift apart.
	cm, err := confmaptest.LoadConf(filepath.Join("..", "internal", "rules", "testdata", "seed001.yaml"))
	require.NoError(t, err)
	var plain struct {
		Cases []rules.CaseConfig `mapstructure:"cases"`
	}
	require.NoError(t, cm.Unmarshal(&plain))
	require.Equal(t, plain.Cases, cfg.Cases)
	require.Len(t, cfg.Cases, len(rulestest.Seed001))

	byName := map[string]rules.CaseConfig{}
	for _, c := range cfg.Cases {
		byName[c.Name] = c
	}
	require.Equal(t, expect.ExpectedToolCalls{
		{Tool: "math.calculator.add", Expr: "invocations == 1 and params.a == 4"},
		{Tool: "math.calculator.add", Expr: "invocations == 1 and params.a == 7"},
	}, byName["calls_add_for_each_pair"].ExpectedToolCalls)
	require.Equal(t, expect.ExpectedToolCalls{{Tool: "math.calculator.add"}}, byName["uses_calculator"].ExpectedToolCalls)
	fwd := byName["forwards_charge_id_unchanged"]
	require.Equal(t, "create_charge_then_refund", fwd.Builder, "runner fields are accepted (and ignored)")
	require.Equal(t, map[string]any{"amount_cents": 4200}, fwd.BuilderArgs)
	sum := byName["dispatches_summarizer_then_publisher"].ExpectedChildAgents.Specs()["summarizer"]
	require.Equal(t, expect.ExpectedResult(`output.summary != ""`), sum.ExpectedResult)
	require.Equal(t, expect.ExpectedToolCalls{{Tool: "kafka.publish", Expr: `params.topic == "summaries"`}},
		sum.ExpectedChildAgents.Specs()["publisher"].ExpectedToolCalls)
	tel := byName["fans_out_telemetry"].ExpectedChildAgents.Specs()["telemetry-writer"]
	require.Equal(t, 1, *tel.ExpectedTriggered)
}

// seed001FailOutcomes are the outcomes on each example's failing trace (every other
// assertion of the case fails; the passing trace passes everything).
var seed001FailOutcomes = map[string]map[string]rules.Outcome{
	"calls_add_for_each_pair": {"expected_tool_calls[1]": rules.Pass},
	"dispatches_summarizer_then_publisher": {
		"expected_child_agents.summarizer.expected_result": rules.Pass,
	},
	"fans_out_telemetry": {"expected_child_agents.telemetry-writer.expected_payload": rules.Pass},
}

// TestSeed001ThroughTheExporter sends every example's passing and failing trace through the
// exporter and checks the verdicts, the metrics and the JUnit and Markdown reports.
func TestSeed001ThroughTheExporter(t *testing.T) {
	cfg := loadSeedConfig(t)
	dir := t.TempDir()
	cfg.Reports.JUnit = filepath.Join(dir, "assertions.junit.xml")
	cfg.Reports.Markdown = filepath.Join(dir, "assertions.md")
	h := newHarness(t, cfg)
	ctx := context.Background()

	var names []string
	for name := range rulestest.Seed001 {
		names = append(names, name)
	}
	sort.Strings(names)
	passID, failID := map[string]string{}, map[string]string{}
	for i, name := range names {
		ex := rulestest.Seed001[name]
		pass, fail := ex.Pass(byte(2*i+1)), ex.Fail(byte(2*i+2))
		passID[name], failID[name] = pass.ID().String(), fail.ID().String()
		require.NoError(t, h.exp.ConsumeTraces(ctx, pass.Traces()))
		require.NoError(t, h.exp.ConsumeTraces(ctx, fail.Traces()))
	}
	require.NoError(t, h.exp.Shutdown(ctx))
	require.NoError(t, h.exp.Shutdown(ctx), "repeated Shutdown")

	results := h.results(t)
	for _, name := range names {
		var onPass, onFail int
		for _, r := range results {
			if r.Case != name {
				continue
			}
			switch r.TraceID {
			case passID[name]:
				onPass++
				require.Equal(t, rules.Pass, r.Outcome, "%s %s on its passing trace: %s", name, r.Step, r.Message)
			case failID[name]:
				onFail++
				want := rules.Fail
				if o, ok := seed001FailOutcomes[name][r.Step]; ok {
					want = o
				}
				if r.Step == "expected_no_tool_calls" && name != "plain_chat_no_tools" {
					want = rules.Pass // inherited from defaults: nobody calls shell.exec
				}
				require.Equal(t, want, r.Outcome, "%s %s on its failing trace: %s", name, r.Step, r.Message)
			}
		}
		require.Equal(t, len(h.exp.eval.Cases()[name]), onPass, name)
		require.Equal(t, onPass, onFail, name)
	}

	// Metrics: every (case, step) series, seed-001 ids included, counts its results.
	counted := map[string]int64{}
	m, err := h.tt.GetMetric("otelcol_exporter_assertion_evaluations")
	require.NoError(t, err)
	for _, dp := range m.Data.(metricdata.Sum[int64]).DataPoints {
		c, _ := dp.Attributes.Value("case")
		st, _ := dp.Attributes.Value("step")
		counted[c.AsString()+"/"+st.AsString()] += dp.Value
	}
	require.Equal(t, int64(2*len(names)), counted["dispatches_to_summarizer/expected_child_agents.summarizer.expected_tool_calls[0]"])
	require.Equal(t, int64(2*len(names)), counted["completes_cleanly/expected_no_tool_calls"], "inherited from defaults")
	metadatatest.AssertEqualExporterAssertionLateSpans(t, h.tt, []metricdata.DataPoint[int64]{{Value: 0, Attributes: idSet()}}, metricdatatest.IgnoreTimestamp())

	// JUnit: a suite per case in config order, a testcase per result, counts that add up.
	b, err := os.ReadFile(cfg.Reports.JUnit)
	require.NoError(t, err)
	var junit struct {
		Tests    int `xml:"tests,attr"`
		Failures int `xml:"failures,attr"`
		Errors   int `xml:"errors,attr"`
		Suites   []struct {
			Name  string `xml:"name,attr"`
			Cases []struct {
				Name    string `xml:"name,attr"`
				Failure *struct {
					Message string `xml:"message,attr"`
					Body    string `xml:",chardata"`
				} `xml:"failure"`
			} `xml:"testcase"`
		} `xml:"testsuite"`
	}
	require.NoError(t, xml.Unmarshal(b, &junit))
	require.Equal(t, len(results), junit.Tests)
	failures, listed := 0, 0
	for _, r := range results {
		if r.Outcome == rules.Fail {
			failures++
		}
	}
	require.Equal(t, failures, junit.Failures)
	require.Len(t, junit.Suites, len(cfg.Cases))
	for i, s := range junit.Suites {
		require.Equal(t, cfg.Cases[i].Name, s.Name)
		listed += len(s.Cases)
	}
	require.Equal(t, len(results), listed)
	pairs := junit.Suites[9] // calls_add_for_each_pair
	require.Equal(t, "calls_add_for_each_pair", pairs.Name)
	var msgs []string
	for _, c := range pairs.Cases {
		// The trace id is in the body; the name has the root agent (stable across runs).
		if c.Failure != nil && strings.Contains(c.Failure.Body, "trace: "+failID["calls_add_for_each_pair"]) {
			msgs = append(msgs, c.Name+": "+c.Failure.Message)
		}
	}
	require.Equal(t, []string{"expected_tool_calls[0] [root assistant, trace 4]: agent assistant: 2 of 3 math.calculator.add calls match " +
		"`invocations == 1 and params.a == 4`, and the residual `invocations == 1` is false with invocations = 2"}, msgs)

	// Markdown: the verdict, the failures, a DAG per failing trace with each failure drawn
	// where it happened: the empty payload on the dispatcher -> summarizer handoff.
	md, err := os.ReadFile(cfg.Reports.Markdown)
	require.NoError(t, err)
	require.True(t, strings.HasPrefix(string(md), "# Assertion report\n\n**FAILED**: "), string(md[:100]))
	require.Contains(t, string(md), "## Failures")
	require.Contains(t, string(md), "### Trace `"+failID["dispatches_to_summarizer"]+"`")
	require.Contains(t, string(md), "  n0[\"<b>dispatcher</b><br/>0 tok · 0 tool calls · 100 ms<br/>✗ ")
	require.Contains(t, string(md), "  n0 ==>|\"✗ expected_payload: payload {#quot;text#quot;:#quot;#quot;} (from gen_ai.tool.call…\"| n1\n")
	entries, err := os.ReadDir(dir)
	require.NoError(t, err)
	require.Len(t, entries, 2, "only the two reports, no temporary files")
}

// TestReportPathNotWritable fails at start, not after a whole run.
func TestReportPathNotWritable(t *testing.T) {
	cfg := loadSeedConfig(t)
	dir := t.TempDir()
	cfg.Reports.JUnit = filepath.Join(dir, "junit.xml")
	cfg.Reports.Markdown = filepath.Join(dir, "missing", "summary.md")
	exp, err := newExporter(metadatatest.NewSettings(componenttest.NewTelemetry()), cfg)
	require.NoError(t, err)
	err = exp.Start(context.Background(), componenttest.NewNopHost())
	require.ErrorContains(t, err, "report "+cfg.Reports.Markdown+" is not writable")
	require.NoError(t, exp.Shutdown(context.Background()))
	_, err = os.Stat(cfg.Reports.JUnit)
	require.True(t, os.IsNotExist(err), "nothing is written after a failed start")
}

// TestBatchOrder: the traces of one batch are judged in trace-id order.
func TestBatchOrder(t *testing.T) {
	h := newHarness(t, &Config{LogVerdicts: LogNone, Cases: []rules.CaseConfig{{
		Name: "c", TestFields: rules.TestFields{AgentExpectations: expect.AgentExpectations{ExpectedResult: `status == "completed"`}},
	}}})
	batch := rulestest.Seed001["completes_cleanly"].Pass(9).Traces()
	for _, id := range []byte{3, 7, 1, 5} {
		rulestest.Seed001["completes_cleanly"].Pass(id).Traces().ResourceSpans().MoveAndAppendTo(batch.ResourceSpans())
	}
	require.NoError(t, h.exp.ConsumeTraces(context.Background(), batch))
	require.NoError(t, h.exp.Shutdown(context.Background()))
	var got []string
	for _, r := range h.results(t) {
		got = append(got, r.TraceID[:2])
	}
	require.Equal(t, []string{"01", "03", "05", "07", "09"}, got)
}
