package e2e

import (
	"fmt"
	"net/http"
	"path/filepath"
	"regexp"
	"sort"
	"strings"
	"testing"
)

// pipelineTelemetryGate is the collector's (v0.161.0) alpha feature gate that injects the
// component's identity (otelcol.component.id, otelcol.component.kind, otelcol.signal,
// otelcol.signal.output, otelcol.pipeline.id) into its meters as instrumentation scope
// attributes (go.opentelemetry.io/collector/service@v0.161.0/internal/metadata,
// TelemetryNewPipelineTelemetryFeatureGate).
const pipelineTelemetryGate = "telemetry.newPipelineTelemetry"

// gateParams fills testdata/telemetry_gate.yaml.tmpl.
type gateParams struct {
	HTTPPort, HealthPort, MetricsPort int
	SpansPath, LogsPath, MetricsPath  string
	// WithoutScopeInfo is the Prometheus reader's without_scope_info; empty = not set (the
	// collector's default, true).
	WithoutScopeInfo string
}

// engine names one engine's series on the Prometheus endpoint: its identifying label.
type engine struct{ label, id string }

var (
	engineA         = engine{"exporter", "assertion/a"}
	engineB         = engine{"exporter", "assertion/b"}
	engineConnector = engine{"connector", "assertion"}
)

// gateRun is one collector of the telemetry test, with the two captures evaluated.
type gateRun struct {
	col        *collector
	metricsURL string
	// spansIn is the number of spans each assertion exporter consumes (the captures' spans
	// plus one HANDOFF span each).
	spansIn int
}

// startGateRun starts the built collector on testdata/telemetry_gate.yaml.tmpl, with the
// pipeline telemetry gate when gate is set, posts the Google ADK and the Strands captures
// and waits for the connector's four evaluation records (2 traces x 2 steps).
func startGateRun(t *testing.T, gate bool, withoutScopeInfo string) gateRun {
	t.Helper()
	bin := collectorBinary(t)
	adk := loadCapture(t, "google-adk-ok.json")
	strands := loadCapture(t, "strands-ok.json")
	dir := t.TempDir()
	p := gateParams{
		HTTPPort: freePort(t), HealthPort: freePort(t), MetricsPort: freePort(t),
		SpansPath:        filepath.Join(dir, "spans.jsonl"),
		LogsPath:         filepath.Join(dir, "logs.jsonl"),
		MetricsPath:      filepath.Join(dir, "metrics.jsonl"),
		WithoutScopeInfo: withoutScopeInfo,
	}
	var flags []string
	if gate {
		flags = []string{"--feature-gates=" + pipelineTelemetryGate}
	}
	col := startCollectorArgs(t, bin, flags, renderConfig(t, dir, "telemetry_gate.yaml.tmpl", p))
	col.waitReady(t, fmt.Sprintf("http://127.0.0.1:%d/", p.HealthPort))
	tracesURL := fmt.Sprintf("http://127.0.0.1:%d/v1/traces", p.HTTPPort)
	postTraces(t, tracesURL, adk.td)
	postTraces(t, tracesURL, strands.td)
	col.waitForEvalRecords(t, p.LogsPath, 4)
	return gateRun{
		col:        col,
		metricsURL: fmt.Sprintf("http://127.0.0.1:%d/metrics", p.MetricsPort),
		spansIn:    len(adk.spanIDs) + len(strands.spanIDs) + 2,
	}
}

// evaluatedScrape polls the endpoint until it answers 200 and every engine has evaluated
// both traces (otelcol_exporter_assertion_traces_evaluated{complete="true"} = 2), and
// returns that scrape. A 500 fails at once with the endpoint's error text.
func (r gateRun) evaluatedScrape(t *testing.T) metrics {
	t.Helper()
	var m metrics
	r.col.eventually(t, resultTimeout, "both traces evaluated by every engine at "+r.metricsURL, func() (bool, string) {
		code, body, err := get(r.metricsURL)
		if err != nil {
			return false, err.Error()
		}
		if code != http.StatusOK {
			t.Fatalf("scrape %s: HTTP %d:\n%s", r.metricsURL, code, body)
		}
		if m, err = parseProm(body); err != nil {
			t.Fatalf("scrape %s: %v", r.metricsURL, err)
		}
		var state []string
		done := true
		for _, e := range []engine{engineA, engineB, engineConnector} {
			n := m.sum("otelcol_exporter_assertion_traces_evaluated", map[string]string{e.label: e.id, "complete": "true"})
			done = done && n == 2
			state = append(state, fmt.Sprintf("%s=%s: %v", e.label, e.id, n))
		}
		return done, strings.Join(state, ", ")
	})
	return m
}

// ownSeries are the samples of the assertion exporter's and connector's metrics.
func ownSeries(m metrics) metrics {
	var out metrics
	for _, s := range m {
		if strings.HasPrefix(s.name, "otelcol_exporter_assertion_") || strings.HasPrefix(s.name, "otelcol_connector_assertion_") {
			out = append(out, s)
		}
	}
	return out
}

// seriesKey renders a sample's name and labels, the identity of its series.
func seriesKey(s sample, drop ...string) string {
	labels := map[string]string{}
	for k, v := range s.labels {
		labels[k] = v
	}
	for _, k := range drop {
		delete(labels, k)
	}
	return s.name + labelString(labels)
}

// checkDistinct: every own series names exactly one engine, no series appears twice, and
// assertion/a and assertion/b have the same series but for their component id (the exporter
// label, and the gate's scope label when shown; the same case and step names: without the
// id they would be one series).
func checkDistinct(t *testing.T, m metrics) {
	t.Helper()
	seen := map[string]bool{}
	perExporter := map[string][]string{}
	for _, s := range ownSeries(m) {
		key := seriesKey(s)
		if seen[key] {
			t.Errorf("series %s appears twice", key)
		}
		seen[key] = true
		_, exp := s.labels["exporter"]
		_, conn := s.labels["connector"]
		if exp == conn {
			t.Errorf("series %s: want exactly one of the labels exporter and connector", key)
		}
		// A failures series appears with its first failure: b, whose budget passes, has none
		// (checkVerdicts counts them).
		if exp && s.name != "otelcol_exporter_assertion_failures" {
			perExporter[s.labels["exporter"]] = append(perExporter[s.labels["exporter"]], seriesKey(s, "exporter", scopeLabel("otelcol.component.id")))
		}
	}
	a, b := perExporter[engineA.id], perExporter[engineB.id]
	sort.Strings(a)
	sort.Strings(b)
	if len(a) < 10 || strings.Join(a, "\n") != strings.Join(b, "\n") {
		t.Errorf("assertion/a and assertion/b must have the same %d series but for exporter; a:\n%s\nb:\n%s", len(a), strings.Join(a, "\n"), strings.Join(b, "\n"))
	}
	if len(perExporter) != 2 {
		t.Errorf("series of exporters %v, want assertion/a and assertion/b", perExporter)
	}
}

// checkVerdicts: the verdict counts of each engine on the two traces. The budget (maxTokens
// 100 on a and on the connector, 8000 on b) fails on a and the connector and passes on b,
// under the same case and step names; every other outcome is zero-initialized.
func checkVerdicts(t *testing.T, m metrics) {
	t.Helper()
	want := map[engine]map[string]float64{
		engineA:         {"ASSERT_AGENT_TOPOLOGY#1 pass": 2, "EXPECT_AGENT_BUDGET#2 fail": 2},
		engineB:         {"ASSERT_AGENT_TOPOLOGY#1 pass": 2, "EXPECT_AGENT_BUDGET#2 pass": 2},
		engineConnector: {"ASSERT_AGENT_TOPOLOGY#1 pass": 2, "EXPECT_AGENT_BUDGET#2 fail": 2},
	}
	for e, counts := range want {
		for _, step := range []string{"ASSERT_AGENT_TOPOLOGY#1", "EXPECT_AGENT_BUDGET#2"} {
			for _, outcome := range []string{"pass", "fail", "error", "skipped"} {
				sel := map[string]string{e.label: e.id, "case": "weather_delegation", "step": step, "outcome": outcome}
				got := m.find("otelcol_exporter_assertion_evaluations", sel)
				if len(got) != 1 {
					t.Errorf("otelcol_exporter_assertion_evaluations%s: %d series, want 1", labelString(sel), len(got))
					continue
				}
				if w := counts[step+" "+outcome]; got[0].value != w {
					t.Errorf("otelcol_exporter_assertion_evaluations%s = %v, want %v", labelString(sel), got[0].value, w)
				}
			}
		}
		sel := map[string]string{e.label: e.id, "complete": "false"}
		if got := m.sum("otelcol_exporter_assertion_traces_evaluated", sel); got != 0 {
			t.Errorf("otelcol_exporter_assertion_traces_evaluated%s = %v, want 0", labelString(sel), got)
		}
	}
	// The failures by cluster: the budget's on a and the connector, none on b.
	for e, want := range map[engine]float64{engineA: 2, engineB: 0, engineConnector: 2} {
		sel := map[string]string{e.label: e.id, "case": "weather_delegation", "step": "EXPECT_AGENT_BUDGET#2", "cluster": "budget_blowout"}
		if got := m.sum("otelcol_exporter_assertion_failures", sel); got != want {
			t.Errorf("otelcol_exporter_assertion_failures%s = %v, want %v", labelString(sel), got, want)
		}
		if got := m.sum("otelcol_exporter_assertion_failures", map[string]string{e.label: e.id}); got != want {
			t.Errorf("otelcol_exporter_assertion_failures{%s=%q} = %v, want %v (the budget's alone)", e.label, e.id, got, want)
		}
	}
	// The connector's own metrics: two evaluation records per trace, sent now (no judge).
	sel := map[string]string{"connector": "assertion", "phase": "now"}
	if got := m.sum("otelcol_connector_assertion_log_records", sel); got != 4 {
		t.Errorf("otelcol_connector_assertion_log_records%s = %v, want 4", labelString(sel), got)
	}
}

// scopeLabel is the Prometheus label of an instrumentation scope attribute (the collector's
// Prometheus reader with without_scope_info: false).
func scopeLabel(attr string) string {
	return "otel_scope_" + strings.ReplaceAll(attr, ".", "_")
}

// TestSelfTelemetryTwoExportersAndGate: two assertion exporters with the same case and
// step names and an assertion connector in one collector (the built binary, real captures
// over OTLP), scraped on the internal telemetry's Prometheus endpoint, with the
// telemetry.newPipelineTelemetry gate off and on. Every engine's series are its own
// (exporter / connector = the component id) and hold its verdict counts.
func TestSelfTelemetryTwoExportersAndGate(t *testing.T) {
	t.Run("gate off", func(t *testing.T) {
		r := startGateRun(t, false, "")
		m := r.evaluatedScrape(t)
		checkDistinct(t, m)
		checkVerdicts(t, m)
		// The collector's default reader (without_scope_info: true) adds no label: the
		// component id attribute alone keeps the engines apart.
		for _, s := range m.find("otelcol_exporter_assertion_evaluations", nil) {
			var keys []string
			for k := range s.labels {
				keys = append(keys, k)
			}
			sort.Strings(keys)
			if got := strings.Join(keys, " "); got != "case exporter outcome step" && got != "case connector outcome step" {
				t.Errorf("%s: labels %s, want case, step, outcome and exporter or connector", seriesKey(s), got)
			}
		}
		r.col.stop(t)
	})

	t.Run("gate on, scope info", func(t *testing.T) {
		r := startGateRun(t, true, "false")
		m := r.evaluatedScrape(t)
		checkDistinct(t, m)
		checkVerdicts(t, m)
		// The injected scope attributes agree with the component id attribute; the
		// connector's shared engine carries no output signal (one engine serves its traces,
		// logs and metrics outputs).
		for _, s := range ownSeries(m) {
			id := s.labels["exporter"]
			kind := "exporter"
			if c, ok := s.labels["connector"]; ok {
				id, kind = c, "connector"
			}
			if got := s.labels[scopeLabel("otelcol.component.id")]; got != id {
				t.Errorf("%s: %s = %q, want %q", seriesKey(s), scopeLabel("otelcol.component.id"), got, id)
			}
			if got := s.labels[scopeLabel("otelcol.component.kind")]; got != kind {
				t.Errorf("%s: %s = %q, want %q", seriesKey(s), scopeLabel("otelcol.component.kind"), got, kind)
			}
			if got, ok := s.labels[scopeLabel("otelcol.signal.output")]; ok {
				t.Errorf("%s: %s = %q, want none (the connector's engine serves every output)", seriesKey(s), scopeLabel("otelcol.signal.output"), got)
			}
		}
		// The collector's own per-component series, which the gate adds, are apart too.
		for _, id := range []string{engineA.id, engineB.id} {
			sel := map[string]string{scopeLabel("otelcol.component.id"): id, "otelcol_component_outcome": "success"}
			if got := m.sum("otelcol_exporter_consumed_items", sel); got != float64(r.spansIn) {
				t.Errorf("otelcol_exporter_consumed_items%s = %v, want %d spans", labelString(sel), got, r.spansIn)
			}
		}
		r.col.stop(t)
	})

	// With the collector's default Prometheus reader (without_scope_info: true), the gate's
	// scope attributes are dropped at the endpoint, so the collector's own per-component
	// series (otelcol.exporter.consumed.items of the five exporters, and
	// otelcol.connector.consumed.items of the connector's three outputs) become duplicates
	// and the endpoint answers 500 (collector v0.161.0). None of the duplicates is the
	// assertion exporter's or connector's: their series carry the component id themselves.
	t.Run("gate on, default reader", func(t *testing.T) {
		r := startGateRun(t, true, "")
		dup := regexp.MustCompile(`(?m)^\* collected metric "([^"]+)" .* was collected before with the same name and label values$`)
		want := map[string]int{"otelcol.exporter.consumed.items": 4, "otelcol.connector.consumed.items": 2}
		var body string
		r.col.eventually(t, resultTimeout, "the endpoint's 500 listing every duplicate", func() (bool, string) {
			code, b, err := get(r.metricsURL)
			if err != nil {
				return false, err.Error()
			}
			body = b
			if code != http.StatusInternalServerError {
				return false, fmt.Sprintf("HTTP %d", code)
			}
			got := map[string]int{}
			for _, d := range dup.FindAllStringSubmatch(b, -1) {
				got[d[1]]++
			}
			return fmt.Sprint(got) == fmt.Sprint(want), fmt.Sprintf("HTTP %d, duplicates %v", code, got)
		})
		for _, line := range strings.Split(body, "\n") {
			if strings.HasPrefix(line, "* ") && !dup.MatchString(line) {
				t.Errorf("endpoint error other than the collector's duplicates: %s", line)
			}
			if strings.Contains(line, "assertion") {
				t.Errorf("an assertion series is a duplicate: %s", line)
			}
		}
		r.col.stop(t)
	})
}
