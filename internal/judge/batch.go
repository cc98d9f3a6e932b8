package judge

import (
	"context"
	"errors"
	"fmt"
	"sync"
	"time"
)

// Grader grades content with an LLM judge (a Client). It must be safe for concurrent use.
type Grader interface {
	Grade(ctx context.Context, req Request) (Verdict, error)
	Info() Info
}

// traceTimeouter is implemented by graders that bound the judge calls of one trace.
type traceTimeouter interface{ TraceTimeout() time.Duration }

// Reasons a trace's gradings were never answered; their results are errors that say so.
var (
	// ErrQueueFull: the grading queue (judge.queue_size) was full when the trace arrived.
	ErrQueueFull = errors.New("judge queue full (judge.queue_size): not graded")
	// ErrShutDown: the collector stopped before the judge answered.
	ErrShutDown = errors.New("shut down before grading")
)

// Job is one grading of a batch: its request, then the judge's verdict or error.
type Job struct {
	Req     Request
	Verdict Verdict
	Err     error
}

// Batch collects the gradings of one trace: the trace's checks run deterministically
// first and add their jobs, then every grading runs (in parallel, within the grader's
// concurrency), then the finishers decide the results in the order they were added, so the
// output does not depend on which answer came first.
type Batch struct {
	jobs   []*Job
	finish []func()
}

// Add schedules a grading.
func (b *Batch) Add(req Request) *Job {
	j := &Job{Req: req}
	b.jobs = append(b.jobs, j)
	return j
}

// Then runs f after every grading of the batch is answered.
func (b *Batch) Then(f func()) { b.finish = append(b.finish, f) }

// Run grades every job with at most the grader's concurrency at once, within the grader's
// per-trace timeout, then runs the finishers. A grading cut short by a ctx canceled with
// cause ErrShutDown ends with that error, rather than blaming the judge.
func (b *Batch) Run(ctx context.Context, g Grader) {
	if len(b.jobs) > 0 {
		if tt, ok := g.(traceTimeouter); ok && tt.TraceTimeout() > 0 {
			var cancel context.CancelFunc
			ctx, cancel = context.WithTimeout(ctx, tt.TraceTimeout())
			defer cancel()
		}
		workers := max(1, min(g.Info().Concurrency, len(b.jobs)))
		next := make(chan *Job)
		var wg sync.WaitGroup
		for i := 0; i < workers; i++ {
			wg.Add(1)
			go func() {
				defer wg.Done()
				for j := range next {
					j.Verdict, j.Err = gradeSafely(ctx, g, j.Req)
				}
			}()
		}
		for _, j := range b.jobs {
			next <- j
		}
		close(next)
		wg.Wait()
		if cause := context.Cause(ctx); errors.Is(cause, ErrShutDown) {
			for _, j := range b.jobs {
				if j.Err != nil {
					j.Err = cause
				}
			}
		}
	}
	for _, f := range b.finish {
		f()
	}
}

// gradeSafely turns a panic in the grader into an error: a bad answer never takes the
// collector down.
func gradeSafely(ctx context.Context, g Grader, req Request) (v Verdict, err error) {
	defer func() {
		if p := recover(); p != nil {
			err = fmt.Errorf("internal error while grading: %v", p)
		}
	}()
	return g.Grade(ctx, req)
}
