package main

import (
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/otelcol-handoff/otelcol-handoff/internal/judge/judgetest"
)

// misnamed are cases whose rules name what the captures never show: a sender spelled
// wrong, an agent that never runs, a tool nobody calls (in a case, a child agent's fields
// and the defaults), and a case whose condition selects nothing.
const misnamed = `
      - name: tight_budget
        steps:
          - action: ASSERT_AGENT_TOPOLOGY
          - action: EXPECT_DELEGATION_TO
            agentName: weather_specialist
            fromAgent: triage_agent
          - action: EXPECT_AGENT_BUDGET
            name: ghost
            agentName: ghost
            maxTokens: 10
          - action: EXPECT_TRAJECTORY
            agentName: weather_specialist
            mode: in_order
            reference: [get_weather, {parallel: [get_weather, {tool: get_wether, optional: true}]}]
        expected_tool_calls: [get_weather, get_forecast]
        expected_child_agents:
          weather_specialist:
            expected_tool_call_order: [get_weather, get_umbrella]
      - name: unselected
        when: root_agent == "nobody"
        steps:
          - action: ASSERT_AGENT_TOPOLOGY
    defaults:
      expected_no_tool_calls: [delete_everything]
`

// TestValidate: a valid config passes (exit 0) with, given traces, a warning for each name
// they never show and each case that selects none of them; --strict makes warnings exit 1.
func TestValidate(t *testing.T) {
	cfg := config(t, misnamed)
	code, out, errOut := runCmd(t, "validate", "--config", cfg)
	require.Equal(t, exitPass, code, errOut)
	require.Equal(t, "handoffcheck: "+cfg+" is valid: processors.handoff, exporters.assertion, 2 cases\n"+
		"handoffcheck: no span files given: the rules were not checked against traces "+
		"(validate --config c.yaml spans.json warns about agents, tools and cases the traces never show)\n"+
		"handoffcheck: 0 warnings\n", out)

	const seen = "(agents seen: triage, weather_specialist)"
	const tools = "(tools seen: get_weather, strands_structured_output, transfer_to_agent)"
	want := "handoffcheck: " + cfg + " is valid: processors.handoff, exporters.assertion, 2 cases\n" +
		"WARN cases[0] (tight_budget).steps[1].fromAgent: agent triage_agent never appears in the 2 traces given " + seen + "\n" +
		"WARN cases[0] (tight_budget).steps[2].agentName: agent ghost never appears in the 2 traces given " + seen + "\n" +
		"WARN cases[0] (tight_budget).steps[3].reference[1].parallel[1]: tool get_wether never appears in the 2 traces given " + tools + "\n" +
		"WARN cases[0] (tight_budget).expected_tool_calls[1]: tool get_forecast never appears in the 2 traces given " + tools + "\n" +
		"WARN cases[0] (tight_budget).expected_child_agents.weather_specialist.expected_tool_call_order[1]: tool get_umbrella never appears in the 2 traces given " + tools + "\n" +
		"WARN cases[1] (unselected): selects no trace of the 2 traces given (its when condition is false on every one, or no trace has an agent span)\n" +
		"WARN defaults.expected_no_tool_calls[0]: tool delete_everything never appears in the 2 traces " + tools + "\n" +
		"handoffcheck: 7 warnings\n"
	code, out, errOut = runCmd(t, "validate", "--config", cfg, adk, strands)
	require.Equal(t, exitPass, code, errOut)
	require.Equal(t, want, out)
	require.Empty(t, errOut)

	code, out, _ = runCmd(t, "validate", "--strict", "--config", cfg, strands, adk)
	require.Equal(t, exitFail, code)
	require.Equal(t, want, out, "the same warnings in any file order")

	// The rules the captures exercise: no warning, even with --strict.
	code, out, errOut = runCmd(t, "validate", "--strict", "--config", config(t, passing+`
        expected_tool_calls: [get_weather]
      - name: tight_budget
        steps:
          - action: ASSERT_AGENT_TOPOLOGY
          - action: EXPECT_AGENT_BUDGET
            agentName: weather_specialist
            maxToolCalls: 1
`), adk, strands)
	require.Equal(t, exitPass, code, errOut)
	require.Contains(t, out, "\nhandoffcheck: 0 warnings\n")
}

// TestValidateFileCase: a FILE case is checked against its own file, without span files on
// the command line; live cases without span files are named as unchecked.
func TestValidateFileCase(t *testing.T) {
	dir := t.TempDir()
	copyADK(t, dir, "recorded.json")
	cfg := casesConfig(t, filepath.Join(dir, "collector.yaml"), `
      - name: recorded
        steps:
          - action: ASSERT_AGENT_TOPOLOGY
            source: FILE
            otelSpansFile: ./traces/recorded.json
          - action: EXPECT_DELEGATION_TO
            agentName: refund_specialist
      - name: live
        steps:
          - action: ASSERT_AGENT_TOPOLOGY`)
	code, out, errOut := runCmd(t, "validate", "--config", cfg)
	require.Equal(t, exitPass, code, errOut)
	file := filepath.Join(dir, "traces", "recorded.json")
	require.Equal(t, "handoffcheck: "+cfg+" is valid: processors.handoff, exporters.assertion, 2 cases\n"+
		"WARN cases[0] (recorded).steps[1].agentName: agent refund_specialist never appears in the 1 trace of "+file+
		" (agents seen: triage, weather_specialist)\n"+
		"handoffcheck: 1 case of live traces not checked against traces: no span files given\n"+
		"handoffcheck: 1 warning\n", out)
}

// TestValidateErrors: an invalid config and an unreadable span file exit 2, as replay
// does; validate writes no report and never calls the judge.
func TestValidateErrors(t *testing.T) {
	dir := t.TempDir()
	code, _, errOut := runCmd(t, "validate", "--config", config(t, `
      - name: c
        steps:
          - action: EXPECT_DELEGATION_TO
            agentName: b
`))
	require.Equal(t, exitUsage, code)
	require.Contains(t, errOut, "EXPECT_DELEGATION_TO reads the DAG of an earlier ASSERT_AGENT_TOPOLOGY step")

	code, _, errOut = runCmd(t, "validate", "--config", config(t, passing+`
    reports: {markdown: `+filepath.Join(dir, "gone", "r.md")+`}
`))
	require.Equal(t, exitUsage, code)
	require.Contains(t, errOut, "reports.markdown: directory "+filepath.Join(dir, "gone")+" does not exist")

	code, _, errOut = runCmd(t, "validate", "--config", config(t, passing), filepath.Join(dir, "nope.json"))
	require.Equal(t, exitUsage, code)
	require.Contains(t, errOut, "nope.json")

	code, _, errOut = runCmd(t, "validate", "--config", filepath.Join(dir, "missing.yaml"))
	require.Equal(t, exitUsage, code)
	require.Contains(t, errOut, "missing.yaml")

	// What only the exporter checks when it is made fails validate as it fails replay: a
	// judge key missing from the environment, a judge redaction pattern without a judge.
	code, _, errOut = runCmd(t, "validate", "--config", config(t, passing+`
    judge: {endpoint: 'http://127.0.0.1:1/v1', model: m, api_key_env: HANDOFFCHECK_UNSET_JUDGE_KEY}
`))
	require.Equal(t, exitUsage, code)
	require.Contains(t, errOut, "exporters.assertion: judge.api_key_env: environment variable HANDOFFCHECK_UNSET_JUDGE_KEY is not set or empty")
	code, _, errOut = runCmd(t, "validate", "--config", config(t, passing+`
    judge: {redact: ['(x']}
`))
	require.Equal(t, exitUsage, code)
	require.Contains(t, errOut, "judge.redact[0]: error parsing regexp")

	// A judged config with its reports: validated, nothing graded, nothing written.
	srv := judgetest.New(t, judgetest.Always(judgetest.Pass))
	md, junit := filepath.Join(dir, "r.md"), filepath.Join(dir, "r.xml")
	cfg := gatedConfig(t, "    judge: {endpoint: '"+srv.URL+"', model: fake-judge, retries: 0}\n"+
		"    reports: {markdown: "+md+", junit: "+junit+"}")
	files := writeTraces(t, flightTrace(0x51, "ok"), flightTrace(0x52, "swallowed"))
	code, out, errOut := runCmd(t, append([]string{"validate", "--config", cfg}, files...)...)
	require.Equal(t, exitPass, code, errOut)
	require.Contains(t, out, "handoffcheck: 0 warnings\n")
	require.Zero(t, srv.Count())
	require.NoFileExists(t, md)
	require.NoFileExists(t, junit)
}
