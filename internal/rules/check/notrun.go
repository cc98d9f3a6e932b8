package check

import (
	"fmt"
	"sort"
	"strings"

	"github.com/otelcol-handoff/otelcol-handoff/internal/agentgraph"
)

// An agent named in a rule that never ran in the trace is, more often than not, a
// misspelled name. Every rule that names an agent says so in its message, with the agents
// that did run, whatever the outcome: a rule that needs the agent to run fails (the
// delegation or handoff did not happen), one that measures it is skipped (nothing to
// budget, nothing to grade), one that forbids it passes (it did not happen). Skipped
// results are counted by case, step and outcome like every other.

// NotRun describes the named agents (empty names ignored) that have no run in g: "agent
// refund_specialst did not run; agents that ran: refund_specialist, triage"; "" when every
// one of them ran.
func NotRun(g *agentgraph.Graph, names ...string) string {
	ran := map[string]bool{}
	for _, inv := range g.Invocations {
		ran[inv.Name] = true
	}
	for _, e := range g.Edges {
		if e.From.Remote != nil {
			ran[e.From.Name] = true // ran in another trace (a span link) and handed off here
		}
	}
	var missing []string
	seen := map[string]bool{}
	for _, n := range names {
		if n == "" || ran[n] || seen[n] {
			continue
		}
		seen[n] = true
		missing = append(missing, "agent "+n+" did not run")
	}
	if len(missing) == 0 {
		return ""
	}
	return strings.Join(missing, "; ") + "; " + agentsThatRan(ran)
}

// agentsThatRan lists the agent names of a trace, sorted, the first maxListed of them.
func agentsThatRan(ran map[string]bool) string {
	if len(ran) == 0 {
		return "no agent ran"
	}
	names := make([]string, 0, len(ran))
	for n := range ran {
		names = append(names, n)
	}
	sort.Strings(names)
	return "agents that ran: " + Listed(names, len(names), ", ", "agents")
}

// WithNotRun appends to message the not-run note of the named agents, when there is one.
func WithNotRun(g *agentgraph.Graph, message string, names ...string) string {
	if note := NotRun(g, names...); note != "" {
		return fmt.Sprintf("%s; %s", message, note)
	}
	return message
}
