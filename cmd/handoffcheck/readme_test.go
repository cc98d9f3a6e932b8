package main

import (
	"bytes"
	"encoding/json"
	"os"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"
)

// TestREADMEOutputs: the console output README.md's handoffcheck section shows is what
// the commands print, run from the repository root as the README runs them.
func TestREADMEOutputs(t *testing.T) {
	b, err := os.ReadFile("../../README.md")
	require.NoError(t, err)
	readme := string(b)
	t.Chdir("../..")
	for _, tt := range []struct {
		args  []string
		first string // the first line of the README's block
	}{
		{
			[]string{"replay", "--config", "examples/ci/handoff-config.yaml", "testdata/traces/scenario-strands-error-swallowed.json"},
			"FAIL weather_delegation ASSERT_AGENT_TOPOLOGY#1 trace ",
		},
		{
			[]string{"validate", "--config", "examples/ci/handoff-config.yaml", "testdata/traces/scenario-mastra-fanout.json"},
			"handoffcheck: examples/ci/handoff-config.yaml is valid: ",
		},
	} {
		t.Run(tt.args[0], func(t *testing.T) {
			at := strings.Index(readme, "```\n"+tt.first)
			require.GreaterOrEqual(t, at, 0, "README.md has a block starting %q", tt.first)
			block := readme[at+4:]
			block = block[:strings.Index(block, "```")]
			_, out, errOut := runCmd(t, tt.args...)
			require.Equal(t, block, out, errOut)
		})
	}
}

// TestREADMEClusters: the grouped failures README.md's "Failure clusters" section shows are
// what `--summary json` prints for its command (the README pipes them through jq
// '.signatures', which prints them with two-space indents, as here).
func TestREADMEClusters(t *testing.T) {
	b, err := os.ReadFile("../../README.md")
	require.NoError(t, err)
	readme := string(b)
	t.Chdir("../..")
	const start = "```json\n[\n  {\n    \"cluster\": "
	at := strings.Index(readme, start)
	require.GreaterOrEqual(t, at, 0, "README.md has the signatures block")
	block := readme[at+len("```json\n"):]
	block = block[:strings.Index(block, "```")]

	code, out, errOut := runCmd(t, "replay", "--config", "examples/ci/clusters-config.yaml", "--summary", "json",
		"testdata/traces/google-adk-ok.json", "testdata/traces/strands-ok.json")
	require.Equal(t, exitFail, code, errOut)
	var s struct {
		Signatures []json.RawMessage `json:"signatures"`
	}
	require.NoError(t, json.Unmarshal([]byte(out), &s))
	var buf bytes.Buffer
	enc := json.NewEncoder(&buf)
	enc.SetEscapeHTML(false)
	enc.SetIndent("", "  ")
	require.NoError(t, enc.Encode(s.Signatures))
	require.Equal(t, block, buf.String())
}
