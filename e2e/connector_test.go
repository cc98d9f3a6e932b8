package e2e

import (
	"fmt"
	"path/filepath"
	"sort"
	"strings"
	"testing"

	"go.opentelemetry.io/collector/pdata/pcommon"
	"go.opentelemetry.io/collector/pdata/pmetric"
	"go.opentelemetry.io/collector/pdata/ptrace"
)

// connectorParams fills testdata/connector.yaml.tmpl.
type connectorParams struct {
	HTTPPort, HealthPort             int
	SpansPath, LogsPath, MetricsPath string
}

// evalRecord is one gen_ai.evaluation.result log record.
type evalRecord struct {
	traceID, spanID, label string
}

// TestConnectorEndToEnd: real-framework captures in over OTLP, through the handoff
// processor and the assertion connector of the built binary. The logs hold one
// gen_ai.evaluation.result record per result on the judged span; the metrics hold the
// verdict counters, the per-agent histograms and the agent edges with the exact counts of
// the traces; the traces out are the traces in plus the HANDOFF spans, with the verdicts.
func TestConnectorEndToEnd(t *testing.T) {
	bin := collectorBinary(t)
	adk := loadCapture(t, "google-adk-ok.json")
	strands := loadCapture(t, "strands-ok.json")

	dir := t.TempDir()
	p := connectorParams{
		HTTPPort: freePort(t), HealthPort: freePort(t),
		SpansPath:   filepath.Join(dir, "spans.jsonl"),
		LogsPath:    filepath.Join(dir, "logs.jsonl"),
		MetricsPath: filepath.Join(dir, "metrics.jsonl"),
	}
	col := startCollector(t, bin, renderConfig(t, dir, "connector.yaml.tmpl", p))
	col.waitReady(t, fmt.Sprintf("http://127.0.0.1:%d/", p.HealthPort))
	tracesURL := fmt.Sprintf("http://127.0.0.1:%d/v1/traces", p.HTTPPort)
	postTraces(t, tracesURL, adk.td)
	postTraces(t, tracesURL, strands.td)

	// 1. Logs: one record per (trace, case, step), on the judged span.
	records := col.waitForEvalRecords(t, p.LogsPath, 12)
	for _, c := range []capture{adk, strands} {
		// The root agent is triage in both (the Strands swarm is a wrapper, not an agent).
		root := c.agentSpans["triage"]
		specialist := c.agentSpans["weather_specialist"]
		want := map[string]evalRecord{
			"weather_delegation/ASSERT_AGENT_TOPOLOGY#1": {c.traceID, root, "pass"},
			"weather_delegation/EXPECT_DELEGATION_TO#2":  {c.traceID, specialist, "pass"},
			"weather_delegation/EXPECT_AGENT_BUDGET#3":   {c.traceID, specialist, "pass"},
			"weather_overrun/ASSERT_AGENT_TOPOLOGY#1":    {c.traceID, root, "pass"},
			"weather_overrun/EXPECT_AGENT_BUDGET#2":      {c.traceID, specialist, "fail"},
			"weather_overrun/EXPECT_DELEGATION_TO#3":     {c.traceID, root, "fail"},
		}
		for name, w := range want {
			if got := records[c.traceID+" "+name]; got != w {
				t.Errorf("%s: record %s = %+v, want %+v", c.file, name, got, w)
			}
		}
	}

	// 2. Traces out: every span in, plus one HANDOFF span per handoff; the verdicts on the
	// root agent spans.
	spans := waitForTransfers(t, col, p.SpansPath, adk, strands)
	for _, c := range []struct {
		capture
		root string
	}{{adk, adk.agentSpans["triage"]}, {strands, strands.agentSpans["triage"]}} {
		for _, s := range spans[c.traceID] {
			if s.spanID != c.root {
				continue
			}
			if got := s.attrs["handoff.verdict"]; got != "fail" {
				t.Errorf("%s: root agent span handoff.verdict = %v, want fail", c.file, got)
			}
			want := []any{"weather_overrun/EXPECT_AGENT_BUDGET#2", "weather_overrun/EXPECT_DELEGATION_TO#3"}
			if got := fmt.Sprint(s.attrs["handoff.verdict.failed"]); got != fmt.Sprint(want) {
				t.Errorf("%s: handoff.verdict.failed = %s, want %v", c.file, got, want)
			}
		}
	}

	// Each result is a gen_ai.evaluation.result span event on its judged span.
	events := evaluationEvents(t, p.SpansPath)
	for _, c := range []capture{adk, strands} {
		// The root agent is triage in both (the Strands swarm is a wrapper, not an agent).
		root := c.agentSpans["triage"]
		want := map[string]int{root: 3, c.agentSpans["weather_specialist"]: 3}
		for span, n := range want {
			if got := events[c.traceID+" "+span]; got != n {
				t.Errorf("%s: span %s has %d evaluation events, want %d", c.file, span, got, n)
			}
		}
	}
	total := 0
	for _, n := range events {
		total += n
	}
	if total != 12 {
		t.Errorf("%d evaluation span events in all, want 12 (one per result)", total)
	}

	// 3. Metrics: the last (cumulative) flush holds the exact counts of the two traces.
	m := col.waitForMetrics(t, p.MetricsPath, func(m connectorMetrics) bool {
		return m.sums["handoff.assertion.results"].total() == 12 && m.hists["traces_service_graph_request_server_seconds"].total() == 2
	})
	checkSeries(t, "handoff.assertion.results", m.sums["handoff.assertion.results"], map[string]uint64{
		"case=weather_delegation outcome=pass step=ASSERT_AGENT_TOPOLOGY#1": 2,
		"case=weather_delegation outcome=pass step=EXPECT_DELEGATION_TO#2":  2,
		"case=weather_delegation outcome=pass step=EXPECT_AGENT_BUDGET#3":   2,
		"case=weather_overrun outcome=pass step=ASSERT_AGENT_TOPOLOGY#1":    2,
		"case=weather_overrun outcome=fail step=EXPECT_AGENT_BUDGET#2":      2,
		"case=weather_overrun outcome=fail step=EXPECT_DELEGATION_TO#3":     2,
	})
	runs := map[string]uint64{"gen_ai.agent.name=triage": 2, "gen_ai.agent.name=weather_specialist": 2}
	for _, name := range []string{"gen_ai.invoke_agent.duration", "gen_ai.invoke_agent.tool_calls", "gen_ai.invoke_agent.llm_calls"} {
		checkSeries(t, name, m.hists[name], runs)
	}
	tokens := map[string]uint64{}
	for k, v := range runs {
		tokens[k+" gen_ai.token.type=input"], tokens[k+" gen_ai.token.type=output"] = v, v
	}
	checkSeries(t, "gen_ai.invoke_agent.tokens", m.hists["gen_ai.invoke_agent.tokens"], tokens)
	checkSeries(t, "handoff.budget.utilization", m.hists["handoff.budget.utilization"], map[string]uint64{
		"budget=tokens case=weather_delegation gen_ai.agent.name=weather_specialist step=EXPECT_AGENT_BUDGET#3":     2,
		"budget=tool_calls case=weather_delegation gen_ai.agent.name=weather_specialist step=EXPECT_AGENT_BUDGET#3": 2,
		"budget=tokens case=weather_overrun gen_ai.agent.name=weather_specialist step=EXPECT_AGENT_BUDGET#2":        2,
	})
	edges := map[string]uint64{
		"client=triage connection_type=agent failed=false server=weather_specialist": 2,
	}
	checkSeries(t, "traces_service_graph_request_total", m.sums["traces_service_graph_request_total"], edges)
	checkSeries(t, "traces_service_graph_request_server_seconds", m.hists["traces_service_graph_request_server_seconds"], edges)
	if s, ok := m.sums["traces_service_graph_request_failed_total"]; ok {
		t.Errorf("no receiver run errored, yet traces_service_graph_request_failed_total = %v", s)
	}
	for name, want := range map[string]string{
		"handoff.assertion.results": "{result}", "gen_ai.invoke_agent.duration": "s", "gen_ai.invoke_agent.tokens": "{token}",
		"gen_ai.invoke_agent.tool_calls": "{call}", "handoff.budget.utilization": "1", "traces_service_graph_request_server_seconds": "s",
	} {
		if got := m.units[name]; got != want {
			t.Errorf("%s: unit %q, want %q", name, got, want)
		}
	}
	for _, id := range m.exemplarTraces {
		if id != adk.traceID && id != strands.traceID {
			t.Errorf("exemplar trace id %s is neither input trace", id)
		}
	}
	if len(m.exemplarTraces) == 0 {
		t.Error("no exemplar carries a trace id")
	}
	col.stop(t)
}

// evaluationEvents counts the gen_ai.evaluation.result span events of the forwarded spans,
// by "trace id span id".
func evaluationEvents(t *testing.T, path string) map[string]int {
	t.Helper()
	lines, err := completeLines(path)
	if err != nil {
		t.Fatal(err)
	}
	out := map[string]int{}
	for _, td := range fileTraces(t, lines) {
		eachSpan(td, func(_ string, s ptrace.Span) {
			for _, ev := range s.Events().All() {
				if ev.Name() == "gen_ai.evaluation.result" {
					out[s.TraceID().String()+" "+s.SpanID().String()]++
				}
			}
		})
	}
	return out
}

// waitForEvalRecords polls the logs file until it holds n gen_ai.evaluation.result records,
// keyed by "trace id evaluation name".
func (c *collector) waitForEvalRecords(t *testing.T, path string, n int) map[string]evalRecord {
	t.Helper()
	var out map[string]evalRecord
	c.eventually(t, resultTimeout, "evaluation records in "+path, func() (bool, string) {
		lines, err := completeLines(path)
		if err != nil {
			return false, err.Error()
		}
		out = map[string]evalRecord{}
		count := 0
		for _, lr := range fileLogRecords(t, lines) {
			if lr.EventName() != "gen_ai.evaluation.result" {
				t.Errorf("log record event name %q", lr.EventName())
			}
			count++
			name, _ := lr.Attributes().Get("gen_ai.evaluation.name")
			label, _ := lr.Attributes().Get("gen_ai.evaluation.score.label")
			for _, k := range []string{"gen_ai.evaluation.explanation", "handoff.expected", "handoff.actual", "test.case.name", "handoff.step"} {
				if _, ok := lr.Attributes().Get(k); !ok {
					t.Errorf("record %s lacks %s", name.Str(), k)
				}
			}
			out[lr.TraceID().String()+" "+name.Str()] = evalRecord{lr.TraceID().String(), lr.SpanID().String(), label.Str()}
		}
		if count > n {
			t.Fatalf("%d evaluation records, want %d", count, n)
		}
		return count == n, fmt.Sprintf("%d records", count)
	})
	return out
}

type connectorMetrics struct {
	sums, hists    map[string]series
	units          map[string]string
	exemplarTraces []string
}

func attrString(m pcommon.Map) string {
	var parts []string
	for k, v := range m.All() {
		parts = append(parts, k+"="+v.AsString())
	}
	sort.Strings(parts)
	return strings.Join(parts, " ")
}

// waitForMetrics polls the metrics file until its last complete line satisfies done.
func (c *collector) waitForMetrics(t *testing.T, path string, done func(connectorMetrics) bool) connectorMetrics {
	t.Helper()
	var m connectorMetrics
	c.eventually(t, resultTimeout, "connector metrics in "+path, func() (bool, string) {
		lines, err := completeLines(path)
		if err != nil || len(lines) == 0 {
			return false, fmt.Sprint("no metrics yet ", err)
		}
		md, err := (&pmetric.JSONUnmarshaler{}).UnmarshalMetrics(lines[len(lines)-1])
		if err != nil {
			t.Fatalf("metrics line: %v", err)
		}
		m = connectorMetrics{sums: map[string]series{}, hists: map[string]series{}, units: map[string]string{}}
		for _, rm := range md.ResourceMetrics().All() {
			for _, sm := range rm.ScopeMetrics().All() {
				for _, mt := range sm.Metrics().All() {
					m.units[mt.Name()] = mt.Unit()
					switch mt.Type() {
					case pmetric.MetricTypeSum:
						if !mt.Sum().IsMonotonic() || mt.Sum().AggregationTemporality() != pmetric.AggregationTemporalityCumulative {
							t.Errorf("%s: want a cumulative monotonic sum", mt.Name())
						}
						s := series{}
						for _, dp := range mt.Sum().DataPoints().All() {
							s[attrString(dp.Attributes())] = uint64(dp.IntValue())
							for _, ex := range dp.Exemplars().All() {
								m.exemplarTraces = append(m.exemplarTraces, ex.TraceID().String())
							}
						}
						m.sums[mt.Name()] = s
					case pmetric.MetricTypeHistogram:
						if mt.Histogram().AggregationTemporality() != pmetric.AggregationTemporalityCumulative {
							t.Errorf("%s: want a cumulative histogram", mt.Name())
						}
						s := series{}
						for _, dp := range mt.Histogram().DataPoints().All() {
							s[attrString(dp.Attributes())] = dp.Count()
							for _, ex := range dp.Exemplars().All() {
								m.exemplarTraces = append(m.exemplarTraces, ex.TraceID().String())
							}
						}
						m.hists[mt.Name()] = s
					}
				}
			}
		}
		return done(m), fmt.Sprintf("sums %v hists %v", m.sums, m.hists)
	})
	return m
}

func checkSeries(t *testing.T, name string, got series, want map[string]uint64) {
	t.Helper()
	if fmt.Sprint(map[string]uint64(got)) != fmt.Sprint(want) {
		t.Errorf("%s:\n got  %v\n want %v", name, map[string]uint64(got), want)
	}
}
