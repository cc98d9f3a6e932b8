package assertionexporter

import (
	"errors"
	"fmt"
	"sort"

	"go.opentelemetry.io/collector/confmap"

	"github.com/otelcol-handoff/otelcol-handoff/internal/agentgraph"
	"github.com/otelcol-handoff/otelcol-handoff/internal/judge"
	"github.com/otelcol-handoff/otelcol-handoff/internal/redact"
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
	// Judge is the LLM judge of judge-graded rubrics; without an endpoint there is none and
	// those rubrics end skipped (their deterministic parts still run).
	Judge judge.Config `mapstructure:"judge"`
	// Rubrics are named rubric texts, defined once (judgeRubricId). A rubric named after a
	// handoff rubric (ScopeFidelity, ...) or GROUNDEDNESS replaces its built-in text.
	Rubrics map[string]string `mapstructure:"rubrics"`
	// Gates are per-axis thresholds on the handoff rubric scores, per sender-receiver pair.
	Gates rules.GateConfig `mapstructure:"gates"`
	// Redaction is the one policy for everything the exporter sends or writes (judge
	// requests, verdict logs, reports, assertion messages): the built-in detectors (all on
	// unless disabled) plus these patterns and judge.redact.
	Redaction redact.Config `mapstructure:"redaction"`

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
	if err := c.Judge.Validate("judge"); err != nil {
		errs = append(errs, err)
	}
	if err := c.Redaction.Validate("redaction"); err != nil {
		errs = append(errs, err)
	}
	for _, name := range sortedNames(c.Rubrics) {
		if name == "" {
			errs = append(errs, errors.New("rubrics: a rubric name must not be empty"))
		} else if c.Rubrics[name] == "" {
			errs = append(errs, fmt.Errorf("rubrics.%s: the rubric text must not be empty", name))
		}
	}
	if _, _, err := c.compile(nil); err != nil {
		errs = append(errs, err)
	}
	return errors.Join(errs...)
}

// compile builds the gates and the evaluator (with grader as its judge; nil: none).
func (c *Config) compile(grader rules.Grader) (*rules.Evaluator, *rules.GateSet, error) {
	gates, gerr := rules.CompileGates(c.Gates)
	ev, err := rules.Compile(c.Cases, rules.Options{
		Defaults: c.Defaults, CostLimit: c.EvalCostLimit, Judge: grader, Rubrics: c.Rubrics, Gates: gates,
	})
	if err = errors.Join(gerr, err); err != nil {
		return nil, nil, err
	}
	return ev, gates, nil
}

func sortedNames(m map[string]string) []string {
	names := make([]string, 0, len(m))
	for n := range m {
		names = append(names, n)
	}
	sort.Strings(names)
	return names
}
