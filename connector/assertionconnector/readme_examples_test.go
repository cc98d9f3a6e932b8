package assertionconnector

import (
	"testing"

	"github.com/stretchr/testify/require"
	"go.opentelemetry.io/collector/confmap"

	"github.com/otelcol-handoff/otelcol-handoff/internal/readmetest"
)

// TestREADMEExamples loads every YAML block of README.md through the factory (a whole
// collector config through its connectors.assertion part): the docs cannot drift from the
// config the code accepts.
func TestREADMEExamples(t *testing.T) {
	for i, raw := range readmetest.Maps(t, "README.md") {
		if _, whole := raw["service"]; whole {
			connectors, ok := raw["connectors"].(map[string]any)
			require.True(t, ok, "block %d: a collector config without connectors", i)
			raw, ok = connectors["assertion"].(map[string]any)
			require.True(t, ok, "block %d: no connectors.assertion", i)
		}
		cfg := NewFactory().CreateDefaultConfig()
		require.NoError(t, confmap.NewFromStringMap(raw).Unmarshal(cfg), "block %d", i)
		require.NoError(t, confmap.Validate(cfg), "block %d", i)
	}
}
