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
	// marks are the root agent's marks by Invocation.Index (rootAgent; markRun: one of
	// its runs); nil for a single run.
	marks []uint8
	// ids are the runs' span ids (spanIDs), once per logical agent.
	ids []string
}

// oneRun is the logical agent of a single run (a child agent's trigger).
func oneRun(inv *agentgraph.Invocation) *logicalAgent {
	return &logicalAgent{
		name: inv.Name, runs: []*agentgraph.Invocation{inv}, toolCalls: inv.ToolCalls,
	}
}

// The marks rootAgent sets on the trace's invocations, by Invocation.Index.
const (
	markTop     uint8 = 1 << iota // a top-level run of the root agent's name (RootRuns)
	markRun                       // a run of the logical agent
	markReached                   // reached from its runs by handoffs
)

// isRun reports whether inv is one of a's runs.
func (a *logicalAgent) isRun(inv *agentgraph.Invocation) bool {
	if a.marks == nil {
		return inv == a.runs[0]
	}
	return marked(a.marks, inv, markRun)
}

// marked reports whether inv carries mark (an invocation of another trace, Index -1,
// carries none).
func marked(marks []uint8, inv *agentgraph.Invocation, mark uint8) bool {
	return inv.Index >= 0 && inv.Index < len(marks) && marks[inv.Index]&mark != 0
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
	a := &logicalAgent{name: g.Root.Name, marks: make([]uint8, len(g.Invocations))}
	marks := a.marks
	marks[g.Root.Index] |= markTop
	for _, inv := range g.RootRuns {
		if inv.Index >= 0 && inv.Index < len(marks) {
			marks[inv.Index] |= markTop
		}
	}
	runs, calls := 0, 0
	for _, inv := range g.Invocations[g.Root.Index:] {
		fromReached := inv.In != nil && marked(marks, inv.In.From, markReached)
		handedBack := inv.Name == a.name && fromReached &&
			handoffDetections[inv.In.Detection] && inv.Span.Owner() == nil
		if marks[inv.Index]&markTop != 0 || handedBack {
			marks[inv.Index] |= markRun
			runs, calls = runs+1, calls+len(inv.ToolCalls)
		}
		if marks[inv.Index]&markRun != 0 || fromReached {
			marks[inv.Index] |= markReached
		}
	}
	// The runs and their tool calls, each in one allocation.
	a.runs = make([]*agentgraph.Invocation, 0, runs)
	for _, inv := range g.Invocations[g.Root.Index:] {
		if marks[inv.Index]&markRun != 0 {
			a.runs = append(a.runs, inv)
		}
	}
	if runs == 1 {
		a.toolCalls = a.runs[0].ToolCalls // read only, as a single run's (oneRun)
		return a
	}
	a.toolCalls = make([]*agentgraph.ToolCall, 0, calls)
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
			if !a.isRun(e.To) {
				out = append(out, e)
			}
		}
	}
	return out
}
