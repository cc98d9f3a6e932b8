package main

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"go.opentelemetry.io/collector/component"
	"go.opentelemetry.io/collector/component/componenttest"
	"go.opentelemetry.io/collector/confmap"
	"go.opentelemetry.io/collector/confmap/provider/envprovider"
	"go.opentelemetry.io/collector/confmap/provider/fileprovider"
	"go.opentelemetry.io/collector/consumer"
	"go.opentelemetry.io/collector/exporter"
	"go.opentelemetry.io/collector/pdata/pcommon"
	"go.opentelemetry.io/collector/pdata/ptrace"
	"go.opentelemetry.io/collector/processor"
	"go.uber.org/zap"

	"github.com/otelcol-handoff/otelcol-handoff/assertionexporter"
	"github.com/otelcol-handoff/otelcol-handoff/connector/assertionconnector"
	"github.com/otelcol-handoff/otelcol-handoff/handoffprocessor"
	"github.com/otelcol-handoff/otelcol-handoff/internal/gate"
	"github.com/otelcol-handoff/otelcol-handoff/internal/judge"
	"github.com/otelcol-handoff/otelcol-handoff/internal/rules"
	"github.com/otelcol-handoff/otelcol-handoff/internal/rules/steps"
	"github.com/otelcol-handoff/otelcol-handoff/internal/spanwalk"
	"github.com/otelcol-handoff/otelcol-handoff/internal/textsafe"
)

// pipeline is the collector's handoff processor feeding its assertion exporter, built from
// the named sections of a collector config, in process.
type pipeline struct {
	proc processor.Traces
	exp  exporter.Traces
	// results are every result the exporter wrote, handed over in process.
	mu      sync.Mutex
	results []rules.Result
	// gates of the exporter's config (applied to the run's mean rubric scores), and its
	// judge (nil: none configured).
	gates *gate.Set
	judge *judge.Info
	// index knows each trace's files and service (for the console and the summary); cases
	// are the config's case names, in config order.
	index *traceIndex
	cases []string
	// noTraceID counts the spans read without a trace id: the processor cannot assemble
	// them, so nothing judges them.
	noTraceID atomic.Int64
	// early holds the traces the processor forwarded before the end of input (nil: not
	// watched, a live run): released early (over num_traces, max_spans_per_trace or
	// max_trace_size_bytes) or late spans of such a trace.
	earlyMu sync.Mutex
	early   map[pcommon.TraceID]bool
}

// options are the command-line settings shared by replay and run.
type options struct {
	config    string
	processor string // component id, e.g. handoff or handoff/ci; empty = from the traces pipeline
	exporter  string
	jsonOut   string
	junit     string
	markdown  string
	html      string
	failOn    map[rules.Outcome]bool
	// needInput: replay was given no file, so the config must read one (source FILE).
	needInput bool
	// inputs are the span files of the command line (replay, validate).
	inputs []string
	// endOfInput: the traces are read from files (replay), so the processor releases them
	// at the end of input only (holdUntilEndOfInput), and an earlier release is warned of.
	endOfInput bool
	logger     *zap.Logger
	// summaryJSON: --summary json (stdout holds one JSON object); report collects it.
	summaryJSON bool
	report      *runReport
}

// loadConfig resolves a collector config like the collector does (file, ${env:...}).
func loadConfig(ctx context.Context, path string) (*confmap.Conf, error) {
	abs, err := filepath.Abs(path)
	if err != nil {
		return nil, err
	}
	resolver, err := confmap.NewResolver(confmap.ResolverSettings{
		URIs:              []string{"file:" + abs},
		ProviderFactories: []confmap.ProviderFactory{fileprovider.NewFactory(), envprovider.NewFactory()},
		DefaultScheme:     "env",
	})
	if err != nil {
		return nil, err
	}
	return resolver.Resolve(ctx)
}

// pickComponents finds the handoff processor and assertion exporter of the config: the ids
// given, else the first of their type in a traces pipeline (an assertion connector, which
// a traces pipeline lists among its exporters, counts as one).
func pickComponents(conf *confmap.Conf, procID, expID string) (string, string, error) {
	if procID != "" && expID != "" {
		return procID, expID, nil
	}
	var pipelines map[string]struct {
		Processors []string `mapstructure:"processors"`
		Exporters  []string `mapstructure:"exporters"`
	}
	sub, err := conf.Sub("service::pipelines")
	if err != nil {
		return "", "", err
	}
	if err := sub.Unmarshal(&pipelines, confmap.WithIgnoreUnused()); err != nil {
		return "", "", fmt.Errorf("service.pipelines: %w", err)
	}
	names := make([]string, 0, len(pipelines))
	for name := range pipelines {
		names = append(names, name)
	}
	sort.Strings(names)
	isType := func(id, typ string) bool { return id == typ || strings.HasPrefix(id, typ+"/") }
	for _, name := range names {
		if name != "traces" && !strings.HasPrefix(name, "traces/") {
			continue
		}
		p := pipelines[name]
		for _, id := range p.Processors {
			if procID == "" && isType(id, "handoff") {
				procID = id
			}
		}
		for _, id := range p.Exporters {
			if expID == "" && isType(id, "assertion") {
				expID = id
			}
		}
	}
	var errs []error
	if procID == "" {
		errs = append(errs, errors.New("no handoff processor in a traces pipeline of the config (name one with --processor)"))
	}
	if expID == "" {
		errs = append(errs, errors.New("no assertion exporter in a traces pipeline of the config (name one with --exporter)"))
	}
	return procID, expID, errors.Join(errs...)
}

// components are the handoff processor and assertion exporter sections of a collector
// config, decoded and validated as the collector validates them (files included).
type components struct {
	procID, expID string
	section       string // exporters, or connectors for an assertion connector
	pcfg          *handoffprocessor.Config
	ecfg          *assertionexporter.Config // the connector's assertions for a connector
}

// loadComponents reads the config and decodes its handoff processor and assertion
// exporter (or connector), validated; report paths of the command line are applied first.
func loadComponents(ctx context.Context, o options) (*components, error) {
	conf, err := loadConfig(ctx, o.config)
	if err != nil {
		return nil, fmt.Errorf("config %s: %w", o.config, err)
	}
	procID, expID, err := pickComponents(conf, o.processor, o.exporter)
	if err != nil {
		return nil, fmt.Errorf("config %s: %w", o.config, err)
	}

	pf := handoffprocessor.NewFactory()
	pcfg := pf.CreateDefaultConfig().(*handoffprocessor.Config)
	if err := unmarshalSection(conf, "processors", procID, pcfg, nil); err != nil {
		return nil, err
	}
	if o.endOfInput {
		// Validated as the user wrote it (above), then lifted for the replay.
		holdUntilEndOfInput(pcfg)
		if err := pcfg.Validate(); err != nil {
			return nil, fmt.Errorf("processors.%s (replay limits): %w", procID, err)
		}
	}
	ef := assertionexporter.NewFactory()
	ecfg := ef.CreateDefaultConfig().(*assertionexporter.Config)
	section := "exporters"
	// Before validation, which checks the files: the paths this run reads and writes.
	adjust := func() error {
		// A recorded-spans file is relative to the config file's folder, as the user reads it.
		base := filepath.Dir(o.config)
		for i := range ecfg.Cases {
			for j := range ecfg.Cases[i].Steps {
				st, ok := ecfg.Cases[i].Steps[j].Kind.(*steps.TopologyStep)
				if ok && st.SpansFile() != "" && !filepath.IsAbs(st.OtelSpansFile) {
					st.OtelSpansFile = filepath.Join(base, st.OtelSpansFile)
				}
			}
		}
		// handoffcheck's own results file replaces the config's JSON lines (set below);
		// report paths on the command line win over the config's; the config's still apply.
		ecfg.Reports.JSONLines = o.jsonOut
		if o.junit != "" {
			ecfg.Reports.JUnit = o.junit
		}
		if o.markdown != "" {
			ecfg.Reports.Markdown = o.markdown
		}
		if o.html != "" {
			ecfg.Reports.HTML = o.html
		}
		return checkReportPaths(configReports(o, ecfg, section+"."+expID), configInputs(o, ecfg))
	}
	// The assertion connector holds the same assertion config (its connector-only keys
	// are not used here): a production config with the connector checks as it runs.
	target := component.Config(ecfg)
	if !conf.IsSet("exporters::"+expID) && conf.IsSet("connectors::"+expID) {
		ccfg := assertionconnector.NewFactory().CreateDefaultConfig().(*assertionconnector.Config)
		section, target, ecfg = "connectors", ccfg, &ccfg.Assertions
	}
	if err := unmarshalSection(conf, section, expID, target, adjust); err != nil {
		return nil, err
	}
	return &components{procID: procID, expID: expID, section: section, pcfg: pcfg, ecfg: ecfg}, nil
}

// newPipeline builds the processor and exporter from the config with the collector's own
// factories, validated as the collector validates them.
func newPipeline(ctx context.Context, o options) (*pipeline, error) {
	c, err := loadComponents(ctx, o)
	if err != nil {
		return nil, err
	}
	procID, expID, pcfg, ecfg := c.procID, c.expID, c.pcfg, c.ecfg
	fileCases := 0
	for _, c := range ecfg.Cases {
		if c.SpansFile() != "" {
			fileCases++
		}
	}
	if o.needInput && fileCases == 0 {
		return nil, errors.New("no span file given, and no case reads one (source FILE)")
	}

	graphOpts, err := pcfg.GraphOptions()
	if err != nil {
		return nil, err
	}
	policy, err := ecfg.Redaction.Compile(ecfg.Judge.Redact...)
	if err != nil {
		return nil, fmt.Errorf("exporters.%s: %w", expID, err)
	}
	pl := &pipeline{index: newTraceIndex(graphOpts, policy.Redact)}
	for _, c := range ecfg.Cases {
		pl.cases = append(pl.cases, c.Name)
	}
	// The traces of FILE cases are read by the exporter itself: their files and services
	// are indexed here, from the same files.
	if err := pl.index.sawFileCases(ecfg.Cases); err != nil {
		return nil, err
	}
	if pl.gates, err = gate.Compile(ecfg.Gates); err != nil {
		return nil, fmt.Errorf("exporters.%s: %w", expID, err)
	}
	if ecfg.Judge.Enabled() {
		pl.judge = &judge.Info{Model: ecfg.Judge.Model, Template: judge.TemplateVersion, Samples: ecfg.Judge.Samples}
	}
	if o.jsonOut != "" {
		if err := os.Remove(o.jsonOut); err != nil && !os.IsNotExist(err) {
			return nil, err // a report is this run's results only
		}
	}
	// A replay grades every trace: a full grading queue makes the replay wait, never turns
	// results into errors.
	ecfg.Judge.BlockOnFullQueue = true

	tel := componenttest.NewNopTelemetrySettings()
	tel.Logger = o.logger
	pl.exp, err = assertionexporter.CreateTracesWithResults(exporter.Settings{
		ID: mustID(expID), TelemetrySettings: tel,
		BuildInfo: component.NewDefaultBuildInfo(),
	}, ecfg, pl.received)
	if err != nil {
		return nil, fmt.Errorf("exporters.%s: %w", expID, err)
	}
	next, err := pl.index.observe(pl.exp)
	if err != nil {
		return nil, err
	}
	if o.endOfInput {
		pl.early = map[pcommon.TraceID]bool{}
		next = pl.watchEarly(next)
	}
	pl.proc, err = handoffprocessor.NewFactory().CreateTraces(ctx, processor.Settings{
		ID: mustID(procID), TelemetrySettings: tel,
		BuildInfo: component.NewDefaultBuildInfo(),
	}, pcfg, next)
	if err != nil {
		return nil, fmt.Errorf("processors.%s: %w", procID, err)
	}
	host := componenttest.NewNopHost()
	if err := pl.exp.Start(ctx, host); err != nil {
		return nil, fmt.Errorf("exporters.%s: %w", expID, err)
	}
	if err := pl.proc.Start(ctx, host); err != nil {
		return nil, fmt.Errorf("processors.%s: %w", procID, err)
	}
	return pl, nil
}

func mustID(id string) component.ID {
	var cid component.ID
	_ = cid.UnmarshalText([]byte(id))
	return cid
}

// unmarshalSection decodes and validates one component's config; adjust (if not nil) runs
// between the two, and its error is returned as it is.
func unmarshalSection(conf *confmap.Conf, kind, id string, cfg component.Config, adjust func() error) error {
	key := kind + "::" + id
	if !conf.IsSet(key) {
		return fmt.Errorf("%s.%s: not in the config", kind, id)
	}
	sub, err := conf.Sub(key)
	if err != nil {
		return fmt.Errorf("%s.%s: %w", kind, id, err)
	}
	if err := sub.Unmarshal(cfg); err != nil {
		return fmt.Errorf("%s.%s: %w", kind, id, err)
	}
	if adjust != nil {
		if err := adjust(); err != nil {
			return err
		}
	}
	if err := confmap.Validate(cfg); err != nil {
		return fmt.Errorf("%s.%s: %w", kind, id, err)
	}
	return nil
}

// finish completes every buffered trace, waits for the exporter's gradings, stops the
// components (reports are written on the exporter's shutdown) and reads the verdicts back.
func (pl *pipeline) finish(ctx context.Context) ([]rules.Result, error) {
	// What EndOfInput forwards carries the mark in its context (see watchEarly).
	err := pl.proc.(handoffprocessor.EndOfInput).EndOfInput(context.WithValue(ctx, endOfInputKey{}, true))
	err = errors.Join(err, pl.proc.Shutdown(ctx))
	// Gradings run off the exporter's hot path: wait for every one before its shutdown
	// (which would cancel them) and before the verdict.
	err = errors.Join(err, pl.exp.(assertionexporter.Drainer).Drain(ctx), pl.exp.Shutdown(ctx))
	if err != nil {
		return nil, err
	}
	pl.mu.Lock()
	defer pl.mu.Unlock()
	return pl.results, nil
}

// received keeps results the exporter hands over.
func (pl *pipeline) received(results []rules.Result) {
	pl.mu.Lock()
	defer pl.mu.Unlock()
	pl.results = append(pl.results, results...)
}

// abort stops the components without judging anything.
func (pl *pipeline) abort(ctx context.Context) {
	_ = pl.proc.Shutdown(ctx)
	_ = pl.exp.Shutdown(ctx)
}

// Replay limits (holdUntilEndOfInput): a wait that never ends within a run, and the
// processor's upper bound of num_traces.
const (
	replayHold      = 100 * 365 * 24 * time.Hour
	replayNumTraces = handoffprocessor.MaxNumTraces
)

// holdUntilEndOfInput makes the processor of a replay release every trace at the end of
// input (EndOfInput), as the README promises: a trace may be split across files, and the
// verdict must not depend on how fast the files are read. quiet_period and max_wait are
// real time in the collector, so a slow read (a large file) released traces before their
// last spans were read; num_traces evicted the oldest traces of a replay holding more. What
// stays is max_spans_per_trace and max_trace_size_bytes (one trace's bounds): a trace over
// them is still released early, and warned of (watchEarly).
func holdUntilEndOfInput(c *handoffprocessor.Config) {
	c.QuietPeriod, c.MaxWait = replayHold, replayHold
	c.NumTraces = replayNumTraces
}

// endOfInputKey marks the context of EndOfInput: what the processor forwards without it
// left before the end of input.
type endOfInputKey struct{}

// watchEarly wraps the processor's destination: the traces of a batch forwarded outside
// EndOfInput (from a release worker, or late spans from ConsumeTraces) are recorded.
func (pl *pipeline) watchEarly(next consumer.Traces) consumer.Traces {
	c, _ := consumer.NewTraces(func(ctx context.Context, td ptrace.Traces) error {
		if ctx.Value(endOfInputKey{}) == nil {
			pl.earlyMu.Lock()
			spanwalk.Each(td, func(_ pcommon.Resource, sp ptrace.Span) {
				if id := sp.TraceID(); !id.IsEmpty() {
					pl.early[id] = true
				}
			})
			pl.earlyMu.Unlock()
		}
		return next.ConsumeTraces(ctx, td)
	}, consumer.WithCapabilities(next.Capabilities()))
	return c
}

// read records a batch read from file (or "live") before the processor takes it: its
// traces' file, its spans without a trace id.
func (pl *pipeline) read(file string, td ptrace.Traces) {
	if n := pl.index.sawFile(file, td); n > 0 {
		pl.noTraceID.Add(int64(n))
	}
}

// warnings are what the run must not pass over in silence: spans nothing judged, traces
// judged on part of their spans. Called once the pipeline finished.
func (pl *pipeline) warnings() []string {
	var out []string
	if n := pl.noTraceID.Load(); n > 0 {
		what := "spans have no trace id and were"
		if n == 1 {
			what = "span has no trace id and was"
		}
		out = append(out, fmt.Sprintf("%d %s not judged", n, what))
	}
	pl.earlyMu.Lock()
	defer pl.earlyMu.Unlock()
	if len(pl.early) > 0 {
		ids := make([]string, 0, len(pl.early))
		for id := range pl.early {
			ids = append(ids, id.String())
		}
		sort.Strings(ids)
		more := ""
		if len(ids) > 3 {
			more = fmt.Sprintf(" and %d more", len(ids)-3)
			ids = ids[:3]
		}
		out = append(out, fmt.Sprintf("%s released before the end of input and judged on part of their spans "+
			"(a trace over max_spans_per_trace or max_trace_size_bytes, more than %d traces at once, or spans "+
			"read after their trace was released): trace %s%s", textsafe.Plural(len(pl.early), "trace was", "traces were"),
			replayNumTraces, strings.Join(ids, ", "), more))
	}
	return out
}

// configReports are the reports the run writes (command line and config merged), each
// named by the flag that set it or else by its config field.
func configReports(o options, ecfg *assertionexporter.Config, where string) []namedPath {
	name := func(flag, flagPath, field string) string {
		if flagPath != "" {
			return flag
		}
		return where + ".reports." + field
	}
	return []namedPath{
		{"--json", ecfg.Reports.JSONLines},
		{name("--junit", o.junit, "junit"), ecfg.Reports.JUnit},
		{name("--markdown", o.markdown, "markdown"), ecfg.Reports.Markdown},
		{name("--html", o.html, "html"), ecfg.Reports.HTML},
	}
}

// configInputs are every file the run reads: the config, the span files, and the
// otelSpansFile of each source FILE case.
func configInputs(o options, ecfg *assertionexporter.Config) []namedPath {
	in := flagInputs(o)
	for i, c := range ecfg.Cases {
		for j, st := range c.Steps {
			if topo, ok := st.Kind.(*steps.TopologyStep); ok && topo.SpansFile() != "" {
				in = append(in, namedPath{fmt.Sprintf("cases[%d] (%s).steps[%d].otelSpansFile", i, c.Name, j), topo.OtelSpansFile})
			}
		}
	}
	return in
}
