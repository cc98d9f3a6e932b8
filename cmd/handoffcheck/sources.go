package main

import (
	"go.opentelemetry.io/collector/pdata/pcommon"
	"go.opentelemetry.io/collector/pdata/ptrace"

	"github.com/otelcol-handoff/otelcol-handoff/assertionexporter"
	"github.com/otelcol-handoff/otelcol-handoff/internal/spanwalk"
)

// nameSource tells the exporter's reports which span file each trace of td was read
// from, shown beside the trace id (the first file of a trace split over several).
func nameSource(pl *pipeline, td ptrace.Traces, file string) {
	namer, ok := pl.exp.(assertionexporter.SourceNamer)
	if !ok {
		return
	}
	seen := map[string]bool{}
	spanwalk.Each(td, func(_ pcommon.Resource, sp ptrace.Span) {
		if id := sp.TraceID().String(); !seen[id] {
			seen[id] = true
			namer.SetTraceSource(id, file)
		}
	})
}
