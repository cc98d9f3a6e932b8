package main

import (
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
		{[]string{"replay", "--config", "examples/ci/handoff-config.yaml", "testdata/traces/scenario-strands-error-swallowed.json"},
			"FAIL weather_delegation ASSERT_AGENT_TOPOLOGY#1 trace "},
		{[]string{"validate", "--config", "examples/ci/handoff-config.yaml", "testdata/traces/scenario-mastra-fanout.json"},
			"handoffcheck: examples/ci/handoff-config.yaml is valid: "},
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
