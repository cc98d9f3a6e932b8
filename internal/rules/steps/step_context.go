package steps

import (
	"cmp"
	"context"
	"encoding/json"
	"fmt"
	"regexp"
	"sort"
	"strings"

	"github.com/otelcol-handoff/otelcol-handoff/internal/agentgraph"
	"github.com/otelcol-handoff/otelcol-handoff/internal/celexpr"
	"github.com/otelcol-handoff/otelcol-handoff/internal/cluster"
	"github.com/otelcol-handoff/otelcol-handoff/internal/judge"
	"github.com/otelcol-handoff/otelcol-handoff/internal/rubric"
	"github.com/otelcol-handoff/otelcol-handoff/internal/rules/check"
)

// ContextStep is EXPECT_HANDOFF_CONTEXT: what crossed every handoff FromAgent -> ToAgent is
// the receiver's captured input (the scope prompt), the dispatch call's arguments (the
// reason) and its context argument. Patterns and a CEL expression check it without a
// judge; a rubric (RubricType, InlineRubric or JudgeRubricID) is graded by the judge.
type ContextStep struct {
	FromAgent     string `seed:"fromAgent"`
	ToAgent       string `seed:"toAgent"`
	RubricType    string `seed:"rubricType"`
	InlineRubric  string `seed:"inlineRubric"`
	JudgeRubricID string `seed:"judgeRubricId"`
	// Deterministic checks of the handoff content (no judge needed): regular expressions that
	// must match / must not match the handoff's scope prompt, reason or context, and a CEL
	// expression over the handoff's fields.
	RequiredPatterns  []string `seed:"requiredPatterns"`
	ForbiddenPatterns []string `seed:"forbiddenPatterns"`
	ContextExpression string   `seed:"contextExpression"`
	// DeterministicOnly runs only the deterministic checks: the judge is never asked,
	// configured or not (see CheckJudged).
	DeterministicOnly bool `seed:"deterministicOnly"`
}

// Action is EXPECT_HANDOFF_CONTEXT.
func (*ContextStep) Action() string { return check.ActionContext }

func (*ContextStep) ReadsDAG() {}

// ValidateKeys checks the handoff, the rubric and the deterministic checks.
func (s *ContextStep) ValidateKeys() error {
	var errs check.Errors
	if s.FromAgent == "" {
		errs.Add("fromAgent", "must name the sending agent")
	}
	if s.ToAgent == "" {
		errs.Add("toAgent", "must name the receiving agent")
	}
	if !s.hasRubric() && !s.deterministic() {
		errs.Add("inlineRubric", "set a rubric (inlineRubric or judgeRubricId) or a deterministic check (requiredPatterns, forbiddenPatterns, contextExpression)")
	}
	if s.RubricType != "" {
		if _, ok := rubric.CanonicalType(s.RubricType); !ok {
			errs.Add("rubricType", "unknown rubric type %q (want one of %s)", s.RubricType, strings.Join(rubric.Types(), ", "))
		}
	}
	validPatterns(&errs, "requiredPatterns", s.RequiredPatterns)
	validPatterns(&errs, "forbiddenPatterns", s.ForbiddenPatterns)
	nonEmptyMatch(&errs, "requiredPatterns", s.RequiredPatterns)
	nonEmptyMatch(&errs, "forbiddenPatterns", s.ForbiddenPatterns)
	// Blank values count as checks (deterministic, hasRubric) but check nothing: Compile
	// skips a blank contextExpression, and a blank inlineRubric gives the judge no criteria.
	if s.ContextExpression != "" && strings.TrimSpace(s.ContextExpression) == "" {
		errs.Add("contextExpression", "must not be blank: write a CEL expression over the handoff, or remove the key")
	}
	if s.InlineRubric != "" && strings.TrimSpace(s.InlineRubric) == "" {
		errs.Add("inlineRubric", "must not be blank: write the rubric's criteria, or remove the key")
	}
	if s.InlineRubric != "" && s.JudgeRubricID != "" {
		errs.Add("judgeRubricId", "set either inlineRubric or judgeRubricId, not both")
	}
	if s.DeterministicOnly && !s.deterministic() {
		errs.Add("deterministicOnly", "leaves nothing to check: add requiredPatterns, forbiddenPatterns or contextExpression, or let the judge grade the rubric")
	}
	return errs.Err()
}

// validPatterns reports each pattern of the list field that does not compile.
func validPatterns(errs *check.Errors, field string, patterns []string) {
	for i, p := range patterns {
		if _, err := regexp.Compile(p); err != nil {
			errs.Add(fmt.Sprintf("%s[%d]", field, i), "%v", err)
		}
	}
}

// nonEmptyMatch reports each pattern of the list field that matches empty content: it
// would hold on every handoff (required) or never be reported (forbidden: the match is "").
func nonEmptyMatch(errs *check.Errors, field string, patterns []string) {
	for i, p := range patterns {
		if re, err := regexp.Compile(p); err == nil && re.MatchString("") {
			errs.Add(fmt.Sprintf("%s[%d]", field, i), "pattern %q matches empty content, so it checks nothing: make it match at least one character", p)
		}
	}
}

func (s *ContextStep) ValidateNamed(named map[string]string) error {
	if s.JudgeRubricID == "" {
		return nil
	}
	if _, ok := named[s.JudgeRubricID]; ok {
		return nil
	}
	return fmt.Errorf("judgeRubricId: no rubric %q is defined under rubrics:%s", s.JudgeRubricID, knownNames(named))
}

// knownNames lists the named rubrics for an error message.
func knownNames(named map[string]string) string {
	if len(named) == 0 {
		return " none is defined"
	}
	names := make([]string, 0, len(named))
	for n := range named {
		names = append(names, n)
	}
	sort.Strings(names)
	return " (defined: " + strings.Join(names, ", ") + ")"
}

func (s *ContextStep) hasRubric() bool {
	return s.InlineRubric != "" || s.JudgeRubricID != "" || s.RubricType != ""
}

func (s *ContextStep) deterministic() bool {
	return len(s.RequiredPatterns) > 0 || len(s.ForbiddenPatterns) > 0 || s.ContextExpression != ""
}

// judgeProblem is what a step the judge grades says when no judge is configured: the key
// to name and the error's text after the step's path (ok false: no judge needed).
func (s *ContextStep) JudgeProblem(id string) (field, problem string, ok bool) {
	if s.DeterministicOnly {
		return "", "", false
	}
	var keys []string
	for _, k := range []struct{ key, value string }{
		{"rubricType", s.RubricType}, {"inlineRubric", s.InlineRubric}, {"judgeRubricId", s.JudgeRubricID},
	} {
		if k.value != "" {
			keys = append(keys, k.key)
		}
	}
	if len(keys) == 0 {
		return "", "", false
	}
	fix := check.JudgeFix
	if !s.deterministic() {
		fix = "configure judge (judge.endpoint and judge.model), or replace the rubric with deterministic checks " +
			"(requiredPatterns, forbiddenPatterns, contextExpression) and set deterministicOnly: true on the step"
	}
	return keys[0], fmt.Sprintf("%s is graded by the judge (%s), but no judge is configured: %s", id, strings.Join(keys, ", "), fix), true
}

// rubricName names the step's rubric in messages.
func (s *ContextStep) rubricName() string {
	switch {
	case s.RubricType != "":
		return s.RubricType
	case s.JudgeRubricID != "":
		return s.JudgeRubricID
	}
	return "inline"
}

// contextCheck is a ContextStep compiled.
type contextCheck struct {
	cfg                 *ContextStep
	required, forbidden []*regexp.Regexp
	expr                *celexpr.Expr
}

func (s *ContextStep) Compile(env check.Env) (check.Compiled, error) {
	cc := &contextCheck{cfg: s}
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
		prg, err := celexpr.Compile(env.Exprs.Context, s.ContextExpression, env.CostLimit, 0)
		if err != nil {
			return cc, fmt.Errorf("contextExpression: %w", err)
		}
		cc.expr = prg
	}
	return cc, nil
}

func (cc *contextCheck) Results(id string) []check.Ref {
	return []check.Ref{{ID: id, Action: check.ActionContext}}
}

func (cc *contextCheck) deterministic() bool {
	return len(cc.required) > 0 || len(cc.forbidden) > 0 || cc.expr != nil
}

func (cc *contextCheck) expected() string {
	s := cc.cfg
	var want []string
	for _, re := range cc.required {
		want = append(want, "contains /"+re.String()+"/")
	}
	for _, re := range cc.forbidden {
		want = append(want, "never /"+re.String()+"/")
	}
	if s.ContextExpression != "" {
		want = append(want, "`"+s.ContextExpression+"`")
	}
	if s.hasRubric() && !s.DeterministicOnly {
		want = append(want, "the "+s.rubricName()+" rubric")
	}
	return fmt.Sprintf("handoff %s -> %s whose content satisfies %s", s.FromAgent, s.ToAgent, strings.Join(want, ", "))
}

// Evaluate checks every matching handoff. When the step has a rubric and a judge is
// configured, every handoff's receiving input is graded after the deterministic checks
// passed; the result is filled in then.
func (cc *contextCheck) Evaluate(run *check.Run, id string) {
	r := run.NewResult(id, check.ActionContext)
	r.Expected = cc.expected()
	filled := cc.decide(run, &r)
	run.Out.AddGraded(r, filled)
}

func (cc *contextCheck) decide(run *check.Run, r *check.Result) *check.Result {
	s, g := cc.cfg, run.DAG
	var edges []*agentgraph.Edge
	for _, e := range g.Edges {
		if e.From.Name == s.FromAgent && e.To.Name == s.ToAgent {
			edges = append(edges, e)
			r.Spans = append(r.Spans, e.To.Span.ID.String())
		}
	}
	if len(edges) == 0 {
		r.Outcome, r.Actual, r.Cluster = check.Fail, "no such handoff", cluster.WrongDispatch
		r.Message = check.WithNotRun(g, fmt.Sprintf("no handoff from %s to %s in this trace", s.FromAgent, s.ToAgent), s.FromAgent, s.ToAgent)
		return nil
	}
	var problems []string
	var failedAs cluster.Name // the cluster of the first violation
	for _, e := range edges {
		if !e.To.Input.Found() {
			r.Outcome, r.Actual = check.Fail, "no input content on the receiving span"
			r.Message = fmt.Sprintf("content capture disabled on the exporter: the receiving %s span %s has none of %s",
				s.ToAgent, e.To.Span.ID, strings.Join(e.To.Input.Tried, ", "))
			return nil
		}
		v, as := cc.violations(run.Trace.Ctx, e)
		problems = append(problems, v...)
		failedAs = cmp.Or(failedAs, as)
	}
	r.Actual = fmt.Sprintf("%d handoffs with captured input", len(edges))
	if len(problems) > 0 {
		r.Outcome, r.Message, r.Cluster = check.Fail, strings.Join(problems, "; "), failedAs
		return nil
	}
	if !s.hasRubric() || s.DeterministicOnly {
		r.Outcome, r.Message = check.Pass, fmt.Sprintf("%d handoffs %s -> %s carry the expected content", len(edges), s.FromAgent, s.ToAgent)
		if s.hasRubric() {
			r.Message += "; the " + s.rubricName() + " rubric was not graded: the step is deterministicOnly"
		}
		return nil
	}
	if run.Judging.Grader == nil {
		r.Outcome = check.Skipped
		r.Message = "judge-graded rubric: no judge is configured, so the rubric was not graded"
		if cc.deterministic() {
			r.Message = "deterministic checks passed; " + r.Message
		}
		return nil
	}
	return cc.schedule(run, r, edges)
}

// schedule asks the judge to grade every handoff's content; the returned result is
// filled in from the gradings.
func (cc *contextCheck) schedule(run *check.Run, r *check.Result, edges []*agentgraph.Edge) *check.Result {
	jr := run.Trace.Batch
	name, criteria := cc.rubric(run.Judging.Rubrics)
	jobs := make([]*judge.Job, len(edges))
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
		jobs[i] = jr.Add(judge.Request{Rubric: name, Criteria: criteria, Fields: fields})
	}
	filled := *r
	ev := run.Judging
	jr.Then(func() { cc.applyJudge(ev, &filled, edges, jobs) })
	return &filled
}

// rubric is the rubric the step grades with: its name and text (the built-in text of
// rubricType, then the inline criteria or the named rubric).
func (cc *contextCheck) rubric(named map[string]string) (string, string) {
	s := cc.cfg
	name := s.rubricName()
	var parts []string
	if s.RubricType != "" {
		if t, ok := rubric.CanonicalType(s.RubricType); ok {
			name = t
			parts = append(parts, rubric.Text(named, t))
		}
	}
	switch {
	case s.JudgeRubricID != "":
		parts = append(parts, "Criteria: "+named[s.JudgeRubricID])
	case s.InlineRubric != "":
		parts = append(parts, "Criteria: "+strings.TrimSpace(s.InlineRubric))
	}
	return name, strings.Join(parts, "\n")
}

// applyJudge decides the step from the gradings of its handoffs: an error if any grading
// failed (skipped when the budget was spent), a failure naming each handoff the judge
// failed, else a pass. Score is the lowest score.
func (cc *contextCheck) applyJudge(ev *check.Judging, r *check.Result, edges []*agentgraph.Edge, jobs []*judge.Job) {
	prefix := ""
	if cc.deterministic() {
		prefix = "deterministic checks passed; "
	}
	var failed, passed []string
	lowest := 1.0
	var worst *judge.Job
	for i, j := range jobs {
		at := fmt.Sprintf("handoff %s -> %s (span %s)", edges[i].From.Name, edges[i].To.Name, edges[i].To.Span.ID)
		if j.Err != nil {
			r.Outcome, r.Message = check.JudgeOutcome(j.Err)
			r.Message = prefix + at + ": " + r.Message
			return
		}
		if j.Verdict.Score <= lowest {
			lowest, worst = j.Verdict.Score, j
		}
		line := fmt.Sprintf("%s: %s (score %.2f)", at, j.Verdict.Reason, j.Verdict.Score)
		if j.Verdict.Pass {
			passed = append(passed, line)
		} else {
			failed = append(failed, line)
		}
	}
	r.Score = &lowest
	r.Judge = ev.Verdict(worst.Verdict)
	r.Actual = fmt.Sprintf("%d handoffs graded, %d passed the %s rubric (judge)", len(jobs), len(passed), cc.cfg.rubricName())
	if len(failed) > 0 {
		r.Outcome, r.Message, r.Cluster = check.Fail, prefix+"judge: "+strings.Join(failed, "; "), cluster.DroppedConstraint
		return
	}
	r.Outcome, r.Message = check.Pass, prefix+"judge: "+strings.Join(passed, "; ")
}

// violations lists what one handoff breaks.
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
		val, _, err := cc.expr.Eval(ctx, handoffVars(e))
		var b, isBool bool
		if err == nil {
			b, isBool = val.Value().(bool)
		}
		switch {
		case err != nil:
			out = append(out, fmt.Sprintf("%s: contextExpression failed to evaluate: %v", at, err))
			as = cmp.Or(as, cluster.Other)
		case !isBool:
			// A dyn value (payload.x) type-checks but need not be a bool: not "false".
			out = append(out, fmt.Sprintf("%s: contextExpression gave a %s, not a bool", at, val.Type().TypeName()))
			as = cmp.Or(as, cluster.Other)
		case !b:
			out = append(out, fmt.Sprintf("%s: contextExpression is false", at))
			as = cmp.Or(as, cluster.DroppedConstraint)
		}
	}
	return out, as
}

// handoffVars binds a handoff for contextExpression.
func handoffVars(e *agentgraph.Edge) map[string]any {
	payload := map[string]any{}
	if e.Reason.Text != "" && e.Reason.Text[0] == '{' {
		_ = json.Unmarshal([]byte(e.Reason.Text), &payload)
	}
	tools := e.To.AllowedTools
	if tools == nil {
		tools = []string{}
	}
	return map[string]any{
		"from": e.From.Name, "to": e.To.Name, "scope_prompt": e.To.Input.Text, "reason": e.Reason.Text,
		"context_summary": e.Context.Text, "return_value": e.To.Output.Text, "allowed_tools": tools,
		"payload": payload,
	}
}

func (s *ContextStep) Names() []check.StepName {
	return check.AgentNames("fromAgent", s.FromAgent, "toAgent", s.ToAgent)
}
