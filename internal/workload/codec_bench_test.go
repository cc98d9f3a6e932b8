package workload_test

import (
	"math/rand/v2"
	"path/filepath"
	"testing"

	"github.com/klauspost/compress/s2"
	"go.opentelemetry.io/collector/pdata/ptrace"

	"github.com/otelcol-handoff/otelcol-handoff/internal/workload"
)

// BenchmarkBufferCodec prices the handoff processor's encoded buffer (buffer_encoding
// proto, docs/performance.md "The encoded buffer"): each trace of the load-test workload
// marshalled to OTLP protobuf on arrival (a buffer without pointers, which the GC need not
// mark) and decoded again at release; and what buffer_encoding proto_s2 adds, S2 on each
// protobuf, measured on the captures as they are (a scaled template repeats its capture,
// which S2 would find). ns/span is wall time per span of the workload.
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
	asIs, err := workload.LoadCapturesAsIs(filepath.Join("..", "..", "testdata", "traces"), 240)
	if err != nil {
		b.Fatal(err)
	}
	var raw, compressed [][]byte
	rawBytes, compressedBytes := 0, 0
	for i := range asIs.Templates {
		body, err := marshaler.MarshalTraces(asIs.Trace(i, rng, 1)[0])
		if err != nil {
			b.Fatal(err)
		}
		raw, compressed = append(raw, body), append(compressed, s2.Encode(nil, body))
		rawBytes, compressedBytes = rawBytes+len(body), compressedBytes+len(compressed[i])
	}
	asIsPerSpan := func(b *testing.B, n int) {
		b.ReportMetric(float64(b.Elapsed().Nanoseconds())/(float64(n)*float64(asIs.Spans)/float64(len(asIs.Templates))), "ns/span")
		b.ReportMetric(float64(compressedBytes)/float64(rawBytes), "compressed/protobuf")
	}
	b.Run("s2-compress", func(b *testing.B) {
		b.ReportAllocs()
		var dst []byte
		n := 0
		for b.Loop() {
			dst = s2.Encode(dst, raw[n%len(raw)])
			n++
		}
		asIsPerSpan(b, n)
	})
	b.Run("s2-decompress", func(b *testing.B) {
		b.ReportAllocs()
		var dst []byte
		n := 0
		for b.Loop() {
			if dst, err = s2.Decode(dst, compressed[n%len(compressed)]); err != nil {
				b.Fatal(err)
			}
			n++
		}
		asIsPerSpan(b, n)
	})
}
