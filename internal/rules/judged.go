package rules

import (
	"context"
	"errors"
	"fmt"
	"sync"
	"time"

	"github.com/otelcol-handoff/otelcol-handoff/internal/judge"
)

// Grader grades content with an LLM judge (internal/judge.Client). It must be safe for
// concurrent use.
type Grader interface {
	Grade(ctx context.Context, req judge.Request) (judge.Verdict, error)
	Info() judge.Info
}

// traceTimeouter is implemented by graders that bound the judge calls of one trace.
type traceTimeouter interface{ TraceTimeout() time.Duration }

// JudgeVerdict is what the judge answered for one result.
type JudgeVerdict struct {
	Model    string  `json:"model"`
	Template string  `json:"template"`
	Score    float64 `json:"score"`
	Pass     bool    `json:"pass"`
	Reason   string  `json:"reason"`
	Samples  int     `json:"samples"`
}

// Reasons a trace's gradings were never answered; their results are errors that say so.
var (
	// ErrQueueFull: the grading queue (judge.queue_size) was full when the trace arrived.
	ErrQueueFull = errors.New("judge queue full (judge.queue_size): not graded")
	// ErrShutDown: the collector stopped before the judge answered.
	ErrShutDown = errors.New("shut down before grading")
)

// Grading is the judge work a trace's evaluation left for later: the trace's gradings and
// the results they decide. Run or Fail it exactly once.
type Grading struct {
	ev *Evaluator
	jr *judgeRun
	// all holds every result of the trace in config order; those at pending wait for the
	// judge, which fills in filled (one per pending result).
	all     []Result
	pending []int
	filled  []*Result
	// before are the pending results as the deterministic parts left them, for Fail.
	before []Result
}

// Len is the number of results the judge decides.
func (gr *Grading) Len() int { return len(gr.pending) }

// Run grades (within the judge's per-trace timeout, bounded by ctx) and returns every
// result of the trace in config order, and the graded ones alone. A ctx canceled with
// cause ErrShutDown before or during the gradings makes the unanswered ones errors
// naming it; nothing is sent once ctx is done.
func (gr *Grading) Run(ctx context.Context) (all, graded []Result) {
	if ctx.Err() != nil {
		return gr.Fail(context.Cause(ctx))
	}
	gr.jr.run(ctx, gr.ev.judge)
	graded = make([]Result, 0, len(gr.pending))
	for k, i := range gr.pending {
		gr.all[i] = *gr.filled[k]
		graded = append(graded, gr.all[i])
	}
	return gr.all, graded
}

// Fail decides every pending result as an error with reason, without asking the judge.
// It builds its own results (and reads none a running Run writes), so a caller may give
// up on a Run stuck in a grader that ignores cancellation.
func (gr *Grading) Fail(reason error) (all, graded []Result) {
	all = make([]Result, len(gr.all))
	pending := make(map[int]int, len(gr.pending))
	for k, i := range gr.pending {
		pending[i] = k
	}
	graded = make([]Result, 0, len(gr.pending))
	for i := range all {
		k, ok := pending[i]
		if !ok {
			all[i] = gr.all[i]
			continue
		}
		r := gr.before[k]
		r.Outcome, r.Score, r.Judge = Error, nil, nil
		r.Actual = "not graded"
		r.Message = reason.Error()
		all[i] = r
		graded = append(graded, r)
	}
	return all, graded
}

// judgeJob is one grading requested while a trace's steps are evaluated.
type judgeJob struct {
	req judge.Request
	v   judge.Verdict
	err error
}

// judgeRun collects the gradings of one trace: the steps are evaluated deterministically
// first, then every grading runs (in parallel, within the grader's concurrency), then the
// finishers fill in the results in evaluation order, so the output does not depend on
// which answer came first.
type judgeRun struct {
	jobs   []*judgeJob
	finish []func()
}

func (jr *judgeRun) add(req judge.Request) *judgeJob {
	j := &judgeJob{req: req}
	jr.jobs = append(jr.jobs, j)
	return j
}

func (jr *judgeRun) then(f func()) { jr.finish = append(jr.finish, f) }

// run grades every job with at most the grader's concurrency at once, within the
// grader's per-trace timeout, then runs the finishers.
func (jr *judgeRun) run(ctx context.Context, g Grader) {
	if len(jr.jobs) > 0 {
		if tt, ok := g.(traceTimeouter); ok && tt.TraceTimeout() > 0 {
			var cancel context.CancelFunc
			ctx, cancel = context.WithTimeout(ctx, tt.TraceTimeout())
			defer cancel()
		}
		workers := max(1, min(g.Info().Concurrency, len(jr.jobs)))
		next := make(chan *judgeJob)
		var wg sync.WaitGroup
		for i := 0; i < workers; i++ {
			wg.Add(1)
			go func() {
				defer wg.Done()
				for j := range next {
					j.v, j.err = gradeSafely(ctx, g, j.req)
				}
			}()
		}
		for _, j := range jr.jobs {
			next <- j
		}
		close(next)
		wg.Wait()
		// A grading cut short because the collector is stopping says so, rather than
		// blaming the judge.
		if cause := context.Cause(ctx); errors.Is(cause, ErrShutDown) {
			for _, j := range jr.jobs {
				if j.err != nil {
					j.err = cause
				}
			}
		}
	}
	for _, f := range jr.finish {
		f()
	}
}

// gradeSafely turns a panic in the grader into an error: a bad answer never takes the
// collector down.
func gradeSafely(ctx context.Context, g Grader, req judge.Request) (v judge.Verdict, err error) {
	defer func() {
		if p := recover(); p != nil {
			err = fmt.Errorf("internal error while grading: %v", p)
		}
	}()
	return g.Grade(ctx, req)
}

// judgeOutcome maps a grading error to an outcome: a spent budget skips the part, every
// other error (timeout, 429 after the retries, off-schema answer) is an error.
func judgeOutcome(err error) (Outcome, string) {
	if errors.Is(err, ErrQueueFull) || errors.Is(err, ErrShutDown) {
		return Error, err.Error()
	}
	if errors.Is(err, judge.ErrBudgetExhausted) {
		return Skipped, "not graded: " + err.Error()
	}
	var je *judge.Error
	if errors.As(err, &je) && je.Kind == judge.KindCanceled {
		return Error, "judge error: no answer within the trace's time for judging (judge.trace_timeout) or the collector is stopping: " + err.Error()
	}
	return Error, "judge error: " + err.Error()
}

func (e *Evaluator) verdict(v judge.Verdict) *JudgeVerdict {
	info := e.judge.Info()
	return &JudgeVerdict{Model: info.Model, Template: info.Template, Score: v.Score, Pass: v.Pass, Reason: v.Reason, Samples: v.Samples}
}
