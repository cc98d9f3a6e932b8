package agentgraph

import (
	"sort"

	"go.opentelemetry.io/collector/pdata/pcommon"
)

// Dispatch rounds. An agent's model answers with one response at a time; the dispatches one
// response issued (a parallel fan-out: ADK's several AgentTool calls in one response, run one
// after the other or together) form one round, and the agent's next step comes after every
// dispatch of the round returned.

// DispatchStart is when a dispatch was issued: the start of the call that carried it (the
// transfer call, the agent-as-tool call, the explicit handoff span), else the receiver's start.
func DispatchStart(e *Edge) pcommon.Timestamp {
	if e.Via != nil {
		return e.Via.Pdata.StartTimestamp()
	}
	return e.To.Span.Pdata.StartTimestamp()
}

// DispatchRounds groups inv.Out by the model response that issued each dispatch: the
// dispatches issued after the same LLM call of inv started and before its next LLM call
// started are one round. A dispatch issued before any LLM call of inv (code-driven, or
// no LLM call captured) is a round of its own. Rounds come in the order of their first
// dispatch; within a round, edges keep their order in inv.Out. Cost: O(len(inv.Out)
// log(LLM calls)).
func (inv *Invocation) DispatchRounds() [][]*Edge {
	if len(inv.Out) == 0 {
		return nil
	}
	type issued struct {
		e *Edge
		k int // LLM calls of inv started at or before the dispatch; 0: none
	}
	list := make([]issued, len(inv.Out))
	for i, e := range inv.Out {
		d := DispatchStart(e)
		k := sort.Search(len(inv.llms), func(j int) bool { return inv.llms[j].Pdata.StartTimestamp() > d })
		list[i] = issued{e, k}
	}
	sort.SliceStable(list, func(i, j int) bool { return DispatchStart(list[i].e) < DispatchStart(list[j].e) })
	var rounds [][]*Edge
	byResponse := map[int]int{} // k -> index in rounds
	for _, it := range list {
		if it.k == 0 {
			rounds = append(rounds, []*Edge{it.e})
			continue
		}
		if r, ok := byResponse[it.k]; ok {
			rounds[r] = append(rounds[r], it.e)
			continue
		}
		byResponse[it.k] = len(rounds)
		rounds = append(rounds, []*Edge{it.e})
	}
	for _, r := range rounds {
		sort.SliceStable(r, func(i, j int) bool { return r[i].To.Index < r[j].To.Index })
	}
	return rounds
}
