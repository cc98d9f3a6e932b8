package handoffprocessor_test

import (
	"path/filepath"
	"testing"

	"github.com/otelcol-handoff/otelcol-handoff/handoffprocessor/handoffprocessortest"
	"github.com/otelcol-handoff/otelcol-handoff/internal/workload"
)

// BenchmarkRetained measures the heap a buffered span holds (retained_B/span) with each
// buffer encoding, as the load test does: every trace decoded from its OTLP request, all of
// them buffered at once, the live heap compared before and after. retained/proto is that
// over the span's OTLP protobuf size.
func BenchmarkRetained(b *testing.B) {
	w, err := workload.LoadCaptures(filepath.Join("..", "testdata", "traces"), 240)
	if err != nil {
		b.Fatal(err)
	}
	for _, encoding := range []string{"proto", "decoded"} {
		b.Run(encoding, func(b *testing.B) {
			for b.Loop() {
				perSpan, protoPerSpan, err := handoffprocessortest.Retained(w, encoding)
				if err != nil {
					b.Fatal(err)
				}
				b.ReportMetric(perSpan, "retained_B/span")
				b.ReportMetric(protoPerSpan, "proto_B/span")
				b.ReportMetric(perSpan/protoPerSpan, "retained/proto")
			}
		})
	}
}
