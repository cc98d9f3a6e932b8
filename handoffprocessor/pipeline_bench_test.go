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
	"go.opentelemetry.io/collector/pdata/ptrace"
	"go.opentelemetry.io/collector/processor/processortest"

	"github.com/otelcol-handoff/otelcol-handoff/assertionexporter"
	"github.com/otelcol-handoff/otelcol-handoff/internal/workload"
)

// BenchmarkPipeline is the collector's hot path in process: each trace decoded from
// protobuf as the receiver does, through the processor into the assertion exporter with the
// load test's 10 rules. The cost above BenchmarkProcessors/floor is what the pipeline adds
// to the receiver's work.
func BenchmarkPipeline(b *testing.B) {
	enc, spans := encodedBatches(b, 240, 1)
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
	var u ptrace.ProtoUnmarshaler
	var body []byte
	b.ReportAllocs()
	gc0 := gcCPU()
	cpu0, i := cpuTime(), 0
	for b.Loop() {
		// Fresh trace ids: the same bytes would be late spans of a released trace.
		body = enc[i%len(enc)][0].AppendWithID(body[:0], workload.NewTraceID(rng))
		td, err := u.UnmarshalTraces(body)
		if err != nil {
			b.Fatal(err)
		}
		if err := p.ConsumeTraces(context.Background(), td); err != nil {
			b.Fatal(err)
		}
		i++
	}
	if err := p.Shutdown(context.Background()); err != nil {
		b.Fatal(err)
	}
	_ = exp.Shutdown(context.Background())
	sent := float64(i * spans / len(enc))
	b.ReportMetric(float64((cpuTime()-cpu0).Nanoseconds())/sent, "cpu-ns/span")
	b.ReportMetric(float64((gcCPU()-gc0).Nanoseconds())/sent, "gc-cpu-ns/span")
}

// gcCPU is the runtime's estimate of the CPU time spent in garbage collection so far
// (runtime/metrics /cpu/classes/gc/total:cpu-seconds: mark assists, background and idle
// mark workers, pauses).
func gcCPU() time.Duration {
	s := []metrics.Sample{{Name: "/cpu/classes/gc/total:cpu-seconds"}}
	metrics.Read(s)
	return time.Duration(s[0].Value.Float64() * float64(time.Second))
}
