package main

import (
	"encoding/json"
	"io"

	"github.com/otelcol-handoff/otelcol-handoff/internal/cluster"
	"github.com/otelcol-handoff/otelcol-handoff/internal/gate"
	"github.com/otelcol-handoff/otelcol-handoff/internal/judge"
	"github.com/otelcol-handoff/otelcol-handoff/internal/report"
	"github.com/otelcol-handoff/otelcol-handoff/internal/rules"
	"github.com/otelcol-handoff/otelcol-handoff/internal/verdict"
)

// summary is what --summary json prints: one JSON object for scripts.
type summary struct {
	// ExitCode is handoffcheck's exit code; CommandExitCode the wrapped command's (run).
	ExitCode        int    `json:"exit_code"`
	CommandExitCode *int   `json:"command_exit_code,omitempty"`
	Error           string `json:"error,omitempty"`
	Traces          int    `json:"traces"`
	Assertions      int    `json:"assertions"`
	Counts          counts `json:"counts"`
	// Cases are every case of the config, in config order (a case that selected no trace
	// has traces 0).
	Cases []*caseSummary `json:"cases"`
	Gates []gate.Result  `json:"gates,omitempty"`
	Judge *judge.Info    `json:"judge,omitempty"`
	// Clusters are the failures per cluster (catalogue order); Signatures the failures
	// grouped by signature, with counts, first and last seen, representative traces and the
	// immediate_fix (internal/cluster).
	Clusters   []cluster.Total `json:"clusters"`
	Signatures []cluster.Group `json:"signatures"`
	// Warnings are the warning lines of stderr (without "handoffcheck: "): spans without a
	// trace id, traces released before the end of input.
	Warnings []string `json:"warnings,omitempty"`

	byName   map[string]*caseSummary
	clusters *cluster.Grouper
}

// counts are assertion results by outcome (the run's verdict owns them).
type counts = verdict.Counts

type caseSummary struct {
	Name   string `json:"name"`
	Traces int    `json:"traces"`
	Counts counts `json:"counts"`
	// NotPassed are the case's failed, errored and skipped results, as the console prints them.
	NotPassed []notPassed `json:"not_passed"`

	traces map[string]bool
}

type notPassed struct {
	Step    string   `json:"step"`
	Outcome string   `json:"outcome"`
	TraceID string   `json:"trace_id"`
	Files   []string `json:"files,omitempty"`
	Service string   `json:"service,omitempty"`
	Gated   bool     `json:"gated,omitempty"`
	Message string   `json:"message"`
	// Cluster and Signature name a failure's cluster (internal/cluster).
	Cluster   cluster.Name `json:"cluster,omitempty"`
	Signature string       `json:"signature,omitempty"`
}

func newSummary(cases []string) *summary {
	s := &summary{
		Cases: []*caseSummary{}, byName: map[string]*caseSummary{}, clusters: cluster.NewGrouper(),
		Clusters: []cluster.Total{}, Signatures: []cluster.Group{},
	}
	for _, name := range cases {
		s.caseNamed(name)
	}
	return s
}

func (s *summary) caseNamed(name string) *caseSummary {
	c := s.byName[name]
	if c == nil {
		c = &caseSummary{Name: name, NotPassed: []notPassed{}, traces: map[string]bool{}}
		s.byName[name] = c
		s.Cases = append(s.Cases, c)
	}
	return c
}

// add counts one result (the results come sorted by case and trace).
func (s *summary) add(r rules.Result, gatedFail bool, info traceInfo) {
	s.Counts.Add(r)
	c := s.caseNamed(r.Case)
	c.Counts.Add(r)
	if !c.traces[r.TraceID] {
		c.traces[r.TraceID] = true
		c.Traces++
	}
	if r.Outcome != rules.Pass {
		c.NotPassed = append(c.NotPassed, notPassed{
			Step: r.Step, Outcome: string(r.Outcome), TraceID: r.TraceID, Files: info.fileList(),
			Service: info.service, Gated: gatedFail, Message: r.Message, Cluster: r.Cluster, Signature: r.Signature,
		})
	}
	if f, ok := report.Failure(r, info.start); ok {
		s.clusters.Add(f)
	}
}

// runReport is what a replay or run learned for the JSON summary: the verdict's summary,
// or the error that stopped it.
type runReport struct {
	summary         *summary
	err             string
	commandExitCode *int
	warnings        []string
}

// fail prints an error (see printError), keeps it for the summary and returns exit 2.
func (o options) fail(stderr io.Writer, err error) int {
	o.note(func(r *runReport) { r.err = err.Error() })
	printError(stderr, err)
	return exitUsage
}

// note records something for the JSON summary (nothing without a report).
func (o options) note(f func(*runReport)) {
	if o.report != nil {
		f(o.report)
	}
}

// finish prints the JSON summary when asked for, and returns the exit code.
func finish(o options, code int, stdout io.Writer) int {
	if !o.summaryJSON {
		return code
	}
	s := o.report.summary
	if s == nil {
		s = newSummary(nil)
	}
	s.ExitCode, s.Error, s.CommandExitCode = code, o.report.err, o.report.commandExitCode
	s.Warnings = o.report.warnings
	cs := s.clusters.Summary()
	s.Clusters, s.Signatures = cs.Clusters, cs.Groups
	enc := json.NewEncoder(stdout)
	enc.SetEscapeHTML(false) // `<=` in a message stays `<=`
	_ = enc.Encode(s)
	return code
}
