package judge

import (
	"context"
	"errors"
	"sync/atomic"
	"testing"

	"github.com/stretchr/testify/require"
)

// scripted grades a request by its rubric name: "pass", "fail", "panic" or "wait" (until
// ctx is done); it counts the gradings running at once.
type scripted struct {
	concurrency   int
	running, peak atomic.Int32
}

func (s *scripted) Info() Info { return Info{Model: "m", Concurrency: s.concurrency} }

func (s *scripted) Grade(ctx context.Context, req Request) (Verdict, error) {
	n := s.running.Add(1)
	defer s.running.Add(-1)
	for p := s.peak.Load(); n > p && !s.peak.CompareAndSwap(p, n); p = s.peak.Load() {
	}
	switch req.Rubric {
	case "panic":
		panic("bad answer")
	case "wait":
		<-ctx.Done()
		return Verdict{}, ctx.Err()
	case "fail":
		return Verdict{Score: 0.1}, nil
	}
	return Verdict{Score: 0.9, Pass: true}, nil
}

// TestBatch: every job is graded within the grader's concurrency, the finishers run after
// all of them in the order added, a panic in the grader is an error, and a shutdown names
// itself as the cause of the gradings it cut short.
func TestBatch(t *testing.T) {
	g := &scripted{concurrency: 2}
	var b Batch
	var jobs []*Job
	for _, r := range []string{"pass", "fail", "panic", "pass", "pass"} {
		jobs = append(jobs, b.Add(Request{Rubric: r}))
	}
	var order []int
	for i := range 3 {
		b.Then(func() { order = append(order, i) })
	}
	b.Run(context.Background(), g)
	require.Equal(t, []int{0, 1, 2}, order)
	require.LessOrEqual(t, g.peak.Load(), int32(2))
	require.True(t, jobs[0].Verdict.Pass)
	require.Equal(t, 0.1, jobs[1].Verdict.Score)
	require.EqualError(t, jobs[2].Err, "internal error while grading: bad answer")

	var stopped Batch
	job := stopped.Add(Request{Rubric: "wait"})
	ctx, cancel := context.WithCancelCause(context.Background())
	cancel(ErrShutDown)
	stopped.Run(ctx, g)
	require.True(t, errors.Is(job.Err, ErrShutDown), "%v", job.Err)
}
