package assertionconnector

import (
	"errors"
	"fmt"
	"maps"
	"reflect"
	"slices"
	"time"

	"go.opentelemetry.io/collector/confmap"

	"github.com/otelcol-handoff/otelcol-handoff/assertionexporter"
	"github.com/otelcol-handoff/otelcol-handoff/internal/confcheck"
)

// Config configures the assertion connector. The assertion keys (cases, defaults, judge,
// rubrics, gates, redaction, eval_cost_limit, eval_timeout, shutdown_timeout, chains,
// pricing, count_delegation_calls_as_tool_calls, require_handoff_processor, log_verdicts,
// reports) are the assertion exporter's own Config, squashed in, validated by
// the exporter's Validate: the two components cannot drift apart.
type Config struct {
	// Assertions is the assertion exporter's config, at the top level of the connector's.
	Assertions assertionexporter.Config `mapstructure:",squash"`
	// MetricsFlushInterval is how often the cumulative metrics are sent downstream (as
	// spanmetrics and servicegraph do); they are also sent once at shutdown.
	MetricsFlushInterval time.Duration `mapstructure:"metrics_flush_interval"`
	// MaxAgents bounds the distinct gen_ai.agent.name values (and client/server of the agent
	// edges) the metrics carry; runs of further agents are recorded as "other" and counted
	// in otelcol_connector_assertion_agents_folded.
	MaxAgents int `mapstructure:"max_agents"`

	_ struct{}
}

var (
	_ confmap.Validator   = (*Config)(nil)
	_ confmap.Unmarshaler = (*Config)(nil)
)

// ownKeys are the connector's own keys, beside the assertion exporter's.
type ownKeys struct {
	MetricsFlushInterval time.Duration `mapstructure:"metrics_flush_interval"`
	MaxAgents            int           `mapstructure:"max_agents"`
}

// validKeys are the connector's top-level keys: the exporter's and its own.
var validKeys = confcheck.Keys(reflect.TypeFor[Config]())

// Unmarshal hands the assertion keys to the exporter's Unmarshal (which names unknown keys
// by their path, with a did-you-mean) and decodes the connector's own keys beside them.
// Unknown top-level keys are reported here, against every key of the connector: the
// exporter would list and suggest only its own. All problems are reported at once.
func (c *Config) Unmarshal(conf *confmap.Conf) error {
	raw := conf.ToStringMap()
	var errs []error
	for _, k := range slices.Sorted(maps.Keys(raw)) {
		if !slices.Contains(validKeys, k) {
			errs = append(errs, confcheck.UnknownKey(k, validKeys))
			delete(raw, k)
		}
	}
	own := map[string]any{}
	for _, k := range []string{"metrics_flush_interval", "max_agents"} {
		if v, ok := raw[k]; ok {
			own[k] = v
			delete(raw, k)
		}
	}
	// Checked before decoding: confmap reads a bare 15 as 15ns and truncates 2.5 to 2.
	errs = append(errs,
		confcheck.Duration("metrics_flush_interval", own["metrics_flush_interval"]),
		confcheck.WholeNumber("max_agents", own["max_agents"]))
	if err := c.Assertions.Unmarshal(confmap.NewFromStringMap(raw)); err != nil {
		errs = append(errs, err)
	}
	if err := errors.Join(errs...); err != nil {
		return err
	}
	keys := ownKeys{MetricsFlushInterval: c.MetricsFlushInterval, MaxAgents: c.MaxAgents}
	if err := confmap.NewFromStringMap(own).Unmarshal(&keys); err != nil {
		return err
	}
	c.MetricsFlushInterval, c.MaxAgents = keys.MetricsFlushInterval, keys.MaxAgents
	return nil
}

// Defaults and bounds of the connector's own keys.
const (
	defaultMetricsFlushInterval = 15 * time.Second
	defaultMaxAgents            = 100
	// minMetricsFlushInterval: each flush builds and sends every series; below it the flush
	// loop would keep a core busy (tests flush every 100ms).
	minMetricsFlushInterval = 100 * time.Millisecond
	// maxMaxAgents keeps the per-agent series (a handful of histograms per agent and per
	// agent pair) within what a Prometheus instance takes without notice.
	maxMaxAgents = 10000
)

// Validate checks the connector's own keys; the assertion keys are checked by
// assertionexporter.Config.Validate, which confmap calls on the Assertions field.
func (c *Config) Validate() error {
	var errs []error
	if c.MetricsFlushInterval < minMetricsFlushInterval {
		errs = append(errs, fmt.Errorf("metrics_flush_interval: must be at least %s, got %s", minMetricsFlushInterval, c.MetricsFlushInterval))
	}
	if c.MaxAgents <= 0 || c.MaxAgents > maxMaxAgents {
		errs = append(errs, fmt.Errorf("max_agents: must be between 1 and %d, got %d", maxMaxAgents, c.MaxAgents))
	}
	return errors.Join(errs...)
}
