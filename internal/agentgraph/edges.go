package agentgraph

import (
	"cmp"
	"regexp"
	"slices"
	"sort"
	"strings"
)

// Tool names that hand control to another agent, with the target in the name's suffix
// (OpenAI Agents, LangGraph supervisor, AutoGen, Microsoft Agent Framework).
var transferByName = regexp.MustCompile(`^(?:transfer_to|handoff_to)_(.+)$`)

// transferSuffix is transferByName's submatch without the regexp (it runs on every tool
// call): the name after transfer_to_ or handoff_to_, one or more bytes and no newline.
func transferSuffix(name string) (string, bool) {
	rest, ok := strings.CutPrefix(name, "transfer_to_")
	if !ok {
		rest, ok = strings.CutPrefix(name, "handoff_to_")
	}
	if !ok || rest == "" || strings.IndexByte(rest, '\n') >= 0 {
		return "", false
	}
	return rest, true
}

// Argument keys that name the target agent of a transfer call: Google ADK
// transfer_to_agent{agentName}, Strands handoff_to_agent{agent_name} and swarm structured
// output {agentId}, CrewAI delegation {coworker}, Claude Agent SDK Task {subagent_type}.
var transferArgKeys = []string{"agentName", "agent_name", "agentId", "agent_id", "agent", "coworker", "subagent_type"}

// Keys that point a receiving agent at the agent that handed off to it (OpenInference and
// traceAI graph nodes, OpenLLMetry's OpenAI-Agents hooks).
var parentPointerKeys = []string{"graph.node.parent_id", "gen_ai.agent.graph.parent_node_id", "gen_ai.agent.handoff_parent"}

// The draft GenAI keys by which a receiving agent run names its sender: the handoff source
// of the invoke_agent span, and the caller of a remote agent (gen_ai.invoke_agent.caller).
// They point at an agent by name; a run nested under that agent is left to nesting.
var draftSenderKeys = []string{"gen_ai.agent.handoff.source.name", "gen_ai.caller.name"}

// parentPointerEdges links receivers that name their sender. CrewAI's parent_id is the
// previous agent of the crew list, not a delegator, so its scope is skipped.
func (g *Graph) parentPointerEdges(byName map[string][]*Invocation) {
	byNode := make(map[string][]*Invocation)
	for _, inv := range g.Invocations {
		if id := attrStr(inv.Span.Pdata, "graph.node.id"); id != "" {
			byNode[id] = append(byNode[id], inv)
		}
	}
	for _, inv := range g.Invocations {
		if inv.In != nil || strings.Contains(inv.Span.Scope.Name(), "crewai") {
			continue
		}
		for _, key := range parentPointerKeys {
			parent := attrStr(inv.Span.Pdata, key)
			if parent == "" {
				continue
			}
			candidates := byNode[parent]
			if len(candidates) == 0 {
				candidates = byName[parent]
			}
			g.work++
			if sender := latestBefore(candidates, inv.Span); sender != nil && sender != inv {
				g.addEdge(&Edge{
					From: sender, To: inv, Detection: DetectParentPointer,
					Reason: Value{Source: SourceNone},
				})
			}
			break
		}
		if inv.In != nil {
			continue
		}
		for _, key := range draftSenderKeys {
			name := attrStr(inv.Span.Pdata, key)
			if name == "" || (inv.Span.owner != nil && inv.Span.owner.Name == name) {
				continue
			}
			g.work++
			if sender := latestBefore(byName[name], inv.Span); sender != nil && sender != inv {
				g.addEdge(&Edge{
					From: sender, To: inv, Detection: DetectParentPointer,
					Reason: Value{Source: SourceNone}, Mode: attrStr(inv.Span.Pdata, "gen_ai.transfer.mode"),
				})
				break
			}
		}
	}
}

// inferSiblingEdges is the last resort for agents that nothing else links: consecutive
// agent runs under the same non-agent span (a programmatic hand-off in application code)
// are chained in start order and marked inferred.
func (g *Graph) inferSiblingEdges() {
	// seen[name] is the number of the last parent a run of the agent was seen under: one
	// map for the whole trace, not one per parent.
	var seen map[string]int
	parent := 0
	for _, s := range g.Spans {
		if s.Role == RoleAgent {
			continue
		}
		var prev *Invocation
		for _, c := range g.children(s) {
			g.work++
			if c.Role != RoleAgent {
				continue
			}
			if prev == nil {
				if seen == nil {
					seen = map[string]int{}
				}
				parent++
			}
			inv := g.invocationOf[c]
			// A run of an agent seen before under this parent is control coming back (a
			// supervisor resuming), not a new hand-off.
			if inv.In == nil && prev != nil && seen[inv.Name] != parent {
				g.addEdge(&Edge{From: prev, To: inv, Detection: DetectInferredSibling, Inferred: true})
			}
			seen[inv.Name] = parent
			prev = inv
		}
	}
}

// Tools whose only job is a transfer: the target argument is trusted even when that agent
// never runs (the edge is then unresolved).
var transferTools = map[string]bool{"transfer_to_agent": true, "handoff_to_agent": true}

// mayNameAgent is a cheap pre-check: the arguments mention one of transferArgKeys.
func mayNameAgent(args string) bool {
	if len(args) < 8 || args[0] != '{' {
		return false
	}
	for _, key := range quotedTransferKeys {
		if strings.Contains(args, key) {
			return true
		}
	}
	return false
}

var quotedTransferKeys = func() []string {
	out := make([]string, len(transferArgKeys))
	for i, k := range transferArgKeys {
		out[i] = `"` + k + `"`
	}
	return out
}()

// transferTarget returns the agent a tool call hands off to, if it is a transfer call.
func transferTarget(tc *ToolCall, known map[string]bool) (string, bool) {
	// Only arguments that can name an agent are read, and scanned, not decoded.
	var args paramReader
	if mayNameAgent(tc.Args.Text) {
		args = readParams(tc)
	}
	for _, key := range transferArgKeys {
		v := args.str(key)
		if v == "" {
			continue
		}
		if transferTools[tc.Name] || known[v] {
			return v, true
		}
	}
	if transferTools[tc.Name] {
		return "", true
	}
	if m, ok := transferSuffix(tc.Name); ok && m != "agent" {
		return m, true
	}
	return "", false
}

// paramReader reads parameters of a tool call as tc.Params() holds them: from the decoded
// map when the call has one, else from the arguments' members scanned (jsonscan.go) with
// Params' decorator unwrapping, without decoding the arguments. No key read is "args".
type paramReader struct {
	decoded map[string]any
	members []rawMember
}

// readParams is the paramReader of tc.
func readParams(tc *ToolCall) paramReader {
	if tc.paramsParsed {
		return paramReader{decoded: tc.params}
	}
	args := tc.Args.Text
	if args == "" || args[0] != '{' || !decodable(args) { // parseObject's test
		return paramReader{}
	}
	m, _ := rawMembers(args)
	// decoratorKwargs: {"kwargs": {...}} and {"args": ..., "kwargs": {...}} read as the
	// keyword arguments (plus the positional ones under "args").
	if kw, ok := member(m, "kwargs"); ok && len(m) <= 2 {
		if _, hasArgs := member(m, "args"); len(m) == 1 || hasArgs {
			if km, ok := rawMembers(kw); ok {
				return paramReader{members: km}
			}
		}
	}
	return paramReader{members: m}
}

// str is the parameter key when it is a string, else "".
func (r paramReader) str(key string) string {
	if r.decoded != nil {
		v, _ := r.decoded[key].(string)
		return v
	}
	raw, _ := member(r.members, key)
	v, _ := rawString(raw)
	return v
}

// text is jsonText of the parameter key, false when it is missing or null.
func (r paramReader) text(key string) (string, bool) {
	if r.decoded != nil {
		v, ok := r.decoded[key]
		if !ok || v == nil {
			return "", false
		}
		return jsonText(v), true
	}
	raw, ok := member(r.members, key)
	if !ok || raw == "null" {
		return "", false
	}
	return rawText(raw), true
}

// detectEdges gives each invocation at most one incoming edge, from the strongest evidence:
// an explicit handoff span, then a transfer tool call, then nesting under another agent.
func (g *Graph) detectEdges(chains Chains) {
	byName := make(map[string][]*Invocation)
	known := make(map[string]bool)
	for _, inv := range g.Invocations {
		byName[inv.Name] = append(byName[inv.Name], inv)
		known[inv.Name] = true
	}
	free := map[string]*freeList{} // made on first use: most names are never a target
	// firstAfter is the first invocation named name that starts at or after the evidence
	// and has no incoming edge yet.
	firstAfter := func(name string, evidence *Span, not *Invocation) *Invocation {
		fl := free[name]
		if fl == nil {
			list := byName[name]
			if len(list) == 0 {
				return nil
			}
			fl = newFreeList(list)
			free[name] = fl
		}
		g.work++
		t := evidence.Pdata.StartTimestamp()
		i := sort.Search(len(fl.list), func(i int) bool { return fl.list[i].Span.Pdata.StartTimestamp() >= t })
		j := fl.first(i, &g.work)
		if j < len(fl.list) && fl.list[j] == not {
			j = fl.first(j+1, &g.work)
		}
		if j < len(fl.list) {
			return fl.list[j]
		}
		return nil
	}

	ix := g.ix
	for _, s := range g.Spans {
		if s.Role != RoleHandoff || isReplayedRemoteHandoff(s) { // cross-trace: links.go
			continue
		}
		to := ix.resolve(s, &ix.cc.handoffTo, nil, nil)
		if !to.Found() {
			m := oiHandoff.FindStringSubmatch(s.Pdata.Name())
			if m == nil {
				continue
			}
			to = Value{Text: m[1], Source: "span.name"}
		}
		from := ix.resolve(s, &ix.cc.handoffFrom, nil, nil)
		recv := firstAfter(to.Text, s, nil)
		if recv == nil {
			continue
		}
		g.work++
		sender := s.owner
		if from.Found() && (sender == nil || sender.Name != from.Text) {
			sender = latestBefore(byName[from.Text], s)
		}
		if sender == nil || sender == recv {
			continue
		}
		detection := DetectHandoffSpan
		if d := attrStr(s.Pdata, "handoff.detection"); d != "" && s.Role == RoleHandoff && s.RoleSource == "scope" {
			detection = d // one of our own HANDOFF spans, replayed: keep what it says
		}
		g.addEdge(&Edge{
			From: sender, To: recv, Detection: detection, Via: s,
			Reason: ix.resolve(s, &ix.cc.handoffReason, nil, nil),
		})
	}

	for _, inv := range g.Invocations {
		for _, tc := range inv.DelegationCalls {
			g.work++
			if tc.Delegation != DelegationTransfer {
				continue
			}
			unresolved := len(tc.Targets) == 0
			for _, target := range tc.Targets {
				recv := firstAfter(target, tc.Span, inv)
				if recv == nil {
					if e := g.recordedTransfer(byName[target], tc, inv); e != nil {
						e.Call = tc // the HANDOFF span recorded this call's handoff
						continue
					}
					unresolved = true
					continue
				}
				e := &Edge{
					From: inv, To: recv, Detection: DetectTransferTool, Via: tc.Span, Call: tc, Reason: tc.Args,
					Mode: g.ix.attr(tc.Span, fkTransferMode),
				}
				if t, ok := readParams(tc).text("context"); ok && !absent(t) {
					e.Context = Value{Text: t, Source: tc.Args.Source + ".context"}
				}
				g.addEdge(e)
			}
			if unresolved {
				g.Unresolved = append(g.Unresolved, tc)
			}
		}
	}
	g.commandEdges(firstAfter)

	g.parentPointerEdges(byName)
	g.spanLinkEdges(chains)

	for _, inv := range g.Invocations {
		owner := inv.Span.owner
		if inv.In != nil || owner == nil {
			continue
		}
		g.work++
		e := &Edge{From: owner, To: inv, Detection: DetectNesting}
		if p := inv.Span.viaTool; p != nil {
			e.Detection, e.Via = DetectAgentAsTool, p
			if p.call != nil {
				e.Reason, e.Call = p.call.Args, p.call
			}
		}
		if e.Via != nil {
			e.Mode = g.ix.attr(e.Via, fkTransferMode)
		}
		g.addEdge(e)
	}
	g.inferSiblingEdges()
	g.dispatchPayloads()
	byReceiver := func(a, b *Edge) int { return cmp.Compare(a.To.Index, b.To.Index) }
	slices.SortStableFunc(g.Edges, byReceiver)
	for _, inv := range g.Invocations {
		if len(inv.Out) > 1 {
			slices.SortStableFunc(inv.Out, byReceiver)
		}
	}
}

// maxRecordedScan bounds the runs recordedTransfer looks at per transfer call.
const maxRecordedScan = 8

// recordedTransfer finds the edge a HANDOFF span of this distribution recorded for a
// transfer call of inv whose receiver already has its edge: the processor's output built
// again downstream holds both the call and the HANDOFF span the processor made of it, and
// the HANDOFF span, read first, took the receiver. It is the incoming edge, from inv and
// read from such a span with detection transfer_tool, of one of the first runs of the
// target (list, in start order) that start at or after the call, not yet claimed by
// another call. Nil when there is none: the receiver did not run in this trace.
func (g *Graph) recordedTransfer(list []*Invocation, tc *ToolCall, inv *Invocation) *Edge {
	t := tc.Span.Pdata.StartTimestamp()
	i := sort.Search(len(list), func(i int) bool { return list[i].Span.Pdata.StartTimestamp() >= t })
	for n := 0; i < len(list) && n < maxRecordedScan; i, n = i+1, n+1 {
		g.work++
		e := list[i].In
		if e == nil || e.From != inv || e.Call != nil || e.Detection != DetectTransferTool || e.Via == nil ||
			e.Via.Role != RoleHandoff || e.Via.RoleSource != "scope" {
			continue
		}
		return e
	}
	return nil
}

// addEdge links e. Every detector adds an edge only into an invocation without one, so an
// invocation has at most one incoming edge: the edges form trees and simple cycles, which
// reach.go relies on.
func (g *Graph) addEdge(e *Edge) {
	g.work++
	e.To.In = e
	e.From.Out = append(e.From.Out, e)
	g.Edges = append(g.Edges, e)
}

// latestBefore is the last invocation of the list (in start order) that started at or
// before the span.
func latestBefore(list []*Invocation, s *Span) *Invocation {
	t := s.Pdata.StartTimestamp()
	i := sort.Search(len(list), func(i int) bool { return list[i].Span.Pdata.StartTimestamp() > t })
	if i == 0 {
		return nil
	}
	return list[i-1]
}

// freeList finds, in a start-ordered list of invocations, the first one from a position on
// that has no incoming edge yet. An incoming edge is never removed, so skip pointers (with
// path compression) stay valid: skip[i] > i, and every invocation in [i, skip[i]) has one.
type freeList struct {
	list []*Invocation
	skip []int
}

func newFreeList(list []*Invocation) *freeList {
	fl := &freeList{list: list, skip: make([]int, len(list))}
	for i := range fl.skip {
		fl.skip[i] = i + 1
	}
	return fl
}

func (fl *freeList) first(i int, work *int) int {
	j := i
	for j < len(fl.list) && fl.list[j].In != nil {
		*work++
		j = fl.skip[j]
	}
	for k := i; k < j; {
		next := fl.skip[k]
		fl.skip[k] = j
		k = next
	}
	return j
}

// rollup computes each invocation's self and subtree budgets. Tokens come from the
// innermost LLM spans an agent owns; an agent span's own token attributes count only when
// no LLM span sits below it (frameworks repeat the totals on agent spans).
func (g *Graph) rollup() {
	for _, inv := range g.Invocations {
		g.work++
		r := &inv.Self
		r.DurationMs = durationMs(inv.Span)
		if inv.Span.DurationUnknown {
			r.DurationUnknown, r.DurationUnknownSpan = 1, inv.Span
		}
		if inv.Span.Error != nil {
			r.Errors++
		}
		if !inv.Span.llmBelow && inv.Span.HasTokens {
			r.InputTokens += inv.Span.InputTokens
			r.OutputTokens += inv.Span.OutputTokens
		}
		if !inv.Span.llmBelow {
			r.addCost(inv.Span.Cost())
		}
		r.ToolCalls = len(inv.ToolCalls)
		r.DelegationCalls = len(inv.DelegationCalls)
	}
	for _, s := range g.Spans {
		g.work++
		inv := s.owner
		if inv == nil || s.Role == RoleAgent {
			continue
		}
		if s.Error != nil {
			inv.Self.Errors++
		}
		if s.Role == RoleLLM && !s.llmBelowOwn {
			inv.Self.LLMCalls++
			inv.Self.InputTokens += s.InputTokens
			inv.Self.OutputTokens += s.OutputTokens
			inv.Self.addCost(s.Cost())
		}
	}
	for _, inv := range g.Invocations {
		inv.Self.TotalTokens = inv.Self.InputTokens + inv.Self.OutputTokens
	}
	g.subtrees()
}

func durationMs(s *Span) float64 {
	st, en := s.Pdata.StartTimestamp(), s.Pdata.EndTimestamp()
	if en <= st {
		return 0
	}
	return float64(en-st) / 1e6
}

// Control-flow exceptions LangGraph records as errors: ParentCommand / Command on every
// handoff, GraphInterrupt when a run pauses (for a human approval, say).
const (
	ControlParentCommand  = "ParentCommand"
	ControlCommand        = "Command"
	ControlGraphInterrupt = "GraphInterrupt"
)

// controlFlowCode is a span's control-flow exception, one of controlFlowNames (0: none).
type controlFlowCode uint8

// controlFlowNames are the control-flow exceptions by code.
var controlFlowNames = [...]string{"", ControlParentCommand, ControlCommand, ControlGraphInterrupt}

// controlFlow is the code of the control-flow exception an error is, or 0.
func controlFlow(e *ErrorInfo) controlFlowCode {
	msg := strings.TrimSpace(e.Message)
	for i, mark := range [...]string{"", "ParentCommand", "Command(", "GraphInterrupt"} {
		if i > 0 && (strings.Contains(e.Type, mark) || strings.HasPrefix(msg, mark)) {
			return controlFlowCode(i)
		}
	}
	return 0
}

// measure finds the root invocation, the depth (longest chain of hops) and name cycles.
func (g *Graph) measure() {
	isRoot := func(inv *Invocation) bool { return inv.In == nil || inv.In.From.Remote != nil }
	for _, inv := range g.Invocations {
		if isRoot(inv) {
			g.Root = inv
			break
		}
	}
	if g.Root != nil {
		for _, inv := range g.Invocations[g.Root.Index:] {
			g.work++
			if inv.Name == g.Root.Name && isRoot(inv) {
				g.RootRuns = append(g.RootRuns, inv)
			}
		}
	}
	g.Depth = g.maxDepth
	var work int
	g.Cycles, work = nameCycles(g.Edges)
	g.work += work
}

// nameCycles returns the strongly connected groups of the agent-name graph that contain a
// cycle (two or more names, or a name that hands off to itself), each sorted.
func nameCycles(edges []*Edge) (cycles [][]string, work int) {
	adj := make(map[string][]string)
	self := make(map[string]bool)
	var names []string
	seen := make(map[string]bool)
	add := func(n string) {
		if !seen[n] {
			seen[n] = true
			names = append(names, n)
		}
	}
	for _, e := range edges {
		work++
		add(e.From.Name)
		add(e.To.Name)
		adj[e.From.Name] = append(adj[e.From.Name], e.To.Name)
		if e.From.Name == e.To.Name {
			self[e.From.Name] = true
		}
	}
	sort.Strings(names)
	// Tarjan's algorithm.
	index := make(map[string]int)
	low := make(map[string]int)
	onStack := make(map[string]bool)
	var stack []string
	var out [][]string
	next := 0
	var visit func(string)
	visit = func(v string) {
		work++
		index[v], low[v] = next, next
		next++
		stack = append(stack, v)
		onStack[v] = true
		for _, w := range adj[v] {
			if _, ok := index[w]; !ok {
				visit(w)
				low[v] = min(low[v], low[w])
			} else if onStack[w] {
				low[v] = min(low[v], index[w])
			}
		}
		if low[v] == index[v] {
			var comp []string
			for {
				w := stack[len(stack)-1]
				stack = stack[:len(stack)-1]
				onStack[w] = false
				comp = append(comp, w)
				if w == v {
					break
				}
			}
			if len(comp) > 1 || self[v] {
				sort.Strings(comp)
				out = append(out, comp)
			}
		}
	}
	for _, n := range names {
		if _, ok := index[n]; !ok {
			visit(n)
		}
	}
	sort.Slice(out, func(i, j int) bool { return strings.Join(out[i], ",") < strings.Join(out[j], ",") })
	return out, work
}
