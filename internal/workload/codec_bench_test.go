package workload_test

import (
	"math/rand/v2"
	"path/filepath"
	"testing"

	"go.opentelemetry.io/collector/pdata/ptrace"

	"github.com/otelcol-handoff/otelcol-handoff/internal/workload"
)

// BenchmarkBufferCodec prices the handoff processor's encoded buffer (buffer_encoding
// proto, docs/performance.md "The encoded buffer"): each trace of the load-test workload
// marshalled to OTLP protobuf on arrival (a buffer without pointers, which the GC need not
// mark) and decoded again at release. ns/span is wall time per span of the workload.
func BenchmarkBufferCodec(b *testing.B) {
	w, err := workload.LoadCaptures(filepath.Join("..", "..", "testdata", "traces"), 240)
	if err != nil {
		b.Fatal(err)
	}
	rng := rand.New(rand.NewPCG(1, 2))
	var traces []ptrace.Traces
	var bodies [][]byte
	var marshaler ptrace.ProtoMarshaler
	var unmarshaler ptrace.ProtoUnmarshaler
	for i := range w.Templates {
		td := w.Trace(i, rng, 1)[0]
		body, err := marshaler.MarshalTraces(td)
		if err != nil {
			b.Fatal(err)
		}
		traces, bodies = append(traces, td), append(bodies, body)
	}
	spansPerTrace := float64(w.Spans) / float64(len(w.Templates))
	perSpan := func(b *testing.B, n int) {
		b.ReportMetric(float64(b.Elapsed().Nanoseconds())/(float64(n)*spansPerTrace), "ns/span")
	}
	b.Run("marshal", func(b *testing.B) {
		b.ReportAllocs()
		n := 0
		for b.Loop() {
			if _, err := marshaler.MarshalTraces(traces[n%len(traces)]); err != nil {
				b.Fatal(err)
			}
			n++
		}
		perSpan(b, n)
	})
	b.Run("unmarshal", func(b *testing.B) {
		b.ReportAllocs()
		n := 0
		for b.Loop() {
			if _, err := unmarshaler.UnmarshalTraces(bodies[n%len(bodies)]); err != nil {
				b.Fatal(err)
			}
			n++
		}
		perSpan(b, n)
	})
}
