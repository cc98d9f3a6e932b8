package steps

import (
	"fmt"
	"math"
	"strconv"
	"strings"

	"github.com/otelcol-handoff/otelcol-handoff/internal/agentgraph"
	"github.com/otelcol-handoff/otelcol-handoff/internal/cluster"
	"github.com/otelcol-handoff/otelcol-handoff/internal/rules/check"
)

// BudgetStep is EXPECT_AGENT_BUDGET: every run of AgentName stays, over its whole subtree,
// within the limits set (at least one of them).
type BudgetStep struct {
	AgentName     string   `seed:"agentName"`
	MaxTokens     *int64   `seed:"maxTokens"`
	MaxDurationMs *float64 `seed:"maxDurationMs"`
	MaxToolCalls  *int     `seed:"maxToolCalls"`
	// MaxCostUsd bounds the subtree's cost in USD (cost.go).
	MaxCostUsd *float64 `seed:"maxCostUsd"`
}

// Action is EXPECT_AGENT_BUDGET.
func (*BudgetStep) Action() string { return check.ActionBudget }

func (*BudgetStep) ReadsDAG() {}

// ValidateKeys checks the agent and the limits.
func (s *BudgetStep) ValidateKeys() error {
	var errs check.Errors
	if s.AgentName == "" {
		errs.Add("agentName", "must name the agent whose subtree is budgeted")
	}
	if s.MaxTokens == nil && s.MaxDurationMs == nil && s.MaxToolCalls == nil && s.MaxCostUsd == nil {
		errs.Add("maxTokens", "set at least one of maxTokens, maxDurationMs, maxToolCalls, maxCostUsd")
	}
	s.validateCost(&errs)
	if s.MaxTokens != nil && *s.MaxTokens < 0 {
		errs.Add("maxTokens", "must not be negative, got %d", *s.MaxTokens)
	}
	// NaN compares false with every duration (never over), +Inf is never exceeded.
	if v := s.MaxDurationMs; v != nil && (*v < 0 || math.IsNaN(*v) || math.IsInf(*v, 0)) {
		errs.Add("maxDurationMs", "must be a finite number of milliseconds, 0 or more, got %g", *v)
	}
	errs.NonNegative("maxToolCalls", s.MaxToolCalls)
	return errs.Err()
}

func (s *BudgetStep) Compile(check.Env) (check.Compiled, error) { return s, nil }

func (s *BudgetStep) Results(id string) []check.Ref {
	return []check.Ref{{ID: id, Action: check.ActionBudget}}
}

func (s *BudgetStep) expected() string {
	var want []string
	if s.MaxTokens != nil {
		want = append(want, fmt.Sprintf("tokens <= %d", *s.MaxTokens))
	}
	if s.MaxDurationMs != nil {
		want = append(want, fmt.Sprintf("duration <= %gms", *s.MaxDurationMs))
	}
	if s.MaxToolCalls != nil {
		want = append(want, fmt.Sprintf("tool calls <= %d", *s.MaxToolCalls))
	}
	if c := s.costWant(); c != "" {
		want = append(want, c)
	}
	return s.AgentName + " subtree: " + strings.Join(want, ", ")
}

func (s *BudgetStep) Evaluate(run *check.Run, id string) {
	r := run.NewResult(id, check.ActionBudget)
	g := run.DAG
	quiet := run.Trace.Quiet
	if !quiet {
		r.Expected = s.expected()
	}
	var problems, unknown, actual []string
	runs := 0
	for _, inv := range g.Invocations {
		if inv.Name != s.AgentName {
			continue
		}
		runs++
		sub := &inv.Subtree
		if len(actual) < check.MaxListed && !quiet {
			actual = append(actual, usage(sub)+s.costActual(sub))
			r.Spans = append(r.Spans, inv.Span.ID.String())
		}
		over, undecided := s.overruns(inv)
		problems = append(problems, over...)
		unknown = append(unknown, undecided...)
	}
	defer func() { run.Out.Add(r) }()
	if runs == 0 {
		r.Outcome = check.Skipped
		if !quiet {
			r.Actual = "agent did not run"
			r.Message = check.NotRun(g, s.AgentName) + "; nothing to budget"
		}
		return
	}
	if !quiet {
		r.Actual = check.Listed(actual, runs, "; ", "runs")
	}
	if len(problems) == 0 && len(unknown) > 0 {
		// Never a pass on a duration nobody knows; an error, like a grading that erred:
		// the trace's timestamps are broken, not the agent's budget.
		r.Outcome, r.Message = check.Error, check.Listed(unknown, len(unknown), "; ", "runs")
		return
	}
	ok := ""
	if !quiet {
		ok = fmt.Sprintf("%s within budget: %s", s.AgentName, r.Actual)
	}
	check.Verdict(&r, check.CapList(append(problems, unknown...)), ok)
	r.Classify(cluster.BudgetBlowout)
}

// usage renders what a run's subtree used.
func usage(sub *agentgraph.Rollup) string {
	// strconv, not fmt: this runs for every run on every trace (the same text as
	// "tokens %d, duration %gms, tool calls %d").
	duration := strconv.FormatFloat(check.Round(sub.DurationMs), 'g', -1, 64) + "ms"
	if sub.DurationUnknown > 0 {
		duration = "unknown (" + unknownDuration(sub) + ")"
	}
	return "tokens " + strconv.FormatInt(sub.TotalTokens, 10) + ", duration " + duration + ", tool calls " + strconv.Itoa(sub.ToolCalls)
}

// overruns lists the limits one run's subtree exceeds, and those it cannot be checked
// against (a duration of unknown spans under the limit).
func (s *BudgetStep) overruns(inv *agentgraph.Invocation) (over, undecided []string) {
	sub := &inv.Subtree
	// at names the run in a problem; built only for a run that has one (most runs pass).
	at := ""
	if s.anyOver(sub) {
		at = runAt(inv)
	}
	if s.MaxTokens != nil && sub.TotalTokens > *s.MaxTokens {
		over = append(over, fmt.Sprintf("%s used %d tokens, over maxTokens %d", at, sub.TotalTokens, *s.MaxTokens))
	}
	if s.MaxDurationMs != nil {
		// With spans of unknown duration, DurationMs covers the others: a lower bound.
		// Over the limit it is a failure all the same; under it, the budget cannot be
		// decided.
		switch {
		case sub.DurationMs > *s.MaxDurationMs && sub.DurationUnknown > 0:
			over = append(over, fmt.Sprintf("%s took at least %gms, over maxDurationMs %g (%s)", at, check.Round(sub.DurationMs), *s.MaxDurationMs, unknownDuration(sub)))
		case sub.DurationMs > *s.MaxDurationMs:
			over = append(over, fmt.Sprintf("%s took %gms, over maxDurationMs %g", at, check.Round(sub.DurationMs), *s.MaxDurationMs))
		case sub.DurationUnknown > 0:
			undecided = append(undecided, fmt.Sprintf("%s: the duration is unknown because %s, so maxDurationMs %g cannot be checked", at, unknownDuration(sub), *s.MaxDurationMs))
		}
	}
	if s.MaxToolCalls != nil && sub.ToolCalls > *s.MaxToolCalls {
		over = append(over, fmt.Sprintf("%s made %d tool calls, over maxToolCalls %d", at, sub.ToolCalls, *s.MaxToolCalls))
	}
	over, undecided = s.checkCost(at, sub, over, undecided)
	return over, undecided
}

// runAt names a run in a problem: "agent (span id)".
func runAt(inv *agentgraph.Invocation) string {
	return inv.Name + " (span " + inv.Span.ID.String() + ")"
}

// anyOver reports whether overruns has anything to say of sub: a limit exceeded, or one
// that cannot be checked (unknown duration or cost).
func (s *BudgetStep) anyOver(sub *agentgraph.Rollup) bool {
	return (s.MaxTokens != nil && sub.TotalTokens > *s.MaxTokens) ||
		(s.MaxDurationMs != nil && (sub.DurationMs > *s.MaxDurationMs || sub.DurationUnknown > 0)) ||
		(s.MaxToolCalls != nil && sub.ToolCalls > *s.MaxToolCalls) ||
		(s.MaxCostUsd != nil && (sub.CostUSD > *s.MaxCostUsd || len(sub.UnpricedModels) > 0))
}

// unknownDuration says why a rollup's duration is unknown, naming the first span.
func unknownDuration(sub *agentgraph.Rollup) string {
	sp := sub.DurationUnknownSpan
	why := fmt.Sprintf("span %s ends before it starts", sp.ID)
	if sp.End() == 0 {
		why = fmt.Sprintf("span %s has no end time", sp.ID)
	}
	if sub.DurationUnknown > 1 {
		why += fmt.Sprintf(" (and %d more spans of unknown duration)", sub.DurationUnknown-1)
	}
	return why
}

func (s *BudgetStep) Names() []check.StepName { return check.AgentNames("agentName", s.AgentName) }
