package handoffprocessor

import (
	"context"
	"errors"
	"hash/maphash"
	"runtime"
	"sync"
	"time"

	"go.opentelemetry.io/collector/component"
	"go.opentelemetry.io/collector/consumer"
	"go.opentelemetry.io/collector/pdata/ptrace"
	"go.opentelemetry.io/collector/processor"
	"go.uber.org/zap"

	"github.com/otelcol-handoff/otelcol-handoff/internal/agentgraph"
)

type handoffProcessor struct {
	cfg       *Config
	next      consumer.Traces
	logger    *zap.Logger
	telemetry *telemetry
	graphOpts agentgraph.Options
	policy    agentgraph.ContentPolicy
	now       func() time.Time

	seed         maphash.Seed
	shards       []*shard
	releaseQueue chan []release
	shardWG      sync.WaitGroup
	workerWG     sync.WaitGroup

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
	numShards := cfg.NumShards
	if numShards == 0 {
		numShards = runtime.GOMAXPROCS(0)
	}
	p := &handoffProcessor{
		cfg:          cfg,
		next:         next,
		logger:       set.Logger,
		telemetry:    tel,
		graphOpts:    agentgraph.Options{Chains: cfg.Chains},
		policy:       cfg.contentPolicy(),
		now:          time.Now,
		seed:         maphash.MakeSeed(),
		releaseQueue: make(chan []release, 2*numShards),
		done:         make(chan struct{}),
	}
	perShard := max(1, (cfg.NumTraces+numShards-1)/numShards)
	lateCache := max(1, (cfg.LateSpanCacheSize+numShards-1)/numShards)
	for range numShards {
		p.shards = append(p.shards, newShard(p, perShard, lateCache))
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
		zap.Duration("max_wait", p.cfg.MaxWait), zap.Int("num_traces", p.cfg.NumTraces))
	return nil
}

// ConsumeTraces buffers spans per trace. Traces released early by this batch (evicted or
// too large) and late spans are forwarded before it returns, so their downstream errors
// reach the caller; completed traces leave from the release workers.
func (p *handoffProcessor) ConsumeTraces(ctx context.Context, td ptrace.Traces) error {
	frags := splitByTrace(td)
	if p.cfg.MaxTraceSizeBytes > 0 {
		var sizer ptrace.ProtoMarshaler
		for _, f := range frags {
			f.bytes = sizer.TracesSize(f.data)
		}
	}
	p.mu.RLock()
	if !p.started || p.closed {
		p.mu.RUnlock()
		return p.forwardUnbuffered(ctx, frags)
	}
	perShard := make([][]*fragment, len(p.shards))
	var out []*fragment
	for _, f := range frags {
		if f.id.IsEmpty() {
			out = append(out, f) // no trace id: nothing to assemble, forward as is
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
	var releases []release
	for range sent {
		r := <-reply
		releases = append(releases, r.releases...)
		late = append(late, r.late...)
	}
	p.mu.RUnlock()

	batch := ptrace.NewTraces()
	for _, f := range out {
		f.data.ResourceSpans().MoveAndAppendTo(batch.ResourceSpans())
	}
	for _, f := range late {
		markSpans(f.data, agentgraph.AttrLateSpan)
		p.telemetry.lateSpans(ctx, f.spans)
		f.data.ResourceSpans().MoveAndAppendTo(batch.ResourceSpans())
	}
	if len(releases) > 0 {
		var assembled ptrace.Traces
		ctx, assembled = p.assemble(ctx, releases)
		assembled.ResourceSpans().MoveAndAppendTo(batch.ResourceSpans())
	}
	if batch.ResourceSpans().Len() == 0 {
		return nil
	}
	return p.next.ConsumeTraces(ctx, batch)
}

// forwardUnbuffered passes spans straight through before Start and after Shutdown:
// nothing is ever dropped. They count as late spans (not assembled).
func (p *handoffProcessor) forwardUnbuffered(ctx context.Context, frags []*fragment) error {
	batch := ptrace.NewTraces()
	for _, f := range frags {
		markSpans(f.data, agentgraph.AttrLateSpan)
		p.telemetry.lateSpans(ctx, f.spans)
		f.data.ResourceSpans().MoveAndAppendTo(batch.ResourceSpans())
	}
	if batch.ResourceSpans().Len() == 0 {
		return nil
	}
	return p.next.ConsumeTraces(ctx, batch)
}

// releaseWorker assembles and forwards the batches the shards release on their deadlines
// and on shutdown.
func (p *handoffProcessor) releaseWorker() {
	defer p.workerWG.Done()
	for batch := range p.releaseQueue {
		ctx, td := p.assemble(context.Background(), batch)
		if err := p.next.ConsumeTraces(ctx, td); err != nil {
			p.telemetry.releaseFailures(ctx, td.SpanCount())
			p.logger.Error("downstream rejected released traces",
				zap.Int("traces", len(batch)), zap.Int("spans", td.SpanCount()), zap.Error(err))
		}
	}
}

// Shutdown stops intake, releases every buffered trace (marked incomplete) and waits for
// the release workers, bounded by ctx. It is idempotent.
func (p *handoffProcessor) Shutdown(ctx context.Context) error {
	p.shutdownOnce.Do(func() {
		p.mu.Lock()
		wasStarted := p.started
		p.closed = true
		p.mu.Unlock()
		go func() {
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
	case <-ctx.Done():
		return errors.Join(errors.New("handoff processor: shutdown timed out before every buffered trace was released"), ctx.Err())
	}
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
	for _, s := range p.shards {
		s.in <- shardMsg{reply: reply, endOfInput: true}
	}
	var releases []release
	for range p.shards {
		releases = append(releases, (<-reply).releases...)
	}
	p.mu.RUnlock()
	if len(releases) == 0 {
		return nil
	}
	ctx, td := p.assemble(ctx, releases)
	return p.next.ConsumeTraces(ctx, td)
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
