// Package e2e runs the built otelcol-handoff distribution end to end: real agent-framework
// captures go in over OTLP/HTTP, and the test checks the assertion exporter's JSON-lines
// report, the spans forwarded to the file exporter (HANDOFF spans included) and the
// collector's own Prometheus metrics.
//
// The binary comes from `make build` (`make test` builds it first).
package e2e

import (
	"fmt"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"testing"
	"time"

	"go.opentelemetry.io/collector/pdata/ptrace"
)

const (
	// binaryPath is the collector `make build` produces, relative to this directory.
	binaryPath = "../_build/otelcol-handoff"
	tracesDir  = "../testdata/traces"

	// handoffScope is the instrumentation scope of the HANDOFF spans the processor adds.
	handoffScope = "github.com/otelcol-handoff/otelcol-handoff/handoffprocessor"

	// Case names of testdata/collector.yaml.tmpl.
	passCase = "weather_delegation"
	failCase = "weather_overrun"

	startTimeout   = 60 * time.Second // collector start (health check answers)
	resultTimeout  = 20 * time.Second // traces judged and written (quiet_period is 200ms)
	stopTimeout    = 15 * time.Second // SIGTERM to exit, before Kill
	processTimeout = 2 * time.Minute  // hard cap on the collector process
	pollInterval   = 50 * time.Millisecond
)

// capture is one OTLP/JSON capture of testdata/traces, holding exactly one trace.
type capture struct {
	file    string
	td      ptrace.Traces
	traceID string
	spanIDs []string
	// agentSpans maps an agent name to the span id of its invoke_agent/invoke_swarm span.
	agentSpans map[string]string
}

// wantHandoff is one HANDOFF span the processor must add.
type wantHandoff struct {
	source, target string
	detection      string
}

// wantResult is the expected verdict of one (case, step) on one trace.
type wantResult struct {
	action   string
	outcome  string
	expected string
	actual   string   // exact
	message  []string // substrings
}

// result mirrors rules.Result, the JSON-lines report format, decoded strictly.
type result struct {
	TraceID  string   `json:"trace_id"`
	Case     string   `json:"case"`
	Step     string   `json:"step"`
	Action   string   `json:"action"`
	Outcome  string   `json:"outcome"`
	Expected string   `json:"expected"`
	Actual   string   `json:"actual"`
	Message  string   `json:"message"`
	Spans    []string `json:"spans,omitempty"`
	Complete bool     `json:"trace_complete"`
	// Cluster and Signature name a failure's cluster (internal/cluster).
	Cluster   string `json:"cluster,omitempty"`
	Signature string `json:"signature,omitempty"`
	// Timestamp is the trace's start (RFC 3339), the first field of every line.
	Timestamp string `json:"timestamp"`
}

func TestCollectorEndToEnd(t *testing.T) {
	bin := collectorBinary(t)
	adk := loadCapture(t, "google-adk-ok.json")
	strands := loadCapture(t, "strands-ok.json")

	dir := t.TempDir()
	params := configParams{
		GRPCPort:    freePort(t),
		HTTPPort:    freePort(t),
		HealthPort:  freePort(t),
		MetricsPort: freePort(t),
		ReportPath:  filepath.Join(dir, "verdicts.jsonl"),
		SpansPath:   filepath.Join(dir, "spans.jsonl"),
	}
	cfgPath := writeConfig(t, dir, params)

	col := startCollector(t, bin, cfgPath)
	healthURL := fmt.Sprintf("http://127.0.0.1:%d/", params.HealthPort)
	tracesURL := fmt.Sprintf("http://127.0.0.1:%d/v1/traces", params.HTTPPort)
	metricsURL := fmt.Sprintf("http://127.0.0.1:%d/metrics", params.MetricsPort)
	col.waitReady(t, healthURL)

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
	spans := col.waitForSpans(t, params.SpansPath, map[string]int{
		adk.traceID:     len(adk.spanIDs) + 1,
		strands.traceID: len(strands.spanIDs) + 1,
	})
	checkForwarded(t, spans, adk, []wantHandoff{
		{source: "triage", target: "weather_specialist", detection: "transfer_tool"},
	})
	checkForwarded(t, spans, strands, []wantHandoff{
		{source: "triage", target: "weather_specialist", detection: "transfer_tool"},
	})

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

// expectedResults is what both cases must conclude on one of the two captures: the
// specialist runs once, uses 221 tokens (40+8 + 60+8 + 90+15 in both frameworks) and makes
// toolCalls tool calls; nobody hands back to triage.
func expectedResults(c capture, topology string, toolCalls int, delegationActual string) map[[2]string]wantResult {
	specialist := c.agentSpans["weather_specialist"]
	topo := wantResult{
		action: "ASSERT_AGENT_TOPOLOGY", outcome: "pass",
		expected: "depth <= 3, no delegation cycles, at least one agent",
		actual:   topology,
		message:  []string{"topology ok: " + topology},
	}
	return map[[2]string]wantResult{
		{passCase, "ASSERT_AGENT_TOPOLOGY#1"}: topo,
		{passCase, "EXPECT_DELEGATION_TO#2"}: {
			action: "EXPECT_DELEGATION_TO", outcome: "pass",
			expected: "triage delegates to weather_specialist at least 1 times",
			actual:   "1 times",
			message:  []string{"triage delegated to weather_specialist 1 times"},
		},
		{passCase, "EXPECT_AGENT_BUDGET#3"}: {
			action: "EXPECT_AGENT_BUDGET", outcome: "pass",
			expected: "weather_specialist subtree: tokens <= 8000, tool calls <= 6",
			actual:   "", // duration depends on the capture; checked by prefix below
			message:  []string{"weather_specialist within budget: tokens 221, ", fmt.Sprintf("tool calls %d", toolCalls)},
		},
		{failCase, "ASSERT_AGENT_TOPOLOGY#1"}: topo,
		{failCase, "EXPECT_AGENT_BUDGET#2"}: {
			action: "EXPECT_AGENT_BUDGET", outcome: "fail",
			expected: "weather_specialist subtree: tokens <= 100",
			actual:   "",
			message:  []string{fmt.Sprintf("weather_specialist (span %s) used 221 tokens, over maxTokens 100", specialist)},
		},
		{failCase, "EXPECT_DELEGATION_TO#3"}: {
			action: "EXPECT_DELEGATION_TO", outcome: "fail",
			expected: "weather_specialist delegates to triage at least 1 times",
			actual:   delegationActual,
			message:  []string{"expected weather_specialist delegating to triage at least 1 times, saw " + delegationActual},
		},
	}
}

func checkResults(t *testing.T, got []result, want map[string]map[[2]string]wantResult) {
	t.Helper()
	seen := map[string]map[[2]string]bool{}
	for _, r := range got {
		cases, ok := want[r.TraceID]
		if !ok {
			t.Errorf("result for an unexpected trace: %+v", r)
			continue
		}
		if ts, err := time.Parse(time.RFC3339Nano, r.Timestamp); err != nil || ts.Year() < 2024 {
			t.Errorf("trace %s: timestamp %q is not the trace's start (RFC 3339): %v", r.TraceID, r.Timestamp, err)
		}
		key := [2]string{r.Case, r.Step}
		w, ok := cases[key]
		if !ok {
			t.Errorf("trace %s: unexpected result %+v", r.TraceID, r)
			continue
		}
		if seen[r.TraceID] == nil {
			seen[r.TraceID] = map[[2]string]bool{}
		}
		if seen[r.TraceID][key] {
			t.Errorf("trace %s: %s/%s judged twice", r.TraceID, r.Case, r.Step)
		}
		seen[r.TraceID][key] = true
		at := fmt.Sprintf("trace %s %s/%s", r.TraceID, r.Case, r.Step)
		if r.Outcome != w.outcome {
			t.Errorf("%s: outcome %q, want %q (expected %q, actual %q, message %q)", at, r.Outcome, w.outcome, r.Expected, r.Actual, r.Message)
		}
		if r.Action != w.action {
			t.Errorf("%s: action %q, want %q", at, r.Action, w.action)
		}
		if !r.Complete {
			t.Errorf("%s: trace_complete false; the trace was released on its root and must be complete", at)
		}
		if r.Expected != w.expected {
			t.Errorf("%s: expected %q, want %q", at, r.Expected, w.expected)
		}
		if w.actual != "" && r.Actual != w.actual {
			t.Errorf("%s: actual %q, want %q", at, r.Actual, w.actual)
		}
		if w.action == "EXPECT_AGENT_BUDGET" && !strings.HasPrefix(r.Actual, "tokens 221, duration ") {
			t.Errorf("%s: actual %q, want it to start with %q", at, r.Actual, "tokens 221, duration ")
		}
		for _, sub := range w.message {
			if !strings.Contains(r.Message, sub) {
				t.Errorf("%s: message %q does not contain %q", at, r.Message, sub)
			}
		}
		if r.Outcome == "fail" {
			// A failing verdict must name what was expected and what was seen.
			switch w.action {
			case "EXPECT_AGENT_BUDGET":
				for _, sub := range []string{"maxTokens 100", "221 tokens"} {
					if !strings.Contains(r.Message, sub) {
						t.Errorf("%s: failure message %q does not name %q", at, r.Message, sub)
					}
				}
			case "EXPECT_DELEGATION_TO":
				for _, sub := range []string{"weather_specialist", "triage", "at least 1", "saw 0 times"} {
					if !strings.Contains(r.Message, sub) {
						t.Errorf("%s: failure message %q does not name %q", at, r.Message, sub)
					}
				}
			}
		}
	}
	for trace, cases := range want {
		for key := range cases {
			if !seen[trace][key] {
				t.Errorf("trace %s: no result for %s/%s", trace, key[0], key[1])
			}
		}
	}
}

// checkForwarded checks the spans the file exporter received for one capture.
func checkForwarded(t *testing.T, spans map[string][]forwardedSpan, c capture, want []wantHandoff) {
	t.Helper()
	got := spans[c.traceID]
	count := map[string]int{}
	var handoffs []forwardedSpan
	for _, s := range got {
		count[s.spanID]++
		if s.scope == handoffScope {
			handoffs = append(handoffs, s)
		}
		for _, key := range []string{"handoff.late_span", "handoff.trace.complete", "handoff.trace.release_reason"} {
			if v, ok := s.attrs[key]; ok {
				t.Errorf("%s: span %s %q carries %s=%v; the trace was complete and on time", c.file, s.spanID, s.name, key, v)
			}
		}
	}
	for _, id := range c.spanIDs {
		if count[id] != 1 {
			t.Errorf("%s: input span %s forwarded %d times, want once", c.file, id, count[id])
		}
	}
	if len(got) != len(c.spanIDs)+len(want) {
		t.Errorf("%s: %d spans forwarded, want %d input spans + %d HANDOFF spans", c.file, len(got), len(c.spanIDs), len(want))
	}
	if len(handoffs) != len(want) {
		t.Errorf("%s: %d HANDOFF spans (scope %s), want %d: %v", c.file, len(handoffs), handoffScope, len(want), handoffs)
	}
	sort.Slice(handoffs, func(i, j int) bool {
		return fmt.Sprint(handoffs[i].attrs["handoff.target"]) < fmt.Sprint(handoffs[j].attrs["handoff.target"])
	})
	sort.Slice(want, func(i, j int) bool { return want[i].target < want[j].target })
	for i := 0; i < len(want) && i < len(handoffs); i++ {
		h, w := handoffs[i], want[i]
		at := fmt.Sprintf("%s: HANDOFF span %s %q", c.file, h.spanID, h.name)
		for key, val := range map[string]string{
			"handoff.source":         w.source,
			"handoff.target":         w.target,
			"handoff.detection":      w.detection,
			"handoff.source.span_id": c.agentSpans[w.source],
			"handoff.target.span_id": c.agentSpans[w.target],
			"fi.span.kind":           "HANDOFF",
		} {
			if got := h.attrs[key]; got != val {
				t.Errorf("%s: %s = %v, want %q", at, key, got, val)
			}
		}
		if wantName := "handoff " + w.source + " -> " + w.target; h.name != wantName {
			t.Errorf("%s: name %q, want %q", at, h.name, wantName)
		}
		if h.parentID != c.agentSpans[w.source] {
			t.Errorf("%s: parent %s, want the sender's agent span %s", at, h.parentID, c.agentSpans[w.source])
		}
		if count[h.spanID] != 1 {
			t.Errorf("%s: forwarded %d times", at, count[h.spanID])
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
	for _, c := range []struct {
		name   string
		labels map[string]string
		want   float64
	}{
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
	} {
		if len(m.find(c.name, c.labels)) == 0 {
			t.Errorf("no %s%s samples; assertion/handoff series on the endpoint:\n%s", c.name, labelString(c.labels), m.names("otelcol_exporter_assertion", "otelcol_processor_handoff"))
			continue
		}
		if got := m.sum(c.name, c.labels); got != c.want {
			t.Errorf("%s%s = %v, want %v", c.name, labelString(c.labels), got, c.want)
		}
	}
}

// ---- sending ----

func loadCapture(t *testing.T, name string) capture {
	t.Helper()
	path := filepath.Join(tracesDir, name)
	raw, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	td, err := (&ptrace.JSONUnmarshaler{}).UnmarshalTraces(raw)
	if err != nil {
		t.Fatalf("%s: %v", path, err)
	}
	c := capture{file: name, td: td, agentSpans: map[string]string{}}
	traces := map[string]bool{}
	eachSpan(td, func(scope string, s ptrace.Span) {
		traces[s.TraceID().String()] = true
		c.spanIDs = append(c.spanIDs, s.SpanID().String())
		op, _ := s.Attributes().Get("gen_ai.operation.name")
		agent, ok := s.Attributes().Get("gen_ai.agent.name")
		if op.Str() == "invoke_swarm" {
			// A Strands swarm is named by its id (its gen_ai.agent.name is always "swarm").
			agent, ok = s.Attributes().Get("gen_ai.agent.id")
		}
		if ok && (op.Str() == "invoke_agent" || op.Str() == "invoke_swarm") {
			c.agentSpans[agent.Str()] = s.SpanID().String()
		}
	})
	if len(traces) != 1 || len(c.spanIDs) == 0 {
		t.Fatalf("%s: want spans of exactly one trace, got %d spans of %d traces", path, len(c.spanIDs), len(traces))
	}
	for id := range traces {
		c.traceID = id
	}
	return c
}

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
