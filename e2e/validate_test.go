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
	// From the repository root, as `make validate` runs them: config/example-forward.yaml
	// writes its report under ./_build, which validate checks exists.
	root, err := filepath.Abs("..")
	require.NoError(t, err)
	for _, c := range configs {
		c, err := filepath.Abs(c)
		require.NoError(t, err)
		cmd := exec.Command(bin, "validate", "--config", c)
		cmd.Dir = root
		out, err := cmd.CombinedOutput()
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

// TestValidateChecksFiles: `validate` refuses report paths whose directory is missing or
// that name a directory, and recorded-spans files that are missing or not regular files,
// naming each field, without creating anything; a relative otelSpansFile is relative to the
// working directory, as the collector opens it.
func TestValidateChecksFiles(t *testing.T) {
	bin, err := filepath.Abs(binaryPath)
	require.NoError(t, err)
	spans, err := filepath.Abs(filepath.Join("..", "testdata", "traces", "google-adk-ok.json"))
	require.NoError(t, err)
	dir := t.TempDir()
	write := func(name, reports, spansFile string) string {
		path := filepath.Join(dir, name)
		require.NoError(t, os.WriteFile(path, []byte(`
receivers: {otlp: {protocols: {http: {endpoint: 127.0.0.1:0}}}}
processors: {handoff: {}}
exporters:
  assertion:
    reports: `+reports+`
    cases:
      - name: recorded
        steps:
          - action: ASSERT_AGENT_TOPOLOGY
            source: FILE
            otelSpansFile: `+spansFile+`
service: {pipelines: {traces: {receivers: [otlp], processors: [handoff], exporters: [assertion]}}}
`), 0o644))
		return path
	}
	validate := func(cfg, wd string) (string, error) {
		cmd := exec.Command(bin, "validate", "--config", cfg)
		cmd.Dir = wd
		out, err := cmd.CombinedOutput()
		return string(out), err
	}

	reportsDir := filepath.Join(dir, "reports")
	require.NoError(t, os.Mkdir(reportsDir, 0o755))
	good := write("good.yaml", "{json_lines: "+filepath.Join(reportsDir, "v.jsonl")+", junit: "+filepath.Join(reportsDir, "a.xml")+"}", spans)
	out, err := validate(good, dir)
	require.NoError(t, err, out)
	entries, err := os.ReadDir(reportsDir)
	require.NoError(t, err)
	require.Empty(t, entries, "validate created a report")

	missing := filepath.Join(dir, "nope")
	bad := write("bad.yaml", "{json_lines: "+filepath.Join(missing, "v.jsonl")+", markdown: "+reportsDir+"}", filepath.Join(dir, "none.json"))
	out, err = validate(bad, dir)
	require.Error(t, err)
	require.Contains(t, out, "reports.json_lines: directory "+missing+" does not exist")
	require.Contains(t, out, "reports.markdown: "+reportsDir+" is a directory, not a file")
	require.Contains(t, out, "cases[0] (recorded).steps[0].otelSpansFile: file "+filepath.Join(dir, "none.json")+" does not exist")

	out, err = validate(write("device.yaml", "{}", "/dev/zero"), dir)
	require.Error(t, err)
	require.Contains(t, out, "cases[0] (recorded).steps[0].otelSpansFile: /dev/zero is not a regular file")

	// Relative: from the working directory, not the config's folder.
	rel := write("relative.yaml", "{json_lines: v.jsonl}", "traces/google-adk-ok.json")
	out, err = validate(rel, filepath.Join("..", "testdata"))
	require.NoError(t, err, out)
	out, err = validate(rel, dir)
	require.Error(t, err)
	require.Contains(t, out, "cases[0] (recorded).steps[0].otelSpansFile: file traces/google-adk-ok.json does not exist")
}
