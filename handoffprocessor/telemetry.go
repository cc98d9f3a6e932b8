package handoffprocessor

import (
	"context"
	"time"

	"go.opentelemetry.io/collector/component"
	"go.opentelemetry.io/otel/attribute"
	"go.opentelemetry.io/otel/metric"

	"github.com/otelcol-handoff/otelcol-handoff/handoffprocessor/internal/metadata"
	"github.com/otelcol-handoff/otelcol-handoff/internal/agentgraph"
)

// telemetry records the processor's own metrics through the generated TelemetryBuilder.
// Attribute values come from fixed sets (release triggers, late-span actions).
type telemetry struct {
	tb *metadata.TelemetryBuilder
}

var (
	triggerAttrs = map[string]metric.MeasurementOption{}
	forwarded    = metric.WithAttributeSet(attribute.NewSet(attribute.String("action", "forwarded")))
	// resolvedBy: what named the sender of a span link into another trace.
	resolvedBy = map[string]metric.MeasurementOption{}
)

func init() {
	for _, t := range releaseTriggers {
		triggerAttrs[t] = metric.WithAttributeSet(attribute.NewSet(attribute.String("trigger", t)))
	}
	for _, by := range []string{agentgraph.LinkBySenderTrace, agentgraph.LinkByAttributes, agentgraph.LinkByHandoffSpan} {
		resolvedBy[by] = metric.WithAttributeSet(attribute.NewSet(attribute.String("by", by)))
	}
}

func newTelemetry(set component.TelemetrySettings) (*telemetry, error) {
	tb, err := metadata.NewTelemetryBuilder(set)
	if err != nil {
		return nil, err
	}
	return &telemetry{tb: tb}, nil
}

// start records the configured bound and zero-initializes the counters, so dashboards see
// every series from the first scrape.
func (t *telemetry) start(numTraces int) {
	ctx := context.Background()
	t.tb.ProcessorHandoffConfNumTraces.Record(ctx, int64(numTraces))
	for _, opt := range triggerAttrs {
		t.tb.ProcessorHandoffTracesReleased.Add(ctx, 0, opt)
	}
	t.tb.ProcessorHandoffLateSpans.Add(ctx, 0, forwarded)
	t.tb.ProcessorHandoffTracesInMemory.Add(ctx, 0)
	t.tb.ProcessorHandoffSpansInMemory.Add(ctx, 0)
	t.tb.ProcessorHandoffTracesEvicted.Add(ctx, 0)
	t.tb.ProcessorHandoffTracesTooLarge.Add(ctx, 0)
	t.tb.ProcessorHandoffHandoffsSynthesized.Add(ctx, 0)
	t.tb.ProcessorHandoffSpansReleased.Add(ctx, 0)
	t.tb.ProcessorHandoffOrphanSpans.Add(ctx, 0)
	t.tb.ProcessorHandoffDuplicateSpans.Add(ctx, 0)
	t.tb.ProcessorHandoffBrokenParentLinks.Add(ctx, 0)
	t.tb.ProcessorHandoffReleaseFailures.Add(ctx, 0)
	t.tb.ProcessorHandoffReleaseFailedTraces.Add(ctx, 0)
	t.tb.ProcessorHandoffTracesDroppedOnShutdown.Add(ctx, 0)
	t.tb.ProcessorHandoffSpansDroppedOnShutdown.Add(ctx, 0)
	t.tb.ProcessorHandoffInvalidTraceIDSpans.Add(ctx, 0)
	t.tb.ProcessorHandoffUndecodableSpans.Add(ctx, 0)
	for _, opt := range resolvedBy {
		t.tb.ProcessorHandoffResolvedLinks.Add(ctx, 0, opt)
	}
	t.tb.ProcessorHandoffUnresolvedLinks.Add(ctx, 0)
}

func (t *telemetry) shutdown() { t.tb.Shutdown() }

func (t *telemetry) tracesInMemory(delta int64) {
	t.tb.ProcessorHandoffTracesInMemory.Add(context.Background(), delta)
}

func (t *telemetry) spansInMemory(delta int64) {
	t.tb.ProcessorHandoffSpansInMemory.Add(context.Background(), delta)
}

func (t *telemetry) lateSpans(ctx context.Context, n int) {
	t.tb.ProcessorHandoffLateSpans.Add(ctx, int64(n), forwarded)
}

// releaseFailures counts one batch the downstream consumer rejected.
func (t *telemetry) releaseFailures(ctx context.Context, spans, traces int) {
	t.tb.ProcessorHandoffReleaseFailures.Add(ctx, int64(spans))
	t.tb.ProcessorHandoffReleaseFailedTraces.Add(ctx, int64(traces))
}

func (t *telemetry) invalidTraceIDSpans(ctx context.Context, n int) {
	t.tb.ProcessorHandoffInvalidTraceIDSpans.Add(ctx, int64(n))
}

// undecodableSpans counts buffered spans whose encoding failed to decode at release.
func (t *telemetry) undecodableSpans(n int) {
	t.tb.ProcessorHandoffUndecodableSpans.Add(context.Background(), int64(n))
}

// droppedOnShutdown counts buffered traces the shutdown budget left unforwarded.
func (t *telemetry) droppedOnShutdown(traces, spans int64) {
	ctx := context.Background()
	t.tb.ProcessorHandoffTracesDroppedOnShutdown.Add(ctx, traces)
	t.tb.ProcessorHandoffSpansDroppedOnShutdown.Add(ctx, spans)
}

type releaseStats struct {
	trigger                                           string
	spans, handoffs, orphans, duplicates, brokenLinks int
	links                                             agentgraph.LinkCounts
	hold, assembly                                    time.Duration
}

// releaseTotals sums the counters of the traces one downstream batch carries, so each is
// recorded once per batch, not once per trace.
type releaseTotals struct {
	traces                                            [len(releaseTriggers)]int64
	spans, handoffs, orphans, duplicates, brokenLinks int64
	links                                             agentgraph.LinkCounts
}

// releaseTriggers are the release triggers, in the order releaseTotals counts them.
var releaseTriggers = [...]string{triggerRoot, triggerTimeout, triggerEvicted, triggerTooLarge, triggerShutdown, triggerEndOfInput}

// add counts one released trace, and records its histograms (one value per trace).
func (t *telemetry) add(ctx context.Context, tot *releaseTotals, s releaseStats) {
	for i, trig := range releaseTriggers {
		if trig == s.trigger {
			tot.traces[i]++
			break
		}
	}
	tot.spans += int64(s.spans)
	tot.handoffs += int64(s.handoffs)
	tot.orphans += int64(s.orphans)
	tot.duplicates += int64(s.duplicates)
	tot.brokenLinks += int64(s.brokenLinks)
	tot.links.BySenderTrace += s.links.BySenderTrace
	tot.links.ByAttributes += s.links.ByAttributes
	tot.links.ByHandoffSpan += s.links.ByHandoffSpan
	tot.links.Unresolved += s.links.Unresolved
	t.tb.ProcessorHandoffTraceHoldTime.Record(ctx, s.hold.Milliseconds())
	t.tb.ProcessorHandoffAssemblyLatency.Record(ctx, float64(s.assembly.Microseconds())/1000)
	t.tb.ProcessorHandoffTraceSize.Record(ctx, int64(s.spans))
}

// released records the counters of a batch's released traces.
func (t *telemetry) released(ctx context.Context, tot *releaseTotals) {
	// Counters with nothing to add are left alone (Start zero-initialized them).
	add := func(c metric.Int64Counter, n int64, opts ...metric.AddOption) {
		if n > 0 {
			c.Add(ctx, n, opts...)
		}
	}
	for i, n := range tot.traces {
		add(t.tb.ProcessorHandoffTracesReleased, n, triggerAttrs[releaseTriggers[i]])
		switch releaseTriggers[i] {
		case triggerEvicted:
			add(t.tb.ProcessorHandoffTracesEvicted, n)
		case triggerTooLarge:
			add(t.tb.ProcessorHandoffTracesTooLarge, n)
		}
	}
	t.tb.ProcessorHandoffSpansReleased.Add(ctx, tot.spans)
	add(t.tb.ProcessorHandoffHandoffsSynthesized, tot.handoffs)
	add(t.tb.ProcessorHandoffOrphanSpans, tot.orphans)
	add(t.tb.ProcessorHandoffDuplicateSpans, tot.duplicates)
	add(t.tb.ProcessorHandoffBrokenParentLinks, tot.brokenLinks)
	add(t.tb.ProcessorHandoffResolvedLinks, int64(tot.links.BySenderTrace), resolvedBy[agentgraph.LinkBySenderTrace])
	add(t.tb.ProcessorHandoffResolvedLinks, int64(tot.links.ByAttributes), resolvedBy[agentgraph.LinkByAttributes])
	add(t.tb.ProcessorHandoffResolvedLinks, int64(tot.links.ByHandoffSpan), resolvedBy[agentgraph.LinkByHandoffSpan])
	add(t.tb.ProcessorHandoffUnresolvedLinks, int64(tot.links.Unresolved))
}
