// The harness: starting and stopping the collector, free ports, posting OTLP, reading the
// JSON-lines outputs and scraping Prometheus metrics. The other files hold the scenarios.
package e2e

import (
	"bufio"
	"bytes"
	"context"
	"crypto/sha256"
	"encoding/json"
	"errors"
	"fmt"
	"hash/fnv"
	"io"
	"math"
	"math/big"
	"math/rand/v2"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"sort"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"syscall"
	"testing"
	"text/template"
	"time"

	promtranslator "github.com/open-telemetry/opentelemetry-collector-contrib/pkg/translator/prometheus"
	dto "github.com/prometheus/client_model/go"
	"github.com/prometheus/common/expfmt"
	"github.com/prometheus/common/model"
	"go.opentelemetry.io/collector/pdata/pcommon"
	"go.opentelemetry.io/collector/pdata/plog"
	"go.opentelemetry.io/collector/pdata/pmetric"
	"go.opentelemetry.io/collector/pdata/ptrace"
	"go.opentelemetry.io/collector/pdata/ptrace/ptraceotlp"
	"go.yaml.in/yaml/v3"

	"github.com/otelcol-handoff/otelcol-handoff/internal/agentgraph"
	"github.com/otelcol-handoff/otelcol-handoff/internal/freeport"
	"github.com/otelcol-handoff/otelcol-handoff/internal/procstat"
)

// renderConfig fills the collector config template testdata/<tmplName> with p and writes it
// to dir/config.yaml.
func renderConfig(t *testing.T, dir, tmplName string, p any) string {
	t.Helper()
	tmpl, err := template.ParseFiles(filepath.Join("testdata", tmplName))
	if err != nil {
		t.Fatal(err)
	}
	var buf bytes.Buffer
	if err := tmpl.Execute(&buf, p); err != nil {
		t.Fatal(err)
	}
	path := filepath.Join(dir, "config.yaml")
	if err := os.WriteFile(path, buf.Bytes(), 0o600); err != nil {
		t.Fatal(err)
	}
	return path
}

// forEachAssertionConfigLogs calls check with the service.telemetry.logs section of every
// shipped config (config/*.yaml) that has an assertion exporter or connector.
func forEachAssertionConfigLogs(t *testing.T, check func(path string, logs *yaml.Node)) {
	t.Helper()
	configs, err := filepath.Glob(filepath.Join("..", "config", "*.yaml"))
	if err != nil || len(configs) == 0 {
		t.Fatalf("no configs: %v", err)
	}
	for _, path := range configs {
		raw, err := os.ReadFile(path)
		if err != nil {
			t.Fatal(err)
		}
		var cfg struct {
			Exporters  map[string]any `yaml:"exporters"`
			Connectors map[string]any `yaml:"connectors"`
			Service    struct {
				Telemetry struct {
					Logs yaml.Node `yaml:"logs"`
				} `yaml:"telemetry"`
			} `yaml:"service"`
		}
		if err := yaml.Unmarshal(raw, &cfg); err != nil {
			t.Fatalf("%s: %v", path, err)
		}
		uses := false
		for id := range cfg.Exporters {
			uses = uses || id == "assertion" || strings.HasPrefix(id, "assertion/")
		}
		for id := range cfg.Connectors {
			uses = uses || id == "assertion" || strings.HasPrefix(id, "assertion/")
		}
		if uses {
			check(path, &cfg.Service.Telemetry.Logs)
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

// freePort returns a loopback TCP port that was free a moment ago and that no other call in
// this test binary got (internal/freeport).
func freePort(t *testing.T) int {
	t.Helper()
	return freePorts(t, 1)[0]
}

func writeConfig(t *testing.T, dir string, p configParams) string {
	t.Helper()
	return renderConfig(t, dir, "collector.yaml.tmpl", p)
}

// newConfigParams returns the settings of one collector: four fresh loopback ports, and the
// JSON-lines report and forwarded spans in dir.
func newConfigParams(t *testing.T, dir string) configParams {
	t.Helper()
	return configParams{
		GRPCPort:    freePort(t),
		HTTPPort:    freePort(t),
		HealthPort:  freePort(t),
		MetricsPort: freePort(t),
		ReportPath:  filepath.Join(dir, "verdicts.jsonl"),
		SpansPath:   filepath.Join(dir, "spans.jsonl"),
	}
}

// healthURL is the collector's health_check endpoint.
func (p configParams) healthURL() string { return fmt.Sprintf("http://127.0.0.1:%d/", p.HealthPort) }

// otlpEndpoint is the OTLP/HTTP receiver's base URL (OTEL_EXPORTER_OTLP_ENDPOINT).
func (p configParams) otlpEndpoint() string { return fmt.Sprintf("http://127.0.0.1:%d", p.HTTPPort) }

// tracesURL is the OTLP/HTTP receiver's traces path.
func (p configParams) tracesURL() string { return p.otlpEndpoint() + "/v1/traces" }

// metricsURL is the collector's own Prometheus metrics endpoint.
func (p configParams) metricsURL() string {
	return fmt.Sprintf("http://127.0.0.1:%d/metrics", p.MetricsPort)
}

// startReady starts bin on the configs and waits until p's health endpoint answers.
func startReady(t *testing.T, bin string, p configParams, cfgPaths ...string) *collector {
	t.Helper()
	col := startCollector(t, bin, cfgPaths...)
	col.waitReady(t, p.healthURL())
	return col
}

// startForClients checks the real-client install, starts the collector on testdata/<tmpl>
// in a new temporary folder and waits until it is ready; it returns the node executable, the
// collector and its settings.
func startForClients(t *testing.T, tmpl string) (node string, col *collector, p configParams) {
	t.Helper()
	bin := collectorBinary(t)
	node = requireClients(t)
	dir := t.TempDir()
	p = newConfigParams(t, dir)
	return node, startReady(t, bin, p, renderConfig(t, dir, tmpl, p)), p
}

// clientEnv is this process's environment without the developer's own OTEL_* settings, which
// must not leak into a client script's run.
func clientEnv() []string {
	var env []string
	for _, kv := range os.Environ() {
		if !strings.HasPrefix(kv, "OTEL_") {
			env = append(env, kv)
		}
	}
	return env
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
	poll(t, timeout, what, func() string {
		if c.exited() {
			return fmt.Sprintf("collector exited (%v)", c.waitErr)
		}
		return ""
	}, cond)
}

// poll calls cond every pollInterval until it reports done; it fails the test when the
// timeout passes or when exited names a process that exited (a non-empty description).
func poll(t *testing.T, timeout time.Duration, what string, exited func() string, cond func() (bool, string)) {
	t.Helper()
	deadline := time.Now().Add(timeout)
	for {
		ok, state := cond()
		if ok {
			return
		}
		if gone := exited(); gone != "" {
			t.Fatalf("%s while waiting for %s; last state: %s", gone, what, state)
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

func eachSpan(td ptrace.Traces, fn func(scope string, s ptrace.Span)) {
	for _, rs := range td.ResourceSpans().All() {
		for _, ss := range rs.ScopeSpans().All() {
			for _, s := range ss.Spans().All() {
				fn(ss.Scope().Name(), s)
			}
		}
	}
}

// postTraces posts td as OTLP/HTTP protobuf and fails the test unless every span is accepted.
func postTraces(t *testing.T, url string, td ptrace.Traces) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	if err := postOTLP(ctx, url, td); err != nil {
		t.Fatal(err)
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

// reportResult is a JSON-lines result type that names its trace.
type reportResult interface{ traceOf() string }

func (r result) traceOf() string { return r.TraceID }

// waitForResults polls the JSON-lines report until every trace has its results.
func (c *collector) waitForResults(t *testing.T, path string, want map[string]int) []result {
	t.Helper()
	return waitForReport[result](t, c, path, want)
}

// waitForReport polls a JSON-lines report until every trace has want[trace] results, each line
// decoded strictly into R.
func waitForReport[R reportResult](t *testing.T, c *collector, path string, want map[string]int) []R {
	t.Helper()
	var results []R
	c.eventually(t, resultTimeout, "assertion results in "+path, func() (bool, string) {
		lines, err := completeLines(path)
		if err != nil {
			return false, err.Error()
		}
		results = results[:0]
		perTrace := map[string]int{}
		for _, line := range lines {
			var r R
			dec := json.NewDecoder(bytes.NewReader(line))
			dec.DisallowUnknownFields()
			if err := dec.Decode(&r); err != nil {
				t.Fatalf("report line %q: %v", line, err)
			}
			results = append(results, r)
			perTrace[r.traceOf()]++
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

// readOTLPFile reads the OTLP/JSON traces file at path (a capture).
func readOTLPFile(t *testing.T, path string) ptrace.Traces {
	t.Helper()
	raw, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	td, err := (&ptrace.JSONUnmarshaler{}).UnmarshalTraces(raw)
	if err != nil {
		t.Fatalf("%s: %v", path, err)
	}
	return td
}

// fileTraces decodes a file exporter's JSON-lines output (completeLines), one batch of traces
// a line; a line that does not decode fails the test.
func fileTraces(t *testing.T, lines [][]byte) []ptrace.Traces {
	t.Helper()
	return decodeLines(t, lines, "file exporter", (&ptrace.JSONUnmarshaler{}).UnmarshalTraces)
}

// fileMetrics is fileTraces for a metrics file exporter's output.
func fileMetrics(t *testing.T, lines [][]byte) []pmetric.Metrics {
	t.Helper()
	return decodeLines(t, lines, "metrics file", (&pmetric.JSONUnmarshaler{}).UnmarshalMetrics)
}

// fileLogRecords decodes a logs file exporter's output (completeLines) into its log records,
// in order; a line that does not decode fails the test.
func fileLogRecords(t *testing.T, lines [][]byte) []plog.LogRecord {
	t.Helper()
	var out []plog.LogRecord
	for _, ld := range decodeLines(t, lines, "logs file", (&plog.JSONUnmarshaler{}).UnmarshalLogs) {
		for _, rl := range ld.ResourceLogs().All() {
			for _, sl := range rl.ScopeLogs().All() {
				for _, lr := range sl.LogRecords().All() {
					out = append(out, lr)
				}
			}
		}
	}
	return out
}

// decodeLines decodes each line with unmarshal; a line that does not decode fails the test,
// quoting it as a line of what.
func decodeLines[T any](t *testing.T, lines [][]byte, what string, unmarshal func([]byte) (T, error)) []T {
	t.Helper()
	out := make([]T, 0, len(lines))
	for _, line := range lines {
		v, err := unmarshal(line)
		if err != nil {
			t.Fatalf("%s line %.200q: %v", what, line, err)
		}
		out = append(out, v)
	}
	return out
}

func countSpans(t *testing.T, lines [][]byte) int {
	t.Helper()
	n := 0
	for _, td := range fileTraces(t, lines) {
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
	return waitForFileSpans(t, c, path, want, func(_ ptrace.ResourceSpans, scope ptrace.ScopeSpans, s ptrace.Span) forwardedSpan {
		return forwardedSpan{
			scope: scope.Scope().Name(), name: s.Name(),
			spanID: s.SpanID().String(), parentID: s.ParentSpanID().String(),
			attrs: s.Attributes().AsRaw(),
		}
	})
}

// waitForFileSpans polls the file exporter's output at path until every trace of want has
// at least its count of spans, and returns each trace's spans, in file order, as conv gives
// them.
func waitForFileSpans[S any](t *testing.T, c *collector, path string, want map[string]int,
	conv func(rs ptrace.ResourceSpans, ss ptrace.ScopeSpans, s ptrace.Span) S,
) map[string][]S {
	t.Helper()
	var spans map[string][]S
	c.eventually(t, resultTimeout, "forwarded spans in "+path, func() (bool, string) {
		lines, err := completeLines(path)
		if err != nil {
			return false, err.Error()
		}
		spans = map[string][]S{}
		for _, td := range fileTraces(t, lines) {
			for _, rs := range td.ResourceSpans().All() {
				for _, ss := range rs.ScopeSpans().All() {
					for _, s := range ss.Spans().All() {
						id := s.TraceID().String()
						spans[id] = append(spans[id], conv(rs, ss, s))
					}
				}
			}
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

// parseProm reads the Prometheus text exposition format with expfmt into samples, one per
// exposed line: a histogram gives <name>_bucket{le=...} (+Inf included), <name>_sum and
// <name>_count, a summary <name>{quantile=...}, <name>_sum and <name>_count.
func parseProm(text string) (metrics, error) {
	parser := expfmt.NewTextParser(model.UTF8Validation)
	families, err := parser.TextToMetricFamilies(strings.NewReader(text))
	if err != nil {
		return nil, err
	}
	names := make([]string, 0, len(families))
	for name := range families {
		names = append(names, name)
	}
	sort.Strings(names)
	var out metrics
	for _, name := range names {
		for _, m := range families[name].GetMetric() {
			out = append(out, promSamples(name, m)...)
		}
	}
	return out, nil
}

// promSamples flattens one metric of a family into its text-format samples.
func promSamples(name string, m *dto.Metric) []sample {
	labels := func(extra ...string) map[string]string {
		l := make(map[string]string, len(m.GetLabel())+1)
		for _, lp := range m.GetLabel() {
			l[lp.GetName()] = lp.GetValue()
		}
		for i := 0; i+1 < len(extra); i += 2 {
			l[extra[i]] = extra[i+1]
		}
		return l
	}
	switch {
	case m.Counter != nil:
		return []sample{{name, labels(), m.GetCounter().GetValue()}}
	case m.Gauge != nil:
		return []sample{{name, labels(), m.GetGauge().GetValue()}}
	case m.Untyped != nil:
		return []sample{{name, labels(), m.GetUntyped().GetValue()}}
	case m.Histogram != nil:
		h := m.GetHistogram()
		var out []sample
		sawInf := false
		for _, b := range h.GetBucket() {
			sawInf = sawInf || math.IsInf(b.GetUpperBound(), +1)
			out = append(out, sample{name + "_bucket", labels("le", promFloat(b.GetUpperBound())), float64(b.GetCumulativeCount())})
		}
		if !sawInf {
			out = append(out, sample{name + "_bucket", labels("le", "+Inf"), float64(h.GetSampleCount())})
		}
		return append(out,
			sample{name + "_sum", labels(), h.GetSampleSum()},
			sample{name + "_count", labels(), float64(h.GetSampleCount())})
	case m.Summary != nil:
		s := m.GetSummary()
		var out []sample
		for _, q := range s.GetQuantile() {
			out = append(out, sample{name, labels("quantile", promFloat(q.GetQuantile())), q.GetValue()})
		}
		return append(out,
			sample{name + "_sum", labels(), s.GetSampleSum()},
			sample{name + "_count", labels(), float64(s.GetSampleCount())})
	}
	return nil
}

// promFloat renders an le or quantile label value as the text format writes it.
func promFloat(f float64) string {
	switch {
	case math.IsInf(f, +1):
		return "+Inf"
	case math.IsInf(f, -1):
		return "-Inf"
	}
	return strconv.FormatFloat(f, 'g', -1, 64)
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
// wantSeries is one expected value: the sum of the samples of name that carry labels.
type wantSeries struct {
	name   string
	labels map[string]string
	want   float64
}

// checkSums checks that each series has samples and sums to its value.
func checkSums(t *testing.T, m metrics, wants []wantSeries) {
	t.Helper()
	for _, c := range wants {
		if len(m.find(c.name, c.labels)) == 0 {
			t.Errorf("no %s%s samples; assertion/handoff series on the endpoint:\n%s", c.name, labelString(c.labels), m.names("otelcol_exporter_assertion", "otelcol_processor_handoff"))
			continue
		}
		if got := m.sum(c.name, c.labels); got != c.want {
			t.Errorf("%s%s = %v, want %v", c.name, labelString(c.labels), got, c.want)
		}
	}
}

// checkNothingLost checks a run of client scripts on one collector: the processor released
// the sent spans and added the handoffs' HANDOFF spans, every trace on its root, none late
// and none still held; the exporter evaluated every trace complete.
func checkNothingLost(t *testing.T, m metrics, sent, handoffs, traces int) {
	t.Helper()
	checkSums(t, m, []wantSeries{
		{"otelcol_processor_handoff_spans_released", nil, float64(sent)},
		{"otelcol_processor_handoff_handoffs_synthesized", nil, float64(handoffs)},
		{"otelcol_processor_handoff_traces_released", map[string]string{"trigger": "root"}, float64(traces)},
		{"otelcol_processor_handoff_traces_released", map[string]string{"trigger": "timeout"}, 0},
		{"otelcol_processor_handoff_late_spans", nil, 0},
		{"otelcol_processor_handoff_spans_in_memory", nil, 0},
		{"otelcol_exporter_assertion_traces_evaluated", map[string]string{"complete": "true"}, float64(traces)},
		{"otelcol_exporter_assertion_traces_evaluated", map[string]string{"complete": "false"}, 0},
	})
}

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

// freePorts returns n distinct loopback TCP ports that were free a moment ago, picked while
// held open together and never handed out before in this test binary (internal/freeport).
func freePorts(t *testing.T, n int) []int {
	t.Helper()
	ports, err := freeport.Ports(n)
	if err != nil {
		t.Fatal(err)
	}
	return ports
}

// postOTLP posts td as OTLP/HTTP protobuf and requires a full success; safe to call from
// any goroutine.
func postOTLP(ctx context.Context, url string, td ptrace.Traces) error {
	body, err := ptraceotlp.NewExportRequestFromTraces(td).MarshalProto()
	if err != nil {
		return err
	}
	return postRaw(ctx, url, "application/x-protobuf", body, http.StatusOK)
}

// postRaw posts body and requires the given status; on 200 the body must be a full-success
// ExportResponse.
func postRaw(ctx context.Context, url, contentType string, body []byte, wantStatus int) error {
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, url, bytes.NewReader(body))
	if err != nil {
		return err
	}
	req.Header.Set("Content-Type", contentType)
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		return err
	}
	defer resp.Body.Close()
	respBody, _ := io.ReadAll(resp.Body)
	if resp.StatusCode != wantStatus {
		return fmt.Errorf("POST %s: %s %.300s, want status %d", url, resp.Status, respBody, wantStatus)
	}
	if wantStatus != http.StatusOK {
		return nil
	}
	er := ptraceotlp.NewExportResponse()
	if err := er.UnmarshalProto(respBody); err != nil {
		return fmt.Errorf("POST %s: response: %w", url, err)
	}
	if ps := er.PartialSuccess(); ps.RejectedSpans() != 0 || ps.ErrorMessage() != "" {
		return fmt.Errorf("POST %s: partial success: %d spans rejected: %s", url, ps.RejectedSpans(), ps.ErrorMessage())
	}
	return nil
}

// get scrapes url once: status code and body.
func get(url string) (int, string, error) {
	client := &http.Client{Timeout: 5 * time.Second}
	resp, err := client.Get(url)
	if err != nil {
		return 0, "", err
	}
	defer resp.Body.Close()
	body, err := io.ReadAll(resp.Body)
	return resp.StatusCode, string(body), err
}

// TestParseProm pins the samples the expfmt-based parser gives for each metric type.
func TestParseProm(t *testing.T) {
	text := `# TYPE c_total counter
c_total{a="x\"y\\z\nw",b="2"} 3
# TYPE g gauge
g 1.5
# TYPE h histogram
h_bucket{k="v",le="0.5"} 1
h_bucket{k="v",le="1"} 2
h_bucket{k="v",le="+Inf"} 4
h_sum{k="v"} 7.25
h_count{k="v"} 4
`
	m, err := parseProm(text)
	if err != nil {
		t.Fatal(err)
	}
	var got []string
	for _, s := range m {
		got = append(got, fmt.Sprintf("%s%s %v", s.name, labelString(s.labels), s.value))
	}
	want := []string{
		`c_total{a="x\"y\\z\nw",b="2"} 3`,
		`g 1.5`,
		`h_bucket{k="v",le="0.5"} 1`,
		`h_bucket{k="v",le="1"} 2`,
		`h_bucket{k="v",le="+Inf"} 4`,
		`h_sum{k="v"} 7.25`,
		`h_count{k="v"} 4`,
	}
	if strings.Join(got, "\n") != strings.Join(want, "\n") {
		t.Errorf("parseProm:\n%s\nwant:\n%s", strings.Join(got, "\n"), strings.Join(want, "\n"))
	}
	if _, err := parseProm("broken{"); err == nil {
		t.Error("parseProm accepted a broken line")
	}
}

// ---- the real-client scripts ----

// clientScenario is one scenario script and what the collector must make of its trace.
type clientScenario struct {
	name        string
	script      string
	args        []string
	serviceName string
	spans       int // spans the framework emits for the scenario
	handoffs    []clientHandoff
	// results maps (case, step) to the verdict; expected, actual and message are exact but
	// for two placeholders: {ms} (a duration, e.g. 4.21ms) and {span:AGENT} (the span id of
	// that agent's invocation).
	results map[[2]string]clientVerdict
}

type clientHandoff struct {
	source, target, detection string
	promptSource              string // handoff.scope_prompt.source: where the receiver's input came from
	receiverErrors            int64  // handoff.receiver.errors
}

type clientVerdict struct {
	outcome, expected, actual, message string
}

// clientReport is the JSON line a scenario prints on stdout when it is done.
type clientReport struct {
	ServiceName    string       `json:"service_name"`
	Endpoint       string       `json:"endpoint"`
	Answer         string       `json:"answer"`
	Error          string       `json:"error"`
	ExportFailures []string     `json:"export_failures"`
	Spans          []clientSpan `json:"spans"`
}

// clientSpan is a span the scenario's exporter had acknowledged by the collector.
type clientSpan struct {
	TraceID      string `json:"trace_id"`
	SpanID       string `json:"span_id"`
	ParentSpanID string `json:"parent_span_id"`
	Name         string `json:"name"`
	Service      string `json:"service"` // the span's resource service.name
	Links        []struct {
		TraceID string `json:"trace_id"`
		SpanID  string `json:"span_id"`
	} `json:"links"`
	Scope string `json:"scope"`
}

func clientScenarios() []clientScenario {
	const topo2 = "2 agent invocations, 1 handoffs, depth 1, cycles none"
	common := func(topology string, tokens, toolCalls int, budgetOutcome, budgetMessage string) map[[2]string]clientVerdict {
		usage := fmt.Sprintf("tokens %d, duration {ms}, tool calls %d", tokens, toolCalls)
		return map[[2]string]clientVerdict{
			{handoffCase, "ASSERT_AGENT_TOPOLOGY#1"}: {
				"pass", "depth <= 2, no delegation cycles, at least one agent", topology, "topology ok: " + topology,
			},
			{handoffCase, "EXPECT_DELEGATION_TO#2"}: {
				"pass", "triage delegates to weather_specialist between 1 and 1 times", "1 times",
				"triage delegated to weather_specialist 1 times",
			},
			{handoffCase, "EXPECT_AGENT_BUDGET#3"}: {
				budgetOutcome, "weather_specialist subtree: tokens <= 8000, tool calls <= 2", usage, budgetMessage,
			},
			{handoffCase, "EXPECT_HANDOFF_CONTEXT#4"}: {
				"pass", "handoff triage -> weather_specialist whose content satisfies contains /Paris/",
				"1 handoffs with captured input",
				"1 handoffs triage -> weather_specialist carry the expected content; the GROUNDEDNESS rubric was not graded: the step is deterministicOnly",
			},
			{capCase, "ASSERT_AGENT_TOPOLOGY#1"}: {
				"pass", "no delegation cycles, at least one agent", topology, "topology ok: " + topology,
			},
			{capCase, "EXPECT_AGENT_BUDGET#2"}: {
				"fail", "weather_specialist subtree: tokens <= 100", usage,
				fmt.Sprintf("weather_specialist (span {span:weather_specialist}) used %d tokens, over maxTokens 100", tokens),
			},
		}
	}
	withSwarm := func(m map[[2]string]clientVerdict) map[[2]string]clientVerdict {
		m[[2]string{swarmCase, "ASSERT_AGENT_TOPOLOGY#1"}] = clientVerdict{
			"pass", "depth <= 2, no delegation cycles, at least one agent", topo2, "topology ok: " + topo2,
		}
		m[[2]string{swarmCase, "EXPECT_DELEGATION_TO#2"}] = clientVerdict{
			"pass", "triage delegates to weather_specialist between 1 and 1 times", "1 times", "triage delegated to weather_specialist 1 times",
		}
		m[[2]string{swarmCase, "EXPECT_DELEGATION_TO#3"}] = clientVerdict{
			"fail", "weather_specialist delegates to triage at least 1 times", "0 times",
			"expected weather_specialist delegating to triage at least 1 times, saw 0 times",
		}
		return m
	}
	strandsHandoffs := func(errs int64) []clientHandoff {
		return []clientHandoff{
			// The swarm span and its nodes are wrappers, not agents: no handoff into triage.
			// triage's structured output names the next agent: {"agentId":"weather_specialist",...}.
			{"triage", "weather_specialist", "transfer_tool", "event:gen_ai.user.message:content", errs},
		}
	}
	// Tokens are the stub models' fixed usage: specialist 45+9, 70+9, 95+20 = 248; with the
	// retried call of tool-error 45+9, 70+9, 80+9, 110+20 = 352. The structured-output call
	// that ends a Strands swarm node is a routing (delegation) call, not a tool call.
	return []clientScenario{
		{
			name: "google-adk-transfer", script: "adk-transfer.mjs", serviceName: "e2e-google-adk-transfer",
			spans: 10,
			handoffs: []clientHandoff{
				{"triage", "weather_specialist", "transfer_tool", "llm:gcp.vertex.agent.llm_request", 0},
			},
			results: common(topo2, 248, 2, "pass", "weather_specialist within budget: tokens 248, duration {ms}, tool calls 2"),
		},
		{
			name: "strands-swarm", script: "strands-swarm.mjs", args: []string{"ok"}, serviceName: "e2e-strands-swarm",
			spans:    17,
			handoffs: strandsHandoffs(0),
			results:  withSwarm(common(topo2, 248, 2, "pass", "weather_specialist within budget: tokens 248, duration {ms}, tool calls 2")),
		},
		{
			name: "strands-swarm-tool-error", script: "strands-swarm.mjs", args: []string{"tool-error"},
			serviceName: "e2e-strands-swarm-tool-error",
			spans:       20,
			handoffs:    strandsHandoffs(2),
			results: withSwarm(common(topo2, 352, 3, "fail",
				"weather_specialist (span {span:weather_specialist}) made 3 tool calls, over maxToolCalls 2")),
		},
	}
}

// requireClients checks that Node.js and the pinned packages of clients/ are installed, and
// returns the node executable. A missing install fails the test: it is part of `make test`.
func requireClients(t *testing.T) string {
	t.Helper()
	node, err := exec.LookPath("node")
	if err != nil {
		t.Fatalf("node not found in PATH (%v): the real-client scenarios need Node.js 20 or later", err)
	}
	out, err := exec.Command(node, "--version").Output()
	if err != nil {
		t.Fatalf("%s --version: %v", node, err)
	}
	version := strings.TrimSpace(string(out))
	major, _ := strconv.Atoi(strings.SplitN(strings.TrimPrefix(version, "v"), ".", 2)[0])
	if major < 20 {
		t.Fatalf("node %s at %s: the real-client scenarios need Node.js 20 or later", version, node)
	}

	raw, err := os.ReadFile(filepath.Join(clientsDir, "package.json"))
	if err != nil {
		t.Fatal(err)
	}
	var pkg struct {
		Dependencies map[string]string `json:"dependencies"`
	}
	if err := json.Unmarshal(raw, &pkg); err != nil {
		t.Fatalf("%s/package.json: %v", clientsDir, err)
	}
	var problems []string
	for name, pin := range pkg.Dependencies {
		raw, err := os.ReadFile(filepath.Join(clientsDir, "node_modules", name, "package.json"))
		if err != nil {
			problems = append(problems, name+" is not installed")
			continue
		}
		var installed struct {
			Version string `json:"version"`
		}
		if err := json.Unmarshal(raw, &installed); err != nil || installed.Version != pin {
			problems = append(problems, fmt.Sprintf("%s is %s, package.json pins %s", name, installed.Version, pin))
		}
	}
	if len(problems) > 0 {
		sort.Strings(problems)
		t.Fatalf("e2e/%s/node_modules is missing or stale (%s): run `make e2e-clients` (`make test` runs it)",
			clientsDir, strings.Join(problems, "; "))
	}
	return node
}

// runClient runs one scenario script against the collector and returns its report: the
// spans of one trace, as many as the scenario emits.
func runClient(t *testing.T, node string, sc clientScenario, endpoint string) clientReport {
	t.Helper()
	rep := runClientReport(t, node, sc, endpoint)
	if len(rep.Spans) != sc.spans {
		t.Errorf("%s sent %d spans, want %d (pinned framework versions emit a fixed shape): %v", sc.script, len(rep.Spans), sc.spans, rep.Spans)
	}
	for _, s := range rep.Spans {
		if s.TraceID != rep.Spans[0].TraceID {
			t.Fatalf("%s sent spans of two traces (%s, %s); the scenario is one trace", sc.script, rep.Spans[0].TraceID, s.TraceID)
		}
	}
	return rep
}

// runClientReport runs a scenario script against the collector and returns its report,
// checking that the script succeeded and the collector acknowledged at least one span.
func runClientReport(t *testing.T, node string, sc clientScenario, endpoint string) clientReport {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), clientTimeout)
	defer cancel()
	argv := append([]string{sc.script}, sc.args...)
	cmd := exec.CommandContext(ctx, node, argv...)
	cmd.Dir = clientsDir
	cmd.WaitDelay = 5 * time.Second
	// The developer's own OTel settings must not leak into the scenario.
	cmd.Env = append(clientEnv(), "OTEL_EXPORTER_OTLP_ENDPOINT="+endpoint)
	var stdout, stderr bytes.Buffer
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	start := time.Now()
	err := cmd.Run()
	elapsed := time.Since(start)
	if err != nil {
		if errors.Is(ctx.Err(), context.DeadlineExceeded) {
			err = fmt.Errorf("killed after %s: %w", clientTimeout, err)
		}
		t.Fatalf("node %s: %v\nstdout:\n%s\nstderr:\n%s", strings.Join(argv, " "), err, stdout.String(), stderr.String())
	}
	t.Logf("node %s: exited 0 in %s", strings.Join(argv, " "), elapsed.Round(time.Millisecond))

	lines := strings.Split(strings.TrimSpace(stdout.String()), "\n")
	var rep clientReport
	dec := json.NewDecoder(strings.NewReader(lines[len(lines)-1]))
	dec.DisallowUnknownFields()
	if err := dec.Decode(&rep); err != nil {
		t.Fatalf("%s: report line %q: %v\nstderr:\n%s", sc.script, lines[len(lines)-1], err, stderr.String())
	}
	if rep.ServiceName != sc.serviceName || rep.Error != "" || len(rep.ExportFailures) > 0 {
		t.Fatalf("%s: service %q (want %q), error %q, export failures %q", sc.script, rep.ServiceName, sc.serviceName, rep.Error, rep.ExportFailures)
	}
	if len(rep.Spans) == 0 {
		t.Fatalf("%s: no span was acknowledged", sc.script)
	}
	return rep
}

const (
	clientsDir = "clients"
	// clientTimeout bounds one scenario process (Node start and module loading included;
	// a scenario takes about a second).
	clientTimeout = 60 * time.Second
	// Case names of testdata/clients.yaml.tmpl.
	handoffCase = "weather_handoff"
	capCase     = "specialist_token_cap"
	swarmCase   = "strands_swarm_routing"
)

// ---- metric series of the connector's output ----

// series maps "k=v k=v" (attributes sorted) to a count: a sum's value or a histogram's count.
type series map[string]uint64

func (s series) total() uint64 {
	var n uint64
	for _, v := range s {
		n += v
	}
	return n
}

// ---- timeouts, paths, captures and expected verdicts ----

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

// waitForTransfers waits for the forwarded spans of the ADK and Strands captures, each with
// one HANDOFF span added, and checks triage's transfer_tool hand-off to weather_specialist in
// both.
func waitForTransfers(t *testing.T, col *collector, path string, adk, strands capture) map[string][]forwardedSpan {
	t.Helper()
	spans := col.waitForSpans(t, path, map[string]int{
		adk.traceID:     len(adk.spanIDs) + 1,
		strands.traceID: len(strands.spanIDs) + 1,
	})
	for _, c := range []capture{adk, strands} {
		checkForwarded(t, spans, c, []wantHandoff{
			{source: "triage", target: "weather_specialist", detection: "transfer_tool"},
		})
	}
	return spans
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

func loadCapture(t *testing.T, name string) capture {
	t.Helper()
	path := filepath.Join(tracesDir, name)
	td := readOTLPFile(t, path)
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

const (
	// binaryPath is the collector `make build` produces, relative to this directory.
	binaryPath = "../_build/otelcol-handoff"
	tracesDir  = "../testdata/traces"
	// handoffScope is the instrumentation scope of the HANDOFF spans the processor adds.
	handoffScope = "github.com/otelcol-handoff/otelcol-handoff/handoffprocessor"
	// Case names of testdata/collector.yaml.tmpl.
	passCase       = "weather_delegation"
	failCase       = "weather_overrun"
	startTimeout   = 60 * time.Second // collector start (health check answers)
	resultTimeout  = 20 * time.Second // traces judged and written (quiet_period is 200ms)
	stopTimeout    = 15 * time.Second // SIGTERM to exit, before Kill
	processTimeout = 2 * time.Minute  // hard cap on the collector process
	pollInterval   = 50 * time.Millisecond
)

// ---- ids and seeded random numbers ----

// newRNG is the test's random source, seeded by its name: the ids and shapes it draws are
// the same on every run, so a failure replays.
func newRNG(t *testing.T) *rand.Rand {
	h := fnv.New64a()
	_, _ = h.Write([]byte(t.Name()))
	return rand.New(rand.NewPCG(h.Sum64(), 11))
}

func traceIDOf(t *testing.T, s string) pcommon.TraceID {
	t.Helper()
	var id pcommon.TraceID
	copy(id[:], mustHex(t, s, 16))
	return id
}

func spanIDOf(t *testing.T, s string) pcommon.SpanID {
	t.Helper()
	var id pcommon.SpanID
	copy(id[:], mustHex(t, s, 8))
	return id
}

func mustHex(t *testing.T, s string, n int) []byte {
	t.Helper()
	var b []byte
	if _, err := fmt.Sscanf(s, "%x", &b); err != nil || len(b) != n {
		t.Fatalf("bad hex id %q (%v)", s, err)
	}
	return b
}

// ---- running handoffcheck ----

// checkBinary is the CI command `make build` produces beside the collector.
const checkBinary = "../_build/handoffcheck"

func handoffcheck(t *testing.T) string {
	t.Helper()
	bin, err := filepath.Abs(checkBinary)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := os.Stat(bin); err != nil {
		t.Fatalf("handoffcheck binary missing (%v): run `make build` first (make test does)", err)
	}
	return bin
}

// runCheck runs handoffcheck with a deadline and returns its exit code and output.
func runCheck(t *testing.T, env []string, args ...string) (int, string, string) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 90*time.Second)
	defer cancel()
	cmd := exec.CommandContext(ctx, handoffcheck(t), args...)
	cmd.WaitDelay = 5 * time.Second
	cmd.Env = env
	var stdout, stderr bytes.Buffer
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	err := cmd.Run()
	var exitErr *exec.ExitError
	switch {
	case err == nil:
		return 0, stdout.String(), stderr.String()
	case errors.As(err, &exitErr):
		return exitErr.ExitCode(), stdout.String(), stderr.String()
	}
	t.Fatalf("handoffcheck did not run: %v\n%s", err, stderr.String())
	return -1, "", ""
}

func readResults(t *testing.T, path string) []result {
	t.Helper()
	lines, err := completeLines(path)
	if err != nil {
		t.Fatal(err)
	}
	var out []result
	for _, l := range lines {
		var r result
		if err := json.Unmarshal(l, &r); err != nil {
			t.Fatalf("%s: %v", path, err)
		}
		out = append(out, r)
	}
	return out
}

// ---- metrics files ----

func eachMetric(md pmetric.Metrics, fn func(pmetric.Metric)) {
	for _, rm := range md.ResourceMetrics().All() {
		for _, sm := range rm.ScopeMetrics().All() {
			for _, m := range sm.Metrics().All() {
				fn(m)
			}
		}
	}
}

func sortedKeys(m map[string]bool) []string {
	out := make([]string, 0, len(m))
	for k := range m {
		out = append(out, k)
	}
	sort.Strings(out)
	return out
}

// ---- the connector's metric contract and its Prometheus names ----

// connectorMetric is one metric of the assertion connector's contract (its traces → metrics
// output), as OTLP describes it.
type connectorMetric struct {
	name, unit string
	kind       pmetric.MetricType
	attrs      []string
}

// connectorContract: the metrics the assertion connector emits (issue 13; the connector's
// README maps each to the OTel semantic conventions). Sums are cumulative and monotonic.
var connectorContract = []connectorMetric{
	{"handoff.assertion.results", "{result}", pmetric.MetricTypeSum, []string{"case", "step", "outcome"}},
	{"gen_ai.invoke_agent.duration", "s", pmetric.MetricTypeHistogram, []string{"gen_ai.agent.name"}},
	{"gen_ai.invoke_agent.tokens", "{token}", pmetric.MetricTypeHistogram, []string{"gen_ai.agent.name", "gen_ai.token.type"}},
	{"gen_ai.invoke_agent.tool_calls", "{call}", pmetric.MetricTypeHistogram, []string{"gen_ai.agent.name"}},
	{"gen_ai.invoke_agent.llm_calls", "{call}", pmetric.MetricTypeHistogram, []string{"gen_ai.agent.name"}},
	{"handoff.budget.utilization", "1", pmetric.MetricTypeHistogram, []string{"case", "step", "gen_ai.agent.name", "budget"}},
	{"traces_service_graph_request_total", "", pmetric.MetricTypeSum, []string{"client", "server", "connection_type"}},
	{"traces_service_graph_request_failed_total", "", pmetric.MetricTypeSum, []string{"client", "server", "connection_type"}},
	{"traces_service_graph_request_server_seconds", "s", pmetric.MetricTypeHistogram, []string{"client", "server", "connection_type"}},
}

// resourceLabels are the labels Prometheus adds from the resource (OTLP receiver, remote
// write) or the scrape target: service.name → job, service.instance.id → instance.
var resourceLabels = []string{"job", "instance"}

// seriesLabels maps a Prometheus series name to its label names.
type seriesLabels map[string]map[string]bool

func (s seriesLabels) add(name string, labels ...string) {
	set := map[string]bool{}
	for _, l := range labels {
		set[l] = true
	}
	s[name] = set
}

// promSeries returns the Prometheus series of one OTLP metric, translated as the Prometheus
// exporters and remote write translate them (with type and unit suffixes), with their label
// names.
func promSeries(m pmetric.Metric, attrs []string) seriesLabels {
	labels := append([]string(nil), resourceLabels...)
	for _, a := range attrs {
		labels = append(labels, promtranslator.NormalizeLabel(a))
	}
	name := promtranslator.BuildCompliantName(m, "", true)
	out := seriesLabels{}
	if m.Type() == pmetric.MetricTypeHistogram {
		out.add(name+"_bucket", append(labels, "le")...)
		out.add(name+"_sum", labels...)
		out.add(name+"_count", labels...)
		return out
	}
	out.add(name, labels...)
	return out
}

func contractMetric(c connectorMetric) pmetric.Metric {
	m := pmetric.NewMetric()
	m.SetName(c.name)
	m.SetUnit(c.unit)
	switch c.kind {
	case pmetric.MetricTypeSum:
		m.SetEmptySum().SetIsMonotonic(true)
		m.Sum().SetAggregationTemporality(pmetric.AggregationTemporalityCumulative)
	case pmetric.MetricTypeHistogram:
		m.SetEmptyHistogram().SetAggregationTemporality(pmetric.AggregationTemporalityCumulative)
	}
	return m
}

// connectorSeries: every Prometheus series of the connector's contract.
func connectorSeries() seriesLabels {
	out := seriesLabels{}
	for _, c := range connectorContract {
		for name, labels := range promSeries(contractMetric(c), c.attrs) {
			out[name] = labels
		}
	}
	return out
}

// connectorSeriesNames lists the connector's Prometheus series names.
func connectorSeriesNames(t *testing.T) []string {
	t.Helper()
	var out []string
	for name := range connectorSeries() {
		out = append(out, name)
	}
	sort.Strings(out)
	return out
}

// prometheusSeriesNames translates the metrics of md to their Prometheus series names.
func prometheusSeriesNames(md pmetric.Metrics) []string {
	var out []string
	eachMetric(md, func(m pmetric.Metric) {
		for name := range promSeries(m, nil) {
			out = append(out, name)
		}
	})
	return out
}

// ---- process memory ----

// vmHWM reads a process's peak resident set size, in kB.
func vmHWM(pid int) (int64, error) {
	b, err := procstat.PeakRSSBytes(pid)
	return b / 1024, err
}

// watchPeakRSS polls a collector's VmHWM until it exits; the returned func gives the last
// value read (the peak is monotonic, so the last read before exit is the closest).
func watchPeakRSS(c *collector) func() int64 {
	var peak atomic.Int64
	stopped := make(chan struct{})
	go func() {
		defer close(stopped)
		for {
			if kb, err := vmHWM(c.cmd.Process.Pid); err == nil {
				peak.Store(kb)
			}
			select {
			case <-c.done:
				return
			case <-time.After(5 * time.Millisecond):
			}
		}
	}()
	return func() int64 { <-stopped; return peak.Load() }
}

// ---- the keep-failures fixture and the shipped configs ----

// keepFailuresConfig is the shipped keep-the-failures pipeline.
const keepFailuresConfig = "../config/keep-failures.yaml"

// verdictAttr is the attribute the assertion connector stamps on the root agent span.
const verdictAttr = "handoff.verdict"

// copiesPerCapture: every capture of testdata/traces is sent this many times, each copy
// under its own trace id.
const copiesPerCapture = 6

// shippedConfig reads config/keep-failures.yaml as a generic map.
func shippedConfig(t *testing.T) map[string]any {
	t.Helper()
	raw, err := os.ReadFile(keepFailuresConfig)
	if err != nil {
		t.Fatal(err)
	}
	var cfg map[string]any
	if err := yaml.Unmarshal(raw, &cfg); err != nil {
		t.Fatalf("%s: %v", keepFailuresConfig, err)
	}
	return cfg
}

// section returns cfg[path[0]][path[1]]..., failing the test when a level is missing.
func section(t *testing.T, cfg map[string]any, path ...string) map[string]any {
	t.Helper()
	cur := cfg
	for _, p := range path {
		next, ok := cur[p].(map[string]any)
		if !ok {
			t.Fatalf("%s: no map at %v (stopped at %q)", keepFailuresConfig, path, p)
		}
		cur = next
	}
	return cur
}

// probabilisticPolicy is the shipped sample-passing policy's salt and percentage.
type probabilisticPolicy struct {
	salt       string
	percentage float64
}

func shippedProbabilistic(t *testing.T, tailSampling map[string]any) probabilisticPolicy {
	t.Helper()
	policies, _ := tailSampling["policies"].([]any)
	var found []probabilisticPolicy
	for _, p := range policies {
		pm, _ := p.(map[string]any)
		if pm["type"] != "probabilistic" {
			continue
		}
		prob, _ := pm["probabilistic"].(map[string]any)
		salt, _ := prob["hash_salt"].(string)
		var pct float64
		switch v := prob["sampling_percentage"].(type) {
		case int:
			pct = float64(v)
		case float64:
			pct = v
		default:
			t.Fatalf("%s: sampling_percentage %v (%T) is not a number", keepFailuresConfig, v, v)
		}
		found = append(found, probabilisticPolicy{salt: salt, percentage: pct})
	}
	if len(found) != 1 {
		t.Fatalf("%s: %d probabilistic policies in tail_sampling, want 1", keepFailuresConfig, len(found))
	}
	if found[0].salt == "" {
		t.Fatalf("%s: the probabilistic policy needs an explicit hash_salt", keepFailuresConfig)
	}
	return found[0]
}

// sampledByProbabilistic mirrors contrib tail_sampling v0.161.0's probabilistic policy
// (internal/sampling/probabilistic.go, without the usetracestate gate, which is alpha and
// off): FNV-1a over the salt then the 16 trace id bytes, kept when the hash is at most
// MaxUint64 × percentage/100 (computed with big.Float as upstream does).
func (p probabilisticPolicy) sampled(id pcommon.TraceID) bool {
	boundary := new(big.Float).SetInt(new(big.Int).SetUint64(math.MaxUint64))
	threshold, _ := boundary.Mul(boundary, big.NewFloat(p.percentage/100)).Uint64()
	h := fnv.New64a()
	_, _ = h.Write([]byte(p.salt))
	_, _ = h.Write(id[:])
	return h.Sum64() <= threshold
}

// fixtureTrace is one copy of a real capture under a fresh trace id.
type fixtureTrace struct {
	capture string
	td      ptrace.Traces
	traceID pcommon.TraceID
	spanIDs map[string]bool
	// rootAgent is the span id of the root agent span (the trace's root span when there is
	// no agent).
	rootAgent string
}

// keepFailuresCaptures are the real-framework captures of the weather scenario (one per
// framework and outcome), named so that new fixtures in testdata/traces do not move the
// pinned counts below.
var keepFailuresCaptures = []string{
	"google-adk-agent-tool.json", "google-adk-ok.json", "google-adk-tool-error.json",
	"langgraph-ok.json", "langgraph-tool-error.json", "mastra-ok.json", "mastra-tool-error.json",
	"openai-agents-ok.json", "openai-agents-tool-error.json", "strands-agent-tool.json",
	"strands-ok-latest-semconv.json", "strands-ok.json", "strands-tool-error.json",
	"traceloop-langgraph-ok.json", "traceloop-langgraph-withworkflow.json",
	"vercel-ai-ok.json", "vercel-ai-tool-error.json",
}

// keepFailuresFixture copies every capture of keepFailuresCaptures copiesPerCapture times,
// each copy with a trace id derived from the capture's name and the copy's index (so the
// probabilistic policy's decisions are fixed).
func keepFailuresFixture(t *testing.T) []fixtureTrace {
	t.Helper()
	var out []fixtureTrace
	for _, name := range keepFailuresCaptures {
		f := filepath.Join(tracesDir, name)
		if !singleTraceCapture(t, f) {
			continue // the flat OpenLLMetry captures: one trace per span, nothing to keep whole
		}
		c := loadCapture(t, filepath.Base(f))
		for k := range copiesPerCapture {
			sum := sha256.Sum256(fmt.Appendf(nil, "keep-failures/%s/%d", c.file, k))
			var id pcommon.TraceID
			copy(id[:], sum[:16])
			td := ptrace.NewTraces()
			c.td.CopyTo(td)
			ft := fixtureTrace{capture: c.file, td: td, traceID: id, spanIDs: map[string]bool{}}
			eachSpan(td, func(_ string, s ptrace.Span) {
				s.SetTraceID(id)
				ft.spanIDs[s.SpanID().String()] = true
			})
			ft.rootAgent = rootAgentSpanID(t, td).String()
			out = append(out, ft)
		}
	}
	return out
}

// singleTraceCapture reports whether the OTLP/JSON capture at path holds one trace.
func singleTraceCapture(t *testing.T, path string) bool {
	t.Helper()
	td := readOTLPFile(t, path)
	ids := map[pcommon.TraceID]bool{}
	eachSpan(td, func(_ string, s ptrace.Span) { ids[s.TraceID()] = true })
	return len(ids) == 1
}

// rootAgentSpanID is the span the assertion connector stamps with the verdict: the root
// agent run as the model finds it (a swarm or workflow wrapper is not an agent), else the
// trace's root span.
func rootAgentSpanID(t *testing.T, td ptrace.Traces) pcommon.SpanID {
	t.Helper()
	graphs := agentgraph.BuildAll(td, agentgraph.Options{})
	if len(graphs) != 1 {
		t.Fatalf("%d traces in a single-trace capture", len(graphs))
	}
	g := graphs[0]
	switch {
	case g.Root != nil:
		return g.Root.Span.ID
	case g.RootSpan != nil:
		return g.RootSpan.ID
	}
	t.Fatal("trace without a root span")
	return pcommon.SpanID{}
}

// stampVerdict sets handoff.verdict on the fixture's root agent span ("" leaves it unset).
func (f fixtureTrace) stampVerdict(verdict string) {
	if verdict == "" {
		return
	}
	eachSpan(f.td, func(_ string, s ptrace.Span) {
		if s.SpanID().String() == f.rootAgent {
			s.Attributes().PutStr(verdictAttr, verdict)
		}
	})
}

// sampledOutput reads the file exporter's JSON lines: spans per trace id.
func sampledOutput(t *testing.T, path string) map[pcommon.TraceID][]forwardedSpan {
	t.Helper()
	lines, err := completeLines(path)
	if err != nil && !os.IsNotExist(err) {
		t.Fatal(err)
	}
	out := map[pcommon.TraceID][]forwardedSpan{}
	for _, td := range fileTraces(t, lines) {
		eachSpan(td, func(scope string, s ptrace.Span) {
			out[s.TraceID()] = append(out[s.TraceID()], forwardedSpan{
				scope: scope, name: s.Name(),
				spanID: s.SpanID().String(), parentID: s.ParentSpanID().String(),
				attrs: s.Attributes().AsRaw(),
			})
		})
	}
	return out
}

// wholeTrace reports whether got holds every span of f exactly once, plus only HANDOFF
// spans of the processor's scope; why not, otherwise.
func (f fixtureTrace) wholeTrace(got []forwardedSpan) (bool, string) {
	seen := map[string]int{}
	for _, s := range got {
		seen[s.spanID]++
		if !f.spanIDs[s.spanID] && s.scope != handoffScope {
			return false, fmt.Sprintf("span %s (scope %q) is neither in the capture nor a HANDOFF span", s, s.scope)
		}
		if seen[s.spanID] > 1 {
			return false, fmt.Sprintf("span %s arrived %d times", s, seen[s.spanID])
		}
	}
	for id := range f.spanIDs {
		if seen[id] == 0 {
			return false, fmt.Sprintf("%d of %d spans, %s missing", len(got), len(f.spanIDs), id)
		}
	}
	return true, ""
}

// keptVerdicts are the verdicts the keep-non-passing policy keeps.
func keptVerdict(v string) bool { return v != "" && v != "pass" }

// keptTraces are the fixture traces the shipped policies keep: every non-passing one and
// the others the probabilistic policy's hash selects.
func keptTraces(traces []fixtureTrace, verdicts map[pcommon.TraceID]string, prob probabilisticPolicy) map[pcommon.TraceID]fixtureTrace {
	want := map[pcommon.TraceID]fixtureTrace{}
	for _, f := range traces {
		if keptVerdict(verdicts[f.traceID]) || prob.sampled(f.traceID) {
			want[f.traceID] = f
		}
	}
	return want
}

// waitKept waits until every trace of want has arrived whole in path.
func waitKept(t *testing.T, col *collector, path string, want map[pcommon.TraceID]fixtureTrace, verdicts map[pcommon.TraceID]string) {
	t.Helper()
	// Traces without a single root (the flat OpenLLMetry workflow capture) leave the handoff
	// processor at max_wait and then wait tail_sampling's full decision_wait (10 s).
	col.eventually(t, 3*resultTimeout, "the kept traces in "+path, func() (bool, string) {
		got := sampledOutput(t, path)
		whole := 0
		var notYet []string
		for id, f := range want {
			if ok, why := f.wholeTrace(got[id]); ok {
				whole++
			} else {
				notYet = append(notYet, fmt.Sprintf("%s (%s, verdict %q): %s", id, f.capture, verdicts[id], why))
			}
		}
		sort.Strings(notYet)
		return whole == len(want), fmt.Sprintf("%d of %d kept traces whole, %d traces in the output; not yet: %v", whole, len(want), len(got), notYet)
	})
}

// checkExactlyKept requires the output (read after the collector stopped) to hold exactly
// the traces of want, each whole, with the verdict on each one's root agent span.
func checkExactlyKept(t *testing.T, path string, want map[pcommon.TraceID]fixtureTrace, verdicts map[pcommon.TraceID]string) {
	t.Helper()
	got := sampledOutput(t, path)
	for id, spans := range got {
		f, ok := want[id]
		if !ok {
			t.Errorf("trace %s (verdict %q) arrived with %d spans; it should have been sampled away", id, verdicts[id], len(spans))
			continue
		}
		if ok, why := f.wholeTrace(spans); !ok {
			t.Errorf("trace %s (%s, verdict %q): %s", id, f.capture, verdicts[id], why)
		}
		for _, s := range spans {
			if s.spanID != f.rootAgent {
				continue
			}
			if v, _ := s.attrs[verdictAttr].(string); v != verdicts[id] {
				t.Errorf("trace %s: %s on the root agent span %s = %q, want %q", id, verdictAttr, s, v, verdicts[id])
			}
		}
	}
	for id, f := range want {
		if _, ok := got[id]; !ok {
			t.Errorf("trace %s (%s, verdict %q) did not arrive", id, f.capture, verdicts[id])
		}
	}
}

// checkSampled waits until every trace that must be kept has arrived whole, stops the
// collector, then requires the output to hold exactly those traces, each whole, and the
// verdict on each kept trace's root agent span.
func checkSampled(t *testing.T, col *collector, path string, traces []fixtureTrace, verdicts map[pcommon.TraceID]string, prob probabilisticPolicy) {
	t.Helper()
	want := keptTraces(traces, verdicts, prob)
	waitKept(t, col, path, want, verdicts)
	col.stop(t)
	checkExactlyKept(t, path, want, verdicts)
}

// lateSpan is one more span of f (a child of its root agent span, a new span id), sent after
// f was released and decided.
func (f fixtureTrace) lateSpan(t *testing.T) (ptrace.Traces, string) {
	t.Helper()
	td := ptrace.NewTraces()
	rs := td.ResourceSpans().AppendEmpty()
	rs.Resource().Attributes().PutStr("service.name", "late-tool")
	s := rs.ScopeSpans().AppendEmpty().Spans().AppendEmpty()
	s.SetTraceID(f.traceID)
	sum := sha256.Sum256(append([]byte("late/"), f.traceID[:]...))
	var sid pcommon.SpanID
	copy(sid[:], sum[:8])
	s.SetSpanID(sid)
	s.SetParentSpanID(spanIDOf(t, f.rootAgent))
	s.SetName("execute_tool late_lookup")
	s.SetKind(ptrace.SpanKindInternal)
	var start pcommon.Timestamp
	eachSpan(f.td, func(_ string, sp ptrace.Span) {
		if sp.EndTimestamp() > start {
			start = sp.EndTimestamp()
		}
	})
	s.SetStartTimestamp(start)
	s.SetEndTimestamp(start + 1_000_000)
	return td, sid.String()
}

// ---- instances, generated traces and their outputs ----

// instance is one running collector of a multi-process test.
type instance struct {
	name       string
	col        *collector
	cfgPath    string
	healthURL  string
	metricsURL string
	// reportPath and spansPath: the JSON-lines report and the file exporter output (tier 2)
	reportPath, spansPath string
}

func startInstance(t *testing.T, bin, name, cfgPath string, healthPort, metricsPort int) *instance {
	t.Helper()
	return &instance{
		name: name, cfgPath: cfgPath,
		col:        startCollector(t, bin, cfgPath),
		healthURL:  fmt.Sprintf("http://127.0.0.1:%d/", healthPort),
		metricsURL: fmt.Sprintf("http://127.0.0.1:%d/metrics", metricsPort),
	}
}

// scaleTrace is one cloned capture with what tier 2 must make of it.
type scaleTrace struct {
	c        capture
	want     map[[2]string]wantResult
	handoffs []wantHandoff
}

func keys(m map[string]map[string]any) []string {
	out := make([]string, 0, len(m))
	for k := range m {
		out = append(out, k)
	}
	sort.Strings(out)
	return out
}

// makeScaleTraces clones the two captures n times in all, each with a fresh trace id and
// fresh span ids.
func makeScaleTraces(t *testing.T, rng *rand.Rand, adk, strands capture, n int) map[string]scaleTrace {
	t.Helper()
	out := map[string]scaleTrace{}
	for i := range n {
		var st scaleTrace
		if i%2 == 0 {
			st.c = cloneCapture(t, adk, rng)
			st.want = expectedResults(st.c, "2 agent invocations, 1 handoffs, depth 1, cycles none", 2, "0 times")
			st.handoffs = []wantHandoff{{source: "triage", target: "weather_specialist", detection: "transfer_tool"}}
		} else {
			st.c = cloneCapture(t, strands, rng)
			st.want = expectedResults(st.c, "2 agent invocations, 1 handoffs, depth 1, cycles none", 2, "0 times")
			st.handoffs = []wantHandoff{
				{source: "triage", target: "weather_specialist", detection: "transfer_tool"},
			}
		}
		out[st.c.traceID] = st
	}
	return out
}

func randomTraceID(rng *rand.Rand) pcommon.TraceID {
	var id pcommon.TraceID
	for i := range id {
		id[i] = byte(rng.UintN(256))
	}
	id[0] |= 1 // never the all-zero (invalid) id
	return id
}

func randomSpanID(rng *rand.Rand) pcommon.SpanID {
	var id pcommon.SpanID
	for i := range id {
		id[i] = byte(rng.UintN(256))
	}
	id[0] |= 1
	return id
}

// cloneCapture copies c under a fresh trace id, remapping every span id consistently
// (span, parent and same-trace links).
func cloneCapture(t *testing.T, c capture, rng *rand.Rand) capture {
	t.Helper()
	td := ptrace.NewTraces()
	c.td.CopyTo(td)
	traceID := randomTraceID(rng)
	ids := map[pcommon.SpanID]pcommon.SpanID{}
	remap := func(old pcommon.SpanID) pcommon.SpanID {
		if old.IsEmpty() {
			return old
		}
		if n, ok := ids[old]; ok {
			return n
		}
		n := randomSpanID(rng)
		ids[old] = n
		return n
	}
	oldTrace := c.td.ResourceSpans().At(0).ScopeSpans().At(0).Spans().At(0).TraceID()
	eachSpan(td, func(_ string, s ptrace.Span) {
		s.SetTraceID(traceID)
		s.SetSpanID(remap(s.SpanID()))
		s.SetParentSpanID(remap(s.ParentSpanID()))
		for _, l := range s.Links().All() {
			if l.TraceID() == oldTrace {
				l.SetTraceID(traceID)
				l.SetSpanID(remap(l.SpanID()))
			}
		}
	})
	byOld := map[string]string{}
	for old, n := range ids {
		byOld[old.String()] = n.String()
	}
	out := capture{file: c.file, td: td, traceID: traceID.String(), agentSpans: map[string]string{}}
	for _, old := range c.spanIDs {
		out.spanIDs = append(out.spanIDs, byOld[old])
	}
	for name, old := range c.agentSpans {
		out.agentSpans[name] = byOld[old]
	}
	return out
}

// pruneEmpty drops scopes and resources left without spans.
func pruneEmpty(td ptrace.Traces) {
	td.ResourceSpans().RemoveIf(func(rs ptrace.ResourceSpans) bool {
		rs.ScopeSpans().RemoveIf(func(ss ptrace.ScopeSpans) bool { return ss.Spans().Len() == 0 })
		return rs.ScopeSpans().Len() == 0
	})
}

func grpcExport(ctx context.Context, c ptraceotlp.GRPCClient, td ptrace.Traces) error {
	resp, err := c.Export(ctx, ptraceotlp.NewExportRequestFromTraces(td))
	if err != nil {
		return err
	}
	if ps := resp.PartialSuccess(); ps.RejectedSpans() != 0 || ps.ErrorMessage() != "" {
		return fmt.Errorf("gRPC export: partial success: %d spans rejected: %s", ps.RejectedSpans(), ps.ErrorMessage())
	}
	return nil
}

// readReport decodes a JSON-lines report strictly; a missing file is empty.
func readReport(path string) ([]result, error) {
	lines, err := completeLines(path)
	if os.IsNotExist(err) {
		return nil, nil
	}
	if err != nil {
		return nil, err
	}
	var out []result
	for _, line := range lines {
		var r result
		dec := json.NewDecoder(bytes.NewReader(line))
		dec.DisallowUnknownFields()
		if err := dec.Decode(&r); err != nil {
			return nil, fmt.Errorf("%s: line %.200q: %w", path, line, err)
		}
		out = append(out, r)
	}
	return out, nil
}

// readSpans reads a file exporter output: the spans per trace id.
func readSpans(path string) (map[string][]forwardedSpan, int, error) {
	lines, err := completeLines(path)
	if os.IsNotExist(err) {
		return map[string][]forwardedSpan{}, 0, nil
	}
	if err != nil {
		return nil, 0, err
	}
	spans := map[string][]forwardedSpan{}
	n := 0
	for _, line := range lines {
		td, err := (&ptrace.JSONUnmarshaler{}).UnmarshalTraces(line)
		if err != nil {
			return nil, 0, fmt.Errorf("%s: line %.200q: %w", path, line, err)
		}
		eachSpan(td, func(scope string, s ptrace.Span) {
			n++
			spans[s.TraceID().String()] = append(spans[s.TraceID().String()], forwardedSpan{
				scope: scope, name: s.Name(),
				spanID: s.SpanID().String(), parentID: s.ParentSpanID().String(),
				attrs: s.Attributes().AsRaw(),
			})
		})
	}
	return spans, n, nil
}
