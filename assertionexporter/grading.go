package assertionexporter

import (
	"context"
	"errors"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"go.uber.org/zap"

	"github.com/otelcol-handoff/otelcol-handoff/internal/agentgraph"
	"github.com/otelcol-handoff/otelcol-handoff/internal/judge"
	"github.com/otelcol-handoff/otelcol-handoff/internal/rules"
)

// gradingJob is one trace waiting for its judge gradings.
type gradingJob struct {
	// g is the trace's graph, for the run's picture of a failing trace.
	g       *agentgraph.Graph
	grading *rules.Grading
	// recorded is set by whoever records the job's results first: its worker, or Shutdown
	// giving up on a grader that ignores cancellation.
	recorded atomic.Bool
}

// gradingQueue takes judge gradings off ConsumeTraces: a bounded queue of traces served by
// judge.concurrency workers owned by the exporter (started in Start, ended in Shutdown).
type gradingQueue struct {
	e     *assertionExporter
	queue chan *gradingJob
	block bool // a full queue makes enqueue wait (judge.block_on_full_queue)

	// ctx is the workers' context: Shutdown cancels it with cause judge.ErrShutDown, which
	// cancels the judge's requests in flight and keeps queued ones from being sent.
	ctx    context.Context
	cancel context.CancelCauseFunc
	// stopping is closed when Shutdown begins; mu orders enqueues before the moment
	// Shutdown takes the queue over (stopped).
	stopping chan struct{}
	mu       sync.RWMutex
	stopped  bool
	workers  sync.WaitGroup

	// outstanding counts jobs accepted and not yet recorded; idle are Drain's waiters.
	omu         sync.Mutex
	outstanding int
	idle        []chan struct{}
	inflight    map[*gradingJob]struct{}
}

func newGradingQueue(e *assertionExporter, size int, block bool) *gradingQueue {
	ctx, cancel := context.WithCancelCause(context.Background())
	return &gradingQueue{
		e: e, queue: make(chan *gradingJob, size), block: block,
		ctx: ctx, cancel: cancel, stopping: make(chan struct{}),
		inflight: map[*gradingJob]struct{}{},
	}
}

func (q *gradingQueue) start(workers int) {
	for i := 0; i < max(1, workers); i++ {
		q.workers.Add(1)
		go q.work()
	}
}

// work grades queued traces until Shutdown; then it finishes what is left in the queue,
// which fails at once (the context is canceled: nothing is sent).
func (q *gradingQueue) work() {
	defer q.workers.Done()
	for {
		select {
		case j := <-q.queue:
			q.grade(j)
		case <-q.stopping:
			for {
				select {
				case j := <-q.queue:
					q.grade(j)
				default:
					return
				}
			}
		}
	}
}

func (q *gradingQueue) grade(j *gradingJob) {
	q.omu.Lock()
	q.inflight[j] = struct{}{}
	q.omu.Unlock()
	all, graded := j.grading.Run(q.ctx)
	q.finish(j, all, graded, q.ctx.Err() != nil)
}

// finish records a job's results once and counts it done.
func (q *gradingQueue) finish(j *gradingJob, all, graded []rules.Result, shutdown bool) {
	if !j.recorded.CompareAndSwap(false, true) {
		return
	}
	ctx := context.Background()
	if shutdown {
		if n := countErrors(graded, judge.ErrShutDown); n > 0 {
			q.e.telemetry.notGraded(ctx, notGradedShutdown, n)
		}
	}
	q.e.recordGraded(ctx, j, all, graded)
	q.e.telemetry.queued(ctx, -1)
	q.omu.Lock()
	delete(q.inflight, j)
	q.outstanding--
	var wake []chan struct{}
	if q.outstanding == 0 {
		wake, q.idle = q.idle, nil
	}
	q.omu.Unlock()
	for _, ch := range wake {
		close(ch)
	}
}

// countErrors counts the results a reason decided.
func countErrors(results []rules.Result, reason error) int {
	n := 0
	for _, r := range results {
		if r.Outcome == rules.Error && strings.Contains(r.Message, reason.Error()) {
			n++
		}
	}
	return n
}

// enqueue hands a trace's gradings to the workers. A full queue decides them as errors at
// once (or waits, with block_on_full_queue); after Shutdown began they fail as shut down.
func (q *gradingQueue) enqueue(ctx context.Context, j *gradingJob) {
	q.omu.Lock()
	q.outstanding++
	q.omu.Unlock()
	q.e.telemetry.queued(ctx, 1)
	q.mu.RLock()
	accepted, reason := q.offer(j)
	q.mu.RUnlock()
	if accepted {
		return
	}
	all, graded := j.grading.Fail(reason)
	if errors.Is(reason, judge.ErrQueueFull) {
		q.e.telemetry.notGraded(ctx, notGradedQueueFull, len(graded))
		q.finish(j, all, graded, false)
		return
	}
	q.e.telemetry.notGraded(ctx, notGradedShutdown, len(graded))
	q.finish(j, all, graded, false)
}

// offer puts j on the queue; called under q.mu's read lock.
func (q *gradingQueue) offer(j *gradingJob) (bool, error) {
	if q.stopped {
		return false, judge.ErrShutDown
	}
	select {
	case <-q.stopping:
		return false, judge.ErrShutDown
	default:
	}
	if !q.block {
		select {
		case q.queue <- j:
			return true, nil
		default:
			return false, judge.ErrQueueFull
		}
	}
	select {
	case q.queue <- j:
		return true, nil
	case <-q.stopping:
		return false, judge.ErrShutDown
	}
}

// drain waits until every accepted job is recorded.
func (q *gradingQueue) drain(ctx context.Context) error {
	q.omu.Lock()
	if q.outstanding == 0 {
		q.omu.Unlock()
		return nil
	}
	ch := make(chan struct{})
	q.idle = append(q.idle, ch)
	q.omu.Unlock()
	select {
	case <-ch:
		return nil
	case <-ctx.Done():
		return context.Cause(ctx)
	}
}

// stop cancels every outstanding grading and records its results, within budget (or ctx's
// deadline, if sooner). Workers stop at once (the judge's requests are canceled); a
// grader that ignores cancellation is given up on when the budget runs out, and its
// trace recorded as shut down.
func (q *gradingQueue) stop(ctx context.Context, budget time.Duration) {
	deadline := time.Now().Add(budget)
	if d, ok := ctx.Deadline(); ok && d.Before(deadline) {
		deadline = d
	}
	close(q.stopping)
	q.cancel(judge.ErrShutDown)
	// Wait out enqueues in progress; none starts after this.
	q.mu.Lock()
	q.stopped = true
	q.mu.Unlock()

	done := make(chan struct{})
	go func() {
		q.workers.Wait()
		close(done)
	}()
	timer := time.NewTimer(time.Until(deadline))
	defer timer.Stop()
	select {
	case <-done:
	case <-timer.C:
		q.e.logger.Warn("assertion exporter shutdown: the judge did not stop within shutdown_timeout; recording its traces as not graded",
			zap.Duration("shutdown_timeout", budget))
	}
	// What the workers left: queued jobs (if the workers gave up) and gradings stuck in a
	// grader that ignores its context.
	for left := true; left; {
		select {
		case j := <-q.queue:
			all, graded := j.grading.Fail(judge.ErrShutDown)
			q.finish(j, all, graded, true)
		default:
			left = false
		}
	}
	q.omu.Lock()
	stuck := make([]*gradingJob, 0, len(q.inflight))
	for j := range q.inflight {
		stuck = append(stuck, j)
	}
	q.omu.Unlock()
	for _, j := range stuck {
		all, graded := j.grading.Fail(judge.ErrShutDown)
		q.finish(j, all, graded, true)
	}
}

// logLimiter lets one log line through per interval and counts the ones it held back, so
// a failure repeated on every trace (a full disk) does not flood the logs.
type logLimiter struct {
	mu         sync.Mutex
	last       time.Time
	suppressed int
}

// logEvery is the least time between two lines of one repeated failure.
const logEvery = time.Minute

// allow reports whether to log now, and how many were held back since the last line.
func (l *logLimiter) allow(now time.Time) (int, bool) {
	l.mu.Lock()
	defer l.mu.Unlock()
	if !l.last.IsZero() && now.Sub(l.last) < logEvery {
		l.suppressed++
		return 0, false
	}
	n := l.suppressed
	l.last, l.suppressed = now, 0
	return n, true
}
