package rules

import (
	"context"
	"testing"

	"github.com/stretchr/testify/require"
	"go.opentelemetry.io/collector/pdata/ptrace"

	"github.com/otelcol-handoff/otelcol-handoff/internal/agentgraph"
	"github.com/otelcol-handoff/otelcol-handoff/internal/agentgraph/agentgraphtest"
	"github.com/otelcol-handoff/otelcol-handoff/internal/judge"
	"github.com/otelcol-handoff/otelcol-handoff/internal/rules/check"
)

// rubricWorkPerItem bounds the rubric checks' visits per span and edge.
const rubricWorkPerItem = 40

// TestRubricWorkIsLinear grades every handoff on the four rubrics and counts what the
// checks visited (rubric.Index.Work): at most rubricWorkPerItem per span and edge, on 2,000
// tool calls of one receiver, a 10,000-deep chain and a 5,000-agent fan-out. Quadratic
// checks (every earlier tool result joined again per call, every span scanned per
// handoff) fail it.
func TestRubricWorkIsLinear(t *testing.T) {
	ev, err := Compile(rubricCases(), Options{})
	require.NoError(t, err)
	for _, tc := range []struct {
		name string
		td   ptrace.Traces
	}{
		{"receiver with 2000 tool calls", agentgraphtest.ToolCalls(2000)},
		{"receiver with 2000 failing tool calls", agentgraphtest.FailingToolCalls(2000)},
		{"deep chain of 10000 agents", agentgraphtest.DeepChain(10000)},
		{"fan-out of 5000 agents", agentgraphtest.FanOut(5000)},
		{"10000 nested runs of one agent", agentgraphtest.RecursiveChain(10000)},
		{"3000 supervisor runs, each worker's call failing", agentgraphtest.SupervisorLoop(3000)},
	} {
		t.Run(tc.name, func(t *testing.T) {
			g := agentgraph.BuildAll(tc.td, agentgraph.Options{})[0]
			cache := &traceCache{Trace: &check.Trace{Ctx: context.Background(), G: g, Batch: &judge.Batch{}}, traceID: g.TraceID.String()}
			out := &check.Out{}
			ev.cases[0].evaluate(cache, true, out)
			results := out.Results
			require.Len(t, results, 1+4*len(g.Edges))
			items := len(g.Spans) + len(g.Edges)
			t.Logf("work %d for %d spans + %d edges (%.1f per item)", cache.Index().Work(), len(g.Spans), len(g.Edges), float64(cache.Index().Work())/float64(items))
			require.LessOrEqual(t, cache.Index().Work(), rubricWorkPerItem*items, "work %d for %d spans + %d edges", cache.Index().Work(), len(g.Spans), len(g.Edges))
			for _, r := range results {
				require.NotEqual(t, Error, r.Outcome, r.Message)
				require.Less(t, len(r.Message)+len(r.Actual)+len(r.Expected), 4000, "message bounded: %s", r.Message)
			}
		})
	}
}
