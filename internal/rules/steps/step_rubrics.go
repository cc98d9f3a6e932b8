package steps

import (
	"fmt"
	"strings"

	"github.com/otelcol-handoff/otelcol-handoff/internal/agentgraph"
	"github.com/otelcol-handoff/otelcol-handoff/internal/judge"
	"github.com/otelcol-handoff/otelcol-handoff/internal/rubric"
	"github.com/otelcol-handoff/otelcol-handoff/internal/rules/check"
)

// RubricsStep is EXPECT_HANDOFF_RUBRICS: every handoff the step selects (FromAgent and
// ToAgent are optional filters) is graded on each of its rubrics (default: all four of
// seed 004); one result per handoff per rubric, step id STEP.Axis. How a rubric's score is
// decided (assertionexporter/README.md, "Handoff rubrics"):
//   - a deterministic part that fails scores the handoff 0 (fail); the judge is not asked;
//   - otherwise, with a judge, the judge's score and pass decide (its error: outcome error,
//     no score; its budget spent: skipped);
//   - otherwise, without a judge, deterministic parts that passed score 1 (pass), and a
//     rubric none of whose parts could run is skipped with the reason.
type RubricsStep struct {
	FromAgent string `seed:"fromAgent"`
	ToAgent   string `seed:"toAgent"`
	// Rubrics to grade (default: all four; with DeterministicOnly, the three with a
	// deterministic part).
	Rubrics []string `seed:"rubrics"`
	// IgnoredTools are never counted as out of scope (framework plumbing beyond the
	// built-in list).
	IgnoredTools []string `seed:"ignoredTools"`
	// TransientErrors are the errors taken as transient (regular expressions over the
	// error's type and message; default: defaultTransient).
	TransientErrors []string `seed:"transientErrors"`
	// DeterministicOnly runs only the rubrics' deterministic parts: the judge is never
	// asked, configured or not.
	DeterministicOnly bool `seed:"deterministicOnly"`
}

// Action is EXPECT_HANDOFF_RUBRICS.
func (*RubricsStep) Action() string { return check.ActionRubrics }

func (*RubricsStep) ReadsDAG() {}

// ValidateKeys checks the rubrics and the transient-error patterns.
func (s *RubricsStep) ValidateKeys() error {
	var errs check.Errors
	seen := map[string]bool{}
	for i, name := range s.Rubrics {
		axis, ok := rubric.CanonicalAxis(name)
		switch {
		case !ok:
			errs.Add(fmt.Sprintf("rubrics[%d]", i), "unknown rubric %q (want one of %s)", name, strings.Join(rubric.Axes, ", "))
		case seen[axis]:
			errs.Add(fmt.Sprintf("rubrics[%d]", i), "rubric %s is listed twice", axis)
		}
		seen[axis] = true
	}
	validPatterns(&errs, "transientErrors", s.TransientErrors)
	if s.DeterministicOnly {
		for i, name := range s.Rubrics {
			if axis, ok := rubric.CanonicalAxis(name); ok && !rubric.HasDeterministicPart(axis) {
				errs.Add(fmt.Sprintf("rubrics[%d]", i), "%s is graded by the judge alone: remove it, or drop deterministicOnly and configure judge", axis)
			}
		}
	}
	return errs.Err()
}

// foreignKey words the refusal of another kind's key: the keys of this step are a
// subset of EXPECT_HANDOFF_CONTEXT's, easily confused.
func (*RubricsStep) ForeignKey(string) string {
	return "does not apply to " + check.ActionRubrics + " (its keys: fromAgent, toAgent, rubrics, ignoredTools, transientErrors)"
}

// axes is the rubrics the step grades, in report order (by default all four; with
// deterministicOnly, the three that have a deterministic part).
func (s *RubricsStep) axes() []string {
	if len(s.Rubrics) == 0 {
		if s.DeterministicOnly {
			return rubric.DeterministicAxes()
		}
		return rubric.Axes
	}
	want := map[string]bool{}
	for _, r := range s.Rubrics {
		if a, ok := rubric.CanonicalAxis(r); ok {
			want[a] = true
		}
	}
	var out []string
	for _, a := range rubric.Axes {
		if want[a] {
			out = append(out, a)
		}
	}
	return out
}

// ResultIDs are the step's result ids, one per rubric: id.Axis, as Results names them.
func (s *RubricsStep) ResultIDs(id string) []string {
	axes := s.axes()
	out := make([]string, len(axes))
	for i, a := range axes {
		out[i] = id + "." + a
	}
	return out
}

// judgeProblem: see ContextStep.judgeProblem.
func (s *RubricsStep) JudgeProblem(id string) (field, problem string, ok bool) {
	if s.DeterministicOnly {
		return "", "", false
	}
	field = "action"
	if len(s.Rubrics) > 0 {
		field = "rubrics"
	}
	axes := s.axes()
	var det []string
	for _, a := range axes {
		if rubric.HasDeterministicPart(a) {
			det = append(det, a)
		}
	}
	fix := check.JudgeFix
	switch {
	case len(det) == 0:
		fix = "configure judge (judge.endpoint and judge.model): " + strings.Join(axes, ", ") + " has no deterministic part"
	case len(s.Rubrics) == 0:
		fix += fmt.Sprintf(" (its default rubrics are then %s: %s is graded by the judge alone)",
			strings.Join(rubric.DeterministicAxes(), ", "), rubric.Dispatch)
	case len(det) < len(axes):
		fix += fmt.Sprintf(" and rubrics: [%s] (%s is graded by the judge alone)", strings.Join(det, ", "), rubric.Dispatch)
	}
	return field, fmt.Sprintf("%s grades %s with the judge, but no judge is configured: %s", id, strings.Join(axes, ", "), fix), true
}

func (s *RubricsStep) Compile(check.Env) (check.Compiled, error) {
	return &rubricStep{cfg: s, axes: s.axes(), checks: rubric.NewChecks(s.IgnoredTools, s.TransientErrors)}, nil
}

// rubricStep is an EXPECT_HANDOFF_RUBRICS step, compiled.
type rubricStep struct {
	cfg    *RubricsStep
	axes   []string
	checks *rubric.Checks
}

// rubricExpected says what each rubric asserts.
var rubricExpected = map[string]string{
	rubric.Dispatch: "the sender dispatched at the right moment, to the right receiver, with a tight scope and no more tools than needed (judge)",
	rubric.Scope: "the receiver stays inside the dispatched scope: only tools in handoff.allowed_tools, no context the sender never supplied, " +
		"no work outside the scope (judge)",
	rubric.Integration: "the sender's next step reads the receiver's return value and does not redo the receiver's work (and, judge: lets it change the plan)",
	rubric.Recovery:    "an error on the round trip is retried (with a changed scope unless transient), falls back or is surfaced, never swallowed (and, judge: handled well)",
}

func (rs *rubricStep) Results(id string) []check.Ref {
	out := make([]check.Ref, 0, len(rs.axes))
	for _, a := range rs.axes {
		out = append(out, check.Ref{ID: id + "." + a, Action: check.ActionRubrics, Expected: rubricExpected[a]})
	}
	return out
}

func (rs *rubricStep) Evaluate(run *check.Run, id string) {
	start := len(run.Out.Results)
	defer func() {
		// A bug (or bad input a check did not expect) becomes an error result per rubric:
		// it never takes the collector down.
		if p := recover(); p != nil {
			run.Out.Truncate(start)
			for _, axis := range rs.axes {
				r := run.NewResult(id+"."+axis, check.ActionRubrics)
				r.Axis, r.Outcome = axis, check.Error
				r.Expected, r.Actual = rubricExpected[axis], "evaluation error"
				r.Message = fmt.Sprintf("internal error while grading the handoff rubrics: %v", p)
				run.Out.Add(r)
			}
		}
	}()
	s, g := rs.cfg, run.DAG
	var edges []*agentgraph.Edge
	for _, e := range g.Edges {
		if (s.FromAgent == "" || e.From.Name == s.FromAgent) && (s.ToAgent == "" || e.To.Name == s.ToAgent) {
			edges = append(edges, e)
		}
	}
	if len(edges) == 0 {
		what := "no handoff"
		if s.FromAgent != "" || s.ToAgent != "" {
			what = fmt.Sprintf("no handoff %s -> %s", orAny(s.FromAgent), orAny(s.ToAgent))
		}
		for _, axis := range rs.axes {
			r := run.NewResult(id+"."+axis, check.ActionRubrics)
			r.Axis, r.Outcome = axis, check.Skipped
			r.Expected, r.Actual = rubricExpected[axis], "no handoff"
			r.Message = check.WithNotRun(g, what+" in this trace: nothing to grade", s.FromAgent, s.ToAgent)
			run.Out.Add(r)
		}
		return
	}
	x := run.Trace.Index()
	for _, e := range edges {
		for _, axis := range rs.axes {
			r := run.NewResult(id+"."+axis, check.ActionRubrics)
			r.Axis, r.From, r.To = axis, e.From.Name, e.To.Name
			r.Expected = fmt.Sprintf("%s -> %s: %s", e.From.Name, e.To.Name, rubricExpected[axis])
			r.Spans = []string{e.To.Span.ID.String()}
			if e.Via != nil {
				r.Spans = append(r.Spans, e.Via.ID.String())
			}
			if run.Judging.Gates != nil {
				_, r.Gated = run.Judging.Gates.Threshold(e.From.Name, e.To.Name, axis)
			}
			run.Out.AddGraded(r, rs.grade(run, &r, axis, e, x))
		}
	}
}

func orAny(name string) string {
	if name == "" {
		return "any agent"
	}
	return name
}

// judgeOff says why the judge does not grade the step ("" when it does).
func (rs *rubricStep) judgeOff(ev *check.Judging) string {
	switch {
	case rs.cfg.DeterministicOnly:
		return "the step is deterministicOnly"
	case ev.Grader == nil:
		return "no judge is configured"
	}
	return ""
}

// grade decides one rubric on one handoff; it returns the result to fill in when a judge
// grading was scheduled.
func (rs *rubricStep) grade(run *check.Run, r *check.Result, axis string, e *agentgraph.Edge, x *rubric.Index) *check.Result {
	ev := run.Judging
	c := rs.checks.Check(axis, e, x, ev.Grader != nil) // what the judge reads is made only when a judge grades
	if c.Skipped {
		r.Outcome, r.Actual, r.Message = check.Skipped, c.SkipActual, c.SkipMessage
		return nil
	}
	var failed, passed, na, states []string
	for _, p := range c.Parts {
		states = append(states, p.String())
		switch p.State {
		case rubric.PartFail:
			failed = append(failed, p.Detail)
		case rubric.PartPass:
			passed = append(passed, p.Detail)
		default:
			na = append(na, p.Detail)
		}
	}
	det := strings.Join(states, ", ")
	if len(failed) > 0 {
		zero := 0.0
		r.Outcome, r.Score, r.Cluster = check.Fail, &zero, rubric.FailureCluster(axis, c.Parts)
		r.Actual = "score 0: " + det
		r.Message = strings.Join(failed, "; ")
		return nil
	}
	off := rs.judgeOff(ev)
	if off == "" && c.Missing == "" {
		job := run.Trace.Batch.Add(judge.Request{Rubric: axis, Criteria: rubric.Text(ev.Rubrics, axis), Fields: c.Fields})
		filled := *r
		run.Trace.Batch.Then(func() { applyRubricJudge(ev, &filled, job, det, passed) })
		return &filled
	}
	withoutJudge(r, axis, off, c.Missing, det, passed, na)
	return nil
}

// withoutJudge decides a rubric the judge does not grade (off: why not; missing: the
// content it would need was not captured) from its deterministic parts.
func withoutJudge(r *check.Result, axis, off, missing, det string, passed, na []string) {
	switch {
	case len(passed) > 0:
		one := 1.0
		r.Outcome, r.Score = check.Pass, &one
		r.Actual = "score 1: " + det
		r.Message = strings.Join(passed, "; ")
		if len(na) > 0 {
			r.Message += "; not checked: " + strings.Join(na, "; ")
		}
		if off != "" {
			r.Message += "; the judge part was not graded: " + off
		} else {
			r.Message += "; the judge part was not graded: " + missing
		}
	case off != "":
		r.Outcome, r.Actual = check.Skipped, "not graded"
		r.Message = "judge-graded rubric: " + off + ", so " + axis + " was not graded"
		if len(na) > 0 {
			r.Message += "; the deterministic checks could not run: " + strings.Join(na, "; ")
		}
	default:
		r.Outcome, r.Actual = check.Skipped, "not graded"
		r.Message = missing
		if len(na) > 0 {
			r.Message += "; " + strings.Join(na, "; ")
		}
	}
}

// applyRubricJudge fills in a rubric result from its grading.
func applyRubricJudge(ev *check.Judging, r *check.Result, job *judge.Job, det string, passed []string) {
	detail := ""
	if len(passed) > 0 {
		detail = "; deterministic checks passed: " + strings.Join(passed, "; ")
	}
	if job.Err != nil {
		r.Outcome, r.Message = check.JudgeOutcome(job.Err)
		r.Actual = "not graded"
		if det != "" {
			r.Actual += ": " + det
		}
		r.Message += detail
		return
	}
	v := job.Verdict
	score := v.Score
	r.Score, r.Judge = &score, ev.Verdict(v)
	verdict := "fail"
	r.Outcome, r.Cluster = check.Fail, rubric.FailureCluster(r.Axis, nil)
	if v.Pass {
		r.Outcome, verdict = check.Pass, "pass"
	}
	r.Actual = fmt.Sprintf("score %.2f (judge)", score)
	if det != "" {
		r.Actual += ": " + det
	}
	r.Message = fmt.Sprintf("judge: %s (score %.2f, %s)%s", v.Reason, score, verdict, detail)
}

func (s *RubricsStep) Names() []check.StepName {
	out := check.AgentNames("fromAgent", s.FromAgent, "toAgent", s.ToAgent)
	for k, t := range s.IgnoredTools {
		out = append(out, check.StepName{Key: fmt.Sprintf("ignoredTools[%d]", k), Tool: true, Name: t})
	}
	return out
}
