// Package workload makes realistic agent-trace load from real captures: each capture is
// scaled to 10-500 spans per trace by fan-out copies (fresh span ids per copy, the
// capture's attribute sizes kept), and every use gets fresh random trace ids. Benchmarks
// and the load test share it, so both measure the same traffic.
package workload

import (
	"encoding/binary"
	"math/rand/v2"
	"os"
	"path/filepath"
	"runtime"

	"go.opentelemetry.io/collector/pdata/pcommon"
	"go.opentelemetry.io/collector/pdata/ptrace"
)

// Sizes are the approximate span counts per trace, cycled.
var Sizes = []int{10, 50, 200, 500}

// Workload is a fixed set of trace templates.
type Workload struct {
	Templates []ptrace.Traces
	Spans     int
}

// Captures are the real-client captures (testdata/traces/NAME.json) the benchmarks' and the
// load test's workload is made of.
var Captures = []string{"google-adk-ok", "strands-ok", "langgraph-ok", "openai-agents-ok", "mastra-ok", "vercel-ai-ok"}

// LoadCaptures builds n trace templates from the Captures in tracesDir.
func LoadCaptures(tracesDir string, n int) (*Workload, error) {
	return Load(capturePaths(tracesDir), n)
}

// LoadCapturesAsIs builds n trace templates from the Captures in tracesDir, each one
// capture as it is, not scaled: a trace as redundant as the run it records. Compression
// is measured on these (a scaled template repeats its capture, which a compressor finds).
func LoadCapturesAsIs(tracesDir string, n int) (*Workload, error) {
	return load(capturePaths(tracesDir), n, []int{0}) // Scale to 0 spans: one copy
}

func capturePaths(tracesDir string) []string {
	paths := make([]string, len(Captures))
	for i, name := range Captures {
		paths[i] = filepath.Join(tracesDir, name+".json")
	}
	return paths
}

// Load reads OTLP/JSON captures and builds n trace templates from them.
func Load(paths []string, n int) (*Workload, error) { return load(paths, n, Sizes) }

// load builds n templates from the captures at paths, scaled to sizes in turn.
func load(paths []string, n int, sizes []int) (*Workload, error) {
	var caps []ptrace.Traces
	for _, p := range paths {
		raw, err := os.ReadFile(p)
		if err != nil {
			return nil, err
		}
		td, err := (&ptrace.JSONUnmarshaler{}).UnmarshalTraces(raw)
		if err != nil {
			return nil, err
		}
		caps = append(caps, td)
	}
	w := &Workload{}
	for i := 0; i < n; i++ {
		td := Scale(caps[i%len(caps)], sizes[i%len(sizes)])
		td.MarkReadOnly()
		w.Spans += td.SpanCount()
		w.Templates = append(w.Templates, td)
	}
	return w, nil
}

// Scale copies a capture k times into one trace to reach about n spans.
func Scale(capture ptrace.Traces, n int) ptrace.Traces {
	copies := max(1, n/max(1, capture.SpanCount()))
	out := ptrace.NewTraces()
	for c := 0; c < copies; c++ {
		rss := capture.ResourceSpans()
		for i := 0; i < rss.Len(); i++ {
			rs := out.ResourceSpans().AppendEmpty()
			rss.At(i).CopyTo(rs)
			eachSpan(rs, func(sp ptrace.Span) {
				sp.SetSpanID(remap(sp.SpanID(), c))
				if !sp.ParentSpanID().IsEmpty() {
					sp.SetParentSpanID(remap(sp.ParentSpanID(), c))
				}
			})
		}
	}
	return out
}

func remap(id pcommon.SpanID, c int) pcommon.SpanID {
	binary.BigEndian.PutUint16(id[0:2], uint16(c)+1)
	return id
}

func eachSpan(rs ptrace.ResourceSpans, fn func(ptrace.Span)) {
	sss := rs.ScopeSpans()
	for j := 0; j < sss.Len(); j++ {
		spans := sss.At(j).Spans()
		for k := 0; k < spans.Len(); k++ {
			fn(spans.At(k))
		}
	}
}

// SetTraceID gives every span of td the trace id (a decoded copy of a template gets a
// fresh one so that it is not a late span of a released trace).
func SetTraceID(td ptrace.Traces, id pcommon.TraceID) {
	rss := td.ResourceSpans()
	for i := 0; i < rss.Len(); i++ {
		eachSpan(rss.At(i), func(sp ptrace.Span) { sp.SetTraceID(id) })
	}
}

// Trace returns a copy of template i with a fresh random trace id, split into parts
// batches (span k goes to batch k mod parts), as separate exporters would send it.
func (w *Workload) Trace(i int, rng *rand.Rand, parts int) []ptrace.Traces {
	id := NewTraceID(rng)
	out := make([]ptrace.Traces, parts)
	for p := range out {
		out[p] = ptrace.NewTraces()
	}
	n := 0
	rss := w.Templates[i%len(w.Templates)].ResourceSpans()
	for r := 0; r < rss.Len(); r++ {
		src := rss.At(r)
		sss := src.ScopeSpans()
		for j := 0; j < sss.Len(); j++ {
			spans := sss.At(j).Spans()
			dst := make([]ptrace.SpanSlice, parts)
			for k := 0; k < spans.Len(); k++ {
				p := n % parts
				n++
				if dst[p] == (ptrace.SpanSlice{}) {
					rs := out[p].ResourceSpans().AppendEmpty()
					src.Resource().CopyTo(rs.Resource())
					ss := rs.ScopeSpans().AppendEmpty()
					sss.At(j).Scope().CopyTo(ss.Scope())
					dst[p] = ss.Spans()
				}
				sp := dst[p].AppendEmpty()
				spans.At(k).CopyTo(sp)
				sp.SetTraceID(id)
			}
		}
	}
	return out
}

// HeapGrowth is the live heap fill leaves behind: garbage is collected before and after, so
// what remains is what fill made something else hold (a processor's buffered traces).
// Each side collects twice: one collection only moves a sync.Pool's objects to its victim
// cache, and the next frees them, so one collection before fill counted in "before" the
// pooled buffers an earlier measurement left and subtracted them from fill's growth.
func HeapGrowth(fill func()) int64 {
	var before, after runtime.MemStats
	runtime.GC()
	runtime.GC()
	runtime.ReadMemStats(&before)
	fill()
	runtime.GC()
	runtime.GC()
	runtime.ReadMemStats(&after)
	return int64(after.HeapAlloc) - int64(before.HeapAlloc)
}

// ProtoBytesPerSpan is the workload's OTLP protobuf size per span, each template encoded
// as one trace's export request.
func (w *Workload) ProtoBytesPerSpan() float64 {
	size := 0
	m := &ptrace.ProtoMarshaler{}
	for _, td := range w.Templates {
		size += m.TracesSize(td)
	}
	return float64(size) / float64(w.Spans)
}
