package rules

import (
	"fmt"
	"strings"

	"github.com/otelcol-handoff/otelcol-handoff/internal/agentgraph"
	"github.com/otelcol-handoff/otelcol-handoff/internal/judge"
)

// EXPECT_HANDOFF_RUBRICS: every handoff the step selects is graded on each of its rubrics;
// one result per handoff per rubric, step id STEP.Axis.
//
// How a rubric's score is decided (assertionexporter/README.md, "Handoff rubrics"):
//   - a deterministic part that fails scores the handoff 0 (fail); the judge is not asked;
//   - otherwise, with a judge, the judge's score and pass decide (its error: outcome error,
//     no score; its budget spent: skipped);
//   - otherwise, without a judge, deterministic parts that passed score 1 (pass), and a
//     rubric none of whose parts could run is skipped with the reason.

// rubricExpected says what each rubric asserts.
var rubricExpected = map[string]string{
	AxisDispatch: "the sender dispatched at the right moment, to the right receiver, with a tight scope and no more tools than needed (judge)",
	AxisScope: "the receiver stays inside the dispatched scope: only tools in handoff.allowed_tools, no context the sender never supplied, " +
		"no work outside the scope (judge)",
	AxisIntegration: "the sender's next step reads the receiver's return value and does not redo the receiver's work (and, judge: lets it change the plan)",
	AxisRecovery:    "an error on the round trip is retried (with a changed scope unless transient), falls back or is surfaced, never swallowed (and, judge: handled well)",
}

func (c *compiledCase) handoffRubrics(base Result, index int, s StepConfig, g *agentgraph.Graph, tc *traceCache) (out []Result) {
	rs := c.rubricSteps[index]
	id := s.ID(index)
	defer func() {
		// A bug (or bad input a check did not expect) becomes an error result per rubric:
		// it never takes the collector down.
		if p := recover(); p != nil {
			out = nil
			for _, axis := range rs.axes {
				r := base
				r.Step, r.Action, r.Axis, r.Outcome = id+"."+axis, ActionRubrics, axis, Error
				r.Expected, r.Actual = rubricExpected[axis], "evaluation error"
				r.Message = fmt.Sprintf("internal error while grading the handoff rubrics: %v", p)
				out = append(out, r)
			}
		}
	}()
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
			r := base
			r.Step, r.Action, r.Axis, r.Outcome = id+"."+axis, ActionRubrics, axis, Skipped
			r.Expected, r.Actual = rubricExpected[axis], "no handoff"
			r.Message = withNotRun(g, what+" in this trace: nothing to grade", s.FromAgent, s.ToAgent)
			out = append(out, r)
		}
		return out
	}
	x := tc.index()
	for _, e := range edges {
		for _, axis := range rs.axes {
			r := base
			r.Step, r.Action, r.Axis = id+"."+axis, ActionRubrics, axis
			r.From, r.To = e.From.Name, e.To.Name
			r.Expected = fmt.Sprintf("%s -> %s: %s", e.From.Name, e.To.Name, rubricExpected[axis])
			r.Spans = []string{e.To.Span.ID.String()}
			if e.Via != nil {
				r.Spans = append(r.Spans, e.Via.ID.String())
			}
			if c.ev.gates != nil {
				_, r.Gated = c.ev.gates.Threshold(e.From.Name, e.To.Name, axis)
			}
			if p := c.gradeRubric(&r, axis, e, x, rs, tc.jr, c.judgeOff(s)); p != nil {
				r.pending = p
			}
			out = append(out, r)
		}
	}
	return out
}

func orAny(name string) string {
	if name == "" {
		return "any agent"
	}
	return name
}

// judgeOff says why the judge does not grade step s ("" when it does).
func (c *compiledCase) judgeOff(s StepConfig) string {
	switch {
	case s.DeterministicOnly:
		return "the step is deterministicOnly"
	case c.ev.judge == nil:
		return "no judge is configured"
	}
	return ""
}

// gradeRubric decides one rubric on one handoff; it returns the result to fill in when a
// judge grading was scheduled. judgeOff says why the judge does not grade ("" when it does).
func (c *compiledCase) gradeRubric(r *Result, axis string, e *agentgraph.Edge, x *dagIndex, rs *rubricStep, jr *judgeRun, judgeOff string) *Result {
	var parts []part
	var fields []judge.Field
	missing := ""               // why the judge cannot grade (content not captured)
	judged := c.ev.judge != nil // what the judge reads is made only when a judge grades
	switch axis {
	case AxisDispatch:
		if judged {
			fields, missing = x.dispatchFields(e)
		}
	case AxisScope:
		parts = rs.scopeParts(x, e)
		if judged {
			fields, missing = x.scopeFields(e)
		}
	case AxisIntegration:
		ps, steps, ok := rs.integrationParts(x, e)
		if !ok {
			r.Outcome, r.Actual = Skipped, "control did not return to the sender"
			r.Message = fmt.Sprintf("%s took no further step after %s returned (a one-way transfer): no result to integrate", e.From.Name, e.To.Name)
			if hb := x.handBacks(e); len(hb) > 0 {
				// A swarm node handing control back starts a new run of the sender: that
				// run's input is the hand-off message, not a step that read a return value.
				r.Actual = "control handed back as a new run"
				r.Message = fmt.Sprintf("%s handed control back to %s as a new run (span %s), a hand-off of its own (graded as the handoff %s -> %s): no return value to integrate",
					e.To.Name, e.From.Name, hb[0].Span.ID, e.To.Name, e.From.Name)
			}
			return nil
		}
		parts = ps
		if judged {
			fields, missing = x.integrationFields(e, steps)
		}
	case AxisRecovery:
		ps, eps, ok := rs.recoveryParts(x, e)
		if !ok {
			r.Outcome, r.Actual = Skipped, "no error on the round trip"
			r.Message = fmt.Sprintf("no error on the handoff %s -> %s: nothing to recover from", e.From.Name, e.To.Name)
			return nil
		}
		parts = ps
		if judged {
			fields = x.recoveryFields(e, eps)
		}
	}
	var failed, passed, na []string
	var states []string
	for _, p := range parts {
		states = append(states, p.String())
		switch p.state {
		case partFail:
			failed = append(failed, p.detail)
		case partPass:
			passed = append(passed, p.detail)
		default:
			na = append(na, p.detail)
		}
	}
	det := strings.Join(states, ", ")
	if len(failed) > 0 {
		zero := 0.0
		r.Outcome, r.Score, r.Cluster = Fail, &zero, rubricCluster(axis, parts)
		r.Actual = "score 0: " + det
		r.Message = strings.Join(failed, "; ")
		return nil
	}
	if judgeOff == "" && missing == "" {
		req := judge.Request{Rubric: axis, Criteria: rubricText(c.ev.rubrics, axis), Fields: fields}
		job := jr.add(req)
		filled := *r
		jr.then(func() { c.applyJudge(&filled, job, det, passed) })
		return &filled
	}
	switch {
	case len(passed) > 0:
		one := 1.0
		r.Outcome, r.Score = Pass, &one
		r.Actual = "score 1: " + det
		r.Message = strings.Join(passed, "; ")
		if len(na) > 0 {
			r.Message += "; not checked: " + strings.Join(na, "; ")
		}
		if judgeOff != "" {
			r.Message += "; the judge part was not graded: " + judgeOff
		} else {
			r.Message += "; the judge part was not graded: " + missing
		}
	case judgeOff != "":
		r.Outcome, r.Actual = Skipped, "not graded"
		r.Message = "judge-graded rubric: " + judgeOff + ", so " + axis + " was not graded"
		if len(na) > 0 {
			r.Message += "; the deterministic checks could not run: " + strings.Join(na, "; ")
		}
	default:
		r.Outcome, r.Actual = Skipped, "not graded"
		r.Message = missing
		if len(na) > 0 {
			r.Message += "; " + strings.Join(na, "; ")
		}
	}
	return nil
}

// applyJudge fills in a rubric result from its grading.
func (c *compiledCase) applyJudge(r *Result, job *judgeJob, det string, passed []string) {
	detail := ""
	if len(passed) > 0 {
		detail = "; deterministic checks passed: " + strings.Join(passed, "; ")
	}
	if job.err != nil {
		r.Outcome, r.Message = judgeOutcome(job.err)
		r.Actual = "not graded"
		if det != "" {
			r.Actual += ": " + det
		}
		r.Message += detail
		return
	}
	v := job.v
	score := v.Score
	r.Score, r.Judge = &score, c.ev.verdict(v)
	r.Outcome, r.Cluster = Fail, rubricCluster(r.Axis, nil)
	if v.Pass {
		r.Outcome = Pass
	}
	r.Actual = fmt.Sprintf("score %.2f (judge)", score)
	if det != "" {
		r.Actual += ": " + det
	}
	verdict := "fail"
	if v.Pass {
		verdict = "pass"
	}
	r.Message = fmt.Sprintf("judge: %s (score %.2f, %s)%s", v.Reason, score, verdict, detail)
}

// ---- what the judge reads per rubric ----

func tools(list []string) string {
	if list == nil {
		return "(not captured)"
	}
	names := allowedNames(list)
	return strings.Join(names, ", ")
}

// dispatchFields: the sender's pre-handoff state, the dispatch call and the receiver
// catalog.
func (x *dagIndex) dispatchFields(e *agentgraph.Edge) ([]judge.Field, string) {
	if !e.To.Input.Found() && !e.Reason.Found() {
		return nil, fmt.Sprintf("content capture disabled on the exporter: neither the dispatch's arguments nor %s's input were captured", e.To.Name)
	}
	catalog := "agents in this run: " + x.catalog(e.From.Name)
	if e.From.AllowedTools != nil {
		catalog += "\ntools offered to " + e.From.Name + ": " + tools(e.From.AllowedTools)
	}
	fields := []judge.Field{
		{Name: "sender", Text: e.From.Name},
		{Name: "sender_pre_state", Text: orNotCaptured(e.From.Input)},
		{Name: "dispatch_call", Text: fmt.Sprintf("to %s (%s)\n%s", e.To.Name, e.Detection, orNotCaptured(e.Reason))},
		{Name: "scope_prompt", Text: orNotCaptured(e.To.Input)},
		{Name: "allowed_tools", Text: tools(e.To.AllowedTools)},
		{Name: "receiver_catalog", Text: catalog},
	}
	return fields, ""
}

// scopeFields: the dispatched scope, the allowed tools and the receiver's turn.
func (x *dagIndex) scopeFields(e *agentgraph.Edge) ([]judge.Field, string) {
	if !e.To.Input.Found() && !e.Reason.Found() {
		return nil, fmt.Sprintf("content capture disabled on the exporter: %s's input was not captured", e.To.Name)
	}
	fields := []judge.Field{
		{Name: "scope_prompt", Text: orNotCaptured(e.To.Input)},
		{Name: "dispatch_call", Text: orNotCaptured(e.Reason)},
		{Name: "allowed_tools", Text: tools(e.To.AllowedTools)},
	}
	if e.Context.Found() {
		fields = append(fields, judge.Field{Name: "context_summary", Text: e.Context.Text})
	}
	return append(fields, judge.Field{Name: "receiver_trace", Text: receiverTurn(e.To)}), ""
}

// integrationFields: the return value and the sender's steps after it.
func (x *dagIndex) integrationFields(e *agentgraph.Edge, steps []senderStep) ([]judge.Field, string) {
	rv := x.returnValue(e)
	if !rv.Found() {
		return nil, fmt.Sprintf("content capture disabled on the exporter: %s's return value was not captured", e.To.Name)
	}
	post := x.postTurn(steps)
	if post == "" {
		return nil, fmt.Sprintf("content capture disabled on the exporter: the content of %s's next step was not captured", e.From.Name)
	}
	return []judge.Field{
		{Name: "scope_prompt", Text: orNotCaptured(e.To.Input)},
		{Name: "return_value", Text: plainOutput(rv.Text)},
		{Name: "sender_post_turn", Text: post},
		{Name: "sender_output", Text: x.senderOutput(e)},
	}, ""
}

// recoveryFields: the errors, the receiver's turn and what the sender did next.
func (x *dagIndex) recoveryFields(e *agentgraph.Edge, eps []episode) []judge.Field {
	var errs []string
	for _, ep := range eps {
		errs = append(errs, fmt.Sprintf("%s: %s", ep.label, errText(ep.err)))
	}
	post := x.postTurn(x.nextSteps(e))
	if post == "" {
		post = fmt.Sprintf("(%s took no further step)", e.From.Name)
	}
	return []judge.Field{
		{Name: "handoff_error", Text: strings.Join(errs, "\n")},
		{Name: "scope_prompt", Text: orNotCaptured(e.To.Input)},
		{Name: "receiver_trace", Text: receiverTurn(e.To)},
		{Name: "sender_post_turn", Text: post},
		{Name: "sender_output", Text: x.senderOutput(e)},
	}
}

// postTurn renders the sender's next steps (at most 5), each step's text read once per
// trace (the handoffs of a fan-out share their next steps).
func (x *dagIndex) postTurn(steps []senderStep) string {
	var b strings.Builder
	for i, st := range steps {
		if i == shownSteps {
			more := fmt.Sprint(len(steps) - shownSteps)
			if len(steps) == maxNextSteps {
				more += " or more" // nextSteps looks no further
			}
			fmt.Fprintf(&b, "(%s more steps)\n", more)
			break
		}
		if strings.TrimSpace(st.text) == "" {
			continue
		}
		fmt.Fprintf(&b, "%s:\n%s\n", st.label, x.stepLeafText(&st))
	}
	return strings.TrimSpace(b.String())
}

// senderOutput is the output of the sender's last run.
func (x *dagIndex) senderOutput(e *agentgraph.Edge) string {
	if run := x.lastOutputRun(e); run != nil {
		return plainOutput(run.Output.Text)
	}
	return "(not captured)"
}

func orNotCaptured(v agentgraph.Value) string {
	if v.Found() {
		return v.Text
	}
	return "(not captured)"
}
