package main

import (
	"context"
	"sort"
	"strings"
	"sync"
	"time"

	"go.opentelemetry.io/collector/consumer"
	"go.opentelemetry.io/collector/pdata/pcommon"
	"go.opentelemetry.io/collector/pdata/ptrace"

	"github.com/otelcol-handoff/otelcol-handoff/internal/agentgraph"
	"github.com/otelcol-handoff/otelcol-handoff/internal/report"
	"github.com/otelcol-handoff/otelcol-handoff/internal/rules"
	"github.com/otelcol-handoff/otelcol-handoff/internal/spanfile"
	"github.com/otelcol-handoff/otelcol-handoff/internal/spanwalk"
	"github.com/otelcol-handoff/otelcol-handoff/internal/textsafe"
)

// traceInfo is where a judged trace came from, for the console, the JSON summary and
// validate: the span files that held its spans (or "live" for a run's capture) and the
// service of its root span, with the agents and tools its delegation DAG shows.
type traceInfo struct {
	files   map[string]bool
	service string
	agents  []string
	tools   []string
	// start is when the trace started (its earliest span; zero when unknown).
	start time.Time
}

// traceIndex collects a traceInfo per trace id: the files while the input is read, the rest
// from the graphs the handoff processor releases (observe sits between the processor and
// the exporter). Safe for concurrent use (the processor releases from several workers).
type traceIndex struct {
	mu     sync.Mutex
	traces map[string]*traceInfo
	opts   agentgraph.Options // the processor's: its graphs ride along in the context
	fp     agentgraph.Fingerprint
	// mask is the exporter's redaction: the service name is trace data, shown on console
	// lines and in the summary as the reports show it.
	mask func(string) string
}

// maxServiceName bounds the service name a console line and the summary show.
const maxServiceName = 256

func newTraceIndex(opts agentgraph.Options, mask func(string) string) *traceIndex {
	return &traceIndex{traces: map[string]*traceInfo{}, opts: opts, fp: opts.Fingerprint(), mask: mask}
}

func (x *traceIndex) get(id string) *traceInfo {
	ti := x.traces[id]
	if ti == nil {
		ti = &traceInfo{files: map[string]bool{}}
		x.traces[id] = ti
	}
	return ti
}

// sawFile records that the traces of td came (in part) from file, and returns how many of
// its spans have no trace id (in no trace: nothing judges them). Called before td is
// consumed: the processor owns it afterwards.
func (x *traceIndex) sawFile(file string, td ptrace.Traces) int {
	x.mu.Lock()
	defer x.mu.Unlock()
	noID := 0
	spanwalk.Each(td, func(_ pcommon.Resource, sp ptrace.Span) {
		if sp.TraceID().IsEmpty() {
			noID++
			return
		}
		x.get(sp.TraceID().String()).files[file] = true
	})
	return noID
}

// sawGraph records what the model shows of a trace: its root span's service, its agents
// and its tools (called, delegating, or offered to a run).
func (x *traceIndex) sawGraph(g *agentgraph.Graph) {
	sel := g.Selector()
	agents, tools := map[string]bool{}, map[string]bool{}
	for _, inv := range g.Invocations {
		agents[inv.Name] = true
		for _, tc := range inv.ToolCalls {
			tools[tc.Name] = true
		}
		for _, tc := range inv.DelegationCalls {
			tools[tc.Name] = true
		}
		for _, name := range inv.AllowedToolNames() {
			tools[name] = true
		}
	}
	x.mu.Lock()
	defer x.mu.Unlock()
	ti := x.get(g.TraceID.String())
	if sel.ServiceName != "" {
		// Bounded as results' names are: a console line shows it beside every result.
		ti.service = textsafe.Clip(x.mask(sel.ServiceName), maxServiceName)
	}
	if st := report.TraceStart(g); !st.IsZero() && (ti.start.IsZero() || st.Before(ti.start)) {
		ti.start = st.UTC()
	}
	ti.agents = mergeNames(ti.agents, agents)
	ti.tools = mergeNames(ti.tools, tools)
}

func mergeNames(list []string, add map[string]bool) []string {
	for _, n := range list {
		add[n] = true
	}
	out := make([]string, 0, len(add))
	for n := range add {
		if n != "" {
			out = append(out, n)
		}
	}
	sort.Strings(out)
	return out
}

// observe wraps the exporter: every trace the processor releases is recorded (from the
// graph the processor built, passed in the context; rebuilt only when it is not there),
// then handed on unchanged.
func (x *traceIndex) observe(next consumer.Traces) (consumer.Traces, error) {
	return consumer.NewTraces(func(ctx context.Context, td ptrace.Traces) error {
		var byTrace map[pcommon.TraceID][]*agentgraph.Span
		for id, sc := range agentgraph.BatchTraces(ctx, td) {
			if id.IsEmpty() || sc.Kept == 0 {
				continue
			}
			g := agentgraph.SharedGraph(ctx, id, x.fp, sc.Kept)
			if g == nil {
				if byTrace == nil {
					byTrace = agentgraph.SpansOf(td)
				}
				g = agentgraph.Build(id, agentgraph.WithoutLate(byTrace[id]), x.opts)
			}
			x.sawGraph(g)
		}
		return next.ConsumeTraces(ctx, td)
	}, consumer.WithCapabilities(next.Capabilities()))
}

// lookup returns a copy of what is known of a trace (zero when nothing is).
func (x *traceIndex) lookup(id string) traceInfo {
	if x == nil {
		return traceInfo{}
	}
	x.mu.Lock()
	defer x.mu.Unlock()
	ti := x.traces[id]
	if ti == nil {
		return traceInfo{}
	}
	return *ti
}

// fileList is the trace's files, sorted (the same label whatever the order of the files on
// the command line).
func (ti traceInfo) fileList() []string {
	out := make([]string, 0, len(ti.files))
	for f := range ti.files {
		out = append(out, f)
	}
	sort.Strings(out)
	return out
}

// label is what a console line shows beside the trace id: "(spans.json, service x)", the
// files joined by " + " when the trace was split across files; "" when nothing is known.
func (ti traceInfo) label() string {
	var parts []string
	if files := ti.fileList(); len(files) > 0 {
		parts = append(parts, strings.Join(files, " + "))
	}
	if ti.service != "" {
		parts = append(parts, "service "+ti.service)
	}
	if len(parts) == 0 {
		return ""
	}
	return " (" + strings.Join(parts, ", ") + ")"
}

// sawFileCases indexes the traces of every file a FILE case reads (the exporter reads
// them itself, past the processor), from the file's graphs as the exporter builds them.
func (x *traceIndex) sawFileCases(cases []rules.CaseConfig) error {
	done := map[string]bool{}
	for _, c := range cases {
		f := c.SpansFile()
		if f == "" || done[f] {
			continue
		}
		done[f] = true
		td, err := spanfile.ReadAll(f)
		if err != nil {
			return err
		}
		x.sawFile(f, td)
		for _, g := range agentgraph.BuildAll(td, x.opts) {
			x.sawGraph(g)
		}
	}
	return nil
}
