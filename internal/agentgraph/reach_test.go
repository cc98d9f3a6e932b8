package agentgraph

import (
	"math"
	"reflect"
	"slices"
	"testing"

	"github.com/stretchr/testify/require"
	"go.opentelemetry.io/collector/pdata/pcommon"
)

// naiveReach is every invocation reachable from inv, by a walk per call: the oracle the
// linear pass of reach.go is checked against.
func naiveReach(inv *Invocation) map[*Invocation]bool {
	seen := map[*Invocation]bool{inv: true}
	stack := []*Invocation{inv}
	for len(stack) > 0 {
		cur := stack[len(stack)-1]
		stack = stack[:len(stack)-1]
		for _, e := range cur.Out {
			if !seen[e.To] {
				seen[e.To] = true
				stack = append(stack, e.To)
			}
		}
	}
	return seen
}

// naiveSubtree sums the self budgets of what inv reaches, each once; the duration is the
// envelope of the agent spans with a known duration.
func naiveSubtree(inv *Invocation) Rollup {
	var r Rollup
	var start, end pcommon.Timestamp
	first := true
	var unknown *Invocation
	for _, o := range orderedKeys(naiveReach(inv)) {
		s := o.Self
		r.InputTokens += s.InputTokens
		r.OutputTokens += s.OutputTokens
		r.TotalTokens += s.TotalTokens
		r.ToolCalls += s.ToolCalls
		r.DelegationCalls += s.DelegationCalls
		r.LLMCalls += s.LLMCalls
		r.Errors += s.Errors
		r.CostUSD += s.CostUSD
		for _, u := range s.UnpricedModels {
			r.UnpricedModels = addSorted(r.UnpricedModels, u)
		}
		if o.Span.DurationUnknown {
			r.DurationUnknown++
			if unknown == nil {
				unknown = o
			}
			continue
		}
		st, en := o.Span.Pdata.StartTimestamp(), o.Span.Pdata.EndTimestamp()
		if first {
			start, end, first = st, en, false
		}
		start, end = min(start, st), max(end, en)
	}
	if end > start {
		r.DurationMs = float64(end-start) / 1e6
	}
	if unknown != nil {
		r.DurationUnknownSpan = unknown.Span
	}
	return r
}

// sameRollup compares rollups, costs to a rounding error (summed in another order).
func sameRollup(a, b Rollup) bool {
	if math.Abs(a.CostUSD-b.CostUSD) > 1e-9*max(1, math.Abs(b.CostUSD)) || !slices.Equal(a.UnpricedModels, b.UnpricedModels) {
		return false
	}
	a.CostUSD, a.UnpricedModels, b.CostUSD, b.UnpricedModels = 0, nil, 0, nil
	return reflect.DeepEqual(a, b)
}

func orderedKeys(m map[*Invocation]bool) []*Invocation {
	var out []*Invocation
	for inv := range m {
		out = append(out, inv)
	}
	for i := range out { // insertion sort by Index: small sets
		for j := i; j > 0 && out[j].Index < out[j-1].Index; j-- {
			out[j], out[j-1] = out[j-1], out[j]
		}
	}
	return out
}

// naiveDepth is the longest chain of hops from a root, a loop contributing nothing more.
func naiveDepth(g *Graph) int {
	memo := map[*Invocation]int{}
	var depth func(*Invocation) int
	depth = func(inv *Invocation) int {
		if d, ok := memo[inv]; ok {
			return d
		}
		memo[inv] = 0
		best := 0
		for _, e := range inv.Out {
			best = max(best, 1+depth(e.To))
		}
		memo[inv] = best
		return best
	}
	d := 0
	for _, inv := range g.Invocations {
		if inv.In == nil || inv.In.From.Remote != nil {
			d = max(d, depth(inv))
		}
	}
	return d
}

// checkReach compares the linear reachability, subtree rollups and depth with the oracle.
func checkReach(t testing.TB, g *Graph) {
	t.Helper()
	for _, a := range g.Invocations {
		reach := naiveReach(a)
		for _, b := range g.Invocations {
			if got := g.Reaches(a, b); got != reach[b] {
				t.Fatalf("Reaches(%d %s, %d %s) = %v, want %v", a.Index, a.Name, b.Index, b.Name, got, reach[b])
			}
		}
		if want := naiveSubtree(a); !sameRollup(a.Subtree, want) {
			t.Fatalf("subtree of %d %s = %+v, want %+v", a.Index, a.Name, a.Subtree, want)
		}
	}
	if want := naiveDepth(g); g.Depth != want {
		t.Fatalf("depth %d, want %d", g.Depth, want)
	}
}

// TestSubtreeThroughCycles: two agents that name each other as parent form a cycle of
// invocations; each one's subtree holds both and the agent nested under one of them, each
// counted once, and the nested agent reaches only itself.
func TestSubtreeThroughCycles(t *testing.T) {
	pointer := func(name, parent string) map[string]any {
		m := agent(name)
		m["graph.node.id"], m["graph.node.parent_id"] = name, parent
		return m
	}
	tool := map[string]any{"gen_ai.operation.name": "execute_tool", "gen_ai.tool.name": "t"}
	g := Build(pcommon.TraceID{1}, handMade(
		spanSpec{id: 1, name: "a", attrs: pointer("a", "b")},
		spanSpec{id: 2, name: "b", attrs: pointer("b", "a")},
		spanSpec{id: 3, parent: 2, name: "c", attrs: agent("c"), start: 1},
		spanSpec{id: 4, parent: 3, name: "t", attrs: tool, start: 2},
		spanSpec{id: 5, parent: 1, name: "t", attrs: tool, start: 3},
	), Options{})
	require.Len(t, g.Edges, 3)
	checkReach(t, g)
	byName := map[string]*Invocation{}
	for _, inv := range g.Invocations {
		byName[inv.Name] = inv
	}
	require.Equal(t, 2, byName["a"].Subtree.ToolCalls, "a's own call and c's, once each")
	require.Equal(t, 2, byName["b"].Subtree.ToolCalls)
	require.Equal(t, 1, byName["c"].Subtree.ToolCalls)
	require.True(t, g.Reaches(byName["c"], byName["c"]))
	require.False(t, g.Reaches(byName["c"], byName["a"]))
	require.True(t, g.Reaches(byName["b"], byName["c"]))
}

// TestDurationUnknown: an agent span that ends before it starts, or never ends, has an
// unknown duration: flagged on the span, counted in its own and its senders' rollups
// (naming the first such span), and left out of the duration envelope.
func TestDurationUnknown(t *testing.T) {
	td := handMadeTD(
		spanSpec{id: 1, name: "a", attrs: agent("a")},
		spanSpec{id: 2, parent: 1, name: "b", attrs: agent("b"), start: 2},
		spanSpec{id: 3, parent: 2, name: "c", attrs: agent("c"), start: 4},
	)
	spans := td.ResourceSpans().At(0).ScopeSpans().At(0).Spans()
	spans.At(0).SetEndTimestamp(100)
	spans.At(1).SetEndTimestamp(1) // b ends before it starts
	spans.At(2).SetEndTimestamp(0) // c never ends
	g := BuildAll(td, Options{})[0]
	checkReach(t, g)
	a, b, c := g.Invocations[0], g.Invocations[1], g.Invocations[2]
	require.False(t, a.Span.DurationUnknown)
	require.True(t, b.Span.DurationUnknown)
	require.True(t, c.Span.DurationUnknown)
	require.Equal(t, 0, a.Self.DurationUnknown)
	require.Equal(t, 1, b.Self.DurationUnknown)
	require.Same(t, b.Span, b.Self.DurationUnknownSpan)
	require.Equal(t, 2, a.Subtree.DurationUnknown, "b and c, below a")
	require.Same(t, b.Span, a.Subtree.DurationUnknownSpan, "the first in start order")
	require.Equal(t, 100e-6, a.Subtree.DurationMs, "a's own 100ns: the broken spans are left out")
	require.Equal(t, 1, c.Subtree.DurationUnknown)
	require.Equal(t, 0.0, c.Subtree.DurationMs)
}
