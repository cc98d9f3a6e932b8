package agentgraph

import (
	"cmp"
	"encoding/binary"
	"encoding/json"
	"slices"
	"strings"
	"sync"

	"go.opentelemetry.io/collector/pdata/pcommon"
	"go.opentelemetry.io/collector/pdata/ptrace"

	"github.com/otelcol-handoff/otelcol-handoff/internal/pricing"
)

// Span is one span of a trace, classified once through the fallback chains. One is made
// per span of every trace built, so its fields are laid out without padding and what few
// spans carry (a cost, a control-flow mark) is held out of line or as a small code.
type Span struct {
	Pdata    ptrace.Span
	Resource pcommon.Resource
	Scope    pcommon.InstrumentationScope

	ID, ParentID pcommon.SpanID
	Role         Role
	RoleSource   string
	// Name is the agent name (agent spans) or tool name (tool spans); else the span name.
	Name  Value
	Error *ErrorInfo

	InputTokens, OutputTokens int64
	// cost is what the call cost (nil: nothing; see Cost).
	cost *Cost

	parent *Span
	// owner is the nearest agent span above this one (nil at top level).
	owner *Invocation
	// viaTool is the nearest tool span between this span and its owner's span (nil when
	// there is none).
	viaTool *Span
	// call is the ToolCall of a tool span with an owner.
	call *ToolCall
	// group is the nearest orchestration wrapper span above this one with no agent span in
	// between (nil: none); see wrappers.go.
	group *Span
	// kidsAt and kids place the span's children in Graph.kids (link counts them first, to
	// hold every span's children in one array): Graph.children.
	kidsAt, kids int32
	// pre is the span's index in Graph.preorder.
	pre int32
	// ix is the span's number in the attribute index of the Build in progress (slots.go).
	ix int32

	HasTokens bool
	// DurationUnknown is set when the span ends before it starts, or has no end time: its
	// duration is unknown, not zero.
	DurationUnknown bool
	// llmBelow is true when an LLM span sits anywhere below this span; llmBelowOwn when
	// one sits below it without an agent span in between (a wrapped, double-counted call).
	llmBelow, llmBelowOwn bool
	// walk is link's mark while it cuts parent loops: 0 unseen, 1 on the current walk up,
	// 2 done.
	walk uint8
	// flow is the framework control flow the span recorded as an error (see ControlFlow).
	flow controlFlowCode
}

// Cost is what the call cost (LLM spans, and agent spans counted for tokens; see cost.go);
// zero for other spans.
func (s *Span) Cost() Cost {
	if s.cost == nil {
		return Cost{}
	}
	return *s.cost
}

// ControlFlow names a framework control-flow exception the span recorded as an error
// (ControlParentCommand, ControlCommand, ControlGraphInterrupt); Error is then nil. It is
// "" for other spans.
func (s *Span) ControlFlow() string { return controlFlowNames[s.flow] }

// Owner is the agent run whose span is the nearest agent span above s (nil at top level).
func (s *Span) Owner() *Invocation { return s.owner }

// ToolCall is the tool call a tool span is (nil for other spans and unowned tools).
func (s *Span) ToolCall() *ToolCall { return s.call }

// durationUnknown: no end time, or an end before the start.
func durationUnknown(sp ptrace.Span) bool {
	return sp.EndTimestamp() == 0 || sp.EndTimestamp() < sp.StartTimestamp()
}

// ErrorInfo is a normalized error: span status ERROR, error.type or an exception event.
type ErrorInfo struct {
	Type    string `json:"type,omitempty"`
	Message string `json:"message,omitempty"`
	Source  string `json:"source"`
}

// ToolCall is one tool span under an agent.
type ToolCall struct {
	Span   *Span
	Name   string
	Args   Value
	Result Value
	// Delegation is set on a call that hands work to another agent instead of doing it
	// (see delegation.go): DelegationTransfer, DelegationRouting or DelegationAgentTool.
	// Such calls are in Invocation.DelegationCalls, and not in Invocation.ToolCalls unless
	// Options.CountDelegationCallsAsToolCalls asks for the old counting.
	Delegation string
	// Targets names the agents a delegation call hands off to, when it names them.
	Targets []string

	params map[string]any
	// gotos memoizes commandGoto(Result.Text) (splitDelegations and commandEdges both ask).
	gotos                   []string
	paramsParsed, gotosRead bool
}

// commandGotos is commandGoto(tc.Result.Text), read once.
func (tc *ToolCall) commandGotos() []string {
	if !tc.gotosRead {
		tc.gotos, tc.gotosRead = commandGoto(tc.Result.Text), true
	}
	return tc.gotos
}

// Params is Args parsed as a JSON object (nil when it is not one), parsed on first use:
// most tool calls are never asked.
func (tc *ToolCall) Params() map[string]any {
	if !tc.paramsParsed {
		tc.params, tc.paramsParsed = decoratorKwargs(parseObject(tc.Args.Text)), true
	}
	return tc.params
}

// decoratorKwargs unwraps OpenLLMetry's decorator input {"args": [...], "kwargs": {...}}
// (traceloop.entity.input of a @tool function) to the keyword arguments, keeping any
// positional ones under "args"; other objects are returned as they are.
func decoratorKwargs(m map[string]any) map[string]any {
	kwargs, ok := m["kwargs"].(map[string]any)
	if !ok || len(m) > 2 {
		return m
	}
	args, hasArgs := m["args"]
	if len(m) == 2 && !hasArgs {
		return m
	}
	out := make(map[string]any, len(kwargs)+1)
	for k, v := range kwargs {
		out[k] = v
	}
	if list, ok := args.([]any); ok && len(list) > 0 {
		if _, clash := out["args"]; !clash {
			out["args"] = list
		}
	}
	return out
}

// Rollup is what an agent spent.
type Rollup struct {
	InputTokens  int64   `json:"input_tokens"`
	OutputTokens int64   `json:"output_tokens"`
	TotalTokens  int64   `json:"total_tokens"`
	DurationMs   float64 `json:"duration_ms"`
	ToolCalls    int     `json:"tool_calls"`
	// DelegationCalls counts the calls that handed work to another agent (transfer,
	// routing and agent-as-tool calls): handoff evidence, not in ToolCalls (unless
	// Options.CountDelegationCallsAsToolCalls: then ToolCalls counts them too).
	DelegationCalls int `json:"delegation_calls,omitempty"`
	LLMCalls        int `json:"llm_calls"`
	Errors          int `json:"errors"`
	// DurationUnknown counts the agent spans of the rollup whose duration is unknown (they
	// end before they start, or never end): DurationMs then covers only the others, and
	// the true duration is unknown. DurationUnknownSpan is the first of them, in start
	// order.
	DurationUnknown     int   `json:"duration_unknown,omitempty"`
	DurationUnknownSpan *Span `json:"-"`
	// CostUSD sums the cost of the LLM calls counted for tokens (see cost.go);
	// UnpricedModels lists, sorted, the models of the calls whose cost is unknown (no
	// price): CostUSD is then a lower bound.
	CostUSD        float64  `json:"cost_usd"`
	UnpricedModels []string `json:"unpriced_models,omitempty"`
}

// Invocation is one run of an agent (one agent span): a node of the delegation DAG.
type Invocation struct {
	Index        int
	Span         *Span
	Name         string
	Input        Value
	Output       Value
	AllowedTools []string
	AllowedFrom  string
	// ToolCalls are the agent's own tool calls, in start order; DelegationCalls the calls
	// that handed work to another agent (transfer, routing and agent-as-tool calls), which
	// are handoff evidence and not tool calls. With Options.CountDelegationCallsAsToolCalls
	// (the old counting) ToolCalls holds every call, the delegation calls included, and
	// DelegationCalls still lists those.
	ToolCalls       []*ToolCall
	DelegationCalls []*ToolCall
	// In is the edge that started this invocation (nil for a root invocation).
	In      *Edge
	Out     []*Edge
	Self    Rollup
	Subtree Rollup
	// Remote is set on the stand-in for a sender that runs in another trace (joined by a
	// span link); it has no spans here and is not in Graph.Invocations.
	Remote *RemoteRef

	llms []*Span
	// Reachability in the DAG (see reach.go): cycle is the id of the invocation-level cycle
	// this invocation is on (0: none), hang the cycle its tree hangs from (0: a root's
	// tree), [tin, tout) its descendants' preorder numbers.
	cycle, hang int32
	tin, tout   int32
}

// RemoteRef points at a span of another trace (see links.go).
type RemoteRef struct {
	TraceID pcommon.TraceID
	// SpanID is the sender's agent span when a resolver or a HANDOFF span named it, else
	// the linked span.
	SpanID pcommon.SpanID
	// LinkedSpanID is the span the receiver's link points at.
	LinkedSpanID pcommon.SpanID
	// Resolution says what named the sender (LinkByHandoffSpan, LinkByResolver,
	// LinkByAttributes, LinkUnresolved).
	Resolution string
}

// Detection says what evidence produced an edge, strongest first.
const (
	DetectHandoffSpan   = "handoff_span"
	DetectTransferTool  = "transfer_tool"
	DetectParentPointer = "parent_pointer"
	DetectSpanLink      = "span_link"
	DetectAgentAsTool   = "agent_as_tool"
	DetectNesting       = "nesting"
	// DetectCommandGoto: a LangGraph node returned Command(goto=...) naming the receiver.
	DetectCommandGoto     = "command_goto"
	DetectInferredSibling = "inferred_sibling"
)

// Edge is one agent-to-agent handoff.
type Edge struct {
	From, To  *Invocation
	Detection string
	// Via is the span carrying the evidence: the transfer tool call, the tool the receiver
	// runs under, or the explicit handoff span. Nil for plain nesting.
	Via *Span
	// Call is the sender's delegation call that carried the handoff (a transfer or
	// agent-as-tool call), when there is one; nil otherwise. It is Via's call, except on an
	// edge read from a HANDOFF span of this distribution (the processor's output, built
	// again downstream) that recorded a transfer call's handoff: Via is then the HANDOFF
	// span and Call the transfer call it recorded.
	Call *ToolCall
	// Reason is the dispatch trigger (the via span's arguments), when there is one.
	Reason Value
	// Context is the "context" argument of a transfer call, when the framework passes one.
	Context Value
	// Said is the text the sender emitted in the LLM response that issued the dispatch call
	// (Google ADK's transfer_to_agent with a message), when there was any.
	Said Value
	// Payload is what crossed the handoff: Reason, plus Said when the sender said anything
	// with the call (see delegation.go payloadOf).
	Payload Value
	// Mode is the draft GenAI gen_ai.transfer.mode of the dispatch (return_to_caller or
	// pass_control), when the framework recorded it.
	Mode string
	// Inferred is true when the edge rests on timing alone (sibling order).
	Inferred bool
}

// Graph is the delegation DAG of one trace.
type Graph struct {
	TraceID     pcommon.TraceID
	Spans       []*Span
	Invocations []*Invocation
	Edges       []*Edge
	// Root is the earliest invocation nobody handed off to (orchestration wrappers are not
	// invocations: the root of a swarm is the first agent it ran).
	Root *Invocation
	// RootRuns are every top-level run (nobody handed off to it) of the root agent's name, in
	// start order: a supervisor resumed as new runs is one logical agent.
	RootRuns []*Invocation
	// Wrappers are the orchestration wrappers (swarms, graphs, their nodes, workflows) that
	// group agent runs, in start order; see wrappers.go.
	Wrappers []*Wrapper
	// RootSpan is the trace's root span (no parent), or the earliest top-level span.
	RootSpan *Span
	Depth    int
	// Cycles are the name-level cycles of the edges, each as its agent names in order.
	Cycles [][]string
	// Orphans counts spans whose parent is not in the trace; they hang off a virtual root.
	Orphans int
	// Duplicates counts spans whose span id was already seen (the first one is kept).
	Duplicates int
	// BrokenLinks counts parent links cut because they formed a loop.
	BrokenLinks int
	// Unresolved lists transfer calls whose target agent never ran in this trace.
	Unresolved []*ToolCall

	invocationOf map[*Span]*Invocation
	// preorder is the span forest in preorder (parents before children).
	preorder []*Span
	// kids holds every span's children, each span's in start order (see children), while
	// the graph is built: pooled scratch (heldKids), nil after Build.
	kids     []*Span
	heldKids *[]*Span
	// maxDepth is the height of the tallest tree of edges from a root (subtrees).
	maxDepth int
	// work counts the nodes and edges the builder visited; tests assert it stays linear.
	work int
	// requests caches the calls LLM responses asked for while the graph is built.
	requests *llmRequests
	// ix holds the attributes the compiled chains read, per span, while the graph is built
	// (slots.go); nil after Build.
	ix *attrIndex
}

// Options tune the builder.
type Options struct {
	Chains Chains
	// CountDelegationCallsAsToolCalls asks for the old counting: delegation calls
	// (transfer, routing and agent-as-tool calls, see delegation.go) stay in
	// Invocation.ToolCalls and in the ToolCalls rollups, as the agent's tool calls, besides
	// being listed in Invocation.DelegationCalls (and counted in the DelegationCalls
	// rollups) as handoff evidence. Off by default: a delegation call is never a tool call.
	CountDelegationCallsAsToolCalls bool
	// Prices prices the LLM calls without a reported cost (nil: the pinned table,
	// pricing.Default).
	Prices *pricing.Table
}

// Build classifies the spans of one trace and assembles its delegation DAG. spans may come
// in any order and may contain duplicates, cycles and missing parents; none of that panics.
func Build(traceID pcommon.TraceID, spans []*Span, opts Options) *Graph {
	chains := opts.Chains.withDefaults()
	g := &Graph{TraceID: traceID}
	byID := newSpanTable(len(spans))
	g.Spans = make([]*Span, 0, len(spans))
	for _, s := range spans {
		g.work++
		if !byID.insert(s) {
			g.Duplicates++
			continue
		}
		g.Spans = append(g.Spans, s)
	}
	sortSpans(g.Spans)

	g.link(&byID)
	byID.release()
	cc := compiledFor(chains)
	ix := newAttrIndex(cc, len(g.Spans))
	g.ix = ix
	var ra roleAttrs
	for _, s := range g.Spans {
		ra.found = 0
		ix.add(s, &ra)
		s.Role, s.RoleSource = configuredRole(s.Pdata, chains.Role)
		if s.Role == "" {
			s.Role, s.RoleSource = classifyRole(s.Pdata, s.Scope.Name(), &ra)
		}
		s.Error = ix.spanError(s)
		if s.Error != nil {
			if cf := controlFlow(s.Error); cf != 0 {
				// Framework control flow recorded as an error: not a failure.
				s.flow, s.Error = cf, nil
			}
		}
		switch s.Role {
		case RoleAgent:
			s.Name = namedBy(ix.resolve(s, &cc.agentName, nil, nil), s.Pdata.Name(), agentNameFromSpan)
		case RoleTool:
			s.Name = namedBy(ix.resolve(s, &cc.toolName, nil, nil), s.Pdata.Name(), toolNameFromSpan)
		default:
			s.Name = Value{Text: s.Pdata.Name(), Source: "span.name.verbatim"}
		}
		if in, _, ok := ix.resolveInt(s, &cc.inputTokens); ok {
			s.InputTokens, s.HasTokens = in, true
		}
		if out, _, ok := ix.resolveInt(s, &cc.outputTokens); ok {
			s.OutputTokens, s.HasTokens = out, true
		}
		s.DurationUnknown = durationUnknown(s.Pdata)
	}
	g.refineRoles()
	g.remoteAgentStubs()
	g.assignOwners()
	g.collectWrappers()
	g.collect(chains, opts.CountDelegationCallsAsToolCalls)
	g.detectEdges(chains)
	g.price(chains, opts.Prices)
	g.rollup()
	g.measure()
	if g.requests != nil {
		g.requests.release()
		g.requests = nil
	}
	g.ix = nil
	ix.release()
	spanKids.put(g.heldKids)
	g.kids, g.heldKids = nil, nil
	return g
}

// sortSpans orders spans by start time, then span id: a total order (ids are unique after
// de-duplication), so the order is deterministic. The keys are read once per span, not
// once per comparison (a span's start time sits behind pdata's wrappers).
// Spans already in order (a replayed file, say) are left as they are.
func sortSpans(spans []*Span) {
	if len(spans) < 2 || sortSpansPacked(spans) {
		return
	}
	sortSpansByKey(spans)
}

// sortSpansByKey is sortSpans for any spans: by (start, id) keys.
func sortSpansByKey(spans []*Span) {
	held := spanKeys.get(len(spans))
	defer spanKeys.put(held)
	keys := *held
	sorted := true
	for i, s := range spans {
		keys[i] = spanKey{s.Pdata.StartTimestamp(), binary.BigEndian.Uint64(s.ID[:]), s}
		if i > 0 && sorted && compareSpanKeys(keys[i-1], keys[i]) > 0 {
			sorted = false
		}
	}
	if sorted {
		return
	}
	slices.SortFunc(keys, compareSpanKeys)
	for i := range keys {
		spans[i] = keys[i].s
	}
}

// sortSpansPacked is sortSpans for the usual trace, false (nothing done) for others: when
// the start times lie within 2^40 ns (18 minutes) of the earliest and there are fewer than
// 2^24 spans, a span's start offset and its position pack into one uint64, sorted as
// integers (no comparison function), and only runs of equal start times are then ordered
// by span id.
func sortSpansPacked(spans []*Span) bool {
	const posBits = 24
	n := len(spans)
	if n >= 1<<posBits {
		return false
	}
	held := packedKeys.get(n)
	defer packedKeys.put(held)
	keys := *held
	lo, hi := ^uint64(0), uint64(0)
	for i, s := range spans {
		t := uint64(s.Pdata.StartTimestamp())
		keys[i], lo, hi = t, min(lo, t), max(hi, t)
	}
	if hi-lo >= 1<<40 {
		return false
	}
	sorted := true
	for i := range keys {
		keys[i] = (keys[i]-lo)<<posBits | uint64(i)
		sorted = sorted && (i == 0 || keys[i-1] < keys[i])
	}
	if !sorted {
		slices.Sort(keys)
		heldWas := spanStacks.get(n)
		was := *heldWas
		copy(was, spans)
		for j, k := range keys {
			spans[j] = was[k&(1<<posBits-1)]
		}
		spanStacks.put(heldWas)
	}
	for i := 0; i < n; {
		j := i + 1
		for j < n && keys[j]>>posBits == keys[i]>>posBits {
			j++
		}
		if j-i > 1 { // equal start times: by span id
			slices.SortFunc(spans[i:j], func(a, b *Span) int {
				return cmp.Compare(binary.BigEndian.Uint64(a.ID[:]), binary.BigEndian.Uint64(b.ID[:]))
			})
		}
		i = j
	}
	return true
}

// spanKey is what sortSpans orders a span by.
type spanKey struct {
	start pcommon.Timestamp
	id    uint64 // the span id's bytes, big-endian: compares as bytes.Compare does
	s     *Span
}

func compareSpanKeys(a, b spanKey) int {
	if c := cmp.Compare(a.start, b.start); c != 0 {
		return c
	}
	return cmp.Compare(a.id, b.id)
}

// Scratch slices of one Build, reused by the next.
var (
	spanKeys     scratch[spanKey]
	packedKeys   scratch[uint64]
	spanStacks   scratch[*Span]
	memberArenas scratch[rawMember] // collectCalls
	spanSlots    scratch[*Span]     // spanTable
	spanKids     scratch[*Span]     // Graph.kids
	spanMarks    scratch[*Span]     // remoteAgentStubs
	spanFlags    scratch[bool]      // remoteAgentStubs
)

// spanTable finds Build's spans by span id: an open-addressing hash table (linear probing)
// whose slots are pooled scratch, where a map of every span would be garbage after each
// Build. It holds the first span of each id.
type spanTable struct {
	held  *[]*Span
	slots []*Span // len a power of two, at least twice the spans
	shift uint    // 64 - log2(len(slots))
}

// newSpanTable is an empty table for up to n spans; release hands its slots back.
func newSpanTable(n int) spanTable {
	size, shift := 2, uint(63)
	for size < 2*n {
		size, shift = size<<1, shift-1
	}
	held := spanSlots.get(size)
	return spanTable{held: held, slots: *held, shift: shift}
}

// home is id's first slot: Fibonacci hashing of its bytes, so that ids counted up (tests,
// some SDKs) spread as well as random ones.
func (t *spanTable) home(id pcommon.SpanID) uint64 {
	return (binary.LittleEndian.Uint64(id[:]) * 0x9E3779B97F4A7C15) >> t.shift
}

// insert adds s and reports true, or reports false when a span with its id is in already.
func (t *spanTable) insert(s *Span) bool {
	mask := uint64(len(t.slots) - 1)
	for i := t.home(s.ID); ; i = (i + 1) & mask {
		switch c := t.slots[i]; {
		case c == nil:
			t.slots[i] = s
			return true
		case c.ID == s.ID:
			return false
		}
	}
}

// get is the span with id id (nil: none).
func (t *spanTable) get(id pcommon.SpanID) *Span {
	mask := uint64(len(t.slots) - 1)
	for i := t.home(id); ; i = (i + 1) & mask {
		if c := t.slots[i]; c == nil || c.ID == id {
			return c
		}
	}
}

// release hands the slots back to the pool; the table is not used after.
func (t *spanTable) release() {
	spanSlots.put(t.held)
	t.held, t.slots = nil, nil
}

// scratch pools slices that live only during one Build, each in a holder that is pooled
// with it (handing back a slice would allocate a new holder every time).
type scratch[T any] struct{ pool sync.Pool }

// get is a holder of a slice of n zero elements.
func (sc *scratch[T]) get(n int) *[]T {
	p, _ := sc.pool.Get().(*[]T)
	if p == nil {
		p = new([]T)
	}
	if cap(*p) < n {
		*p = make([]T, n)
	}
	*p = (*p)[:n]
	return p
}

// put hands p back, its slice cleared up to its length (the elements past it were cleared
// when last put); the user sets the length to what it used.
func (sc *scratch[T]) put(p *[]T) {
	clear(*p)
	*p = (*p)[:0]
	sc.pool.Put(p)
}

// children are s's children, in start order.
func (g *Graph) children(s *Span) []*Span {
	return g.kids[s.kidsAt : s.kidsAt+s.kids : s.kidsAt+s.kids]
}

// link resolves parents, cuts parent loops and counts orphans.
func (g *Graph) link(byID *spanTable) {
	for _, s := range g.Spans {
		if s.ParentID.IsEmpty() {
			continue
		}
		p := byID.get(s.ParentID)
		if p == nil {
			g.Orphans++
			continue
		}
		if p == s {
			g.BrokenLinks++ // its own parent: a loop of one
			continue
		}
		s.parent = p
	}
	// A parent loop (A under B under A) has no root; walk up with a per-walk mark and cut
	// the link that closes the loop.
	for _, s := range g.Spans {
		s.walk = 0
	}
	var path []*Span
	for _, s := range g.Spans {
		path = path[:0]
		for cur := s; cur != nil && cur.walk == 0; cur = cur.parent {
			g.work++
			cur.walk = 1
			path = append(path, cur)
			if cur.parent != nil && cur.parent.walk == 1 {
				cur.parent = nil
				g.BrokenLinks++
				break
			}
		}
		for _, p := range path {
			p.walk = 2
		}
	}
	// Every span's children share one array, each span's part sized by a first count.
	ntops := 0
	for _, s := range g.Spans {
		s.kids = 0
	}
	for _, s := range g.Spans {
		if s.parent != nil {
			s.parent.kids++
		} else {
			ntops++
		}
	}
	g.heldKids = spanKids.get(len(g.Spans) - ntops)
	g.kids = *g.heldKids
	off := int32(0)
	for _, s := range g.Spans {
		s.kidsAt, off = off, off+s.kids
		s.kids = 0 // counted again as the children are placed
	}
	tops := make([]*Span, 0, ntops)
	for _, s := range g.Spans {
		g.work++
		if p := s.parent; p != nil {
			g.kids[p.kidsAt+p.kids] = s
			p.kids++
		} else {
			tops = append(tops, s)
			if g.RootSpan == nil || (s.ParentID.IsEmpty() && !g.RootSpan.ParentID.IsEmpty()) {
				g.RootSpan = s
			}
		}
	}
	// Preorder of the span forest (tops and children in start order), iteratively since
	// traces can be deep: every later pass walks it forwards (parents first) or backwards
	// (children first) once.
	g.preorder = make([]*Span, 0, len(g.Spans))
	heldStack := spanStacks.get(len(g.Spans)) // never more than every span
	defer spanStacks.put(heldStack)           // (its length stays len(g.Spans): all cleared)
	stack := (*heldStack)[:0]
	for i := len(tops) - 1; i >= 0; i-- {
		stack = append(stack, tops[i])
	}
	for len(stack) > 0 {
		s := stack[len(stack)-1]
		stack = stack[:len(stack)-1]
		g.work++
		s.pre = int32(len(g.preorder))
		g.preorder = append(g.preorder, s)
		kids := g.children(s)
		for i := len(kids) - 1; i >= 0; i-- {
			stack = append(stack, kids[i])
		}
	}
}

// assignOwners creates an Invocation per agent span (in start order) and walks the span
// forest top-down in preorder, giving every span its nearest agent ancestor and the
// nearest tool span between them.
func (g *Graph) assignOwners() {
	n := 0
	for _, s := range g.Spans {
		if s.Role == RoleAgent {
			n++
		}
	}
	invs := make(map[*Span]*Invocation, n)
	g.invocationOf = invs
	slab := make([]Invocation, n) // one allocation for every run
	g.Invocations = make([]*Invocation, 0, n)
	for _, s := range g.Spans {
		if s.Role == RoleAgent {
			inv := &slab[len(g.Invocations)]
			inv.Index, inv.Span, inv.Name = len(g.Invocations), s, s.Name.Text
			g.Invocations = append(g.Invocations, inv)
			invs[s] = inv
		}
	}
	for _, s := range g.preorder {
		g.work++
		p := s.parent
		if p == nil {
			continue
		}
		if inv := invs[p]; inv != nil {
			s.owner = inv
			continue
		}
		s.owner = p.owner
		s.viaTool = p.viaTool
		if p.Role == RoleTool {
			s.viaTool = p
		}
	}
	// Bottom-up: which spans have an LLM span below them.
	for i := len(g.preorder) - 1; i >= 0; i-- {
		s := g.preorder[i]
		if s.parent == nil {
			continue
		}
		if s.Role == RoleLLM || s.llmBelow {
			s.parent.llmBelow = true
		}
		if s.Role == RoleLLM || (s.llmBelowOwn && s.Role != RoleAgent) {
			s.parent.llmBelowOwn = true
		}
	}
}

// collect gathers each invocation's tools, LLM calls, content and allowed tools;
// countDelegations keeps the delegation calls among the tool calls (the old counting).
func (g *Graph) collect(chains Chains, countDelegations bool) {
	// Every invocation's tool calls and LLM calls are counted first, so that each list is
	// a part of one array (lists that stay empty stay nil).
	ntools, nllms := 0, 0
	counts := make([]int32, 2*len(g.Invocations))
	for _, s := range g.Spans {
		inv := s.owner
		if inv == nil || (s.Role != RoleTool && s.Role != RoleLLM) {
			continue
		}
		if s.Role == RoleTool {
			ntools++
		}
		if inv.Index >= len(g.Invocations) || g.Invocations[inv.Index] != inv {
			continue // (no span is owned by a remote stand-in; its lists would just grow)
		}
		if s.Role == RoleTool {
			counts[2*inv.Index]++
		} else {
			nllms++
			counts[2*inv.Index+1]++
		}
	}
	calls := make([]ToolCall, ntools) // one allocation for every call
	callPtrs, llmPtrs := make([]*ToolCall, ntools), make([]*Span, nllms)
	for i, inv := range g.Invocations {
		if n := counts[2*i]; n > 0 {
			inv.ToolCalls, callPtrs = callPtrs[:0:n], callPtrs[n:]
		}
		if n := counts[2*i+1]; n > 0 {
			inv.llms, llmPtrs = llmPtrs[:0:n], llmPtrs[n:]
		}
	}
	for _, s := range g.Spans {
		inv := s.owner
		if inv == nil {
			continue
		}
		switch s.Role {
		case RoleTool:
			tc := &calls[0]
			calls = calls[1:]
			*tc = ToolCall{
				Span: s, Name: s.Name.Text,
				Args:   g.ix.resolve(s, &g.ix.cc.toolArgs, nil, nil),
				Result: g.ix.resolve(s, &g.ix.cc.toolResult, nil, nil),
			}
			inv.ToolCalls = append(inv.ToolCalls, tc)
			s.call = tc
		case RoleLLM:
			inv.llms = append(inv.llms, s)
		}
	}
	// An agent offers the same tool definitions on every run (and every model call of a
	// run carries them): the names in one definitions text are read once per trace.
	toolSets := map[string][]string{}
	texts := pathTexts{} // the definitions at a KEY#a.b place, rendered once per trace too
	cc := g.ix.cc
	for _, inv := range g.Invocations {
		var first, last *Span
		if len(inv.llms) > 0 {
			first, last = inv.llms[0], inv.llms[len(inv.llms)-1]
		}
		inv.Input = g.ix.resolve(inv.Span, &cc.input, first, nil)
		inv.Output = g.ix.resolve(inv.Span, &cc.output, last, nil)
		if tools := g.ix.resolve(inv.Span, &cc.allowedTools, first, texts); tools.Found() {
			names, ok := toolSets[tools.Text]
			if !ok {
				names = toolNames(tools.Text)
				toolSets[tools.Text] = names
			}
			inv.AllowedTools = slices.Clone(names)
			inv.AllowedFrom = tools.Source
		}
	}
	g.splitDelegations(countDelegations)
	g.recoverArgs(chains, countDelegations)
}

// parseObject parses a JSON object, or returns nil.
func parseObject(s string) map[string]any {
	if s == "" || s[0] != '{' {
		return nil
	}
	var m map[string]any
	if json.Unmarshal([]byte(s), &m) != nil {
		return nil
	}
	return m
}

// toolNames reads tool names from a list of names or of tool definitions: the OTel
// ({"name": ...}) or OpenAI ({"function": {"name": ...}}) schema, Google ADK's
// {"functionDeclarations": [...]}, definitions serialized as JSON strings (Vercel AI SDK's
// ai.prompt.tools, Microsoft Agent Framework), and OpenInference's flattened
// llm.tools.N.tool.json_schema keys (an object of JSON strings, in key order). The text is
// scanned, not decoded (jsonscan.go): only the names and the strings that may be nested
// definitions are (slots_test.go keeps the decoding reader it replaced, and compares).
func toolNames(s string) []string {
	if !decodable(s) {
		return nil
	}
	var names []string
	var seen map[string]bool
	add := func(n string) {
		if n != "" && !seen[n] {
			if seen == nil {
				seen = map[string]bool{}
			}
			seen[n] = true
			names = append(names, n)
		}
	}
	present := func(m []rawMember, key string) (string, bool) {
		v, ok := member(m, key)
		return v, ok && v != "null" // a decoded map's value is nil for null
	}
	var walk func(raw string, depth int)
	walk = func(raw string, depth int) {
		if depth > 6 {
			return
		}
		switch raw[0] {
		case '"':
			x, _ := rawString(raw)
			if t := strings.TrimSpace(x); strings.HasPrefix(t, "{") {
				if decodable(t) {
					walk(t, depth+1)
				}
				return
			}
			add(x)
		case '[':
			rawElements(raw, func(it string) { walk(it, depth+1) })
		case '{':
			m, _ := rawMembers(raw)
			if fd, ok := present(m, "functionDeclarations"); ok {
				walk(fd, depth+1)
			} else if f, ok := present(m, "function"); ok {
				if fm, ok := rawMembers(f); ok {
					if n, ok := memberString(fm, "name"); ok {
						add(n)
					}
				}
			} else if n, ok := present(m, "name"); ok {
				if n, ok := rawString(n); ok {
					add(n)
				}
			} else if depth == 0 { // flattened indexed keys: one definition per value
				for _, mem := range m {
					walk(mem.val, depth+1)
				}
			}
		}
	}
	walk(strings.TrimSpace(s), 0)
	return names
}

// spanError normalizes the error a span carries, if any.
func (ix *attrIndex) spanError(s *Span) *ErrorInfo {
	typ := ix.resolve(s, &ix.cc.errorType, nil, nil)
	if st := s.Pdata.Status(); st.Code() == ptrace.StatusCodeError {
		e := &ErrorInfo{Message: st.Message(), Source: "status"}
		if typ.Found() {
			e.Type = typ.Text
		}
		if e.Message == "" {
			e.Message, _ = eventText(s.Pdata, "exception", "exception.message")
		}
		return e
	}
	if typ.Found() {
		msg, _ := eventText(s.Pdata, "exception", "exception.message")
		if msg == "" {
			msg = ix.str(s, fkErrorMessage)
		}
		return &ErrorInfo{Type: typ.Text, Message: msg, Source: typ.Source}
	}
	if st := ix.str(s, fkToolStatus); st == "error" {
		return &ErrorInfo{Source: "gen_ai.tool.status"}
	}
	return nil
}
