package rules

import (
	"context"

	"github.com/otelcol-handoff/otelcol-handoff/internal/judge"
)

// Grading is the judge work a trace's evaluation left for later: the trace's gradings and
// the results they decide. Run or Fail it exactly once.
type Grading struct {
	ev *Evaluator
	jr *judge.Batch
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
// cause judge.ErrShutDown before or during the gradings makes the unanswered ones errors
// naming it; nothing is sent once ctx is done.
func (gr *Grading) Run(ctx context.Context) (all, graded []Result) {
	if ctx.Err() != nil {
		return gr.Fail(context.Cause(ctx))
	}
	gr.jr.Run(ctx, gr.ev.Grader)
	graded = make([]Result, 0, len(gr.pending))
	for k, i := range gr.pending {
		gr.all[i] = *gr.filled[k]
		gr.all[i].StampCluster()
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
		r.StampCluster()
		all[i] = r
		graded = append(graded, r)
	}
	return all, graded
}
