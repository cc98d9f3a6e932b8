package assertionconnector

import (
	"context"
	"path/filepath"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
	"go.opentelemetry.io/collector/component"
	"go.opentelemetry.io/collector/confmap"
	"go.opentelemetry.io/collector/confmap/confmaptest"
	"go.opentelemetry.io/collector/connector/connectortest"
	"go.opentelemetry.io/collector/consumer/consumertest"

	"github.com/otelcol-handoff/otelcol-handoff/assertionexporter"
	"github.com/otelcol-handoff/otelcol-handoff/connector/assertionconnector/internal/metadata"
	"github.com/otelcol-handoff/otelcol-handoff/internal/rules/steps"
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
	require.Equal(t, "weather_specialist", step.Kind.(*steps.BudgetStep).AgentName)
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

// TestCountDelegationCallsKey: the exporter's count_delegation_calls_as_tool_calls is a
// top-level key of the connector too, and reaches the graph options of the engine the
// connector builds (so its verdicts and its tool-call metrics use the old counting).
func TestCountDelegationCallsKey(t *testing.T) {
	f := NewFactory()
	for _, on := range []bool{false, true} {
		cfg := f.CreateDefaultConfig().(*Config)
		conf := confmap.NewFromStringMap(map[string]any{"count_delegation_calls_as_tool_calls": on})
		require.NoError(t, conf.Unmarshal(cfg))
		require.NoError(t, confmap.Validate(cfg))
		require.Equal(t, on, cfg.Assertions.CountDelegationCallsAsToolCalls)
		c, err := f.CreateTracesToLogs(context.Background(), connectortest.NewNopSettings(metadata.Type), cfg, consumertest.NewNop())
		require.NoError(t, err)
		require.Equal(t, on, registry[cfg].engine.GraphOptions().CountDelegationCallsAsToolCalls)
		require.NoError(t, c.Shutdown(context.Background()))
	}
	cfg := f.CreateDefaultConfig().(*Config)
	err := confmap.NewFromStringMap(map[string]any{"count_delegation_calls_as_tool_call": true}).Unmarshal(cfg)
	require.ErrorContains(t, err, "count_delegation_calls_as_tool_call: unknown key, did you mean count_delegation_calls_as_tool_calls?")
}
