package agentgraph

import (
	"encoding/json"
	"regexp"
	"slices"
	"sort"
	"strings"
)

// Delegation calls are tool calls that hand work to another agent instead of doing it:
// transfer calls (transfer_to_agent, transfer_to_<x>, handoff tools, a LangGraph tool whose
// result is a Command(goto=...), the draft GenAI transfer attributes), Strands' swarm routing
// calls (strands_structured_output) and agent-as-tool calls. They are handoff evidence and
// kept in Invocation.DelegationCalls, so Invocation.ToolCalls and the ToolCalls rollups hold
// only the agent's own work, unless Options.CountDelegationCallsAsToolCalls asks for the old
// counting (then they stay in ToolCalls too).

// Delegation kinds (ToolCall.Delegation).
const (
	// DelegationTransfer hands control to the agent it names.
	DelegationTransfer = "transfer"
	// DelegationRouting is a swarm's routing decision (Strands' strands_structured_output):
	// it hands off when it names an agent, else it ends the swarm with its message.
	DelegationRouting = "routing"
	// DelegationAgentTool runs another agent as the tool (the receiver runs under it).
	DelegationAgentTool = "agent_as_tool"
)

// strandsRouting is the tool a Strands swarm node answers through: its arguments name the
// next agent (agentId) or carry the final message.
const strandsRouting = "strands_structured_output"

// splitDelegations marks the delegation calls of every invocation and moves them from
// ToolCalls to DelegationCalls (both stay in start order); keep (the old counting) lists
// them in DelegationCalls and leaves them in ToolCalls as well.
func (g *Graph) splitDelegations(keep bool) {
	known := map[string]bool{} // (not sized by the runs: a trace runs few distinct agents many times)
	for _, inv := range g.Invocations {
		known[inv.Name] = true
	}
	// Agent-as-tool: the tool span a sub-agent runs under (unless the call is a transfer,
	// the stronger evidence, marked below).
	for _, inv := range g.Invocations {
		g.work++
		if p := inv.Span.viaTool; p != nil && p.call != nil && inv.Span.owner != nil {
			p.call.Delegation = DelegationAgentTool
			if !slices.Contains(p.call.Targets, inv.Name) {
				p.call.Targets = append(p.call.Targets, inv.Name)
			}
		}
	}
	for _, inv := range g.Invocations {
		if len(inv.ToolCalls) == 0 {
			continue
		}
		own := inv.ToolCalls[:0] // filtered in place: own never passes the call read
		for _, tc := range inv.ToolCalls {
			g.work++
			if targets, ok := transferTargets(g.ix, tc, known); ok {
				tc.Delegation, tc.Targets = DelegationTransfer, targets
			} else if tc.Delegation == "" {
				switch {
				case g.ix.attr(tc.Span, fkToolType) == "AgentTool":
					// ADK's AgentTool whose agent run is not under it (not in this trace).
					tc.Delegation, tc.Targets = DelegationAgentTool, []string{tc.Name}
				case tc.Name == strandsRouting && inSwarm(inv):
					tc.Delegation = DelegationRouting
				}
			}
			if tc.Delegation != "" {
				inv.DelegationCalls = append(inv.DelegationCalls, tc)
			}
			if tc.Delegation == "" || keep {
				own = append(own, tc)
			}
		}
		inv.ToolCalls = own
	}
}

// transferTargets returns the agents a tool call transfers to, if it is a transfer call:
// the draft GenAI transfer attributes, a LangGraph Command(goto=...) result, then the
// name and argument rules of transferTarget. A transfer naming no agent has no targets.
func transferTargets(ix *attrIndex, tc *ToolCall, known map[string]bool) ([]string, bool) {
	for _, key := range []int32{fkTransferTarget, fkHandoffTarget} {
		if v := ix.attr(tc.Span, key); v != "" {
			return []string{v}, true
		}
	}
	if goto_ := tc.commandGotos(); len(goto_) > 0 {
		return slices.Clone(goto_), true
	}
	target, ok := transferTarget(tc, known)
	if !ok {
		return nil, false
	}
	if target == "" {
		return nil, true
	}
	return []string{target}, true
}

// commandGoto reads the node names of LangGraph Command(goto=...) objects serialized in s
// ({"lg_name":"Command","goto":"x" | ["x", ...] | [{"lg_name":"Send","node":"x"}]}), at any
// depth (OpenInference wraps a tool's Command in {"output": ...}). Nil when there is none.
// s is scanned, not decoded (jsonscan.go): only the markers and the names are read.
func commandGoto(s string) []string {
	if !strings.Contains(s, `"lg_name"`) || !strings.Contains(s, `"Command"`) || !decodable(s) {
		return nil
	}
	var out []string
	var walk func(raw string, depth int)
	walk = func(raw string, depth int) {
		if depth > 8 {
			return
		}
		switch raw[0] {
		case '[':
			rawElements(raw, func(it string) { walk(it, depth+1) })
		case '{':
			x, _ := rawMembers(raw)
			if n, _ := memberString(x, "lg_name"); n == "Command" {
				g, _ := member(x, "goto")
				out = append(out, gotoNames(g)...)
				return // its update holds messages, not commands
			}
			for _, m := range x {
				walk(m.val, depth+1)
			}
		}
	}
	walk(strings.TrimSpace(s), 0)
	return out
}

// gotoNames are the node names of a Command's raw goto value ("" when it has none): a
// name, a list of names and Sends, a Send(node, arg).
func gotoNames(raw string) []string {
	if raw == "" {
		return nil
	}
	switch raw[0] {
	case '"':
		if x, _ := rawString(raw); x != "" && x != "__end__" {
			return []string{x}
		}
	case '[':
		var out []string
		rawElements(raw, func(it string) { out = append(out, gotoNames(it)...) })
		return out
	case '{': // Send(node, arg)
		x, _ := rawMembers(raw)
		if n, ok := member(x, "node"); ok && n[0] == '"' {
			return gotoNames(n)
		}
	}
	return nil
}

func sortedKeys(m map[string]any) []string {
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	return keys
}

// commandEdges links the LangGraph nodes that returned Command(goto=...) from a span that
// is not a tool call (tool calls are transfer calls, linked with the others): a node
// function routing the graph. The sender is the agent the node is (an agent span) or runs
// in. A Command seen on a span is skipped when one below it (the same Command bubbling up
// through its parents) was already seen, within one agent.
func (g *Graph) commandEdges(firstAfter func(string, *Span, *Invocation) *Invocation) {
	below := map[*Span]bool{}
	type found struct {
		s       *Span
		targets []string
	}
	var cmds []found
	for i := len(g.preorder) - 1; i >= 0; i-- {
		s := g.preorder[i]
		g.work++
		var targets []string
		if s.Role == RoleTool {
			if s.call != nil {
				targets = s.call.commandGotos()
			}
		} else if out := g.ix.attr(s, fkOutputValue); out != "" {
			targets = commandGoto(out)
		}
		has := len(targets) > 0
		if has && s.Role != RoleTool && !below[s] {
			cmds = append(cmds, found{s, targets})
		}
		if (has || below[s]) && s.parent != nil && s.Role != RoleAgent {
			below[s.parent] = true
		}
	}
	// Start order, as every other detector.
	for i := len(cmds) - 1; i >= 0; i-- {
		c := cmds[i]
		sender := c.s.owner
		if c.s.Role == RoleAgent {
			sender = g.invocationOf[c.s]
		}
		if sender == nil {
			continue
		}
		for _, target := range c.targets {
			g.work++
			recv := firstAfter(target, c.s, sender)
			if recv == nil || recv == sender {
				continue
			}
			g.addEdge(&Edge{
				From: sender, To: recv, Detection: DetectCommandGoto, Via: c.s,
				Reason: resolve(c.s.Pdata, Chain{"output.value"}, nil),
			})
		}
	}
}

// requestingLLM is the LLM call of inv whose response issued the tool call: the tool
// span's nearest LLM ancestor under inv's span (Google ADK), else the latest of inv's LLM
// calls that started at or before it and asked for the call's id, else inv's latest LLM
// call that started at or before it. Start times alone can mislead: OpenInference's
// LangChain spans start at a millisecond (Date.now()), so a tool that runs in under one can
// start at the same instant as the next model call of its loop; the id tells them apart.
func requestingLLM(inv *Invocation, tool *Span, calls *llmRequests, work *int) *Span {
	for p := tool.parent; p != nil && p != inv.Span; p = p.parent {
		*work++
		if p.Role == RoleLLM {
			return p
		}
		if p.Role == RoleAgent {
			break
		}
	}
	t := tool.Pdata.StartTimestamp()
	i := sort.Search(len(inv.llms), func(i int) bool { return inv.llms[i].Pdata.StartTimestamp() > t })
	if i == 0 {
		return nil
	}
	latest := inv.llms[i-1]
	if tool.call == nil {
		return latest
	}
	id := callID(calls.ix, tool.call)
	if id == "" || findRequest(calls.of(latest), id, tool.call.Name) != nil {
		return latest
	}
	// The latest requester of the id that started at or before the tool (ids are unique
	// in practice; the list is in start order).
	var found *Span
	for _, llm := range calls.byID(inv, work)[id+"\x00"+tool.call.Name] {
		if llm.Pdata.StartTimestamp() > t {
			break
		}
		found = llm
	}
	if found != nil {
		return found
	}
	return latest
}

// llmRequests caches, for one graph, the calls each LLM span's response asked for and,
// per invocation, which of its LLM calls asked for each call id (id and tool name).
type llmRequests struct {
	// calls[s.ix] is what span s's response asked for, once parsed: s.ix is s's place in
	// spans (Build numbers the spans of g.Spans in order). Pooled scratch (heldCalls),
	// handed back by release.
	calls     []parsedRequests
	heldCalls *[]parsedRequests
	spans     []*Span
	ids       map[*Invocation]map[string][]*Span
	// ix is the graph's attribute index (nil outside Build).
	ix *attrIndex
}

// parsedRequests is one span's entry in llmRequests.calls.
type parsedRequests struct {
	reqs   []*requestedCall
	parsed bool
}

// requestScratch holds llmRequests.calls between Builds.
var requestScratch scratch[parsedRequests]

// llmRequests is the graph's cache, made when first asked for (recoverArgs, then
// dispatchPayloads share it; Build releases and drops it when done).
func (g *Graph) llmRequests() *llmRequests {
	if g.requests == nil {
		held := requestScratch.get(len(g.Spans))
		g.requests = &llmRequests{calls: *held, heldCalls: held, spans: g.Spans, ids: map[*Invocation]map[string][]*Span{}, ix: g.ix}
	}
	return g.requests
}

// of is requestedCalls(llm), parsed once (a span that is not the graph's is parsed each
// time: none is asked about).
func (r *llmRequests) of(llm *Span) []*requestedCall {
	i := int(llm.ix)
	if i >= len(r.spans) || r.spans[i] != llm {
		return requestedCalls(r.ix, llm)
	}
	p := &r.calls[i]
	if !p.parsed {
		p.reqs, p.parsed = requestedCalls(r.ix, llm), true
	}
	return p.reqs
}

// release hands the parsed calls' scratch back; r is not used after.
func (r *llmRequests) release() {
	requestScratch.put(r.heldCalls)
	r.calls, r.heldCalls, r.spans = nil, nil, nil
}

// byID indexes inv's LLM calls (in start order) by the call ids their responses asked
// for, keyed by id and tool name; built once per invocation, when a call id is first
// looked up in it.
func (r *llmRequests) byID(inv *Invocation, work *int) map[string][]*Span {
	idx, ok := r.ids[inv]
	if ok {
		return idx
	}
	idx = map[string][]*Span{}
	for _, llm := range inv.llms {
		*work++
		for _, req := range r.of(llm) {
			if req.id != "" {
				k := req.id + "\x00" + req.name
				if l := idx[k]; len(l) == 0 || l[len(l)-1] != llm {
					idx[k] = append(l, llm)
				}
			}
		}
	}
	r.ids[inv] = idx
	return idx
}

// llmOutputPlaces are the output chain's places on an LLM span (its llm: entries).
func llmOutputPlaces(chains Chains) Chain {
	var out Chain
	for _, p := range chains.Output {
		if rest, ok := strings.CutPrefix(p, "llm:"); ok {
			out = append(out, rest)
		}
	}
	return out
}

// dispatchPayloads fills Said and Payload of every edge: the text the sender's LLM response
// carried with the dispatch call (a transfer or agent-as-tool call), and what crossed the
// handoff (Reason, plus Said).
func (g *Graph) dispatchPayloads() {
	calls := g.llmRequests()
	ix := g.ix
	for _, e := range g.Edges {
		g.work++
		e.Payload = e.Reason
		if e.Via == nil || e.Via.Role != RoleTool || e.From.Remote != nil || e.Via.call == nil || e.Via.call.Delegation == "" {
			continue
		}
		llm := requestingLLM(e.From, e.Via, calls, &g.work)
		if llm == nil {
			continue
		}
		resp := ix.resolve(llm, &ix.cc.llmOutput, nil, nil)
		if !resp.Found() || !mayHoldText(resp.Text) {
			continue
		}
		// An LLM span whose response does not hold the call is no witness of what was said
		// with it (Mastra's model_generation spans the whole multi-step run).
		if !requests(calls.of(llm), e.Via.call.Name) {
			continue
		}
		if text := responseText(resp.Text); text != "" {
			e.Said = Value{Text: text, Source: "llm:" + resp.Source}
			e.Payload = payloadOf(e.Reason, e.Said)
		}
	}
}

// mayHoldText is a cheap pre-check for responseText: plain text, or JSON with a text or
// content key (most dispatching responses hold only the call).
func mayHoldText(raw string) bool {
	t := strings.TrimSpace(raw)
	if t == "" || (t[0] != '{' && t[0] != '[' && t[0] != '"') {
		return t != ""
	}
	return strings.Contains(t, `text"`) || strings.Contains(t, `content"`) // "text", "0.message.content"
}

// requests reports whether an LLM span's response, which asked for reqs, asked for a call
// of the tool.
func requests(reqs []*requestedCall, tool string) bool {
	for _, r := range reqs {
		if r.name == tool {
			return true
		}
	}
	return false
}

// payloadOf joins a dispatch's arguments and what the sender said with them: a JSON object
// of arguments gets the text under "text" (or "sender_text" when the arguments have a
// "text"), other arguments get it on a line of its own.
func payloadOf(reason, said Value) Value {
	if !said.Found() {
		return reason
	}
	if !reason.Found() {
		return said
	}
	source := reason.Source + "+" + said.Source
	if m := parseObject(reason.Text); m != nil {
		key := "text"
		if _, ok := m[key]; ok {
			key = "sender_text"
		}
		m[key] = said.Text
		if b, err := json.Marshal(m); err == nil {
			return Value{Text: string(b), Source: source}
		}
	}
	return Value{Text: reason.Text + "\n" + said.Text, Source: source}
}

// scopePrompt is what a HANDOFF span carries as the receiver's scope prompt: its input,
// preceded by what the sender said with the dispatch when the input does not hold it.
func scopePrompt(e *Edge) Value {
	in := e.To.Input
	if !e.Said.Found() || strings.Contains(in.Text, e.Said.Text) {
		return in
	}
	if !in.Found() {
		return e.Said
	}
	return Value{Text: e.Said.Text + "\n\n" + in.Text, Source: e.Said.Source + "+" + in.Source}
}

// Keys whose values are calls, call arguments or metadata, never text the model said.
var nonTextKeys = map[string]bool{
	"functionCall": true, "function_call": true, "tool_calls": true, "tool_call": true,
	"toolUse": true, "toolCall": true, "toolCalls": true, "args": true, "arguments": true,
	"input": true, "functionResponse": true, "usageMetadata": true, "usage_metadata": true,
	"response_metadata": true, "additional_kwargs": true, "invalid_tool_calls": true,
	"reasoning": true, "id": true, "role": true, "finishReason": true, "finish_reason": true,
}

// Part types that are calls, not text (OTel parts, Strands blocks, Vercel, Anthropic).
var callPartTypes = map[string]bool{
	"tool_call": true, "toolUse": true, "tool_use": true, "tool-call": true, "function_call": true,
	"tool_call_response": true, "toolResult": true, "tool_result": true,
}

// responseText is the text an LLM response holds besides its calls, in any of the shapes
// the output chain finds: plain text, OTel output messages (parts of type text), Google ADK
// content parts, Strands content blocks, OpenInference flattened output messages and
// LangChain generations. Strings under "text" and "content" keys are gathered, each once,
// outside call objects.
//
// The response is scanned, not decoded (jsonscan.go): only the strings gathered are.
func responseText(raw string) string {
	if !decodable(raw) {
		return strings.TrimSpace(raw)
	}
	t := strings.TrimSpace(raw)
	if s, ok := rawString(t); ok {
		return strings.TrimSpace(s)
	}
	var parts []string
	seen := map[string]bool{}
	// Each object's members are listed on a pooled arena, as collectCalls does, and dropped
	// from it when the object is walked.
	held := memberArenas.get(0)
	arena := *held
	var walk func(v, key string, depth int)
	walk = func(v, key string, depth int) {
		if depth > 12 {
			return
		}
		switch v[0] {
		case '"':
			if key != "text" && key != "content" {
				return
			}
			s, _ := rawString(v)
			if t := strings.TrimSpace(s); t != "" && !seen[t] {
				seen[t] = true
				parts = append(parts, t)
			}
		case '[':
			rawElements(v, func(it string) { walk(it, key, depth+1) })
		case '{':
			base := len(arena)
			arena, _ = rawMembersAppend(arena, v)
			x := arena[base:]
			if t, _ := memberString(x, "type"); !callPartTypes[t] {
				for _, m := range x {
					if last, ok := textKey(m.key); ok {
						walk(m.val, last, depth+1)
					}
				}
			}
			arena = arena[:base]
		}
	}
	walk(t, "", 0)
	*held = arena[:cap(arena)] // every element it used is cleared
	memberArenas.put(held)
	return strings.Join(parts, "\n")
}

// textKey is the last dot-separated segment of a member key (OpenInference flattens
// 0.message.content), and false when any segment names calls or metadata (nonTextKeys).
func textKey(k string) (last string, ok bool) {
	for {
		seg, rest, more := strings.Cut(k, ".")
		if nonTextKeys[seg] {
			return "", false
		}
		if !more {
			return seg, true
		}
		k = rest
	}
}

// requestedCall is one tool call an LLM response asked for.
type requestedCall struct {
	id, name string
	// rawArgs is the call's arguments as the response wrote them (undecoded JSON; "" when
	// the call had none), rendered as text by args only when asked.
	rawArgs string
	source  string
	used    bool
}

// args is the call's arguments as text: a string bare, any other JSON value re-encoded
// (keys sorted, compact), "null" when the call had none.
func (r *requestedCall) args() string { return rawText(r.rawArgs) }

// Places on an LLM span that list the calls its response asked for, in order of trust.
var requestPlaces = Chain{
	"gen_ai.output.messages", "event:gen_ai.client.inference.operation.details:gen_ai.output.messages",
	"gcp.vertex.agent.llm_response", "event:gen_ai.choice:message", "output.value",
	"llm.output_messages.*", "ai.response.toolCalls", "gen_ai.completion",
}

// requestedCalls lists the calls an LLM span's response asked for: the first place of
// requestPlaces that holds any. The response is scanned, not decoded: only the names, ids
// and argument spans of the calls are read (see jsonscan.go).
func requestedCalls(ix *attrIndex, llm *Span) []*requestedCall {
	for i, place := range requestPlaces {
		var raw string
		var ok bool
		if ix != nil {
			raw, ok = ix.lookup(llm, &ix.cc.requests.places[i], nil)
		} else {
			raw, ok = lookupPlace(llm.Pdata, place)
		}
		if !ok || !strings.Contains(raw, "name") {
			continue
		}
		if out := callsIn(raw); len(out) > 0 {
			source := "llm:" + place
			for _, c := range out {
				c.source = source
			}
			return out
		}
	}
	return nil
}

// callsIn lists the calls a response text asks for (source unset), each call id and tool
// name once; nil when there is none or the text does not decode as JSON.
func callsIn(raw string) []*requestedCall {
	if !decodable(raw) {
		return nil
	}
	var out []*requestedCall
	held := memberArenas.get(0)
	arena := *held
	collectCalls(strings.TrimSpace(raw), &arena, func(id, name, args string) {
		if name != "" {
			out = append(out, &requestedCall{id: id, name: name, rawArgs: args})
		}
	}, 0)
	*held = arena[:cap(arena)] // every element it used is cleared
	memberArenas.put(held)
	return firstOfEachID(out)
}

// firstOfEachID drops the calls whose id and tool name an earlier call had (calls without
// an id all stay), in place.
func firstOfEachID(calls []*requestedCall) []*requestedCall {
	if len(calls) < 2 {
		return calls
	}
	seen := map[string]bool{}
	out := calls[:0]
	for _, c := range calls {
		if c.id != "" {
			k := c.id + "\x00" + c.name
			if seen[k] {
				continue
			}
			seen[k] = true
		}
		out = append(out, c)
	}
	return out
}

// collectCalls finds call objects in a response (raw, valid JSON): {name|toolName,
// args|arguments|input, id|toolUseId|toolCallId}, OpenAI's {id, function: {name,
// arguments}}, and OpenInference's flattened N.message.tool_calls.M.tool_call.function.name
// keys. Members are visited in key order, the last of duplicate keys counting, as in a
// decoded object; args is the raw value of the arguments ("" when absent). The members of
// the objects on the way down are read into arena (a stack: each level's part is above its
// parent's, and dropped when the level returns), not into a slice per object.
func collectCalls(raw string, arena *[]rawMember, add func(id, name, args string), depth int) {
	if depth > 12 || raw == "" {
		return
	}
	switch raw[0] {
	case '[':
		rawElements(raw, func(it string) { collectCalls(it, arena, add, depth+1) })
	case '{':
		base := len(*arena)
		*arena, _ = rawMembersAppend(*arena, raw)
		collectObjectCalls((*arena)[base:], arena, add, depth)
		*arena = (*arena)[:base]
	}
}

// collectObjectCalls is collectCalls on an object's members x.
func collectObjectCalls(x []rawMember, arena *[]rawMember, add func(id, name, args string), depth int) {
	if f, ok := member(x, "function"); ok {
		base := len(*arena)
		all, isObject := rawMembersAppend(*arena, f)
		*arena = all[:base]
		if isObject {
			fm := all[base:]
			if n, ok := memberString(fm, "name"); ok {
				id, _ := memberString(x, "id")
				args, _ := member(fm, "arguments")
				add(id, n, args)
				return
			}
		}
	}
	name, _ := memberString(x, "name")
	if name == "" {
		name, _ = memberString(x, "toolName")
	}
	if name != "" {
		for _, ak := range []string{"args", "arguments", "input"} {
			if a, ok := member(x, ak); ok {
				var id string
				for _, ik := range []string{"id", "toolUseId", "toolCallId", "tool_call_id"} {
					if s, ok := memberString(x, ik); ok && s != "" {
						id = s
						break
					}
				}
				add(id, name, a)
				return
			}
		}
	}
	flat := false
	for _, m := range x {
		if prefix, ok := strings.CutSuffix(m.key, ".tool_call.function.name"); ok {
			flat = true
			n, _ := rawString(m.val)
			id, _ := memberString(x, prefix+".tool_call.id")
			args, _ := member(x, prefix+".tool_call.function.arguments")
			add(id, n, args)
		}
	}
	if flat {
		return
	}
	for _, m := range x {
		collectCalls(m.val, arena, add, depth+1)
	}
}

// Attributes a tool span names its call id in.
var callIDKeys = []string{"gen_ai.tool.call.id", "tool_call.id", "tool.id", "ai.toolCall.id"}

// toolCallIDInResult finds a LangChain ToolMessage's tool_call_id in a tool's result.
var toolCallIDInResult = regexp.MustCompile(`"tool_call_id"\s*:\s*"([^"]+)"`)

// recoverArgs gives tool calls whose span recorded no argument object (OpenInference's
// LangChain tool spans record a single argument's bare value, "Paris") the arguments the
// requesting LLM response asked for: the call of the same id, else the first unused call
// of the same name, in the LLM call that issued it (requestingLLM: by the call's id when it
// has one, else by start time). counted says the delegation calls are in ToolCalls too (each call is seen once).
func (g *Graph) recoverArgs(chains Chains, counted bool) {
	calls := g.llmRequests()
	for _, inv := range g.Invocations {
		lists := [][]*ToolCall{inv.ToolCalls, inv.DelegationCalls}
		if counted {
			lists = lists[:1]
		}
		for _, list := range lists {
			for _, tc := range list {
				g.work++
				if t := strings.TrimSpace(tc.Args.Text); tc.Args.Found() && strings.HasPrefix(t, "{") {
					continue // an argument object (parsed only when asked: most calls never are)
				}
				llm := requestingLLM(inv, tc.Span, calls, &g.work)
				if llm == nil {
					continue
				}
				if req := matchRequest(calls.ix, tc, calls.of(llm)); req != nil {
					req.used = true
					args := req.args()
					if m := parseObject(args); len(m) > 0 {
						tc.Args = Value{Text: args, Source: req.source}
						tc.params, tc.paramsParsed = m, true
					}
				}
			}
		}
	}
}

// callID is the id of a tool call: from its span's attributes, else from the LangChain
// ToolMessage in its result; "" when it has none.
func callID(ix *attrIndex, tc *ToolCall) string {
	for i := range callIDKeys {
		if id := ix.attr(tc.Span, fkCallID+int32(i)); id != "" {
			return id
		}
	}
	if m := toolCallIDInResult.FindStringSubmatch(tc.Result.Text); m != nil {
		return m[1]
	}
	return ""
}

// findRequest is the call of the given id and tool name among reqs, or nil.
func findRequest(reqs []*requestedCall, id, name string) *requestedCall {
	for _, r := range reqs {
		if r.id == id && r.name == name {
			return r
		}
	}
	return nil
}

// matchRequest is the call of reqs a tool call answers: the one of its id, else the first
// unused one of its name.
func matchRequest(ix *attrIndex, tc *ToolCall, reqs []*requestedCall) *requestedCall {
	if id := callID(ix, tc); id != "" {
		if r := findRequest(reqs, id, tc.Name); r != nil {
			return r
		}
	}
	for _, r := range reqs {
		if !r.used && r.name == tc.Name {
			return r
		}
	}
	return nil
}
