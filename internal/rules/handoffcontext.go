package rules

import (
	"encoding/json"
	"fmt"
	"regexp"
	"strings"

	"github.com/google/cel-go/cel"

	"github.com/otelcol-handoff/otelcol-handoff/internal/agentgraph"
)

// EXPECT_HANDOFF_CONTEXT, deterministic part: what crossed the handoff is the receiver's
// captured input (the scope prompt), the dispatch call's arguments (the reason) and its
// context argument. Patterns and a CEL expression check it without a judge; the rubric
// itself needs one.

// contextCheck is one EXPECT_HANDOFF_CONTEXT step, compiled.
type contextCheck struct {
	required, forbidden []*regexp.Regexp
	expr                cel.Program
}

// contextEnv declares what contextExpression sees of one handoff.
func contextEnv() (*cel.Env, error) {
	return cel.NewEnv(
		cel.Variable("from", cel.StringType),
		cel.Variable("to", cel.StringType),
		cel.Variable("scope_prompt", cel.StringType),
		cel.Variable("reason", cel.StringType),
		cel.Variable("context_summary", cel.StringType),
		cel.Variable("return_value", cel.StringType),
		cel.Variable("allowed_tools", cel.ListType(cel.StringType)),
		cel.Variable("payload", cel.MapType(cel.StringType, cel.DynType)),
	)
}

// compileContextChecks compiles the deterministic checks of the case's handoff-context
// steps, by step index.
func compileContextChecks(at string, steps []StepConfig, costLimit uint64) (map[int]*contextCheck, []error) {
	var errs []error
	out := map[int]*contextCheck{}
	var env *cel.Env
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
			if env == nil {
				var err error
				if env, err = contextEnv(); err != nil {
					return nil, []error{err}
				}
			}
			prg, err := compileBool(env, s.ContextExpression, costLimit)
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

// handoffContext evaluates an EXPECT_HANDOFF_CONTEXT step on every matching handoff.
func (c *compiledCase) handoffContext(r *Result, index int, s StepConfig, g *agentgraph.Graph) {
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
	if s.InlineRubric != "" || s.JudgeRubricID != "" {
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
		r.Outcome, r.Actual = Fail, "no such handoff"
		r.Message = fmt.Sprintf("no handoff from %s to %s in this trace", s.FromAgent, s.ToAgent)
		return
	}
	var problems []string
	for _, e := range edges {
		if !e.To.Input.Found() {
			r.Outcome, r.Actual = Fail, "no input content on the receiving span"
			r.Message = fmt.Sprintf("content capture disabled on the exporter: the receiving %s span %s has none of %s",
				s.ToAgent, e.To.Span.ID, strings.Join(e.To.Input.Tried, ", "))
			return
		}
		problems = append(problems, check.violations(e)...)
	}
	r.Actual = fmt.Sprintf("%d handoffs with captured input", len(edges))
	if len(problems) > 0 {
		r.Outcome, r.Message = Fail, strings.Join(problems, "; ")
		return
	}
	if s.InlineRubric != "" || s.JudgeRubricID != "" {
		r.Outcome = Skipped
		r.Message = "judge-graded rubric: no judge is configured, so the rubric was not graded"
		if check.deterministic() {
			r.Message = "deterministic checks passed; " + r.Message
		}
		return
	}
	r.Outcome, r.Message = Pass, fmt.Sprintf("%d handoffs %s -> %s carry the expected content", len(edges), s.FromAgent, s.ToAgent)
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

// violations lists what one handoff breaks.
func (cc *contextCheck) violations(e *agentgraph.Edge) []string {
	if !cc.deterministic() {
		return nil
	}
	at := fmt.Sprintf("handoff %s -> %s (span %s)", e.From.Name, e.To.Name, e.To.Span.ID)
	content := strings.Join([]string{e.To.Input.Text, e.Reason.Text, e.Context.Text}, "\n")
	var out []string
	for _, re := range cc.required {
		if !re.MatchString(content) {
			out = append(out, fmt.Sprintf("%s: the handoff content lacks /%s/", at, re))
		}
	}
	for _, re := range cc.forbidden {
		if m := re.FindString(content); m != "" {
			// Name the pattern, not the match: it may be the very secret that leaked.
			out = append(out, fmt.Sprintf("%s: the handoff content contains forbidden /%s/", at, re))
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
		val, _, err := cc.expr.Eval(map[string]any{
			"from": e.From.Name, "to": e.To.Name, "scope_prompt": e.To.Input.Text, "reason": e.Reason.Text,
			"context_summary": e.Context.Text, "return_value": e.To.Output.Text, "allowed_tools": tools,
			"payload": payload,
		})
		switch {
		case err != nil:
			out = append(out, fmt.Sprintf("%s: contextExpression failed to evaluate: %v", at, err))
		case val.Value() != true:
			out = append(out, fmt.Sprintf("%s: contextExpression is false", at))
		}
	}
	return out
}
