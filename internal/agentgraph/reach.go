package agentgraph

import "go.opentelemetry.io/collector/pdata/pcommon"

// Every invocation has at most one incoming edge (addEdge), so the local edges form trees
// hanging from roots, plus simple cycles with trees hanging from their members (a cycle
// member's incoming edge is its cycle edge, so no root reaches a cycle). Hence:
//   - what a tree member reaches is its own tree below it: a preorder interval;
//   - what a cycle member reaches is its whole component: the cycle and every tree that
//     hangs from it.
// subtrees numbers the invocations once and sums each subtree bottom-up, each
// invocation's Self counted once, so the whole pass is linear in invocations and edges.

// localParent is the invocation that handed off to inv in this trace (nil: none, or a
// sender in another trace).
func localParent(inv *Invocation) *Invocation {
	if inv.In == nil || inv.In.From.Remote != nil {
		return nil
	}
	return inv.In.From
}

// envelope accumulates a subtree rollup: sums, and the wall-clock envelope of the agent
// spans whose duration is known.
type envelope struct {
	r          Rollup
	start, end pcommon.Timestamp
	// unknownAt is the index of the first invocation whose duration is unknown (-1: none).
	unknownAt int
}

func newEnvelope() envelope { return envelope{unknownAt: -1} }

func (a *envelope) addSelf(inv *Invocation) {
	s := inv.Self
	a.r.InputTokens += s.InputTokens
	a.r.OutputTokens += s.OutputTokens
	a.r.TotalTokens += s.TotalTokens
	a.r.ToolCalls += s.ToolCalls
	a.r.DelegationCalls += s.DelegationCalls
	a.r.LLMCalls += s.LLMCalls
	a.r.Errors += s.Errors
	a.r.addCosts(s)
	if inv.Span.DurationUnknown {
		a.r.DurationUnknown++
		if a.unknownAt < 0 || inv.Index < a.unknownAt {
			a.unknownAt = inv.Index
		}
		return
	}
	a.cover(inv.Span.Pdata.StartTimestamp(), inv.Span.Pdata.EndTimestamp())
}

func (a *envelope) cover(start, end pcommon.Timestamp) {
	if a.start == 0 && a.end == 0 {
		a.start, a.end = start, end
		return
	}
	a.start, a.end = min(a.start, start), max(a.end, end)
}

func (a *envelope) merge(b *envelope) {
	a.r.InputTokens += b.r.InputTokens
	a.r.OutputTokens += b.r.OutputTokens
	a.r.TotalTokens += b.r.TotalTokens
	a.r.ToolCalls += b.r.ToolCalls
	a.r.DelegationCalls += b.r.DelegationCalls
	a.r.LLMCalls += b.r.LLMCalls
	a.r.Errors += b.r.Errors
	a.r.addCosts(b.r)
	a.r.DurationUnknown += b.r.DurationUnknown
	if b.unknownAt >= 0 && (a.unknownAt < 0 || b.unknownAt < a.unknownAt) {
		a.unknownAt = b.unknownAt
	}
	if b.start != 0 || b.end != 0 {
		a.cover(b.start, b.end)
	}
}

// Scratch of subtrees, per invocation, reused by the next Build.
var (
	invStates scratch[uint8]
	envelopes scratch[envelope]
	heights   scratch[int]
)

func (g *Graph) rollupOf(a *envelope) Rollup {
	r := a.r
	if a.end > a.start {
		r.DurationMs = float64(a.end-a.start) / 1e6
	}
	if a.unknownAt >= 0 {
		r.DurationUnknownSpan = g.Invocations[a.unknownAt].Span
	}
	return r
}

// subtrees finds the cycles, numbers the invocations in preorder, and sets every
// Subtree rollup and the graph's depth (longest chain of hops from a root).
func (g *Graph) subtrees() {
	invs := g.Invocations
	// Cycles: walk up the parent chain with a per-walk mark, as link does for spans.
	heldState := invStates.get(len(invs)) // 0 unseen, 1 on current walk, 2 done
	defer invStates.put(heldState)
	state := *heldState
	cycles := 0
	var path []*Invocation
	for _, inv := range invs {
		path = path[:0]
		cur := inv
		for cur != nil && state[cur.Index] == 0 {
			g.work++
			state[cur.Index] = 1
			path = append(path, cur)
			cur = localParent(cur)
		}
		if cur != nil && state[cur.Index] == 1 {
			cycles++
			for i := len(path) - 1; i >= 0; i-- {
				path[i].cycle = int32(cycles)
				if path[i] == cur {
					break
				}
			}
		}
		for _, p := range path {
			state[p.Index] = 2
		}
	}
	// Preorder from the tops (roots and cycle members, in start order), through edges into
	// tree members only.
	order := make([]*Invocation, 0, len(invs))
	var stack []*Invocation
	for _, top := range invs {
		if localParent(top) != nil && top.cycle == 0 {
			continue
		}
		top.hang = top.cycle
		stack = append(stack[:0], top)
		for len(stack) > 0 {
			inv := stack[len(stack)-1]
			stack = stack[:len(stack)-1]
			g.work++
			inv.tin = int32(len(order))
			order = append(order, inv)
			for i := len(inv.Out) - 1; i >= 0; i-- {
				g.work++
				if c := inv.Out[i].To; c.cycle == 0 {
					c.hang = top.cycle
					stack = append(stack, c)
				}
			}
		}
	}
	// Bottom-up (children before parents): sums, preorder intervals, heights.
	heldAcc, heldHeight := envelopes.get(len(invs)), heights.get(len(invs))
	defer envelopes.put(heldAcc)
	defer heights.put(heldHeight)
	acc, height := *heldAcc, *heldHeight
	component := make([]envelope, cycles+1)
	for i := range component {
		component[i] = newEnvelope()
	}
	for i := range acc {
		acc[i] = newEnvelope()
	}
	for _, inv := range order {
		inv.tout = inv.tin + 1
	}
	for i := len(order) - 1; i >= 0; i-- {
		inv := order[i]
		g.work++
		a := &acc[inv.Index]
		a.addSelf(inv)
		if inv.cycle != 0 {
			component[inv.cycle].merge(a)
			continue
		}
		p := localParent(inv)
		if p == nil {
			g.maxDepth = max(g.maxDepth, height[inv.Index])
			continue
		}
		if p.cycle != 0 {
			component[p.cycle].merge(a)
			continue
		}
		acc[p.Index].merge(a)
		p.tout = max(p.tout, inv.tout)
		height[p.Index] = max(height[p.Index], height[inv.Index]+1)
	}
	for _, inv := range invs {
		if inv.cycle != 0 {
			inv.Subtree = g.rollupOf(&component[inv.cycle])
		} else {
			inv.Subtree = g.rollupOf(&acc[inv.Index])
		}
	}
}

// Reaches reports whether to is reachable from from along the delegation edges (every
// invocation reaches itself). Constant time for invocations of this graph.
func (g *Graph) Reaches(from, to *Invocation) bool {
	if from == to {
		return true
	}
	if from.Remote != nil {
		for _, e := range from.Out {
			if g.Reaches(e.To, to) {
				return true
			}
		}
		return false
	}
	if to.Remote != nil {
		return false
	}
	if from.cycle != 0 {
		return to.cycle == from.cycle || (to.cycle == 0 && to.hang == from.cycle)
	}
	return to.cycle == 0 && from.tin <= to.tin && to.tin < from.tout
}

// Preorder returns inv's preorder number and the end of its descendants' range: inv
// reaches exactly the invocations numbered [tin, tout). ok is false for a cycle member
// (it reaches its whole component) and for a remote stand-in.
func (g *Graph) Preorder(inv *Invocation) (tin, tout int, ok bool) {
	if inv.Remote != nil || inv.cycle != 0 {
		return 0, 0, false
	}
	return int(inv.tin), int(inv.tout), true
}
