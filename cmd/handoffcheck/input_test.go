package main

import (
	"context"
	"crypto/sha256"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
	"go.opentelemetry.io/collector/pdata/ptrace"

	"github.com/otelcol-handoff/otelcol-handoff/handoffprocessor"
	"github.com/otelcol-handoff/otelcol-handoff/internal/spanfile"
)

// splitConfig writes a config whose handoff processor has the settings given (a YAML flow
// map) and one case: triage delegates to weather_specialist.
func splitConfig(t *testing.T, handoff string) string {
	t.Helper()
	path := filepath.Join(t.TempDir(), "collector.yaml")
	require.NoError(t, os.WriteFile(path, []byte(`processors:
  handoff: `+handoff+`
exporters:
  assertion:
    cases:
      - name: delegation
        when: 'root_agent == "triage"'
        steps:
          - action: ASSERT_AGENT_TOPOLOGY
          - action: EXPECT_DELEGATION_TO
            agentName: weather_specialist
            fromAgent: triage
service: {pipelines: {traces: {processors: [handoff], exporters: [assertion]}}}
`), 0o644))
	return path
}

// jsonSpan is one OTLP/JSON span of an agent (or, with tool set, a tool call).
func jsonSpan(trace, span, parent, name string, tool bool) string {
	op, key, kind := "invoke_agent", "gen_ai.agent.name", "invoke_agent "
	if tool {
		op, key, kind = "execute_tool", "gen_ai.tool.name", "execute_tool "
	}
	p := ""
	if parent != "" {
		p = `"parentSpanId":"` + parent + `",`
	}
	return `{"traceId":"` + trace + `","spanId":"` + span + `",` + p + `"name":"` + kind + name + `","kind":1,` +
		`"startTimeUnixNano":"1700000000000000000","endTimeUnixNano":"1700000001000000000",` +
		`"attributes":[{"key":"gen_ai.operation.name","value":{"stringValue":"` + op + `"}},` +
		`{"key":"` + key + `","value":{"stringValue":"` + name + `"}}]}`
}

// jsonRequest is one OTLP/JSON request (one line of the file exporter's output).
func jsonRequest(service string, spans ...string) string {
	return `{"resourceSpans":[{"resource":{"attributes":[{"key":"service.name","value":{"stringValue":"` + service +
		`"}}]},"scopeSpans":[{"scope":{"name":"test"},"spans":[` + strings.Join(spans, ",") + `]}]}]}` + "\n"
}

// splitFiles writes n traces split across two JSON lines files: each trace's root
// (triage) in the first, its weather_specialist run and tool call in the second.
func splitFiles(t *testing.T, n int) (roots, children string) {
	t.Helper()
	var a, b strings.Builder
	for i := range n {
		id := fmt.Sprintf("%032x", i+1)
		a.WriteString(jsonRequest("frontdesk", jsonSpan(id, "0000000000000001", "", "triage", false)))
		b.WriteString(jsonRequest("specialist", jsonSpan(id, "0000000000000002", "0000000000000001", "weather_specialist", false),
			jsonSpan(id, "0000000000000003", "0000000000000002", "get_weather", true)))
	}
	dir := t.TempDir()
	roots, children = filepath.Join(dir, "roots.jsonl"), filepath.Join(dir, "children.jsonl")
	require.NoError(t, os.WriteFile(roots, []byte(a.String()), 0o644))
	require.NoError(t, os.WriteFile(children, []byte(b.String()), 0o644))
	return roots, children
}

// TestReplaySplitOverNumTraces: more traces than num_traces, each split across two files,
// are all complete at the end of input (num_traces evicted the oldest before the last
// spans were read, silently).
func TestReplaySplitOverNumTraces(t *testing.T) {
	roots, children := splitFiles(t, 50)
	code, out, errOut := runCmd(t, "replay", "--config", splitConfig(t, "{num_traces: 10}"), roots, children)
	require.Equal(t, exitPass, code, out+errOut)
	require.Equal(t, "handoffcheck: 50 traces, 100 assertions\n100 passed, 0 failed, 0 errors, 0 skipped\n", out)
	require.Empty(t, errOut)
}

// TestReplayQuietPeriodIsNotRealTime: a replay releases traces at the end of input only,
// whatever quiet_period and max_wait say and however slowly the input is read: with 1ms,
// a pause between the two files (a large file read slowly) released every trace before its
// children were read.
func TestReplayQuietPeriodIsNotRealTime(t *testing.T) {
	roots, children := splitFiles(t, 5)
	o := options{
		config: splitConfig(t, "{quiet_period: 1ms, max_wait: 1ms}"), endOfInput: true,
		inputs: []string{roots, children}, report: &runReport{},
	}
	o.failOn, _ = parseFailOn(defaultFailOn)
	o.logger = newLogger(&strings.Builder{}, false)
	ctx := context.Background()
	pl, err := newPipeline(ctx, o)
	require.NoError(t, err)
	spans := 0
	for _, path := range o.inputs {
		n, err := spanfile.Read(path, func(td ptrace.Traces) error {
			pl.read(path, td)
			return pl.proc.ConsumeTraces(ctx, td)
		})
		require.NoError(t, err)
		spans += n
		time.Sleep(20 * time.Millisecond) // 20 quiet periods: the old replay released here
	}
	var out, errOut strings.Builder
	code := judgeRun(ctx, pl, o, spans, &out, &errOut)
	require.Equal(t, exitPass, code, out.String()+errOut.String())
	require.Equal(t, "handoffcheck: 5 traces, 10 assertions\n10 passed, 0 failed, 0 errors, 0 skipped\n", out.String())
	require.Empty(t, errOut.String())

	// And through the command, with the config's 1ms.
	code, stdout, stderr := runCmd(t, "replay", "--config", o.config, roots, children)
	require.Equal(t, exitPass, code, stdout+stderr)
	require.Empty(t, stderr)
}

// TestReplayLimits: the replay's processor config is the user's, validated as written,
// with the real-time and count triggers lifted to what the processor accepts.
func TestReplayLimits(t *testing.T) {
	ctx := context.Background()
	path := splitConfig(t, "{quiet_period: 1ms, max_wait: 1ms, num_traces: 10, max_spans_per_trace: 7}")
	c, err := loadComponents(ctx, options{config: path, endOfInput: true})
	require.NoError(t, err)
	require.Equal(t, replayHold, c.pcfg.QuietPeriod)
	require.Equal(t, replayHold, c.pcfg.MaxWait)
	require.Equal(t, replayNumTraces, c.pcfg.NumTraces)
	require.Equal(t, 7, c.pcfg.MaxSpansPerTrace, "one trace's bound stays (an early release is warned of)")
	require.NoError(t, c.pcfg.Validate())

	// The processor's own bound: one more trace is refused, so replayNumTraces is its maximum.
	over := *c.pcfg
	over.NumTraces = replayNumTraces + 1
	require.ErrorContains(t, over.Validate(), "num_traces")

	// A live run keeps the config's real-time release; a bad value is refused either way.
	c, err = loadComponents(ctx, options{config: path})
	require.NoError(t, err)
	require.Equal(t, time.Millisecond, c.pcfg.QuietPeriod)
	require.Equal(t, 10, c.pcfg.NumTraces)
	code, _, errOut := runCmd(t, "replay", "--config", splitConfig(t, "{quiet_period: 0s}"), adk)
	require.Equal(t, exitUsage, code)
	require.Contains(t, errOut, "quiet_period must be greater than 0")

	// The default config lifted validates too.
	def := handoffprocessor.NewFactory().CreateDefaultConfig().(*handoffprocessor.Config)
	holdUntilEndOfInput(def)
	require.NoError(t, def.Validate())
}

// TestReplayWarnsOfEarlyRelease: a trace the processor still releases before the end of
// input (here over max_spans_per_trace: released as its third span came, and marked
// incomplete) is said on stderr and in the JSON summary, not judged in silence.
func TestReplayWarnsOfEarlyRelease(t *testing.T) {
	roots, children := splitFiles(t, 4)
	cfg := splitConfig(t, "{max_spans_per_trace: 2}")
	code, out, errOut := runCmd(t, "replay", "--config", cfg, roots, children)
	// Each trace went whole (its third span made it too large): judged passing, and said.
	require.Equal(t, exitPass, code, out+errOut)
	require.Equal(t, "handoffcheck: 4 traces were released before the end of input and judged on part of their spans "+
		"(a trace over max_spans_per_trace or max_trace_size_bytes, more than 10000000 traces at once, or spans read after "+
		"their trace was released): trace 00000000000000000000000000000001, 00000000000000000000000000000002, "+
		"00000000000000000000000000000003 and 1 more\n", errOut)

	_, out, _ = runCmd(t, "replay", "--config", cfg, "--summary", "json", roots, children)
	var s summary
	require.NoError(t, json.Unmarshal([]byte(out), &s))
	require.Len(t, s.Warnings, 1)
	require.True(t, strings.HasPrefix(s.Warnings[0], "4 traces were released before the end of input"), s.Warnings[0])
}

// TestSpansWithoutTraceIDWarned: spans without a trace id (none, or all zeros) cannot be
// assembled into a trace, so nothing judges them: the replay says how many.
func TestSpansWithoutTraceIDWarned(t *testing.T) {
	id := fmt.Sprintf("%032x", 1)
	noID := strings.Replace(jsonSpan("", "0000000000000009", "", "triage", false), `"traceId":"",`, "", 1)
	file := filepath.Join(t.TempDir(), "spans.jsonl")
	require.NoError(t, os.WriteFile(file, []byte(jsonRequest("svc",
		jsonSpan(id, "0000000000000001", "", "triage", false),
		jsonSpan(id, "0000000000000002", "0000000000000001", "weather_specialist", false),
		noID,
		jsonSpan(strings.Repeat("0", 32), "0000000000000008", "", "weather_specialist", false),
		jsonSpan(strings.Repeat("0", 32), "0000000000000007", "0000000000000008", "get_weather", true),
	)), 0o644))
	cfg := splitConfig(t, "{}")
	code, out, errOut := runCmd(t, "replay", "--config", cfg, file)
	require.Equal(t, exitPass, code, out+errOut)
	require.Equal(t, "handoffcheck: 3 spans have no trace id and were not judged\n", errOut)
	require.Equal(t, "handoffcheck: 1 traces, 2 assertions\n2 passed, 0 failed, 0 errors, 0 skipped\n", out)

	_, out, _ = runCmd(t, "replay", "--config", cfg, "--summary", "json", file)
	var s summary
	require.NoError(t, json.Unmarshal([]byte(out), &s))
	require.Equal(t, []string{"3 spans have no trace id and were not judged"}, s.Warnings)

	// validate warns too.
	code, out, _ = runCmd(t, "validate", "--config", cfg, file)
	require.Equal(t, exitPass, code)
	require.Contains(t, out, "WARN 3 spans of the files given have no trace id: replay would not judge them\n")

	// Only spans without a trace id: the warning says why nothing was asserted.
	only := filepath.Join(t.TempDir(), "noid.json")
	require.NoError(t, os.WriteFile(only, []byte(jsonRequest("svc", noID)), 0o644))
	code, _, errOut = runCmd(t, "replay", "--config", cfg, only)
	require.Equal(t, exitUsage, code)
	require.True(t, strings.HasPrefix(errOut, "handoffcheck: 1 span has no trace id and was not judged\n"+
		"handoffcheck: nothing was asserted (1 spans read)"), errOut)
}

// fingerprint is what a path holds, for "left untouched": its type, its link target, and
// a regular file's content.
func fingerprint(t *testing.T, path string) string {
	t.Helper()
	fi, err := os.Lstat(path)
	require.NoError(t, err)
	s := fi.Mode().Type().String()
	if target, err := os.Readlink(path); err == nil {
		s += " -> " + target
	}
	if fi.Mode().IsRegular() {
		b, err := os.ReadFile(path)
		require.NoError(t, err)
		s += fmt.Sprintf(" %x", sha256.Sum256(b))
	}
	return s
}

// TestReportPathsRefused: before anything is read, removed or written, a report path is
// refused (exit 2, the flag or field named) when it is an input (the config, a span file,
// an otelSpansFile; by another spelling or a hard link too), another report's path, or an
// existing file that is not a regular one (a link included): each was truncated, deleted or
// replaced by a regular file. What the paths hold is left as it was.
func TestReportPathsRefused(t *testing.T) {
	dir := t.TempDir()
	spans := filepath.Join(dir, "spans.json")
	copyTo := func(dst string) {
		b, err := os.ReadFile(adk)
		require.NoError(t, err)
		require.NoError(t, os.WriteFile(dst, b, 0o644))
	}
	copyTo(spans)
	hard := filepath.Join(dir, "hard.json")
	require.NoError(t, os.Link(spans, hard))
	target := filepath.Join(dir, "target.xml")
	require.NoError(t, os.WriteFile(target, []byte("<old/>"), 0o644))
	link := filepath.Join(dir, "link.xml")
	require.NoError(t, os.Symlink(target, link))
	cfg := config(t, passing)
	recorded := filepath.Join(filepath.Dir(cfg), "recorded.json")
	copyTo(recorded)
	withReports := filepath.Join(dir, "reports.yaml")
	require.NoError(t, os.WriteFile(withReports, []byte(`processors: {handoff: {}}
exporters:
  assertion:
    reports: {junit: `+spans+`, markdown: `+withReports+`}
    cases:`+passing+`
service: {pipelines: {traces: {processors: [handoff], exporters: [assertion]}}}
`), 0o644))
	// otelSpansFile is relative to the config's folder.
	fileCase := fileCase(t, filepath.Dir(cfg), "recorded.json")
	rel, err := filepath.Rel(mustGetwd(t), filepath.Join(dir, "r.xml"))
	require.NoError(t, err)
	for name, tt := range map[string]struct {
		args []string
		want string
	}{
		"json is a span file":         {[]string{"--config", cfg, "--json", spans, spans}, "--json: " + spans + " is the span file " + spans},
		"junit is a span file":        {[]string{"--config", cfg, "--junit", spans, spans}, "--junit: " + spans + " is the span file"},
		"html is a hard link to one":  {[]string{"--config", cfg, "--html", hard, spans}, "--html: " + hard + " is the span file " + spans},
		"markdown is the config":      {[]string{"--config", cfg, "--markdown", cfg, spans}, "--markdown: " + cfg + " is the config file (--config)"},
		"two flags on one path":       {[]string{"--config", cfg, "--junit", rel, "--html", filepath.Join(dir, "r.xml"), spans}, "--html: " + filepath.Join(dir, "r.xml") + " is also the path of --junit"},
		"json and markdown":           {[]string{"--config", cfg, "--json", filepath.Join(dir, "x"), "--markdown", dir + "/./x", spans}, "--markdown: " + dir + "/./x is also the path of --json"},
		"a symbolic link":             {[]string{"--config", cfg, "--junit", link, spans}, "--junit: " + link + " is a symbolic link (to " + target + ")"},
		"the config's junit":          {[]string{"--config", withReports, spans}, "exporters.assertion.reports.junit: " + spans + " is the span file"},
		"the config's markdown":       {[]string{"--config", withReports, spans}, "exporters.assertion.reports.markdown: " + filepath.Join(dir, "reports.yaml") + " is the config file"},
		"an otelSpansFile":            {[]string{"--config", fileCase, "--json", recorded}, "--json: " + recorded + " is cases[0] (recorded).steps[0].otelSpansFile"},
		"run: the config's own input": {[]string{"--config", cfg, "--junit", cfg}, "--junit: " + cfg + " is the config file"},
	} {
		t.Run(name, func(t *testing.T) {
			before := map[string]string{}
			for _, p := range []string{spans, hard, target, link, cfg, recorded, withReports} {
				before[p] = fingerprint(t, p)
			}
			cmd := "replay"
			if strings.HasPrefix(name, "run:") {
				cmd = "run"
				tt.args = append(tt.args, "--", "true")
			}
			code, out, errOut := runCmd(t, append([]string{cmd}, tt.args...)...)
			require.Equal(t, exitUsage, code, out+errOut)
			require.Contains(t, errOut, "handoffcheck: "+tt.want)
			for p, fp := range before {
				require.Equal(t, fp, fingerprint(t, p), p)
			}
			require.NoFileExists(t, filepath.Join(dir, "r.xml"))
		})
	}

	// validate refuses the config's own clashes too.
	code, _, errOut := runCmd(t, "validate", "--config", withReports, spans)
	require.Equal(t, exitUsage, code)
	require.Contains(t, errOut, "exporters.assertion.reports.junit: "+spans+" is the span file")

	// A report beside its inputs is written as before.
	out := filepath.Join(dir, "ok.xml")
	code, stdout, stderr := runCmd(t, "replay", "--config", cfg, "--junit", out, spans)
	require.Equal(t, exitPass, code, stdout+stderr)
	require.FileExists(t, out)
}

func mustGetwd(t *testing.T) string {
	t.Helper()
	wd, err := os.Getwd()
	require.NoError(t, err)
	return wd
}
