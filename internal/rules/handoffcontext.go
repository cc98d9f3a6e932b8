package rules

import (
	"cmp"
	"context"
	"encoding/json"
	"fmt"
	"regexp"
	"strings"

	"github.com/google/cel-go/cel"

	"github.com/otelcol-handoff/otelcol-handoff/internal/agentgraph"
	"github.com/otelcol-handoff/otelcol-handoff/internal/celexpr"
	"github.com/otelcol-handoff/otelcol-handoff/internal/cluster"
	"github.com/otelcol-handoff/otelcol-handoff/internal/judge"
)

// EXPECT_HANDOFF_CONTEXT, deterministic part: what crossed the handoff is the receiver's
// captured input (the scope prompt), the dispatch call's arguments (the reason) and its
// context argument. Patterns and a CEL expression check it without a judge; the rubric
// itself needs one.

// contextCheck is one EXPECT_HANDOFF_CONTEXT step, compiled.
type contextCheck struct {
	required, forbidden []*regexp.Regexp
	expr                *celexpr.Expr
}

// compileContextChecks compiles the deterministic checks of the case's handoff-context
// steps, by step index.
func compileContextChecks(env *cel.Env, at string, steps []StepConfig, costLimit uint64) (map[int]*contextCheck, []error) {
	var errs []error
	out := map[int]*contextCheck{}
	for i, s := range steps {
		if s.Action != ActionContext {
			continue
		}
		cc := &contextCheck{}
		for _, p := range s.RequiredPatterns {
			if re, err := regexp.Compile(p); err == nil { // errors are reported by validation
				cc.required = append(cc.required, re)
			}
		}
		for _, p := range s.ForbiddenPatterns {
			if re, err := regexp.Compile(p); err == nil {
				cc.forbidden = append(cc.forbidden, re)
			}
		}
		if strings.TrimSpace(s.ContextExpression) != "" {
			prg, err := celexpr.Compile(env, s.ContextExpression, costLimit, 0)
			if err != nil {
				errs = append(errs, fmt.Errorf("%s.steps[%d].contextExpression: %w", at, i, err))
			}
			cc.expr = prg
		}
		out[i] = cc
	}
	return out, errs
}

func (cc *contextCheck) deterministic() bool {
	return cc != nil && (len(cc.required) > 0 || len(cc.forbidden) > 0 || cc.expr != nil)
}

// handoffContext evaluates an EXPECT_HANDOFF_CONTEXT step on every matching handoff. When
// the step has a rubric and a judge is configured, every handoff's receiving input is
// graded after the deterministic checks passed; the returned result is filled in then.
func (c *compiledCase) handoffContext(r *Result, index int, s StepConfig, g *agentgraph.Graph, tc *traceCache) *Result {
	jr := tc.jr
	check := c.contextChecks[index]
	var want []string
	for _, re := range check.requiredOrNil() {
		want = append(want, "contains /"+re.String()+"/")
	}
	for _, re := range check.forbiddenOrNil() {
		want = append(want, "never /"+re.String()+"/")
	}
	if s.ContextExpression != "" {
		want = append(want, "`"+s.ContextExpression+"`")
	}
	judged := (s.InlineRubric != "" || s.JudgeRubricID != "" || s.RubricType != "") && !s.DeterministicOnly
	if judged {
		want = append(want, "the "+rubricName(s)+" rubric")
	}
	r.Expected = fmt.Sprintf("handoff %s -> %s whose content satisfies %s", s.FromAgent, s.ToAgent, strings.Join(want, ", "))

	var edges []*agentgraph.Edge
	for _, e := range g.Edges {
		if e.From.Name == s.FromAgent && e.To.Name == s.ToAgent {
			edges = append(edges, e)
			r.Spans = append(r.Spans, e.To.Span.ID.String())
		}
	}
	if len(edges) == 0 {
		r.Outcome, r.Actual, r.Cluster = Fail, "no such handoff", cluster.WrongDispatch
		r.Message = withNotRun(g, fmt.Sprintf("no handoff from %s to %s in this trace", s.FromAgent, s.ToAgent), s.FromAgent, s.ToAgent)
		return nil
	}
	var problems []string
	var failedAs cluster.Name // the cluster of the first violation
	for _, e := range edges {
		if !e.To.Input.Found() {
			r.Outcome, r.Actual = Fail, "no input content on the receiving span"
			r.Message = fmt.Sprintf("content capture disabled on the exporter: the receiving %s span %s has none of %s",
				s.ToAgent, e.To.Span.ID, strings.Join(e.To.Input.Tried, ", "))
			return nil
		}
		v, as := check.violations(tc.ctx, e)
		problems = append(problems, v...)
		failedAs = cmp.Or(failedAs, as)
	}
	r.Actual = fmt.Sprintf("%d handoffs with captured input", len(edges))
	if len(problems) > 0 {
		r.Outcome, r.Message, r.Cluster = Fail, strings.Join(problems, "; "), failedAs
		return nil
	}
	if judged {
		if c.ev.judge == nil {
			r.Outcome = Skipped
			r.Message = "judge-graded rubric: no judge is configured, so the rubric was not graded"
			if check.deterministic() {
				r.Message = "deterministic checks passed; " + r.Message
			}
			return nil
		}
		name, criteria := c.contextRubric(s)
		jobs := make([]*judgeJob, len(edges))
		for i, e := range edges {
			fields := []judge.Field{
				{Name: "sender", Text: e.From.Name},
				{Name: "receiver", Text: e.To.Name},
				{Name: "scope_prompt", Text: e.To.Input.Text},
			}
			if e.Reason.Found() {
				fields = append(fields, judge.Field{Name: "dispatch_call", Text: e.Reason.Text})
			}
			if e.Context.Found() {
				fields = append(fields, judge.Field{Name: "context_summary", Text: e.Context.Text})
			}
			jobs[i] = jr.add(judge.Request{Rubric: name, Criteria: criteria, Fields: fields})
		}
		filled := *r
		jr.then(func() { c.applyContextJudge(&filled, s, edges, jobs, check.deterministic()) })
		return &filled
	}
	r.Outcome, r.Message = Pass, fmt.Sprintf("%d handoffs %s -> %s carry the expected content", len(edges), s.FromAgent, s.ToAgent)
	if s.DeterministicOnly && (s.InlineRubric != "" || s.JudgeRubricID != "" || s.RubricType != "") {
		r.Message += "; the " + rubricName(s) + " rubric was not graded: the step is deterministicOnly"
	}
	return nil
}

// contextRubric is the rubric an EXPECT_HANDOFF_CONTEXT step grades with: its name and
// text (the built-in text of rubricType, then the inline criteria or the named rubric).
func (c *compiledCase) contextRubric(s StepConfig) (string, string) {
	name := rubricName(s)
	var parts []string
	if s.RubricType != "" {
		if t, ok := canonicalRubricType(s.RubricType); ok {
			name = t
			parts = append(parts, rubricText(c.ev.rubrics, t))
		}
	}
	switch {
	case s.JudgeRubricID != "":
		parts = append(parts, "Criteria: "+c.ev.rubrics[s.JudgeRubricID])
	case s.InlineRubric != "":
		parts = append(parts, "Criteria: "+strings.TrimSpace(s.InlineRubric))
	}
	return name, strings.Join(parts, "\n")
}

// applyContextJudge decides the step from the gradings of its handoffs: an error if any
// grading failed (skipped when the budget was spent), a failure naming each handoff the
// judge failed, else a pass. Score is the lowest score.
func (c *compiledCase) applyContextJudge(r *Result, s StepConfig, edges []*agentgraph.Edge, jobs []*judgeJob, det bool) {
	prefix := ""
	if det {
		prefix = "deterministic checks passed; "
	}
	var failed, passed []string
	lowest := 1.0
	var worst *judgeJob
	for i, j := range jobs {
		at := fmt.Sprintf("handoff %s -> %s (span %s)", edges[i].From.Name, edges[i].To.Name, edges[i].To.Span.ID)
		if j.err != nil {
			r.Outcome, r.Message = judgeOutcome(j.err)
			r.Message = prefix + at + ": " + r.Message
			return
		}
		if j.v.Score <= lowest {
			lowest, worst = j.v.Score, j
		}
		line := fmt.Sprintf("%s: %s (score %.2f)", at, j.v.Reason, j.v.Score)
		if j.v.Pass {
			passed = append(passed, line)
		} else {
			failed = append(failed, line)
		}
	}
	r.Score = &lowest
	r.Judge = c.ev.verdict(worst.v)
	r.Actual = fmt.Sprintf("%d handoffs graded, %d passed the %s rubric (judge)", len(jobs), len(passed), rubricName(s))
	if len(failed) > 0 {
		r.Outcome, r.Message, r.Cluster = Fail, prefix+"judge: "+strings.Join(failed, "; "), cluster.DroppedConstraint
		return
	}
	r.Outcome, r.Message = Pass, prefix+"judge: "+strings.Join(passed, "; ")
}

func (cc *contextCheck) requiredOrNil() []*regexp.Regexp {
	if cc == nil {
		return nil
	}
	return cc.required
}

func (cc *contextCheck) forbiddenOrNil() []*regexp.Regexp {
	if cc == nil {
		return nil
	}
	return cc.forbidden
}

// violations lists what one handoff breaks, and the cluster of the first violation.
func (cc *contextCheck) violations(ctx context.Context, e *agentgraph.Edge) (out []string, as cluster.Name) {
	if !cc.deterministic() {
		return nil, ""
	}
	at := fmt.Sprintf("handoff %s -> %s (span %s)", e.From.Name, e.To.Name, e.To.Span.ID)
	// Payload is the dispatch's arguments plus what the sender said with them.
	content := strings.Join([]string{e.To.Input.Text, e.Payload.Text, e.Context.Text}, "\n")
	for _, re := range cc.required {
		if !re.MatchString(content) {
			out = append(out, fmt.Sprintf("%s: the handoff content lacks /%s/", at, re))
			as = cmp.Or(as, cluster.DroppedConstraint)
		}
	}
	for _, re := range cc.forbidden {
		if m := re.FindString(content); m != "" {
			// Name the pattern, not the match: it may be the very secret that leaked.
			out = append(out, fmt.Sprintf("%s: the handoff content contains forbidden /%s/", at, re))
			as = cmp.Or(as, cluster.Leak)
		}
	}
	if cc.expr != nil {
		payload := map[string]any{}
		if e.Reason.Text != "" && e.Reason.Text[0] == '{' {
			_ = json.Unmarshal([]byte(e.Reason.Text), &payload)
		}
		tools := e.To.AllowedTools
		if tools == nil {
			tools = []string{}
		}
		val, _, err := cc.expr.Eval(ctx, map[string]any{
			"from": e.From.Name, "to": e.To.Name, "scope_prompt": e.To.Input.Text, "reason": e.Reason.Text,
			"context_summary": e.Context.Text, "return_value": e.To.Output.Text, "allowed_tools": tools,
			"payload": payload,
		})
		switch {
		case err != nil:
			out = append(out, fmt.Sprintf("%s: contextExpression failed to evaluate: %v", at, err))
			as = cmp.Or(as, cluster.Other)
		case val.Value() != true:
			out = append(out, fmt.Sprintf("%s: contextExpression is false", at))
			as = cmp.Or(as, cluster.DroppedConstraint)
		}
	}
	return out, as
}
