package main

import (
	"bytes"
	"encoding/json"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/otelcol-handoff/otelcol-handoff/internal/cluster"
)

// TestHelpOnStdout: --help (and -h, help COMMAND) prints on stdout and exits 0, for the
// root and every command.
func TestHelpOnStdout(t *testing.T) {
	for _, args := range [][]string{{"--help"}, {"-h"}, {"help"}} {
		code, out, errOut := runCmd(t, args...)
		require.Equal(t, exitPass, code, args)
		require.Empty(t, errOut, args)
		require.Contains(t, out, "handoffcheck gives a CI job a verdict")
		require.Contains(t, out, "usage:\n  handoffcheck replay --config collector.yaml [flags] [FILE...]\n")
		for _, cmd := range []string{"replay", "run", "validate", "version", "completion"} {
			require.Regexp(t, "\n  "+cmd+" +[A-Z]", out, "command %s listed", cmd)
		}
	}
	for cmd, flags := range map[string][]string{
		"replay":   {"--config", "--fail-on", "--junit", "--markdown", "--json", "--summary", "--verbose", "--processor", "--exporter"},
		"run":      {"--config", "--fail-on", "--protocol", "--summary", "OTEL_EXPORTER_OTLP_ENDPOINT", "HANDOFFCHECK_OTLP_GRPC_ENDPOINT"},
		"validate": {"--config", "--strict", "otelcol-handoff validate"},
	} {
		for _, args := range [][]string{{cmd, "--help"}, {"help", cmd}} {
			code, out, errOut := runCmd(t, args...)
			require.Equal(t, exitPass, code, args)
			require.Empty(t, errOut, args)
			require.Contains(t, out, "usage:\n  handoffcheck "+cmd+" --config collector.yaml")
			for _, f := range flags {
				require.Contains(t, out, f, args)
			}
		}
	}
}

// TestUsageErrors: what is wrong with the command line exits 2, on stderr, with the usage
// when a flag or a command is unknown; stdout stays empty.
func TestUsageErrors(t *testing.T) {
	cfg := config(t, passing)
	tests := []struct {
		args      []string
		want      string
		withUsage bool
	}{
		{nil, "", true},
		{[]string{"check"}, `handoffcheck: unknown command "check" for "handoffcheck"`, true},
		{[]string{"replay", "--bogus", "--config", cfg, adk}, "handoffcheck: unknown flag: --bogus", true},
		{[]string{"replay", "--config"}, "handoffcheck: flag needs an argument: --config", true},
		{[]string{"validate", "--bogus"}, "handoffcheck: unknown flag: --bogus", true},
		{[]string{"version", "extra"}, `handoffcheck: unknown command "extra" for "handoffcheck version"`, true},
		{[]string{"replay", adk}, "handoffcheck: --config is required", false},
		{[]string{"validate", adk}, "handoffcheck: --config is required", false},
		{[]string{"replay", "--config", cfg, "--summary", "xml", adk}, `handoffcheck: --summary: unknown format "xml" (want text or json)`, false},
		{[]string{"run", "--config", cfg, "--protocol", "thrift", "--", "true"}, `handoffcheck: --protocol: unknown OTLP protocol "thrift" (want http/protobuf, http/json or grpc)`, false},
		{[]string{"run", "--config", cfg}, "handoffcheck: run: no command given (put it after --)", false},
	}
	for _, tt := range tests {
		t.Run(strings.Join(tt.args, " "), func(t *testing.T) {
			code, out, errOut := runCmd(t, tt.args...)
			require.Equal(t, exitUsage, code)
			require.Empty(t, out)
			require.True(t, strings.HasPrefix(errOut, tt.want), errOut)
			if tt.withUsage {
				require.Contains(t, errOut, "usage:\n  handoffcheck ")
			} else {
				require.Equal(t, tt.want+"\n", errOut)
			}
		})
	}

	// The environment's protocol is the default of --protocol, checked as strictly.
	t.Setenv("OTEL_EXPORTER_OTLP_TRACES_PROTOCOL", "")
	t.Setenv("OTEL_EXPORTER_OTLP_PROTOCOL", "thrift")
	code, _, errOut := runCmd(t, "run", "--config", cfg, "--", "true")
	require.Equal(t, exitUsage, code)
	require.Equal(t, "handoffcheck: OTEL_EXPORTER_OTLP_PROTOCOL: unknown OTLP protocol \"thrift\" (want http/protobuf, http/json or grpc)\n", errOut)
}

// TestGoStyleFlags: the single-dash long flags of the flag package still work, and the
// wrapped command's own flags (after its name) are left alone.
func TestGoStyleFlags(t *testing.T) {
	code, out, errOut := runCmd(t, "replay", "-config", config(t, passing), "-fail-on=fail,error", adk, strands)
	require.Equal(t, exitPass, code, errOut)
	require.Equal(t, "handoffcheck: 2 traces, 4 assertions\n4 passed, 0 failed, 0 errors, 0 skipped\n", out)

	root := newRootCommand(t.Context(), &bytes.Buffer{}, &bytes.Buffer{}, new(int))
	require.Equal(t, []string{"run", "--config", "c.yaml", "--verbose", "npm", "-config", "x"},
		goStyleFlags(root, []string{"run", "-config", "c.yaml", "-verbose", "npm", "-config", "x"}))
	require.Equal(t, []string{"run", "--config", "-c", "--", "-json", "x"},
		goStyleFlags(root, []string{"run", "-config", "-c", "--", "-json", "x"}))
	require.Equal(t, []string{"replay", "-h"}, goStyleFlags(root, []string{"replay", "-h"}))
}

// TestVersion: version prints the link-time variables, else the build info; the collector
// release is the one go.mod pins.
func TestVersion(t *testing.T) {
	gomod, err := os.ReadFile("../../go.mod")
	require.NoError(t, err)
	m := regexp.MustCompile(`(?m)^\s*` + regexp.QuoteMeta(collectorModule) + ` (v\S+)`).FindSubmatch(gomod)
	require.NotNil(t, m, "go.mod requires %s", collectorModule)
	release := string(m[1])
	stable := regexp.MustCompile(`(?m)^\s*` + regexp.QuoteMeta(collectorStableModule) + ` (v\S+)`).FindSubmatch(gomod)
	require.NotNil(t, stable)

	code, out, errOut := runCmd(t, "version")
	require.Equal(t, exitPass, code, errOut)
	require.Regexp(t, `^handoffcheck devel\ncommit:    unknown\nbuilt:     unknown\ncollector: `+
		regexp.QuoteMeta(release+" (stable modules "+string(stable[1])+")")+`\ngo:        go1\.\S+ \S+/\S+\n$`, out)

	version, commit, date = "v1.2.3", "0123456789abcdef", "2026-12-01T09:00:00Z"
	t.Cleanup(func() { version, commit, date = "", "", "" })
	code, out, _ = runCmd(t, "version")
	require.Equal(t, exitPass, code)
	require.True(t, strings.HasPrefix(out, "handoffcheck v1.2.3\ncommit:    0123456789abcdef\nbuilt:     2026-12-01T09:00:00Z\ncollector: "+release+" "), out)
	for _, flag := range []string{"--version", "-v"} {
		code, out, _ = runCmd(t, flag)
		require.Equal(t, exitPass, code)
		require.Equal(t, "handoffcheck v1.2.3 (commit 0123456789abcdef, collector "+release+")\n", out)
	}
}

// TestCompletion: completion scripts for the shells cobra knows, on stdout.
func TestCompletion(t *testing.T) {
	for shell, want := range map[string]string{
		"bash": "__start_handoffcheck", "zsh": "#compdef handoffcheck",
		"fish": "complete -c handoffcheck", "powershell": "Register-ArgumentCompleter",
	} {
		code, out, errOut := runCmd(t, "completion", shell)
		require.Equal(t, exitPass, code, errOut)
		require.Contains(t, out, want, shell)
	}
	// Completing a command name, as the shell's script asks.
	code, out, _ := runCmd(t, "__complete", "val")
	require.Equal(t, exitPass, code)
	require.Contains(t, out, "validate\t")
	code, _, errOut := runCmd(t, "completion", "tcsh")
	require.Equal(t, exitUsage, code)
	require.True(t, strings.HasPrefix(errOut, `handoffcheck: unknown command "tcsh" for "handoffcheck completion"`+"\nusage:"), errOut)
	code, _, errOut = runCmd(t, "completion")
	require.Equal(t, exitUsage, code)
	require.Contains(t, errOut, "completion: name a shell")
}

// TestSummaryJSON: --summary json prints one JSON object on stdout (the verdict lines go to
// stderr), with the counts, the exit code, each case and each result that did not pass
// with its files and service; an error exit prints one too.
func TestSummaryJSON(t *testing.T) {
	code, out, errOut := runCmd(t, "replay", "--config", config(t, failing+`
      - name: unselected
        when: root_agent == "nobody"
        steps:
          - action: ASSERT_AGENT_TOPOLOGY
`), "--summary", "json", adk, strands)
	require.Equal(t, exitFail, code, errOut)
	require.Contains(t, errOut, "FAIL tight_budget EXPECT_AGENT_BUDGET#2 trace ee43d96bfb5cdaf53f26aa5435c557e3"+strandsLabel)
	require.Contains(t, errOut, "6 passed, 2 failed, 0 errors, 2 skipped\n")
	require.Equal(t, 1, strings.Count(out, "\n"), out)
	var got map[string]any
	dec := json.NewDecoder(strings.NewReader(out))
	dec.UseNumber()
	require.NoError(t, dec.Decode(&got))
	// The same budget failure on both traces (other span ids) has one signature; first and
	// last seen are the traces' starts (their earliest spans: ADK 05:42:22.044, Strands
	// 05:42:27.644).
	sig := cluster.Key{
		Case: "tight_budget", Step: "EXPECT_AGENT_BUDGET#2", Cluster: cluster.BudgetBlowout,
		Message: "weather_specialist (span 6bcab0b4c887d392) made 2 tool calls, over maxToolCalls 1",
	}.Signature()
	fix := cluster.FixFor(cluster.BudgetBlowout, "", "")
	want := `{"exit_code":1,"traces":2,"assertions":10,
	  "counts":{"pass":6,"fail":2,"gated":0,"error":0,"skipped":2},
	  "cases":[
	    {"name":"weather_delegation","traces":2,"counts":{"pass":4,"fail":0,"gated":0,"error":0,"skipped":0},"not_passed":[]},
	    {"name":"tight_budget","traces":2,"counts":{"pass":2,"fail":2,"gated":0,"error":0,"skipped":2},"not_passed":[
	      {"step":"EXPECT_AGENT_BUDGET#2","outcome":"fail","trace_id":"ee43d96bfb5cdaf53f26aa5435c557e3","files":["` + strands + `"],
	       "service":"realclient-strands","message":"weather_specialist (span 6bcab0b4c887d392) made 2 tool calls, over maxToolCalls 1",
	       "cluster":"budget_blowout","signature":"` + sig + `"},
	      {"step":"ghost","outcome":"skipped","trace_id":"ee43d96bfb5cdaf53f26aa5435c557e3","files":["` + strands + `"],
	       "service":"realclient-strands","message":"agent ghost did not run; agents that ran: triage, weather_specialist; nothing to budget"},
	      {"step":"EXPECT_AGENT_BUDGET#2","outcome":"fail","trace_id":"f4f85fa1287a499869aa8f6a54cd202a","files":["` + adk + `"],
	       "service":"realclient-google-adk","message":"weather_specialist (span 0220be9d21dc61d8) made 2 tool calls, over maxToolCalls 1",
	       "cluster":"budget_blowout","signature":"` + sig + `"},
	      {"step":"ghost","outcome":"skipped","trace_id":"f4f85fa1287a499869aa8f6a54cd202a","files":["` + adk + `"],
	       "service":"realclient-google-adk","message":"agent ghost did not run; agents that ran: triage, weather_specialist; nothing to budget"}]},
	    {"name":"unselected","traces":0,"counts":{"pass":0,"fail":0,"gated":0,"error":0,"skipped":0},"not_passed":[]}],
	  "clusters":[{"cluster":"budget_blowout","count":2,"signatures":1,"immediate_fix":"` + fix + `"}],
	  "signatures":[{"cluster":"budget_blowout","signature":"` + sig + `","case":"tight_budget","step":"EXPECT_AGENT_BUDGET#2",
	    "message":"weather_specialist (span <id>) made <n> tool calls, over maxToolCalls <n>","count":2,"traces":2,
	    "first_seen":"2026-11-30T05:42:22.044Z","last_seen":"2026-11-30T05:42:27.644Z",
	    "trace_ids":["f4f85fa1287a499869aa8f6a54cd202a","ee43d96bfb5cdaf53f26aa5435c557e3"],"immediate_fix":"` + fix + `"}]}`
	var wantObj map[string]any
	dec = json.NewDecoder(strings.NewReader(want))
	dec.UseNumber()
	require.NoError(t, dec.Decode(&wantObj))
	require.Equal(t, wantObj, got)

	// A passing run: exit 0 in the object; text from span data is not HTML-escaped.
	code, out, _ = runCmd(t, "replay", "--config", config(t, passing), "--summary", "json", adk)
	require.Equal(t, exitPass, code)
	require.True(t, strings.HasPrefix(out, `{"exit_code":0,"traces":1,"assertions":2,"counts":{"pass":2,`), out)

	// An input error: exit 2, the error in the object.
	missing := filepath.Join(t.TempDir(), "nope.json")
	code, out, errOut = runCmd(t, "replay", "--config", config(t, passing), "--summary", "json", missing)
	require.Equal(t, exitUsage, code)
	require.Contains(t, errOut, "no such file or directory")
	var failed summary
	require.NoError(t, json.Unmarshal([]byte(out), &failed))
	require.Equal(t, exitUsage, failed.ExitCode)
	require.Contains(t, failed.Error, "nope.json")
	require.Empty(t, failed.Cases)
}

// TestSummaryJSONNotEscaped: a message holding <, > and & prints them as they are.
func TestSummaryJSONNotEscaped(t *testing.T) {
	code, out, _ := runCmd(t, "replay", "--config", config(t, `
      - name: flat
        steps:
          - action: ASSERT_AGENT_TOPOLOGY
            maxDepth: 0
`), "--summary", "json", strands)
	require.Equal(t, exitFail, code)
	require.Contains(t, out, `"message":"delegation depth 1 exceeds maxDepth 0 (triage -> weather_specialist)"`)
	require.NotContains(t, out, `\u003e`)
}

// TestRunProtocols: run points the command's exporter at the gRPC receiver or the HTTP one,
// as --protocol (or the environment's OTEL_EXPORTER_OTLP_PROTOCOL) says; each protocol
// delivers the capture and gives the same verdicts. The summary names the command's exit
// code when it failed.
func TestRunProtocols(t *testing.T) {
	cfg := config(t, failing)
	self := os.Args[0]
	t.Setenv("HANDOFFCHECK_TEST_CLIENT", "1")
	t.Setenv("HANDOFFCHECK_TEST_EXIT", "0")
	t.Setenv("OTEL_EXPORTER_OTLP_TRACES_PROTOCOL", "")
	var verdicts []string
	for _, tt := range []struct {
		name, env string
		flags     []string
		endpoint  *regexp.Regexp
	}{
		{"grpc flag", "", []string{"--protocol", "grpc"}, regexp.MustCompile(`OTEL_EXPORTER_OTLP_ENDPOINT=http://127\.0\.0\.1:\d+ \(OTEL_EXPORTER_OTLP_PROTOCOL=grpc\)`)},
		{"grpc from the environment", "grpc", nil, regexp.MustCompile(`\(OTEL_EXPORTER_OTLP_PROTOCOL=grpc\)`)},
		{"http/protobuf", "", []string{"--protocol", "http/protobuf"}, regexp.MustCompile(`\(OTEL_EXPORTER_OTLP_PROTOCOL=http/protobuf\)`)},
		{"http/json flag over the environment", "grpc", []string{"--protocol", "http/json"}, regexp.MustCompile(`\(OTEL_EXPORTER_OTLP_PROTOCOL=http/json\)`)},
	} {
		t.Run(tt.name, func(t *testing.T) {
			t.Setenv("OTEL_EXPORTER_OTLP_PROTOCOL", tt.env)
			args := append(append([]string{"run", "--config", cfg}, tt.flags...), "--", self, "-test.run=TestClientProcess")
			code, out, errOut := runCmd(t, args...)
			require.Equal(t, exitFail, code, errOut)
			require.Regexp(t, tt.endpoint, errOut)
			require.Contains(t, out, "FAIL tight_budget EXPECT_AGENT_BUDGET#2 trace ee43d96bfb5cdaf53f26aa5435c557e3 (live, service realclient-strands): ")
			require.Contains(t, out, "handoffcheck: 1 traces, 5 assertions\n3 passed, 1 failed, 0 errors, 1 skipped\n")
			verdicts = append(verdicts, out)
		})
	}
	for _, v := range verdicts[1:] {
		require.Equal(t, verdicts[0], v)
	}

	// The variables each protocol exports.
	grpcEnv := strings.Join(otlpEnv(protocolGRPC, 1111, 2222), "\n")
	require.Contains(t, grpcEnv, "OTEL_EXPORTER_OTLP_TRACES_ENDPOINT=http://127.0.0.1:1111\n")
	require.Contains(t, grpcEnv, "OTEL_EXPORTER_OTLP_TRACES_PROTOCOL=grpc\n")
	require.Contains(t, grpcEnv, "HANDOFFCHECK_OTLP_HTTP_ENDPOINT=http://127.0.0.1:2222")
	httpEnv := strings.Join(otlpEnv(protocolHTTPProtobuf, 1111, 2222), "\n")
	require.Contains(t, httpEnv, "OTEL_EXPORTER_OTLP_ENDPOINT=http://127.0.0.1:2222\n")
	require.Contains(t, httpEnv, "OTEL_EXPORTER_OTLP_TRACES_ENDPOINT=http://127.0.0.1:2222/v1/traces\n")
	require.Contains(t, httpEnv, "HANDOFFCHECK_OTLP_GRPC_ENDPOINT=127.0.0.1:1111\n")

	// With --summary json, stdout is the JSON object alone (the command's output goes to
	// stderr); a failed command's exit code is in it.
	t.Setenv("OTEL_EXPORTER_OTLP_PROTOCOL", "")
	t.Setenv("HANDOFFCHECK_TEST_EXIT", "7")
	code, out, errOut := runCmd(t, "run", "--config", cfg, "--summary", "json", "--protocol", "grpc", "--", self, "-test.run=TestClientProcess")
	require.Equal(t, exitCommandFailed, code, errOut)
	var s summary
	require.NoError(t, json.Unmarshal([]byte(out), &s), out)
	require.Equal(t, exitCommandFailed, s.ExitCode)
	require.NotNil(t, s.CommandExitCode)
	require.Equal(t, 7, *s.CommandExitCode)
	require.Equal(t, 5, s.Assertions)
	require.Contains(t, errOut, "the command failed with exit code 7")
}
