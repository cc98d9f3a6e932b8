package rules

import (
	"fmt"
	"slices"
	"strings"

	"github.com/otelcol-handoff/otelcol-handoff/internal/cluster"
)

// AgentToolsStep is EXPECT_AGENT_TOOLS: every run of AgentName calls only tools in
// AllowedTools (an allowlist per agent, declared in the config rather than read from
// handoff.allowed_tools). Its own tool calls count: delegation calls (transfers, handoff
// and agent-as-tool calls) are handoffs, never held against the list.
type AgentToolsStep struct {
	AgentName    string   `seed:"agentName"`
	AllowedTools []string `seed:"allowedTools"`
}

// Action is EXPECT_AGENT_TOOLS.
func (*AgentToolsStep) Action() string { return ActionAgentTools }

func (*AgentToolsStep) readsDAG() {}

// Validate checks the agent and the list.
func (s *AgentToolsStep) Validate() error {
	var errs fieldErrors
	if s.AgentName == "" {
		errs.add("agentName", "must name the agent whose tool calls are limited")
	}
	if len(s.AllowedTools) == 0 {
		errs.add("allowedTools", "list at least one tool the agent may call (to forbid every tool, use maxToolCalls: 0 on EXPECT_AGENT_BUDGET)")
	}
	for i, t := range s.AllowedTools {
		if strings.TrimSpace(t) == "" {
			errs.add(fmt.Sprintf("allowedTools[%d]", i), "the tool name must not be empty")
		}
	}
	return errs.err()
}

func (s *AgentToolsStep) names() []StepName {
	out := agentNames("agentName", s.AgentName)
	for i, t := range s.AllowedTools {
		out = append(out, StepName{Key: fmt.Sprintf("allowedTools[%d]", i), Tool: true, Name: t})
	}
	return out
}

func (s *AgentToolsStep) compile(compileEnv) (compiledStep, error) { return s, nil }

func (s *AgentToolsStep) results(id string) []stepRef {
	return []stepRef{{id: id, action: ActionAgentTools}}
}

func (s *AgentToolsStep) evaluate(run *stepRun, id string) {
	r := run.result(id, ActionAgentTools)
	g := run.dag
	r.Expected = fmt.Sprintf("%s calls only %s", s.AgentName, strings.Join(s.AllowedTools, ", "))
	outside := map[string]int{}
	runs, calls := 0, 0
	for _, inv := range g.Invocations {
		if inv.Name != s.AgentName {
			continue
		}
		runs++
		for _, tc := range inv.OwnToolCalls() {
			calls++
			if !slices.Contains(s.AllowedTools, tc.Name) {
				outside[tc.Name]++
				if len(r.Spans) < maxListed {
					r.Spans = append(r.Spans, tc.Span.ID.String())
				}
			}
		}
	}
	defer func() { run.out.add(r) }()
	if runs == 0 {
		r.Outcome, r.Actual = Skipped, "agent did not run"
		r.Message = notRun(g, s.AgentName) + "; no tool call to check"
		return
	}
	r.Actual = fmt.Sprintf("%d tool calls in %d runs", calls, runs)
	if len(outside) == 0 {
		r.Outcome = Pass
		r.Message = fmt.Sprintf("%s made %d tool calls, all in allowedTools", s.AgentName, calls)
		return
	}
	counts := strings.Split(formatCounts(outside), ", ")
	called := listed(counts, len(counts), ", ", "tools")
	r.Outcome, r.Cluster = Fail, cluster.ScopeBleed
	r.Actual += ", outside the list: " + called
	r.Message = fmt.Sprintf("%s called tools outside allowedTools [%s]: %s", s.AgentName, strings.Join(s.AllowedTools, ", "), called)
}
