package handoffprocessor

import (
	"encoding/binary"
	"runtime"
	"testing"

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
