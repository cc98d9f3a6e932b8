package assertionexporter

import (
	"errors"
	"fmt"

	"go.opentelemetry.io/collector/confmap"

	"github.com/otelcol-handoff/otelcol-handoff/internal/agentgraph"
	"github.com/otelcol-handoff/otelcol-handoff/internal/rules"
)

// Verdict logging levels.
const (
	LogAll      = "all"
	LogFailures = "failures"
	LogNone     = "none"
)

// Config configures the assertion exporter. See README.md for every key.
type Config struct {
	// Cases are the assertion cases: seed-000 steps and seed-001 test-case fields, selected
	// by a CEL condition.
	Cases []rules.CaseConfig `mapstructure:"cases"`
	// Defaults are seed-001 test-case fields shared by every case; a case's own field wins.
	Defaults rules.TestFields `mapstructure:"defaults"`
	// LogVerdicts chooses which results are logged: failures (and errors), all, or none.
	LogVerdicts string `mapstructure:"log_verdicts"`
	// Reports are optional report files.
	Reports ReportsConfig `mapstructure:"reports"`
	// EvalCostLimit bounds one CEL evaluation (0 = the default limit).
	EvalCostLimit uint64 `mapstructure:"eval_cost_limit"`
	// Chains overrides fallback chains, as in the handoff processor.
	Chains agentgraph.Chains `mapstructure:"chains"`

	_ struct{}
}

// ReportsConfig names report files; empty paths are not written.
type ReportsConfig struct {
	// JSONLines appends one JSON object per assertion result.
	JSONLines string `mapstructure:"json_lines"`
	// JUnit is written on shutdown: a testsuite per case, a testcase per assertion per trace.
	JUnit string `mapstructure:"junit"`
	// Markdown is written on shutdown: totals, failures, and a Mermaid picture of each
	// failing trace's delegation DAG.
	Markdown string `mapstructure:"markdown"`

	_ struct{}
}

var _ confmap.Validator = (*Config)(nil)

// Validate checks the whole config, CEL included, at load time.
func (c *Config) Validate() error {
	var errs []error
	switch c.LogVerdicts {
	case LogAll, LogFailures, LogNone:
	default:
		errs = append(errs, fmt.Errorf("log_verdicts: must be one of all, failures, none, got %q", c.LogVerdicts))
	}
	if _, err := c.compile(); err != nil {
		errs = append(errs, err)
	}
	return errors.Join(errs...)
}

func (c *Config) compile() (*rules.Evaluator, error) {
	return rules.Compile(c.Cases, rules.Options{Defaults: c.Defaults, CostLimit: c.EvalCostLimit})
}
