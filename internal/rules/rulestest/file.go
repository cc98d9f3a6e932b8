package rulestest

import (
	"os"
	"testing"

	"go.opentelemetry.io/collector/pdata/ptrace"

	"github.com/otelcol-handoff/otelcol-handoff/internal/agentgraph"
)

// FileGraph builds the one trace of an OTLP/JSON span file (a capture), failing t when the
// file does not read, parse or hold exactly one trace.
func FileGraph(t testing.TB, path string) *agentgraph.Graph {
	t.Helper()
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	td, err := (&ptrace.JSONUnmarshaler{}).UnmarshalTraces(b)
	if err != nil {
		t.Fatal(err)
	}
	graphs := agentgraph.BuildAll(td, agentgraph.Options{})
	if len(graphs) != 1 {
		t.Fatalf("%s: %d traces, want 1", path, len(graphs))
	}
	return graphs[0]
}
