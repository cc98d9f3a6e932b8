package assertionconnector

import (
	"path/filepath"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
	"go.opentelemetry.io/collector/component"
	"go.opentelemetry.io/collector/confmap"
	"go.opentelemetry.io/collector/confmap/confmaptest"

	"github.com/otelcol-handoff/otelcol-handoff/assertionexporter"
	"github.com/otelcol-handoff/otelcol-handoff/connector/assertionconnector/internal/metadata"
)

func loadConfig(t testing.TB, file, name string) *Config {
	t.Helper()
	cm, err := confmaptest.LoadConf(filepath.Join("testdata", file))
	require.NoError(t, err)
	id := component.NewID(metadata.Type)
	if name != "" {
		id = component.NewIDWithName(metadata.Type, name)
	}
	sub, err := cm.Sub(id.String())
	require.NoError(t, err)
	cfg := NewFactory().CreateDefaultConfig().(*Config)
	require.NoError(t, sub.Unmarshal(cfg))
	return cfg
}

func TestDefaultConfigIsValid(t *testing.T) {
	cfg := NewFactory().CreateDefaultConfig().(*Config)
	require.NoError(t, confmap.Validate(cfg))
	require.Equal(t, 15*time.Second, cfg.MetricsFlushInterval)
	require.Equal(t, 100, cfg.MaxAgents)
	require.Equal(t, assertionexporter.LogNone, cfg.Assertions.LogVerdicts)
}

func TestLoadConfig(t *testing.T) {
	require.Equal(t, NewFactory().CreateDefaultConfig(), loadConfig(t, "config.yaml", ""))

	cfg := loadConfig(t, "config.yaml", "custom")
	require.NoError(t, confmap.Validate(cfg))
	require.Equal(t, 30*time.Second, cfg.MetricsFlushInterval)
	require.Equal(t, 50, cfg.MaxAgents)
	require.Equal(t, 2*time.Second, cfg.Assertions.EvalTimeout)
	require.Len(t, cfg.Assertions.Cases, 2)
	require.Equal(t, "weather_overrun", cfg.Assertions.Cases[1].Name)
	step, ok := cfg.Assertions.Step("weather_overrun", "EXPECT_AGENT_BUDGET#2")
	require.True(t, ok, "step ids: %+v", cfg.Assertions.Cases[1].Steps)
	require.Equal(t, "weather_specialist", step.AgentName)
}

func TestInvalidConfigs(t *testing.T) {
	for file, want := range map[string]string{
		"invalid_metrics_flush_interval.yaml": "metrics_flush_interval: must be positive",
		"invalid_max_agents.yaml":             "max_agents: must be between 1 and 10000, got 0",
		"invalid_case_cel.yaml":               "cases[0] (bad).when",
	} {
		t.Run(file, func(t *testing.T) {
			err := confmap.Validate(loadConfig(t, file, ""))
			require.ErrorContains(t, err, want)
		})
	}
}
