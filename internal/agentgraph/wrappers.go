package agentgraph

// Orchestration wrappers: spans that group agent runs but never delegate themselves — a
// Strands swarm or graph (invoke_swarm / invoke_graph) and its per-node execute_node spans,
// an OTel invoke_workflow span, a LangGraph graph (an OpenInference CHAIN span around its
// node agents). Their role is workflow: they are not invocations, so no edge starts or ends
// at them, they are never the root agent and never count in depth. The model keeps them as
// groups of the invocations they contain, so reports can draw them.

// Wrapper kinds.
const (
	WrapperSwarm    = "swarm"    // Strands invoke_swarm
	WrapperGraph    = "graph"    // Strands invoke_graph
	WrapperNode     = "node"     // a swarm's or graph's execute_node span around one agent
	WrapperWorkflow = "workflow" // OTel invoke_workflow, LangGraph graphs and other chains
)

// Wrapper is one orchestration wrapper span that groups agent runs.
type Wrapper struct {
	Span *Span
	Kind string
	// Name is the swarm's or graph's id, the node's agent, the workflow's name, else the
	// span name.
	Name Value
	// Parent is the wrapper this one sits in (nil: none).
	Parent *Wrapper
	// Members are the invocations directly in this wrapper (no agent span and no other
	// wrapper in between), in start order; nested wrappers hold theirs.
	Members []*Invocation
	// Children are the wrappers directly in this one, in start order.
	Children []*Wrapper
}

// wrapperKind names the kind of a workflow span.
func wrapperKind(s *Span) string {
	switch attrStr(s.Pdata, "gen_ai.operation.name") {
	case "invoke_swarm":
		return WrapperSwarm
	case "invoke_graph":
		return WrapperGraph
	case "execute_node":
		return WrapperNode
	}
	return WrapperWorkflow
}

// collectWrappers gives every span its nearest wrapper (a workflow span above it with no
// agent span in between) in one preorder pass, then records the wrappers that hold at
// least one invocation, directly or through nested wrappers. Linear in spans.
func (g *Graph) collectWrappers() {
	for _, s := range g.preorder {
		g.work++
		p := s.parent
		switch {
		case p == nil || p.Role == RoleAgent:
			s.group = nil
		case p.Role == RoleWorkflow:
			s.group = p
		default:
			s.group = p.group
		}
	}
	byspan := map[*Span]*Wrapper{}
	// wrapperOf records w's span (and, up its chain, every wrapper around it that is not
	// recorded yet) and returns its Wrapper.
	wrapperOf := func(w *Span) *Wrapper {
		var chain []*Span
		for cur := w; cur != nil; cur = cur.group {
			g.work++
			if _, ok := byspan[cur]; ok {
				break
			}
			chain = append(chain, cur)
		}
		for i := len(chain) - 1; i >= 0; i-- {
			s := chain[i]
			wr := &Wrapper{Span: s, Kind: wrapperKind(s), Name: wrapperName(s.Pdata)}
			if s.group != nil {
				wr.Parent = byspan[s.group]
			}
			byspan[s] = wr
		}
		return byspan[w]
	}
	for _, s := range g.Spans {
		if s.Role != RoleAgent || s.group == nil {
			continue
		}
		w := wrapperOf(s.group)
		w.Members = append(w.Members, g.invocationOf[s])
	}
	if len(byspan) == 0 {
		return
	}
	for _, s := range g.Spans {
		if w, ok := byspan[s]; ok {
			g.Wrappers = append(g.Wrappers, w)
			if w.Parent != nil {
				w.Parent.Children = append(w.Parent.Children, w)
			}
		}
	}
}

// inSwarm reports whether inv runs inside a swarm wrapper (through its node wrapper).
func inSwarm(inv *Invocation) bool {
	for s := inv.Span.group; s != nil; s = s.group {
		if wrapperKind(s) == WrapperSwarm {
			return true
		}
	}
	return false
}
