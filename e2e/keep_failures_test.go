package e2e

import (
	"fmt"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"testing"

	"go.opentelemetry.io/collector/pdata/pcommon"
	"go.opentelemetry.io/collector/pdata/pmetric"
	"go.opentelemetry.io/collector/pdata/ptrace"
	yaml "go.yaml.in/yaml/v3"
)

// TestKeepFailuresPipeline runs the shipped config/keep-failures.yaml itself — otlp →
// handoff → assertion connector → tail_sampling, with the connector's logs and metrics
// pipelines — on the built binary. Only what must differ in a test is merged over it with a
// second --config: loopback ports, a short quiet period and metrics flush, and file
// exporters in place of the OTLP backends. The verdicts come from the connector; the test
// takes the expected ones from handoffcheck replaying the same traces with the same cases.
//
// Every trace the cases fail arrives whole (HANDOFF spans included) with handoff.verdict on
// its root agent span; of the passing ones exactly those the probabilistic policy's hash
// selects. The logs pipeline holds gen_ai.evaluation.result records for every trace, and the
// metrics pipeline the series the dashboard and alert rules read.
//
// It needs the assertion connector (connector/assertionconnector) in the distribution.
func TestKeepFailuresPipeline(t *testing.T) {
	bin := collectorBinary(t)
	cfg := shippedConfig(t)
	prob := shippedProbabilistic(t, section(t, cfg, "processors", "tail_sampling"))
	traces := keepFailuresFixture(t)
	dir := t.TempDir()
	verdicts, results := replayVerdicts(t, dir, cfg, traces)

	grpcPort, httpPort, healthPort, metricsPort := freePort(t), freePort(t), freePort(t), freePort(t)
	tracesOut, logsOut, metricsOut := filepath.Join(dir, "traces.jsonl"), filepath.Join(dir, "logs.jsonl"), filepath.Join(dir, "metrics.jsonl")
	override := map[string]any{
		"receivers": map[string]any{"otlp": map[string]any{"protocols": map[string]any{
			"grpc": map[string]any{"endpoint": fmt.Sprintf("127.0.0.1:%d", grpcPort)},
			"http": map[string]any{"endpoint": fmt.Sprintf("127.0.0.1:%d", httpPort)},
		}}},
		"processors": map[string]any{"handoff": map[string]any{"quiet_period": "200ms", "max_wait": "2s"}},
		"connectors": map[string]any{"assertion": map[string]any{"metrics_flush_interval": "1s"}},
		"exporters": map[string]any{
			"file/traces":  map[string]any{"path": tracesOut},
			"file/logs":    map[string]any{"path": logsOut},
			"file/metrics": map[string]any{"path": metricsOut},
		},
		"extensions": map[string]any{"health_check": map[string]any{"endpoint": fmt.Sprintf("127.0.0.1:%d", healthPort)}},
		"service": map[string]any{
			"pipelines": map[string]any{
				"traces/keep":      map[string]any{"exporters": []any{"file/traces"}},
				"logs/verdicts":    map[string]any{"exporters": []any{"file/logs"}},
				"metrics/verdicts": map[string]any{"exporters": []any{"file/metrics"}},
			},
			"telemetry": map[string]any{"metrics": map[string]any{"readers": []any{map[string]any{"pull": map[string]any{
				"exporter": map[string]any{"prometheus": map[string]any{"host": "127.0.0.1", "port": metricsPort}},
			}}}}},
		},
	}
	raw, err := yaml.Marshal(override)
	if err != nil {
		t.Fatal(err)
	}
	overridePath := filepath.Join(dir, "test-overrides.yaml")
	if err := os.WriteFile(overridePath, raw, 0o600); err != nil {
		t.Fatal(err)
	}
	shipped, err := filepath.Abs(keepFailuresConfig)
	if err != nil {
		t.Fatal(err)
	}

	col := startCollector(t, bin, shipped, overridePath)
	col.waitReady(t, fmt.Sprintf("http://127.0.0.1:%d/", healthPort))
	for _, f := range traces {
		postTraces(t, fmt.Sprintf("http://127.0.0.1:%d/v1/traces", httpPort), f.td)
	}
	// The metrics are flushed every second: wait until the verdict counters hold every result
	// handoffcheck found, per case, step and outcome, before stopping (checkSampled stops the
	// collector).
	wantResults := 0
	for _, n := range results {
		wantResults += n
	}
	col.eventually(t, 3*resultTimeout, "verdict counters for every result in "+metricsOut, func() (bool, string) {
		got := verdictResults(t, metricsOut)
		total := 0
		for _, n := range got {
			total += n
		}
		return total >= wantResults, fmt.Sprintf("%d results counted, want %d", total, wantResults)
	})
	got := verdictResults(t, metricsOut)
	for key, n := range results {
		if got[key] != n {
			t.Errorf("handoff.assertion.results%v = %d, want %d (handoffcheck replay)", key, got[key], n)
		}
	}
	for key, n := range got {
		if _, ok := results[key]; !ok && n != 0 {
			t.Errorf("handoff.assertion.results%v = %d; handoffcheck found no such result", key, n)
		}
	}
	checkSampled(t, col, tracesOut, traces, verdicts, prob)

	checkVerdictLogs(t, logsOut, traces, verdicts)
	checkEmittedSeries(t, metricsOut)
}

// replayVerdicts judges the fixture with handoffcheck and the shipped connector's cases (the
// same engine and config): a trace's verdict is fail when a result failed, else error when
// one errored, else pass, and none without results. It requires both passing and failing
// traces.
// It also returns the number of results per (case, step, outcome).
func replayVerdicts(t *testing.T, dir string, cfg map[string]any, traces []fixtureTrace) (map[pcommon.TraceID]string, map[[3]string]int) {
	t.Helper()
	all := ptrace.NewTraces()
	for _, f := range traces {
		for i := range f.td.ResourceSpans().Len() {
			f.td.ResourceSpans().At(i).CopyTo(all.ResourceSpans().AppendEmpty())
		}
	}
	raw, err := (&ptrace.JSONMarshaler{}).MarshalTraces(all)
	if err != nil {
		t.Fatal(err)
	}
	spans := filepath.Join(dir, "fixture.json")
	if err := os.WriteFile(spans, raw, 0o600); err != nil {
		t.Fatal(err)
	}
	check := map[string]any{
		"receivers":  map[string]any{"otlp": map[string]any{"protocols": map[string]any{"http": map[string]any{"endpoint": "127.0.0.1:0"}}}},
		"processors": map[string]any{"handoff": section(t, cfg, "processors", "handoff")},
		"exporters":  map[string]any{"assertion": section(t, cfg, "connectors", "assertion")},
		"service": map[string]any{"pipelines": map[string]any{"traces": map[string]any{
			"receivers": []any{"otlp"}, "processors": []any{"handoff"}, "exporters": []any{"assertion"},
		}}},
	}
	rawCheck, err := yaml.Marshal(check)
	if err != nil {
		t.Fatal(err)
	}
	checkCfg := filepath.Join(dir, "check.yaml")
	if err := os.WriteFile(checkCfg, rawCheck, 0o600); err != nil {
		t.Fatal(err)
	}
	report := filepath.Join(dir, "replay.jsonl")
	code, stdout, stderr := runCheck(t, os.Environ(), "replay", "--config", checkCfg, "--json", report, spans)
	if code != 0 && code != 1 {
		t.Fatalf("handoffcheck replay: exit %d\n%s%s", code, stdout, stderr)
	}
	// A trace without results (no agent in it: the flat OpenLLMetry workflow capture) gets
	// no verdict.
	verdicts := map[pcommon.TraceID]string{}
	results := map[[3]string]int{}
	for _, r := range readResults(t, report) {
		results[[3]string{r.Case, r.Step, r.Outcome}]++
		id := traceIDOf(t, r.TraceID)
		if verdicts[id] == "" {
			verdicts[id] = "pass"
		}
		switch {
		case r.Outcome == "fail":
			verdicts[id] = "fail"
		case r.Outcome == "error" && verdicts[id] != "fail":
			verdicts[id] = "error"
		}
	}
	n := map[string]int{}
	for _, v := range verdicts {
		n[v]++
	}
	if n["pass"] == 0 || n["fail"]+n["error"] == 0 {
		t.Fatalf("the shipped cases give verdicts %v on the fixture; the test needs passing and failing traces", n)
	}
	t.Logf("verdicts of %d traces by handoffcheck: %v", len(traces), n)
	return verdicts, results
}

// verdictResults reads handoff.assertion.results per (case, step, outcome) from the metrics
// file: cumulative, so the latest flush that has a series holds its total.
func verdictResults(t *testing.T, path string) map[[3]string]int {
	t.Helper()
	latest := map[[3]string]int{}
	lines, err := completeLines(path)
	if err != nil {
		return latest
	}
	for _, md := range fileMetrics(t, lines) {
		// One flush: summed over resources (the connector may keep each trace's resource).
		flush := map[[3]string]int{}
		eachMetric(md, func(m pmetric.Metric) {
			if m.Name() != "handoff.assertion.results" || m.Type() != pmetric.MetricTypeSum {
				return
			}
			for _, dp := range m.Sum().DataPoints().All() {
				attr := func(k string) string { v, _ := dp.Attributes().Get(k); return v.AsString() }
				flush[[3]string{attr("case"), attr("step"), attr("outcome")}] += int(dp.IntValue()) + int(dp.DoubleValue())
			}
		})
		for k, v := range flush {
			latest[k] = v
		}
	}
	return latest
}

// checkVerdictLogs: every judged trace (one with a verdict) has gen_ai.evaluation.result
// records, each with the trace id and a span id; the others have none.
func checkVerdictLogs(t *testing.T, path string, traces []fixtureTrace, verdicts map[pcommon.TraceID]string) {
	t.Helper()
	lines, err := completeLines(path)
	if err != nil {
		t.Fatal(err)
	}
	byTrace := map[pcommon.TraceID]fixtureTrace{}
	for _, f := range traces {
		byTrace[f.traceID] = f
	}
	records := map[pcommon.TraceID]int{}
	for _, lr := range fileLogRecords(t, lines) {
		if lr.EventName() != "gen_ai.evaluation.result" {
			t.Errorf("log record with event name %q, want gen_ai.evaluation.result", lr.EventName())
			continue
		}
		if _, ok := byTrace[lr.TraceID()]; !ok {
			t.Errorf("evaluation record for unknown trace %s", lr.TraceID())
			continue
		}
		// The judged span is an agent span of the capture or a HANDOFF span the
		// processor added (not in the capture): any span id, never none.
		if lr.SpanID().IsEmpty() {
			t.Errorf("evaluation record of trace %s without a span id", lr.TraceID())
		}
		records[lr.TraceID()]++
	}
	var missing []string
	for id, f := range byTrace {
		switch {
		case verdicts[id] != "" && records[id] == 0:
			missing = append(missing, id.String()+" ("+f.capture+")")
		case verdicts[id] == "" && records[id] != 0:
			t.Errorf("trace %s (%s) has no results in handoffcheck but %d evaluation records", id, f.capture, records[id])
		}
	}
	sort.Strings(missing)
	if len(missing) > 0 {
		t.Errorf("%d traces without gen_ai.evaluation.result records: %s", len(missing), strings.Join(missing, ", "))
	}
}

// checkEmittedSeries: the metrics pipeline emits the series the dashboard and the alert rules
// read (Prometheus names as the Prometheus exporters and remote write derive them).
func checkEmittedSeries(t *testing.T, path string) {
	t.Helper()
	lines, err := completeLines(path)
	if err != nil {
		t.Fatal(err)
	}
	emitted := map[string]bool{}
	for _, md := range fileMetrics(t, lines) {
		for _, name := range prometheusSeriesNames(md) {
			emitted[name] = true
		}
	}
	// The failed-edge counter appears only when a delegated agent's run errored.
	optional := map[string]bool{"traces_service_graph_request_failed_total": true}
	for _, want := range connectorSeriesNames(t) {
		if !emitted[want] && !optional[want] {
			t.Errorf("series %s (read by the dashboard or the alerts) was not emitted; emitted: %v", want, sortedKeys(emitted))
		}
	}
}
