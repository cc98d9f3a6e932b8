package e2e

import (
	"bufio"
	"bytes"
	"context"
	"crypto/sha256"
	"encoding/json"
	"encoding/xml"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"testing"
	"time"

	"go.yaml.in/yaml/v3"

	"github.com/otelcol-handoff/otelcol-handoff/internal/readmetest"
)

// The GitHub Action's logic (action.yml calls it): run here as a runner would, with a
// temporary GITHUB_STEP_SUMMARY, GITHUB_OUTPUT and RUNNER_TEMP, on the real captures.
const actionScript = "../scripts/action.sh"

// actionRun is what one run of `action.sh check` left behind.
type actionRun struct {
	code    int
	log     string            // stdout and stderr, as the runner's log shows them
	summary string            // what it appended to GITHUB_STEP_SUMMARY
	outputs map[string]string // what it wrote to GITHUB_OUTPUT
}

// runAction runs `scripts/action.sh check` from the repository root with the inputs given
// (INPUT_MODE, INPUT_CONFIG, ...), handoffcheck built by `make build`.
func runAction(t *testing.T, inputs map[string]string) actionRun {
	t.Helper()
	if _, err := exec.LookPath("jq"); err != nil {
		t.Fatalf("jq not found (%v): the action's annotations need it (GitHub's runners have it; `make test` installs it)", err)
	}
	script, err := filepath.Abs(actionScript)
	if err != nil {
		t.Fatal(err)
	}
	tmp := t.TempDir()
	summary, outputs := filepath.Join(tmp, "step_summary.md"), filepath.Join(tmp, "github_output")
	for _, f := range []string{summary, outputs} {
		if err := os.WriteFile(f, nil, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	env := []string{
		"PATH=" + os.Getenv("PATH"), "HOME=" + os.Getenv("HOME"),
		"HANDOFFCHECK=" + handoffcheck(t),
		"GITHUB_STEP_SUMMARY=" + summary, "GITHUB_OUTPUT=" + outputs, "RUNNER_TEMP=" + tmp,
	}
	for k, v := range inputs {
		env = append(env, k+"="+v)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 90*time.Second)
	defer cancel()
	cmd := exec.CommandContext(ctx, "bash", script, "check")
	cmd.Dir = ".."
	cmd.Env = env
	cmd.WaitDelay = 5 * time.Second
	var log bytes.Buffer
	cmd.Stdout, cmd.Stderr = &log, &log
	run := actionRun{}
	err = cmd.Run()
	var exitErr *exec.ExitError
	switch {
	case err == nil:
	case errors.As(err, &exitErr):
		run.code = exitErr.ExitCode()
	default:
		t.Fatalf("action.sh did not run: %v\n%s", err, log.String())
	}
	run.log = log.String()
	b, err := os.ReadFile(summary)
	if err != nil {
		t.Fatal(err)
	}
	run.summary = string(b)
	run.outputs = map[string]string{}
	b, err = os.ReadFile(outputs)
	if err != nil {
		t.Fatal(err)
	}
	for _, line := range strings.Split(strings.TrimSuffix(string(b), "\n"), "\n") {
		k, v, ok := strings.Cut(line, "=")
		if !ok {
			t.Fatalf("GITHUB_OUTPUT line %q is not name=value:\n%s", line, b)
		}
		if _, dup := run.outputs[k]; dup {
			t.Errorf("GITHUB_OUTPUT sets %s twice", k)
		}
		run.outputs[k] = v
	}
	return run
}

type actionResult struct {
	TraceID string `json:"trace_id"`
	Case    string `json:"case"`
	Step    string `json:"step"`
	Outcome string `json:"outcome"`
	Message string `json:"message"`
	Gated   bool   `json:"gated"`
}

func readActionResults(t *testing.T, path string) []actionResult {
	t.Helper()
	f, err := os.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	var out []actionResult
	sc := bufio.NewScanner(f)
	sc.Buffer(nil, 1<<20)
	for sc.Scan() {
		var r actionResult
		if err := json.Unmarshal(sc.Bytes(), &r); err != nil {
			t.Fatalf("%s: %v", path, err)
		}
		out = append(out, r)
	}
	if err := sc.Err(); err != nil {
		t.Fatal(err)
	}
	return out
}

// annotation is one workflow command of the log, its title and message unescaped.
type annotation struct{ level, title, message string }

var annotationLine = regexp.MustCompile(`^::(error|warning|notice) title=([^:]*)::(.*)$`)

func annotations(t *testing.T, log string) []annotation {
	t.Helper()
	msg := strings.NewReplacer("%0D", "\r", "%0A", "\n", "%25", "%")
	prop := strings.NewReplacer("%0D", "\r", "%0A", "\n", "%3A", ":", "%2C", ",", "%25", "%")
	var out []annotation
	for _, line := range strings.Split(log, "\n") {
		if m := annotationLine.FindStringSubmatch(line); m != nil {
			out = append(out, annotation{m[1], prop.Replace(m[2]), msg.Replace(m[3])})
		} else if strings.HasPrefix(line, "::error") || strings.HasPrefix(line, "::warning") {
			t.Errorf("malformed annotation: %q", line)
		}
	}
	return out
}

// checkReports: the summary is the Markdown report, the outputs name the reports and count
// the results of the JSON lines, the JUnit report parses and counts the same failures.
func checkReports(t *testing.T, run actionRun) []actionResult {
	t.Helper()
	for _, k := range []string{"report-dir", "junit", "markdown", "json"} {
		if run.outputs[k] == "" {
			t.Fatalf("no %s output: %v\n%s", k, run.outputs, run.log)
		}
	}
	md, err := os.ReadFile(run.outputs["markdown"])
	if err != nil {
		t.Fatal(err)
	}
	if run.summary != string(md) || !strings.HasPrefix(run.summary, "# ") {
		t.Errorf("step summary is not the Markdown report:\n%s", run.summary)
	}
	results := readActionResults(t, run.outputs["json"])
	if len(results) == 0 {
		t.Fatal("no results in the JSON lines")
	}
	counts := map[string]int{}
	for _, r := range results {
		counts[r.Outcome]++
	}
	for out, outcome := range map[string]string{"passed": "pass", "failed": "fail", "errors": "error", "skipped": "skipped"} {
		if got, want := run.outputs[out], strconv.Itoa(counts[outcome]); got != want {
			t.Errorf("output %s = %q, want %s (the JSON lines)", out, got, want)
		}
	}
	raw, err := os.ReadFile(run.outputs["junit"])
	if err != nil {
		t.Fatal(err)
	}
	var junit struct {
		Tests    int `xml:"tests,attr"`
		Failures int `xml:"failures,attr"`
	}
	if err := xml.Unmarshal(raw, &junit); err != nil {
		t.Fatalf("JUnit report: %v", err)
	}
	if junit.Tests != len(results) || junit.Failures != counts["fail"] {
		t.Errorf("JUnit: %d tests, %d failures; JSON lines: %d results, %d failed", junit.Tests, junit.Failures, len(results), counts["fail"])
	}
	// handoffcheck's output runs between ::stop-commands:: and its token: none of it is read
	// as a workflow command.
	m := regexp.MustCompile(`(?m)^::stop-commands::(\S+)$`).FindStringSubmatch(run.log)
	if m == nil || !strings.Contains(run.log, "\n::"+m[1]+"::\n") {
		t.Errorf("handoffcheck's output is not fenced by stop-commands:\n%s", run.log)
	} else if before, _, _ := strings.Cut(run.log, "::"+m[1]+"::"); len(annotations(t, before)) != 0 {
		t.Errorf("annotations inside the stop-commands fence:\n%s", run.log)
	}
	return results
}

// TestActionScriptPassing: a replay where every assertion holds exits 0, writes the
// report to the step summary and no annotation.
func TestActionScriptPassing(t *testing.T) {
	run := runAction(t, map[string]string{
		"INPUT_CONFIG": "examples/ci/handoff-config.yaml",
		"INPUT_FILES":  "testdata/traces/strands-ok.json testdata/traces/google-adk-ok.json",
	})
	if run.code != 0 || run.outputs["exit-code"] != "0" {
		t.Fatalf("exit %d, exit-code output %q, want 0:\n%s", run.code, run.outputs["exit-code"], run.log)
	}
	results := checkReports(t, run)
	for _, r := range results {
		if r.Outcome != "pass" {
			t.Errorf("%s %s trace %s: %s", r.Case, r.Step, r.TraceID, r.Outcome)
		}
	}
	if a := annotations(t, run.log); len(a) != 0 {
		t.Errorf("annotations on a passing run: %v", a)
	}
	if len(results) != 6 {
		t.Errorf("%d results, want 6 (3 steps over 2 traces)", len(results))
	}
}

// TestActionScriptFailing: a replay (files by glob) where a case fails exits 1, and each
// failing result of the JSON lines becomes one ::error annotation naming its case, step,
// message and trace, unescaped back to the same text.
func TestActionScriptFailing(t *testing.T) {
	run := runAction(t, map[string]string{
		"INPUT_MODE":   "replay",
		"INPUT_CONFIG": "config/default.yaml",
		"INPUT_FILES":  "testdata/traces/strands-ok.json testdata/traces/openai-agents-*.json",
		"INPUT_ARGS":   "--fail-on fail,error",
	})
	if run.code != 1 || run.outputs["exit-code"] != "1" {
		t.Fatalf("exit %d, exit-code output %q, want 1:\n%s", run.code, run.outputs["exit-code"], run.log)
	}
	results := checkReports(t, run)
	traces := map[string]bool{}
	var want []annotation
	for _, r := range results {
		traces[r.TraceID] = true
		if r.Outcome == "fail" && !r.Gated || r.Outcome == "error" {
			want = append(want, annotation{"error", strings.ToUpper(r.Outcome) + " " + r.Case + " / " + r.Step, r.Message + " (trace " + r.TraceID + ")"})
		}
	}
	if len(traces) != 3 {
		t.Errorf("%d traces judged, want 3 (strands-ok and the two openai-agents captures)", len(traces))
	}
	got := annotations(t, run.log)
	if len(want) == 0 || len(got) != len(want) {
		t.Fatalf("%d annotations, want %d (one per failure):\n%s", len(got), len(want), run.log)
	}
	for i := range want {
		if got[i] != want[i] {
			t.Errorf("annotation %d:\n got %+v\nwant %+v", i, got[i], want[i])
		}
		if !strings.Contains(got[i].title, "specialist_tool_budget") || !strings.Contains(got[i].message, "over maxToolCalls 1") {
			t.Errorf("annotation %d does not name the broken budget: %+v", i, got[i])
		}
	}
	// Markdown-escaped as the summary writes names: specialist\_tool\_budget renders as the name.
	if !strings.Contains(run.summary, `specialist\_tool\_budget`) || !strings.Contains(run.summary, "```mermaid") {
		t.Errorf("step summary lacks the failing case or its DAG:\n%s", run.summary)
	}

	// A report over GitHub's step summary limit is cut at a line, with a pointer to the artifact.
	md, err := os.ReadFile(run.outputs["markdown"])
	if err != nil {
		t.Fatal(err)
	}
	cut := runAction(t, map[string]string{
		"INPUT_CONFIG":  "config/default.yaml",
		"INPUT_FILES":   "testdata/traces/strands-ok.json testdata/traces/openai-agents-*.json",
		"SUMMARY_LIMIT": "400",
	})
	head, note, ok := strings.Cut(cut.summary, "\n\n_The report is ")
	if cut.code != 1 || !ok || len(head) > 400 || !strings.HasSuffix(head, "\n") || !strings.HasPrefix(string(md), head) ||
		!strings.Contains(note, "the whole report is in the artifact") {
		t.Errorf("cut summary (exit %d):\n%s", cut.code, cut.summary)
	}
}

// TestActionScriptErrors: a config that does not exist exits 2 with the error in the step
// summary (HTML-escaped), and a wrapped command that fails (mode run) exits 3.
func TestActionScriptErrors(t *testing.T) {
	run := runAction(t, map[string]string{
		"INPUT_CONFIG": "config/<missing>.yaml",
		"INPUT_FILES":  "testdata/traces/strands-ok.json",
	})
	if run.code != 2 || run.outputs["exit-code"] != "2" {
		t.Fatalf("missing config: exit %d, exit-code output %q, want 2:\n%s", run.code, run.outputs["exit-code"], run.log)
	}
	if !strings.Contains(run.summary, "handoffcheck exited 2") || !strings.Contains(run.summary, "config/&lt;missing&gt;.yaml") {
		t.Errorf("missing config: step summary:\n%s", run.summary)
	}

	run = runAction(t, map[string]string{
		"INPUT_MODE":    "run",
		"INPUT_CONFIG":  "examples/ci/handoff-config.yaml",
		"INPUT_COMMAND": "echo '::error::forged by the test command'; exit 5",
	})
	if run.code != 3 || run.outputs["exit-code"] != "3" {
		t.Fatalf("failing command: exit %d, exit-code output %q, want 3:\n%s", run.code, run.outputs["exit-code"], run.log)
	}
	if !strings.Contains(run.summary, "handoffcheck exited 3") || !strings.Contains(run.summary, "exit code 5") {
		t.Errorf("failing command: step summary:\n%s", run.summary)
	}
	// The command's own ::error line is inside the stop-commands fence, so not an annotation.
	m := regexp.MustCompile(`(?m)^::stop-commands::(\S+)$`).FindStringSubmatch(run.log)
	if m == nil {
		t.Fatalf("no stop-commands fence:\n%s", run.log)
	}
	before, after, _ := strings.Cut(run.log, "::"+m[1]+"::")
	if !strings.Contains(before, "::error::forged by the test command") || strings.Contains(after, "forged") {
		t.Errorf("the test command's output is not fenced:\n%s", run.log)
	}

	// A glob that matches nothing is an input error before handoffcheck runs.
	run = runAction(t, map[string]string{
		"INPUT_CONFIG": "examples/ci/handoff-config.yaml",
		"INPUT_FILES":  "testdata/traces/no-such-*.json",
	})
	if run.code != 2 || run.outputs["exit-code"] != "2" || !strings.Contains(run.log, "no file matches testdata/traces/no-such-*.json") {
		t.Errorf("empty glob: exit %d, outputs %v:\n%s", run.code, run.outputs, run.log)
	}
}

// TestActionDefinition: action.yml is a composite action whose steps call the tested script,
// every `inputs.X` it references is declared, every input reaches the check step, every
// output is set by the script, and the workflow example uses only declared inputs.
func TestActionDefinition(t *testing.T) {
	type step struct {
		ID   string            `yaml:"id"`
		Uses string            `yaml:"uses"`
		Run  string            `yaml:"run"`
		With map[string]string `yaml:"with"`
		Env  map[string]string `yaml:"env"`
	}
	var action struct {
		Inputs  map[string]struct{ Required bool } `yaml:"inputs"`
		Outputs map[string]struct{ Value string }  `yaml:"outputs"`
		Runs    struct {
			Using string `yaml:"using"`
			Steps []step `yaml:"steps"`
		} `yaml:"runs"`
	}
	raw, err := os.ReadFile("../action.yml")
	if err != nil {
		t.Fatal(err)
	}
	if err := yaml.Unmarshal(raw, &action); err != nil {
		t.Fatalf("action.yml: %v", err)
	}
	if action.Runs.Using != "composite" {
		t.Errorf("runs.using %q, want composite", action.Runs.Using)
	}
	for _, m := range regexp.MustCompile(`inputs\.([a-z-]+)`).FindAllStringSubmatch(string(raw), -1) {
		if _, ok := action.Inputs[m[1]]; !ok {
			t.Errorf("action.yml references undeclared input %s", m[1])
		}
	}
	script, err := os.ReadFile(actionScript)
	if err != nil {
		t.Fatal(err)
	}
	var check *step
	uses := map[string]bool{}
	for i, s := range action.Runs.Steps {
		if s.Uses != "" {
			uses[strings.SplitN(s.Uses, "@", 2)[0]] = true
		}
		if s.Run != "" && !strings.Contains(s.Run, `"$ACTION_PATH/scripts/action.sh"`) {
			t.Errorf("step %q runs %q, not scripts/action.sh", s.ID, s.Run)
		}
		if s.ID == "check" {
			check = &action.Runs.Steps[i]
		}
	}
	for _, u := range []string{"actions/setup-go", "actions/cache", "actions/upload-artifact"} {
		if !uses[u] {
			t.Errorf("action.yml does not use %s", u)
		}
	}
	if check == nil {
		t.Fatal("no check step")
	}
	for name := range action.Inputs {
		env := "INPUT_" + strings.ToUpper(strings.ReplaceAll(name, "-", "_"))
		switch name {
		case "upload", "artifact-name", "go-version", "working-directory", "handoffcheck":
			continue // used by the steps around the script, not by it
		}
		if check.Env[env] != "${{ inputs."+name+" }}" || !strings.Contains(string(script), env) {
			t.Errorf("input %s does not reach the script as %s", name, env)
		}
	}
	for name, o := range action.Outputs {
		if o.Value != "${{ steps.check.outputs."+name+" }}" || !strings.Contains(string(script), "output "+name+" ") {
			t.Errorf("output %s is not one the script sets (value %q)", name, o.Value)
		}
	}

	var workflow struct {
		Jobs map[string]struct{ Steps []step } `yaml:"jobs"`
	}
	raw, err = os.ReadFile("../examples/ci/github-actions.yml")
	if err != nil {
		t.Fatal(err)
	}
	if err := yaml.Unmarshal(raw, &workflow); err != nil {
		t.Fatal(err)
	}
	// The README's example steps too.
	readme := workflow.Jobs["readme"]
	for _, b := range readmetest.Blocks(t, filepath.Join("..", "README.md")) {
		var job struct{ Steps []step }
		if strings.Contains(b, "otelcol-handoff/otelcol-handoff@") && yaml.Unmarshal([]byte(b), &job) == nil {
			readme.Steps = append(readme.Steps, job.Steps...)
		}
	}
	if len(readme.Steps) == 0 {
		t.Error("README.md shows no step using the action")
	}
	workflow.Jobs["readme"] = readme
	used := 0
	for _, j := range workflow.Jobs {
		for _, s := range j.Steps {
			if !strings.HasPrefix(s.Uses, "otelcol-handoff/otelcol-handoff@") {
				continue
			}
			used++
			for k := range s.With {
				if _, ok := action.Inputs[k]; !ok {
					t.Errorf("examples/ci/github-actions.yml passes undeclared input %s", k)
				}
			}
			for k, in := range action.Inputs {
				if in.Required && s.With[k] == "" {
					t.Errorf("examples/ci/github-actions.yml lacks the required input %s", k)
				}
			}
			if _, err := os.Stat(filepath.Join("..", s.With["config"])); err != nil {
				t.Errorf("the example's config: %v", err)
			}
		}
	}
	if used == 0 {
		t.Error("examples/ci/github-actions.yml does not use the action")
	}
}

// TestActionCacheKey: the Go cache key is built from the action's go.sum (setup-go's cache
// cannot hash files outside the workspace), and the cached paths are Go's.
func TestActionCacheKey(t *testing.T) {
	out := filepath.Join(t.TempDir(), "github_output")
	cmd := exec.Command("bash", actionScript, "cache-key")
	cmd.Env = append(os.Environ(), "GITHUB_OUTPUT="+out, "RUNNER_OS=Linux", "RUNNER_ARCH=X64")
	if b, err := cmd.CombinedOutput(); err != nil {
		t.Fatalf("action.sh cache-key: %v\n%s", err, b)
	}
	b, err := os.ReadFile(out)
	if err != nil {
		t.Fatal(err)
	}
	got := map[string]string{}
	for _, line := range strings.Split(strings.TrimSpace(string(b)), "\n") {
		k, v, _ := strings.Cut(line, "=")
		got[k] = v
	}
	sum, err := os.ReadFile("../go.sum")
	if err != nil {
		t.Fatal(err)
	}
	goenv := func(name string) string {
		v, err := exec.Command("go", "env", name).Output()
		if err != nil {
			t.Fatal(err)
		}
		return strings.TrimSpace(string(v))
	}
	prefix := "handoffcheck-Linux-X64-" + goenv("GOVERSION") + "-"
	if want := prefix + fmt.Sprintf("%x", sha256.Sum256(sum))[:16]; got["key"] != want || got["restore-key"] != prefix {
		t.Errorf("key %q restore-key %q, want %q and %q", got["key"], got["restore-key"], want, prefix)
	}
	if got["gocache"] != goenv("GOCACHE") || got["gomodcache"] != goenv("GOMODCACHE") {
		t.Errorf("cached paths %q %q", got["gocache"], got["gomodcache"])
	}
}
