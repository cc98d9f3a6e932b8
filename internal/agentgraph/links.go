package agentgraph

import (
	"slices"

	"go.opentelemetry.io/collector/pdata/pcommon"
)

// Span links: an agent that runs in its own trace (an asynchronous handoff through a
// queue, a job started with a link to the dispatching span) is joined to the agent that
// owns the linked span. A link into the same trace is resolved here, from the trace's own
// spans. A link into another trace gets a remote stand-in for the sender, named, in this
// order, by
//   - one of our own HANDOFF spans already in the trace for this receiver (a replay of the
//     processor's output, or the exporter rebuilding a graph the processor made);
//   - a LinkResolver (the processor's cache of agent spans of traces it released), through
//     Graph.ResolveLinks after Build;
//   - the link's attributes (handoff source chain, gen_ai.agent.name, gen_ai.caller.name);
//   - else it stays unresolved, named "trace <linked trace id>".

// AttrSourceResolution says how the sender of a cross-trace HANDOFF span was named (one of
// the Link* resolutions).
const AttrSourceResolution = "handoff.source.resolution"

// How the sender in another trace was named (RemoteRef.Resolution).
const (
	// LinkByHandoffSpan: our HANDOFF span of an earlier pass, present in the trace.
	LinkByHandoffSpan = "handoff_span"
	// LinkBySenderTrace: the resolver had seen the sender's trace and knew the agent run
	// owning the linked span (the processor's link cache of released traces, or another
	// trace of the same file).
	LinkBySenderTrace = "sender_trace"
	// LinkByAttributes: the link's own attributes name the sender.
	LinkByAttributes = "link_attributes"
	// LinkUnresolved: nothing named the sender.
	LinkUnresolved = "unresolved"
)

// LinkTarget is what a resolver knows of a span of another trace: the agent run that owns
// it.
type LinkTarget struct {
	TraceID pcommon.TraceID
	// SpanID is the owning agent run's own span.
	SpanID pcommon.SpanID
	Agent  string
}

// LinkResolver names the agent run that owns a span of another trace.
type LinkResolver interface {
	ResolveLink(traceID pcommon.TraceID, spanID pcommon.SpanID) (LinkTarget, bool)
}

// LinkCounts counts a graph's span-link edges into other traces by resolution.
type LinkCounts struct {
	ByHandoffSpan, BySenderTrace, ByAttributes, Unresolved int
}

// spanLinkEdges joins each top-level agent run without an incoming edge to the sender its
// nearest linked span (itself or a non-agent span above it) points at.
func (g *Graph) spanLinkEdges(chains Chains) {
	keys := append(append(Chain{}, chains.HandoffFrom...), "gen_ai.agent.name", "gen_ai.caller.name")
	var local *localIndex                 // made on the first link into this trace
	var replayed map[pcommon.SpanID]*Span // our cross-trace HANDOFF spans by receiver span id
	// linked[s.pre] is the link decision at or above s, filled along each walk so that
	// every span is walked once (pooled scratch, cleared when handed back).
	heldLinked := linkDecisions.get(len(g.preorder))
	defer linkDecisions.put(heldLinked)
	linked := *heldLinked
	var path []*Span
	for _, inv := range g.Invocations {
		if inv.In != nil || inv.Span.owner != nil {
			continue
		}
		path = path[:0]
		found := linkDecision{link: -1, made: true}
		for s := inv.Span; s != nil; s = s.parent {
			g.work++
			if d := linked[s.pre]; d.made {
				found = d
				break
			}
			path = append(path, s)
			if i := g.usableLink(s, &local); i >= 0 {
				found = linkDecision{at: s, link: i, made: true}
				break
			}
		}
		for _, s := range path {
			linked[s.pre] = found
		}
		if found.at == nil {
			continue
		}
		l := found.at.Pdata.Links().At(found.link)
		if l.TraceID() == g.TraceID {
			g.localLinkEdge(inv, local.byID[l.SpanID()], local)
			continue
		}
		if replayed == nil {
			replayed = g.replayedRemoteHandoffs()
		}
		ref := &RemoteRef{TraceID: l.TraceID(), SpanID: l.SpanID(), LinkedSpanID: l.SpanID(), Resolution: LinkUnresolved}
		name := "trace " + l.TraceID().String()
		var via *Span
		if h := replayed[inv.Span.ID]; h != nil {
			name, ref.Resolution, via = attrStr(h.Pdata, AttrSource), LinkByHandoffSpan, h
			if id, ok := parseSpanID(attrStr(h.Pdata, AttrSourceSpanID)); ok {
				ref.SpanID = id
			}
		} else {
			for _, key := range keys {
				if v, ok := l.Attributes().Get(key); ok && asText(v) != "" {
					name, ref.Resolution = asText(v), LinkByAttributes
					break
				}
			}
		}
		remote := &Invocation{
			Index: -1, Name: name, Remote: ref,
			Span: &Span{ID: ref.SpanID, Role: RoleAgent, Name: Value{Text: name, Source: "span_link"}},
		}
		g.addEdge(&Edge{From: remote, To: inv, Detection: DetectSpanLink, Via: via})
	}
}

// linkDecision is spanLinkEdges' decision for a span: the link at (link) of the span at,
// at or above it (at nil: none); made is false while it is not decided.
type linkDecision struct {
	at   *Span
	link int
	made bool
}

// linkDecisions is spanLinkEdges' scratch, by span preorder number.
var linkDecisions scratch[linkDecision]

// usableLink is the index of s's first link that can name a sender: one into another
// trace, or one to a span of this trace that an agent run owns. -1: none.
func (g *Graph) usableLink(s *Span, local **localIndex) int {
	links := s.Pdata.Links()
	for i := 0; i < links.Len(); i++ {
		l := links.At(i)
		switch {
		case l.TraceID().IsEmpty() || l.SpanID().IsEmpty():
		case l.TraceID() != g.TraceID:
			return i
		default:
			if *local == nil {
				*local = g.newLocalIndex()
			}
			if t := (*local).byID[l.SpanID()]; t != nil && t != s && g.ownerRun(t) != nil {
				return i
			}
		}
	}
	return -1
}

// ownerRun is the agent run a span belongs to: its own when it is an agent span, else
// its nearest agent ancestor's.
func (g *Graph) ownerRun(s *Span) *Invocation {
	if s.Role == RoleAgent { // only agent spans have runs (their roles are final by then)
		if inv := g.invocationOf[s]; inv != nil {
			return inv
		}
	}
	return s.owner
}

// localIndex finds the spans of the trace by id, and tells in constant time whether a
// span is below another: the span forest's preorder (Span.pre) numbers each subtree as an
// interval, which ends at end[s.pre].
type localIndex struct {
	byID map[pcommon.SpanID]*Span
	end  []int32
}

func (g *Graph) newLocalIndex() *localIndex {
	x := &localIndex{byID: make(map[pcommon.SpanID]*Span, len(g.Spans)), end: make([]int32, len(g.preorder))}
	for _, s := range g.Spans {
		x.byID[s.ID] = s
	}
	for i := range x.end {
		g.work++
		x.end[i] = int32(i + 1)
	}
	// Backwards, children before parents: a parent's interval ends where its last
	// descendant's does.
	for i := len(g.preorder) - 1; i >= 0; i-- {
		if s := g.preorder[i]; s.parent != nil {
			x.end[s.parent.pre] = max(x.end[s.parent.pre], x.end[i])
		}
	}
	return x
}

// below reports whether s is top or under it.
func (x *localIndex) below(s, top *Span) bool {
	return top.pre <= s.pre && s.pre < x.end[top.pre]
}

// localLinkEdge adds the edge from the run owning the linked span to inv, unless that run
// is inv or runs inside it (a link back into its own work hands nothing off).
func (g *Graph) localLinkEdge(inv *Invocation, target *Span, x *localIndex) {
	g.work++
	sender := g.ownerRun(target)
	if x.below(sender.Span, inv.Span) {
		return
	}
	e := &Edge{From: sender, To: inv, Detection: DetectSpanLink}
	// The dispatch trigger: the sender's tool call that is (or holds) the linked span.
	tool := target
	if tool.call == nil {
		tool = target.viaTool
	}
	if tool != nil && tool.call != nil && tool.owner == sender {
		e.Reason = tool.call.Args
	}
	g.addEdge(e)
}

// replayedRemoteHandoffs indexes our own HANDOFF spans of cross-trace edges by the
// receiver span they name.
func (g *Graph) replayedRemoteHandoffs() map[pcommon.SpanID]*Span {
	out := map[pcommon.SpanID]*Span{}
	for _, s := range g.Spans {
		g.work++
		if !isReplayedRemoteHandoff(s) || attrStr(s.Pdata, AttrSource) == "" {
			continue
		}
		if id, ok := parseSpanID(attrStr(s.Pdata, AttrTargetSpanID)); ok {
			out[id] = s
		}
	}
	return out
}

// isReplayedRemoteHandoff: one of our HANDOFF spans whose sender ran in another trace.
func isReplayedRemoteHandoff(s *Span) bool {
	return s.Role == RoleHandoff && s.RoleSource == "scope" && attrStr(s.Pdata, AttrSourceTraceID) != ""
}

// parseSpanID reads a span id written as 16 hex digits.
func parseSpanID(s string) (pcommon.SpanID, bool) {
	var id pcommon.SpanID
	if len(s) != 2*len(id) {
		return id, false
	}
	for i := range id {
		hi, ok1 := unhex(s[2*i])
		lo, ok2 := unhex(s[2*i+1])
		if !ok1 || !ok2 {
			return pcommon.SpanID{}, false
		}
		id[i] = hi<<4 | lo
	}
	return id, !id.IsEmpty()
}

func unhex(c byte) (byte, bool) {
	switch {
	case c >= '0' && c <= '9':
		return c - '0', true
	case c >= 'a' && c <= 'f':
		return c - 'a' + 10, true
	case c >= 'A' && c <= 'F':
		return c - 'A' + 10, true
	}
	return 0, false
}

// ResolveLinks names the senders in other traces that the resolver knows, overriding the
// link's attributes (the resolver saw the sender's spans) but not a HANDOFF span already
// in the trace. It returns the counts by resolution after resolving. A nil resolver only
// counts.
func (g *Graph) ResolveLinks(r LinkResolver) LinkCounts {
	var c LinkCounts
	renamed := false
	for _, e := range g.Edges {
		ref := e.From.Remote
		if ref == nil {
			continue
		}
		if r != nil && ref.Resolution != LinkByHandoffSpan && ref.Resolution != LinkBySenderTrace {
			if t, ok := r.ResolveLink(ref.TraceID, ref.LinkedSpanID); ok && t.Agent != "" {
				ref.SpanID, ref.Resolution = t.SpanID, LinkBySenderTrace
				e.From.Name = t.Agent
				e.From.Span.ID = t.SpanID
				e.From.Span.Name = Value{Text: t.Agent, Source: "span_link"}
				renamed = true
			}
		}
		switch ref.Resolution {
		case LinkByHandoffSpan:
			c.ByHandoffSpan++
		case LinkBySenderTrace:
			c.BySenderTrace++
		case LinkByAttributes:
			c.ByAttributes++
		default:
			c.Unresolved++
		}
	}
	if renamed {
		var work int
		g.Cycles, work = nameCycles(g.Edges)
		g.work += work
	}
	return c
}

// LinkTargets calls fn once per agent run of g with what a resolver should remember of
// it, and the ids of the spans a link from another trace may point at: the run's own
// span and every span it owns except LLM calls (and HANDOFF spans). A run that owns no
// such span but its own is reported with its span alone. The spans are in g.Spans order;
// fn must not keep the slice.
func (g *Graph) LinkTargets(fn func(t LinkTarget, spans []pcommon.SpanID)) {
	var ls LinkSpans
	g.CollectLinkTargets(&ls)
	for i := range ls.Len() {
		fn(ls.At(i))
	}
}

// LinkSpans is what Graph.CollectLinkTargets gathers of one graph: per agent run, in
// g.Invocations order, the run and the ids of the spans a link from another trace may
// point at (as LinkTargets reports them). Reused from graph to graph, it allocates only to
// grow.
type LinkSpans struct {
	runs  []LinkTarget
	spans []pcommon.SpanID
	ends  []int32 // the spans of the run of index r are spans[ends[r-1]:ends[r]], from 0 for r 0
	// Scratch: each link target's run and id in g.Spans order.
	pairs []runSpan
}

type runSpan struct {
	run int32
	id  pcommon.SpanID
}

// Len is the number of agent runs collected.
func (ls *LinkSpans) Len() int { return len(ls.runs) }

// At is run i and the ids of its spans a link may point at (valid until the next
// CollectLinkTargets).
func (ls *LinkSpans) At(i int) (LinkTarget, []pcommon.SpanID) {
	var from int32
	if i > 0 {
		from = ls.ends[i-1]
	}
	return ls.runs[i], ls.spans[from:ls.ends[i]]
}

// CollectLinkTargets gathers into ls what LinkTargets reports, replacing what ls held: the
// spans grouped by run in one pass and a counting sort.
func (g *Graph) CollectLinkTargets(ls *LinkSpans) {
	ls.runs, ls.spans, ls.ends, ls.pairs = ls.runs[:0], ls.spans[:0], ls.ends[:0], ls.pairs[:0]
	n := len(g.Invocations)
	if n == 0 {
		return
	}
	ls.ends = slices.Grow(ls.ends, n)[:n]
	clear(ls.ends)
	for _, s := range g.Spans {
		g.work++
		if s.Role == RoleLLM || s.Role == RoleHandoff {
			continue
		}
		if inv := g.ownerRun(s); inv != nil && inv.Remote == nil {
			ls.pairs = append(ls.pairs, runSpan{run: int32(inv.Index), id: s.ID})
			ls.ends[inv.Index]++
		}
	}
	// Counts to ends, then each pair to its run's part, in order.
	var sum int32
	for i, c := range ls.ends {
		sum += c
		ls.ends[i] = sum
	}
	ls.spans = slices.Grow(ls.spans, len(ls.pairs))[:len(ls.pairs)]
	for i := len(ls.pairs) - 1; i >= 0; i-- {
		p := ls.pairs[i]
		ls.ends[p.run]--
		ls.spans[ls.ends[p.run]] = p.id
	}
	// ends now hold each run's start: shift to ends.
	copy(ls.ends, ls.ends[1:])
	ls.ends[n-1] = sum
	for _, inv := range g.Invocations {
		ls.runs = append(ls.runs, LinkTarget{TraceID: g.TraceID, SpanID: inv.Span.ID, Agent: inv.Name})
	}
}

// graphsResolver resolves links among a set of graphs (the traces of one file).
type graphsResolver map[pcommon.TraceID]map[pcommon.SpanID]LinkTarget

func (r graphsResolver) ResolveLink(traceID pcommon.TraceID, spanID pcommon.SpanID) (LinkTarget, bool) {
	t, ok := r[traceID][spanID]
	return t, ok
}

// ResolveLinksAmong resolves the span links between the given graphs (say, every trace of
// one span file): a receiver whose sender's trace is among them is named by that sender.
func ResolveLinksAmong(graphs []*Graph) {
	var r graphsResolver
	for _, g := range graphs {
		for _, e := range g.Edges {
			if e.From.Remote != nil {
				if r == nil {
					r = graphsResolver{}
				}
				r[e.From.Remote.TraceID] = nil
			}
		}
	}
	if r == nil {
		return // no link into another trace: nothing to index
	}
	for _, g := range graphs {
		if _, wanted := r[g.TraceID]; !wanted {
			continue
		}
		m := map[pcommon.SpanID]LinkTarget{}
		g.LinkTargets(func(t LinkTarget, spans []pcommon.SpanID) {
			for _, id := range spans {
				m[id] = t
			}
		})
		r[g.TraceID] = m
	}
	for _, g := range graphs {
		g.ResolveLinks(r)
	}
}

// RoleSourceRemoteAgentClient marks a caller-side agent span of a remote agent (a stub).
const RoleSourceRemoteAgentClient = "remote_agent_client"

// remoteAgentStubs: a remote agent called over the network shows up twice in one trace,
// as the caller's client-side `invoke_agent X` span (the OTel GenAI remote-agent client
// span, Google ADK's RemoteA2aAgent) and as X's own run in the callee's service below it.
// They are one run: the caller-side span, which does no model call of its own, stops
// being an agent, so the callee's run nests under the real sender instead of handing off
// to itself. It needs the two spans in different services (service.name) with no agent
// span between them.
func (g *Graph) remoteAgentStubs() {
	// nearest[s.pre]: the nearest agent span strictly above s; ownLLM[a.pre]: an LLM span
	// sits below agent span a with no agent span between.
	// Both are pooled scratch, cleared when handed back.
	heldNearest, heldOwnLLM := spanMarks.get(len(g.preorder)), spanFlags.get(len(g.preorder))
	defer spanMarks.put(heldNearest)
	defer spanFlags.put(heldOwnLLM)
	nearest, ownLLM := *heldNearest, *heldOwnLLM
	var stubs []*Span
	for _, s := range g.preorder {
		g.work++
		p := s.parent
		if p == nil {
			continue
		}
		up := nearest[p.pre]
		if p.Role == RoleAgent {
			up = p
		}
		if up == nil {
			continue
		}
		nearest[s.pre] = up
		switch s.Role {
		case RoleLLM:
			ownLLM[up.pre] = true
		case RoleAgent:
			if up.Name.Text == s.Name.Text && serviceName(up) != serviceName(s) && serviceName(s) != "" {
				stubs = append(stubs, up)
			}
		}
	}
	for _, a := range stubs {
		if !ownLLM[a.pre] {
			a.Role, a.RoleSource = RoleOther, RoleSourceRemoteAgentClient
		}
	}
}

func serviceName(s *Span) string {
	if s.Resource == (pcommon.Resource{}) {
		return ""
	}
	if v, ok := s.Resource.Attributes().Get("service.name"); ok {
		return v.AsString()
	}
	return ""
}
