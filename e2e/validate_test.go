package e2e

import (
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/otelcol-handoff/otelcol-handoff/internal/readmetest"
)

// TestConfigsValidate runs the built collector's `validate` on every config of config/ and
// on every full collector config shown in README.md, so the docs and the shipped configs
// cannot drift from what the distribution accepts.
func TestConfigsValidate(t *testing.T) {
	bin, err := filepath.Abs(binaryPath)
	require.NoError(t, err)
	_, err = os.Stat(bin)
	require.NoError(t, err, "collector binary missing: run `make build` first (make test does)")

	configs, err := filepath.Glob(filepath.Join("..", "config", "*.yaml"))
	require.NoError(t, err)
	examples, err := filepath.Glob(filepath.Join("..", "examples", "*", "*config.yaml"))
	require.NoError(t, err)
	require.NotEmpty(t, examples)
	configs = append(configs, examples...)
	require.NotEmpty(t, configs)

	for i, b := range readmetest.Blocks(t, filepath.Join("..", "README.md")) {
		if !strings.Contains(b, "service:") {
			continue
		}
		path := filepath.Join(t.TempDir(), "readme-"+string(rune('a'+i))+".yaml")
		require.NoError(t, os.WriteFile(path, []byte(b), 0o644))
		configs = append(configs, path)
	}
	for _, c := range configs {
		out, err := exec.Command(bin, "validate", "--config", c).CombinedOutput()
		require.NoError(t, err, "%s:\n%s", c, out)
	}

	// And a broken one is refused, naming the field.
	bad := filepath.Join(t.TempDir(), "bad.yaml")
	require.NoError(t, os.WriteFile(bad, []byte(`
receivers: {otlp: {protocols: {http: {endpoint: 127.0.0.1:0}}}}
processors: {handoff: {quiet_period: 5s, max_wait: 1s}}
exporters:
  assertion:
    cases:
      - name: c
        steps:
          - action: EXPECT_DELEGATION_TO
            agentName: b
service: {pipelines: {traces: {receivers: [otlp], processors: [handoff], exporters: [assertion]}}}
`), 0o644))
	out, err := exec.Command(bin, "validate", "--config", bad).CombinedOutput()
	require.Error(t, err)
	require.Contains(t, string(out), "max_wait (1s) must be at least quiet_period (5s)")
	require.Contains(t, string(out), "cases[0] (c).steps[0].action: EXPECT_DELEGATION_TO reads the DAG of an earlier ASSERT_AGENT_TOPOLOGY step")
}
