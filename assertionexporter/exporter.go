package assertionexporter

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"slices"
	"sort"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"go.opentelemetry.io/collector/component"
	"go.opentelemetry.io/collector/consumer"
	"go.opentelemetry.io/collector/exporter"
	"go.opentelemetry.io/collector/pdata/pcommon"
	"go.opentelemetry.io/collector/pdata/ptrace"
	"go.opentelemetry.io/otel/attribute"
	"go.uber.org/zap"

	"github.com/otelcol-handoff/otelcol-handoff/internal/agentgraph"
	"github.com/otelcol-handoff/otelcol-handoff/internal/gate"
	"github.com/otelcol-handoff/otelcol-handoff/internal/judge"
	"github.com/otelcol-handoff/otelcol-handoff/internal/redact"
	"github.com/otelcol-handoff/otelcol-handoff/internal/report"
	"github.com/otelcol-handoff/otelcol-handoff/internal/rules"
	"github.com/otelcol-handoff/otelcol-handoff/internal/spanfile"
	"github.com/otelcol-handoff/otelcol-handoff/internal/textsafe"
)

type assertionExporter struct {
	cfg       *Config
	logger    *zap.Logger
	telemetry *telemetry
	eval      *rules.Evaluator
	graphOpts agentgraph.Options
	// graphFP is graphOpts' fingerprint (computed once): a graph the handoff processor passed
	// on is reused when it has the same, and its chains must be the same (checkUpstream).
	graphFP agentgraph.Fingerprint
	// judge grades judge-graded rubrics (nil: none configured).
	judge *judge.Client
	// gates and window: per-axis thresholds and the sliding window of rubric scores behind
	// the gate gauges.
	gates  *gate.Set
	window *gate.Window
	now    func() time.Time
	jsonl  *report.JSONLines
	// run collects results for the JUnit, Markdown and HTML reports (nil when none is set or
	// Start failed).
	run      *report.Run
	shutdown sync.Once
	// grading is the queue of traces waiting for the judge, and its workers (nil without a
	// judge).
	grading *gradingQueue
	// writeFailures rate-limits the log of failed JSON-lines writes.
	writeFailures logLimiter
	// policy masks results before they are logged or reported, and judge content.
	policy *redact.Policy
	// unassembledLogged: the Error line about a trace the handoff processor did not hand on
	// was written (once per exporter).
	unassembledLogged atomic.Bool
	// chainsDifferLogged: the Error line about chains that differ from the handoff
	// processor's was written (once per exporter).
	chainsDifferLogged atomic.Bool
	// pricesDifferLogged: the same for prices that differ.
	pricesDifferLogged atomic.Bool
	// built counts the graphs the exporter built itself (none reusable from the handoff
	// processor); the tests read it.
	built atomic.Int64
	// onGraded, when set (the assertion connector), is handed each trace's graded results
	// once they are recorded (masked).
	onGraded GradedFunc
	// verdictsOut: the results are handed out of the engine as they are (the assertion
	// connector's verdicts, made into log records), so they are masked in place as soon as
	// they are decided. Otherwise every writer masks what it writes (log records, reports,
	// JSON lines, handoffcheck), and a result nobody writes is never masked.
	verdictsOut bool
	// onResults, when set (handoffcheck), is handed every result written (or that would be
	// written) to the JSON-lines report.
	onResults ResultsFunc
	// results are result buffers of metrics-only traces (ConsumeTraces, metricsOnly): a
	// trace's results are dead once counted, and the next trace reuses their storage.
	results sync.Pool
}

var _ exporter.Traces = (*assertionExporter)(nil)

func newExporter(set exporter.Settings, cfg *Config, opts ...judge.Option) (*assertionExporter, error) {
	return newEngine(set.TelemetrySettings, attribute.String(ExporterAttr, set.ID.String()), cfg, opts...)
}

// newEngine builds the evaluation engine the exporter and the assertion connector share;
// id names the component on every self-telemetry data point.
func newEngine(set component.TelemetrySettings, id attribute.KeyValue, cfg *Config, opts ...judge.Option) (*assertionExporter, error) {
	tel, err := newTelemetry(set, id)
	if err != nil {
		return nil, err
	}
	graphOpts, err := cfg.graphOptions()
	if err != nil {
		return nil, err
	}
	e := &assertionExporter{
		cfg: cfg, logger: set.Logger, telemetry: tel,
		graphOpts: graphOpts, now: time.Now,
	}
	e.graphFP = e.graphOpts.Fingerprint()
	if e.policy, err = cfg.Redaction.Compile(cfg.Judge.Redact...); err != nil {
		return nil, err
	}
	var grader judge.Grader
	if cfg.Judge.Enabled() {
		// The API key is read from the environment now: a missing variable is a config
		// error naming the variable.
		opts = append([]judge.Option{judge.WithObserver(tel.judgeEvent), judge.WithRedaction(e.policy)}, opts...)
		if e.judge, err = judge.New(cfg.Judge, opts...); err != nil {
			return nil, err
		}
		grader = e.judge
		// Made here, started in Start: a trace that arrives first waits in the queue.
		e.grading = newGradingQueue(e, cfg.Judge.QueueSize, cfg.Judge.BlockOnFullQueue)
	}
	if e.eval, e.gates, err = cfg.compile(grader); err != nil {
		return nil, err
	}
	e.window = gate.NewWindow(e.gates)
	e.telemetry.prepare(e.eval.Cases())
	return e, nil
}

func (e *assertionExporter) Capabilities() consumer.Capabilities {
	return consumer.Capabilities{MutatesData: false}
}

func (e *assertionExporter) Start(ctx context.Context, _ component.Host) error {
	var run *report.Run
	for _, path := range []string{e.cfg.Reports.JUnit, e.cfg.Reports.Markdown, e.cfg.Reports.HTML} {
		if path == "" {
			continue
		}
		if err := report.CheckWritable(path); err != nil {
			return err
		}
		run = report.NewRun(e.eval.CaseNames())
	}
	if run != nil {
		run.SetGates(e.gates)
		run.SetRedaction(e.policy)
		if e.judge != nil {
			run.SetJudge(e.judge.Info())
		}
	}
	e.run = run
	if path := e.cfg.Reports.JSONLines; path != "" {
		w, err := report.OpenJSONLines(path)
		if err != nil {
			return err
		}
		w.SetRedaction(e.policy)
		e.jsonl = w
	}
	if err := e.telemetry.start(); err != nil {
		return err
	}
	e.telemetry.startGates(e.gates)
	if e.judge != nil {
		e.telemetry.startJudge()
		info := e.judge.Info()
		e.logger.Info("assertion exporter judge configured", zap.String("endpoint", e.judge.Endpoint()),
			zap.String("model", info.Model), zap.String("template", info.Template), zap.Int("samples", info.Samples))
	}
	if err := e.judgeFiles(ctx); err != nil {
		return err
	}
	if e.grading != nil {
		e.telemetry.startQueue()
		e.grading.start(e.cfg.Judge.Concurrency)
	}
	if len(e.cfg.Cases) == 0 {
		e.logger.Warn("assertion exporter has no cases: traces are received but nothing is asserted")
	}
	e.logger.Info("assertion exporter started", zap.Int("cases", len(e.cfg.Cases)))
	return nil
}

// ConsumeTraces evaluates every case on every trace of td, in trace-id order (so a batch
// always yields its results in the same order), and records the deterministic results at
// once; a trace's judge gradings go to the grading queue and its graded results are
// recorded when they are done. The handoff processor sends whole traces; spans it marked
// late belong to a trace already judged and are skipped, and spans with an all-zero trace
// id are never judged. It never returns an error: the spans were delivered, and a report
// that cannot be written is counted and logged instead (a retry would duplicate spans).
func (e *assertionExporter) ConsumeTraces(ctx context.Context, td ptrace.Traces) error {
	e.evaluateTraces(ctx, td, nil, true)
	return nil
}

// TraceVerdict is one trace's evaluation as the engine recorded it.
type TraceVerdict struct {
	// Graph is the trace's delegation DAG.
	Graph *agentgraph.Graph
	// Results are the results decided at once, in config order; masked when the engine hands
	// them out (Engine.Evaluate).
	Results []rules.Result
	// Pending counts the results left to the judge's grading queue; they reach GradedFunc
	// when graded.
	Pending int
	// Complete is false when the handoff processor released the trace early.
	Complete bool
}

// evaluateBatch evaluates, records and returns every trace of td (in trace-id order).
// beforeQueue (may be nil) is handed the verdicts before any grading is queued.
func (e *assertionExporter) evaluateBatch(ctx context.Context, td ptrace.Traces, beforeQueue func([]TraceVerdict)) []TraceVerdict {
	return e.evaluateTraces(ctx, td, beforeQueue, false)
}

// evaluateTraces is evaluateBatch; discard (ConsumeTraces) says the caller reads none of
// the verdicts: none are returned, and a metrics-only trace's results buffer is reused.
func (e *assertionExporter) evaluateTraces(ctx context.Context, td ptrace.Traces, beforeQueue func([]TraceVerdict), discard bool) []TraceVerdict {
	reuse := discard && e.metricsOnly()
	// all collects the results for the JSON lines and onResults, when either is set; starts
	// are the JSON lines' timestamps.
	var all []rules.Result
	var starts map[string]time.Time
	if e.jsonl != nil {
		starts = map[string]time.Time{}
	}
	keepAll := e.jsonl != nil || e.onResults != nil
	var jobs []*gradingJob
	// What the processor's hand-off says of each trace, or (spans it does not account for)
	// what the markers on the spans say.
	scans := agentgraph.BatchTraces(ctx, td)
	var idBuf [4]pcommon.TraceID // most batches are one trace (the handoff processor's)
	ids := idBuf[:0]
	for id := range scans {
		ids = append(ids, id)
	}
	slices.SortFunc(ids, func(a, b pcommon.TraceID) int { return bytes.Compare(a[:], b[:]) })
	var out []TraceVerdict
	if !discard {
		out = make([]TraceVerdict, 0, len(ids))
	}
	var byTrace map[pcommon.TraceID][]*agentgraph.Span // wrapped only if a graph must be built
	for _, id := range ids {
		sc := scans[id]
		if id.IsEmpty() {
			e.telemetry.zeroTraceID(ctx, sc.Kept+sc.Late)
			continue
		}
		if sc.Late > 0 {
			e.telemetry.lateSpans(ctx, sc.Late)
		}
		if sc.Kept == 0 {
			continue
		}
		began := time.Now()
		g := agentgraph.SharedGraph(ctx, id, e.graphFP, sc.Kept) // built by the handoff processor
		if g == nil {
			if byTrace == nil {
				byTrace = agentgraph.SpansOf(td)
			}
			g = agentgraph.Build(id, agentgraph.WithoutLate(byTrace[id]), e.graphOpts)
			e.built.Add(1)
		}
		var buf *[]rules.Result
		var ev rules.Evaluation
		if reuse {
			buf = e.resultsBuffer()
			ev = e.checkUpstream(ctx, id, e.eval.EvaluateOutcomesTo(ctx, g, sc.Complete, *buf))
		} else {
			ev = e.checkUpstream(ctx, id, e.eval.EvaluateDeferred(ctx, g, sc.Complete))
		}
		if e.verdictsOut {
			rules.Redact(ev.Now, e.policy)
		}
		if ev.TimedOut {
			e.telemetry.evalTimedOut(ctx)
		}
		tv := TraceVerdict{Graph: g, Complete: sc.Complete}
		if ev.Grading == nil {
			e.record(ctx, g, sc.Complete, time.Since(began), ev.Now)
		} else {
			// The run (JUnit, Markdown) takes the trace's results together once graded, so
			// they keep their config order there.
			e.recordNow(ctx, sc.Complete, time.Since(began), ev.Now)
			jobs = append(jobs, &gradingJob{g: g, grading: ev.Grading})
			tv.Pending = ev.Grading.Len()
		}
		tv.Results = ev.Now
		if buf != nil && ev.Grading == nil {
			// Counted and observed: nothing holds these results any more.
			*buf = ev.Now[:0]
			clear((*buf)[:cap(*buf)])
			e.results.Put(buf)
		}
		if !discard {
			out = append(out, tv)
		}
		if keepAll {
			all = append(all, ev.Now...)
		}
		if starts != nil {
			starts[id.String()] = report.TraceStart(g)
		}
	}
	e.writeJSONLines(ctx, all, starts)
	if beforeQueue != nil && len(jobs) > 0 {
		beforeQueue(out)
	}
	for _, j := range jobs {
		if e.grading != nil {
			e.grading.enqueue(ctx, j)
		}
	}
	return out
}

// resultsBuffer is a results buffer for a metrics-only trace (evaluateTraces).
func (e *assertionExporter) resultsBuffer() *[]rules.Result {
	if b, ok := e.results.Get().(*[]rules.Result); ok {
		return b
	}
	return new([]rules.Result) // the evaluation sizes it
}

// metricsOnly reports whether the metrics are the only output of the results: they read
// each result's case, step, outcome and cluster, and the gate window its rubric scores.
func (e *assertionExporter) metricsOnly() bool {
	return e.cfg.LogVerdicts == LogNone && e.jsonl == nil && e.run == nil &&
		e.onResults == nil && e.onGraded == nil && !e.verdictsOut
}

// handResults hands results to onResults (when set), masked as the JSON-lines report
// writes them.
func (e *assertionExporter) handResults(results []rules.Result) {
	if e.onResults == nil || len(results) == 0 {
		return
	}
	out := make([]rules.Result, len(results))
	for i, r := range results {
		out[i] = rules.RedactResult(r, e.policy)
	}
	e.onResults(out)
}

// writeJSONLines appends results to the JSON-lines report; a failure (disk full) is
// counted and logged, rate-limited, never returned.
func (e *assertionExporter) writeJSONLines(ctx context.Context, results []rules.Result, starts map[string]time.Time) {
	if len(results) == 0 {
		return
	}
	e.handResults(results)
	if e.jsonl == nil {
		return
	}
	if err := e.jsonl.Write(results, starts); err != nil {
		e.telemetry.reportWriteFailed(ctx)
		if suppressed, ok := e.writeFailures.allow(e.now()); ok {
			e.logger.Error("assertion exporter could not write the JSON lines report; verdicts are lost from it (counted in exporter_assertion_report_write_failures)",
				zap.String("path", e.cfg.Reports.JSONLines), zap.Int("results", len(results)),
				zap.Int("failures_not_logged", suppressed), zap.Error(err))
		}
	}
}

// judgeFiles evaluates the cases whose topology reads recorded spans (source FILE), once,
// on every trace of their file, at start-up: a file that cannot be read stops the start
// with an error naming the case. Relative paths are relative to the working directory
// (handoffcheck resolves them against the config file's folder first).
func (e *assertionExporter) judgeFiles(ctx context.Context) error {
	files := e.eval.FileCases()
	names := make([]string, 0, len(files))
	for name := range files {
		names = append(names, name)
	}
	sort.Strings(names)
	var all []rules.Result
	starts := map[string]time.Time{}
	for _, name := range names {
		td, err := spanfile.ReadAll(files[name])
		if err != nil {
			return fmt.Errorf("case %s: otelSpansFile: %w", name, err)
		}
		for _, g := range agentgraph.BuildAll(td, e.graphOpts) {
			began := time.Now()
			results := e.eval.EvaluateFileCaseContext(ctx, name, g)
			e.record(ctx, g, true, time.Since(began), results)
			all = append(all, results...)
			starts[g.TraceID.String()] = report.TraceStart(g)
		}
	}
	e.handResults(all)
	if e.jsonl != nil && len(all) > 0 {
		return e.jsonl.Write(all, starts)
	}
	return nil
}

// record counts, logs and keeps one trace's results for the reports (each writer masks
// what it writes).
func (e *assertionExporter) record(ctx context.Context, g *agentgraph.Graph, complete bool, took time.Duration, results []rules.Result) {
	e.recordNow(ctx, complete, took, results)
	e.logTrace(g, results)
	if e.run != nil {
		e.run.Add(g, results)
	}
}

// recordNow counts and logs a trace's deterministic results, and feeds the gate window.
// The counters read only config names, outcomes and clusters; the log records and the gate
// pairs are masked where they are written (log, observe).
func (e *assertionExporter) recordNow(ctx context.Context, complete bool, took time.Duration, results []rules.Result) {
	e.telemetry.evaluated(ctx, complete, took, results)
	e.observe(ctx, results)
}

// observe feeds the gate window (its pairs are agent names, masked: they become metric
// attributes) and logs results.
func (e *assertionExporter) observe(ctx context.Context, results []rules.Result) {
	pairs := rules.Scores(results)
	for i := range pairs {
		pairs[i].From, pairs[i].To = e.policy.Redact(pairs[i].From), e.policy.Redact(pairs[i].To)
	}
	if scores := e.window.Add(e.now(), pairs); len(scores) > 0 {
		e.telemetry.gateScores(ctx, scores)
	}
	e.log(results)
}

// recordGraded records a trace's graded results the way its deterministic ones were, and
// hands the run every result of the trace, in config order.
func (e *assertionExporter) recordGraded(ctx context.Context, j *gradingJob, all, graded []rules.Result) {
	rules.Redact(graded, e.policy) // judge reasons quote content too
	rules.Redact(all, e.policy)
	e.telemetry.graded(ctx, graded)
	e.observe(ctx, graded)
	e.logTrace(j.g, all)
	if e.run != nil {
		e.run.Add(j.g, all)
	}
	e.writeJSONLines(ctx, graded, map[string]time.Time{j.g.TraceID.String(): report.TraceStart(j.g)})
	if e.onGraded != nil {
		e.onGraded(ctx, j.g, graded)
	}
}

// log writes one short record per result the config asks for: the message once (the
// record's message, "assertion OUTCOME: MESSAGE"), the trace id, case, step and outcome,
// and for a failure or an error what was expected and seen; trace_complete only when the
// trace was released incomplete; a rubric result adds its handoff, axis, score and judge.
// The GenAI gen_ai.evaluation.result records, with every field, are the assertion
// connector's logs output.
func (e *assertionExporter) log(results []rules.Result) {
	if e.cfg.LogVerdicts == LogNone {
		return
	}
	for _, r := range results {
		failed := r.Outcome == rules.Fail || r.Outcome == rules.Error
		if !failed && e.cfg.LogVerdicts != LogAll {
			continue
		}
		// A copy, masked only here, when it is written.
		r = rules.RedactResult(r, e.policy)
		esc := textsafe.Escape // trace text: no forged lines or terminal escapes in any encoder
		fields := []zap.Field{
			zap.String("trace_id", r.TraceID),
			zap.String("case", r.Case),
			zap.String("step", r.Step),
			zap.String("outcome", string(r.Outcome)),
		}
		if failed {
			fields = append(fields, zap.String("expected", esc(r.Expected)), zap.String("actual", esc(r.Actual)))
		}
		if r.Outcome == rules.Fail {
			fields = append(fields, zap.String("cluster", string(r.Cluster.Or())), zap.String("signature", r.Signature))
		}
		if !r.Complete {
			fields = append(fields, zap.Bool("trace_complete", false))
		}
		if r.Axis != "" {
			fields = append(fields, zap.String("handoff.source", esc(r.From)), zap.String("handoff.target", esc(r.To)), zap.String("axis", r.Axis))
		}
		if r.Score != nil {
			fields = append(fields, zap.Float64("gen_ai.evaluation.score.value", *r.Score))
		}
		if r.Judge != nil {
			fields = append(fields, zap.String("judge.model", r.Judge.Model), zap.String("judge.template", r.Judge.Template))
		}
		if failed {
			e.logger.Warn("assertion "+string(r.Outcome)+": "+esc(r.Message), fields...)
		} else {
			e.logger.Info("assertion "+string(r.Outcome)+": "+esc(r.Message), fields...)
		}
	}
}

// logTrace writes the one info line of a judged trace (unless log_verdicts is none), once
// all its results are in: "trace ID root AGENT: 5 pass, 1 fail" (outcomes with no result
// left out; "(released incomplete)" after the agent when it was). The agent name is masked here.
func (e *assertionExporter) logTrace(g *agentgraph.Graph, results []rules.Result) {
	if e.cfg.LogVerdicts == LogNone || len(results) == 0 {
		return
	}
	counts := map[rules.Outcome]int{}
	complete := true
	for _, r := range results {
		counts[r.Outcome]++
		complete = complete && r.Complete
	}
	var b strings.Builder
	b.WriteString("trace " + results[0].TraceID)
	switch {
	case g != nil && g.Root != nil:
		b.WriteString(" root " + textsafe.Escape(e.policy.Redact(g.Root.Name)))
	case g != nil && g.RootSpan != nil:
		b.WriteString(" root span " + textsafe.Escape(e.policy.Redact(g.RootSpan.SpanName())))
	}
	if !complete {
		b.WriteString(" (released incomplete)")
	}
	b.WriteString(":")
	sep := " "
	for _, o := range rules.Outcomes {
		if n := counts[o]; n > 0 {
			fmt.Fprintf(&b, "%s%d %s", sep, n, o)
			sep = ", "
		}
	}
	e.logger.Info(b.String())
}

// Drain waits until every queued grading is recorded (or ctx is done). handoffcheck calls
// it at the end of its input, so its verdict sees every graded result.
func (e *assertionExporter) Drain(ctx context.Context) error {
	if e.grading == nil {
		return nil
	}
	return e.grading.drain(ctx)
}

// Drainer is implemented by the assertion exporter: Drain waits for the grading queue to
// empty.
type Drainer interface {
	Drain(ctx context.Context) error
}

var _ Drainer = (*assertionExporter)(nil)

// Shutdown cancels the outstanding gradings (queued ones are never sent, requests in
// flight are canceled) and records their results as errors ("shut down before grading"),
// then closes the JSON-lines report and writes the JUnit, Markdown and HTML reports, each
// atomically (a temporary file renamed into place). It returns within shutdown_timeout
// (or ctx's deadline, if sooner) plus the time to write the reports. Repeated calls do
// nothing more.
func (e *assertionExporter) Shutdown(ctx context.Context) error {
	var errs []error
	e.shutdown.Do(func() {
		if e.grading != nil {
			e.grading.stop(ctx, e.cfg.ShutdownTimeout)
		}
		if e.judge != nil {
			e.judge.Close()
		}
		if e.jsonl != nil {
			errs = append(errs, e.jsonl.Close())
		}
		if e.run == nil {
			return
		}
		if path := e.cfg.Reports.JUnit; path != "" {
			errs = append(errs, report.WriteFileAtomic(path, e.run.JUnit()))
		}
		if path := e.cfg.Reports.Markdown; path != "" {
			errs = append(errs, report.WriteFileAtomic(path, e.run.Markdown()))
		}
		if path := e.cfg.Reports.HTML; path != "" {
			errs = append(errs, report.WriteFileAtomic(path, e.run.HTML()))
		}
	})
	return errors.Join(errs...)
}

// SourceNamer is implemented by the assertion exporter: handoffcheck names the span file
// each trace was read from, and the reports show it beside the trace id.
type SourceNamer interface {
	SetTraceSource(traceID, file string)
}

var _ SourceNamer = (*assertionExporter)(nil)

// SetTraceSource names the span file a trace was read from in the JUnit, Markdown and HTML
// reports' run (nothing without one).
func (e *assertionExporter) SetTraceSource(traceID, file string) {
	if e.run != nil {
		e.run.SetSource(traceID, file)
	}
}
