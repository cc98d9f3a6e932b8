package e2e

// The judge off the hot path, on the built collector: SIGTERM with a slow judge and a few
// hundred traces waiting for their gradings exits within its budget with every span
// forwarded and every verdict written; a JSON-lines report on a full disk never fails a
// client's request.

import (
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"sort"
	"strings"
	"testing"
	"time"

	"github.com/otelcol-handoff/otelcol-handoff/internal/judge/judgetest"
)

// judgeShutdownParams fills testdata/judge_shutdown.yaml.tmpl.
type judgeShutdownParams struct {
	HTTPPort, HealthPort, MetricsPort int
	ReportPath, SpansPath, JUnitPath  string
	JudgeURL                          string // empty: no judge
}

func startJudgeCollector(t *testing.T, set func(*judgeShutdownParams)) (*instance, judgeShutdownParams) {
	t.Helper()
	dir := t.TempDir()
	ports := freePorts(t, 3)
	p := judgeShutdownParams{
		HTTPPort: ports[0], HealthPort: ports[1], MetricsPort: ports[2],
		ReportPath: filepath.Join(dir, "verdicts.jsonl"), SpansPath: filepath.Join(dir, "spans.jsonl"),
	}
	if set != nil {
		set(&p)
	}
	in := startInstance(t, collectorBinary(t), t.Name(), renderConfig(t, dir, "judge_shutdown.yaml.tmpl", p), p.HealthPort, p.MetricsPort)
	in.reportPath, in.spansPath = p.ReportPath, p.SpansPath
	in.col.waitReady(t, in.healthURL)
	return in, p
}

// judgedResult is a JSON-lines result with the judge's part.
type judgedResult struct {
	result
	Axis  string          `json:"axis"`
	Judge json.RawMessage `json:"judge"`
}

func readJudgedReport(t *testing.T, path string) map[string][]judgedResult {
	t.Helper()
	lines, err := completeLines(path)
	if err != nil {
		t.Fatal(err)
	}
	out := map[string][]judgedResult{}
	for _, line := range lines {
		var r judgedResult
		if err := json.Unmarshal(line, &r); err != nil {
			t.Fatalf("report line %.200q: %v", line, err)
		}
		out[r.TraceID] = append(out[r.TraceID], r)
	}
	return out
}

// The axes a judge grades on the strands-agent-tool capture (its handoff's content is
// captured; no error, so RecoveryOnError is skipped without asking).
var judgedAxes = []string{"DispatchCorrectness", "ScopeFidelity", "ResultIntegration"}

func TestJudgeShutdownUnderLoad(t *testing.T) {
	// The judge takes 30 s per answer: at SIGTERM every grading is in flight or queued.
	judge := judgetest.New(t, func(judgetest.Request, int) judgetest.Reply {
		r := judgetest.Fixture(judgetest.Pass)
		r.Delay = 30 * time.Second
		return r
	})
	in, p := startJudgeCollector(t, func(p *judgeShutdownParams) {
		p.JudgeURL = judge.URL
		p.JUnitPath = filepath.Join(filepath.Dir(p.ReportPath), "assertions.junit.xml")
	})
	tracesURL := fmt.Sprintf("http://127.0.0.1:%d/v1/traces", p.HTTPPort)
	peakRSS := watchPeakRSS(in.col)

	base := loadCapture(t, "strands-agent-tool.json")
	rng := newRNG(t)
	const n = 300
	traces := make([]capture, n)
	spansIn := 0
	for i := range traces {
		traces[i] = cloneCapture(t, base, rng)
		spansIn += len(traces[i].spanIDs)
	}
	began := time.Now()
	for _, c := range traces {
		postTraces(t, tracesURL, c.td) // every POST must get 200
	}
	t.Logf("posted %d traces (%d spans) in %s", n, spansIn, time.Since(began).Round(time.Millisecond))

	// Released and evaluated while the judge has not answered one grading.
	in.col.eventually(t, resultTimeout, "every trace's deterministic results", func() (bool, string) {
		m := scrape(t, in.metricsURL)
		v := m.sum("otelcol_exporter_assertion_traces_evaluated", nil)
		return v >= n && judge.Count() > 0, fmt.Sprintf("%v traces evaluated, %d judge requests", v, judge.Count())
	})
	m := scrape(t, in.metricsURL)
	waiting := m.sum("otelcol_exporter_assertion_judge_queue_size", nil)
	if waiting != n {
		t.Errorf("grading queue holds %v traces, want %d (none answered yet)", waiting, n)
	}

	stopAt := time.Now()
	in.col.stop(t) // SIGTERM; requires a clean exit within stopTimeout
	took := time.Since(stopAt)
	if took > 30*time.Second { // Kubernetes' default terminationGracePeriodSeconds
		t.Errorf("exit took %s after SIGTERM", took)
	}

	// Every acknowledged span is forwarded exactly once.
	forwarded, spansOut, err := readSpans(in.spansPath)
	if err != nil {
		t.Fatal(err)
	}
	for _, c := range traces {
		count := map[string]int{}
		for _, s := range forwarded[c.traceID] {
			count[s.spanID]++
		}
		for _, sid := range c.spanIDs {
			if count[sid] != 1 {
				t.Errorf("trace %s: span %s forwarded %d times, want once", c.traceID, sid, count[sid])
			}
		}
	}

	// Every verdict is written: the deterministic ones, and each judged axis as "shut down
	// before grading" (none was answered).
	got := readJudgedReport(t, in.reportPath)
	shut := 0
	for _, c := range traces {
		rs := got[c.traceID]
		var steps []string
		for _, r := range rs {
			steps = append(steps, r.Step)
			if r.Action != "EXPECT_HANDOFF_RUBRICS" || !slices.Contains(judgedAxes, r.Axis) {
				continue
			}
			if r.Outcome != "error" || !strings.Contains(r.Message, "shut down before grading") || len(r.Judge) != 0 {
				t.Errorf("trace %s %s: %s %q, want error \"shut down before grading\"", c.traceID, r.Step, r.Outcome, r.Message)
			}
			shut++
		}
		sort.Strings(steps)
		want := []string{
			"ASSERT_AGENT_TOPOLOGY#1",
			"EXPECT_HANDOFF_RUBRICS#2.DispatchCorrectness", "EXPECT_HANDOFF_RUBRICS#2.RecoveryOnError",
			"EXPECT_HANDOFF_RUBRICS#2.ResultIntegration", "EXPECT_HANDOFF_RUBRICS#2.ScopeFidelity",
		}
		if strings.Join(steps, ",") != strings.Join(want, ",") {
			t.Errorf("trace %s: results %v, want each of %v once", c.traceID, steps, want)
		}
	}
	if shut != n*len(judgedAxes) {
		t.Errorf("%d results shut down before grading, want %d", shut, n*len(judgedAxes))
	}
	junit := readFile(t, p.JUnitPath)
	if c := strings.Count(junit, "shut down before grading"); c != shut {
		t.Errorf("JUnit report names \"shut down before grading\" %d times, want %d", c, shut)
	}
	t.Logf("SIGTERM with %v traces waiting for a 30 s judge (%d requests in flight or sent): exited cleanly in %s; spans in %d, out %d (HANDOFF spans included); %d verdicts shut down before grading; peak RSS %d MB",
		waiting, judge.Count(), took.Round(time.Millisecond), spansIn, spansOut, shut, peakRSS()/1024)
}

func TestJudgeReportDiskFull(t *testing.T) {
	in, p := startJudgeCollector(t, func(p *judgeShutdownParams) { p.ReportPath = "/dev/full" })
	tracesURL := fmt.Sprintf("http://127.0.0.1:%d/v1/traces", p.HTTPPort)
	base := loadCapture(t, "strands-agent-tool.json")
	rng := newRNG(t)
	want := map[string]int{}
	for range 20 {
		c := cloneCapture(t, base, rng)
		postTraces(t, tracesURL, c.td) // 200, or the test fails: no error reaches the client
		want[c.traceID] = len(c.spanIDs)
	}
	in.col.waitForSpans(t, in.spansPath, want)
	var failures float64
	in.col.eventually(t, resultTimeout, "report write failures counted", func() (bool, string) {
		m := scrape(t, in.metricsURL)
		failures = m.sum("otelcol_exporter_assertion_report_write_failures", nil)
		return failures > 0, fmt.Sprintf("%v failures; series: %s", failures, m.names("otelcol_exporter_assertion_report"))
	})
	in.col.stop(t)
	logged := strings.Count(in.col.output(), "could not write the JSON lines report")
	if logged < 1 || logged > 2 {
		t.Errorf("the write failure was logged %d times, want once (rate-limited)", logged)
	}
	t.Logf("JSON lines on /dev/full: 20 POSTs answered 200, every span forwarded, %v write failures counted, %d log lines", failures, logged)
}

func readFile(t *testing.T, path string) string {
	t.Helper()
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}
