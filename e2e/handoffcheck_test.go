package e2e

import (
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"testing"
)

// canonical renders results order-free, optionally without the trace id (a live client
// makes a new trace id on every run).
func canonical(rs []result, withTrace bool) []string {
	var out []string
	for _, r := range rs {
		id := r.TraceID
		if !withTrace {
			id = ""
		}
		out = append(out, strings.Join([]string{
			id, r.Case, r.Step, r.Outcome, r.Expected, r.Actual, r.Message,
			fmt.Sprint(r.Complete),
		}, " | "))
	}
	sort.Strings(out)
	return out
}

// TestHandoffcheckMatchesCollector: the same config and traces through the built
// collector (over OTLP) and through handoffcheck (replayed from files) give the same
// verdicts, to the byte.
func TestHandoffcheckMatchesCollector(t *testing.T) {
	bin := collectorBinary(t)
	dir := t.TempDir()
	params := newConfigParams(t, dir)
	cfgPath := writeConfig(t, dir, params)

	files := []string{"google-adk-ok.json", "strands-ok.json"}
	col := startReady(t, bin, params, cfgPath)
	want := map[string]int{}
	var paths []string
	for _, f := range files {
		c := loadCapture(t, f)
		postTraces(t, params.tracesURL(), c.td)
		want[c.traceID] = 6
		paths = append(paths, filepath.Join("..", "testdata", "traces", f))
	}
	fromCollector := col.waitForResults(t, params.ReportPath, want)
	col.stop(t)

	out := filepath.Join(dir, "handoffcheck.jsonl")
	code, stdout, stderr := runCheck(t, os.Environ(), append([]string{"replay", "--config", cfgPath, "--json", out}, paths...)...)
	if code != 1 {
		t.Fatalf("handoffcheck exit %d, want 1 (the weather_overrun case fails)\n%s%s", code, stdout, stderr)
	}
	got, wantLines := canonical(readResults(t, out), true), canonical(fromCollector, true)
	if strings.Join(got, "\n") != strings.Join(wantLines, "\n") {
		t.Errorf("handoffcheck and the collector disagree:\nhandoffcheck:\n%s\ncollector:\n%s", strings.Join(got, "\n"), strings.Join(wantLines, "\n"))
	}
	if !strings.Contains(stdout, "8 passed, 4 failed, 0 errors, 0 skipped") {
		t.Errorf("summary:\n%s", stdout)
	}
}

// TestHandoffcheckRunWrapsRealClient: `handoffcheck run` captures a real Strands client
// live (seed 000's LIVE source in a test run) and gives the verdicts the collector gives;
// a command that fails makes it exit 3.
func TestHandoffcheckRunWrapsRealClient(t *testing.T) {
	node := requireClients(t)
	bin := collectorBinary(t)
	dir := t.TempDir()
	params := newConfigParams(t, dir)
	cfgPath := renderConfig(t, dir, "clients.yaml.tmpl", params)
	env := clientEnv()
	script := filepath.Join(clientsDir, "strands-swarm.mjs")

	// The collector's verdicts on one run of the scenario...
	col := startReady(t, bin, params, cfgPath)
	var sc clientScenario
	for _, s := range clientScenarios() {
		if s.name == "strands-swarm" {
			sc = s
		}
	}
	rep := runClient(t, node, sc, params.otlpEndpoint())
	fromCollector := col.waitForResults(t, params.ReportPath, map[string]int{rep.Spans[0].TraceID: len(sc.results)})
	col.stop(t)

	// ...and handoffcheck's on another, captured live.
	out := filepath.Join(dir, "live.jsonl")
	code, stdout, stderr := runCheck(t, env, "run", "--config", cfgPath, "--json", out, "--", node, script, "ok")
	if code != 1 {
		t.Fatalf("handoffcheck run: exit %d, want 1 (a case fails on this scenario)\n%s%s", code, stdout, stderr)
	}
	live := readResults(t, out)
	if len(live) != len(sc.results) {
		t.Fatalf("handoffcheck run judged %d assertions, want %d:\n%s", len(live), len(sc.results), stdout)
	}
	// Durations and span ids differ between two runs; outcomes and cases must not.
	outcomes := func(rs []result) []string {
		var o []string
		for _, r := range rs {
			o = append(o, r.Case+" "+r.Step+" "+r.Outcome)
		}
		sort.Strings(o)
		return o
	}
	if a, b := outcomes(live), outcomes(fromCollector); strings.Join(a, "\n") != strings.Join(b, "\n") {
		t.Errorf("live capture and collector disagree:\nhandoffcheck run:\n%s\ncollector:\n%s", strings.Join(a, "\n"), strings.Join(b, "\n"))
	}

	// A wrapped command that fails: exit 3, its code reported.
	code, _, stderr = runCheck(t, env, "run", "--config", cfgPath, "--", node, "-e", "process.exit(5)")
	if code != 3 || !strings.Contains(stderr, "the command failed with exit code 5") {
		t.Errorf("failing command: exit %d, stderr:\n%s", code, stderr)
	}
}

// TestHandoffcheckCLI: the built binary's help, version and usage errors, as a user and a
// script meet them: --help on stdout with exit 0, a bad flag or command exit 2 on stderr,
// --summary json one JSON object on stdout.
func TestHandoffcheckCLI(t *testing.T) {
	code, stdout, stderr := runCheck(t, os.Environ(), "--help")
	if code != 0 || stderr != "" || !strings.Contains(stdout, "usage:\n  handoffcheck replay --config") {
		t.Errorf("--help: exit %d\nstdout:\n%s\nstderr:\n%s", code, stdout, stderr)
	}
	code, stdout, stderr = runCheck(t, os.Environ(), "--version")
	if code != 0 || !strings.HasPrefix(stdout, "handoffcheck ") || !strings.Contains(stdout, ", collector v0.") {
		t.Errorf("--version: exit %d\nstdout:\n%s\nstderr:\n%s", code, stdout, stderr)
	}
	code, stdout, stderr = runCheck(t, os.Environ(), "version")
	if code != 0 || !strings.Contains(stdout, "\ncollector: v0.") {
		t.Errorf("version: exit %d\nstdout:\n%s\nstderr:\n%s", code, stdout, stderr)
	}
	for _, args := range [][]string{{}, {"check"}, {"replay", "--bogus"}} {
		code, stdout, stderr = runCheck(t, os.Environ(), args...)
		if code != 2 || stdout != "" || !strings.Contains(stderr, "usage:") {
			t.Errorf("%q: exit %d, want 2 with the usage on stderr\nstdout:\n%s\nstderr:\n%s", args, code, stdout, stderr)
		}
	}

	cfg := filepath.Join("..", "examples", "ci", "handoff-config.yaml")
	spans := filepath.Join("..", "testdata", "traces", "scenario-strands-error-swallowed.json")
	code, stdout, stderr = runCheck(t, os.Environ(), "replay", "--config", cfg, "--summary", "json", spans)
	var s struct {
		ExitCode int `json:"exit_code"`
		Cases    []struct {
			Name      string `json:"name"`
			NotPassed []struct {
				Files   []string `json:"files"`
				Service string   `json:"service"`
			} `json:"not_passed"`
		} `json:"cases"`
	}
	if err := json.Unmarshal([]byte(stdout), &s); err != nil || code != 1 || s.ExitCode != 1 || len(s.Cases) != 1 ||
		len(s.Cases[0].NotPassed) != 1 || s.Cases[0].NotPassed[0].Service != "e2e-strands-error-swallowed" ||
		strings.Join(s.Cases[0].NotPassed[0].Files, ",") != spans {
		t.Errorf("--summary json: exit %d (%v)\nstdout:\n%s\nstderr:\n%s", code, err, stdout, stderr)
	}
	if !strings.Contains(stderr, "FAIL weather_delegation ASSERT_AGENT_TOPOLOGY#1 trace 7e4d2042aa8ce9373baccfde74e275cb ("+spans+", service e2e-strands-error-swallowed): ") {
		t.Errorf("the FAIL line (on stderr with --summary json) names the file and service:\n%s", stderr)
	}
}
