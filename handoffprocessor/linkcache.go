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
// to resolve.
//
// The spans sit in a ring of slots in the order they were remembered, each slot chained to
// the next one of its trace; a map finds a trace's chain. Remembering a trace is one map
// operation and a slot written per span (no map operation per span), and forgetting the
// oldest span unlinks it from its chain's head. Nothing the cache holds per span or per
// trace is a pointer, so the garbage collector never scans it: a slot names its agent by
// an index into names, where each distinct name is kept once while a slot uses it.
type linkCache struct {
	mu   sync.Mutex
	ring []linkSlot // in the order remembered; every slot is live
	next int        // the oldest slot, once the ring is full
	// traces finds each trace's entry in entries; free lists entries for reuse.
	traces  map[pcommon.TraceID]uint32
	entries []traceEntry
	free    []uint32
	// version stamps every change of a trace's chain (traceEntry.version), so that the
	// span index of a long trace, built for lookups, is known to be current.
	version uint64
	// index maps the span ids of one long trace (entry indexed, at version indexedAt) to
	// their slots.
	index     map[pcommon.SpanID]uint32
	indexed   uint32
	indexedAt uint64
	// names interns the agent names the slots use.
	names agentNames
	// Scratch of remember, reused from trace to trace: the graph's link targets, and the
	// slots of a trace remembered again.
	targets agentgraph.LinkSpans
	held    map[pcommon.SpanID]uint32
}

// indexAfter is the chain length from which a lookup indexes the trace's spans instead of
// walking the chain.
const indexAfter = 32

// noSlot ends a chain.
const noSlot = ^uint32(0)

// linkSlot is one remembered span: the owning run's agent span, the run's agent name, its
// trace's entry and the next slot of that trace.
type linkSlot struct {
	span   pcommon.SpanID
	sender pcommon.SpanID
	agent  uint32 // index into names
	trace  uint32 // index into entries
	after  uint32 // the trace's next slot in the order remembered (noSlot: none)
}

// traceEntry is the chain of one trace's slots, oldest first.
type traceEntry struct {
	id         pcommon.TraceID
	head, tail uint32
	n          uint32
	version    uint64
}

// newLinkCache returns a cache of size spans, or nil (no cache) for size 0. The maps grow
// as entries come: an idle processor does not hold a full cache's worth of memory.
func newLinkCache(size int) *linkCache {
	if size <= 0 {
		return nil
	}
	return &linkCache{
		ring:   make([]linkSlot, 0, size),
		traces: map[pcommon.TraceID]uint32{},
		names:  agentNames{ids: map[string]uint32{}},
	}
}

// remember records the agent runs of a released trace's graph. A trace remembered before
// (released again) keeps its spans still held in their slots, with the newest runs. Build
// keeps one span per id, so the graph names each span once.
func (c *linkCache) remember(g *agentgraph.Graph) {
	if c == nil {
		return
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	g.CollectLinkTargets(&c.targets)
	if c.targets.Len() == 0 {
		return
	}
	e, known := c.traces[g.TraceID]
	var held map[pcommon.SpanID]uint32 // the trace's slots, when it was remembered before
	if known {
		if c.held == nil {
			c.held = map[pcommon.SpanID]uint32{}
		}
		held = c.held
		c.indexChain(held, e)
	} else {
		e = c.newEntry(g.TraceID)
	}
	for i := range c.targets.Len() {
		t, spans := c.targets.At(i)
		if len(spans) == 0 {
			continue
		}
		agent := c.names.intern(t.Agent)
		for _, id := range spans {
			// The new slot's name is counted before an old one is let go: they may be the
			// same.
			c.names.ref(agent)
			if at, ok := held[id]; ok {
				sl := &c.ring[at]
				c.names.unref(sl.agent)
				sl.sender, sl.agent = t.SpanID, agent
				continue
			}
			c.add(e, linkSlot{span: id, sender: t.SpanID, agent: agent, trace: e, after: noSlot}, held)
		}
	}
	if c.entries[e].n == 0 {
		c.dropEntry(e) // a new entry that got no span (no run had spans of its own)
	}
}

// newEntry adds an empty chain for trace id.
func (c *linkCache) newEntry(id pcommon.TraceID) uint32 {
	e := reuse(&c.entries, &c.free, traceEntry{id: id, head: noSlot, tail: noSlot})
	c.traces[id] = e
	return e
}

func (c *linkCache) dropEntry(e uint32) {
	delete(c.traces, c.entries[e].id)
	c.entries[e] = traceEntry{}
	c.free = append(c.free, e)
}

// add puts sl in a slot, the oldest span's once the ring is full, at the end of trace e's
// chain. held, when set, forgets a slot of e that is reused.
func (c *linkCache) add(e uint32, sl linkSlot, held map[pcommon.SpanID]uint32) {
	var at uint32
	if len(c.ring) < cap(c.ring) {
		at = uint32(len(c.ring))
		c.ring = append(c.ring, sl)
	} else {
		at = uint32(c.next)
		c.next = (c.next + 1) % len(c.ring)
		old := c.ring[at]
		c.names.unref(old.agent)
		// The oldest slot of all is the oldest of its trace: its chain's head.
		te := &c.entries[old.trace]
		te.head = old.after
		te.n--
		c.version++
		te.version = c.version
		if te.n == 0 {
			te.tail = noSlot
			if old.trace != e {
				c.dropEntry(old.trace)
			}
		}
		if old.trace == e {
			delete(held, old.span)
		}
		c.ring[at] = sl
	}
	te := &c.entries[e]
	if te.n == 0 {
		te.head = at
	} else {
		c.ring[te.tail].after = at
	}
	te.tail = at
	te.n++
	c.version++
	te.version = c.version
}

// ResolveLink implements agentgraph.LinkResolver.
func (c *linkCache) ResolveLink(traceID pcommon.TraceID, spanID pcommon.SpanID) (agentgraph.LinkTarget, bool) {
	c.mu.Lock()
	defer c.mu.Unlock()
	e, ok := c.traces[traceID]
	if !ok {
		return agentgraph.LinkTarget{}, false
	}
	at, ok := c.find(e, spanID)
	if !ok {
		return agentgraph.LinkTarget{}, false
	}
	sl := c.ring[at]
	return agentgraph.LinkTarget{TraceID: traceID, SpanID: sl.sender, Agent: c.names.names[sl.agent]}, true
}

// find is the slot of span id in trace e's chain: walked when the chain is short, else
// through an index of the chain, kept while the chain does not change (the links of one
// receiver mostly point into one sender's trace).
func (c *linkCache) find(e uint32, id pcommon.SpanID) (uint32, bool) {
	te := &c.entries[e]
	if te.n <= indexAfter {
		for i := te.head; i != noSlot; i = c.ring[i].after {
			if c.ring[i].span == id {
				return i, true
			}
		}
		return 0, false
	}
	if c.index == nil || c.indexed != e || c.indexedAt != te.version {
		if c.index == nil {
			c.index = map[pcommon.SpanID]uint32{}
		}
		c.indexChain(c.index, e)
		c.indexed, c.indexedAt = e, te.version
	}
	at, ok := c.index[id]
	return at, ok
}

// indexChain fills m with the slot of each span of entry e's chain (and nothing else).
func (c *linkCache) indexChain(m map[pcommon.SpanID]uint32, e uint32) {
	clear(m)
	for i := c.entries[e].head; i != noSlot; i = c.ring[i].after {
		m[c.ring[i].span] = i
	}
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
	id := reuse(&n.names, &n.free, name)
	if int(id) == len(n.refs) {
		n.refs = append(n.refs, 0) // a forgotten name's count is 0 already
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
	return len(c.ring)
}

// resolver is the cache as a LinkResolver: nil (not a typed nil) when there is none.
func (c *linkCache) resolver() agentgraph.LinkResolver {
	if c == nil {
		return nil
	}
	return c
}

// reuse puts v at the index last freed in free, or appends it, and returns its index.
func reuse[T any](items *[]T, free *[]uint32, v T) uint32 {
	if k := len(*free); k > 0 {
		i := (*free)[k-1]
		*free = (*free)[:k-1]
		(*items)[i] = v
		return i
	}
	*items = append(*items, v)
	return uint32(len(*items) - 1)
}
