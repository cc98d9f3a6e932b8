package handoffprocessor

import (
	"context"
	"math/rand/v2"
	"runtime/metrics"
	"testing"
	"time"

	"go.opentelemetry.io/collector/component/componenttest"
	"go.opentelemetry.io/collector/confmap"
	"go.opentelemetry.io/collector/exporter/exportertest"
	"go.opentelemetry.io/collector/pdata/ptrace/ptraceotlp"
	"go.opentelemetry.io/collector/processor/processortest"

	"github.com/otelcol-handoff/otelcol-handoff/assertionexporter"
	"github.com/otelcol-handoff/otelcol-handoff/internal/workload"
)

// BenchmarkPipeline is the collector's hot path in process: each trace decoded from
// protobuf as the receiver does, through the processor into the assertion exporter with the
// load test's 10 rules. The cost above BenchmarkProcessors/floor is what the pipeline adds
// to the receiver's work.
func BenchmarkPipeline(b *testing.B) {
	w := loadWorkload(b, 240)
	ef := assertionexporter.NewFactory()
	ecfg := ef.CreateDefaultConfig()
	if err := confmap.NewFromStringMap(map[string]any{"log_verdicts": "none", "cases": []any{
		map[string]any{"name": "topology", "steps": []any{
			map[string]any{"action": "ASSERT_AGENT_TOPOLOGY", "maxDepth": 5},
			map[string]any{"action": "EXPECT_DELEGATION_TO", "agentName": "weather_specialist", "fromAgent": "triage"},
			map[string]any{"action": "EXPECT_AGENT_BUDGET", "agentName": "weather_specialist", "maxTokens": 100000},
			map[string]any{"action": "EXPECT_AGENT_BUDGET", "agentName": "triage", "maxDurationMs": 600000},
			map[string]any{"action": "EXPECT_DELEGATION_TO", "agentName": "triage", "maxInvocations": 100},
		}},
		map[string]any{
			"name": "tests", "expected_result": `status == "completed"`,
			"expected_tool_calls":    []any{"get_weather", "get_weather: invocations >= 1"},
			"expected_no_tool_calls": []any{"delete_everything"}, "expected_tool_call_order": []any{"get_weather"},
		},
	}}).Unmarshal(ecfg); err != nil {
		b.Fatal(err)
	}
	exp, err := ef.CreateTraces(context.Background(), exportertest.NewNopSettings(ef.Type()), ecfg)
	if err != nil {
		b.Fatal(err)
	}
	if err := exp.Start(context.Background(), componenttest.NewNopHost()); err != nil {
		b.Fatal(err)
	}
	cfg := createDefaultConfig().(*Config)
	cfg.QuietPeriod, cfg.MaxWait = 20*time.Millisecond, 10*time.Second
	p, err := NewFactory().CreateTraces(context.Background(), processortest.NewNopSettings(NewFactory().Type()), cfg, exp)
	if err != nil {
		b.Fatal(err)
	}
	if err := p.Start(context.Background(), componenttest.NewNopHost()); err != nil {
		b.Fatal(err)
	}
	rng := rand.New(rand.NewPCG(1, 2))
	var bodies [][]byte
	for i := range w.Templates {
		body, err := ptraceotlp.NewExportRequestFromTraces(w.Trace(i, rng, 1)[0]).MarshalProto()
		if err != nil {
			b.Fatal(err)
		}
		bodies = append(bodies, body)
	}
	b.ReportAllocs()
	gc0 := gcCPU()
	cpu0, i := cpuTime(), 0
	for b.Loop() {
		req := ptraceotlp.NewExportRequest()
		if err := req.UnmarshalProto(bodies[i%len(bodies)]); err != nil {
			b.Fatal(err)
		}
		// Fresh trace ids: the same bytes would be late spans of a released trace.
		td := req.Traces()
		var id [16]byte
		id[0], id[1], id[2], id[15] = byte(i), byte(i>>8), byte(i>>16), 1
		workload.SetTraceID(td, id)
		if err := p.ConsumeTraces(context.Background(), td); err != nil {
			b.Fatal(err)
		}
		i++
	}
	if err := p.Shutdown(context.Background()); err != nil {
		b.Fatal(err)
	}
	_ = exp.Shutdown(context.Background())
	spans := float64(i * w.Spans / len(w.Templates))
	b.ReportMetric(float64((cpuTime()-cpu0).Nanoseconds())/spans, "cpu-ns/span")
	b.ReportMetric(float64((gcCPU()-gc0).Nanoseconds())/spans, "gc-cpu-ns/span")
}

// gcCPU is the runtime's estimate of the CPU time spent in garbage collection so far
// (runtime/metrics /cpu/classes/gc/total:cpu-seconds: mark assists, background and idle
// mark workers, pauses).
func gcCPU() time.Duration {
	s := []metrics.Sample{{Name: "/cpu/classes/gc/total:cpu-seconds"}}
	metrics.Read(s)
	return time.Duration(s[0].Value.Float64() * float64(time.Second))
}
