package handoffprocessor

import (
	"testing"

	"github.com/stretchr/testify/require"
	"go.opentelemetry.io/collector/confmap"

	"github.com/otelcol-handoff/otelcol-handoff/internal/readmetest"
)

// TestREADMEExamples loads every YAML block of README.md through the factory: the docs
// cannot drift from the config the code accepts.
func TestREADMEExamples(t *testing.T) {
	for i, raw := range readmetest.Maps(t, "README.md") {
		// Blocks show the processor's section of a collector config.
		section, ok := raw["handoff"].(map[string]any)
		require.True(t, ok, "block %d is not a handoff: section", i)
		cfg := NewFactory().CreateDefaultConfig()
		require.NoError(t, confmap.NewFromStringMap(section).Unmarshal(cfg), "block %d", i)
		require.NoError(t, confmap.Validate(cfg), "block %d", i)
	}
}
