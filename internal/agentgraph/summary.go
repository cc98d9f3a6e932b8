package agentgraph

import "math"

// Summary is a stable, JSON-friendly view of a Graph: what golden files, reports and
// debugging output show.
type Summary struct {
	TraceID     string `json:"trace_id"`
	Spans       int    `json:"spans"`
	Orphans     int    `json:"orphans,omitempty"`
	Duplicates  int    `json:"duplicates,omitempty"`
	BrokenLinks int    `json:"broken_links,omitempty"`
	Root        string `json:"root,omitempty"`
	// RootRuns lists the indices of the root agent's top-level runs when it ran more than once.
	RootRuns   []int            `json:"root_runs,omitempty"`
	Wrappers   []WrapperSummary `json:"wrappers,omitempty"`
	Depth      int              `json:"depth"`
	Cycles     [][]string       `json:"cycles,omitempty"`
	Agents     []AgentSummary   `json:"agents"`
	Edges      []EdgeSummary    `json:"edges"`
	Unresolved []string         `json:"unresolved_transfers,omitempty"`
}

// AgentSummary describes one invocation.
type AgentSummary struct {
	Index        int           `json:"index"`
	Name         string        `json:"name"`
	NameSource   string        `json:"name_source"`
	SpanID       string        `json:"span_id"`
	Input        ContentInfo   `json:"input"`
	Output       ContentInfo   `json:"output"`
	AllowedTools []string      `json:"allowed_tools,omitempty"`
	Tools        []ToolSummary `json:"tools,omitempty"`
	// Delegations are the calls that handed work to another agent (not in Tools).
	Delegations []ToolSummary `json:"delegation_calls,omitempty"`
	Error       *ErrorInfo    `json:"error,omitempty"`
	Self        Rollup        `json:"self"`
	Subtree     Rollup        `json:"subtree"`
}

// ToolSummary describes one tool call.
type ToolSummary struct {
	Name       string `json:"name"`
	Args       string `json:"args,omitempty"`
	ArgsSource string `json:"args_source"`
	Error      bool   `json:"error,omitempty"`
	// Delegation and Targets are set on delegation calls.
	Delegation string   `json:"delegation,omitempty"`
	Targets    []string `json:"targets,omitempty"`
}

// WrapperSummary describes one orchestration wrapper: its kind, name and the indices of
// the invocations directly in it.
type WrapperSummary struct {
	Kind    string `json:"kind"`
	Name    string `json:"name"`
	SpanID  string `json:"span_id"`
	Parent  string `json:"parent_span_id,omitempty"`
	Members []int  `json:"members,omitempty"`
}

// ContentInfo says where content came from and how long it is (not the content itself).
type ContentInfo struct {
	Source string `json:"source"`
	Bytes  int    `json:"bytes,omitempty"`
}

// EdgeSummary describes one handoff.
type EdgeSummary struct {
	From      string `json:"from"`
	To        string `json:"to"`
	FromIndex int    `json:"from_index"`
	ToIndex   int    `json:"to_index"`
	Detection string `json:"detection"`
	Inferred  bool   `json:"inferred,omitempty"`
	Via       string `json:"via,omitempty"`
	// SaidSource is where the text the sender said with the dispatch came from.
	SaidSource string `json:"said_source,omitempty"`
	Mode       string `json:"mode,omitempty"`
}

// Summarize returns the Summary of g.
func (g *Graph) Summarize() Summary {
	s := Summary{
		TraceID: g.TraceID.String(), Spans: len(g.Spans), Orphans: g.Orphans,
		Duplicates: g.Duplicates, BrokenLinks: g.BrokenLinks, Depth: g.Depth, Cycles: g.Cycles,
		Agents: []AgentSummary{}, Edges: []EdgeSummary{},
	}
	if g.Root != nil {
		s.Root = g.Root.Name
	}
	if len(g.RootRuns) > 1 {
		for _, inv := range g.RootRuns {
			s.RootRuns = append(s.RootRuns, inv.Index)
		}
	}
	for _, w := range g.Wrappers {
		ws := WrapperSummary{Kind: w.Kind, Name: w.Name.Text, SpanID: w.Span.ID.String()}
		if w.Parent != nil {
			ws.Parent = w.Parent.Span.ID.String()
		}
		for _, m := range w.Members {
			ws.Members = append(ws.Members, m.Index)
		}
		s.Wrappers = append(s.Wrappers, ws)
	}
	for _, inv := range g.Invocations {
		a := AgentSummary{
			Index: inv.Index, Name: inv.Name, NameSource: inv.Span.Name.Source,
			SpanID: inv.Span.ID.String(), AllowedTools: inv.AllowedTools, Error: inv.Span.Error,
			Input:  ContentInfo{Source: inv.Input.Source, Bytes: len(inv.Input.Text)},
			Output: ContentInfo{Source: inv.Output.Source, Bytes: len(inv.Output.Text)},
			Self:   roundedCost(inv.Self), Subtree: roundedCost(inv.Subtree),
		}
		for _, tc := range inv.ToolCalls {
			a.Tools = append(a.Tools, toolSummary(tc))
		}
		for _, tc := range inv.DelegationCalls {
			a.Delegations = append(a.Delegations, toolSummary(tc))
		}
		s.Agents = append(s.Agents, a)
	}
	for _, e := range g.Edges {
		es := EdgeSummary{
			From: e.From.Name, To: e.To.Name, FromIndex: e.From.Index,
			ToIndex: e.To.Index, Detection: e.Detection,
		}
		if e.Via != nil {
			es.Via = e.Via.Pdata.Name()
		}
		if e.Said.Found() {
			es.SaidSource = e.Said.Source
		}
		es.Mode = e.Mode
		s.Edges = append(s.Edges, es)
	}
	for _, tc := range g.Unresolved {
		s.Unresolved = append(s.Unresolved, tc.Name+" "+tc.Args.Text)
	}
	return s
}

// roundedCost rounds the cost to a millionth of a cent, so sums show without float noise.
func roundedCost(r Rollup) Rollup {
	r.CostUSD = math.Round(r.CostUSD*1e8) / 1e8
	return r
}

func toolSummary(tc *ToolCall) ToolSummary {
	return ToolSummary{
		Name: tc.Name, Args: tc.Args.Text, ArgsSource: tc.Args.Source, Error: tc.Span.Error != nil,
		Delegation: tc.Delegation, Targets: tc.Targets,
	}
}
