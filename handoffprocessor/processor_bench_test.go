package handoffprocessor

import (
	"context"
	"math/rand/v2"
	"path/filepath"
	"sync/atomic"
	"syscall"
	"testing"
	"time"

	"github.com/open-telemetry/opentelemetry-collector-contrib/processor/groupbytraceprocessor"
	"github.com/open-telemetry/opentelemetry-collector-contrib/processor/tailsamplingprocessor"
	"go.opentelemetry.io/collector/component"
	"go.opentelemetry.io/collector/component/componenttest"
	"go.opentelemetry.io/collector/confmap"
	"go.opentelemetry.io/collector/consumer"
	"go.opentelemetry.io/collector/pdata/ptrace"
	"go.opentelemetry.io/collector/processor"
	"go.opentelemetry.io/collector/processor/processortest"

	"github.com/otelcol-handoff/otelcol-handoff/internal/agentgraph"
	"github.com/otelcol-handoff/otelcol-handoff/internal/workload"
)

// Benchmarks of the processor on realistic agent traces, side by side with the contrib
// processors users would otherwise run (groupbytrace, tail_sampling with one always_sample
// policy), in one binary. The workload (internal/workload): the real captures (Google ADK,
// Strands, LangGraph, OpenAI Agents, Mastra, Vercel AI SDK) scaled to 10-500 spans per
// trace, each trace sent in 3 batches, fresh trace ids every iteration. Reported: wall ns/op,
// and process CPU nanoseconds per span (cpu-ns/span), the figure that compares fairly
// with processors that release on timers, and the garbage collector's share of it
// (gc-cpu-ns/span, the runtime's estimate).

// benchWorkload is one iteration's input and the HANDOFF spans it makes.
type benchWorkload struct {
	*workload.Workload
	handoffs int
}

func loadWorkload(b *testing.B, traces int) *benchWorkload {
	b.Helper()
	w, err := workload.LoadCaptures(filepath.Join("..", "testdata", "traces"), traces)
	if err != nil {
		b.Fatal(err)
	}
	bw := &benchWorkload{Workload: w}
	for _, tpl := range w.Templates {
		// HANDOFF spans the processor adds (a framework's own handoff span is enriched, not
		// doubled), counted on a copy.
		probe := ptrace.NewTraces()
		tpl.CopyTo(probe)
		for _, g := range agentgraph.BuildAll(probe, agentgraph.Options{}) {
			bw.handoffs += agentgraph.AppendHandoffs(g, ptrace.NewTraces(), agentgraph.ContentPolicy{})
		}
	}
	return bw
}

// encodedBatches is every trace of the workload of traces templates encoded once in parts
// batches, and the workload's span count. Each iteration
// decodes them with fresh trace ids, as the receiver decodes requests: what the benchmark
// keeps live is then bytes, not decoded templates that every GC cycle would mark again (a
// collector has no such heap, and it made each target pay for its garbage far more than a
// collector does).
func encodedBatches(b *testing.B, traces, parts int) ([][]workload.Encoded, int) {
	w, err := workload.LoadCaptures(filepath.Join("..", "testdata", "traces"), traces)
	if err != nil {
		b.Fatal(err)
	}
	enc, err := w.Encode(parts)
	if err != nil {
		b.Fatal(err)
	}
	return enc, w.Spans
}

func cpuTime() time.Duration {
	var ru syscall.Rusage
	_ = syscall.Getrusage(syscall.RUSAGE_SELF, &ru)
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}

// countingSink counts the received spans that came in (not the HANDOFF spans added), so a
// trace that a slow iteration cut early (fewer edges) still completes the count.
type countingSink struct{ n atomic.Int64 }

func (c *countingSink) Capabilities() consumer.Capabilities { return consumer.Capabilities{} }

func (c *countingSink) ConsumeTraces(_ context.Context, td ptrace.Traces) error {
	n := 0
	rss := td.ResourceSpans()
	for i := 0; i < rss.Len(); i++ {
		sss := rss.At(i).ScopeSpans()
		for j := 0; j < sss.Len(); j++ {
			if sss.At(j).Scope().Name() != agentgraph.ScopeName {
				n += sss.At(j).Spans().Len()
			}
		}
	}
	c.n.Add(int64(n))
	return nil
}

type benchTarget struct {
	name   string
	create func(b *testing.B, next consumer.Traces) processor.Traces
}

// passThrough is the floor: the workload's own cost (copying the batches) with no processor.
type passThrough struct {
	component.StartFunc
	component.ShutdownFunc
	consumer.Traces
}

func benchTargets() []benchTarget {
	return []benchTarget{
		{name: "floor", create: func(_ *testing.B, next consumer.Traces) processor.Traces {
			return passThrough{Traces: next}
		}},
		{name: "handoff", create: func(b *testing.B, next consumer.Traces) processor.Traces {
			return benchHandoff(b, bufferProto, next)
		}},
		{name: "handoff_decoded", create: func(b *testing.B, next consumer.Traces) processor.Traces {
			return benchHandoff(b, bufferDecoded, next)
		}},
		{name: "groupbytrace", create: func(b *testing.B, next consumer.Traces) processor.Traces {
			return contrib(b, groupbytraceprocessor.NewFactory(), map[string]any{
				"wait_duration": "5ms", "num_traces": 100000, "num_workers": 2,
			}, next)
		}},
		{name: "tail_sampling", create: func(b *testing.B, next consumer.Traces) processor.Traces {
			return contrib(b, tailsamplingprocessor.NewFactory(), map[string]any{
				"decision_wait": "5ms", "num_traces": 100000,
				"policies": []any{map[string]any{"name": "all", "type": "always_sample"}},
			}, next)
		}},
	}
}

// benchHandoff is the handoff processor with a 5 ms quiet period and the given buffer
// encoding.
func benchHandoff(b *testing.B, bufferEncoding string, next consumer.Traces) processor.Traces {
	cfg := createDefaultConfig().(*Config)
	cfg.QuietPeriod, cfg.MaxWait = 5*time.Millisecond, time.Second
	cfg.NumTraces, cfg.BufferEncoding = 100000, bufferEncoding
	p, err := NewFactory().CreateTraces(context.Background(), processortest.NewNopSettings(NewFactory().Type()), cfg, next)
	if err != nil {
		b.Fatal(err)
	}
	return p
}

func contrib(b *testing.B, f processor.Factory, conf map[string]any, next consumer.Traces) processor.Traces {
	cfg := f.CreateDefaultConfig()
	if err := confmap.NewFromStringMap(conf).Unmarshal(cfg); err != nil {
		b.Fatal(err)
	}
	p, err := f.CreateTraces(context.Background(), processortest.NewNopSettings(f.Type()), cfg, next)
	if err != nil {
		b.Fatal(err)
	}
	return p
}

// BenchmarkProcessors sends the same agent traces through each processor until every span
// came out, and reports CPU time per span and the ratio to groupbytrace.
func BenchmarkProcessors(b *testing.B) {
	enc, spans := encodedBatches(b, 240, 3)
	for _, tgt := range benchTargets() {
		b.Run(tgt.name, func(b *testing.B) {
			sink := new(countingSink)
			p := tgt.create(b, sink)
			if err := p.Start(context.Background(), componenttest.NewNopHost()); err != nil {
				b.Fatal(err)
			}
			defer func() { _ = p.Shutdown(context.Background()) }()
			want := int64(0)
			rng := rand.New(rand.NewPCG(1, 2))
			var u ptrace.ProtoUnmarshaler
			var body []byte
			b.ReportAllocs()
			b.SetBytes(int64(spans)) // "MB/s" reads as millions of spans per second
			cpu0, gc0 := cpuTime(), gcCPU()
			iters := 0
			for b.Loop() {
				want += int64(spans)
				for _, parts := range enc {
					id := workload.NewTraceID(rng)
					for k := range parts {
						body = parts[k].AppendWithID(body[:0], id)
						td, err := u.UnmarshalTraces(body)
						if err != nil {
							b.Fatal(err)
						}
						if err := p.ConsumeTraces(context.Background(), td); err != nil {
							b.Fatal(err)
						}
					}
				}
				deadline := time.Now().Add(30 * time.Second)
				for sink.n.Load() < want {
					if time.Now().After(deadline) {
						b.Fatalf("%s released %d of %d spans", tgt.name, sink.n.Load(), want)
					}
					time.Sleep(time.Millisecond)
				}
				iters++
			}
			cpu, gc := cpuTime()-cpu0, gcCPU()-gc0
			b.ReportMetric(float64(cpu.Nanoseconds())/float64(iters*spans), "cpu-ns/span")
			b.ReportMetric(float64(gc.Nanoseconds())/float64(iters*spans), "gc-cpu-ns/span")
		})
	}
}
