package handoffprocessor

import (
	"encoding/binary"
	"os"
	"path/filepath"
	"reflect"
	"testing"

	"github.com/stretchr/testify/require"
	"go.opentelemetry.io/collector/pdata/pcommon"
	"go.opentelemetry.io/collector/pdata/ptrace"

	"github.com/otelcol-handoff/otelcol-handoff/internal/agentgraph"
	"github.com/otelcol-handoff/otelcol-handoff/internal/workload"
)

// mapLinkCache is the link cache as it was before its map and ring were made pointer-free:
// each span's entry, the agent's name a string of its own, in a map, and the keys in a
// ring. The cache must resolve exactly as it does.
type mapLinkCache struct {
	ring []linkKey
	next int
	m    map[linkKey]agentgraph.LinkTarget
}

type linkKey struct {
	trace pcommon.TraceID
	span  pcommon.SpanID
}

func (c *mapLinkCache) remember(g *agentgraph.Graph) {
	g.LinkTargets(func(t agentgraph.LinkTarget, spans []pcommon.SpanID) {
		for _, id := range spans {
			k := linkKey{trace: t.TraceID, span: id}
			if _, ok := c.m[k]; ok {
				c.m[k] = t
				continue
			}
			if len(c.ring) < cap(c.ring) {
				c.ring = append(c.ring, k)
			} else {
				delete(c.m, c.ring[c.next])
				c.ring[c.next] = k
				c.next = (c.next + 1) % len(c.ring)
			}
			c.m[k] = t
		}
	})
}

// linkTestGraphs are the DAGs of every capture and corpus file (testdata/traces,
// testdata/corpus, and the shared corpus when it is beside the checkout).
func linkTestGraphs(t *testing.T) []*agentgraph.Graph {
	var files []string
	for _, dir := range []string{"traces", "corpus"} {
		m, err := filepath.Glob(filepath.Join("..", "testdata", dir, "*.json"))
		require.NoError(t, err)
		files = append(files, m...)
	}
	if m, _ := filepath.Glob("/work/shared/corpus/otlp/*.json"); len(m) > 0 {
		files = append(files, m...)
	}
	require.GreaterOrEqual(t, len(files), 29)
	var graphs []*agentgraph.Graph
	for _, path := range files {
		b, err := os.ReadFile(path)
		require.NoError(t, err)
		td, err := (&ptrace.JSONUnmarshaler{}).UnmarshalTraces(b)
		require.NoError(t, err, path)
		graphs = append(graphs, agentgraph.BuildAll(td, agentgraph.Options{})...)
	}
	// Two long traces too (real captures scaled to 300 spans), whose lookups go through the
	// cache's index of a trace's spans.
	for _, name := range []string{adkOK, strandsOK} {
		graphs = append(graphs, agentgraph.BuildAll(workload.Scale(loadCapture(t, name), 300), agentgraph.Options{})...)
	}
	return graphs
}

// checkChains: every slot is on its trace's chain once, in ring order from the oldest,
// and every trace entry in use has a slot.
func checkChains(t *testing.T, c *linkCache) {
	t.Helper()
	seen := 0
	for id, e := range c.traces {
		te := c.entries[e]
		require.Equal(t, id, te.id)
		require.Positive(t, te.n)
		n, last := uint32(0), noSlot
		for i := te.head; i != noSlot; i = c.ring[i].after {
			require.Equal(t, e, c.ring[i].trace)
			last = i
			n++
		}
		require.Equal(t, te.n, n)
		require.Equal(t, te.tail, last)
		seen += int(n)
	}
	require.Equal(t, len(c.ring), seen)
	require.Equal(t, len(c.entries), len(c.traces)+len(c.free))
}

// TestLinkCacheAgreesWithTheMap: fed the DAGs of every capture and corpus file, copies of
// them in fresh traces and some traces released again under another DAG (a different
// agent, the newest wins), caches of several sizes resolve every span ever remembered as
// the map-based cache does after every trace: same FIFO eviction, same names; and the
// name table holds exactly the names the slots use.
func TestLinkCacheAgreesWithTheMap(t *testing.T) {
	graphs := linkTestGraphs(t)
	for _, size := range []int{1, 7, 64, 1000} {
		c := newLinkCache(size)
		ref := &mapLinkCache{ring: make([]linkKey, 0, size), m: map[linkKey]agentgraph.LinkTarget{}}
		seen := map[linkKey]bool{}
		for n := range 3 * len(graphs) {
			g := graphs[n%len(graphs)]
			id := g.TraceID
			if n%5 == 4 {
				// Released again: the trace id of an earlier step, another graph's runs.
				binary.BigEndian.PutUint64(g.TraceID[8:], uint64(n-3))
			} else {
				binary.BigEndian.PutUint64(g.TraceID[8:], uint64(n))
			}
			c.remember(g)
			ref.remember(g)
			g.LinkTargets(func(t agentgraph.LinkTarget, spans []pcommon.SpanID) {
				for _, s := range spans {
					seen[linkKey{trace: t.TraceID, span: s}] = true
				}
			})
			g.TraceID = id
			require.Equal(t, len(ref.m), c.len())
			checkChains(t, c)
			for k := range seen {
				want, wantOK := ref.m[k]
				got, ok := c.ResolveLink(k.trace, k.span)
				require.Equal(t, wantOK, ok)
				require.Equal(t, want, got)
			}
			used := map[string]uint32{}
			for _, s := range c.ring {
				used[c.names.names[s.agent]]++
			}
			require.Len(t, c.names.ids, len(used))
			for name, n := range used {
				require.Equal(t, n, c.names.refs[c.names.ids[name]], name)
			}
		}
		require.Equal(t, size, c.len())
	}
}

// TestLinkCachePointerFree: what the cache holds per span and per trace (its ring's slots,
// its trace entries, the keys and values of its maps) has no pointer for the garbage
// collector to scan.
func TestLinkCachePointerFree(t *testing.T) {
	c := newLinkCache(1)
	for _, typ := range []reflect.Type{
		reflect.TypeOf(c.ring).Elem(), reflect.TypeOf(c.entries).Elem(),
		reflect.TypeOf(c.traces).Key(), reflect.TypeOf(c.traces).Elem(),
		reflect.TypeOf(c.index).Key(), reflect.TypeOf(c.index).Elem(),
		reflect.TypeOf(c.held).Key(), reflect.TypeOf(c.held).Elem(),
	} {
		require.False(t, hasPointers(typ), typ.String())
	}
	require.True(t, hasPointers(reflect.TypeOf(agentgraph.LinkTarget{})), "the check sees a string")
}

func hasPointers(t reflect.Type) bool {
	switch t.Kind() {
	case reflect.Array:
		return t.Len() > 0 && hasPointers(t.Elem())
	case reflect.Struct:
		for i := range t.NumField() {
			if hasPointers(t.Field(i).Type) {
				return true
			}
		}
		return false
	case reflect.Bool, reflect.Int, reflect.Int8, reflect.Int16, reflect.Int32, reflect.Int64,
		reflect.Uint, reflect.Uint8, reflect.Uint16, reflect.Uint32, reflect.Uint64, reflect.Uintptr,
		reflect.Float32, reflect.Float64, reflect.Complex64, reflect.Complex128:
		return false
	}
	return true
}
