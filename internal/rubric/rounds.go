package rubric

import (
	"strings"

	"go.opentelemetry.io/collector/pdata/pcommon"

	"github.com/otelcol-handoff/otelcol-handoff/internal/agentgraph"
)

// What the rubric checks remember per trace beyond Index's own indexes: the dispatch
// rounds of each sender, the runs a receiver handed control back to, the dispatches a
// receiver made to agents other than its sender, and what the context check strips from
// its sources.
type rubricMemo struct {
	rounds    map[*agentgraph.Edge]*dispatchRound
	handBacks map[*agentgraph.Edge][]*agentgraph.Invocation
	others    map[*agentgraph.Edge][]*agentgraph.Edge
	sources   *sourceFilter
	// stepTexts holds a next step's text normalized, with its words: every handoff of a
	// fan-out shares the step after its round.
	stepTexts map[*agentgraph.Span]*stepText
	leaves    map[*agentgraph.Span]string
}

type stepText struct {
	norm  string
	words map[string]bool
}

// stepLeafText is strings.TrimSpace(leafText(step.text)), once per step span.
func (x *Index) stepLeafText(step *senderStep) string {
	m := &x.rubric
	if step.span == nil {
		return strings.TrimSpace(leafText(step.text))
	}
	if m.leaves == nil {
		m.leaves = map[*agentgraph.Span]string{}
	}
	t, ok := m.leaves[step.span]
	if !ok {
		t = strings.TrimSpace(leafText(step.text))
		m.leaves[step.span] = t
	}
	return t
}

// stepCarries reports whether a next step's text carries a value: verbatim (after
// normalizing case, whitespace and JSON nesting), or with at least carriedShare of the
// value's distinct words (3+ letters or digits, the first 200); it returns the share found.
// The step's text is normalized once per step span.
func (x *Index) stepCarries(step *senderStep, value string) (bool, float64) {
	m := &x.rubric
	if m.stepTexts == nil {
		m.stepTexts = map[*agentgraph.Span]*stepText{}
	}
	st, ok := m.stepTexts[step.span]
	if !ok || step.span == nil {
		st = &stepText{norm: normalize(leafText(step.text)), words: map[string]bool{}}
		for _, w := range wordRE.FindAllString(st.norm, -1) {
			st.words[w] = true
		}
		if step.span != nil {
			m.stepTexts[step.span] = st
		}
	}
	nv := normalize(value)
	if nv == "" || strings.Contains(st.norm, nv) {
		return true, 1
	}
	seen := map[string]bool{}
	found := 0
	for _, w := range wordRE.FindAllString(nv, -1) {
		if seen[w] {
			continue
		}
		seen[w] = true
		if st.words[w] {
			found++
		}
		if len(seen) == 200 {
			break
		}
	}
	if len(seen) == 0 {
		return true, 1
	}
	c := float64(found) / float64(len(seen))
	return c >= carriedShare, c
}

// dispatchRound is the dispatches one model response of a sender issued (a parallel
// fan-out is one round; agentgraph.DispatchRounds) and when the last of them returned.
type dispatchRound struct {
	edges    []*agentgraph.Edge
	returned pcommon.Timestamp
}

// roundOf is the dispatch round e belongs to.
func (x *Index) roundOf(e *agentgraph.Edge) *dispatchRound {
	m := &x.rubric
	if m.rounds == nil {
		m.rounds = map[*agentgraph.Edge]*dispatchRound{}
	}
	if r, ok := m.rounds[e]; ok {
		return r
	}
	for _, edges := range e.From.DispatchRounds() {
		r := &dispatchRound{edges: edges}
		for _, o := range edges {
			x.work++
			r.returned = max(r.returned, returnedAt(o))
			m.rounds[o] = r
		}
	}
	if r, ok := m.rounds[e]; ok {
		return r
	}
	r := &dispatchRound{edges: []*agentgraph.Edge{e}, returned: returnedAt(e)} // e not in e.From.Out: never in a built graph
	m.rounds[e] = r
	return r
}

// roundReturnedAt is when the sender of e could take its next step: when every dispatch of
// e's round had returned.
func (x *Index) roundReturnedAt(e *agentgraph.Edge) pcommon.Timestamp {
	return x.roundOf(e).returned
}

// handBacks lists the runs of the sender's name that e's receiver dispatched: control
// handed back to the sender (a swarm node handing off to the node that called it). They
// act for the sender after the round trip; they are not a fallback of the receiver.
func (x *Index) handBacks(e *agentgraph.Edge) []*agentgraph.Invocation {
	m := &x.rubric
	if m.handBacks == nil {
		m.handBacks = map[*agentgraph.Edge][]*agentgraph.Invocation{}
	}
	list, ok := m.handBacks[e]
	if !ok {
		if e.From.Remote == nil {
			for _, o := range e.To.Out {
				x.work++
				if o.To.Name == e.From.Name && o.To.Remote == nil {
					list = append(list, o.To)
				}
			}
		}
		m.handBacks[e] = list
	}
	return list
}

// isHandBack reports whether run is one of e's hand-back runs.
func (x *Index) isHandBack(e *agentgraph.Edge, run *agentgraph.Invocation) bool {
	return run.In != nil && run.In.From == e.To && run.Name == e.From.Name && e.From.Remote == nil
}

// firstFallbackAfter is the first dispatch of e's receiver (in start order of the
// receivers) that starts at or after t and goes to an agent other than the sender's name:
// handing control back to the sender is not a fallback.
func (x *Index) firstFallbackAfter(e *agentgraph.Edge, t pcommon.Timestamp) *agentgraph.Edge {
	m := &x.rubric
	if m.others == nil {
		m.others = map[*agentgraph.Edge][]*agentgraph.Edge{}
	}
	list, ok := m.others[e]
	if !ok {
		for _, o := range e.To.Out {
			x.work++
			if o.To.Name != e.From.Name {
				list = append(list, o)
			}
		}
		m.others[e] = list
	}
	return firstEdgeAfter(list, t, nil)
}
