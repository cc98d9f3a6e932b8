package steps

import (
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/otelcol-handoff/otelcol-handoff/internal/agentgraph"
	"github.com/otelcol-handoff/otelcol-handoff/internal/agentgraph/agentgraphtest"
	"github.com/otelcol-handoff/otelcol-handoff/internal/rubric"
)

// The kinds are tested through the case engine (internal/rules: step_*_test.go, on real
// captures); what is tested here is what the engine cannot see.

// TestLongestChainBounded: the longest chain of a 10000-deep trace names its first and last
// agents and counts the rest.
func TestLongestChainBounded(t *testing.T) {
	g := agentgraph.BuildAll(agentgraphtest.DeepChain(10000), agentgraph.Options{})[0]
	require.Equal(t, 9999, g.Depth)
	chain := longestChain(g)
	require.Equal(t, "agent-0 -> agent-1 -> agent-2 -> agent-3 -> agent-4 -> … 9992 more … -> agent-9997 -> agent-9998 -> agent-9999", chain)
	short := agentgraph.BuildAll(agentgraphtest.DeepChain(4), agentgraph.Options{})[0]
	require.Equal(t, "agent-0 -> agent-1 -> agent-2 -> agent-3", longestChain(short))
}

// TestDeterministicOnlyAxes: a deterministicOnly rubrics step grades the axes with a
// deterministic part (DispatchCorrectness has none).
func TestDeterministicOnlyAxes(t *testing.T) {
	require.Equal(t, []string{rubric.Scope, rubric.Integration, rubric.Recovery}, (&RubricsStep{DeterministicOnly: true}).axes())
}
