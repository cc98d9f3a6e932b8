package assertionconnector

import (
	"bytes"
	"context"
	"encoding/binary"
	"errors"
	"sort"
	"sync"
	"time"

	"go.opentelemetry.io/collector/component"
	"go.opentelemetry.io/collector/connector"
	"go.opentelemetry.io/collector/consumer"
	"go.opentelemetry.io/collector/pdata/pcommon"
	"go.opentelemetry.io/collector/pdata/ptrace"
	"go.opentelemetry.io/otel/attribute"
	"go.uber.org/zap"

	"github.com/otelcol-handoff/otelcol-handoff/assertionexporter"
	"github.com/otelcol-handoff/otelcol-handoff/connector/assertionconnector/internal/metadata"
	"github.com/otelcol-handoff/otelcol-handoff/internal/agentgraph"
	"github.com/otelcol-handoff/otelcol-handoff/internal/rules"
	"github.com/otelcol-handoff/otelcol-handoff/internal/spanwalk"
)

// The collector makes one connector instance per pair of pipeline types it joins (traces
// to traces, to logs, to metrics), all with the same *Config. They share one engine, so a
// batch is evaluated once, gradings are queued once, and self-telemetry and reports count
// each trace once: the first instance the batch reaches evaluates it, the others take the
// verdicts from the memo.

var (
	registryMu sync.Mutex
	registry   = map[*Config]*shared{}
)

// shared is what the instances of one configured connector have in common.
type shared struct {
	cfg    *Config
	logger *zap.Logger
	engine *assertionexporter.Engine
	tb     *metadata.TelemetryBuilder
	self   selfAttrs

	mu sync.Mutex
	// outputs are the attached instances; a batch is evaluated once for all of them.
	outputs []*output
	memo    map[string]*memoEntry
	order   []string // memo keys, oldest first
	started int
	// stopped is set by the first Shutdown: the engine is shut down then, while every
	// downstream pipeline still runs.
	stopped bool

	logs    consumer.Logs   // nil without a traces-to-logs pipeline
	metrics *aggregator     // nil without a traces-to-metrics pipeline
	flush   chan struct{}   // closed to stop the flush loop
	loop    sync.WaitGroup  // the flush loop
	pending *pendingHandoff // which traces waiting for the judge carry HANDOFF spans
	// ticks, when set (tests), replaces the flush ticker.
	ticks <-chan time.Time
}

// memoEntry is one batch's verdicts, kept until every instance has taken them.
type memoEntry struct {
	verdicts  []assertionexporter.TraceVerdict
	remaining int
}

// maxMemo bounds the memo: batches evaluated and not yet taken by every instance. An
// instance always takes a batch in the same fan-out call, so only batches in flight wait.
const maxMemo = 4096

func sharedFor(set connector.Settings, cfg *Config) (*shared, error) {
	registryMu.Lock()
	defer registryMu.Unlock()
	if s, ok := registry[cfg]; ok {
		return s, nil
	}
	// One engine serves every output: its telemetry must not carry the output signal of
	// whichever instance came first.
	set.TelemetrySettings = dropInjectedAttributes(set.TelemetrySettings, signalOutputKey)
	s := &shared{
		cfg: cfg, logger: set.Logger, memo: map[string]*memoEntry{}, pending: newPendingHandoff(),
		self: selfAttrs{id: attribute.String(assertionexporter.ConnectorAttr, set.ID.String())},
	}
	engine, err := assertionexporter.NewEngine(set.TelemetrySettings, set.ID, &cfg.Assertions, s.graded)
	if err != nil {
		return nil, err
	}
	s.engine = engine
	if s.tb, err = metadata.NewTelemetryBuilder(set.TelemetrySettings); err != nil {
		return nil, err
	}
	registry[cfg] = s
	return s, nil
}

// attach adds one instance (one output signal).
func (s *shared) attach(o *output) *output {
	s.mu.Lock()
	defer s.mu.Unlock()
	o.s = s
	s.outputs = append(s.outputs, o)
	if o.logs != nil {
		s.logs = o.logs
	}
	if o.metrics != nil && s.metrics == nil {
		s.metrics = newAggregator(s.cfg, time.Now(), s.tb, s.self, s.engine.Redact)
	}
	return o
}

// output is one connector instance: the shared engine plus one downstream consumer.
type output struct {
	component.StartFunc
	s       *shared
	traces  consumer.Traces
	logs    consumer.Logs
	metrics consumer.Metrics
}

var _ connector.Traces = (*output)(nil)

func (o *output) Capabilities() consumer.Capabilities {
	// The traces output stamps verdicts on the spans it forwards.
	return consumer.Capabilities{MutatesData: o.traces != nil}
}

func (o *output) Start(ctx context.Context, host component.Host) error {
	s := o.s
	s.mu.Lock()
	defer s.mu.Unlock()
	s.started++
	if s.started > 1 {
		return nil
	}
	if err := s.engine.Start(ctx, host); err != nil {
		return err
	}
	s.tb.ConnectorAssertionAgentsFolded.Add(ctx, 0, s.self.with())
	if s.metrics != nil {
		s.flush = make(chan struct{})
		s.loop.Add(1)
		go s.flushLoop()
	}
	return nil
}

// ConsumeTraces evaluates the batch (once for every instance), then does this instance's
// part: forward the stamped spans, emit the log records, or add to the metrics. Spans are
// never dropped or reordered; a downstream error is returned as it is.
func (o *output) ConsumeTraces(ctx context.Context, td ptrace.Traces) error {
	verdicts := o.s.verdictsOf(ctx, td)
	switch {
	case o.traces != nil:
		stampVerdicts(td, verdicts)
		return o.traces.ConsumeTraces(ctx, td)
	case o.logs != nil:
		ld := buildLogs(verdicts, spanIDsIn(td), time.Now())
		if n := ld.LogRecordCount(); n > 0 {
			o.s.tb.ConnectorAssertionLogRecords.Add(ctx, int64(n), o.s.self.phase(phaseNow))
			return o.logs.ConsumeLogs(ctx, ld)
		}
	case o.metrics != nil:
		o.s.metrics.add(ctx, verdicts)
	}
	return nil
}

// verdictsOf returns the batch's verdicts: evaluated now by the first instance it reaches,
// taken from the memo by the others.
func (s *shared) verdictsOf(ctx context.Context, td ptrace.Traces) []assertionexporter.TraceVerdict {
	key := batchKey(td)
	s.mu.Lock()
	if m, ok := s.memo[key]; ok {
		m.remaining--
		if m.remaining <= 0 {
			delete(s.memo, key)
		}
		s.mu.Unlock()
		return m.verdicts
	}
	others := len(s.outputs) - 1
	s.mu.Unlock()

	// The HANDOFF spans of the traces that wait for the judge are remembered before their
	// gradings are queued: a worker may grade one at once, and a refused one (queue full)
	// is handed back before Evaluate returns.
	verdicts := s.engine.Evaluate(ctx, td, func(verdicts []assertionexporter.TraceVerdict) {
		var handoffs map[pcommon.SpanID]bool // found only if a trace waits for the judge
		for _, v := range verdicts {
			if v.Pending > 0 {
				if handoffs == nil {
					handoffs = spanIDsIn(td)
				}
				s.pending.remember(v.Graph, handoffs)
			}
		}
	})
	if others > 0 {
		s.mu.Lock()
		s.memo[key] = &memoEntry{verdicts: verdicts, remaining: others}
		s.order = append(s.order, key)
		for len(s.order) > maxMemo {
			delete(s.memo, s.order[0])
			s.order = s.order[1:]
		}
		s.mu.Unlock()
	}
	return verdicts
}

// batchKey identifies a batch by its traces and their span counts: every instance gets the
// same batch (or a copy) from the fan-out.
func batchKey(td ptrace.Traces) string {
	counts := map[pcommon.TraceID]uint32{}
	spanwalk.Each(td, func(_ pcommon.Resource, sp ptrace.Span) { counts[sp.TraceID()]++ })
	ids := make([]pcommon.TraceID, 0, len(counts))
	for id := range counts {
		ids = append(ids, id)
	}
	sort.Slice(ids, func(i, j int) bool { return bytes.Compare(ids[i][:], ids[j][:]) < 0 })
	b := make([]byte, 0, len(ids)*20)
	for _, id := range ids {
		b = append(b, id[:]...)
		b = binary.BigEndian.AppendUint32(b, counts[id])
	}
	return string(b)
}

// graded receives the results the judge decided for one trace: they become log records
// and verdict counts (the trace itself left with its deterministic verdicts stamped).
func (s *shared) graded(ctx context.Context, g *agentgraph.Graph, results []rules.Result) {
	handoffs := s.pending.take(g)
	if s.metrics != nil {
		s.metrics.addResults(results, g)
	}
	if s.logs == nil {
		return
	}
	ld := buildLogs([]assertionexporter.TraceVerdict{{Graph: g, Results: results}}, handoffs, time.Now())
	if n := ld.LogRecordCount(); n > 0 {
		s.tb.ConnectorAssertionLogRecords.Add(ctx, int64(n), s.self.phase(phaseGraded))
		if err := s.logs.ConsumeLogs(ctx, ld); err != nil {
			s.logger.Warn("assertion connector: graded results were not accepted downstream", zap.Int("records", n), zap.Error(err))
		}
	}
}

// flushLoop sends the cumulative metrics every metrics_flush_interval.
func (s *shared) flushLoop() {
	defer s.loop.Done()
	ticks := s.ticks
	if ticks == nil {
		t := time.NewTicker(s.cfg.MetricsFlushInterval)
		defer t.Stop()
		ticks = t.C
	}
	for {
		select {
		case now := <-ticks:
			s.flushMetrics(context.Background(), now)
		case <-s.flush:
			return
		}
	}
}

// flushMetrics sends the metrics aggregated so far (cumulative) to the metrics pipeline.
func (s *shared) flushMetrics(ctx context.Context, now time.Time) {
	md := s.metrics.build(now)
	if md.DataPointCount() == 0 {
		return
	}
	var next consumer.Metrics
	s.mu.Lock()
	for _, o := range s.outputs {
		if o.metrics != nil {
			next = o.metrics
		}
	}
	s.mu.Unlock()
	if err := next.ConsumeMetrics(ctx, md); err != nil {
		s.tb.ConnectorAssertionMetricsFlushed.Add(ctx, 1, s.self.outcome("error"))
		s.logger.Warn("assertion connector: metrics were not accepted downstream", zap.Error(err))
		return
	}
	s.tb.ConnectorAssertionMetricsFlushed.Add(ctx, 1, s.self.outcome("ok"))
}

// Shutdown: the first instance to shut down ends the engine (outstanding gradings become
// errors and reach logs and metrics) and sends the last metrics, while every downstream
// pipeline still runs (the collector shuts a connector down before what it feeds, and
// nothing feeds the connector any more once one of its instances shuts down).
func (o *output) Shutdown(ctx context.Context) error {
	s := o.s
	s.mu.Lock()
	if s.stopped {
		s.mu.Unlock()
		return nil
	}
	s.stopped = true
	started := s.started > 0
	s.mu.Unlock()
	registryMu.Lock()
	if registry[s.cfg] == s {
		delete(registry, s.cfg)
	}
	registryMu.Unlock()
	if !started {
		return nil
	}
	err := s.engine.Shutdown(ctx)
	if s.metrics != nil {
		close(s.flush)
		s.loop.Wait()
		s.flushMetrics(ctx, time.Now())
	}
	s.tb.Shutdown()
	return errors.Join(err)
}
