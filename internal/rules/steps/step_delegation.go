package steps

import (
	"fmt"
	"math"

	"github.com/otelcol-handoff/otelcol-handoff/internal/cluster"
	"github.com/otelcol-handoff/otelcol-handoff/internal/rules/check"
)

// DelegationStep is EXPECT_DELEGATION_TO: AgentName is delegated to between
// MinInvocations (default 1) and MaxInvocations times, by FromAgent when set (the
// immediate delegating parent), else by any agent.
type DelegationStep struct {
	AgentName      string `seed:"agentName"`
	FromAgent      string `seed:"fromAgent"`
	MinInvocations *int   `seed:"minInvocations"`
	MaxInvocations *int   `seed:"maxInvocations"`
}

// Action is EXPECT_DELEGATION_TO.
func (*DelegationStep) Action() string { return check.ActionDelegation }

func (*DelegationStep) ReadsDAG() {}

// ValidateKeys checks the agent and the bounds.
func (s *DelegationStep) ValidateKeys() error {
	var errs check.Errors
	if s.AgentName == "" {
		errs.Add("agentName", "must name the agent delegated to")
	}
	errs.NonNegative("minInvocations", s.MinInvocations)
	errs.NonNegative("maxInvocations", s.MaxInvocations)
	if s.MaxInvocations != nil && *s.MaxInvocations < s.min() {
		errs.Add("maxInvocations", "must be at least minInvocations (%d), got %d", s.min(), *s.MaxInvocations)
	}
	return errs.Err()
}

func (s *DelegationStep) min() int {
	if s.MinInvocations == nil {
		return 1
	}
	return *s.MinInvocations
}

func (s *DelegationStep) Compile(check.Env) (check.Compiled, error) { return s, nil }

func (s *DelegationStep) Results(id string) []check.Ref {
	return []check.Ref{{ID: id, Action: check.ActionDelegation}}
}

func (s *DelegationStep) Evaluate(run *check.Run, id string) {
	r := run.NewResult(id, check.ActionDelegation)
	g := run.DAG
	quiet := run.Trace.Quiet
	minN, maxN := s.min(), math.MaxInt
	if s.MaxInvocations != nil {
		maxN = *s.MaxInvocations
	}
	count := 0
	others := map[string]int{}
	for _, e := range g.Edges {
		if e.To.Name != s.AgentName {
			continue
		}
		switch {
		case s.FromAgent == "" || e.From.Name == s.FromAgent:
			count++
			if !quiet {
				r.Spans = append(r.Spans, e.To.Span.ID.String())
			}
		case !quiet:
			others[e.From.Name]++
		}
	}
	fail := count < minN || count > maxN
	if quiet { // the outcome alone
		r.Outcome = check.Pass
		if fail {
			r.Outcome = check.Fail
			r.Classify(cluster.WrongDispatch)
		}
		run.Out.Add(r)
		return
	}
	bounds := fmt.Sprintf("at least %d", minN)
	if s.MaxInvocations != nil {
		bounds = fmt.Sprintf("between %d and %d", minN, maxN)
	}
	from := orAny(s.FromAgent)
	r.Expected = fmt.Sprintf("%s delegates to %s %s times", from, s.AgentName, bounds)
	r.Actual = fmt.Sprintf("%d times", count)
	if len(others) > 0 {
		r.Actual += fmt.Sprintf(" (other senders to %s: %s)", s.AgentName, check.FormatCounts(others))
	}
	var problems []string
	if fail {
		problems = append(problems, fmt.Sprintf("expected %s delegating to %s %s times, saw %s", from, s.AgentName, bounds, r.Actual))
	}
	check.Verdict(&r, problems, fmt.Sprintf("%s delegated to %s %d times", from, s.AgentName, count))
	r.Classify(cluster.WrongDispatch)
	r.Message = check.WithNotRun(g, r.Message, s.AgentName, s.FromAgent)
	run.Out.Add(r)
}

func (s *DelegationStep) Names() []check.StepName {
	return check.AgentNames("agentName", s.AgentName, "fromAgent", s.FromAgent)
}
