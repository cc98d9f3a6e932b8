package handoffprocessor

import (
	"context"
	"errors"
	"fmt"
	"hash/maphash"
	"runtime"
	"sync"
	"sync/atomic"
	"time"

	"go.opentelemetry.io/collector/component"
	"go.opentelemetry.io/collector/consumer"
	"go.opentelemetry.io/collector/pdata/ptrace"
	"go.opentelemetry.io/collector/processor"
	"go.uber.org/zap"

	"github.com/otelcol-handoff/otelcol-handoff/internal/agentgraph"
)

type handoffProcessor struct {
	cfg *Config
	// codec is how buffered spans are held (buffer_encoding, encoded.go).
	codec     bufferCodec
	next      consumer.Traces
	logger    *zap.Logger
	telemetry *telemetry
	graphOpts agentgraph.Options
	// graphFP is graphOpts' fingerprint, sent downstream with the graphs (computed once).
	graphFP agentgraph.Fingerprint
	policy  agentgraph.ContentPolicy
	now     func() time.Time
	// links remembers the agent spans of released traces for span links (nil: off).
	links *linkCache

	seed         maphash.Seed
	shards       []*shard
	releaseQueue chan releaseChunk
	shardWG      sync.WaitGroup
	workerWG     sync.WaitGroup

	// runCtx is the context of timed releases; cancelling it (stop) when the shutdown
	// budget runs out stops every send in progress. flushCtx, its child with the shutdown
	// deadline, is set by Shutdown before the shards are closed.
	runCtx   context.Context
	stop     context.CancelFunc
	flushCtx context.Context

	// Traces and spans held (buffered or queued for release), mirrored from the gauges
	// for the shutdown log; and what the shutdown budget left unforwarded.
	heldTraces, heldSpans       atomic.Int64
	droppedTraces, droppedSpans atomic.Int64

	// mu guards closed: ConsumeTraces holds it shared while it talks to the shards.
	mu           sync.RWMutex
	started      bool
	closed       bool
	shutdownOnce sync.Once
	done         chan struct{}
}

var _ processor.Traces = (*handoffProcessor)(nil)

func newProcessor(set processor.Settings, cfg *Config, next consumer.Traces) (*handoffProcessor, error) {
	tel, err := newTelemetry(set.TelemetrySettings)
	if err != nil {
		return nil, err
	}
	graphOpts, err := cfg.GraphOptions()
	if err != nil {
		return nil, err
	}
	numShards := cfg.NumShards
	if numShards == 0 {
		numShards = runtime.GOMAXPROCS(0)
	}
	p := &handoffProcessor{
		cfg:          cfg,
		codec:        codecFor(cfg.BufferEncoding),
		next:         next,
		logger:       set.Logger,
		telemetry:    tel,
		graphOpts:    graphOpts,
		policy:       cfg.contentPolicy(),
		links:        newLinkCache(cfg.LinkCacheSize),
		now:          time.Now,
		seed:         maphash.MakeSeed(),
		releaseQueue: make(chan releaseChunk, 2*numShards),
		done:         make(chan struct{}),
	}
	p.graphFP = p.graphOpts.Fingerprint()
	p.runCtx, p.stop = context.WithCancel(context.Background())
	// The shards share num_traces exactly, each holding at least one trace: fewer traces
	// than shards means fewer shards.
	numShards = max(1, min(numShards, cfg.NumTraces))
	lateCache := max(1, (cfg.LateSpanCacheSize+numShards-1)/numShards)
	for i := range numShards {
		capacity := cfg.NumTraces / numShards
		if i < cfg.NumTraces%numShards {
			capacity++
		}
		p.shards = append(p.shards, newShard(p, max(1, capacity), lateCache))
	}
	return p, nil
}

func (p *handoffProcessor) Capabilities() consumer.Capabilities {
	return consumer.Capabilities{MutatesData: true}
}

func (p *handoffProcessor) Start(context.Context, component.Host) error {
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.started || p.closed {
		return nil
	}
	p.started = true
	p.telemetry.start(p.cfg.NumTraces)
	for _, s := range p.shards {
		p.shardWG.Add(1)
		go s.run()
	}
	for range p.shards {
		p.workerWG.Add(1)
		go p.releaseWorker()
	}
	p.logger.Info("handoff processor started",
		zap.Int("shards", len(p.shards)), zap.Duration("quiet_period", p.cfg.QuietPeriod),
		zap.Duration("max_wait", p.cfg.MaxWait), zap.Int("num_traces", p.cfg.NumTraces),
		zap.Int("link_cache_size", p.cfg.LinkCacheSize), zap.String("buffer_encoding", p.cfg.BufferEncoding),
		zap.Int("release_max_batch_spans", p.cfg.Release.MaxBatchSpans),
		zap.Int("release_max_batch_bytes", p.cfg.Release.MaxBatchBytes),
		zap.Duration("shutdown_timeout", p.cfg.ShutdownTimeout))
	return nil
}

// hold moves the traces_in_memory / spans_in_memory gauges: up when a trace or span is
// buffered, down when it is handed downstream or dropped at shutdown.
func (p *handoffProcessor) hold(traces, spans int64) {
	if traces != 0 {
		p.heldTraces.Add(traces)
		p.telemetry.tracesInMemory(traces)
	}
	if spans != 0 {
		p.heldSpans.Add(spans)
		p.telemetry.spansInMemory(spans)
	}
}

// ConsumeTraces buffers spans per trace. Late spans and spans without a trace id (only the
// caller's own spans) are forwarded before it returns, in bounded batches, so their
// downstream errors reach the caller and its retry resends exactly them. Every assembled
// trace, completed or released early (evicted, too large), leaves from the release
// workers: its spans came in several requests, acknowledged already.
func (p *handoffProcessor) ConsumeTraces(ctx context.Context, td ptrace.Traces) error {
	frags := splitByTrace(td)
	p.prepare(frags)
	p.mu.RLock()
	if !p.started || p.closed {
		p.mu.RUnlock()
		return p.forwardUnbuffered(ctx, frags)
	}
	perShard := make([][]*fragment, len(p.shards))
	var invalid []*fragment
	for _, f := range frags {
		if f.id.IsEmpty() {
			invalid = append(invalid, f) // no trace to assemble it into
			continue
		}
		i := maphash.Comparable(p.seed, f.id) % uint64(len(p.shards))
		perShard[i] = append(perShard[i], f)
	}
	reply := make(chan shardReply, len(p.shards))
	sent := 0
	var late []*fragment
	for i, fs := range perShard {
		if len(fs) == 0 {
			continue
		}
		if ctx.Err() == nil {
			select {
			case p.shards[i].in <- shardMsg{frags: fs, reply: reply}:
				sent++
				continue
			case <-ctx.Done():
			}
		}
		// The caller gave up waiting: pass through unbuffered, outside their trace, so
		// marked and counted as late like every span that skips assembly.
		late = append(late, fs...)
	}
	// Every message is sent: a shard answers each one it took, even once closing, so the
	// lock is not held while the answers come.
	p.mu.RUnlock()
	for ; sent > 0; sent-- {
		select {
		case r := <-reply:
			late = append(late, r.late...)
		case <-ctx.Done():
			return p.intakeGaveUp(ctx, sent)
		}
	}

	units := make([]unit, 0, len(invalid)+len(late))
	units = append(units, p.passInvalid(ctx, invalid)...)
	units = append(units, p.passLate(ctx, late)...)
	return p.forwardSync(ctx, units)
}

// intakeGaveUp answers a ConsumeTraces whose caller's context ended while shards still
// held its spans: a shard waits to hand released traces to the release workers while every
// worker is in a downstream call and the release queue is full (backpressure). The spans
// the shards took stay buffered and leave with their traces; the late spans and the spans
// without a trace id of the request are not forwarded. The error says the request did not
// finish, so the caller's retry sends them again.
func (p *handoffProcessor) intakeGaveUp(ctx context.Context, waiting int) error {
	p.logger.Warn("handoff processor: the caller gave up while the release workers were all busy downstream (backpressure); its buffered spans stay buffered, its late spans were not forwarded",
		zap.Int("shards_not_answered", waiting), zap.Error(ctx.Err()))
	return fmt.Errorf("handoff processor: the release queue is full (downstream busy): %w", ctx.Err())
}

// prepare readies each fragment with a trace id for the buffer, outside the lock: its
// encoding (buffer_encoding proto or proto_s2, which sizes it too), or its size when
// max_trace_size_bytes needs one.
func (p *handoffProcessor) prepare(frags []*fragment) {
	var sizer ptrace.ProtoMarshaler
	for _, f := range frags {
		switch {
		case f.id.IsEmpty():
		case p.codec.encoded:
			p.codec.encode(f)
		case p.cfg.MaxTraceSizeBytes > 0:
			f.bytes = sizer.TracesSize(f.data)
		}
	}
}

// passInvalid marks and counts spans with an all-zero trace id: they belong to no trace,
// so they are forwarded as they came, and the assertion exporter must not judge them.
func (p *handoffProcessor) passInvalid(ctx context.Context, frags []*fragment) []unit {
	return forwardMarked(frags, agentgraph.AttrInvalidTraceID, func(n int) { p.telemetry.invalidTraceIDSpans(ctx, n) })
}

// passLate marks and counts spans forwarded outside their trace.
func (p *handoffProcessor) passLate(ctx context.Context, frags []*fragment) []unit {
	return forwardMarked(frags, agentgraph.AttrLateSpan, func(n int) { p.telemetry.lateSpans(ctx, n) })
}

// forwardMarked marks every span of frags with marker, counts them, and wraps each fragment
// to be forwarded unassembled.
func forwardMarked(frags []*fragment, marker string, count func(spans int)) []unit {
	units := make([]unit, 0, len(frags))
	for _, f := range frags {
		markSpans(f.data, marker)
		count(f.spans)
		units = append(units, passThroughUnit(f))
	}
	return units
}

// forwardUnbuffered passes spans straight through before Start and after Shutdown:
// nothing is ever dropped. They count as late spans (not assembled), or as spans without
// a trace id.
func (p *handoffProcessor) forwardUnbuffered(ctx context.Context, frags []*fragment) error {
	var invalid, late []*fragment
	for _, f := range frags {
		if f.id.IsEmpty() {
			invalid = append(invalid, f)
		} else {
			late = append(late, f)
		}
	}
	return p.forwardSync(ctx, append(p.passInvalid(ctx, invalid), p.passLate(ctx, late)...))
}

// releaseWorker assembles and forwards the chunks the shards release on their deadlines
// and on shutdown, one bounded batch at a time.
func (p *handoffProcessor) releaseWorker() {
	defer p.workerWG.Done()
	for chunk := range p.releaseQueue {
		p.forwardReleased(chunk.ctx, chunk.releases)
	}
}

// Shutdown stops intake, releases every buffered trace (marked incomplete) in bounded
// batches and waits for the release workers, within min(ctx deadline, shutdown_timeout).
// When that budget runs out it stops sending, counts and logs what was not forwarded and
// returns an error; the goroutines end as soon as the downstream calls in progress
// return (their context is cancelled). It is idempotent.
func (p *handoffProcessor) Shutdown(ctx context.Context) error {
	p.shutdownOnce.Do(func() {
		// The budget runs from the call on, not from the lock: an intake call that waits on
		// a shard held by backpressure holds the lock, and the budget's end (or ctx's)
		// stops the run context, which lets the shard, and so the call, go.
		var cancelFlush context.CancelFunc
		p.flushCtx, cancelFlush = context.WithDeadline(p.runCtx, p.shutdownDeadline(ctx))
		unwatch := context.AfterFunc(ctx, cancelFlush)
		context.AfterFunc(p.flushCtx, p.stop)
		p.mu.Lock()
		wasStarted := p.started
		p.closed = true
		p.mu.Unlock()
		go func() {
			// done first: a Shutdown waiting on both must see the flush finished, not
			// cancelled.
			defer p.stop()
			defer unwatch()
			defer cancelFlush()
			defer close(p.done)
			if wasStarted {
				for _, s := range p.shards {
					close(s.in)
				}
				p.shardWG.Wait()
				close(p.releaseQueue)
				p.workerWG.Wait()
			}
			p.telemetry.shutdown()
		}()
	})
	select {
	case <-p.done:
		return nil // already stopped: a repeated Shutdown succeeds whatever its context
	default:
	}
	select {
	case <-p.done:
		p.logger.Info("handoff processor stopped")
		return nil
	case <-p.flushCtx.Done():
	case <-ctx.Done():
	}
	select {
	case <-p.done:
		// Finished at the last moment; or because the budget ran out and the shards
		// dropped the rest: that must not pass for success.
		if p.droppedTraces.Load() > 0 {
			return p.budgetSpent(ctx)
		}
		p.logger.Info("handoff processor stopped")
		return nil
	default:
	}
	return p.abandonFlush(ctx)
}

// shutdownDeadline is when the flush must stop: shutdown_timeout from now, or earlier when
// ctx says so, keeping a little of ctx's time to count and log what was left.
func (p *handoffProcessor) shutdownDeadline(ctx context.Context) time.Time {
	now := time.Now()
	deadline := now.Add(p.cfg.ShutdownTimeout)
	if d, ok := ctx.Deadline(); ok {
		d = d.Add(-min(max(d.Sub(now), 0)/10, 500*time.Millisecond))
		if d.Before(deadline) {
			deadline = d
		}
	}
	return deadline
}

// abandonFlush stops the flush when the shutdown budget ran out: every send in progress is
// cancelled, the shards count what they still hold as dropped, and so do the chunks still
// queued. A worker blocked in a downstream call that ignores cancellation counts the rest
// of its chunk as dropped once the call returns.
func (p *handoffProcessor) abandonFlush(ctx context.Context) error {
	p.stop()
	// The shards only wait on the (now cancelled) queue hand-off: they end at once.
	p.shardWG.Wait()
	for drained := false; !drained; {
		select {
		case chunk, ok := <-p.releaseQueue:
			if !ok {
				drained = true
				break
			}
			p.dropReleases(chunk.releases)
		default:
			drained = true
		}
	}
	return p.budgetSpent(ctx)
}

// budgetSpent logs and returns what the shutdown budget left unforwarded.
func (p *handoffProcessor) budgetSpent(ctx context.Context) error {
	traces, spans := p.droppedTraces.Load(), p.droppedSpans.Load()
	inFlight := p.heldTraces.Load()
	p.logger.Error("handoff processor: shutdown budget ran out before every buffered trace was forwarded",
		zap.Duration("shutdown_timeout", p.cfg.ShutdownTimeout),
		zap.Int64("traces_dropped", traces), zap.Int64("spans_dropped", spans),
		zap.Int64("traces_with_blocked_release_workers", inFlight))
	err := fmt.Errorf("handoff processor: shutdown timed out: %d traces (%d spans) not forwarded, %d more held by release workers blocked downstream", traces, spans, inFlight)
	if ctx.Err() != nil {
		err = errors.Join(err, ctx.Err())
	}
	return err
}

// EndOfInput is implemented by the handoff processor for in-process replays (handoffcheck):
// there is no more input, so every buffered trace is assembled and forwarded now, before
// EndOfInput returns, and downstream errors are returned. A trace whose root span arrived
// counts as complete; one without is marked incomplete (release reason end_of_input).
type EndOfInput interface {
	EndOfInput(ctx context.Context) error
}

var _ EndOfInput = (*handoffProcessor)(nil)

func (p *handoffProcessor) EndOfInput(ctx context.Context) error {
	p.mu.RLock()
	if !p.started || p.closed {
		p.mu.RUnlock()
		return nil
	}
	reply := make(chan shardReply, len(p.shards))
	sent := 0
	for _, s := range p.shards {
		select {
		case s.in <- shardMsg{reply: reply, endOfInput: true}:
			sent++
		case <-ctx.Done():
		}
	}
	p.mu.RUnlock()
	// The answers hand back buffered traces, so they are always awaited (a gave-up wait
	// would lose them): a shard held by backpressure answers once the release queue has
	// room, or when the shutdown budget ends.
	var releases []release
	for range sent {
		releases = append(releases, (<-reply).releases...)
	}
	err := p.forwardSync(ctx, p.assemble(releases))
	if sent < len(p.shards) {
		err = errors.Join(err, fmt.Errorf("handoff processor: end of input not reached every shard: %w", ctx.Err()))
	}
	return err
}

// tick makes every shard release what is due now (tests drive time through p.now).
func (p *handoffProcessor) tick() {
	reply := make(chan shardReply, len(p.shards))
	for _, s := range p.shards {
		s.in <- shardMsg{reply: reply}
	}
	for range p.shards {
		<-reply
	}
}
