package rules

import (
	"context"
	"fmt"
	"strings"

	"github.com/otelcol-handoff/otelcol-handoff/internal/agentgraph"
	"github.com/otelcol-handoff/otelcol-handoff/internal/celexpr"
	"github.com/otelcol-handoff/otelcol-handoff/internal/cluster"
	"github.com/otelcol-handoff/otelcol-handoff/internal/textsafe"
	"github.com/otelcol-handoff/otelcol-handoff/internal/trajectory"
)

// maxTrajectoryListed caps the steps an actual lists.
const maxTrajectoryListed = 30

// trajectoryRun is one trajectory to match: whose it is, and its steps.
type trajectoryRun struct {
	who   string
	span  string // the run's span id, when the trajectory is one run's
	steps []agentgraph.TrajectoryStep
}

// trajectory evaluates an EXPECT_TRAJECTORY step on the DAG of the case's topology step.
// Result.Score is the F1 of the alignment's precision and recall (both in Actual).
func (c *compiledCase) trajectory(r *Result, i int, s StepConfig, g *agentgraph.Graph, tc *traceCache) {
	ts := c.trajectories[i]
	runs, who, skip := trajectoryRuns(s, ts, g)
	mode := string(ts.mode)
	if s.Mode != mode {
		mode = fmt.Sprintf("%s (%s)", s.Mode, ts.mode)
	}
	r.Expected = fmt.Sprintf("%s of %s, %s: %s", ts.of, who, mode, ts.ref)
	if skip != "" {
		r.Outcome, r.Actual, r.Message = Skipped, "no trajectory", skip
		return
	}
	// Several receiving runs: the first that fails decides, else the lowest score.
	ctxVars := g.TestContext()
	var pick *trajectoryResult
	for k, run := range runs {
		res := ts.match(tc, run.steps, ctxVars)
		res.run, res.of, res.total = run, k+1, len(runs)
		if pick == nil || (pick.Pass && !res.Pass) || (pick.Pass && res.Pass && res.Score < pick.Score) {
			pick = &res
		}
	}
	res := *pick
	if tc.ctx.Err() != nil && res.evalErrors > 0 {
		// The params expressions were cut off by eval_timeout: nothing was decided.
		r.Outcome, r.Actual = Error, "not evaluated"
		r.Message = context.Cause(tc.ctx).Error() + ": trajectory not decided: " + res.firstErr
		return
	}
	score := res.Score
	r.Score = &score
	r.Actual = fmt.Sprintf("%s (precision %.2f, recall %.2f)", listSteps(res.run.steps), res.Precision, res.Recall)
	for _, st := range res.run.steps {
		if len(r.Spans) == maxListed {
			break
		}
		r.Spans = append(r.Spans, stepSpan(st))
	}
	if len(r.Spans) == 0 && res.run.span != "" {
		r.Spans = append(r.Spans, res.run.span) // nothing done: the run itself
	}
	whose := res.run.who + "'s " + ts.of
	if res.total > 1 {
		whose += fmt.Sprintf(" (run %d of %d, span %s)", res.of, res.total, res.run.span)
	}
	note := ""
	if res.evalErrors > 0 {
		note = fmt.Sprintf("; the params expression failed on %s and counted as not holding: %s",
			textsafe.Plural(res.evalErrors, "call", "calls"), res.firstErr)
	}
	if res.Pass {
		r.Outcome = Pass
		r.Message = fmt.Sprintf("%s match the reference (%s): precision %.2f, recall %.2f%s", whose, ts.mode, res.Precision, res.Recall, note)
		return
	}
	r.Outcome = Fail
	if ts.of == TrajectoryOfAgents {
		r.classify(cluster.WrongDispatch) // the work went to other agents, or in another order
	}
	r.Message = fmt.Sprintf("%s diverge from the reference (%s): %s; precision %.2f, recall %.2f%s",
		whose, ts.mode, res.Divergence, res.Precision, res.Recall, note)
}

// trajectoryResult is one run's match.
type trajectoryResult struct {
	trajectory.Result
	run        trajectoryRun
	of, total  int
	evalErrors int
	firstErr   string
}

// match aligns one run's steps with the reference, the params predicates evaluated on the
// calls' parsed arguments (with context.*).
func (ts *trajectoryStep) match(tc *traceCache, steps []agentgraph.TrajectoryStep, ctxVars map[string]any) trajectoryResult {
	calls := make([]trajectory.Call, len(steps))
	for k, st := range steps {
		calls[k] = trajectory.Call{Name: st.Name, Response: st.Response}
	}
	var out trajectoryResult
	pred := func(step, call int) bool {
		expr := ts.params[step]
		if expr == nil || steps[call].Call == nil {
			return expr == nil
		}
		params, _ := steps[call].Call.ParsedArgs()
		val, _, err := expr.Eval(tc.ctx, map[string]any{"params": params, "context": ctxVars})
		var ok bool
		if err == nil {
			ok, _, err = celexpr.Bool(val)
		}
		if err != nil {
			if out.evalErrors == 0 {
				out.firstErr = err.Error()
			}
			out.evalErrors++
			return false
		}
		return ok
	}
	out.Result = trajectory.Match(ts.mode, ts.ref, calls, pred)
	return out
}

// trajectoryRuns selects the trajectories a step matches: agentName's runs as one logical
// agent; each receiving run of the fromAgent/toAgent handoffs; else the whole trace.
func trajectoryRuns(s StepConfig, ts *trajectoryStep, g *agentgraph.Graph) (runs []trajectoryRun, who, skip string) {
	read := func(invs []*agentgraph.Invocation) []agentgraph.TrajectoryStep {
		if ts.of == TrajectoryOfAgents {
			return g.HandoffTrajectory(invs, ts.subtree)
		}
		return g.ToolTrajectory(invs, ts.subtree)
	}
	scope := ""
	if ts.subtree {
		scope = "'s subtree"
	}
	switch {
	case s.AgentName != "":
		who = s.AgentName + scope
		var invs []*agentgraph.Invocation
		for _, inv := range g.Invocations {
			if inv.Name == s.AgentName {
				invs = append(invs, inv)
			}
		}
		if len(invs) == 0 {
			return nil, who, notRun(g, s.AgentName) + "; no trajectory to match"
		}
		span := ""
		if len(invs) == 1 {
			span = invs[0].Span.ID.String()
		}
		return []trajectoryRun{{who: who, span: span, steps: read(invs)}}, who, ""
	case s.FromAgent != "" || s.ToAgent != "":
		from, to := s.FromAgent, s.ToAgent
		if from == "" {
			from = "any agent"
		}
		if to == "" {
			to = "any agent"
		}
		who = fmt.Sprintf("the receiver of %s -> %s%s", from, to, scope)
		for _, e := range g.Edges {
			if (s.FromAgent == "" || e.From.Name == s.FromAgent) && (s.ToAgent == "" || e.To.Name == s.ToAgent) {
				runs = append(runs, trajectoryRun{who: e.To.Name + scope, span: e.To.Span.ID.String(), steps: read([]*agentgraph.Invocation{e.To})})
			}
		}
		if len(runs) == 0 {
			return nil, who, withNotRun(g, fmt.Sprintf("no handoff %s -> %s in the trace; no trajectory to match", from, to), s.FromAgent, s.ToAgent)
		}
		return runs, who, ""
	}
	return []trajectoryRun{{who: "the trace", steps: read(nil)}}, "the trace", ""
}

// listSteps writes a trajectory: names in order, the steps of one LLM response as
// [a | b], the first maxTrajectoryListed steps.
func listSteps(steps []agentgraph.TrajectoryStep) string {
	if len(steps) == 0 {
		return "none"
	}
	var parts []string
	n := 0
	for k := 0; k < len(steps) && n < maxTrajectoryListed; {
		end := k + 1
		if r := steps[k].Response; r >= 0 {
			for end < len(steps) && steps[end].Response == r {
				end++
			}
		}
		names := make([]string, 0, end-k)
		for _, st := range steps[k:end] {
			names = append(names, st.Name)
		}
		n += end - k
		if len(names) > 1 {
			parts = append(parts, "["+strings.Join(names, " | ")+"]")
		} else {
			parts = append(parts, names[0])
		}
		k = end
	}
	out := strings.Join(parts, ", ")
	if more := len(steps) - n; more > 0 {
		out += fmt.Sprintf(", … and %d more", more)
	}
	return out
}

// stepSpan is the span a trajectory step stands for: the tool call, or the receiver's run.
func stepSpan(st agentgraph.TrajectoryStep) string {
	if st.Call != nil {
		return st.Call.Span.ID.String()
	}
	return st.Edge.To.Span.ID.String()
}
