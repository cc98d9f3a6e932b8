package handoffprocessor

import (
	"encoding/binary"
	"runtime"
	"testing"

	"go.opentelemetry.io/collector/pdata/pcommon"

	"github.com/otelcol-handoff/otelcol-handoff/internal/agentgraph"
)

// BenchmarkLinkCacheRetained fills a link cache of the default size from the DAGs of real
// captures (each copy in a fresh trace) and reports the heap it keeps per remembered span:
// the figure behind link_cache_size's memory in the README.
func BenchmarkLinkCacheRetained(b *testing.B) {
	size := createDefaultConfig().(*Config).LinkCacheSize
	var graphs []*agentgraph.Graph
	for _, name := range allCaptures {
		graphs = append(graphs, agentgraph.BuildAll(loadCapture(b, name), agentgraph.Options{})...)
	}
	for b.Loop() {
		var before, after runtime.MemStats
		runtime.GC()
		runtime.ReadMemStats(&before)
		c := newLinkCache(size)
		for n := uint64(0); c.len() < size; n++ {
			g := graphs[n%uint64(len(graphs))]
			binary.BigEndian.PutUint64(g.TraceID[8:], n) // a fresh trace each time
			c.remember(g)
		}
		runtime.GC()
		runtime.ReadMemStats(&after)
		b.ReportMetric(float64(int64(after.HeapAlloc)-int64(before.HeapAlloc))/float64(c.len()), "retained_B/span")
		runtime.KeepAlive(c)
	}
}

// BenchmarkLinkCacheRemember is the release path's cost of remembering a trace's agent
// runs, per remembered span, in a full cache of the default size (every put evicts the
// oldest span), from the DAGs of real captures (each copy a fresh trace).
func BenchmarkLinkCacheRemember(b *testing.B) {
	size := createDefaultConfig().(*Config).LinkCacheSize
	var graphs []*agentgraph.Graph
	for _, name := range allCaptures {
		graphs = append(graphs, agentgraph.BuildAll(loadCapture(b, name), agentgraph.Options{})...)
	}
	remembered := make([]int, len(graphs)) // span ids each graph has the cache remember
	for i, g := range graphs {
		g.LinkTargets(func(_ agentgraph.LinkTarget, spans []pcommon.SpanID) { remembered[i] += len(spans) })
	}
	c := newLinkCache(size)
	n := uint64(0)
	for ; c.len() < size; n++ {
		g := graphs[n%uint64(len(graphs))]
		binary.BigEndian.PutUint64(g.TraceID[8:], n)
		c.remember(g)
	}
	spans := 0
	b.ReportAllocs()
	for b.Loop() {
		i := n % uint64(len(graphs))
		binary.BigEndian.PutUint64(graphs[i].TraceID[8:], n)
		c.remember(graphs[i])
		spans += remembered[i]
		n++
	}
	b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(spans), "ns/span")
}
