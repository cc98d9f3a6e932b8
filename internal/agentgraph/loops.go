package agentgraph

import (
	"cmp"
	"slices"
	"strings"
)

// Loop facts of a trace: how many handoffs, how often each sender → receiver pair handed
// off, and, per name-level cycle (Graph.Cycles), how long it is and how often it turned.

// LoopFacts are a trace's handoff counts.
type LoopFacts struct {
	// Handoffs counts the trace's handoffs (Graph.Edges).
	Handoffs int
	// Pairs counts the handoffs per sender → receiver agent-name pair, most first (then by
	// name).
	Pairs []PairCount
	// Loops are the cycles of Graph.Cycles in the same order, with their turns.
	Loops []Loop
}

// PairCount is how many handoffs went from one agent to another.
type PairCount struct {
	From, To string
	Count    int
}

// Loop is a name-level cycle of handoffs.
type Loop struct {
	// Agents are the cycle's agents in the order the loop first reached them, starting at
	// its entry: the sender of the loop's first handoff.
	Agents []string
	// Handoffs counts the handoffs inside the loop (sender and receiver both in it).
	Handoffs int
	// Turns counts how often the loop came back to its entry agent.
	Turns int
}

// Length is the number of agents in the loop.
func (l Loop) Length() int { return len(l.Agents) }

// String names the loop by its path: "planner -> critic -> planner".
func (l Loop) String() string {
	if len(l.Agents) == 0 {
		return ""
	}
	return strings.Join(append(slices.Clone(l.Agents), l.Agents[0]), " -> ")
}

// Loops computes the trace's loop facts: one pass over the edges in dispatch order (a
// sort of the edges, then linear).
func (g *Graph) Loops() LoopFacts {
	f := LoopFacts{Handoffs: len(g.Edges)}
	edges := slices.Clone(g.Edges)
	slices.SortStableFunc(edges, func(a, b *Edge) int {
		if c := cmp.Compare(DispatchStart(a), DispatchStart(b)); c != 0 {
			return c
		}
		return cmp.Compare(a.To.Index, b.To.Index)
	})
	pairAt := map[[2]string]int{}
	cycleOf := map[string]int{}
	for i, c := range g.Cycles {
		for _, n := range c {
			cycleOf[n] = i
		}
	}
	f.Loops = make([]Loop, len(g.Cycles))
	reached := make([]map[string]bool, len(g.Cycles))
	for _, e := range edges {
		key := [2]string{e.From.Name, e.To.Name}
		if i, ok := pairAt[key]; ok {
			f.Pairs[i].Count++
		} else {
			pairAt[key] = len(f.Pairs)
			f.Pairs = append(f.Pairs, PairCount{From: key[0], To: key[1], Count: 1})
		}
		ci, inFrom := cycleOf[e.From.Name]
		cj, inTo := cycleOf[e.To.Name]
		if !inFrom || !inTo || ci != cj {
			continue
		}
		l := &f.Loops[ci]
		if reached[ci] == nil {
			reached[ci] = map[string]bool{e.From.Name: true}
			l.Agents = []string{e.From.Name}
		}
		l.Handoffs++
		if e.To.Name == l.Agents[0] {
			l.Turns++
		}
		if !reached[ci][e.To.Name] {
			reached[ci][e.To.Name] = true
			l.Agents = append(l.Agents, e.To.Name)
		}
	}
	slices.SortStableFunc(f.Pairs, func(a, b PairCount) int {
		if c := cmp.Compare(b.Count, a.Count); c != 0 {
			return c
		}
		return cmp.Or(cmp.Compare(a.From, b.From), cmp.Compare(a.To, b.To))
	})
	return f
}
