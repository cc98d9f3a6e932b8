package main

import (
	"bytes"
	"context"
	"errors"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"
	"go.opentelemetry.io/collector/pdata/ptrace"
	"go.opentelemetry.io/collector/pdata/ptrace/ptraceotlp"
	"google.golang.org/grpc"
	"google.golang.org/grpc/credentials/insecure"

	"github.com/otelcol-handoff/otelcol-handoff/internal/judge/judgetest"
	"github.com/otelcol-handoff/otelcol-handoff/internal/report"
	"github.com/otelcol-handoff/otelcol-handoff/internal/spanfile"
)

const (
	adk     = "../../testdata/traces/google-adk-ok.json"
	strands = "../../testdata/traces/strands-ok.json"
	// What a console line shows beside the trace id of each capture.
	adkLabel     = " (" + adk + ", service realclient-google-adk): "
	strandsLabel = " (" + strands + ", service realclient-strands): "
)

// config writes a collector config whose assertion exporter holds the given cases.
func config(t *testing.T, cases string) string {
	t.Helper()
	return liveConfig(t, `exporters:
  assertion:
    cases:
`+cases+`
  debug: {}
service: {pipelines: {traces: {receivers: [otlp], processors: [handoff], exporters: [assertion, debug]}}}
`)
}

// liveConfig writes a collector config (in a new temporary folder): an OTLP receiver on
// 127.0.0.1:4318 and the handoff processor (quiet_period 2s, max_wait 30s), followed by
// rest (the components that judge and the service).
func liveConfig(t *testing.T, rest string) string {
	t.Helper()
	path := filepath.Join(t.TempDir(), "collector.yaml")
	require.NoError(t, os.WriteFile(path, []byte(`
receivers: {otlp: {protocols: {http: {endpoint: 127.0.0.1:4318}}}}
processors:
  handoff: {quiet_period: 2s, max_wait: 30s}
`+rest), 0o644))
	return path
}

const passing = `
      - name: weather_delegation
        steps:
          - action: ASSERT_AGENT_TOPOLOGY
            maxDepth: 3
          - action: EXPECT_DELEGATION_TO
            agentName: weather_specialist
            fromAgent: triage
`

const failing = passing + `
      - name: tight_budget
        steps:
          - action: ASSERT_AGENT_TOPOLOGY
          - action: EXPECT_AGENT_BUDGET
            agentName: weather_specialist
            maxToolCalls: 1
          - action: EXPECT_AGENT_BUDGET
            name: ghost
            agentName: ghost
            maxTokens: 10
`

func runCmd(t *testing.T, args ...string) (int, string, string) {
	t.Helper()
	var stdout, stderr bytes.Buffer
	code := run(context.Background(), args, &stdout, &stderr)
	return code, stdout.String(), stderr.String()
}

func TestReplayPasses(t *testing.T) {
	code, out, errOut := runCmd(t, "replay", "--config", config(t, passing), adk, strands)
	require.Equal(t, exitPass, code, errOut)
	require.Equal(t, "handoffcheck: 2 traces, 4 assertions\n4 passed, 0 failed, 0 errors, 0 skipped\n", out)
}

func TestReplayFails(t *testing.T) {
	jsonOut := filepath.Join(t.TempDir(), "results.jsonl")
	code, out, _ := runCmd(t, "replay", "--config", config(t, failing), "--json", jsonOut, adk, strands)
	require.Equal(t, exitFail, code)
	// Each line names the trace's input file and its root span's service.
	require.Equal(t, "FAIL tight_budget EXPECT_AGENT_BUDGET#2 trace ee43d96bfb5cdaf53f26aa5435c557e3"+strandsLabel+
		"weather_specialist (span 6bcab0b4c887d392) made 2 tool calls, over maxToolCalls 1\n"+
		"SKIPPED tight_budget ghost trace ee43d96bfb5cdaf53f26aa5435c557e3"+strandsLabel+"agent ghost did not run; agents that ran: triage, weather_specialist; nothing to budget\n"+
		"FAIL tight_budget EXPECT_AGENT_BUDGET#2 trace f4f85fa1287a499869aa8f6a54cd202a"+adkLabel+
		"weather_specialist (span 0220be9d21dc61d8) made 2 tool calls, over maxToolCalls 1\n"+
		"SKIPPED tight_budget ghost trace f4f85fa1287a499869aa8f6a54cd202a"+adkLabel+"agent ghost did not run; agents that ran: triage, weather_specialist; nothing to budget\n"+
		"handoffcheck: 2 traces, 10 assertions\n6 passed, 2 failed, 0 errors, 2 skipped\n", out)
	results, err := report.ReadJSONLines(jsonOut)
	require.NoError(t, err)
	require.Len(t, results, 10)

	// --fail-on skipped turns the skipped budget into a failure even without the real one.
	code, _, _ = runCmd(t, "replay", "--config", config(t, passing+`
      - name: only_ghost
        steps:
          - action: ASSERT_AGENT_TOPOLOGY
          - action: EXPECT_AGENT_BUDGET
            agentName: ghost
            maxTokens: 10
`), "--fail-on", "skipped", adk)
	require.Equal(t, exitFail, code)
}

// TestReplayConnectorConfig: a production config whose cases sit in the assertion
// connector is checked the same way.
func TestReplayConnectorConfig(t *testing.T) {
	path := liveConfig(t, `connectors:
  assertion:
    metrics_flush_interval: 15s
    max_agents: 10
    cases:
`+failing+`
exporters:
  debug: {}
service:
  pipelines:
    traces/in: {receivers: [otlp], processors: [handoff], exporters: [assertion]}
    traces/out: {receivers: [assertion], exporters: [debug]}
    metrics: {receivers: [assertion], exporters: [debug]}
`)
	code, out, errOut := runCmd(t, "replay", "--config", path, adk, strands)
	require.Equal(t, exitFail, code, errOut)
	// The same verdicts as TestReplayFails (the exporter config): the tight budget fails both.
	require.Contains(t, out, "handoffcheck: 2 traces, 10 assertions\n6 passed, 2 failed, 0 errors, 2 skipped\n")
}

// TestReplayIsDeterministic: the same inputs, in any order, give byte-identical reports.
func TestReplayIsDeterministic(t *testing.T) {
	var reports []string
	for _, files := range [][]string{{strands, adk}, {adk, strands}, {strands, adk}} {
		dir := t.TempDir()
		args := []string{
			"replay", "--config", config(t, failing), "--json", filepath.Join(dir, "r.jsonl"),
			"--junit", filepath.Join(dir, "r.xml"), "--markdown", filepath.Join(dir, "r.md"),
		}
		code, _, errOut := runCmd(t, append(args, files...)...)
		require.Equal(t, exitFail, code, errOut)
		var all string
		for _, name := range []string{"r.jsonl", "r.xml", "r.md"} {
			b, err := os.ReadFile(filepath.Join(dir, name))
			require.NoError(t, err)
			require.NotEmpty(t, b, name)
			all += string(b)
		}
		reports = append(reports, all)
	}
	require.Equal(t, reports[0], reports[1])
	require.Equal(t, reports[0], reports[2])
	require.Contains(t, reports[0], `<testsuite name="tight_budget"`)
	require.Contains(t, reports[0], "```mermaid")
}

// TestInputFormats: a trace split across files, JSON lines as the file exporter writes
// them, and OTLP protobuf all give the verdicts of the whole OTLP/JSON file.
func TestInputFormats(t *testing.T) {
	dir := t.TempDir()
	b, err := os.ReadFile(strands)
	require.NoError(t, err)
	td, err := (&ptrace.JSONUnmarshaler{}).UnmarshalTraces(b)
	require.NoError(t, err)

	// Split span by span into two halves, one file each, as JSON lines (one request a line).
	first, second := ptrace.NewTraces(), ptrace.NewTraces()
	src := td.ResourceSpans().At(0)
	for i, dst := range []ptrace.Traces{first, second} {
		rs := dst.ResourceSpans().AppendEmpty()
		src.Resource().CopyTo(rs.Resource())
		ss := rs.ScopeSpans().AppendEmpty()
		src.ScopeSpans().At(0).Scope().CopyTo(ss.Scope())
		spans := src.ScopeSpans().At(0).Spans()
		for k := 0; k < spans.Len(); k++ {
			if k%2 == i {
				spans.At(k).CopyTo(ss.Spans().AppendEmpty())
			}
		}
	}
	var lines []byte
	for _, part := range []ptrace.Traces{first, second} {
		j, err := (&ptrace.JSONMarshaler{}).MarshalTraces(part)
		require.NoError(t, err)
		lines = append(append(lines, j...), '\n')
	}
	jsonl := filepath.Join(dir, "strands.jsonl")
	require.NoError(t, os.WriteFile(jsonl, lines, 0o644))

	p1, err := ptraceotlp.NewExportRequestFromTraces(first).MarshalProto()
	require.NoError(t, err)
	p2, err := ptraceotlp.NewExportRequestFromTraces(second).MarshalProto()
	require.NoError(t, err)
	require.NoError(t, os.WriteFile(filepath.Join(dir, "a.pb"), p1, 0o644))
	require.NoError(t, os.WriteFile(filepath.Join(dir, "b.pb"), p2, 0o644))

	cfg := config(t, failing)
	_, whole, _ := runCmd(t, "replay", "--config", cfg, strands)
	a, pb := filepath.Join(dir, "a.pb"), filepath.Join(dir, "b.pb")
	for name, tt := range map[string]struct {
		files []string
		label string // the files a console line names, sorted
	}{
		"json lines":           {[]string{jsonl}, jsonl},
		"protobuf, two files":  {[]string{a, pb}, a + " + " + pb},
		"mixed formats, split": {[]string{pb, jsonl}, pb + " + " + jsonl},
	} {
		t.Run(name, func(t *testing.T) {
			code, out, errOut := runCmd(t, append([]string{"replay", "--config", cfg}, tt.files...)...)
			require.Equal(t, exitFail, code, errOut)
			// The same verdicts; each line names the files that held the trace.
			require.Equal(t, strings.ReplaceAll(whole, "("+strands+",", "("+tt.label+","), out)
			require.Contains(t, out, "("+tt.label+", service realclient-strands): ")
		})
	}
}

func TestBadInput(t *testing.T) {
	dir := t.TempDir()
	write := func(name, content string) string {
		p := filepath.Join(dir, name)
		require.NoError(t, os.WriteFile(p, []byte(content), 0o644))
		return p
	}
	cfg := config(t, passing)
	tests := []struct {
		name, file, want string
	}{
		{"empty", write("empty.json", "  \n"), "empty.json: empty file"},
		{"malformed JSON", write("bad.json", `{"resourceSpans": [`), "bad.json: request 1: unexpected end of file inside a JSON value"},
		{"JSON that is not OTLP", write("nototlp.json", `{"resourceSpans": "nope"}`), "nototlp.json: request 1 is not OTLP/JSON traces"},
		{"unknown format", write("x.bin", "\x07\x07garbage"), "x.bin: unknown format"},
		{"missing file", filepath.Join(dir, "nope.json"), "no such file or directory"},
		{"a device that never ends", "/dev/zero", "/dev/zero: not a regular file (a character device)"},
		{"truncated delimited protobuf", write("cut.pb", "\x00\x00\x00\x05\x0a\x00"), "cut.pb: request 1: truncated: the length prefix says 5 bytes, the file has 2 left"},
		{"single protobuf request over the bound", oversized(t, dir), "huge.pb: one OTLP protobuf request of 268435457 bytes is over the 268435456-byte limit"},
		{
			"spans but no agents", "../../testdata/corpus/lf-claude-agent-sdk-langsmith.otlp.json",
			"nothing was asserted (7 spans read): no case selected any trace",
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			code, _, errOut := runCmd(t, "replay", "--config", cfg, tt.file)
			require.Equal(t, exitUsage, code)
			require.Contains(t, errOut, tt.want)
		})
	}
}

// oversized is a sparse file one byte over spanfile.MaxRequest that starts like a protobuf
// request: refused from its size, before it is read.
func oversized(t *testing.T, dir string) string {
	t.Helper()
	p := filepath.Join(dir, "huge.pb")
	require.NoError(t, os.WriteFile(p, []byte{0x0a}, 0o644))
	require.NoError(t, os.Truncate(p, spanfile.MaxRequest+1))
	return p
}

func TestBadConfig(t *testing.T) {
	dir := t.TempDir()
	noProc := filepath.Join(dir, "noproc.yaml")
	require.NoError(t, os.WriteFile(noProc, []byte(`
receivers: {otlp: {protocols: {http: {}}}}
exporters: {debug: {}}
service: {pipelines: {traces: {receivers: [otlp], exporters: [debug]}}}
`), 0o644))
	tests := map[string][]string{
		"no handoff processor in a traces pipeline": {"replay", "--config", noProc, adk},
		"EXPECT_DELEGATION_TO reads the DAG of an earlier ASSERT_AGENT_TOPOLOGY step": {"replay", "--config", config(t, `
      - name: c
        steps:
          - action: EXPECT_DELEGATION_TO
            agentName: b
`), adk},
		"no span file given, and no case reads one": {"replay", "--config", config(t, passing)},
		"--config is required":                      {"replay", adk},
		"unknown outcome":                           {"replay", "--config", noProc, "--fail-on", "maybe", adk},
		"no command given":                          {"run", "--config", noProc},
		"--junit: directory " + filepath.Join(dir, "nope") + " does not exist": {"replay", "--config", noProc, "--junit", filepath.Join(dir, "nope", "r.xml"), adk},
		"--json: " + dir + " is a directory, not a file":                       {"replay", "--config", noProc, "--json", dir, adk},
		"reports.markdown: directory " + filepath.Join(dir, "gone") + " does not exist": {"replay", "--config", config(t, passing+`
    reports: {markdown: `+filepath.Join(dir, "gone", "r.md")+`}
`), adk},
		"steps[0].otelSpansFile: file " + filepath.Join(dir, "traces", "none.json") + " does not exist": {"replay", "--config", fileCase(t, dir, "./traces/none.json")},
		"handoffcheck replay --config": {"check"},
	}
	for want, args := range tests {
		t.Run(want, func(t *testing.T) {
			code, _, errOut := runCmd(t, args...)
			require.Equal(t, exitUsage, code)
			require.Contains(t, errOut, want)
		})
	}
}

// fileCase writes a config (in dir) of one case that reads spans from the given file.
func fileCase(t *testing.T, dir, spans string) string {
	t.Helper()
	return casesConfig(t, filepath.Join(dir, "file-case.yaml"), `
      - name: recorded
        steps:
          - action: ASSERT_AGENT_TOPOLOGY
            source: FILE
            otelSpansFile: `+spans)
}

// casesConfig writes, at path, a config with default receiver and processor whose assertion
// exporter holds the given cases (YAML list items under cases:).
func casesConfig(t *testing.T, path, cases string) string {
	t.Helper()
	require.NoError(t, os.WriteFile(path, []byte(`
receivers: {otlp: {protocols: {http: {}}}}
processors: {handoff: {}}
exporters:
  assertion:
    cases:`+cases+`
service: {pipelines: {traces: {receivers: [otlp], processors: [handoff], exporters: [assertion]}}}
`), 0o644))
	return path
}

// copyADK copies the ADK capture to dir/traces/name (a FILE case's otelSpansFile
// ./traces/name).
func copyADK(t *testing.T, dir, name string) {
	t.Helper()
	spans, err := os.ReadFile(adk)
	require.NoError(t, err)
	require.NoError(t, os.MkdirAll(filepath.Join(dir, "traces"), 0o755))
	require.NoError(t, os.WriteFile(filepath.Join(dir, "traces", name), spans, 0o644))
}

// TestRunWrapsACommand runs this test binary as the "agent under test": it sends a capture
// to OTEL_EXPORTER_OTLP_ENDPOINT, then exits with HANDOFFCHECK_TEST_EXIT.
func TestRunWrapsACommand(t *testing.T) {
	cfg := config(t, failing)
	self := os.Args[0]
	t.Setenv("HANDOFFCHECK_TEST_CLIENT", "1")
	// No protocol in the environment: the default, http/protobuf.
	t.Setenv("OTEL_EXPORTER_OTLP_PROTOCOL", "")
	t.Setenv("OTEL_EXPORTER_OTLP_TRACES_PROTOCOL", "")

	t.Setenv("HANDOFFCHECK_TEST_EXIT", "0")
	code, out, errOut := runCmd(t, "run", "--config", cfg, "--", self, "-test.run=TestClientProcess")
	require.Equal(t, exitFail, code, errOut)
	// A live capture comes from no file: the line says so, and names the service.
	require.Contains(t, out, "FAIL tight_budget EXPECT_AGENT_BUDGET#2 trace ee43d96bfb5cdaf53f26aa5435c557e3 (live, service realclient-strands): ")
	require.Contains(t, out, "handoffcheck: 1 traces, 5 assertions\n")

	t.Setenv("HANDOFFCHECK_TEST_EXIT", "7")
	code, _, errOut = runCmd(t, "run", "--config", cfg, "--", self, "-test.run=TestClientProcess")
	require.Equal(t, exitCommandFailed, code)
	require.Contains(t, errOut, "the command failed with exit code 7")
}

// TestClientProcess is the wrapped command of TestRunWrapsACommand and TestRunProtocols,
// not a test of its own: it sends the Strands capture to the endpoint its environment
// names, in the protocol it names, as an OTel SDK's exporter reads them
// (OTEL_EXPORTER_OTLP_TRACES_ENDPOINT, OTEL_EXPORTER_OTLP_TRACES_PROTOCOL).
func TestClientProcess(t *testing.T) {
	if os.Getenv("HANDOFFCHECK_TEST_CLIENT") != "1" {
		t.Skip("only runs as the command wrapped by TestRunWrapsACommand")
	}
	b, err := os.ReadFile(strands)
	require.NoError(t, err)
	td, err := (&ptrace.JSONUnmarshaler{}).UnmarshalTraces(b)
	require.NoError(t, err)
	req := ptraceotlp.NewExportRequestFromTraces(td)
	endpoint := os.Getenv("OTEL_EXPORTER_OTLP_TRACES_ENDPOINT")
	switch protocol := os.Getenv("OTEL_EXPORTER_OTLP_TRACES_PROTOCOL"); protocol {
	case "grpc":
		// An http:// endpoint is a gRPC connection without TLS.
		target, ok := strings.CutPrefix(endpoint, "http://")
		require.True(t, ok, endpoint)
		conn, err := grpc.NewClient(target, grpc.WithTransportCredentials(insecure.NewCredentials()))
		require.NoError(t, err)
		defer conn.Close()
		_, err = ptraceotlp.NewGRPCClient(conn).Export(context.Background(), req)
		require.NoError(t, err)
	case "http/protobuf", "http/json":
		body, err := req.MarshalProto()
		ctype := "application/x-protobuf"
		if protocol == "http/json" {
			body, err = req.MarshalJSON()
			ctype = "application/json"
		}
		require.NoError(t, err)
		resp, err := http.Post(endpoint, ctype, bytes.NewReader(body))
		require.NoError(t, err)
		resp.Body.Close()
		require.Equal(t, http.StatusOK, resp.StatusCode)
	default:
		t.Fatalf("unknown OTEL_EXPORTER_OTLP_TRACES_PROTOCOL %q", protocol)
	}
	if code := os.Getenv("HANDOFFCHECK_TEST_EXIT"); code != "0" {
		os.Exit(int(code[0] - '0'))
	}
}

func TestUsage(t *testing.T) {
	code, _, errOut := runCmd(t)
	require.Equal(t, exitUsage, code)
	require.True(t, strings.HasPrefix(errOut, "usage:"))
}

// TestFileSourceRelativeToConfig: otelSpansFile is read relative to the config's folder,
// and a config of FILE cases needs no span file on the command line.
func TestFileSourceRelativeToConfig(t *testing.T) {
	dir := t.TempDir()
	copyADK(t, dir, "refund.json")
	cfg := casesConfig(t, filepath.Join(dir, "collector.yaml"), `
      - name: recorded
        steps:
          - action: ASSERT_AGENT_TOPOLOGY
            source: FILE
            otelSpansFile: ./traces/refund.json
          - action: EXPECT_DELEGATION_TO
            agentName: weather_specialist
            fromAgent: triage`)
	code, out, errOut := runCmd(t, "replay", "--config", cfg)
	require.Equal(t, exitPass, code, errOut)
	require.Equal(t, "handoffcheck: 1 traces, 2 assertions\n2 passed, 0 failed, 0 errors, 0 skipped\n", out)
}

// TestSeed000Verbatim: seed 000's example, pasted into a collector config unchanged
// (testdata/seed000/collector.yaml, source FILE): without a judge its GROUNDEDNESS rubric
// is refused at start-up, naming the step and the fix; with one (a fake judge) the run
// that keeps its promises passes every step. Then the same steps on live traces with the
// rubric's deterministic half as patterns (live.yaml), on that run and on a broken one.
func TestSeed000Verbatim(t *testing.T) {
	const dir = "../../testdata/seed000/"
	t.Setenv("SEED000_JUDGE_URL", "")
	t.Setenv("SEED000_JUDGE_MODEL", "")
	code, out, errOut := runCmd(t, "replay", "--config", dir+"collector.yaml")
	require.Equal(t, exitUsage, code, out)
	require.Equal(t, "handoffcheck: exporters.assertion: cases[0] (refund_swarm).steps[2].rubricType: EXPECT_HANDOFF_CONTEXT#3 is graded by the judge "+
		"(rubricType, inlineRubric), but no judge is configured: configure judge (judge.endpoint and judge.model), or replace the "+
		"rubric with deterministic checks (requiredPatterns, forbiddenPatterns, contextExpression) and set deterministicOnly: true on the step\n", errOut)

	srv := judgetest.New(t, judgetest.Always(judgetest.Pass))
	t.Setenv("SEED000_JUDGE_URL", srv.URL)
	t.Setenv("SEED000_JUDGE_MODEL", "fake-judge")
	code, out, errOut = runCmd(t, "replay", "--config", dir+"collector.yaml")
	require.Equal(t, exitPass, code, errOut)
	require.Equal(t, "handoffcheck: 1 traces, 4 assertions\n4 passed, 0 failed, 0 errors, 0 skipped\n"+
		"judge: fake-judge, template handoff_v1, temperature 0, 1 sample\n", out)
	require.Equal(t, 1, srv.Count(), "one handoff orchestrator -> refund_specialist graded")
	require.Contains(t, srv.Requests()[0].User(), "must include the order id and the customer's stated reason")

	code, out, errOut = runCmd(t, "replay", "--config", dir+"live.yaml", dir+"traces/refund-swarm.json", dir+"traces/refund-swarm-broken.json")
	require.Equal(t, exitFail, code, errOut)
	const broken = "trace 5eed0000000000000000000000000002 (" + dir + "traces/refund-swarm-broken.json, service refund-swarm): "
	const handoff = "handoff billing_agent -> refund_specialist (span 0000000000000017): "
	require.Equal(t, "FAIL billing_handoff EXPECT_HANDOFF_CONTEXT#2 "+broken+
		handoff+"the handoff content lacks /(?i)damaged/; "+
		handoff+`the handoff content contains forbidden /\b(?:\d[ -]?){13,16}\b/; `+
		handoff+"contextExpression is false\n"+
		"FAIL refund_swarm_live ASSERT_AGENT_TOPOLOGY#1 "+broken+"delegation depth 2 exceeds maxDepth 1 (orchestrator -> billing_agent -> refund_specialist)\n"+
		"FAIL refund_swarm_live EXPECT_DELEGATION_TO#2 "+broken+"expected orchestrator delegating to refund_specialist at least 1 times, saw 0 times (other senders to refund_specialist: billing_agent x1)\n"+
		"FAIL refund_swarm_live EXPECT_HANDOFF_CONTEXT#3 "+broken+"no handoff from orchestrator to refund_specialist in this trace\n"+
		"FAIL refund_swarm_live EXPECT_AGENT_BUDGET#4 "+broken+"refund_specialist (span 0000000000000017) used 9100 tokens, over maxTokens 8000; "+
		"refund_specialist (span 0000000000000017) made 7 tool calls, over maxToolCalls 6\n"+
		"handoffcheck: 2 traces, 10 assertions\n5 passed, 5 failed, 0 errors, 0 skipped\n", out)
}

// TestSpanTextEscaped: an agent name with a newline, a GitHub annotation and terminal
// escapes prints as one escaped line: it cannot forge a line of the CI log.
func TestSpanTextEscaped(t *testing.T) {
	b, err := os.ReadFile(strands)
	require.NoError(t, err)
	const hostile = `triage\n::error file=x::forged\u001b[2K\u202e`
	spans := filepath.Join(t.TempDir(), "hostile.json")
	require.NoError(t, os.WriteFile(spans, bytes.ReplaceAll(b, []byte(`"triage"`), []byte(`"`+hostile+`"`)), 0o644))
	cfg := config(t, `
      - name: flat
        steps:
          - action: ASSERT_AGENT_TOPOLOGY
            maxDepth: 0
`)
	code, out, errOut := runCmd(t, "replay", "--config", cfg, spans)
	require.Equal(t, exitFail, code, errOut)
	lines := strings.Split(strings.TrimSuffix(out, "\n"), "\n")
	require.Len(t, lines, 3, out)
	require.True(t, strings.HasPrefix(lines[0], "FAIL flat ASSERT_AGENT_TOPOLOGY#1 trace "), lines[0])
	require.Contains(t, lines[0], `triage\n::error file=x::forged\x1b[2K\u202e`)
	require.NotContains(t, out, "\x1b")
	require.NotContains(t, out, "\u202e")
	for _, l := range lines {
		require.False(t, strings.HasPrefix(strings.TrimSpace(l), "::"), l)
	}

	// The components' logs (--verbose: the failed assertion's record) too.
	code, _, errOut = runCmd(t, "replay", "--verbose", "--config", cfg, spans)
	require.Equal(t, exitFail, code, errOut)
	require.Contains(t, errOut, `WARN	assertion fail: delegation depth 1 exceeds maxDepth 0 (triage\n::error file=x::forged\x1b[2K\u202e -> weather_specialist)`)
	require.NotContains(t, errOut, "\x1b")
	require.NotContains(t, errOut, "\u202e")
	for _, l := range strings.Split(errOut, "\n") {
		require.False(t, strings.HasPrefix(strings.TrimSpace(l), "::"), l)
	}
}

// TestErrorsEscaped: span-file content quoted in an error (here by the JSON parser) stays
// on the error's line, escaped; every line of a joined error starts with "handoffcheck: ".
func TestErrorsEscaped(t *testing.T) {
	bad := filepath.Join(t.TempDir(), "bad.json")
	// Past the first 4 KiB, which must hold no raw control byte for the file to be JSON.
	require.NoError(t, os.WriteFile(bad, []byte(`{"resourceSpans": [`+strings.Repeat(" ", 5000)+
		"{\"resource\": {\"attributes\": \"x\n::error::forged\x1b[31m\"}}]}"), 0o644))
	code, _, errOut := runCmd(t, "replay", "--config", config(t, passing), bad)
	require.Equal(t, exitUsage, code)
	require.Contains(t, errOut, `request 1 is not OTLP/JSON traces`)
	require.Contains(t, errOut, `x\n::error::forged\x1b[31m`)
	require.Equal(t, 1, strings.Count(errOut, "\n"), errOut)

	var buf bytes.Buffer
	printError(&buf, errors.Join(errors.New("cases[0].name: must not be empty"), errors.New("agent a\n::error::b\x1b[0m")))
	require.Equal(t, "handoffcheck: cases[0].name: must not be empty\nhandoffcheck: agent a\nhandoffcheck: ::error::b\\x1b[0m\n", buf.String())
}
