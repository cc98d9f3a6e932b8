package handoffprocessor

import (
	"strings"
	"sync"

	"go.opentelemetry.io/collector/pdata/pcommon"

	"github.com/otelcol-handoff/otelcol-handoff/internal/agentgraph"
)

// linkCache remembers, for traces already released, which agent run owns each span a span
// link from a later trace may point at (the run's own span and every non-LLM span it owns):
// an asynchronous receiver's trace is then joined to its sender even when the sender's
// trace left the processor before. It holds at most link_cache_size spans; the oldest are
// forgotten first (FIFO over release order). The release workers and ConsumeTraces callers
// share it under one lock, taken once per released trace to remember it and once per link
// to resolve: short map operations next to building the trace's DAG.
//
// The map and the ring hold no pointers, so the garbage collector never scans them: the map
// points at ring slots, and a slot names its agent by an index into names, where each
// distinct name is kept once for as long as a slot uses it.
type linkCache struct {
	mu   sync.Mutex
	ring []linkSlot // in insertion order, each key once
	next int        // the oldest slot, once the ring is full
	m    map[linkKey]uint32
	// names interns the agent names the slots use.
	names agentNames
	// targets is remember's buffer, reused from trace to trace.
	targets agentgraph.LinkSpans
}

type linkKey struct {
	trace pcommon.TraceID
	span  pcommon.SpanID
}

// linkSlot is one remembered span: the owning run's agent span and the run's agent name.
type linkSlot struct {
	key    linkKey
	sender pcommon.SpanID
	agent  uint32 // index into names
}

// newLinkCache returns a cache of size spans, or nil (no cache) for size 0. The map grows
// as entries come: an idle processor does not hold a full cache's worth of memory.
func newLinkCache(size int) *linkCache {
	if size <= 0 {
		return nil
	}
	return &linkCache{ring: make([]linkSlot, 0, size), m: make(map[linkKey]uint32), names: agentNames{ids: map[string]uint32{}}}
}

// remember records the agent runs of a released trace's graph.
func (c *linkCache) remember(g *agentgraph.Graph) {
	if c == nil {
		return
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	g.CollectLinkTargets(&c.targets)
	for i := range c.targets.Len() {
		t, spans := c.targets.At(i)
		if len(spans) == 0 {
			continue
		}
		agent := c.names.intern(t.Agent)
		for _, id := range spans {
			c.put(linkKey{trace: t.TraceID, span: id}, t.SpanID, agent)
		}
	}
}

func (c *linkCache) put(k linkKey, sender pcommon.SpanID, agent uint32) {
	// The new slot's name is counted before the old one is let go: they may be the same.
	c.names.ref(agent)
	if i, ok := c.m[k]; ok {
		// The same trace released again: keep the newest, in its old slot.
		s := &c.ring[i]
		c.names.unref(s.agent)
		s.sender, s.agent = sender, agent
		return
	}
	if len(c.ring) < cap(c.ring) {
		c.m[k] = uint32(len(c.ring))
		c.ring = append(c.ring, linkSlot{key: k, sender: sender, agent: agent})
		return
	}
	s := &c.ring[c.next]
	delete(c.m, s.key)
	c.names.unref(s.agent)
	*s = linkSlot{key: k, sender: sender, agent: agent}
	c.m[k] = uint32(c.next)
	c.next = (c.next + 1) % len(c.ring)
}

// ResolveLink implements agentgraph.LinkResolver.
func (c *linkCache) ResolveLink(traceID pcommon.TraceID, spanID pcommon.SpanID) (agentgraph.LinkTarget, bool) {
	c.mu.Lock()
	defer c.mu.Unlock()
	i, ok := c.m[linkKey{trace: traceID, span: spanID}]
	if !ok {
		return agentgraph.LinkTarget{}, false
	}
	s := c.ring[i]
	return agentgraph.LinkTarget{TraceID: traceID, SpanID: s.sender, Agent: c.names.names[s.agent]}, true
}

// agentNames interns agent names: each distinct name is stored once, detached from the
// pdata of the trace it came from, and forgotten when no slot uses it any more.
type agentNames struct {
	ids   map[string]uint32
	names []string
	refs  []uint32 // slots using each name
	free  []uint32 // indexes of forgotten names, for reuse
}

// intern returns name's index; a new name is counted by no slot until ref.
func (n *agentNames) intern(name string) uint32 {
	if id, ok := n.ids[name]; ok {
		return id
	}
	name = strings.Clone(name)
	var id uint32
	if k := len(n.free); k > 0 {
		id, n.free = n.free[k-1], n.free[:k-1]
		n.names[id] = name
	} else {
		id = uint32(len(n.names))
		n.names = append(n.names, name)
		n.refs = append(n.refs, 0)
	}
	n.ids[name] = id
	return id
}

func (n *agentNames) ref(id uint32) { n.refs[id]++ }

// unref lets a slot's use of a name go, forgetting the name with its last use.
func (n *agentNames) unref(id uint32) {
	if n.refs[id]--; n.refs[id] > 0 {
		return
	}
	delete(n.ids, n.names[id])
	n.names[id] = ""
	n.free = append(n.free, id)
}

// len is the number of spans remembered.
func (c *linkCache) len() int {
	if c == nil {
		return 0
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	return len(c.m)
}

// resolver is the cache as a LinkResolver: nil (not a typed nil) when there is none.
func (c *linkCache) resolver() agentgraph.LinkResolver {
	if c == nil {
		return nil
	}
	return c
}
