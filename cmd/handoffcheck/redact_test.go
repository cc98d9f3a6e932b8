package main

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"
	"go.opentelemetry.io/collector/pdata/ptrace"

	tr "github.com/otelcol-handoff/otelcol-handoff/internal/rules/rulestest"
)

// TestConsoleLinesRedactedAndEscaped: an agent name with a newline, an escape sequence and
// an email prints as one masked, escaped console line (no forged FAIL line).
func TestConsoleLinesRedactedAndEscaped(t *testing.T) {
	code, out, errOut := replayTwoAgents(t, 0x3c, "evil\nFAIL forged \x1b[2J jane.doe@example.com", "billing-4111111111111111")
	require.Equal(t, exitFail, code, errOut)
	lines := strings.Split(strings.TrimSpace(out), "\n")
	require.True(t, strings.HasPrefix(lines[0], "FAIL flat ASSERT_AGENT_TOPOLOGY#1 trace "), out)
	require.Contains(t, lines[0], `(triage -> evil\nFAIL forged \x1b[2J [REDACTED:email])`)
	for _, l := range lines[1:] {
		require.False(t, strings.HasPrefix(l, "FAIL forged"), "a forged line: %q", out)
	}
	require.Contains(t, lines[0], "service billing-[REDACTED:card])")
	require.NotContains(t, out, "jane.doe@example.com")
	require.NotContains(t, out, "4111111111111111")
	require.NotContains(t, out, "\x1b")
}

// TestConsoleServiceNameBounded: the service name beside every console line is cut (a 10 MB
// service.name made 21 MB of console output for two results).
func TestConsoleServiceNameBounded(t *testing.T) {
	code, out, errOut := replayTwoAgents(t, 0x3d, "worker", strings.Repeat("S", 1<<20))
	require.Equal(t, exitFail, code, errOut)
	line := strings.SplitN(out, "\n", 2)[0]
	require.Contains(t, line, "service "+strings.Repeat("S", maxServiceName)+"…)")
	require.Less(t, len(line), 2*maxServiceName+400, line[:200])
}

// replayTwoAgents replays one trace, triage delegating to agent, of service service,
// against a case whose maxDepth 0 that delegation fails.
func replayTwoAgents(t *testing.T, seed byte, agent, service string) (int, string, string) {
	t.Helper()
	b := tr.New(seed)
	root := b.Agent(nil, "triage", 0, 100)
	b.Agent(root, agent, 10, 90)
	td := b.Traces()
	for _, rs := range td.ResourceSpans().All() {
		rs.Resource().Attributes().PutStr("service.name", service) // trace data too
	}
	raw, err := (&ptrace.JSONMarshaler{}).MarshalTraces(td)
	require.NoError(t, err)
	spans := filepath.Join(t.TempDir(), "trace.json")
	require.NoError(t, os.WriteFile(spans, raw, 0o644))
	return runCmd(t, "replay", "--config", config(t, `
      - name: flat
        steps:
          - action: ASSERT_AGENT_TOPOLOGY
            maxDepth: 0
`), spans)
}
