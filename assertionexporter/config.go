package assertionexporter

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"syscall"
	"time"

	"go.opentelemetry.io/collector/confmap"

	"github.com/otelcol-handoff/otelcol-handoff/internal/agentgraph"
	"github.com/otelcol-handoff/otelcol-handoff/internal/gate"
	"github.com/otelcol-handoff/otelcol-handoff/internal/judge"
	"github.com/otelcol-handoff/otelcol-handoff/internal/pricing"
	"github.com/otelcol-handoff/otelcol-handoff/internal/redact"
	"github.com/otelcol-handoff/otelcol-handoff/internal/rules"
	"github.com/otelcol-handoff/otelcol-handoff/internal/rules/steps"
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
	// EvalCostLimit bounds one CEL evaluation (0 = the default limit); at most
	// rules.MaxCostLimit.
	EvalCostLimit uint64 `mapstructure:"eval_cost_limit"`
	// EvalTimeout bounds the wall-clock time of one trace's deterministic evaluation (every
	// case's CEL and Go-side checks); past it the results not reached are errors.
	EvalTimeout time.Duration `mapstructure:"eval_timeout"`
	// ShutdownTimeout bounds Shutdown: outstanding gradings are canceled, recorded as
	// errors and the reports written within it (or the shutdown context's deadline, if
	// sooner).
	ShutdownTimeout time.Duration `mapstructure:"shutdown_timeout"`
	// Chains overrides fallback chains, as in the handoff processor.
	Chains agentgraph.Chains `mapstructure:"chains"`
	// Pricing overrides the pinned price table per model, as in the handoff processor (set
	// the same in both: a graph priced otherwise is not judged).
	Pricing pricing.Config `mapstructure:"pricing"`
	// CountDelegationCallsAsToolCalls (default false) asks for the old counting: delegation
	// calls (transfer_to_agent, transfer_to_<x> and handoff tools, Strands'
	// strands_structured_output routing calls, agent-as-tool calls) count as the sender's
	// tool calls in maxToolCalls, expected_tool_calls, expected_tool_call_order and
	// expected_no_tool_calls (they still count as handoffs). The graph is then built with
	// agentgraph.Options.CountDelegationCallsAsToolCalls, so the handoff processor's graph
	// (built without it) is not reused: the exporter builds each trace's graph itself.
	CountDelegationCallsAsToolCalls bool `mapstructure:"count_delegation_calls_as_tool_calls"`
	// Judge is the LLM judge of judge-graded rubrics; without an endpoint there is none, and
	// a judge-graded step is a config error unless it sets deterministicOnly.
	Judge judge.Config `mapstructure:"judge"`
	// Rubrics are named rubric texts, defined once (judgeRubricId). A rubric named after a
	// handoff rubric (ScopeFidelity, ...) or GROUNDEDNESS replaces its built-in text.
	Rubrics map[string]string `mapstructure:"rubrics"`
	// Gates are per-axis thresholds on the handoff rubric scores, per sender-receiver pair.
	Gates gate.Config `mapstructure:"gates"`
	// RequireHandoffProcessor (default true): a trace the handoff processor did not hand on
	// (no handoff processor upstream, or a batch processor between them) may be a fragment;
	// its results are errors, and the first one logs the fix. false judges every trace as
	// it comes, for traces assembled another way (e.g. behind groupbytrace).
	RequireHandoffProcessor bool `mapstructure:"require_handoff_processor"`
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
	// HTML is written on shutdown: one self-contained page with the summary, the failures
	// by case and each failing trace's DAG rendered, its handoff content behind a click.
	HTML string `mapstructure:"html"`

	_ struct{}
}

var _ confmap.Validator = (*Config)(nil)

// Bounds of the exporter's time budgets.
const (
	// maxEvalTimeout: one trace's rules must never hold a release worker for long.
	maxEvalTimeout = 10 * time.Second
	// maxShutdownTimeout is Kubernetes' default terminationGracePeriodSeconds; the
	// processor in front needs its share of it too.
	maxShutdownTimeout = 30 * time.Second
)

// Defaults of the exporter's time budgets.
const (
	defaultEvalTimeout     = time.Second
	defaultShutdownTimeout = 5 * time.Second
)

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
		} else if strings.TrimSpace(c.Rubrics[name]) == "" {
			errs = append(errs, fmt.Errorf("rubrics.%s: the rubric text must not be empty", name))
		}
	}
	if c.EvalCostLimit > rules.MaxCostLimit {
		errs = append(errs, fmt.Errorf("eval_cost_limit: must be at most %d (0 = the default %d), got %d",
			rules.MaxCostLimit, rules.DefaultCostLimit, c.EvalCostLimit))
	}
	if c.EvalTimeout <= 0 || c.EvalTimeout > maxEvalTimeout {
		errs = append(errs, fmt.Errorf("eval_timeout: must be positive and at most %s, got %s", maxEvalTimeout, c.EvalTimeout))
	}
	if c.ShutdownTimeout <= 0 || c.ShutdownTimeout > maxShutdownTimeout {
		errs = append(errs, fmt.Errorf("shutdown_timeout: must be positive and at most %s (Kubernetes kills a pod %s after SIGTERM by default), got %s",
			maxShutdownTimeout, maxShutdownTimeout, c.ShutdownTimeout))
	}
	if _, _, err := c.compile(nil); err != nil {
		errs = append(errs, err)
	}
	if !c.Judge.Enabled() {
		if err := rules.CheckJudged(c.Cases); err != nil {
			errs = append(errs, err)
		}
	}
	errs = append(errs, c.validateFiles()...)
	return errors.Join(errs...)
}

// validateFiles checks, without creating, truncating or reading anything, that the report
// files can be written and the recorded-spans files read, so `otelcol-handoff validate`
// and handoffcheck refuse what Start would fail on. Relative paths are relative to the
// working directory, as the exporter opens them (handoffcheck resolves otelSpansFile
// against the config file's folder before it validates).
func (c *Config) validateFiles() []error {
	var errs []error
	reportFields := map[string]string{} // cleaned path: the first report field on it
	for _, r := range []struct{ field, path string }{
		{"reports.json_lines", c.Reports.JSONLines},
		{"reports.junit", c.Reports.JUnit},
		{"reports.markdown", c.Reports.Markdown},
		{"reports.html", c.Reports.HTML},
	} {
		if r.path == "" {
			continue
		}
		// Each report rewrites its file at shutdown: two reports on one path would leave
		// only the last one written.
		if first, ok := reportFields[filepath.Clean(r.path)]; ok {
			errs = append(errs, fmt.Errorf("%s: %s is also %s: each report needs a file of its own", r.field, r.path, first))
			continue
		}
		reportFields[filepath.Clean(r.path)] = r.field
		if err := CheckReportPath(r.path); err != nil {
			errs = append(errs, fmt.Errorf("%s: %w", r.field, err))
		}
	}
	for i, cs := range c.Cases {
		where := fmt.Sprintf("cases[%d]", i)
		if cs.Name != "" {
			where = fmt.Sprintf("cases[%d] (%s)", i, cs.Name)
		}
		for j, st := range cs.Steps {
			topo, ok := st.Kind.(*steps.TopologyStep)
			if !ok || topo.SpansFile() == "" {
				continue
			}
			if err := checkSpansFile(topo.OtelSpansFile); err != nil {
				errs = append(errs, fmt.Errorf("%s.steps[%d].otelSpansFile: %w", where, j, err))
			}
		}
	}
	return errs
}

// CheckReportPath reports whether a report can be written at path: its directory exists
// and is writable, and the path, if it exists, is a writable file, not a directory.
// Nothing is created or truncated.
func CheckReportPath(path string) error {
	fi, statErr := os.Stat(path)
	if statErr == nil {
		if fi.IsDir() {
			return fmt.Errorf("%s is a directory, not a file", path)
		}
		if err := writable(path); err != nil {
			return fmt.Errorf("file %s is not writable: %w", path, err)
		}
		return nil
	}
	// Not there (or not reachable): the directory says why.
	dir := filepath.Dir(path)
	fi, err := os.Stat(dir)
	switch {
	case errors.Is(err, os.ErrNotExist):
		return fmt.Errorf("directory %s does not exist", dir)
	case errors.Is(err, syscall.ENOTDIR):
		return fmt.Errorf("%s is not a directory", firstFile(dir))
	case err != nil:
		return err
	case !fi.IsDir():
		return fmt.Errorf("%s is not a directory", dir)
	}
	if err := canCreateIn(dir); err != nil {
		return fmt.Errorf("directory %s is not writable: %w", dir, err)
	}
	if !errors.Is(statErr, os.ErrNotExist) {
		return statErr
	}
	return nil
}

// firstFile is the nearest ancestor of dir that exists (a file, where a directory should
// be), or dir.
func firstFile(dir string) string {
	for d := dir; ; d = filepath.Dir(d) {
		if fi, err := os.Stat(d); err == nil && !fi.IsDir() {
			return d
		}
		if parent := filepath.Dir(d); parent == d {
			return dir
		}
	}
}

// checkSpansFile: the file exists, is a regular file (spanfile reads nothing else) and can
// be opened for reading.
func checkSpansFile(path string) error {
	fi, err := os.Stat(path)
	switch {
	case errors.Is(err, os.ErrNotExist):
		return fmt.Errorf("file %s does not exist", path)
	case err != nil:
		return err
	case !fi.Mode().IsRegular():
		return fmt.Errorf("%s is not a regular file", path)
	}
	f, err := os.Open(path)
	if err != nil {
		return fmt.Errorf("file %s is not readable: %w", path, err)
	}
	return f.Close()
}

// graphOptions are the options the exporter builds its graphs with (and the ones a graph
// the handoff processor passed on must have been built with to be reused).
func (c *Config) graphOptions() (agentgraph.Options, error) {
	prices, err := c.Pricing.Compile()
	if err != nil {
		return agentgraph.Options{}, fmt.Errorf("pricing: %w", err)
	}
	return agentgraph.Options{Chains: c.Chains, CountDelegationCallsAsToolCalls: c.CountDelegationCallsAsToolCalls, Prices: prices}, nil
}

// compile builds the gates and the evaluator (with grader as its judge; nil: none).
func (c *Config) compile(grader judge.Grader) (*rules.Evaluator, *gate.Set, error) {
	gates, gerr := gate.Compile(c.Gates)
	ev, err := rules.Compile(c.Cases, rules.Options{
		Defaults: c.Defaults, CostLimit: min(c.EvalCostLimit, rules.MaxCostLimit), Judge: grader, Rubrics: c.Rubrics, Gates: gates,
		EvalTimeout: c.EvalTimeout,
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
