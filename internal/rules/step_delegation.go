package rules

import (
	"fmt"
	"math"

	"github.com/otelcol-handoff/otelcol-handoff/internal/cluster"
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
func (*DelegationStep) Action() string { return ActionDelegation }

func (*DelegationStep) readsDAG() {}

// Validate checks the agent and the bounds.
func (s *DelegationStep) Validate() error {
	var errs fieldErrors
	if s.AgentName == "" {
		errs.add("agentName", "must name the agent delegated to")
	}
	errs.nonNegative("minInvocations", s.MinInvocations)
	errs.nonNegative("maxInvocations", s.MaxInvocations)
	if s.MaxInvocations != nil && *s.MaxInvocations < s.min() {
		errs.add("maxInvocations", "must be at least minInvocations (%d), got %d", s.min(), *s.MaxInvocations)
	}
	return errs.err()
}

func (s *DelegationStep) min() int {
	if s.MinInvocations == nil {
		return 1
	}
	return *s.MinInvocations
}

func (s *DelegationStep) compile(compileEnv) (compiledStep, error) { return s, nil }

func (s *DelegationStep) results(id string) []stepRef {
	return []stepRef{{id: id, action: ActionDelegation}}
}

func (s *DelegationStep) evaluate(run *stepRun, id string) {
	r := run.result(id, ActionDelegation)
	g := run.dag
	minN, maxN := s.min(), math.MaxInt
	bounds := fmt.Sprintf("at least %d", minN)
	if s.MaxInvocations != nil {
		maxN = *s.MaxInvocations
		bounds = fmt.Sprintf("between %d and %d", minN, maxN)
	}
	from := orAny(s.FromAgent)
	r.Expected = fmt.Sprintf("%s delegates to %s %s times", from, s.AgentName, bounds)
	count := 0
	others := map[string]int{}
	for _, e := range g.Edges {
		if e.To.Name != s.AgentName {
			continue
		}
		if s.FromAgent == "" || e.From.Name == s.FromAgent {
			count++
			r.Spans = append(r.Spans, e.To.Span.ID.String())
		} else {
			others[e.From.Name]++
		}
	}
	r.Actual = fmt.Sprintf("%d times", count)
	if len(others) > 0 {
		r.Actual += fmt.Sprintf(" (other senders to %s: %s)", s.AgentName, formatCounts(others))
	}
	var problems []string
	if count < minN || count > maxN {
		problems = append(problems, fmt.Sprintf("expected %s delegating to %s %s times, saw %s", from, s.AgentName, bounds, r.Actual))
	}
	verdict(&r, problems, fmt.Sprintf("%s delegated to %s %d times", from, s.AgentName, count))
	r.classify(cluster.WrongDispatch)
	r.Message = withNotRun(g, r.Message, s.AgentName, s.FromAgent)
	run.out.add(r)
}

func (s *DelegationStep) names() []StepName {
	return agentNames("agentName", s.AgentName, "fromAgent", s.FromAgent)
}
