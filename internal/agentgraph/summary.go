package agentgraph

// Summary is a stable, JSON-friendly view of a Graph: what golden files, reports and
// debugging output show.
type Summary struct {
	TraceID     string         `json:"trace_id"`
	Spans       int            `json:"spans"`
	Orphans     int            `json:"orphans,omitempty"`
	Duplicates  int            `json:"duplicates,omitempty"`
	BrokenLinks int            `json:"broken_links,omitempty"`
	Root        string         `json:"root,omitempty"`
	Depth       int            `json:"depth"`
	Cycles      [][]string     `json:"cycles,omitempty"`
	Agents      []AgentSummary `json:"agents"`
	Edges       []EdgeSummary  `json:"edges"`
	Unresolved  []string       `json:"unresolved_transfers,omitempty"`
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
	Error        *ErrorInfo    `json:"error,omitempty"`
	Self         Rollup        `json:"self"`
	Subtree      Rollup        `json:"subtree"`
}

// ToolSummary describes one tool call.
type ToolSummary struct {
	Name       string `json:"name"`
	Args       string `json:"args,omitempty"`
	ArgsSource string `json:"args_source"`
	Error      bool   `json:"error,omitempty"`
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
	for _, inv := range g.Invocations {
		a := AgentSummary{
			Index: inv.Index, Name: inv.Name, NameSource: inv.Span.Name.Source,
			SpanID: inv.Span.ID.String(), AllowedTools: inv.AllowedTools, Error: inv.Span.Error,
			Input:  ContentInfo{Source: inv.Input.Source, Bytes: len(inv.Input.Text)},
			Output: ContentInfo{Source: inv.Output.Source, Bytes: len(inv.Output.Text)},
			Self:   inv.Self, Subtree: inv.Subtree,
		}
		for _, tc := range inv.ToolCalls {
			a.Tools = append(a.Tools, ToolSummary{
				Name: tc.Name, Args: tc.Args.Text,
				ArgsSource: tc.Args.Source, Error: tc.Span.Error != nil,
			})
		}
		s.Agents = append(s.Agents, a)
	}
	for _, e := range g.Edges {
		es := EdgeSummary{
			From: e.From.Name, To: e.To.Name, FromIndex: e.From.Index,
			ToIndex: e.To.Index, Detection: e.Detection,
		}
		if e.Via != nil {
			es.Via = e.Via.Span.Name()
		}
		s.Edges = append(s.Edges, es)
	}
	for _, tc := range g.Unresolved {
		s.Unresolved = append(s.Unresolved, tc.Name+" "+tc.Args.Text)
	}
	return s
}
