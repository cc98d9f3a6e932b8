// Package e2e runs the built otelcol-handoff distribution end to end: real agent-framework
// captures go in over OTLP/HTTP, and the test checks the assertion exporter's JSON-lines
// report, the spans forwarded to the file exporter (HANDOFF spans included) and the
// collector's own Prometheus metrics.
//
// The binary comes from `make build` (`make test` builds it first).
package e2e

import (
	"strings"
	"testing"

	"go.opentelemetry.io/collector/pdata/ptrace"
)

func TestCollectorEndToEnd(t *testing.T) {
	bin := collectorBinary(t)
	adk := loadCapture(t, "google-adk-ok.json")
	strands := loadCapture(t, "strands-ok.json")

	dir := t.TempDir()
	params := newConfigParams(t, dir)
	cfgPath := writeConfig(t, dir, params)

	col := startReady(t, bin, params, cfgPath)
	tracesURL, metricsURL := params.tracesURL(), params.metricsURL()

	// Strands arrives in two batches; the first has no root span, so the processor must
	// hold it (a trace is released only quiet_period after its root, or at max_wait).
	first, second := splitTrace(strands.td)
	if first.SpanCount() == 0 || second.SpanCount() == 0 || first.SpanCount()+second.SpanCount() != len(strands.spanIDs) {
		t.Fatalf("bad split of %s: %d + %d spans of %d", strands.file, first.SpanCount(), second.SpanCount(), len(strands.spanIDs))
	}
	postTraces(t, tracesURL, first)
	held := scrape(t, metricsURL)
	if got := held.sum("otelcol_processor_handoff_spans_in_memory", nil); got != float64(first.SpanCount()) {
		t.Errorf("after the root-less first Strands batch: spans_in_memory = %v, want %d (the fragment must be held for its root)", got, first.SpanCount())
	}
	if got := held.sum("otelcol_processor_handoff_traces_in_memory", nil); got != 1 {
		t.Errorf("after the root-less first Strands batch: traces_in_memory = %v, want 1", got)
	}
	postTraces(t, tracesURL, adk.td)
	postTraces(t, tracesURL, second)

	// 1. The JSON-lines report: one result per (trace, case, step).
	results := col.waitForResults(t, params.ReportPath, map[string]int{adk.traceID: 6, strands.traceID: 6})
	checkResults(t, results, map[string]map[[2]string]wantResult{
		adk.traceID: expectedResults(adk, "2 agent invocations, 1 handoffs, depth 1, cycles none", 2, "0 times"),
		// The Strands swarm is a wrapper, not an agent: triage is the root, and the closing
		// structured-output call is a routing call, not a tool call.
		strands.traceID: expectedResults(strands, "2 agent invocations, 1 handoffs, depth 1, cycles none", 2, "0 times"),
	})

	// 2. The forwarded spans: every input span once, plus one HANDOFF span per handoff.
	waitForTransfers(t, col, params.SpansPath, adk, strands)

	// 3. The collector's own metrics.
	checkMetrics(t, scrape(t, metricsURL), len(adk.spanIDs)+len(strands.spanIDs))

	// 4. A clean shutdown that writes nothing more (nothing was left buffered), and the
	// verdicts in the log (log_verdicts: all).
	col.stop(t)
	if lines, err := completeLines(params.ReportPath); err != nil || len(lines) != len(results) {
		t.Errorf("after shutdown the report has %d results (%v), want the %d seen before", len(lines), err, len(results))
	}
	if lines, err := completeLines(params.SpansPath); err != nil {
		t.Errorf("after shutdown: %v", err)
	} else if n := countSpans(t, lines); n != len(adk.spanIDs)+len(strands.spanIDs)+2 {
		t.Errorf("after shutdown the file exporter holds %d spans, want %d", n, len(adk.spanIDs)+len(strands.spanIDs)+2)
	}
	logs := col.output()
	for _, want := range []string{
		"assertion fail: weather_specialist (span ",
		"assertion pass: topology ok: 2 agent invocations, 1 handoffs, depth 1, cycles none",
		adk.traceID, strands.traceID,
	} {
		if !strings.Contains(logs, want) {
			t.Errorf("collector log lacks %q", want)
		}
	}
}

// checkMetrics checks the collector's own metrics. Names are as the v0.161 collector
// exports them with its Prometheus reader defaults (without_type_suffix, without_units and
// without_scope_info all true): counters have no _total suffix, and series carry no
// otelcol.component.* labels (those are scope attributes, dropped with the scope info).
func checkMetrics(t *testing.T, m metrics, inputSpans int) {
	t.Helper()
	const evaluations = "otelcol_exporter_assertion_evaluations"
	if len(m.find(evaluations, nil)) == 0 {
		t.Fatalf("no %s samples; assertion/handoff series on the endpoint:\n%s", evaluations, m.names("otelcol_exporter_assertion", "otelcol_processor_handoff"))
	}
	// Two traces, each judged once by every step of both cases.
	want := map[[2]string]string{
		{passCase, "ASSERT_AGENT_TOPOLOGY#1"}: "pass",
		{passCase, "EXPECT_DELEGATION_TO#2"}:  "pass",
		{passCase, "EXPECT_AGENT_BUDGET#3"}:   "pass",
		{failCase, "ASSERT_AGENT_TOPOLOGY#1"}: "pass",
		{failCase, "EXPECT_AGENT_BUDGET#2"}:   "fail",
		{failCase, "EXPECT_DELEGATION_TO#3"}:  "fail",
	}
	for key, outcome := range want {
		for _, o := range []string{"pass", "fail", "error", "skipped"} {
			labels := map[string]string{"case": key[0], "step": key[1], "outcome": o}
			samples := m.find(evaluations, labels)
			if len(samples) != 1 {
				t.Errorf("%s%s: %d series, want 1 (zero-initialized)", evaluations, labelString(labels), len(samples))
				continue
			}
			wantN := 0.0
			if o == outcome {
				wantN = 2
			}
			if samples[0].value != wantN {
				t.Errorf("%s%s = %v, want %v", evaluations, labelString(labels), samples[0].value, wantN)
			}
		}
	}
	checkSums(t, m, []wantSeries{
		{"otelcol_processor_handoff_traces_released", map[string]string{"trigger": "root"}, 2},
		{"otelcol_processor_handoff_traces_released", map[string]string{"trigger": "timeout"}, 0},
		{"otelcol_processor_handoff_traces_released", map[string]string{"trigger": "evicted"}, 0},
		{"otelcol_processor_handoff_traces_released", map[string]string{"trigger": "too_large"}, 0},
		{"otelcol_processor_handoff_traces_released", map[string]string{"trigger": "shutdown"}, 0},
		{"otelcol_processor_handoff_handoffs_synthesized", nil, 2}, // one per capture (the Strands swarm is no agent)
		{"otelcol_processor_handoff_spans_released", nil, float64(inputSpans)},
		{"otelcol_processor_handoff_late_spans", nil, 0},
		{"otelcol_processor_handoff_spans_in_memory", nil, 0},
		{"otelcol_processor_handoff_traces_in_memory", nil, 0},
		{"otelcol_exporter_assertion_traces_evaluated", map[string]string{"complete": "true"}, 2},
		{"otelcol_exporter_assertion_traces_evaluated", map[string]string{"complete": "false"}, 0},
		{"otelcol_exporter_assertion_late_spans", nil, 0},
	})
}

// ---- sending ----

// splitTrace splits td in two: every other non-root span goes first; the root span and
// the rest follow.
func splitTrace(td ptrace.Traces) (first, second ptrace.Traces) {
	first, second = ptrace.NewTraces(), ptrace.NewTraces()
	td.CopyTo(first)
	td.CopyTo(second)
	inFirst := map[string]bool{}
	i := 0
	eachSpan(td, func(_ string, s ptrace.Span) {
		if !s.ParentSpanID().IsEmpty() && i%2 == 0 {
			inFirst[s.SpanID().String()] = true
		}
		i++
	})
	keep := func(td ptrace.Traces, want bool) {
		for _, rs := range td.ResourceSpans().All() {
			for _, ss := range rs.ScopeSpans().All() {
				ss.Spans().RemoveIf(func(s ptrace.Span) bool { return inFirst[s.SpanID().String()] != want })
			}
		}
	}
	keep(first, true)
	keep(second, false)
	return first, second
}
