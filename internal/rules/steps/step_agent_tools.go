package steps

import (
	"fmt"
	"slices"
	"strings"

	"github.com/otelcol-handoff/otelcol-handoff/internal/cluster"
	"github.com/otelcol-handoff/otelcol-handoff/internal/rules/check"
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
func (*AgentToolsStep) Action() string { return check.ActionAgentTools }

func (*AgentToolsStep) ReadsDAG() {}

// ValidateKeys checks the agent and the list.
func (s *AgentToolsStep) ValidateKeys() error {
	var errs check.Errors
	if s.AgentName == "" {
		errs.Add("agentName", "must name the agent whose tool calls are limited")
	}
	if len(s.AllowedTools) == 0 {
		errs.Add("allowedTools", "list at least one tool the agent may call (to forbid every tool, use maxToolCalls: 0 on EXPECT_AGENT_BUDGET)")
	}
	for i, t := range s.AllowedTools {
		if strings.TrimSpace(t) == "" {
			errs.Add(fmt.Sprintf("allowedTools[%d]", i), "the tool name must not be empty")
		}
	}
	return errs.Err()
}

func (s *AgentToolsStep) Names() []check.StepName {
	out := check.AgentNames("agentName", s.AgentName)
	for i, t := range s.AllowedTools {
		out = append(out, check.StepName{Key: fmt.Sprintf("allowedTools[%d]", i), Tool: true, Name: t})
	}
	return out
}

func (s *AgentToolsStep) Compile(check.Env) (check.Compiled, error) { return s, nil }

func (s *AgentToolsStep) Results(id string) []check.Ref {
	return []check.Ref{{ID: id, Action: check.ActionAgentTools}}
}

func (s *AgentToolsStep) Evaluate(run *check.Run, id string) {
	r := run.NewResult(id, check.ActionAgentTools)
	g := run.DAG
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
				if len(r.Spans) < check.MaxListed {
					r.Spans = append(r.Spans, tc.Span.ID.String())
				}
			}
		}
	}
	defer func() { run.Out.Add(r) }()
	if runs == 0 {
		r.Outcome, r.Actual = check.Skipped, "agent did not run"
		r.Message = check.NotRun(g, s.AgentName) + "; no tool call to check"
		return
	}
	r.Actual = fmt.Sprintf("%d tool calls in %d runs", calls, runs)
	if len(outside) == 0 {
		r.Outcome = check.Pass
		r.Message = fmt.Sprintf("%s made %d tool calls, all in allowedTools", s.AgentName, calls)
		return
	}
	counts := strings.Split(check.FormatCounts(outside), ", ")
	called := check.Listed(counts, len(counts), ", ", "tools")
	r.Outcome, r.Cluster = check.Fail, cluster.ScopeBleed
	r.Actual += ", outside the list: " + called
	r.Message = fmt.Sprintf("%s called tools outside allowedTools [%s]: %s", s.AgentName, strings.Join(s.AllowedTools, ", "), called)
}
