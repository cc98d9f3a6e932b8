package handoffprocessor

import (
	"fmt"
	"testing"

	"github.com/stretchr/testify/require"
	"go.opentelemetry.io/collector/pdata/ptrace"
)

// eagerBatches is how the batcher split units when every unit was sized as it was made:
// the spans and protobuf bytes of each batch, in order.
func eagerBatches(units []ptrace.Traces, lim ReleaseConfig) []string {
	var sizer ptrace.ProtoMarshaler
	var out []string
	spans, bytes, n := 0, 0, 0
	for _, td := range units {
		s, b := td.SpanCount(), sizer.TracesSize(td)
		if n > 0 && (spans+s > lim.MaxBatchSpans || bytes+b > lim.MaxBatchBytes) {
			out = append(out, fmt.Sprintf("%d units, %d spans, %d bytes", n, spans, bytes))
			spans, bytes, n = 0, 0, 0
		}
		spans, bytes, n = spans+s, bytes+b, n+1
	}
	if n > 0 {
		out = append(out, fmt.Sprintf("%d units, %d spans, %d bytes", n, spans, bytes))
	}
	return out
}

// TestBatcherSizesLazily: on copies of every capture, under bounds by spans, by bytes and
// neither, the batcher, which sizes units only when a bound is checked, makes the batches
// the eager sizing made, and each batch's size, when it is asked, is its protobuf size.
func TestBatcherSizesLazily(t *testing.T) {
	var sizer ptrace.ProtoMarshaler
	captureBytes := 0
	for _, name := range allCaptures {
		captureBytes += sizer.TracesSize(loadCapture(t, name))
	}
	for _, lim := range []ReleaseConfig{
		{MaxBatchSpans: 8192, MaxBatchBytes: 3 << 20},
		{MaxBatchSpans: 40, MaxBatchBytes: 3 << 20},
		{MaxBatchSpans: 8192, MaxBatchBytes: captureBytes / len(allCaptures)},
		{MaxBatchSpans: 25, MaxBatchBytes: 2 * captureBytes / len(allCaptures)},
		{MaxBatchSpans: 1, MaxBatchBytes: 1},
	} {
		var tds []ptrace.Traces
		for _, name := range allCaptures {
			copies, _ := copiesOf(t, name, 3)
			tds = append(tds, copies...)
		}
		want := eagerBatches(tds, lim)
		cfg := testConfig(func(c *Config) { c.Release = lim })
		var got []string
		b := batcher{p: &handoffProcessor{cfg: cfg}, send: func(bt *batch) error {
			got = append(got, fmt.Sprintf("%d units, %d spans, %d bytes", len(bt.units), bt.spans, bt.size()))
			require.Equal(t, sizer.TracesSize(bt.td), bt.size())
			return nil
		}}
		for _, td := range tds {
			b.add(unit{data: td, spans: td.SpanCount(), bytes: unsized})
		}
		b.flush()
		require.NoError(t, b.err())
		require.Equal(t, want, got, "%+v", lim)
	}
}
