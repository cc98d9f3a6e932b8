package steps

import (
	"fmt"
	"sort"
	"strings"

	"github.com/otelcol-handoff/otelcol-handoff/internal/agentgraph"
	"github.com/otelcol-handoff/otelcol-handoff/internal/cluster"
	"github.com/otelcol-handoff/otelcol-handoff/internal/rules/check"
)

// TopologyStep is ASSERT_AGENT_TOPOLOGY: the trace's delegation DAG (of the live trace, or
// of recorded spans) has at least one agent, a bounded depth and no unexpected cycle. The
// EXPECT steps after it read its DAG.
type TopologyStep struct {
	// Source is LIVE (default: the traces this pipeline receives) or FILE (OtelSpansFile).
	Source        string `seed:"source"`
	OtelSpansFile string `seed:"otelSpansFile"`
	MaxDepth      *int   `seed:"maxDepth"`
	AllowCycles   bool   `seed:"allowCycles"`
	// AllowedCycles lists intentional loops, each as the set of agent names in it
	// (e.g. [planner, critic] for a planner-critic loop); other cycles still fail.
	AllowedCycles [][]string `seed:"allowedCycles"`
	// Loop rules (loops.go): handoffs per trace, per sender -> receiver pair, agents per loop.
	MaxHandoffs    *int `seed:"maxHandoffs"`
	MaxPairRepeats *int `seed:"maxPairRepeats"`
	MaxCycleLength *int `seed:"maxCycleLength"`
}

// Action is ASSERT_AGENT_TOPOLOGY.
func (*TopologyStep) Action() string { return check.ActionTopology }

// ValidateKeys checks the source, the depth bound and the loop rules.
func (s *TopologyStep) ValidateKeys() error {
	var errs check.Errors
	switch s.Source {
	case "", check.SourceLive:
		// SpansFile ignores it then: a case meant to read a file would judge live traces.
		if s.OtelSpansFile != "" {
			errs.Add("otelSpansFile", "otelSpansFile needs source: FILE (got source %s); set source: FILE to read the file, or remove otelSpansFile", sourceOrDefault(s.Source))
		}
	case check.SourceFile:
		if s.OtelSpansFile == "" {
			errs.Add("otelSpansFile", "source FILE needs otelSpansFile, the span file to read")
		}
	default:
		errs.Add("source", "must be LIVE or FILE, got %q", s.Source)
	}
	errs.NonNegative("maxDepth", s.MaxDepth)
	s.validateLoops(&errs)
	return errs.Err()
}

// sourceOrDefault names a source for messages: LIVE when unset.
func sourceOrDefault(src string) string {
	if src == "" {
		return check.SourceLive + " (the default)"
	}
	return src
}

// SpansFile is the recorded span file the step reads (source FILE), else "".
func (s *TopologyStep) SpansFile() string {
	if s.Source == check.SourceFile {
		return s.OtelSpansFile
	}
	return ""
}

func (s *TopologyStep) Compile(check.Env) (check.Compiled, error) { return s, nil }

func (s *TopologyStep) Results(id string) []check.Ref {
	return []check.Ref{{ID: id, Action: check.ActionTopology}}
}

func (s *TopologyStep) Evaluate(run *check.Run, id string) {
	r := run.NewResult(id, check.ActionTopology)
	g := run.Trace.G
	run.DAG = g
	quiet := run.Trace.Quiet // the outcome alone: no texts
	if !quiet {
		r.Expected = s.expected()
		cycles := "none"
		if len(g.Cycles) > 0 {
			cycles = cycleList(g.Cycles)
		}
		r.Actual = fmt.Sprintf("%d agent invocations, %d handoffs, depth %d, cycles %s",
			len(g.Invocations), len(g.Edges), g.Depth, cycles)
		for _, inv := range g.Invocations {
			r.Spans = append(r.Spans, inv.Span.ID.String())
		}
	}
	var problems []string
	if len(g.Invocations) == 0 {
		problems = append(problems, fmt.Sprintf("no agent span recognized among %d spans", len(g.Spans)))
	}
	if s.tooDeep(g) {
		problems = append(problems, fmt.Sprintf("delegation depth %d exceeds maxDepth %d (%s)", g.Depth, *s.MaxDepth, longestChain(g)))
	}
	if forbidden := s.forbiddenCycles(g); len(forbidden) > 0 {
		problems = append(problems, "delegation cycle among agents "+cycleList(forbidden))
	}
	problems = append(problems, s.loopProblems(g)...)
	ok := ""
	if !quiet {
		ok = "topology ok: " + r.Actual
	}
	check.Verdict(&r, problems, ok)
	r.Classify(topologyCluster(g))
	run.Out.Add(r)
}

// tooDeep reports whether g's delegation depth exceeds maxDepth.
func (s *TopologyStep) tooDeep(g *agentgraph.Graph) bool {
	return s.MaxDepth != nil && g.Depth > *s.MaxDepth
}

// forbiddenCycles are g's cycles the step does not allow (none with allowCycles).
func (s *TopologyStep) forbiddenCycles(g *agentgraph.Graph) [][]string {
	if s.AllowCycles {
		return nil
	}
	var forbidden [][]string
	for _, c := range g.Cycles {
		if !allowedCycle(c, s.AllowedCycles) {
			forbidden = append(forbidden, c)
		}
	}
	return forbidden
}

func (s *TopologyStep) expected() string {
	var want []string
	if s.MaxDepth != nil {
		want = append(want, fmt.Sprintf("depth <= %d", *s.MaxDepth))
	}
	if !s.AllowCycles {
		w := "no delegation cycles"
		if len(s.AllowedCycles) > 0 {
			w += " but " + cycleList(s.AllowedCycles)
		}
		want = append(want, w)
	}
	want = append(append(want, s.loopExpected()...), "at least one agent")
	return strings.Join(want, ", ")
}

// cycleList renders cycles as {a, b} {c, d}.
func cycleList(cycles [][]string) string {
	cs := make([]string, 0, len(cycles))
	for _, c := range cycles {
		cs = append(cs, "{"+strings.Join(c, ", ")+"}")
	}
	return strings.Join(cs, " ")
}

// allowedCycle reports whether a cycle (its sorted agent names) is one of the allowed ones,
// compared as sets.
func allowedCycle(cycle []string, allowed [][]string) bool {
	for _, a := range allowed {
		set := append([]string(nil), a...)
		sort.Strings(set)
		if strings.Join(set, "\x00") == strings.Join(cycle, "\x00") {
			return true
		}
	}
	return false
}

// longestChain names the agents along the deepest delegation chain: the first and last
// few when it is long. Every invocation has at most one incoming edge, so the chains from
// the roots form trees: heights bottom-up, then one walk down the tallest branch.
func longestChain(g *agentgraph.Graph) string {
	height, next := chainHeights(g)
	var best *agentgraph.Invocation
	for _, inv := range g.Invocations {
		if inv.In == nil && (best == nil || height[inv] > height[best]) {
			best = inv
		}
	}
	var names []string
	n := 0
	for cur := best; cur != nil; cur = next[cur] {
		if n < chainHead || n > height[best]-chainTail {
			names = append(names, cur.Name)
		} else if n == chainHead {
			names = append(names, fmt.Sprintf("… %d more …", height[best]+1-chainHead-chainTail))
		}
		n++
	}
	return strings.Join(names, " -> ")
}

// chainHeights is each invocation's height in the delegation trees and the child on its
// tallest branch (the first of greatest height in edge order).
func chainHeights(g *agentgraph.Graph) (height map[*agentgraph.Invocation]int, next map[*agentgraph.Invocation]*agentgraph.Invocation) {
	height = make(map[*agentgraph.Invocation]int, len(g.Invocations))
	next = make(map[*agentgraph.Invocation]*agentgraph.Invocation, len(g.Invocations))
	// Preorder from the roots (iterative: chains can be deep), then heights in reverse.
	var order, stack []*agentgraph.Invocation
	seen := make(map[*agentgraph.Invocation]bool, len(g.Invocations))
	for _, inv := range g.Invocations {
		if inv.In != nil {
			continue
		}
		stack = append(stack[:0], inv)
		seen[inv] = true
		for len(stack) > 0 {
			cur := stack[len(stack)-1]
			stack = stack[:len(stack)-1]
			order = append(order, cur)
			for i := len(cur.Out) - 1; i >= 0; i-- {
				if to := cur.Out[i].To; !seen[to] {
					seen[to] = true
					stack = append(stack, to)
				}
			}
		}
	}
	for i := len(order) - 1; i >= 0; i-- {
		cur := order[i]
		for _, e := range cur.Out {
			if h := height[e.To] + 1; next[cur] == nil || h > height[cur] {
				height[cur], next[cur] = h, e.To
			}
		}
	}
	return height, next
}

// chainHead and chainTail are how many agents of a long chain a message names at each end.
const chainHead, chainTail = 5, 3

func (s *TopologyStep) Names() []check.StepName {
	var out []check.StepName
	for k, cycle := range s.AllowedCycles {
		for _, a := range cycle {
			out = append(out, check.StepName{Key: fmt.Sprintf("allowedCycles[%d]", k), Name: a})
		}
	}
	return out
}

// topologyCluster is the cluster of a failed ASSERT_AGENT_TOPOLOGY step: a trace without
// agents is Other; every other topology failure (a forbidden cycle, a chain over maxDepth, a
// loop rule) is a Loop.
func topologyCluster(g *agentgraph.Graph) cluster.Name {
	if len(g.Invocations) == 0 {
		return cluster.Other
	}
	return cluster.Loop
}
