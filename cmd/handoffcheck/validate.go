package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"sort"
	"strings"

	"github.com/spf13/cobra"
	"go.opentelemetry.io/collector/component"
	"go.opentelemetry.io/collector/component/componenttest"
	"go.opentelemetry.io/collector/exporter"

	"github.com/otelcol-handoff/otelcol-handoff/assertionexporter"
	"github.com/otelcol-handoff/otelcol-handoff/internal/agentgraph"
	"github.com/otelcol-handoff/otelcol-handoff/internal/rules"
	"github.com/otelcol-handoff/otelcol-handoff/internal/rules/expect"
	"github.com/otelcol-handoff/otelcol-handoff/internal/spanfile"
	"github.com/otelcol-handoff/otelcol-handoff/internal/textsafe"
)

func validateCommand(stdout, stderr io.Writer, code *int) *cobra.Command {
	var o options
	var strict bool
	cmd := &cobra.Command{
		Use:   "validate --config collector.yaml [flags] [FILE...]",
		Short: "Check a config, and warn about rules the given traces never exercise",
		Long: "Checks the handoff processor and assertion exporter (or connector) of the collector config as\n" +
			"replay and run do (every otelSpansFile readable, every report directory writable, CEL compiled),\n" +
			"without judging anything, calling a judge or writing a report. Given span files (and the files of\n" +
			"source FILE cases), it warns about what the traces never show: an agent or a tool a rule names that\n" +
			"no trace has, a case that selects none of the traces. Exit 0 (valid; warnings too, unless\n" +
			"--strict: then 1), 2 (invalid config, unreadable span file).\n" +
			"The rest of the collector config (receivers, other exporters) is checked by `otelcol-handoff validate`.\n" + spanFilesHelp,
		RunE: func(cmd *cobra.Command, args []string) error {
			if o.config == "" {
				return usageError{err: errors.New("--config is required")}
			}
			o.inputs = args
			*code = validate(cmd.Context(), o, args, strict, stdout, stderr)
			return nil
		},
	}
	fs := cmd.Flags()
	fs.StringVar(&o.config, "config", "", "collector config file (required)")
	fs.StringVar(&o.processor, "processor", "", "handoff processor id in the config (default: the one in the traces pipeline)")
	fs.StringVar(&o.exporter, "exporter", "", "assertion exporter id in the config (default: the one in the traces pipeline)")
	fs.BoolVar(&strict, "strict", false, "exit 1 when there is a warning")
	return cmd
}

// nameRef is a name a rule gives: an agent or a tool, and where in the config.
type nameRef struct {
	where, kind, name string
}

const (
	kindAgent = "agent"
	kindTool  = "tool"
)

// caseRefs lists the agents and tools a case's steps and test-case fields name.
func caseRefs(where string, c rules.CaseConfig) []nameRef {
	var out []nameRef
	for j, s := range c.Steps {
		at := fmt.Sprintf("%s.steps[%d]", where, j)
		for _, n := range s.Names() {
			kind := kindAgent
			if n.Tool {
				kind = kindTool
			}
			out = append(out, nameRef{at + "." + n.Key, kind, n.Name})
		}
	}
	return append(out, expectationRefs(where, c.AgentExpectations)...)
}

// expectationRefs lists the names of test-case fields (those of child agents included).
func expectationRefs(where string, a expect.AgentExpectations) []nameRef {
	var out []nameRef
	for i, t := range a.ExpectedToolCalls {
		out = append(out, nameRef{fmt.Sprintf("%s.%s[%d]", where, expect.FieldExpectedToolCalls, i), kindTool, t.Tool})
	}
	for i, t := range a.ExpectedToolCallOrder {
		out = append(out, nameRef{fmt.Sprintf("%s.%s[%d]", where, expect.FieldExpectedToolCallOrder, i), kindTool, t})
	}
	for i, t := range a.ExpectedNoToolCalls {
		out = append(out, nameRef{fmt.Sprintf("%s.%s[%d]", where, expect.FieldExpectedNoToolCalls, i), kindTool, t})
	}
	specs := a.ExpectedChildAgents.Specs()
	names := make([]string, 0, len(specs))
	for name := range specs {
		names = append(names, name)
	}
	sort.Strings(names)
	for _, name := range names {
		at := fmt.Sprintf("%s.%s.%s", where, expect.FieldExpectedChildAgents, name)
		out = append(out, nameRef{at, kindAgent, name})
		if spec := specs[name]; spec != nil {
			out = append(out, expectationRefs(at, spec.AgentExpectations)...)
		}
	}
	return out
}

// traceSet is the traces a case is checked against: their agents and tools.
type traceSet struct {
	what          string // "the 2 traces given", "the 1 trace of file x.json"
	graphs        []*agentgraph.Graph
	agents, tools map[string]bool
	mask          func(string) string // the exporter's redaction, for the names a warning lists
}

func newTraceSet(what string, graphs []*agentgraph.Graph, mask func(string) string) *traceSet {
	ts := &traceSet{what: what, graphs: graphs, agents: map[string]bool{}, tools: map[string]bool{}, mask: mask}
	x := newTraceIndex(agentgraph.Options{}, mask)
	for _, g := range graphs {
		x.sawGraph(g)
		ti := x.lookup(g.TraceID.String())
		for _, a := range ti.agents {
			ts.agents[a] = true
		}
		for _, t := range ti.tools {
			ts.tools[t] = true
		}
	}
	return ts
}

func (ts *traceSet) seen(kind string) []string {
	m := ts.agents
	if kind == kindTool {
		m = ts.tools
	}
	out := make([]string, 0, len(m))
	for n := range m {
		out = append(out, n)
	}
	sort.Strings(out)
	return out
}

func tracesText(n int) string { return textsafe.Plural(n, "trace", "traces") }

// validate checks the config, then (with traces) what the rules would never exercise.
func validate(ctx context.Context, o options, files []string, strict bool, stdout, stderr io.Writer) int {
	c, err := loadComponents(ctx, o)
	if err != nil {
		printError(stderr, err)
		return exitUsage
	}
	ecfg := c.ecfg
	// Compiled without a judge: nothing here calls one (judged parts end skipped).
	ev, err := rules.Compile(ecfg.Cases, rules.Options{Defaults: ecfg.Defaults, CostLimit: ecfg.EvalCostLimit, Rubrics: ecfg.Rubrics})
	if err != nil {
		printError(stderr, fmt.Errorf("%s.%s: %w", c.section, c.expID, err))
		return exitUsage
	}
	policy, err := ecfg.Redaction.Compile(ecfg.Judge.Redact...)
	if err != nil {
		printError(stderr, fmt.Errorf("%s.%s: %w", c.section, c.expID, err))
		return exitUsage
	}
	// Made as replay makes it, not started: what only the component checks (the judge's
	// key in the environment, the judge's redaction patterns) fails here too.
	if _, err := assertionexporter.CreateTracesWithResults(exporter.Settings{
		ID: mustID(c.expID), TelemetrySettings: componenttest.NewNopTelemetrySettings(),
		BuildInfo: component.NewDefaultBuildInfo(),
	}, ecfg, nil); err != nil {
		printError(stderr, fmt.Errorf("%s.%s: %w", c.section, c.expID, err))
		return exitUsage
	}
	printLine(stdout, "handoffcheck: %s is valid: processors.%s, %s.%s, %s", o.config, c.procID,
		c.section, c.expID, textsafe.Plural(len(ecfg.Cases), "case", "cases"))

	opts, err := c.pcfg.GraphOptions()
	if err != nil {
		printError(stderr, fmt.Errorf("processors.%s: %w", c.procID, err))
		return exitUsage
	}
	var given *traceSet
	noTraceID := 0
	if len(files) > 0 {
		td, err := spanfile.ReadAll(files...)
		if err != nil {
			printLine(stderr, "handoffcheck: %v", err)
			return exitUsage
		}
		noTraceID = newTraceIndex(opts, policy.Redact).sawFile("", td)
		graphs := agentgraph.BuildAll(td, opts)
		given = newTraceSet(fmt.Sprintf("the %s given", tracesText(len(graphs))), graphs, policy.Redact)
	}
	fileSets := map[string]*traceSet{}
	var all []*agentgraph.Graph
	if given != nil {
		all = append(all, given.graphs...)
	}
	for _, cc := range ecfg.Cases {
		f := cc.SpansFile()
		if f == "" || fileSets[f] != nil {
			continue
		}
		td, err := spanfile.ReadAll(f)
		if err != nil {
			printLine(stderr, "handoffcheck: %v", err)
			return exitUsage
		}
		graphs := agentgraph.BuildAll(td, opts)
		fileSets[f] = newTraceSet(fmt.Sprintf("the %s of %s", tracesText(len(graphs)), f), graphs, policy.Redact)
		all = append(all, graphs...)
	}

	// Which traces each case selects: a case that selects a trace gives results on it.
	selected := map[string]int{}
	if given != nil {
		for _, g := range given.graphs {
			seen := map[string]bool{}
			for _, r := range ev.Evaluate(g, true) {
				seen[r.Case] = true
			}
			for name := range seen {
				selected[name]++
			}
		}
	}
	for _, cc := range ecfg.Cases {
		if ts := fileSets[cc.SpansFile()]; ts != nil {
			for _, g := range ts.graphs {
				if len(ev.EvaluateFileCase(cc.Name, g)) > 0 {
					selected[cc.Name]++
				}
			}
		}
	}

	var warnings []string
	warn := func(format string, args ...any) { warnings = append(warnings, fmt.Sprintf(format, args...)) }
	if noTraceID > 0 {
		warn("%d spans of the files given have no trace id: replay would not judge them", noTraceID)
	}
	unchecked := 0
	for i, cc := range ecfg.Cases {
		where := fmt.Sprintf("cases[%d] (%s)", i, cc.Name)
		ts := given
		if f := cc.SpansFile(); f != "" {
			ts = fileSets[f]
		}
		if ts == nil {
			unchecked++
			continue
		}
		if selected[cc.Name] == 0 {
			why := "no trace has an agent span"
			if strings.TrimSpace(cc.When) != "" {
				why = "its when condition is false on every one, or no trace has an agent span"
			}
			warn("%s: selects no trace of %s (%s)", where, ts.what, why)
		}
		for _, ref := range caseRefs(where, cc) {
			warnRef(warn, ref, ts)
		}
	}
	if len(all) > 0 {
		defaults := newTraceSet(fmt.Sprintf("the %s", tracesText(len(all))), all, policy.Redact)
		for _, ref := range expectationRefs("defaults", ecfg.Defaults.AgentExpectations) {
			warnRef(warn, ref, defaults)
		}
	}
	for _, w := range warnings {
		printLine(stdout, "WARN %s", w)
	}
	switch {
	case given == nil && len(fileSets) == 0:
		fmt.Fprintln(stdout, "handoffcheck: no span files given: the rules were not checked against traces "+
			"(validate --config c.yaml spans.json warns about agents, tools and cases the traces never show)")
	case unchecked > 0:
		fmt.Fprintf(stdout, "handoffcheck: %s of live traces not checked against traces: no span files given\n",
			textsafe.Plural(unchecked, "case", "cases"))
	}
	fmt.Fprintf(stdout, "handoffcheck: %s\n", textsafe.Plural(len(warnings), "warning", "warnings"))
	if strict && len(warnings) > 0 {
		return exitFail
	}
	return exitPass
}

// warnRef warns when a rule names an agent or a tool the traces never show.
func warnRef(warn func(string, ...any), ref nameRef, ts *traceSet) {
	seen := ts.seen(ref.kind)
	known := ts.agents
	if ref.kind == kindTool {
		known = ts.tools
	}
	if known[ref.name] {
		return
	}
	list := "none"
	if len(seen) > 0 {
		for i, n := range seen {
			seen[i] = ts.mask(n)
		}
		list = strings.Join(seen, ", ")
	}
	warn("%s: %s %s never appears in %s (%ss seen: %s)", ref.where, ref.kind, ref.name, ts.what, ref.kind, list)
}
