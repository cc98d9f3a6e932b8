package assertionexporter

import (
	"context"

	"go.opentelemetry.io/collector/component"
	"go.opentelemetry.io/collector/exporter"
	"go.opentelemetry.io/collector/pdata/ptrace"
	"go.opentelemetry.io/otel/attribute"

	"github.com/otelcol-handoff/otelcol-handoff/internal/agentgraph"
	"github.com/otelcol-handoff/otelcol-handoff/internal/rules"
)

// GradedFunc receives one trace's graded results (masked) when the judge has decided them.
type GradedFunc func(ctx context.Context, g *agentgraph.Graph, graded []rules.Result)

// ResultsFunc receives results as the exporter writes them to its JSON-lines report
// (masked as there), whether or not a report is configured; it may be called concurrently.
type ResultsFunc func(results []rules.Result)

// CreateTracesWithResults creates the exporter as its factory does, handing every result
// to fn in process (handoffcheck's verdict).
func CreateTracesWithResults(set exporter.Settings, cfg *Config, fn ResultsFunc) (exporter.Traces, error) {
	e, err := newExporter(set, cfg)
	if err != nil {
		return nil, err
	}
	e.onResults = fn
	return e, nil
}

// Engine is the exporter's evaluation engine (compiled cases, judge and grading queue,
// gates, reports, self-telemetry) for the assertion connector, so both components run the
// same code on the same Config.
type Engine struct {
	e *assertionExporter
}

// NewEngine builds an engine from a validated Config for the component id (its
// self-telemetry carries connector = id). graded (may be nil) receives the results the
// judge decides later; without it they are still counted, logged and reported.
func NewEngine(set component.TelemetrySettings, id component.ID, cfg *Config, graded GradedFunc) (*Engine, error) {
	e, err := newEngine(set, attribute.String(ConnectorAttr, id.String()), cfg)
	if err != nil {
		return nil, err
	}
	e.onGraded = graded
	e.verdictsOut = true
	return &Engine{e: e}, nil
}

// Start opens the reports, judges FILE cases and starts the grading workers.
func (en *Engine) Start(ctx context.Context, host component.Host) error {
	return en.e.Start(ctx, host)
}

// Evaluate evaluates every trace of td as the exporter's ConsumeTraces does (counted,
// logged, reported; judge gradings queued) and returns each trace's deterministic results.
// beforeQueue (may be nil) is handed the same verdicts when some wait for the judge, before
// their gradings are queued: what the caller keeps for GradedFunc must be in place then,
// since a worker may finish a grading at once, and a grading refused (queue full, shut
// down) reaches GradedFunc before Evaluate returns.
func (en *Engine) Evaluate(ctx context.Context, td ptrace.Traces, beforeQueue func([]TraceVerdict)) []TraceVerdict {
	return en.e.evaluateBatch(ctx, td, beforeQueue)
}

// Drain waits until every queued grading is recorded (or ctx is done).
func (en *Engine) Drain(ctx context.Context) error { return en.e.Drain(ctx) }

// Shutdown ends the gradings (as errors) and writes the reports, as the exporter does.
func (en *Engine) Shutdown(ctx context.Context) error { return en.e.Shutdown(ctx) }

// GraphOptions are the options the engine builds graphs with (chains).
func (en *Engine) GraphOptions() agentgraph.Options { return en.e.graphOpts }

// Redact masks s with the engine's redaction policy, for trace text the connector writes
// itself (agent names on its metrics).
func (en *Engine) Redact(s string) string { return en.e.policy.Redact(s) }

// Step returns the config of one step by case name and step id (ok false when unknown).
func (c *Config) Step(caseName, stepID string) (rules.StepConfig, bool) {
	for _, cs := range c.Cases {
		if cs.Name != caseName {
			continue
		}
		for i, st := range cs.Steps {
			if st.ID(i) == stepID {
				return st, true
			}
		}
	}
	return rules.StepConfig{}, false
}
