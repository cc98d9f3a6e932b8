package agentgraph

import (
	"context"
	"testing"

	"github.com/stretchr/testify/require"
	"go.opentelemetry.io/collector/pdata/pcommon"
)

func TestSharedGraph(t *testing.T) {
	g := BuildAll(capture(t, "google-adk-ok"), Options{})[0]
	ctx := ContextWithGraphs(context.Background(), Options{}, map[pcommon.TraceID]Shared{g.TraceID: {Graph: g, Spans: 11}})
	require.Same(t, g, SharedGraph(ctx, g.TraceID, Options{}, 11))
	require.Nil(t, SharedGraph(ctx, g.TraceID, Options{}, 12), "the trace changed size on the way: rebuild")
	require.Nil(t, SharedGraph(ctx, g.TraceID, Options{Chains: Chains{Input: Chain{"x"}}}, 11), "other chains: rebuild")
	require.Nil(t, SharedGraph(ctx, g.TraceID, Options{CountDelegationCallsAsToolCalls: true}, 11), "the old counting: rebuild")
	require.Nil(t, SharedGraph(ctx, pcommon.TraceID{9}, Options{}, 11))
	require.Nil(t, SharedGraph(context.Background(), g.TraceID, Options{}, 11))
}
