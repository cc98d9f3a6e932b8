package handoffprocessor

import (
	"os"
	"regexp"
	"testing"

	"github.com/stretchr/testify/require"
	"go.opentelemetry.io/collector/confmap"
	"go.yaml.in/yaml/v3"
)

// TestREADMEExamples loads every YAML block of README.md through the factory: the docs
// cannot drift from the config the code accepts.
func TestREADMEExamples(t *testing.T) {
	readme, err := os.ReadFile("README.md")
	require.NoError(t, err)
	blocks := regexp.MustCompile("(?s)```yaml\n(.*?)```").FindAllStringSubmatch(string(readme), -1)
	require.NotEmpty(t, blocks)
	for i, b := range blocks {
		var raw map[string]any
		require.NoError(t, yaml.Unmarshal([]byte(b[1]), &raw), "block %d", i)
		// Blocks show the processor's section of a collector config.
		section, ok := raw["handoff"].(map[string]any)
		require.True(t, ok, "block %d is not a handoff: section", i)
		cfg := NewFactory().CreateDefaultConfig()
		require.NoError(t, confmap.NewFromStringMap(section).Unmarshal(cfg), "block %d", i)
		require.NoError(t, confmap.Validate(cfg), "block %d", i)
	}
}
