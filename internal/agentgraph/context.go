package agentgraph

import (
	"context"
	"reflect"

	"go.opentelemetry.io/collector/pdata/pcommon"
)

// Sharing: the handoff processor builds each released trace's graph anyway; it passes the
// graphs downstream in the context of the ConsumeTraces call that carries the trace, so the
// assertion exporter can skip a second build. A consumer reuses a graph only when it was
// built with the same options and the trace still has the number of spans it had when the
// graph was made (the HANDOFF spans included); anything else (a batch processor in between
// drops the context anyway) rebuilds.

type graphsKey struct{}

// Shared is a graph as passed downstream.
type Shared struct {
	Graph *Graph
	// Spans is how many spans of the trace left with it (HANDOFF spans included).
	Spans int
	opts  Options
}

// ContextWithGraphs attaches graphs to ctx.
func ContextWithGraphs(ctx context.Context, opts Options, graphs map[pcommon.TraceID]Shared) context.Context {
	for id, s := range graphs {
		s.opts = opts
		graphs[id] = s
	}
	return context.WithValue(ctx, graphsKey{}, graphs)
}

// SharedGraph returns the graph of a trace passed in ctx, if it was built with opts from a
// trace of spans spans.
func SharedGraph(ctx context.Context, id pcommon.TraceID, opts Options, spans int) *Graph {
	graphs, _ := ctx.Value(graphsKey{}).(map[pcommon.TraceID]Shared)
	s, ok := graphs[id]
	if !ok || s.Spans != spans || !reflect.DeepEqual(s.opts, opts) {
		return nil
	}
	return s.Graph
}
