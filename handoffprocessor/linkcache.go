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
type linkCache struct {
	mu   sync.Mutex
	ring []linkKey // keys in insertion order, each once
	next int       // the oldest slot, once the ring is full
	m    map[linkKey]linkEntry
}

type linkKey struct {
	trace pcommon.TraceID
	span  pcommon.SpanID
}

type linkEntry struct {
	sender pcommon.SpanID // the owning run's agent span
	agent  string
}

// newLinkCache returns a cache of size spans, or nil (no cache) for size 0. The map grows
// as entries come: an idle processor does not hold a full cache's worth of memory.
func newLinkCache(size int) *linkCache {
	if size <= 0 {
		return nil
	}
	return &linkCache{ring: make([]linkKey, 0, size), m: make(map[linkKey]linkEntry)}
}

// remember records the agent runs of a released trace's graph.
func (c *linkCache) remember(g *agentgraph.Graph) {
	if c == nil {
		return
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	g.LinkTargets(func(t agentgraph.LinkTarget, spans []pcommon.SpanID) {
		// One copy of the name per run, detached from the trace's pdata, which leaves.
		e := linkEntry{sender: t.SpanID, agent: strings.Clone(t.Agent)}
		for _, id := range spans {
			c.put(linkKey{trace: t.TraceID, span: id}, e)
		}
	})
}

func (c *linkCache) put(k linkKey, e linkEntry) {
	if _, ok := c.m[k]; ok {
		c.m[k] = e // the same trace released again: keep the newest, in its old slot
		return
	}
	if len(c.ring) < cap(c.ring) {
		c.ring = append(c.ring, k)
	} else {
		delete(c.m, c.ring[c.next])
		c.ring[c.next] = k
		c.next = (c.next + 1) % len(c.ring)
	}
	c.m[k] = e
}

// ResolveLink implements agentgraph.LinkResolver.
func (c *linkCache) ResolveLink(traceID pcommon.TraceID, spanID pcommon.SpanID) (agentgraph.LinkTarget, bool) {
	c.mu.Lock()
	e, ok := c.m[linkKey{trace: traceID, span: spanID}]
	c.mu.Unlock()
	if !ok {
		return agentgraph.LinkTarget{}, false
	}
	return agentgraph.LinkTarget{TraceID: traceID, SpanID: e.sender, Agent: e.agent}, true
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
