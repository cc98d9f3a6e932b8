package check

import (
	"context"
	"errors"

	"github.com/otelcol-handoff/otelcol-handoff/internal/agentgraph"
	"github.com/otelcol-handoff/otelcol-handoff/internal/gate"
	"github.com/otelcol-handoff/otelcol-handoff/internal/judge"
	"github.com/otelcol-handoff/otelcol-handoff/internal/rubric"
)

// Run is one case's steps running on one trace: what each step reads and where it
// puts its results.
type Run struct {
	Base  Result
	Trace *Trace
	// Judging is what the judge-graded kinds read: the grader, the named rubrics, the gates.
	Judging *Judging
	// DAG is the DAG of the case's most recent ASSERT_AGENT_TOPOLOGY step (nil before one).
	DAG *agentgraph.Graph
	Out *Out
}

// NewResult starts a NewResult of the step id.
func (run *Run) NewResult(id, action string) Result {
	r := run.Base
	r.Step, r.Action = id, action
	return r
}

// Out collects a trace's results in config order, and which of them a judge grading
// decides later (filled: the result the grading fills in).
type Out struct {
	Results []Result
	Pending []int
	Filled  []*Result
}

func (o *Out) Add(r ...Result) { o.Results = append(o.Results, r...) }

// AddGraded adds r, decided as it is unless the judge grades it: filled is then the result
// the grading fills in.
func (o *Out) AddGraded(r Result, filled *Result) {
	if filled != nil {
		o.Pending = append(o.Pending, len(o.Results))
		o.Filled = append(o.Filled, filled)
	}
	o.Results = append(o.Results, r)
}

// Truncate drops what was added after n results.
func (o *Out) Truncate(n int) {
	o.Results = o.Results[:n]
	for len(o.Pending) > 0 && o.Pending[len(o.Pending)-1] >= n {
		o.Pending = o.Pending[:len(o.Pending)-1]
		o.Filled = o.Filled[:len(o.Filled)-1]
	}
}

// Judging is what the judge-graded steps read: the grader, the named rubrics and the gates.
type Judging struct {
	// Grader grades rubrics (nil: judge-graded parts are skipped).
	Grader judge.Grader
	// Rubrics are the named rubrics (judgeRubricId; a rubric named after an axis or
	// GROUNDEDNESS replaces the built-in text).
	Rubrics map[string]string
	Gates   *gate.Set
}

// Trace is one trace under evaluation, as the steps read it.
type Trace struct {
	// Ctx bounds the deterministic evaluation (eval_timeout); CEL programs and the
	// Go-side checks stop when it is done.
	Ctx context.Context
	G   *agentgraph.Graph
	// Batch collects the trace's judge gradings.
	Batch *judge.Batch
	// Quiet: only each result's case, step, outcome and cluster are read (an exporter
	// whose only output is its metrics). The kinds that honor it decide the outcome and
	// the cluster as they always do and leave the texts that only say why (Actual,
	// Message, Spans) empty; no signature is computed. Errors keep their message.
	Quiet bool
	x     *rubric.Index
}

// Index returns the trace's span index for the handoff rubrics.
func (tc *Trace) Index() *rubric.Index {
	if tc.x == nil {
		tc.x = rubric.NewIndex(tc.G)
	}
	return tc.x
}

// JudgeOutcome maps a grading error to an outcome: a spent budget skips the part, every
// other error (timeout, 429 after the retries, off-schema answer) is an error.
func JudgeOutcome(err error) (Outcome, string) {
	if errors.Is(err, judge.ErrQueueFull) || errors.Is(err, judge.ErrShutDown) {
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

func (e *Judging) Verdict(v judge.Verdict) *JudgeVerdict {
	info := e.Grader.Info()
	return &JudgeVerdict{Model: info.Model, Template: info.Template, Score: v.Score, Pass: v.Pass, Reason: v.Reason, Samples: v.Samples}
}
