package e2e

import (
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"
)

// TestValidateNamesConfigMistakes: the built collector's `validate` names a misspelled key
// by its path with the nearest valid key, a value of the wrong kind in words, and, in a
// config without a judge, the judge-graded step with the fix.
func TestValidateNamesConfigMistakes(t *testing.T) {
	bin := collectorBinary(t)
	write := func(exporter string) string {
		path := filepath.Join(t.TempDir(), "collector.yaml")
		require.NoError(t, os.WriteFile(path, []byte(`
receivers: {otlp: {protocols: {http: {endpoint: 127.0.0.1:0}}}}
processors: {handoff: {}}
exporters:
  assertion:
`+exporter+`
service: {pipelines: {traces: {receivers: [otlp], processors: [handoff], exporters: [assertion]}}}
`), 0o644))
		return path
	}
	keys := write(`
    cases:
      - name: refunds
        steps:
          - action: ASSERT_AGENT_TOPOLOGY
          - action: EXPECT_DELEGATION_TO
            agentName: refund_specialist
            maxInvocation: 2
          - action: EXPECT_AGENT_BUDGET
            agentName: refund_specialist
            maxTokens: lots`)
	out, err := exec.Command(bin, "validate", "--config", keys).CombinedOutput()
	require.Error(t, err, "%s", out)
	require.Contains(t, string(out), `error reading configuration for "assertion": decoding failed due to the following error(s):`+"\n\n"+
		"'' cases[0].steps[1].maxInvocation: unknown key, did you mean maxInvocations?\n"+
		`cases[0].steps[2].maxTokens: must be a whole number, got "lots"`)
	require.NotContains(t, string(out), "expected type")

	judged := write(`
    cases:
      - name: seams
        steps:
          - action: ASSERT_AGENT_TOPOLOGY
          - action: EXPECT_HANDOFF_RUBRICS`)
	out, err = exec.Command(bin, "validate", "--config", judged).CombinedOutput()
	require.Error(t, err, "%s", out)
	require.Contains(t, string(out), "cases[0] (seams).steps[1].action: EXPECT_HANDOFF_RUBRICS#2 grades DispatchCorrectness, "+
		"ScopeFidelity, ResultIntegration, RecoveryOnError with the judge, but no judge is configured: configure judge "+
		"(judge.endpoint and judge.model), or keep only the deterministic checks with deterministicOnly: true on the step")

	fixed := write(`
    cases:
      - name: seams
        steps:
          - action: ASSERT_AGENT_TOPOLOGY
          - action: EXPECT_HANDOFF_RUBRICS
            deterministicOnly: true`)
	out, err = exec.Command(bin, "validate", "--config", fixed).CombinedOutput()
	require.NoError(t, err, "%s", out)

	// Trajectories and loops: a misspelled loop key, then every value error named by its field.
	loopKey := write(`
    cases:
      - name: loops
        steps:
          - action: ASSERT_AGENT_TOPOLOGY
            maxPairRepeat: 2`)
	out, err = exec.Command(bin, "validate", "--config", loopKey).CombinedOutput()
	require.Error(t, err, "%s", out)
	require.Contains(t, string(out), "cases[0].steps[0].maxPairRepeat: unknown key, did you mean maxPairRepeats?")
	trajectory := write(`
    cases:
      - name: order
        steps:
          - action: ASSERT_AGENT_TOPOLOGY
            maxCycleLength: 2
          - action: EXPECT_TRAJECTORY
            agentName: billing
            fromAgent: triage
            mode: sorted
            reference: []`)
	out, err = exec.Command(bin, "validate", "--config", trajectory).CombinedOutput()
	require.Error(t, err, "%s", out)
	for _, want := range []string{
		"cases[0] (order).steps[0].maxCycleLength: bounds the loops allowCycles or allowedCycles let through",
		`cases[0] (order).steps[1].mode: unknown mode "sorted"`,
		"cases[0] (order).steps[1].fromAgent: set either agentName (that agent's runs) or fromAgent/toAgent (the receiver's run of a handoff), not both",
		"cases[0] (order).steps[1].reference: must list at least one step",
	} {
		require.Contains(t, string(out), want)
	}
}

// TestPipelineWithoutHandoffProcessor: a collector whose assertion exporter has no handoff
// processor in front does not judge what it receives: every result of the real ADK trace is
// an error naming the fix, and one Error line says so in the collector's log.
func TestPipelineWithoutHandoffProcessor(t *testing.T) {
	bin := collectorBinary(t)
	adk := loadCapture(t, "google-adk-ok.json")
	dir := t.TempDir()
	params := struct {
		HTTPPort, HealthPort int
		ReportPath           string
	}{freePort(t), freePort(t), filepath.Join(dir, "verdicts.jsonl")}
	col := startCollector(t, bin, renderConfig(t, dir, "no_handoff_processor.yaml.tmpl", params))
	col.waitReady(t, fmt.Sprintf("http://127.0.0.1:%d/", params.HealthPort))
	postTraces(t, fmt.Sprintf("http://127.0.0.1:%d/v1/traces", params.HTTPPort), adk.td)
	results := col.waitForResults(t, params.ReportPath, map[string]int{adk.traceID: 2})
	col.stop(t)

	require.Len(t, results, 2)
	for _, r := range results {
		require.Equal(t, "error", r.Outcome, r.Step)
		require.Equal(t, "not assembled", r.Actual)
		require.True(t, strings.HasPrefix(r.Message, "not assembled by the handoff processor: this trace may be a fragment, so it was not judged; "+
			"put the handoff processor before the assertion exporter in the traces pipeline"), r.Message)
	}
	require.Equal(t, 1, strings.Count(col.output(), "assertion exporter received a trace the handoff processor did not assemble"), col.output())
}
