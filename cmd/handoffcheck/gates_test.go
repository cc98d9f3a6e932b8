package main

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
	"go.opentelemetry.io/collector/pdata/ptrace"

	"github.com/otelcol-handoff/otelcol-handoff/internal/judge/judgetest"
	"github.com/otelcol-handoff/otelcol-handoff/internal/report"
	"github.com/otelcol-handoff/otelcol-handoff/internal/rules"
	tr "github.com/otelcol-handoff/otelcol-handoff/internal/rules/rulestest"
)

// flightTrace: planner hands a flight search to researcher (agent as tool); the search
// succeeds, fails and is swallowed, or times out and is retried.
func flightTrace(id byte, outcome string) *tr.Trace {
	t := tr.New(id)
	planner := t.Agent(nil, "planner", 0, 100).Input("plan a trip for order A-1001")
	via := t.Tool(planner, "researcher", `{"task": "find flights LHR to JFK for order A-1001"}`, 10, 60)
	r := t.Agent(via, "researcher", 11, 59).Input("find flights LHR to JFK for order A-1001").Tools("search_flights")
	args := `{"from": "LHR", "to": "JFK"}`
	switch outcome {
	case "ok":
		t.Tool(r, "search_flights", args, 12, 20).Result(`[{"flight": "BA117"}]`)
	case "swallowed":
		t.Tool(r, "search_flights", args, 12, 20).Error("ValueError", "unknown airport")
	case "retried":
		t.Tool(r, "search_flights", args, 12, 20).Error("TimeoutError", "upstream timed out")
		t.Tool(r, "search_flights", args, 21, 30).Result(`[{"flight": "BA117"}]`)
	}
	r.Reply("BA117 departs 08:25")
	t.LLM(planner, "gpt-x", tr.UserMessages("plan a trip", "BA117 departs 08:25"), 61, 70)
	return t
}

func writeTraces(t *testing.T, traces ...*tr.Trace) []string {
	t.Helper()
	dir := t.TempDir()
	var paths []string
	for i, tt := range traces {
		b, err := (&ptrace.JSONMarshaler{}).MarshalTraces(tt.Traces())
		require.NoError(t, err)
		p := filepath.Join(dir, "trace"+string(rune('a'+i))+".json")
		require.NoError(t, os.WriteFile(p, b, 0o644))
		paths = append(paths, p)
	}
	return paths
}

func gatedConfig(t *testing.T, extra string) string {
	t.Helper()
	deterministic := "" // without a judge the rubric step must say it wants the deterministic parts alone
	if extra == "" {
		deterministic = "            deterministicOnly: true\n"
	}
	return liveConfig(t, `exporters:
  assertion:
`+extra+`
    gates:
      default: {ScopeFidelity: 0.90, RecoveryOnError: 0.85}
      pairs:
        - {from: planner, to: researcher, thresholds: {RecoveryOnError: 0.5}}
    cases:
      - name: seams
        steps:
          - action: ASSERT_AGENT_TOPOLOGY
          - action: EXPECT_HANDOFF_RUBRICS
            rubrics: [ScopeFidelity, RecoveryOnError]
`+deterministic+`service: {pipelines: {traces: {receivers: [otlp], processors: [handoff], exporters: [assertion]}}}
`)
}

// TestGatePasses: over three traces, one swallowed error of planner -> researcher is
// outweighed by a retried one (RecoveryOnError 0.50 >= 0.50): the gates pass, and so does
// the run, although that handoff's rubric failed.
func TestGatePasses(t *testing.T) {
	files := writeTraces(t, flightTrace(0x51, "ok"), flightTrace(0x52, "swallowed"), flightTrace(0x53, "retried"))
	md := filepath.Join(t.TempDir(), "summary.md")
	code, out, errOut := runCmd(t, append([]string{"replay", "--config", gatedConfig(t, ""), "--markdown", md}, files...)...)
	require.Equal(t, exitPass, code, out+errOut)
	// Each line names the trace's file and its root span's service.
	require.Equal(t, "SKIPPED seams EXPECT_HANDOFF_RUBRICS#2.RecoveryOnError trace 51515151515151515151515151515151 ("+files[0]+", service test-agent): "+
		"no error on the handoff planner -> researcher: nothing to recover from\n"+
		"FAIL seams EXPECT_HANDOFF_RUBRICS#2.RecoveryOnError trace 52525252525252525252525252525252 ("+files[1]+", service test-agent) (gated): "+
		`search_flights (span 0000000000005204) failed ("ValueError: unknown airport"); researcher did not retry it, fall back or fail, `+
		"and planner did not retry, fall back, escalate or fail: the error was swallowed\n"+
		"GATE PASS planner -> researcher ScopeFidelity: mean 1.00 over 3 handoffs, threshold 0.90\n"+
		"GATE PASS planner -> researcher RecoveryOnError: mean 0.50 over 2 handoffs, threshold 0.50\n"+
		"handoffcheck: 3 traces, 9 assertions\n"+
		"7 passed, 1 failed (1 gated), 0 errors, 1 skipped\n"+
		"gates: 2 passed, 0 failed\n", out)
	summary, err := os.ReadFile(md)
	require.NoError(t, err)
	require.Contains(t, string(summary), "**PASSED**")
	require.Contains(t, string(summary), `| planner -\> researcher | RecoveryOnError | 0.50 | 0.50 | 2 | pass |`)
}

// TestGateFails: the same replay plus the real Strands capture whose tool error is
// swallowed: triage -> weather_specialist RecoveryOnError 0.00 < 0.85 fails its gate; the
// run exits 1 and the reports name the pair, the axis, the score and the threshold.
func TestGateFails(t *testing.T) {
	files := writeTraces(t, flightTrace(0x51, "ok"), flightTrace(0x52, "swallowed"), flightTrace(0x53, "retried"))
	files = append(files, "../../testdata/traces/strands-tool-error.json", strands)
	dir := t.TempDir()
	md, junit := filepath.Join(dir, "summary.md"), filepath.Join(dir, "junit.xml")
	code, out, errOut := runCmd(t, append([]string{"replay", "--config", gatedConfig(t, ""), "--markdown", md, "--junit", junit}, files...)...)
	require.Equal(t, exitFail, code, out+errOut)
	require.Contains(t, out, "GATE FAIL triage -> weather_specialist RecoveryOnError: mean 0.00 over 1 handoff is below the threshold 0.85\n")
	require.Contains(t, out, "GATE PASS triage -> weather_specialist ScopeFidelity: mean 1.00 over 2 handoffs, threshold 0.90\n")
	require.Contains(t, out, "GATE PASS planner -> researcher RecoveryOnError: mean 0.50 over 2 handoffs, threshold 0.50\n")
	require.True(t, strings.HasSuffix(out, "gates: 3 passed, 1 failed\n"), out)

	summary, err := os.ReadFile(md)
	require.NoError(t, err)
	require.Contains(t, string(summary), `| triage -\> weather\_specialist | RecoveryOnError | 0.00 | 0.85 | 1 | **FAIL** |`)
	require.Contains(t, string(summary), "Gates: 1 of 4 failed.")
	report, err := os.ReadFile(junit)
	require.NoError(t, err)
	require.Contains(t, string(report), `<failure message="triage -&gt; weather_specialist RecoveryOnError: mean 0.00 over 1 handoff is below the threshold 0.85" type="gate">`)
}

// TestGateWithJudge: the judge named in the config grades through the fake server; the
// summary names the judge's model and template.
func TestGateWithJudge(t *testing.T) {
	srv := judgetest.New(t, judgetest.ByContent(judgetest.Pass, judgetest.Route{Contains: "Rubric: ScopeFidelity", Fixture: judgetest.Fail}))
	files := writeTraces(t, flightTrace(0x51, "ok"), flightTrace(0x53, "retried"))
	cfg := gatedConfig(t, "    judge: {endpoint: '"+srv.URL+"', model: fake-judge, retries: 0}")
	md := filepath.Join(t.TempDir(), "summary.md")
	code, out, errOut := runCmd(t, append([]string{"replay", "--config", cfg, "--markdown", md}, files...)...)
	require.Equal(t, exitFail, code, out+errOut)
	require.Contains(t, out, "GATE FAIL planner -> researcher ScopeFidelity: mean 0.20 over 2 handoffs is below the threshold 0.90\n")
	require.Contains(t, out, "GATE PASS planner -> researcher RecoveryOnError: mean 0.92 over 1 handoff, threshold 0.50\n")
	require.True(t, strings.HasSuffix(out, "gates: 1 passed, 1 failed\njudge: fake-judge, template handoff_v1, temperature 0, 1 sample\n"), out)
	summary, err := os.ReadFile(md)
	require.NoError(t, err)
	require.Contains(t, string(summary), "Judge: `fake-judge`, prompt template `handoff_v1`, temperature 0, 1 sample per verdict (majority).")
	require.Equal(t, 3, srv.Count(), "2 ScopeFidelity, 1 RecoveryOnError (the trace without an error is not sent)")
}

// TestReplayWaitsForEveryGrading: with a one-trace grading queue and one worker, a replay
// still grades every trace before its verdict (a full queue makes it wait, never turns
// results into errors), and its report has each graded result.
func TestReplayWaitsForEveryGrading(t *testing.T) {
	srv := judgetest.New(t, func(judgetest.Request, int) judgetest.Reply {
		r := judgetest.Fixture(judgetest.Pass)
		r.Delay = 20 * time.Millisecond // slower than the replay feeds traces: the queue fills
		return r
	})
	var traces []*tr.Trace
	for i := range 6 {
		traces = append(traces, flightTrace(byte(0x60+i), "retried"))
	}
	files := writeTraces(t, traces...)
	cfg := gatedConfig(t, "    judge: {endpoint: '"+srv.URL+"', model: fake-judge, retries: 0, concurrency: 1, queue_size: 1, cache_size: 0}")
	out := filepath.Join(t.TempDir(), "results.jsonl")
	code, stdout, stderr := runCmd(t, append([]string{"replay", "--config", cfg, "--json", out}, files...)...)
	require.Equal(t, exitPass, code, stdout+stderr)
	results, err := report.ReadJSONLines(out)
	require.NoError(t, err)
	graded := 0
	for _, r := range results {
		require.NotEqual(t, rules.Error, r.Outcome, r.Message)
		if r.Judge != nil {
			graded++
		}
	}
	require.Equal(t, 12, graded, "ScopeFidelity and RecoveryOnError on each of 6 traces")
	require.Equal(t, 12, srv.Count())
}

// TestGradingErrorFailsTheRun: a judge grading that errs is an `error` result, and an error
// exits 1 by default; --fail-on fail relaxes it (exit 0), an empty --fail-on is refused.
func TestGradingErrorFailsTheRun(t *testing.T) {
	srv := judgetest.New(t, judgetest.Always(judgetest.Malformed))
	files := writeTraces(t, flightTrace(0x51, "ok"))
	cfg := gatedConfig(t, "    judge: {endpoint: '"+srv.URL+"', model: fake-judge, retries: 0}")
	code, out, errOut := runCmd(t, append([]string{"replay", "--config", cfg}, files...)...)
	require.Equal(t, exitFail, code, out+errOut)
	require.Contains(t, out, "ERROR seams EXPECT_HANDOFF_RUBRICS#2.ScopeFidelity trace 51515151515151515151515151515151 ("+files[0]+", service test-agent): judge error: ")
	require.Contains(t, out, "\n1 passed, 0 failed, 1 errors, 1 skipped\n")

	code, out, errOut = runCmd(t, append([]string{"replay", "--config", cfg, "--fail-on", "fail"}, files...)...)
	require.Equal(t, exitPass, code, out+errOut)
	require.Contains(t, out, "\n1 passed, 0 failed, 1 errors, 1 skipped\n")

	code, _, errOut = runCmd(t, append([]string{"replay", "--config", cfg, "--fail-on", ""}, files...)...)
	require.Equal(t, exitUsage, code)
	require.Equal(t, "handoffcheck: --fail-on: name at least one outcome (fail, error, skipped; default fail,error)\n", errOut)

	// skipped added, error relaxed: the RecoveryOnError rubric of a run without an error is
	// skipped (nothing to recover from), so the run fails.
	code, _, _ = runCmd(t, append([]string{"replay", "--config", cfg, "--fail-on", "fail,skipped"}, files...)...)
	require.Equal(t, exitFail, code)
}
