package agentgraph

import (
	"context"
	"testing"

	"github.com/stretchr/testify/require"
	"go.opentelemetry.io/collector/pdata/pcommon"
)

func TestSharedGraph(t *testing.T) {
	g := BuildAll(capture(t, "google-adk-ok"), Options{})[0]
	fp := Options{}.Fingerprint()
	ctx := ContextWithGraphs(context.Background(), Options{}, fp, map[pcommon.TraceID]Shared{g.TraceID: {Graph: g, Spans: 11}})
	require.Same(t, g, SharedGraph(ctx, g.TraceID, Options{}.Fingerprint(), 11))
	require.Nil(t, SharedGraph(ctx, g.TraceID, fp, 12), "the trace changed size on the way: rebuild")
	require.Nil(t, SharedGraph(ctx, g.TraceID, Options{Chains: Chains{Input: Chain{"x"}}}.Fingerprint(), 11), "other chains: rebuild")
	require.Nil(t, SharedGraph(ctx, g.TraceID, Options{CountDelegationCallsAsToolCalls: true}.Fingerprint(), 11), "the old counting: rebuild")
	require.Nil(t, SharedGraph(ctx, pcommon.TraceID{9}, fp, 11))
	require.Nil(t, SharedGraph(context.Background(), g.TraceID, fp, 11))
	opts, got, ok := SharedOptions(ctx)
	require.True(t, ok)
	require.Equal(t, fp, got)
	require.Equal(t, Options{}, opts)
	_, _, ok = SharedOptions(context.Background())
	require.False(t, ok)
}

func TestFingerprint(t *testing.T) {
	base := Options{}.Fingerprint()
	require.Equal(t, base, Options{Chains: DefaultChains()}.Fingerprint(), "the default chains written out build the same graph")
	require.Equal(t, base, Options{Chains: Chains{Input: DefaultChains().Input}}.Fingerprint())
	other := Options{Chains: Chains{Input: Chain{"x"}}}.Fingerprint()
	require.NotEqual(t, base, other)
	require.False(t, base.SameChains(other))
	require.NotEqual(t, Options{Chains: Chains{Input: Chain{"x"}}}.Fingerprint(), Options{Chains: Chains{Output: Chain{"x"}}}.Fingerprint(),
		"the same place in another chain")
	require.NotEqual(t, Options{Chains: Chains{Input: Chain{"ab"}}}.Fingerprint(), Options{Chains: Chains{Input: Chain{"a", "b"}}}.Fingerprint(),
		"places are delimited")
	counting := Options{CountDelegationCallsAsToolCalls: true}.Fingerprint()
	require.NotEqual(t, base, counting, "the old counting builds another graph")
	require.True(t, base.SameChains(counting))
}

func TestDifferingChains(t *testing.T) {
	require.Empty(t, DifferingChains(Chains{}, DefaultChains()))
	require.Equal(t, []string{"input", "error_type"},
		DifferingChains(Chains{Input: Chain{"x"}}, Chains{ErrorType: Chain{"y"}}))
}

// BenchmarkSharedGraph is the per-batch cost of the hand-off: the processor attaches the
// graphs of a batch of traces, the exporter looks each one up (configured chains: the
// default ones written out, as a config that sets every chain would).
func BenchmarkSharedGraph(b *testing.B) {
	g := BuildAll(capture(b, "google-adk-ok"), Options{})[0]
	opts := Options{Chains: DefaultChains()}
	fp := opts.Fingerprint() // once, by each component
	ids := make([]pcommon.TraceID, 100)
	for i := range ids {
		ids[i] = pcommon.TraceID{byte(i), 1}
	}
	b.ReportAllocs()
	for b.Loop() {
		graphs := make(map[pcommon.TraceID]Shared, len(ids))
		for _, id := range ids {
			graphs[id] = Shared{Graph: g, Spans: 11}
		}
		ctx := ContextWithGraphs(context.Background(), opts, fp, graphs)
		for _, id := range ids {
			if SharedGraph(ctx, id, fp, 11) == nil {
				b.Fatal("not reused")
			}
		}
	}
}
