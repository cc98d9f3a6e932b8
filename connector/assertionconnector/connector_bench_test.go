package assertionconnector

import (
	"context"
	"testing"

	"github.com/stretchr/testify/require"
	"go.opentelemetry.io/collector/pdata/ptrace"
)

// BenchmarkConsumeTraces: one batch (two real traces, HANDOFF spans added) through all
// three outputs, as the collector's fan-out delivers it: evaluated once, stamped, logged
// and aggregated.
func BenchmarkConsumeTraces(b *testing.B) {
	h := newHarness(b, weatherConfig(b))
	td := released(b, "google-adk-ok.json", "strands-ok.json")
	ctx := context.Background()
	b.SetBytes(int64((&ptrace.ProtoMarshaler{}).TracesSize(td)))
	b.ReportAllocs()
	for b.Loop() {
		require.NoError(b, h.comps[0].ConsumeTraces(ctx, cloneTraces(td)))
		for _, c := range h.comps[1:] {
			require.NoError(b, c.ConsumeTraces(ctx, td))
		}
		h.traces.Reset()
		h.logs.Reset()
	}
	b.StopTimer()
	for _, c := range h.comps {
		require.NoError(b, c.Shutdown(ctx))
	}
}
