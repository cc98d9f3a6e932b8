package expect

import (
	"fmt"
	"sort"

	"github.com/otelcol-handoff/otelcol-handoff/internal/agentgraph"
)

// logicalAgent is what the seed-001 test-case fields assert on: one agent run, or, on the
// root, the root agent as one logical agent over all of its runs (a supervisor resumed as
// new runs; see rootAgent). Its tool calls are those of all its runs, in start order; its
// triggers those of all its runs; its status, error and output those of its last run.
type logicalAgent struct {
	name string
	// runs are in start order; there is at least one.
	runs []*agentgraph.Invocation
	// toolCalls are the runs' own tool calls, in start order.
	toolCalls []*agentgraph.ToolCall
	member    map[*agentgraph.Invocation]bool
	// ids are the runs' span ids (spanIDs), once per logical agent.
	ids []string
}

// oneRun is the logical agent of a single run (a child agent's trigger).
func oneRun(inv *agentgraph.Invocation) *logicalAgent {
	return &logicalAgent{
		name: inv.Name, runs: []*agentgraph.Invocation{inv}, toolCalls: inv.ToolCalls,
		member: map[*agentgraph.Invocation]bool{inv: true},
	}
}

// rootAgent is the root agent of g as one logical agent. Its runs are, in start order:
//   - the model's RootRuns: every top-level run of the root agent's name (nobody handed off
//     to it; LangGraph resumes its supervisor so), and
//   - every run of the root agent's name that control was handed back to: a run that no
//     agent span encloses (it runs at top level, or only inside orchestration wrappers),
//     started by a handoff that passes control (handoffDetections: transfer call, handoff
//     span, graph parent pointer, Command(goto), consecutive siblings) from an agent the
//     root's runs reached (a Strands swarm node handing back to triage).
//
// A run of the root's name nested under another agent's span (that agent called it as a
// sub-agent or a tool, and waited for it) is a child of that agent, not the root resumed.
func rootAgent(g *agentgraph.Graph) *logicalAgent {
	a := &logicalAgent{name: g.Root.Name, member: map[*agentgraph.Invocation]bool{}}
	top := map[*agentgraph.Invocation]bool{g.Root: true}
	for _, inv := range g.RootRuns {
		top[inv] = true
	}
	reached := map[*agentgraph.Invocation]bool{}
	for _, inv := range g.Invocations[g.Root.Index:] {
		handedBack := inv.Name == a.name && inv.In != nil && reached[inv.In.From] &&
			handoffDetections[inv.In.Detection] && inv.Span.Owner() == nil
		if top[inv] || handedBack {
			a.runs = append(a.runs, inv)
			a.member[inv] = true
		}
		if a.member[inv] || (inv.In != nil && reached[inv.In.From]) {
			reached[inv] = true
		}
	}
	for _, inv := range a.runs {
		a.toolCalls = append(a.toolCalls, inv.ToolCalls...)
	}
	if len(a.runs) > 1 {
		sort.SliceStable(a.toolCalls, func(i, j int) bool {
			return a.toolCalls[i].Span.Start() < a.toolCalls[j].Span.Start()
		})
	}
	return a
}

// last is the run whose status, error and output are the logical agent's.
func (a *logicalAgent) last() *agentgraph.Invocation { return a.runs[len(a.runs)-1] }

// label names the agent in messages: its name, and how many runs it had when more than one.
func (a *logicalAgent) label() string {
	if len(a.runs) == 1 {
		return a.name
	}
	return fmt.Sprintf("%s (%d runs)", a.name, len(a.runs))
}

// spanIDs are the agent spans of its runs, in start order.
//
// Every result of the agent shares the slice: its capacity is its length, so a result that
// appends its own spans gets a copy; nothing writes into a result's Spans.
func (a *logicalAgent) spanIDs() []string {
	if a.ids == nil {
		a.ids = make([]string, 0, len(a.runs))
		for _, inv := range a.runs {
			a.ids = append(a.ids, inv.Span.ID.String())
		}
	}
	return a.ids[:len(a.ids):len(a.ids)]
}

// out are the edges of all its runs, in start order of the runs, without the hand-backs
// to its own runs (a run resuming the same logical agent is not a child of it).
func (a *logicalAgent) out() []*agentgraph.Edge {
	var out []*agentgraph.Edge
	for _, inv := range a.runs {
		for _, e := range inv.Out {
			if !a.member[e.To] {
				out = append(out, e)
			}
		}
	}
	return out
}
