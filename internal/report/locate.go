package report

import (
	"fmt"
	"slices"
	"strings"

	"github.com/otelcol-handoff/otelcol-handoff/internal/agentgraph"
	"github.com/otelcol-handoff/otelcol-handoff/internal/redact"
	"github.com/otelcol-handoff/otelcol-handoff/internal/rules"
)

// maxReason bounds the short reason drawn on a box or an arrow.
const maxReason = 64

// maxContent bounds each part of a handoff's content kept for the HTML report;
// contentMargin is how much more of it is masked before the cut.
const (
	maxContent    = 2000
	contentMargin = 1000
)

// locateFailures places every failing or errored result of a trace where it happened:
//
//   - a topology step: on the edges of each forbidden cycle it names, and on the edges of
//     the longest chain when the depth is over maxDepth;
//   - a handoff step (EXPECT_HANDOFF_CONTEXT, EXPECT_HANDOFF_RUBRICS, EXPECT_DELEGATION_TO,
//     a child's expected_payload): on the handoffs into the spans it names;
//   - any other result (a budget, the test-case fields): on the agents whose spans it
//     names, a tool call's span standing for the agent that made it.
//
// A result names its spans in Result.Spans; when its message names some of them ("span
// <id>": the runs over budget, the handoffs that leaked), only those are the places of the
// failure. A failure with no place in the drawing (a handoff that never happened) is a note.
// results and masked are the same results, unredacted (their span ids are matched) and
// redacted (their text is shown).
func locateFailures(d *dag, g *agentgraph.Graph, index map[*agentgraph.Invocation]int, results, masked []rules.Result) {
	bySpan := map[string]int{} // agent span id -> node
	owner := map[string]int{}  // tool call span id -> node of its agent
	for inv, i := range index {
		if inv.Span == nil {
			continue
		}
		bySpan[inv.Span.ID.String()] = i
		for _, tc := range inv.ToolCalls {
			owner[tc.Span.ID.String()] = i
		}
		for _, tc := range inv.DelegationCalls {
			owner[tc.Span.ID.String()] = i
		}
	}
	add := func(list *[]string, reason string) {
		for _, r := range *list {
			if r == reason {
				return
			}
		}
		*list = append(*list, reason)
	}
	for k, res := range results {
		if res.Outcome != rules.Fail && res.Outcome != rules.Error {
			continue
		}
		shown := masked[k]
		placed := false
		if res.Action == rules.ActionTopology {
			for _, e := range topologyEdges(g, res.Message) {
				add(&d.edges[e.index].failures, e.reason)
				placed = true
			}
			if !placed {
				add(&d.notes, shortReason(shown, ""))
			}
			continue
		}
		spans := res.Spans
		var named []string
		for _, s := range spans {
			if strings.Contains(res.Message, "span "+s) {
				named = append(named, s)
			}
		}
		if len(named) > 0 {
			spans = named
		}
		onEdge := handoffAction(res.Action)
		for _, s := range spans {
			reason := shortReason(shown, s)
			if onEdge {
				for i, e := range g.Edges {
					if e.To.Span == nil || e.To.Span.ID.String() != s || (res.From != "" && e.From.Name != res.From) {
						continue
					}
					add(&d.edges[i].failures, reason)
					placed = true
				}
				if placed {
					continue
				}
			}
			if i, ok := bySpan[s]; ok {
				add(&d.nodes[i].failures, reason)
				placed = true
			} else if i, ok := owner[s]; ok {
				add(&d.nodes[i].failures, reason)
				placed = true
			}
		}
		if !placed {
			add(&d.notes, shortReason(shown, ""))
		}
	}
}

// stepAction reports whether the action is one of the step language's (not a test-case field).
func stepAction(action string) bool {
	return slices.Contains(rules.StepActions(), action)
}

// handoffAction reports whether a result of the action is about a handoff, not an agent.
func handoffAction(action string) bool {
	switch action {
	case rules.ActionContext, rules.ActionRubrics, rules.ActionDelegation, "expected_payload":
		return true
	}
	return false
}

type placedEdge struct {
	index  int
	reason string
}

// topologyEdges are the edges a failed topology step is about: those of every cycle its
// message names ("delegation cycle among agents {a, b}"), and those of the longest chain
// when its message says the depth is over maxDepth.
func topologyEdges(g *agentgraph.Graph, message string) []placedEdge {
	var out []placedEdge
	for _, c := range g.Cycles {
		if !strings.Contains(message, "{"+strings.Join(c, ", ")+"}") {
			continue
		}
		in := map[string]bool{}
		for _, name := range c {
			in[name] = true
		}
		for i, e := range g.Edges {
			if in[e.From.Name] && in[e.To.Name] {
				out = append(out, placedEdge{i, "cycle " + strings.Join(c, ", ")})
			}
		}
	}
	var depth, limit int
	if _, err := fmt.Sscanf(depthPart(message), "delegation depth %d exceeds maxDepth %d", &depth, &limit); err == nil {
		edgeIndex := map[*agentgraph.Edge]int{}
		for i, e := range g.Edges {
			edgeIndex[e] = i
		}
		for _, e := range longestChain(g) {
			out = append(out, placedEdge{edgeIndex[e], fmt.Sprintf("depth %d > maxDepth %d", depth, limit)})
		}
	}
	return out
}

// depthPart is the part of a topology message from "delegation depth" on.
func depthPart(message string) string {
	if i := strings.Index(message, "delegation depth "); i >= 0 {
		return message[i:]
	}
	return ""
}

// longestChain is the tree edges (e.To.In == e) of the deepest chain from a root, the
// first of greatest height in edge order (as the topology step's message names it).
func longestChain(g *agentgraph.Graph) []*agentgraph.Edge {
	height := map[*agentgraph.Invocation]int{}
	next := map[*agentgraph.Invocation]*agentgraph.Edge{}
	var visit func(inv *agentgraph.Invocation, seen map[*agentgraph.Invocation]bool) int
	visit = func(inv *agentgraph.Invocation, seen map[*agentgraph.Invocation]bool) int {
		if h, ok := height[inv]; ok {
			return h
		}
		seen[inv] = true
		best := 0
		for _, e := range inv.Out {
			if e.To.In != e || seen[e.To] {
				continue
			}
			if h := visit(e.To, seen) + 1; next[inv] == nil || h > best {
				best, next[inv] = h, e
			}
		}
		height[inv] = best
		return best
	}
	var root *agentgraph.Invocation
	for _, inv := range g.Invocations {
		if inv.In != nil {
			continue
		}
		if h := visit(inv, map[*agentgraph.Invocation]bool{}); root == nil || h > height[root] {
			root = inv
		}
	}
	var out []*agentgraph.Edge
	for cur := root; cur != nil && next[cur] != nil; cur = next[cur].To {
		out = append(out, next[cur])
	}
	return out
}

// shortReason is the few words drawn at a failure's place: what kind of check failed and
// the part of its message about the span (without the "agent (span id)" that the drawing
// shows anyway), at most maxReason characters.
func shortReason(res rules.Result, span string) string {
	tag := res.Action
	switch res.Action {
	case rules.ActionTopology:
		tag = "topology"
	case rules.ActionDelegation:
		tag = "delegation"
	case rules.ActionBudget:
		tag = "budget"
	case rules.ActionContext:
		tag = "context"
	case rules.ActionRubrics:
		tag = res.Axis
	case rules.ActionAgentTools:
		tag = "tools"
	case rules.ActionTrajectory:
		tag = "trajectory"
	}
	text := res.Message
	if !stepAction(res.Action) && res.Actual != "" {
		// A test-case field: its actual value is short and says what was seen.
		if i := strings.LastIndex(res.Step, "."); i >= 0 {
			tag = res.Step[i+1:]
		} else if res.Step != "" {
			tag = res.Step
		}
		text = res.Actual
	} else if span != "" {
		for _, part := range strings.Split(res.Message, "; ") {
			if strings.Contains(part, "span "+span) {
				text = part
				break
			}
		}
		if i := strings.Index(text, "(span "+span+")"); i >= 0 {
			text = strings.TrimLeft(text[i+len("(span "+span+")"):], ": ")
		}
	}
	text = strings.TrimPrefix(text, "the handoff content ")
	if res.Action == rules.ActionRubrics && res.Score != nil {
		text = fmt.Sprintf("score %.2f", *res.Score)
	}
	if tag == "" {
		tag = res.Step
	}
	if tag == "" {
		tag = "failed"
	}
	if res.Outcome == rules.Error {
		tag += " error"
	}
	if text == "" {
		return truncateRunes(tag, maxReason)
	}
	return truncateRunes(tag+": "+strings.Join(strings.Fields(text), " "), maxReason)
}

// handoffContent is what crossed a handoff, each part redacted as the logs are and bounded.
func handoffContent(e *agentgraph.Edge, policy *redact.Policy) []contentPart {
	var out []contentPart
	part := func(label string, v agentgraph.Value) {
		if v.Text == "" {
			return
		}
		// Cut before masking (a receiver's input can be large), with a margin so that a
		// secret across the cut is still found whole, then cut to the bound.
		text := truncateRunes(policy.Redact(truncateRunes(v.Text, maxContent+contentMargin)), maxContent)
		out = append(out, contentPart{label: label + " (" + v.Source + ")", text: text})
	}
	part("payload", e.Payload)
	part("context", e.Context)
	if e.To.Remote == nil {
		part("receiver input", e.To.Input)
	}
	return out
}
