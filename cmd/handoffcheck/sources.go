package main

import (
	"go.opentelemetry.io/collector/pdata/ptrace"

	"github.com/otelcol-handoff/otelcol-handoff/assertionexporter"
)

// nameSource tells the exporter's reports which span file each trace of td was read
// from, shown beside the trace id (the first file of a trace split over several).
func nameSource(pl *pipeline, td ptrace.Traces, file string) {
	namer, ok := pl.exp.(assertionexporter.SourceNamer)
	if !ok {
		return
	}
	seen := map[string]bool{}
	rss := td.ResourceSpans()
	for i := 0; i < rss.Len(); i++ {
		sss := rss.At(i).ScopeSpans()
		for j := 0; j < sss.Len(); j++ {
			spans := sss.At(j).Spans()
			for k := 0; k < spans.Len(); k++ {
				id := spans.At(k).TraceID().String()
				if !seen[id] {
					seen[id] = true
					namer.SetTraceSource(id, file)
				}
			}
		}
	}
}
