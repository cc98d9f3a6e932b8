package assertionexporter

import (
	"context"
	"time"

	"go.opentelemetry.io/collector/component"
	"go.opentelemetry.io/otel/attribute"
	"go.opentelemetry.io/otel/metric"

	"github.com/otelcol-handoff/otelcol-handoff/assertionexporter/internal/metadata"
	"github.com/otelcol-handoff/otelcol-handoff/internal/cluster"
	"github.com/otelcol-handoff/otelcol-handoff/internal/gate"
	"github.com/otelcol-handoff/otelcol-handoff/internal/judge"
	"github.com/otelcol-handoff/otelcol-handoff/internal/rubric"
	"github.com/otelcol-handoff/otelcol-handoff/internal/rules"
)

// telemetry records the exporter's metrics. Attribute values come only from the config
// (case and step names, the component id) and fixed sets (outcomes), never from trace data.
type telemetry struct {
	tb *metadata.TelemetryBuilder
	// id is on every data point: exporter = the component id (connector = ... for the
	// assertion connector's engine), so two instances with the same case names never
	// share a series. The collector v0.161.0 adds otelcol.component.id only behind its
	// alpha telemetry.newPipelineTelemetry gate.
	id   attribute.KeyValue
	only metric.MeasurementOption
	// complete, latency and steps are the attribute sets recorded per trace, built once (an
	// attribute set is sorted and allocated when made), each as the option list it is
	// recorded with (a list passed as is is not allocated per call): complete by the
	// complete flag, latency the component's alone, steps those of every case and step of
	// the config (prepare).
	complete [2][]metric.AddOption
	latency  []metric.RecordOption
	steps    map[stepKey]*stepAttrs
}

type stepKey struct{ c, step string }

// stepAttrs are the attribute sets of one step's data points: its evaluations by outcome
// (in rules.Outcomes order), its failures by cluster.
type stepAttrs struct {
	eval [][]metric.AddOption
	fail map[cluster.Name][]metric.AddOption
}

// outcomeIndex is o's index in rules.Outcomes (stepAttrs.eval's).
func outcomeIndex(o rules.Outcome) (int, bool) {
	for i, x := range rules.Outcomes {
		if x == o {
			return i, true
		}
	}
	return 0, false
}

// Attribute keys naming the component whose engine records.
const (
	ExporterAttr  = "exporter"
	ConnectorAttr = "connector"
)

func newTelemetry(set component.TelemetrySettings, id attribute.KeyValue) (*telemetry, error) {
	tb, err := metadata.NewTelemetryBuilder(set)
	if err != nil {
		return nil, err
	}
	t := &telemetry{tb: tb, id: id, only: metric.WithAttributeSet(attribute.NewSet(id))}
	t.complete = [2][]metric.AddOption{{t.attrs(attribute.Bool("complete", false))}, {t.attrs(attribute.Bool("complete", true))}}
	t.latency = []metric.RecordOption{t.only}
	return t, nil
}

// prepare builds the attribute sets of every case, step and outcome of the config; it is
// called once, before the engine records anything.
func (t *telemetry) prepare(cases map[string][]string) {
	t.steps = make(map[stepKey]*stepAttrs)
	for c, steps := range cases {
		for _, s := range steps {
			sa := &stepAttrs{eval: make([][]metric.AddOption, len(rules.Outcomes)), fail: make(map[cluster.Name][]metric.AddOption)}
			for i, o := range rules.Outcomes {
				sa.eval[i] = []metric.AddOption{t.newEvalAttrs(c, s, o)}
			}
			for _, cl := range cluster.Names() {
				sa.fail[cl] = []metric.AddOption{t.newFailAttrs(c, s, cl)}
			}
			t.steps[stepKey{c, s}] = sa
		}
	}
}

func (t *telemetry) attrs(kvs ...attribute.KeyValue) metric.MeasurementOption {
	return metric.WithAttributeSet(attribute.NewSet(append(kvs, t.id)...))
}

// evalAttrs is the attribute set of a rule evaluation's data point.
func (t *telemetry) evalAttrs(c, step string, o rules.Outcome) []metric.AddOption {
	if i, ok := outcomeIndex(o); ok {
		if sa := t.steps[stepKey{c, step}]; sa != nil {
			return sa.eval[i]
		}
	}
	return []metric.AddOption{t.newEvalAttrs(c, step, o)}
}

func (t *telemetry) newEvalAttrs(c, step string, o rules.Outcome) metric.MeasurementOption {
	return t.attrs(attribute.String("case", c), attribute.String("step", step), attribute.String("outcome", string(o)))
}

// result counts one result by its case, step and outcome, and a failure by its cluster
// too (a bounded set: config names and the cluster catalogue).
func (t *telemetry) result(ctx context.Context, r *rules.Result) {
	sa := t.steps[stepKey{r.Case, r.Step}]
	i, ok := outcomeIndex(r.Outcome)
	if sa != nil && ok {
		t.tb.ExporterAssertionEvaluations.Add(ctx, 1, sa.eval[i]...)
	} else {
		t.tb.ExporterAssertionEvaluations.Add(ctx, 1, t.newEvalAttrs(r.Case, r.Step, r.Outcome))
	}
	if r.Outcome != rules.Fail {
		return
	}
	cl := r.Cluster.Or()
	if opts, ok := sa.failAttrs(cl); ok {
		t.tb.ExporterAssertionFailures.Add(ctx, 1, opts...)
		return
	}
	t.tb.ExporterAssertionFailures.Add(ctx, 1, t.newFailAttrs(r.Case, r.Step, cl))
}

// failAttrs are the step's prepared failure attributes of cluster cl (ok false: none).
func (sa *stepAttrs) failAttrs(cl cluster.Name) ([]metric.AddOption, bool) {
	if sa == nil {
		return nil, false
	}
	opts, ok := sa.fail[cl]
	return opts, ok
}

func (t *telemetry) newFailAttrs(c, step string, cl cluster.Name) metric.MeasurementOption {
	return t.attrs(attribute.String("case", c), attribute.String("step", step), attribute.String("cluster", string(cl)))
}

func (t *telemetry) completeAttr(complete bool) []metric.AddOption {
	if complete {
		return t.complete[1]
	}
	return t.complete[0]
}

func (t *telemetry) gateAttrs(axis, pair string) metric.MeasurementOption {
	return t.attrs(attribute.String("axis", axis), attribute.String("pair", pair))
}

func (t *telemetry) outcomeAttr(outcome string) metric.MeasurementOption {
	return t.attrs(attribute.String("outcome", outcome))
}

// judgeOutcomes are the outcome values of the judge calls metric.
func judgeOutcomes() []string {
	out := []string{"ok", "cached"}
	for _, k := range judge.Kinds {
		out = append(out, string(k))
	}
	return out
}

// startGates records the configured thresholds, per configured pair (and default) and axis.
func (t *telemetry) startGates(gs *gate.Set) {
	ctx := context.Background()
	for _, pair := range gs.Buckets() {
		for _, axis := range rubric.Axes {
			if th, ok := gs.BucketThreshold(pair, axis); ok {
				t.tb.ExporterAssertionGateThreshold.Record(ctx, th, t.gateAttrs(axis, pair))
			}
		}
	}
}

// startJudge zero-initializes the judge calls by outcome.
func (t *telemetry) startJudge() {
	for _, o := range judgeOutcomes() {
		t.tb.ExporterAssertionJudgeCalls.Add(context.Background(), 0, t.outcomeAttr(o))
	}
}

// judgeEvent records one judge request or cache hit.
func (t *telemetry) judgeEvent(e judge.Event) {
	ctx := context.Background()
	t.tb.ExporterAssertionJudgeCalls.Add(ctx, 1, t.outcomeAttr(e.Outcome))
	if e.Latency > 0 {
		t.tb.ExporterAssertionJudgeLatency.Record(ctx, float64(e.Latency.Microseconds())/1000, t.only)
	}
}

// gateScores records the sliding window's means.
func (t *telemetry) gateScores(ctx context.Context, scores []gate.WindowScore) {
	for _, s := range scores {
		t.tb.ExporterAssertionGateScore.Record(ctx, s.Score, t.gateAttrs(s.Axis, s.Pair))
	}
}

// start zero-initializes every series the config can produce.
func (t *telemetry) start(cases map[string][]string) {
	ctx := context.Background()
	for c, steps := range cases {
		for _, s := range steps {
			for _, o := range rules.Outcomes {
				t.tb.ExporterAssertionEvaluations.Add(ctx, 0, t.evalAttrs(c, s, o)...)
			}
		}
	}
	t.tb.ExporterAssertionTracesEvaluated.Add(ctx, 0, t.completeAttr(true)...)
	t.tb.ExporterAssertionTracesEvaluated.Add(ctx, 0, t.completeAttr(false)...)
	t.tb.ExporterAssertionLateSpans.Add(ctx, 0, t.only)
	t.tb.ExporterAssertionReportWriteFailures.Add(ctx, 0, t.only)
	t.tb.ExporterAssertionEvalTimeouts.Add(ctx, 0, t.only)
	t.tb.ExporterAssertionZeroTraceIDSpans.Add(ctx, 0, t.only)
}

func (t *telemetry) shutdown() { t.tb.Shutdown() }

func (t *telemetry) lateSpans(ctx context.Context, n int) {
	t.tb.ExporterAssertionLateSpans.Add(ctx, int64(n), t.only)
}

// evaluated records one trace's evaluation.
func (t *telemetry) evaluated(ctx context.Context, complete bool, took time.Duration, results []rules.Result) {
	t.tb.ExporterAssertionTracesEvaluated.Add(ctx, 1, t.completeAttr(complete)...)
	t.tb.ExporterAssertionEvalLatency.Record(ctx, took.Microseconds(), t.latency...)
	for i := range results {
		t.result(ctx, &results[i])
	}
}

// Reasons of the judge_not_graded metric.
const (
	notGradedQueueFull = "queue_full"
	notGradedShutdown  = "shutdown"
)

func (t *telemetry) reasonAttr(reason string) metric.MeasurementOption {
	return t.attrs(attribute.String("reason", reason))
}

// startQueue zero-initializes the grading queue's series.
func (t *telemetry) startQueue() {
	ctx := context.Background()
	t.tb.ExporterAssertionJudgeNotGraded.Add(ctx, 0, t.reasonAttr(notGradedQueueFull))
	t.tb.ExporterAssertionJudgeNotGraded.Add(ctx, 0, t.reasonAttr(notGradedShutdown))
	t.tb.ExporterAssertionJudgeQueueSize.Add(ctx, 0, t.only)
}

// graded records the results a trace's gradings decided (the trace itself was counted
// when its deterministic results were).
func (t *telemetry) graded(ctx context.Context, results []rules.Result) {
	for i := range results {
		t.result(ctx, &results[i])
	}
}

func (t *telemetry) notGraded(ctx context.Context, reason string, results int) {
	t.tb.ExporterAssertionJudgeNotGraded.Add(ctx, int64(results), t.reasonAttr(reason))
}

func (t *telemetry) queued(ctx context.Context, delta int) {
	t.tb.ExporterAssertionJudgeQueueSize.Add(ctx, int64(delta), t.only)
}

func (t *telemetry) reportWriteFailed(ctx context.Context) {
	t.tb.ExporterAssertionReportWriteFailures.Add(ctx, 1, t.only)
}

func (t *telemetry) evalTimedOut(ctx context.Context) {
	t.tb.ExporterAssertionEvalTimeouts.Add(ctx, 1, t.only)
}

func (t *telemetry) zeroTraceID(ctx context.Context, spans int) {
	t.tb.ExporterAssertionZeroTraceIDSpans.Add(ctx, int64(spans), t.only)
}
