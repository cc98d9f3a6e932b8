package handoffprocessor

import (
	"context"
	"errors"
	"slices"
	"time"

	"go.opentelemetry.io/collector/consumer/consumererror"
	"go.opentelemetry.io/collector/pdata/pcommon"
	"go.opentelemetry.io/collector/pdata/ptrace"
	"go.uber.org/zap"

	"github.com/otelcol-handoff/otelcol-handoff/internal/agentgraph"
)

// unit is one indivisible piece of a downstream batch: an assembled trace, or spans passed
// through outside any trace (late spans, spans without a trace id).
type unit struct {
	data  ptrace.Traces
	spans int // spans leaving, HANDOFF spans included
	// bytes is data's OTLP protobuf size, or unsized until a batch bound needs it: a unit
	// that leaves alone in its batch (a timed release of one trace) is never sized.
	bytes int

	// Set for an assembled trace only.
	trace  *pendingTrace
	shared agentgraph.Shared
	stats  releaseStats
}

// assemble builds the units of released traces in two passes: every delegation DAG first,
// each remembered by the link cache, then each one's links into other traces resolved and
// its HANDOFF spans added. A receiver released together with its sender (a replay's end of
// input, one timed chunk) is so named by it whatever their order.
func (p *handoffProcessor) assemble(rs []release) []unit {
	if len(rs) == 0 {
		return nil
	}
	graphs := make([]*agentgraph.Graph, len(rs))
	built := make([]time.Duration, len(rs))
	for i, r := range rs {
		p.decode(r.trace)
		began := time.Now()
		graphs[i] = agentgraph.Build(r.trace.id, agentgraph.SpansOfTrace(r.trace.data), p.graphOpts)
		p.links.remember(graphs[i])
		built[i] = time.Since(began)
	}
	return p.finishAll(rs, graphs, built)
}

// decode turns a released trace's buffered encoding back into pdata (t.data). Spans that
// did not come back (a fragment that fails to decode, or one cut at a message boundary,
// which decodes without error but short) are counted, logged and no longer held.
func (p *handoffProcessor) decode(t *pendingTrace) {
	if len(t.encoded) == 0 {
		return // buffer_encoding decoded
	}
	var failed int
	t.data, failed = p.codec.decode(t.encoded)
	t.encoded = nil
	lost := max(t.spans-t.data.SpanCount(), 0)
	if lost == 0 && failed == 0 {
		return
	}
	t.spans -= lost
	p.hold(0, -int64(lost))
	p.telemetry.undecodableSpans(lost)
	p.logger.Error("buffered spans failed to decode at release and are lost",
		zap.Stringer("trace_id", t.id), zap.Int("failed_fragments", failed), zap.Int("spans", lost))
}

// finishAll is assemble's second pass: every released trace's DAG finished (finishOne)
// into its unit.
func (p *handoffProcessor) finishAll(rs []release, graphs []*agentgraph.Graph, built []time.Duration) []unit {
	units := make([]unit, len(rs))
	for i, r := range rs {
		units[i] = p.finishOne(r, graphs[i], built[i])
	}
	return units
}

// finishOne resolves the span links of a released trace's DAG, adds its HANDOFF spans,
// marks it incomplete when it is, and sizes the result. built is the time the DAG took.
func (p *handoffProcessor) finishOne(r release, g *agentgraph.Graph, built time.Duration) unit {
	t := r.trace
	began := time.Now()
	links := g.ResolveLinks(p.links.resolver())
	g.WriteCosts()
	added := agentgraph.AppendHandoffs(g, t.data, p.policy)
	// Complete: the root arrived (and the quiet period passed, or the input ended) and no
	// span misses its parent. Orphans mean part of the trace is elsewhere: sent before a
	// restart, or to another instance.
	reason := r.trigger
	complete := r.trigger == triggerRoot || (r.trigger == triggerEndOfInput && t.rootSeen)
	if complete && g.Orphans > 0 {
		complete, reason = false, reasonOrphans
	}
	if !complete {
		g.MarkIncomplete(reason)
	}
	return unit{
		data:   t.data,
		spans:  t.spans + added,
		bytes:  unsized,
		trace:  t,
		shared: agentgraph.Shared{Graph: g, Spans: t.spans + added, Incomplete: !complete},
		stats: releaseStats{
			trigger:     r.trigger,
			spans:       t.spans,
			handoffs:    added,
			orphans:     g.Orphans,
			duplicates:  g.Duplicates,
			brokenLinks: g.BrokenLinks,
			links:       links,
			hold:        p.now().Sub(t.first),
			assembly:    built + time.Since(began),
		},
	}
}

// passThroughUnit wraps spans forwarded outside a trace as a unit.
func passThroughUnit(f *fragment) unit {
	return unit{data: f.data, spans: f.spans, bytes: unsized}
}

// unsized is the bytes of a unit or batch not sized yet.
const unsized = -1

// sizeOnce is td's OTLP protobuf size, kept in *bytes once computed (unsized until then).
func sizeOnce(bytes *int, td ptrace.Traces) int {
	if *bytes == unsized {
		var sizer ptrace.ProtoMarshaler
		*bytes = sizer.TracesSize(td)
	}
	return *bytes
}

// size is u's OTLP protobuf size, computed on first use (before u moves into a batch).
func (u *unit) size() int { return sizeOnce(&u.bytes, u.data) }

// batch is what one downstream ConsumeTraces carries.
type batch struct {
	td    ptrace.Traces
	spans int
	// bytes is td's OTLP protobuf size, or unsized while no bound needed it.
	bytes  int
	units  []unit // moved into td already; kept for telemetry and the gauges
	traces int    // assembled traces among units
}

// size is bt's OTLP protobuf size: its units' sizes add up to it.
func (bt *batch) size() int { return sizeOnce(&bt.bytes, bt.td) }

// batcher packs units into batches bounded by release.max_batch_spans and
// release.max_batch_bytes. A unit over a bound leaves alone: a trace is never split.
// Sizes add up exactly: a batch is the concatenation of its units' resource spans. They
// are computed only when a bound is checked: the batch being filled and the unit after it.
type batcher struct {
	p   *handoffProcessor
	cur *batch
	// send delivers one full batch; its error is collected, the next batches still go.
	send func(*batch) error
	errs []error
}

func (b *batcher) add(u unit) {
	lim := b.p.cfg.Release
	if b.cur != nil && (b.cur.spans+u.spans > lim.MaxBatchSpans || b.cur.size()+u.size() > lim.MaxBatchBytes) {
		b.flush()
	}
	if b.cur == nil {
		b.cur = &batch{td: ptrace.NewTraces(), bytes: u.bytes}
	} else {
		b.cur.bytes += u.bytes // both sized by the bound check
	}
	u.data.ResourceSpans().MoveAndAppendTo(b.cur.td.ResourceSpans())
	b.cur.spans += u.spans
	if u.trace != nil {
		b.cur.traces++
	}
	b.cur.units = append(b.cur.units, u)
}

// flush sends the batch being filled, if any.
func (b *batcher) flush() {
	if b.cur == nil {
		return
	}
	cur := b.cur
	b.cur = nil
	if err := b.send(cur); err != nil {
		b.errs = append(b.errs, err)
	}
}

// pending takes back the batch being filled (not sent), for counting what was dropped.
func (b *batcher) pending() *batch {
	cur := b.cur
	b.cur = nil
	return cur
}

// err is the batches' errors together, permanent (consumererror) only when every one is:
// joined as they are, one permanent error would make the whole permanent, and the caller
// would not retry the batches that failed for a passing reason. So when they are mixed,
// the permanent ones are kept as text.
func (b *batcher) err() error {
	joined := errors.Join(b.errs...)
	if !consumererror.IsPermanent(joined) || !slices.ContainsFunc(b.errs, isRetryable) {
		return joined
	}
	errs := make([]error, len(b.errs))
	for i, err := range b.errs {
		if !isRetryable(err) {
			err = errors.New(err.Error())
		}
		errs[i] = err
	}
	return errors.Join(errs...)
}

func isRetryable(err error) bool { return !consumererror.IsPermanent(err) }

// deliver hands one batch downstream: the traces leave the gauges, their release is
// counted, and the graphs ride along in the context (agentgraph.SharedGraph) so the
// assertion exporter need not rebuild them.
func (p *handoffProcessor) deliver(ctx context.Context, bt *batch) error {
	var graphs map[pcommon.TraceID]agentgraph.Shared
	var totals releaseTotals
	heldSpans := 0
	for _, u := range bt.units {
		if u.trace == nil {
			continue
		}
		if graphs == nil {
			graphs = make(map[pcommon.TraceID]agentgraph.Shared, bt.traces)
		}
		graphs[u.trace.id] = u.shared
		heldSpans += u.trace.spans
		p.telemetry.add(ctx, &totals, u.stats)
	}
	p.hold(-int64(bt.traces), -int64(heldSpans))
	if graphs != nil {
		p.telemetry.released(ctx, &totals)
		ctx = agentgraph.ContextWithGraphs(ctx, p.graphOpts, p.graphFP, graphs)
	}
	return p.next.ConsumeTraces(ctx, bt.td)
}

// forwardSync sends units downstream from the caller's goroutine (ConsumeTraces,
// EndOfInput, pass-through), in bounded batches; every batch is tried, and the errors
// go back to the caller, whose client retries.
func (p *handoffProcessor) forwardSync(ctx context.Context, units []unit) error {
	b := batcher{p: p, send: func(bt *batch) error { return p.deliver(ctx, bt) }}
	for _, u := range units {
		b.add(u)
	}
	b.flush()
	return b.err()
}

// forwardReleased assembles and sends a chunk released by a shard on its deadlines or at
// shutdown (release workers). Nobody waits for the result: a rejection is counted and
// logged. Once ctx is done (the shutdown budget ran out) nothing more is sent, and what
// is left of the chunk is counted as dropped.
func (p *handoffProcessor) forwardReleased(ctx context.Context, rs []release) {
	b := batcher{p: p, send: func(bt *batch) error {
		if ctx.Err() != nil {
			p.dropUnits(bt.units)
			return nil
		}
		if err := p.deliver(ctx, bt); err != nil {
			// The data is the downstream's once handed over: its size is logged only when a
			// bound already measured it (bytes -1: not sized).
			p.telemetry.releaseFailures(ctx, bt.spans, bt.traces)
			p.logger.Error("downstream rejected released traces",
				zap.Int("traces", bt.traces), zap.Int("spans", bt.spans), zap.Int("bytes", bt.bytes), zap.Error(err))
		}
		return nil
	}}
	if ctx.Err() != nil {
		p.dropReleases(rs)
		return
	}
	units := p.assemble(rs)
	for i, u := range units {
		if ctx.Err() != nil {
			if cur := b.pending(); cur != nil {
				p.dropUnits(cur.units)
			}
			p.dropUnits(units[i:])
			return
		}
		b.add(u)
	}
	b.flush()
}

// dropUnits counts assembled traces that will not be forwarded (shutdown budget spent).
func (p *handoffProcessor) dropUnits(us []unit) {
	var traces, spans int64
	for _, u := range us {
		if u.trace != nil {
			traces++
			spans += int64(u.trace.spans)
		}
	}
	p.dropped(traces, spans)
}

// dropReleases counts released traces that will not be forwarded (shutdown budget spent).
func (p *handoffProcessor) dropReleases(rs []release) {
	var spans int64
	for _, r := range rs {
		spans += int64(r.trace.spans)
	}
	p.dropped(int64(len(rs)), spans)
}

func (p *handoffProcessor) dropped(traces, spans int64) {
	if traces == 0 {
		return
	}
	p.hold(-traces, -spans)
	p.droppedTraces.Add(traces)
	p.droppedSpans.Add(spans)
	p.telemetry.droppedOnShutdown(traces, spans)
}
