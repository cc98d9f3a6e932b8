package assertionexporter

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"

	"github.com/stretchr/testify/require"
	"go.opentelemetry.io/collector/component/componenttest"
	"go.opentelemetry.io/collector/consumer"
	"go.opentelemetry.io/collector/pdata/pcommon"
	"go.opentelemetry.io/collector/pdata/ptrace"
	"go.opentelemetry.io/collector/processor/processortest"
	"go.opentelemetry.io/otel/attribute"
	"go.opentelemetry.io/otel/sdk/metric/metricdata"
	"go.opentelemetry.io/otel/sdk/metric/metricdata/metricdatatest"

	"github.com/otelcol-handoff/otelcol-handoff/assertionexporter/internal/metadatatest"
	"github.com/otelcol-handoff/otelcol-handoff/handoffprocessor"
	"github.com/otelcol-handoff/otelcol-handoff/internal/agentgraph"
	"github.com/otelcol-handoff/otelcol-handoff/internal/rules"
	"github.com/otelcol-handoff/otelcol-handoff/internal/rules/steps"
)

// handOffCall is one batch the handoff processor delivered: what the exporter reads of it
// from the processor's hand-off (agentgraph.BatchTraces), what the markers on its spans say
// (agentgraph.ScanBatch), and how many of its traces came with a graph the exporter reuses.
type handOffCall struct {
	handOff, scan map[pcommon.TraceID]*agentgraph.BatchTrace
	reused        int
}

// handOffRecorder notes each batch, then hands it on to the exporter.
type handOffRecorder struct {
	mu    sync.Mutex
	fp    agentgraph.Fingerprint
	calls []handOffCall
}

func (r *handOffRecorder) consumer(t *testing.T, exp *assertionExporter) consumer.Traces {
	c, err := consumer.NewTraces(func(ctx context.Context, td ptrace.Traces) error {
		call := handOffCall{handOff: agentgraph.BatchTraces(ctx, td), scan: agentgraph.ScanBatch(td)}
		for id, sc := range call.scan {
			if sc.Kept > 0 && agentgraph.SharedGraph(ctx, id, r.fp, sc.Kept) != nil {
				call.reused++
			}
		}
		r.mu.Lock()
		r.calls = append(r.calls, call)
		r.mu.Unlock()
		return exp.ConsumeTraces(ctx, td)
	})
	require.NoError(t, err)
	return c
}

// TestProcessorHandOffJudgesAsTheMarkers: every real capture through the handoff processor
// (complete traces, one released without its root span, one released early for its size,
// and a late span of a trace already judged) is judged from the processor's hand-off
// exactly as from the markers on its spans: the same traces kept, complete or not, and late
// spans counted, with every graph reused.
func TestProcessorHandOffJudgesAsTheMarkers(t *testing.T) {
	h := newHarness(t, &Config{LogVerdicts: LogNone, Cases: []rules.CaseConfig{
		{Name: "topology", Steps: []rules.StepConfig{{Kind: &steps.TopologyStep{}}}},
	}})
	rec := &handOffRecorder{fp: h.exp.graphFP}
	next := rec.consumer(t, h.exp)
	ctx := context.Background()
	start := func(edit func(*handoffprocessor.Config)) (consumerProc, handoffprocessor.EndOfInput) {
		pf := handoffprocessor.NewFactory()
		pcfg := pf.CreateDefaultConfig().(*handoffprocessor.Config)
		edit(pcfg)
		proc, err := pf.CreateTraces(ctx, processortest.NewNopSettings(pf.Type()), pcfg, next)
		require.NoError(t, err)
		require.NoError(t, proc.Start(ctx, componenttest.NewNopHost()))
		return proc, proc.(handoffprocessor.EndOfInput)
	}

	// Every capture, each released whole at the end of its input.
	entries, err := os.ReadDir(filepath.Join("..", "testdata", "traces"))
	require.NoError(t, err)
	proc, eoi := start(func(*handoffprocessor.Config) {})
	traces := 0
	for _, e := range entries {
		name, ok := strings.CutSuffix(e.Name(), ".json")
		if !ok {
			continue
		}
		td := readCapture(t, name)
		traces += len(agentgraph.ScanBatch(td))
		require.NoError(t, proc.ConsumeTraces(ctx, td))
		require.NoError(t, eoi.EndOfInput(ctx))
	}
	// A late span of a trace already judged (Google ADK's, released above): forwarded marked.
	late := readCapture(t, "google-adk-ok")
	late.ResourceSpans().At(0).ScopeSpans().At(0).Spans().At(0).SetSpanID(pcommon.SpanID{0xfe, 1, 2, 3, 4, 5, 6, 7})
	late.ResourceSpans().At(0).ScopeSpans().At(0).Spans().RemoveIf(func(sp ptrace.Span) bool {
		return sp.SpanID() != pcommon.SpanID{0xfe, 1, 2, 3, 4, 5, 6, 7}
	})
	require.Equal(t, 1, late.SpanCount())
	require.NoError(t, proc.ConsumeTraces(ctx, late))
	// A trace whose root span never arrives: released at the end of input, incomplete.
	headless := readCapture(t, "strands-ok")
	for i := 0; i < headless.ResourceSpans().Len(); i++ {
		sss := headless.ResourceSpans().At(i).ScopeSpans()
		for j := 0; j < sss.Len(); j++ {
			sss.At(j).Spans().RemoveIf(func(sp ptrace.Span) bool { return sp.ParentSpanID().IsEmpty() })
			for k := 0; k < sss.At(j).Spans().Len(); k++ {
				sss.At(j).Spans().At(k).SetTraceID(pcommon.TraceID{0xaa, 1}) // a trace not seen yet
			}
		}
	}
	require.NoError(t, proc.ConsumeTraces(ctx, headless))
	require.NoError(t, eoi.EndOfInput(ctx))
	require.NoError(t, proc.Shutdown(ctx))

	// A trace over max_spans_per_trace: released early (by a release worker), incomplete.
	proc, _ = start(func(c *handoffprocessor.Config) { c.MaxSpansPerTrace = 5 })
	require.NoError(t, proc.ConsumeTraces(ctx, readCapture(t, "vercel-ai-ok")))
	require.NoError(t, proc.Shutdown(ctx)) // waits for the release workers
	require.NoError(t, h.exp.Shutdown(ctx))

	reused, lateSpans, incomplete := 0, 0, 0
	for i, c := range rec.calls {
		require.Equal(t, c.scan, c.handOff, "batch %d", i)
		reused += c.reused
		for _, sc := range c.scan {
			lateSpans += sc.Late
			if sc.Kept > 0 && !sc.Complete {
				incomplete++
			}
		}
	}
	require.Equal(t, traces+2, reused, "every assembled trace is judged on the processor's graph")
	require.Equal(t, 1, lateSpans)
	require.GreaterOrEqual(t, incomplete, 2, "the headless trace and the one over max_spans_per_trace")
	t.Logf("%d traces, %d incomplete, %d batches", traces+2, incomplete, len(rec.calls))
	require.Zero(t, h.exp.built.Load())
	metadatatest.AssertEqualExporterAssertionLateSpans(t, h.tt, []metricdata.DataPoint[int64]{{Value: 1, Attributes: idSet()}}, metricdatatest.IgnoreTimestamp())
	metadatatest.AssertEqualExporterAssertionTracesEvaluated(t, h.tt, []metricdata.DataPoint[int64]{
		{Value: int64(traces + 2 - incomplete), Attributes: idSet(attribute.Bool("complete", true))},
		{Value: int64(incomplete), Attributes: idSet(attribute.Bool("complete", false))},
	}, metricdatatest.IgnoreTimestamp())
}

// consumerProc is the processor as the test drives it.
type consumerProc interface {
	consumer.Traces
	Shutdown(ctx context.Context) error
}
