package assertionconnector

import (
	"context"
	"os"
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
		"invalid_metrics_flush_interval.yaml": "metrics_flush_interval: must be at least 100ms, got 0s",
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

// unmarshalYAML loads doc (the connector's section) from a file over the factory's
// defaults, as the collector does.
func unmarshalYAML(t *testing.T, doc string) (*Config, error) {
	t.Helper()
	path := filepath.Join(t.TempDir(), "config.yaml")
	require.NoError(t, os.WriteFile(path, []byte(doc+"\n"), 0o600))
	cm, err := confmaptest.LoadConf(path)
	require.NoError(t, err)
	cfg := NewFactory().CreateDefaultConfig().(*Config)
	return cfg, cm.Unmarshal(cfg)
}

// TestOwnKeysRejectedAtLoad: the connector's own keys get the exporter's treatment: a
// duration needs a unit (15 would be 15ns, a flush ticker burning a core), a count is a
// whole number, and a typo is named with the nearest key, the connector's keys included.
func TestOwnKeysRejectedAtLoad(t *testing.T) {
	for doc, want := range map[string]string{
		"metrics_flush_interval: 15":    "metrics_flush_interval: must be a duration with a unit, such as 5s or 250ms, got 15",
		"metrics_flush_interval: 1.5":   "metrics_flush_interval: must be a duration with a unit, such as 5s or 250ms, got 1.5",
		"metrics_flush_interval: soon":  `metrics_flush_interval: must be a duration such as 5s or 250ms, got "soon"`,
		"max_agents: abc":               `max_agents: must be a whole number, got "abc"`,
		"max_agents: 2.5":               "max_agents: must be a whole number, got 2.5",
		"max_agent: 5":                  "max_agent: unknown key, did you mean max_agents?",
		"metric_flush_interval: 15s":    "metric_flush_interval: unknown key, did you mean metrics_flush_interval?",
		"eval_timout: 1s":               "eval_timout: unknown key, did you mean eval_timeout?",
		"zzz: 1":                        "zzz: unknown key (valid keys: cases, chains, count_delegation_calls_as_tool_calls, defaults, eval_cost_limit, eval_timeout, gates, judge, log_verdicts, max_agents, metrics_flush_interval, pricing, redaction, reports, require_handoff_processor, rubrics, shutdown_timeout)",
		"max_agent: 5\neval_timeout: 3": "max_agent: unknown key, did you mean max_agents?\neval_timeout: must be a duration with a unit, such as 5s or 250ms, got 3",
	} {
		t.Run(doc, func(t *testing.T) {
			_, err := unmarshalYAML(t, doc)
			require.ErrorContains(t, err, want)
		})
	}
}

// TestMetricsFlushIntervalBounds: a bare 0 is zero (refused by Validate, as 0s is), and
// an interval under a second is refused: every flush builds and sends all series.
func TestMetricsFlushIntervalBounds(t *testing.T) {
	for doc, want := range map[string]string{
		"metrics_flush_interval: 0":     "metrics_flush_interval: must be at least 100ms, got 0s",
		"metrics_flush_interval: 15ms":  "metrics_flush_interval: must be at least 100ms, got 15ms",
		"metrics_flush_interval: -5s":   "metrics_flush_interval: must be at least 100ms, got -5s",
		"metrics_flush_interval: 100ms": "",
		"metrics_flush_interval: 1m":    "",
	} {
		t.Run(doc, func(t *testing.T) {
			cfg, err := unmarshalYAML(t, doc)
			require.NoError(t, err)
			if want == "" {
				require.NoError(t, confmap.Validate(cfg))
			} else {
				require.ErrorContains(t, confmap.Validate(cfg), want)
			}
		})
	}
}
