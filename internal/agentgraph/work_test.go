package agentgraph

import (
	"testing"

	"github.com/stretchr/testify/require"
	"go.opentelemetry.io/collector/pdata/ptrace"

	"github.com/otelcol-handoff/otelcol-handoff/internal/agentgraph/agentgraphtest"
)

// workPerItem bounds the builder's visits per span and edge.
const workPerItem = 40

// TestBuildWorkIsLinear counts the nodes and edges the builder visits (Graph.work) on a
// 10,000-deep chain of nested agents and on flat traces: at most workPerItem per span and
// edge, whatever the shape. Quadratic code (a subtree walk per agent, one tree level per
// propagation round) visits depth² nodes and fails this.
func TestBuildWorkIsLinear(t *testing.T) {
	for _, tc := range []struct {
		name string
		td   ptrace.Traces
	}{
		{"deep chain of 10000 agents", agentgraphtest.DeepChain(10000)},
		{"fan-out of 10000 agents", agentgraphtest.FanOut(10000)},
		{"receiver with 2000 tool calls", agentgraphtest.ToolCalls(2000)},
		{"10000 nested runs of one agent", agentgraphtest.RecursiveChain(10000)},
	} {
		t.Run(tc.name, func(t *testing.T) {
			g := BuildAll(tc.td, Options{})[0]
			items := len(g.Spans) + len(g.Edges)
			t.Logf("work %d for %d spans + %d edges (%.1f per item)", g.work, len(g.Spans), len(g.Edges), float64(g.work)/float64(items))
			require.LessOrEqual(t, g.work, workPerItem*items, "work %d for %d spans + %d edges", g.work, len(g.Spans), len(g.Edges))
		})
	}
}
