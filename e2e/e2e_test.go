// Package e2e runs the built otelcol-handoff distribution end to end: real agent-framework
// captures go in over OTLP/HTTP, and the test checks the assertion exporter's JSON-lines
// report, the spans forwarded to the file exporter (HANDOFF spans included) and the
// collector's own Prometheus metrics.
//
// The binary comes from `make build` (`make test` builds it first).
package e2e

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"sort"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"go.opentelemetry.io/collector/pdata/ptrace"
	"go.opentelemetry.io/collector/pdata/ptrace/ptraceotlp"
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

// ---- the collector process ----

type configParams struct {
	GRPCPort, HTTPPort, HealthPort, MetricsPort int
	ReportPath, SpansPath                       string
}

func collectorBinary(t *testing.T) string {
	t.Helper()
	bin, err := filepath.Abs(binaryPath)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := os.Stat(bin); err != nil {
		t.Fatalf("collector binary %s not found (%v): run `make build` first (`make test` builds it before testing)", bin, err)
	}
	return bin
}

// freePort returns a loopback TCP port that was free a moment ago.
// handedOut remembers every port freePort gave in this test binary: the kernel may offer a
// just-closed port again, and two components of one config must not share one.
var handedOut sync.Map

func freePort(t *testing.T) int {
	t.Helper()
	for range 100 {
		l, err := net.Listen("tcp", "127.0.0.1:0")
		if err != nil {
			t.Fatal(err)
		}
		port := l.Addr().(*net.TCPAddr).Port
		l.Close()
		if _, dup := handedOut.LoadOrStore(port, true); !dup {
			return port
		}
	}
	t.Fatal("no fresh loopback port after 100 tries")
	return 0
}

func writeConfig(t *testing.T, dir string, p configParams) string {
	t.Helper()
	return renderConfig(t, dir, "collector.yaml.tmpl", p)
}

// lockedBuffer collects the collector's output; the exec copier goroutines write it while
// the test reads it.
type lockedBuffer struct {
	mu  sync.Mutex
	buf bytes.Buffer
}

func (b *lockedBuffer) Write(p []byte) (int, error) {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.buf.Write(p)
}

func (b *lockedBuffer) String() string {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.buf.String()
}

type collector struct {
	cmd     *exec.Cmd
	out     *lockedBuffer
	done    chan struct{} // closed when the process has exited
	waitErr error         // set before done is closed
	cancel  context.CancelFunc
	stopped sync.Once
}

// startCollector runs bin with one or more configs; later ones are merged over earlier ones
// (maps merge, lists are replaced), as the collector merges repeated --config flags.
func startCollector(t *testing.T, bin string, cfgPaths ...string) *collector {
	t.Helper()
	return startCollectorArgs(t, bin, nil, cfgPaths...)
}

// startCollectorArgs is startCollector with more command-line flags (--feature-gates=...)
// before the configs.
func startCollectorArgs(t *testing.T, bin string, flags []string, cfgPaths ...string) *collector {
	t.Helper()
	timeout := processTimeout
	if d, ok := t.Deadline(); ok && time.Until(d) < timeout {
		timeout = time.Until(d)
	}
	ctx, cancel := context.WithTimeout(context.Background(), timeout)
	out := &lockedBuffer{}
	args := append(make([]string, 0, len(flags)+2*len(cfgPaths)), flags...)
	for _, p := range cfgPaths {
		args = append(args, "--config", p)
	}
	cmd := exec.CommandContext(ctx, bin, args...)
	cmd.Stdout, cmd.Stderr = out, out
	cmd.WaitDelay = 5 * time.Second
	if err := cmd.Start(); err != nil {
		cancel()
		t.Fatalf("start %s: %v", bin, err)
	}
	c := &collector{cmd: cmd, out: out, done: make(chan struct{}), cancel: cancel}
	go func() {
		c.waitErr = cmd.Wait()
		close(c.done)
	}()
	t.Cleanup(func() {
		c.terminate()
		if t.Failed() {
			t.Logf("collector output:\n%s", c.output())
		}
	})
	return c
}

func (c *collector) output() string { return c.out.String() }

func (c *collector) exited() bool {
	select {
	case <-c.done:
		return true
	default:
		return false
	}
}

// terminate sends SIGTERM, waits up to stopTimeout, then kills. It returns whether the
// process exited on SIGTERM by itself; it runs once.
func (c *collector) terminate() (graceful bool) {
	c.stopped.Do(func() {
		defer c.cancel()
		if c.exited() {
			return
		}
		if err := c.cmd.Process.Signal(syscall.SIGTERM); err != nil && !errors.Is(err, os.ErrProcessDone) {
			_ = c.cmd.Process.Kill()
		}
		select {
		case <-c.done:
			graceful = true
		case <-time.After(stopTimeout):
			_ = c.cmd.Process.Kill()
			<-c.done
		}
	})
	return graceful
}

// stop shuts the collector down with SIGTERM and requires a clean exit.
func (c *collector) stop(t *testing.T) {
	t.Helper()
	if c.exited() {
		t.Fatalf("collector exited before the test stopped it: %v", c.waitErr)
	}
	if !c.terminate() {
		t.Fatalf("collector did not exit within %s of SIGTERM; killed", stopTimeout)
	}
	if c.waitErr != nil {
		t.Fatalf("collector exited uncleanly after SIGTERM: %v", c.waitErr)
	}
}

// eventually polls cond until it reports done, the timeout passes or the collector exits.
// cond returns a description of the current state, for the failure message.
func (c *collector) eventually(t *testing.T, timeout time.Duration, what string, cond func() (bool, string)) {
	t.Helper()
	deadline := time.Now().Add(timeout)
	for {
		ok, state := cond()
		if ok {
			return
		}
		if c.exited() {
			t.Fatalf("collector exited (%v) while waiting for %s; last state: %s", c.waitErr, what, state)
		}
		if time.Now().After(deadline) {
			t.Fatalf("timed out after %s waiting for %s; last state: %s", timeout, what, state)
		}
		time.Sleep(pollInterval)
	}
}

func (c *collector) waitReady(t *testing.T, healthURL string) {
	t.Helper()
	client := &http.Client{Timeout: time.Second}
	c.eventually(t, startTimeout, "the health check at "+healthURL, func() (bool, string) {
		resp, err := client.Get(healthURL)
		if err != nil {
			return false, err.Error()
		}
		body, _ := io.ReadAll(resp.Body)
		resp.Body.Close()
		return resp.StatusCode == http.StatusOK, fmt.Sprintf("%s %s", resp.Status, body)
	})
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

func eachSpan(td ptrace.Traces, fn func(scope string, s ptrace.Span)) {
	for _, rs := range td.ResourceSpans().All() {
		for _, ss := range rs.ScopeSpans().All() {
			for _, s := range ss.Spans().All() {
				fn(ss.Scope().Name(), s)
			}
		}
	}
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

func postTraces(t *testing.T, url string, td ptrace.Traces) {
	t.Helper()
	body, err := ptraceotlp.NewExportRequestFromTraces(td).MarshalProto()
	if err != nil {
		t.Fatal(err)
	}
	client := &http.Client{Timeout: 10 * time.Second}
	resp, err := client.Post(url, "application/x-protobuf", bytes.NewReader(body))
	if err != nil {
		t.Fatalf("POST %s: %v", url, err)
	}
	defer resp.Body.Close()
	respBody, _ := io.ReadAll(resp.Body)
	if resp.StatusCode != http.StatusOK {
		t.Fatalf("POST %s: %s %s", url, resp.Status, respBody)
	}
	er := ptraceotlp.NewExportResponse()
	if err := er.UnmarshalProto(respBody); err != nil {
		t.Fatalf("POST %s: response: %v", url, err)
	}
	if ps := er.PartialSuccess(); ps.RejectedSpans() != 0 || ps.ErrorMessage() != "" {
		t.Fatalf("POST %s: partial success: %d spans rejected: %s", url, ps.RejectedSpans(), ps.ErrorMessage())
	}
}

// ---- reading the outputs ----

// completeLines returns the newline-terminated lines of a file that writers append to (a
// trailing partial line is left for the next poll).
func completeLines(path string) ([][]byte, error) {
	raw, err := os.ReadFile(path)
	if err != nil {
		return nil, err
	}
	if i := bytes.LastIndexByte(raw, '\n'); i >= 0 {
		raw = raw[:i+1]
	} else {
		raw = nil
	}
	var lines [][]byte
	sc := bufio.NewScanner(bytes.NewReader(raw))
	sc.Buffer(make([]byte, 0, 1<<16), 64<<20)
	for sc.Scan() {
		if line := bytes.TrimSpace(sc.Bytes()); len(line) > 0 {
			lines = append(lines, append([]byte(nil), line...))
		}
	}
	return lines, sc.Err()
}

// waitForResults polls the JSON-lines report until every trace has its results.
func (c *collector) waitForResults(t *testing.T, path string, want map[string]int) []result {
	t.Helper()
	var results []result
	c.eventually(t, resultTimeout, "assertion results in "+path, func() (bool, string) {
		lines, err := completeLines(path)
		if err != nil {
			return false, err.Error()
		}
		results = results[:0]
		perTrace := map[string]int{}
		for _, line := range lines {
			var r result
			dec := json.NewDecoder(bytes.NewReader(line))
			dec.DisallowUnknownFields()
			if err := dec.Decode(&r); err != nil {
				t.Fatalf("report line %q: %v", line, err)
			}
			results = append(results, r)
			perTrace[r.TraceID]++
		}
		for id, n := range want {
			if perTrace[id] < n {
				return false, fmt.Sprintf("results per trace %v, want %v", perTrace, want)
			}
		}
		return true, ""
	})
	return results
}

func countSpans(t *testing.T, lines [][]byte) int {
	t.Helper()
	n := 0
	for _, line := range lines {
		td, err := (&ptrace.JSONUnmarshaler{}).UnmarshalTraces(line)
		if err != nil {
			t.Fatalf("file exporter line %.200q: %v", line, err)
		}
		n += td.SpanCount()
	}
	return n
}

type forwardedSpan struct {
	scope, name      string
	spanID, parentID string
	attrs            map[string]any
}

func (s forwardedSpan) String() string { return s.spanID + " " + s.name }

// waitForSpans polls the file exporter's output until every trace has its spans.
func (c *collector) waitForSpans(t *testing.T, path string, want map[string]int) map[string][]forwardedSpan {
	t.Helper()
	var spans map[string][]forwardedSpan
	c.eventually(t, resultTimeout, "forwarded spans in "+path, func() (bool, string) {
		lines, err := completeLines(path)
		if err != nil {
			return false, err.Error()
		}
		spans = map[string][]forwardedSpan{}
		for _, line := range lines {
			td, err := (&ptrace.JSONUnmarshaler{}).UnmarshalTraces(line)
			if err != nil {
				t.Fatalf("file exporter line %.200q: %v", line, err)
			}
			eachSpan(td, func(scope string, s ptrace.Span) {
				spans[s.TraceID().String()] = append(spans[s.TraceID().String()], forwardedSpan{
					scope: scope, name: s.Name(),
					spanID: s.SpanID().String(), parentID: s.ParentSpanID().String(),
					attrs: s.Attributes().AsRaw(),
				})
			})
		}
		counts := map[string]int{}
		for id, n := range want {
			counts[id] = len(spans[id])
			if len(spans[id]) < n {
				return false, fmt.Sprintf("spans per trace %v, want %v", counts, want)
			}
		}
		return true, ""
	})
	return spans
}

// ---- Prometheus text format ----

type sample struct {
	name   string
	labels map[string]string
	value  float64
}

type metrics []sample

func scrape(t *testing.T, url string) metrics {
	t.Helper()
	client := &http.Client{Timeout: 5 * time.Second}
	resp, err := client.Get(url)
	if err != nil {
		t.Fatalf("scrape %s: %v", url, err)
	}
	defer resp.Body.Close()
	body, err := io.ReadAll(resp.Body)
	if err != nil || resp.StatusCode != http.StatusOK {
		t.Fatalf("scrape %s: %s %v", url, resp.Status, err)
	}
	m, err := parseProm(string(body))
	if err != nil {
		t.Fatalf("scrape %s: %v", url, err)
	}
	return m
}

// parseProm parses the Prometheus text exposition format (samples only).
func parseProm(text string) (metrics, error) {
	var out metrics
	for n, line := range strings.Split(text, "\n") {
		line = strings.TrimSpace(line)
		if line == "" || line[0] == '#' {
			continue
		}
		s := sample{labels: map[string]string{}}
		i := strings.IndexAny(line, "{ ")
		if i < 0 {
			return nil, fmt.Errorf("line %d: %q: no value", n+1, line)
		}
		s.name, line = line[:i], line[i:]
		if line[0] == '{' {
			rest, err := parseLabels(line[1:], s.labels)
			if err != nil {
				return nil, fmt.Errorf("line %d: %w", n+1, err)
			}
			line = rest
		}
		fields := strings.Fields(line)
		if len(fields) == 0 {
			return nil, fmt.Errorf("line %d: no value", n+1)
		}
		v, err := strconv.ParseFloat(fields[0], 64)
		if err != nil {
			return nil, fmt.Errorf("line %d: %w", n+1, err)
		}
		s.value = v
		out = append(out, s)
	}
	return out, nil
}

// parseLabels reads `name="value",...}` into labels and returns what follows the brace.
func parseLabels(s string, labels map[string]string) (string, error) {
	for {
		s = strings.TrimLeft(s, " ,")
		if s == "" {
			return "", errors.New("unterminated label set")
		}
		if s[0] == '}' {
			return s[1:], nil
		}
		eq := strings.IndexByte(s, '=')
		if eq < 0 || eq+1 >= len(s) || s[eq+1] != '"' {
			return "", fmt.Errorf("bad label in %q", s)
		}
		name := strings.TrimSpace(s[:eq])
		s = s[eq+2:]
		var val strings.Builder
		closed := false
		for i := 0; i < len(s); i++ {
			switch ch := s[i]; {
			case ch == '\\' && i+1 < len(s):
				i++
				if s[i] == 'n' {
					val.WriteByte('\n')
				} else {
					val.WriteByte(s[i])
				}
			case ch == '"':
				s, closed = s[i+1:], true
			default:
				val.WriteByte(ch)
			}
			if closed {
				break
			}
		}
		if !closed {
			return "", fmt.Errorf("unterminated value of label %s", name)
		}
		labels[name] = val.String()
	}
}

// find returns the samples of name whose labels include every given label.
func (m metrics) find(name string, labels map[string]string) []sample {
	var out []sample
	for _, s := range m {
		if s.name != name {
			continue
		}
		match := true
		for k, v := range labels {
			if s.labels[k] != v {
				match = false
				break
			}
		}
		if match {
			out = append(out, s)
		}
	}
	return out
}

func (m metrics) sum(name string, labels map[string]string) float64 {
	total := 0.0
	for _, s := range m.find(name, labels) {
		total += s.value
	}
	return total
}

// labelString renders a label matcher as {k="v",...}, for messages.
func labelString(labels map[string]string) string {
	if len(labels) == 0 {
		return ""
	}
	parts := make([]string, 0, len(labels))
	for k, v := range labels {
		parts = append(parts, fmt.Sprintf("%s=%q", k, v))
	}
	sort.Strings(parts)
	return "{" + strings.Join(parts, ",") + "}"
}

// names lists the distinct metric names with one of the prefixes, for failure messages.
func (m metrics) names(prefixes ...string) string {
	seen := map[string]bool{}
	var out []string
	for _, s := range m {
		for _, p := range prefixes {
			if strings.HasPrefix(s.name, p) && !seen[s.name] {
				seen[s.name] = true
				out = append(out, s.name)
			}
		}
	}
	sort.Strings(out)
	return strings.Join(out, "\n")
}
