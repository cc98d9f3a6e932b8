package assertionexporter

import (
	"os"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/otelcol-handoff/otelcol-handoff/internal/rules"
	"github.com/otelcol-handoff/otelcol-handoff/internal/rules/steps"
)

func fileConfig(reports ReportsConfig, spans string) *Config {
	cfg := createDefaultConfig().(*Config)
	cfg.Reports = reports
	cfg.Cases = []rules.CaseConfig{{Name: "recorded", Steps: []rules.StepConfig{
		{Kind: &steps.TopologyStep{Source: rules.SourceFile, OtelSpansFile: spans}},
	}}}
	return cfg
}

// TestValidateFiles: report paths and recorded-spans files are checked at load time, each
// error naming its field, and nothing is created, truncated or read.
func TestValidateFiles(t *testing.T) {
	dir := t.TempDir()
	spans := filepath.Join("..", "testdata", "traces", "google-adk-ok.json")
	existing := filepath.Join(dir, "old.md")
	require.NoError(t, os.WriteFile(existing, []byte("last run"), 0o644))

	ok := fileConfig(ReportsConfig{
		JSONLines: filepath.Join(dir, "verdicts.jsonl"), JUnit: filepath.Join(dir, "a.junit.xml"), Markdown: existing,
	}, spans)
	require.NoError(t, ok.Validate())
	entries, err := os.ReadDir(dir)
	require.NoError(t, err)
	require.Len(t, entries, 1, "validate created a file")
	b, err := os.ReadFile(existing)
	require.NoError(t, err)
	require.Equal(t, "last run", string(b), "validate truncated a report")

	notDir := filepath.Join(dir, "old.md", "x.jsonl")
	bad := fileConfig(ReportsConfig{
		JSONLines: notDir, JUnit: filepath.Join(dir, "nope", "a.junit.xml"), Markdown: dir,
	}, filepath.Join(dir, "missing.json"))
	err = bad.Validate()
	require.ErrorContains(t, err, "reports.json_lines: "+existing+" is not a directory")
	require.ErrorContains(t, err, "reports.junit: directory "+filepath.Join(dir, "nope")+" does not exist")
	require.ErrorContains(t, err, "reports.markdown: "+dir+" is a directory, not a file")
	require.ErrorContains(t, err, "cases[0] (recorded).steps[0].otelSpansFile: file "+filepath.Join(dir, "missing.json")+" does not exist")

	require.EqualError(t, fileConfig(ReportsConfig{}, dir).Validate(),
		"cases[0] (recorded).steps[0].otelSpansFile: "+dir+" is not a regular file")
	require.ErrorContains(t, fileConfig(ReportsConfig{}, "/dev/zero").Validate(), "/dev/zero is not a regular file")

	// Permissions: root may write and read anything, so there the same config is valid.
	locked := filepath.Join(dir, "locked")
	require.NoError(t, os.Mkdir(locked, 0o500))
	unreadable := filepath.Join(dir, "unreadable.json")
	require.NoError(t, os.WriteFile(unreadable, []byte("{}"), 0o200))
	err = fileConfig(ReportsConfig{JUnit: filepath.Join(locked, "a.xml"), Markdown: unreadable}, unreadable).Validate()
	if os.Geteuid() == 0 {
		require.NoError(t, err)
	} else {
		require.ErrorContains(t, err, "reports.junit: directory "+locked+" is not writable")
		require.ErrorContains(t, err, "cases[0] (recorded).steps[0].otelSpansFile: file "+unreadable+" is not readable")
	}
}

// TestCheckReportPath: the check handoffcheck applies to its --json, --junit and
// --markdown paths.
func TestCheckReportPath(t *testing.T) {
	dir := t.TempDir()
	require.NoError(t, CheckReportPath(filepath.Join(dir, "r.xml")))
	t.Chdir(dir)
	require.NoError(t, CheckReportPath("relative-in-the-working-directory.xml"))
	require.EqualError(t, CheckReportPath(filepath.Join(dir, "a", "r.xml")), "directory "+filepath.Join(dir, "a")+" does not exist")
	require.EqualError(t, CheckReportPath(dir), dir+" is a directory, not a file")
}
