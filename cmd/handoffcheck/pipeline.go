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

	"go.opentelemetry.io/collector/component"
	"go.opentelemetry.io/collector/component/componenttest"
	"go.opentelemetry.io/collector/confmap"
	"go.opentelemetry.io/collector/confmap/provider/envprovider"
	"go.opentelemetry.io/collector/confmap/provider/fileprovider"
	"go.opentelemetry.io/collector/exporter"
	"go.opentelemetry.io/collector/processor"
	"go.uber.org/zap"

	"github.com/otelcol-handoff/otelcol-handoff/assertionexporter"
	"github.com/otelcol-handoff/otelcol-handoff/connector/assertionconnector"
	"github.com/otelcol-handoff/otelcol-handoff/handoffprocessor"
	"github.com/otelcol-handoff/otelcol-handoff/internal/gate"
	"github.com/otelcol-handoff/otelcol-handoff/internal/judge"
	"github.com/otelcol-handoff/otelcol-handoff/internal/rules"
	"github.com/otelcol-handoff/otelcol-handoff/internal/rules/steps"
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
	logger    *zap.Logger
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
	ef := assertionexporter.NewFactory()
	ecfg := ef.CreateDefaultConfig().(*assertionexporter.Config)
	// Before validation, which checks the files: the paths this run reads and writes.
	adjust := func() {
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
	}
	// The assertion connector holds the same assertion config (its connector-only keys
	// are not used here): a production config with the connector checks as it runs.
	section, target := "exporters", component.Config(ecfg)
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
	pl := &pipeline{index: newTraceIndex(graphOpts)}
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
// between the two.
func unmarshalSection(conf *confmap.Conf, kind, id string, cfg component.Config, adjust func()) error {
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
		adjust()
	}
	if err := confmap.Validate(cfg); err != nil {
		return fmt.Errorf("%s.%s: %w", kind, id, err)
	}
	return nil
}

// finish completes every buffered trace, waits for the exporter's gradings, stops the
// components (reports are written on the exporter's shutdown) and reads the verdicts back.
func (pl *pipeline) finish(ctx context.Context) ([]rules.Result, error) {
	err := pl.proc.(handoffprocessor.EndOfInput).EndOfInput(ctx)
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
