// Package spanwalk visits every span of a pdata batch with its resource: the one copy of
// the resource → scope → span loop. It reads nothing of the spans itself (the model,
// internal/agentgraph, is the only reader of their content).
package spanwalk

import (
	"go.opentelemetry.io/collector/pdata/pcommon"
	"go.opentelemetry.io/collector/pdata/ptrace"
)

// Each calls fn on every span of td, in order, with its resource.
func Each(td ptrace.Traces, fn func(pcommon.Resource, ptrace.Span)) {
	rss := td.ResourceSpans()
	for i := 0; i < rss.Len(); i++ {
		rs := rss.At(i)
		sss := rs.ScopeSpans()
		for j := 0; j < sss.Len(); j++ {
			spans := sss.At(j).Spans()
			for k := 0; k < spans.Len(); k++ {
				fn(rs.Resource(), spans.At(k))
			}
		}
	}
}
