// The harness: starting and stopping the collector, free ports, posting OTLP, reading the
// JSON-lines outputs and scraping Prometheus metrics. The other files hold the scenarios.
package e2e

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"math"
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
	"text/template"
	"time"

	dto "github.com/prometheus/client_model/go"
	"github.com/prometheus/common/expfmt"
	"github.com/prometheus/common/model"
	"go.opentelemetry.io/collector/pdata/ptrace"
	"go.opentelemetry.io/collector/pdata/ptrace/ptraceotlp"

	"github.com/otelcol-handoff/otelcol-handoff/internal/freeport"
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
