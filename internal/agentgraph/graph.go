package agentgraph

import (
	"bytes"
	"cmp"
	"encoding/json"
	"slices"

	"go.opentelemetry.io/collector/pdata/pcommon"
	"go.opentelemetry.io/collector/pdata/ptrace"
)

// Span is one span of a trace, classified once through the fallback chains.
type Span struct {
	Span     ptrace.Span
	Resource pcommon.Resource
	Scope    pcommon.InstrumentationScope

	ID, ParentID pcommon.SpanID
	Role         Role
	RoleSource   string
	// Name is the agent name (agent spans) or tool name (tool spans); else the span name.
	Name  Value
	Error *ErrorInfo
	// ControlFlow names a framework control-flow exception the span recorded as an error
	// (ControlParentCommand, ControlCommand, ControlGraphInterrupt); Error is then nil.
	ControlFlow string

	InputTokens, OutputTokens int64
	HasTokens                 bool
	// DurationUnknown is set when the span ends before it starts, or has no end time: its
	// duration is unknown, not zero.
	DurationUnknown bool

	parent   *Span
	children []*Span
	// owner is the nearest agent span above this one (nil at top level).
	owner *Invocation
	// viaTool is the nearest tool span between this span and its owner's span (nil when
	// there is none).
	viaTool *Span
	// call is the ToolCall of a tool span with an owner.
	call *ToolCall
	// llmBelow is true when an LLM span sits anywhere below this span; llmBelowOwn when
	// one sits below it without an agent span in between (a wrapped, double-counted call).
	llmBelow, llmBelowOwn bool
}

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

	params       map[string]any
	paramsParsed bool
}

// Params is Args parsed as a JSON object (nil when it is not one), parsed on first use:
// most tool calls are never asked.
func (tc *ToolCall) Params() map[string]any {
	if !tc.paramsParsed {
		tc.params, tc.paramsParsed = parseObject(tc.Args.Text), true
	}
	return tc.params
}

// Rollup is what an agent spent.
type Rollup struct {
	InputTokens  int64   `json:"input_tokens"`
	OutputTokens int64   `json:"output_tokens"`
	TotalTokens  int64   `json:"total_tokens"`
	DurationMs   float64 `json:"duration_ms"`
	ToolCalls    int     `json:"tool_calls"`
	LLMCalls     int     `json:"llm_calls"`
	Errors       int     `json:"errors"`
	// DurationUnknown counts the agent spans of the rollup whose duration is unknown (they
	// end before they start, or never end): DurationMs then covers only the others, and
	// the true duration is unknown. DurationUnknownSpan is the first of them, in start
	// order.
	DurationUnknown     int   `json:"duration_unknown,omitempty"`
	DurationUnknownSpan *Span `json:"-"`
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
	ToolCalls    []*ToolCall
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
	cycle, hang int
	tin, tout   int
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
	DetectHandoffSpan     = "handoff_span"
	DetectTransferTool    = "transfer_tool"
	DetectParentPointer   = "parent_pointer"
	DetectSpanLink        = "span_link"
	DetectAgentAsTool     = "agent_as_tool"
	DetectNesting         = "nesting"
	DetectInferredSibling = "inferred_sibling"
)

// Edge is one agent-to-agent handoff.
type Edge struct {
	From, To  *Invocation
	Detection string
	// Via is the span carrying the evidence: the transfer tool call, the tool the receiver
	// runs under, or the explicit handoff span. Nil for plain nesting.
	Via *Span
	// Reason is the dispatch trigger (the via span's arguments), when there is one.
	Reason Value
	// Context is the "context" argument of a transfer call, when the framework passes one.
	Context Value
	// Inferred is true when the edge rests on timing alone (sibling order).
	Inferred bool
}

// Graph is the delegation DAG of one trace.
type Graph struct {
	TraceID     pcommon.TraceID
	Spans       []*Span
	Invocations []*Invocation
	Edges       []*Edge
	// Root is the earliest invocation nobody handed off to.
	Root *Invocation
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
	// maxDepth is the height of the tallest tree of edges from a root (subtrees).
	maxDepth int
	// work counts the nodes and edges the builder visited; tests assert it stays linear.
	work int
}

// Options tune the builder.
type Options struct {
	Chains Chains
}

// Build classifies the spans of one trace and assembles its delegation DAG. spans may come
// in any order and may contain duplicates, cycles and missing parents; none of that panics.
func Build(traceID pcommon.TraceID, spans []*Span, opts Options) *Graph {
	chains := opts.Chains.withDefaults()
	g := &Graph{TraceID: traceID}
	byID := make(map[pcommon.SpanID]*Span, len(spans))
	for _, s := range spans {
		g.work++
		if _, dup := byID[s.ID]; dup {
			g.Duplicates++
			continue
		}
		byID[s.ID] = s
		g.Spans = append(g.Spans, s)
	}
	slices.SortFunc(g.Spans, spanCompare)

	g.link(byID)
	for _, s := range g.Spans {
		s.Role, s.RoleSource = configuredRole(s.Span, chains.Role)
		if s.Role == "" {
			s.Role, s.RoleSource = classifyRole(s.Span, s.Scope.Name())
		}
		s.Error = spanError(s.Span, chains)
		if s.Error != nil {
			if cf := controlFlow(s.Error); cf != "" {
				// Framework control flow recorded as an error: not a failure.
				s.ControlFlow, s.Error = cf, nil
			}
		}
		if s.Role == RoleAgent {
			s.Name = agentName(s.Span, chains)
		} else if s.Role == RoleTool {
			s.Name = nameFrom(s.Span, chains.ToolName, toolNameFromSpan)
		} else {
			s.Name = Value{Text: s.Span.Name(), Source: "span.name.verbatim"}
		}
		if in, _, ok := resolveInt(s.Span, chains.InputTokens); ok {
			s.InputTokens, s.HasTokens = in, true
		}
		if out, _, ok := resolveInt(s.Span, chains.OutputTokens); ok {
			s.OutputTokens, s.HasTokens = out, true
		}
		s.DurationUnknown = durationUnknown(s.Span)
	}
	g.refineRoles()
	g.remoteAgentStubs()
	g.assignOwners()
	g.collect(chains)
	g.detectEdges(chains)
	g.rollup()
	g.measure()
	return g
}

// spanCompare orders spans by start time, then span id: a total order (ids are unique
// after de-duplication), so the order is deterministic.
func spanCompare(a, b *Span) int {
	if c := cmp.Compare(a.Span.StartTimestamp(), b.Span.StartTimestamp()); c != 0 {
		return c
	}
	return bytes.Compare(a.ID[:], b.ID[:])
}

// link resolves parents, cuts parent loops and counts orphans.
func (g *Graph) link(byID map[pcommon.SpanID]*Span) {
	for _, s := range g.Spans {
		if s.ParentID.IsEmpty() {
			continue
		}
		p, ok := byID[s.ParentID]
		if !ok {
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
	state := make(map[*Span]int, len(g.Spans)) // 0 unseen, 1 on current walk, 2 done
	var path []*Span
	for _, s := range g.Spans {
		path = path[:0]
		for cur := s; cur != nil && state[cur] == 0; cur = cur.parent {
			g.work++
			state[cur] = 1
			path = append(path, cur)
			if cur.parent != nil && state[cur.parent] == 1 {
				cur.parent = nil
				g.BrokenLinks++
				break
			}
		}
		for _, p := range path {
			state[p] = 2
		}
	}
	var tops []*Span
	for _, s := range g.Spans {
		g.work++
		if s.parent != nil {
			s.parent.children = append(s.parent.children, s)
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
	stack := make([]*Span, 0, len(tops))
	for i := len(tops) - 1; i >= 0; i-- {
		stack = append(stack, tops[i])
	}
	for len(stack) > 0 {
		s := stack[len(stack)-1]
		stack = stack[:len(stack)-1]
		g.work++
		g.preorder = append(g.preorder, s)
		for i := len(s.children) - 1; i >= 0; i-- {
			stack = append(stack, s.children[i])
		}
	}
}

// assignOwners creates an Invocation per agent span (in start order) and walks the span
// forest top-down in preorder, giving every span its nearest agent ancestor and the
// nearest tool span between them.
func (g *Graph) assignOwners() {
	invs := make(map[*Span]*Invocation)
	g.invocationOf = invs
	for _, s := range g.Spans {
		if s.Role == RoleAgent {
			inv := &Invocation{Index: len(g.Invocations), Span: s, Name: s.Name.Text}
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

// collect gathers each invocation's tools, LLM calls, content and allowed tools.
func (g *Graph) collect(chains Chains) {
	for _, s := range g.Spans {
		inv := s.owner
		if inv == nil {
			continue
		}
		switch s.Role {
		case RoleTool:
			tc := &ToolCall{
				Span: s, Name: s.Name.Text,
				Args:   resolve(s.Span, chains.ToolArgs, nil),
				Result: resolve(s.Span, chains.ToolResult, nil),
			}
			inv.ToolCalls = append(inv.ToolCalls, tc)
			s.call = tc
		case RoleLLM:
			inv.llms = append(inv.llms, s)
		}
	}
	for _, inv := range g.Invocations {
		var first, last *Span
		if len(inv.llms) > 0 {
			first, last = inv.llms[0], inv.llms[len(inv.llms)-1]
		}
		inv.Input = resolve(inv.Span.Span, chains.Input, first)
		inv.Output = resolve(inv.Span.Span, chains.Output, last)
		tools := resolve(inv.Span.Span, chains.AllowedTools, first)
		if tools.Found() {
			inv.AllowedTools = toolNames(tools.Text)
			inv.AllowedFrom = tools.Source
		}
	}
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

// toolNames reads tool names from a list of names or of tool definitions in the OTel
// ({"name": ...}) or OpenAI ({"function": {"name": ...}}) schema.
func toolNames(s string) []string {
	var items []any
	if json.Unmarshal([]byte(s), &items) != nil {
		return nil
	}
	var names []string
	for _, it := range items {
		switch v := it.(type) {
		case string:
			names = append(names, v)
		case map[string]any:
			if n, ok := v["name"].(string); ok {
				names = append(names, n)
			} else if f, ok := v["function"].(map[string]any); ok {
				if n, ok := f["name"].(string); ok {
					names = append(names, n)
				}
			}
		}
	}
	return names
}

// spanError normalizes the error a span carries, if any.
func spanError(s ptrace.Span, chains Chains) *ErrorInfo {
	typ := resolve(s, chains.ErrorType, nil)
	if s.Status().Code() == ptrace.StatusCodeError {
		e := &ErrorInfo{Message: s.Status().Message(), Source: "status"}
		if typ.Found() {
			e.Type = typ.Text
		}
		if e.Message == "" {
			e.Message, _ = lookupPlace(s, "event:exception:exception.message")
		}
		return e
	}
	if typ.Found() {
		msg, _ := lookupPlace(s, "event:exception:exception.message")
		if msg == "" {
			msg = attrStr(s, "error.message")
		}
		return &ErrorInfo{Type: typ.Text, Message: msg, Source: typ.Source}
	}
	if st := attrStr(s, "gen_ai.tool.status"); st == "error" {
		return &ErrorInfo{Source: "gen_ai.tool.status"}
	}
	return nil
}
