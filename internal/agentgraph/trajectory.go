package agentgraph

import (
	"cmp"
	"slices"
)

// Trajectories: what an agent did, in order, as a trajectory rule matches it against a
// reference (internal/trajectory). A tool trajectory is the agent's own tool calls
// (delegation calls excluded, as everywhere: they are handoffs); a handoff trajectory is
// the handoffs the agent issued. Steps one LLM response issued share a Response number:
// the calls of one response have no order among themselves (a framework may run them
// together, and their spans start in any order).

// TrajectoryStep is one step of a trajectory.
type TrajectoryStep struct {
	// Name is the tool called (tool trajectories) or the agent handed off to (handoff
	// trajectories).
	Name string
	// Response numbers the LLM response that issued the step, unique within one
	// trajectory; -1 when the step was issued before any LLM call of its agent (code-driven,
	// or no LLM call captured): a response of its own.
	Response int
	// Call is the tool call (tool trajectories); Edge the handoff (handoff trajectories).
	Call *ToolCall
	Edge *Edge
}

// Reachable returns runs and every invocation they reach along the delegation edges, each
// once, in start order; nil runs: every invocation of the trace. Linear in invocations and
// edges.
func (g *Graph) Reachable(runs []*Invocation) []*Invocation {
	if runs == nil {
		return g.Invocations
	}
	seen := make([]bool, len(g.Invocations))
	stack := make([]*Invocation, 0, len(runs))
	for _, r := range runs {
		if r.Remote == nil && !seen[r.Index] {
			seen[r.Index] = true
			stack = append(stack, r)
		}
	}
	for len(stack) > 0 {
		cur := stack[len(stack)-1]
		stack = stack[:len(stack)-1]
		for _, e := range cur.Out {
			if to := e.To; to.Remote == nil && !seen[to.Index] {
				seen[to.Index] = true
				stack = append(stack, to)
			}
		}
	}
	out := make([]*Invocation, 0, len(runs))
	for _, inv := range g.Invocations {
		if seen[inv.Index] {
			out = append(out, inv)
		}
	}
	return out
}

// ToolTrajectory is the own tool calls (not delegation calls) of the given runs, or of
// their whole subtrees when subtree is set (nil runs: every run of the trace), in start
// order. One walk over the spans in start order, each run's LLM calls followed with one
// pointer: linear in spans.
func (g *Graph) ToolTrajectory(runs []*Invocation, subtree bool) []TrajectoryStep {
	set := runs
	if subtree || runs == nil {
		set = g.Reachable(runs)
	}
	in := make([]bool, len(g.Invocations))
	for _, inv := range set {
		if inv.Remote == nil {
			in[inv.Index] = true
		}
	}
	next := make(map[*Invocation]int, len(set)) // LLM calls of the run started so far
	ids := map[[2]int]int{}                     // (run, response) -> Response
	var out []TrajectoryStep
	for _, s := range g.Spans {
		tc := s.call
		if tc == nil || tc.Delegation != "" || s.owner == nil || !in[s.owner.Index] {
			continue
		}
		inv := s.owner
		k := next[inv]
		for k < len(inv.llms) && inv.llms[k].Pdata.StartTimestamp() <= s.Pdata.StartTimestamp() {
			k++
		}
		next[inv] = k
		resp := -1
		if k > 0 {
			key := [2]int{inv.Index, k}
			id, ok := ids[key]
			if !ok {
				id = len(ids)
				ids[key] = id
			}
			resp = id
		}
		out = append(out, TrajectoryStep{Name: tc.Name, Response: resp, Call: tc})
	}
	return out
}

// HandoffTrajectory is the handoffs the given runs issued, or their whole subtrees issued
// when subtree is set (nil runs: every handoff of the trace, those from senders in other
// traces included), in dispatch order (DispatchStart); the dispatches of one round
// (DispatchRounds: one LLM response) share a Response.
func (g *Graph) HandoffTrajectory(runs []*Invocation, subtree bool) []TrajectoryStep {
	var senders []*Invocation
	switch {
	case runs == nil:
		senders = slices.Clip(g.Invocations)
		remote := map[*Invocation]bool{}
		for _, e := range g.Edges {
			if e.From.Remote != nil && !remote[e.From] {
				remote[e.From] = true
				senders = append(senders, e.From)
			}
		}
	case subtree:
		senders = g.Reachable(runs)
	default:
		senders = runs
	}
	var out []TrajectoryStep
	for _, inv := range senders {
		for _, round := range inv.DispatchRounds() {
			resp := len(out)
			for _, e := range round {
				out = append(out, TrajectoryStep{Name: e.To.Name, Response: resp, Edge: e})
			}
		}
	}
	slices.SortStableFunc(out, func(a, b TrajectoryStep) int {
		if c := cmp.Compare(DispatchStart(a.Edge), DispatchStart(b.Edge)); c != 0 {
			return c
		}
		return cmp.Compare(a.Edge.To.Index, b.Edge.To.Index)
	})
	// Renumber the responses in order of appearance.
	renum := map[int]int{}
	for i := range out {
		id, ok := renum[out[i].Response]
		if !ok {
			id = len(renum)
			renum[out[i].Response] = id
		}
		out[i].Response = id
	}
	return out
}
