package expect

import (
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/require"
	"go.opentelemetry.io/collector/pdata/pcommon"
	"go.opentelemetry.io/collector/pdata/ptrace"

	"github.com/otelcol-handoff/otelcol-handoff/internal/agentgraph"
	"github.com/otelcol-handoff/otelcol-handoff/internal/spanfile"
	"github.com/otelcol-handoff/otelcol-handoff/internal/spanwalk"
)

// graphOf builds the one trace of a testdata/traces capture, after edit (nil: none).
func graphOf(t *testing.T, capture string, edit func(ptrace.Span)) *agentgraph.Graph {
	t.Helper()
	td := ptrace.NewTraces()
	_, err := spanfile.Read(filepath.Join("..", "..", "..", "testdata", "traces", capture+".json"), func(part ptrace.Traces) error {
		part.ResourceSpans().MoveAndAppendTo(td.ResourceSpans())
		return nil
	})
	require.NoError(t, err)
	if edit != nil {
		spanwalk.Each(td, func(_ pcommon.Resource, sp ptrace.Span) { edit(sp) })
	}
	return agentgraph.BuildAll(td, agentgraph.Options{})[0]
}

// TestRootAgentRuns: the root agent as one logical agent over its runs. LangGraph's
// supervisor resumed as a second top-level run (langgraph-ok); a Strands swarm handed back
// to triage (scenario-strands-error-retried: runs 0 and 2); a run of the root's name that
// another agent's span holds is a child, not a root run (strands-agent-tool, its nested
// agent renamed triage). The rules package's TestRootRuns* assert the fields on them.
func TestRootAgentRuns(t *testing.T) {
	g := graphOf(t, "langgraph-ok", nil)
	a := rootAgent(g)
	require.Equal(t, g.RootRuns, a.runs)
	require.Len(t, a.runs, 2)

	g = graphOf(t, "scenario-strands-error-retried", nil)
	a = rootAgent(g)
	require.Equal(t, []*agentgraph.Invocation{g.Invocations[0], g.Invocations[2]}, a.runs)

	g = graphOf(t, "strands-agent-tool", func(sp ptrace.Span) {
		if sp.SpanID().String() == "7de4f819fa3bf3ec" {
			sp.Attributes().PutStr("gen_ai.agent.name", "triage")
		}
	})
	require.Equal(t, agentgraph.DetectAgentAsTool, g.Invocations[1].In.Detection)
	require.Equal(t, []*agentgraph.Invocation{g.Invocations[0]}, rootAgent(g).runs)
}
