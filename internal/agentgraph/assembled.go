package agentgraph

import (
	"context"

	"go.opentelemetry.io/collector/pdata/pcommon"
)

// Assembled reports whether the trace id arrived whole from the handoff processor of this
// process: the processor passes the graph of every trace it assembled in the context of the
// ConsumeTraces call that carries it (ContextWithGraphs), whatever options it built it with.
// A trace without it came through another path (no handoff processor upstream, or a batch
// processor in between that dropped the context), so it may be a fragment.
func Assembled(ctx context.Context, id pcommon.TraceID) bool {
	s := sharedIn(ctx)
	if s == nil {
		return false
	}
	_, ok := s.graphs[id]
	return ok
}
