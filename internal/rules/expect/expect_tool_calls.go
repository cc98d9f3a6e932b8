package expect

import (
	"fmt"
	"sort"
	"strings"

	"github.com/google/cel-go/cel"
	"go.opentelemetry.io/collector/confmap"

	"github.com/otelcol-handoff/otelcol-handoff/internal/agentgraph"
	"github.com/otelcol-handoff/otelcol-handoff/internal/celexpr"
	"github.com/otelcol-handoff/otelcol-handoff/internal/rules/check"
)

type compiledTool struct {
	spec ToolCallSpec
	e    *celexpr.Expr // nil for a bare tool name
	// counts is true when the expression reads invocations.
	counts bool
	// want is what is expected (expected); id the step id of the entry on a case's root
	// agent, both made once.
	want, id string
}

func (ct *compiledTool) expected() string {
	if ct.e == nil {
		return ct.spec.Tool + " called at least once"
	}
	return ct.spec.Tool + ": " + ct.e.Src
}

// evalTool evaluates one expected_tool_calls entry with filter-then-count semantics: each
// call of the tool is evaluated with invocations unknown, and matches unless the result is
// false; invocations is then bound to the number of matching calls and the residual of each
// matching call evaluated.
func (te *TraceEval) evalTool(r *check.Result, a *logicalAgent, ct *compiledTool) {
	tool := ct.spec.Tool
	var calls []*agentgraph.ToolCall
	for _, tc := range a.toolCalls {
		if tc.Name == tool {
			calls = append(calls, tc)
		}
	}
	r.Expected = ct.want
	if ct.e == nil {
		calledAtAll(r, a, tool, calls, te.Quiet)
		return
	}
	f, ok := te.filterCalls(r, ct.e, tool, calls)
	if !ok {
		return
	}
	n := len(f.matching)
	if !te.Quiet {
		r.Actual = fmt.Sprintf("%d calls, %d matching", len(calls), n)
		r.Spans = callSpans(f.matching)
		if n == 0 {
			r.Spans = callSpans(calls)
		}
		f.desc = fmt.Sprintf("%d of %d %s calls match `%s`", n, len(calls), tool, ct.e.Src)
	}
	switch {
	case !ct.counts && te.Quiet:
		r.Outcome = check.PassIf(n > 0)
	case !ct.counts:
		anyMatching(r, a, ct.e, tool, calls, f)
	case n == 0:
		te.holdsWithNone(r, a, ct.e, tool, calls, f)
	default:
		te.residualsHold(r, a, tool, ct.e, f)
	}
}

// calledAtAll decides a bare tool name: called at least once.
func calledAtAll(r *check.Result, a *logicalAgent, tool string, calls []*agentgraph.ToolCall, quiet bool) {
	if quiet { // the outcome alone
		r.Outcome = check.PassIf(len(calls) > 0)
		return
	}
	r.Actual = fmt.Sprintf("%d calls", len(calls))
	r.Spans = callSpans(calls)
	if len(calls) == 0 {
		r.Outcome = check.Fail
		r.Message = fmt.Sprintf("%s was never called by agent %s (%s)", tool, a.label(), toolSummary(a))
		return
	}
	r.Outcome = check.Pass
	r.Message = fmt.Sprintf("agent %s called %s %d times", a.label(), tool, len(calls))
}

// residual is what is left of a tool expression once a call's params are bound: its text
// and program (nil when the call matched outright).
type residual struct {
	text string
	prg  cel.Program
}

// toolFilter is the calls of a tool that match its expression, with the distinct
// residuals left to decide once invocations is known, and the first arguments seen.
type toolFilter struct {
	matching  []*agentgraph.ToolCall
	residuals []residual
	argsSeen  []string
	desc      string // "n of m tool calls match `expr`"
}

// filterCalls evaluates e on each call with invocations unknown; ok is false when a call
// could not be evaluated (r is then the error).
func (te *TraceEval) filterCalls(r *check.Result, e *celexpr.Expr, tool string, calls []*agentgraph.ToolCall) (f toolFilter, ok bool) {
	seen := map[string]bool{}
	// An expression that does not read params evaluates the same on every call (context is
	// the trace's): the first call's evaluation decides the others.
	perCall := e.Uses("params")
	var matched bool
	var res residual
	for i, tc := range calls {
		// The arguments are parsed for the first three shown (not when quiet) and for a call
		// evaluated here (its error hint reads them even when the expression does not).
		shown := len(f.argsSeen) < 3 && !te.Quiet
		evaluated := i == 0 || perCall || te.Deadline.Err() != nil
		var params map[string]any
		isObject := false
		if shown || evaluated {
			params, isObject = tc.ParsedArgs()
		}
		if shown {
			f.argsSeen = append(f.argsSeen, show(params))
		}
		if evaluated {
			// at names the call in an error: made only for one.
			at := func() string { return fmt.Sprintf("%s call %d of %d (span %s)", tool, i+1, len(calls), tc.Span.ID) }
			if matched, res, ok = te.matchCall(r, e, tc, params, isObject, at); !ok {
				return f, false
			}
		}
		if !matched {
			continue
		}
		f.matching = append(f.matching, tc)
		if !seen[res.text] {
			seen[res.text] = true
			f.residuals = append(f.residuals, res)
		}
	}
	return f, true
}

// matchCall evaluates e on one call (at names it) with invocations unknown: matched unless
// false, with the residual to decide later; ok is false when it could not be evaluated.
func (te *TraceEval) matchCall(r *check.Result, e *celexpr.Expr, tc *agentgraph.ToolCall, params map[string]any, isObject bool, at func() string) (matched bool, res residual, ok bool) {
	act, err := cel.PartialVars(map[string]any{"params": params, "context": te.contextOf(e)}, cel.AttributePattern("invocations"))
	if err != nil {
		setError(r, "%s: %v", tc.Name, err)
		return false, res, false
	}
	val, det, err := e.Eval(te.Deadline, act)
	if err != nil {
		r.Spans = []string{tc.Span.ID.String()}
		setError(r, "%s could not be evaluated against `%s`: %v%s%s", at(), e.Src, err, argsHint(tc, isObject), te.contextHint(err, e))
		return false, res, false
	}
	holds, isUnknown, err := celexpr.Bool(val)
	if err != nil {
		setError(r, "%s: %v", at(), err)
		return false, res, false
	}
	if !isUnknown {
		return holds, residual{text: "true"}, true
	}
	rest, err := e.Residual(det)
	if err != nil {
		setError(r, "%s: residual of `%s`: %v", at(), e.Src, err)
		return false, res, false
	}
	if celexpr.References(rest)["params"] {
		// Only an error keeps params in the residual (e.g. a missing key, absorbed by the
		// unknown invocations).
		r.Spans = []string{tc.Span.ID.String()}
		setError(r, "%s could not be evaluated against `%s`: %s%s", at(), e.Src, celexpr.StateError(det), argsHint(tc, isObject))
		return false, res, false
	}
	prg, text, err := e.ResidualProgram(rest)
	if err != nil {
		setError(r, "%s: residual of `%s`: %v", at(), e.Src, err)
		return false, res, false
	}
	return true, residual{text: text, prg: prg}, true
}

// anyMatching decides an expression that does not read invocations: at least one call
// matches.
func anyMatching(r *check.Result, a *logicalAgent, e *celexpr.Expr, tool string, calls []*agentgraph.ToolCall, f toolFilter) {
	if len(f.matching) > 0 {
		r.Outcome = check.Pass
		r.Message = fmt.Sprintf("agent %s: %s", a.label(), f.desc)
		return
	}
	r.Outcome = check.Fail
	if len(calls) == 0 {
		r.Message = fmt.Sprintf("%s was never called by agent %s (%s); `%s` needs at least one matching call", tool, a.label(), toolSummary(a), e.Src)
		return
	}
	r.Message = fmt.Sprintf("agent %s: none of %d %s calls match `%s` (arguments seen: %s)", a.label(), len(calls), tool, e.Src, strings.Join(f.argsSeen, "; "))
}

// holdsWithNone decides a counting expression no call matched: there is no call to take a
// residual from, so it is evaluated with invocations = 0 and params unknown. Unknown means
// the verdict depends only on the (absent) calls' params: it holds.
func (te *TraceEval) holdsWithNone(r *check.Result, a *logicalAgent, e *celexpr.Expr, tool string, calls []*agentgraph.ToolCall, f toolFilter) {
	act, err := cel.PartialVars(map[string]any{"invocations": int64(0), "context": te.contextOf(e)}, cel.AttributePattern("params"))
	if err != nil {
		setError(r, "%s: %v", tool, err)
		return
	}
	val, _, err := e.Eval(te.Deadline, act)
	if err != nil {
		setError(r, "%s: `%s` could not be evaluated with invocations = 0: %v%s", tool, e.Src, err, te.contextHint(err, e))
		return
	}
	ok, isUnknown, err := celexpr.Bool(val)
	switch {
	case err != nil:
		setError(r, "%s: %v", tool, err)
	case te.Quiet: // the outcome alone
		r.Outcome = check.PassIf(ok || isUnknown)
	case (ok || isUnknown) && len(calls) == 0:
		r.Outcome = check.Pass
		r.Message = fmt.Sprintf("agent %s never called %s, and `%s` holds with invocations = 0", a.label(), tool, e.Src)
	case ok || isUnknown:
		r.Outcome = check.Pass
		r.Message = fmt.Sprintf("agent %s: %s, and `%s` holds with invocations = 0", a.label(), f.desc, e.Src)
	case len(calls) == 0:
		r.Outcome = check.Fail
		r.Message = fmt.Sprintf("%s was never called by agent %s (%s), and `%s` is false with invocations = 0", tool, a.label(), toolSummary(a), e.Src)
	default:
		r.Outcome = check.Fail
		r.Message = fmt.Sprintf("agent %s: %s (arguments seen: %s), and `%s` is false with invocations = 0",
			a.label(), f.desc, strings.Join(f.argsSeen, "; "), e.Src)
	}
}

// residualsHold decides a counting expression: each distinct residual of the matching
// calls, with invocations bound to their number.
func (te *TraceEval) residualsHold(r *check.Result, a *logicalAgent, tool string, e *celexpr.Expr, f toolFilter) {
	n := len(f.matching)
	var held []string
	for _, res := range f.residuals {
		if res.prg == nil {
			continue // the call matched outright (true)
		}
		val, _, err := res.prg.ContextEval(te.Deadline, map[string]any{"invocations": int64(n), "context": te.contextOf(e)})
		if err != nil {
			setError(r, "%s: residual `%s` could not be evaluated with invocations = %d: %v", tool, res.text, n, err)
			return
		}
		ok, _, err := celexpr.Bool(val)
		if err != nil {
			setError(r, "%s: residual `%s`: %v", tool, res.text, err)
			return
		}
		if !ok {
			r.Outcome = check.Fail
			if !te.Quiet {
				r.Message = fmt.Sprintf("agent %s: %s, and the residual `%s` is false with invocations = %d", a.label(), f.desc, res.text, n)
			}
			return
		}
		held = append(held, "`"+res.text+"`")
	}
	r.Outcome = check.Pass
	if te.Quiet {
		return
	}
	if len(held) == 0 {
		r.Message = fmt.Sprintf("agent %s: %s", a.label(), f.desc)
		return
	}
	r.Message = fmt.Sprintf("agent %s: %s, and the residual %s holds with invocations = %d", a.label(), f.desc, strings.Join(held, " and "), n)
}

func argsHint(tc *agentgraph.ToolCall, isObject bool) string {
	if isObject {
		return ""
	}
	if !tc.Args.Found() {
		return fmt.Sprintf(" (the call's arguments were not captured: none of %s)", strings.Join(tc.Args.Tried, ", "))
	}
	return fmt.Sprintf(" (the call's arguments are not a JSON object, so params is empty: %s)", show(tc.Args.Text))
}

func callSpans(calls []*agentgraph.ToolCall) []string {
	var out []string
	for _, tc := range calls {
		out = append(out, tc.Span.ID.String())
	}
	return out
}

// toolSummary names the tools an agent called, with counts.
func toolSummary(a *logicalAgent) string {
	if len(a.toolCalls) == 0 {
		return "it made no tool calls"
	}
	counts := map[string]int{}
	for _, tc := range a.toolCalls {
		counts[tc.Name]++
	}
	return "its tool calls: " + check.FormatCounts(counts)
}

// ToolCallSpec is one item of expected_tool_calls: a bare tool name (the tool is called at
// least once) or a one-key map `tool: expression` over invocations, params and context.
type ToolCallSpec struct {
	// Tool is the tool name (decoded from the item itself, not from a key).
	Tool string `mapstructure:"-"`
	// Expr is the expression; empty for a bare tool name.
	Expr string `mapstructure:"-"`
}

// UnmarshalText decodes the bare-name form.
func (t *ToolCallSpec) UnmarshalText(b []byte) error {
	t.Tool, t.Expr = string(b), ""
	return nil
}

// Unmarshal decodes the `tool: expression` form.
func (t *ToolCallSpec) Unmarshal(conf *confmap.Conf) error {
	m := conf.ToStringMap()
	if len(m) != 1 {
		keys := make([]string, 0, len(m))
		for k := range m {
			keys = append(keys, k)
		}
		sort.Strings(keys)
		return fmt.Errorf("an expected_tool_calls item is a tool name or a one-key map `tool: expression`, got keys %s", strings.Join(keys, ", "))
	}
	for k, v := range m {
		t.Tool = k
		switch v := v.(type) {
		case string:
			t.Expr = v
		case bool, int, int64, uint64, float64:
			t.Expr = fmt.Sprint(v)
		case nil:
			t.Expr = ""
		default:
			return fmt.Errorf("expected_tool_calls item %q: the expression must be a string, got %T", k, v)
		}
	}
	return nil
}

// ExpectedToolCalls is expected_tool_calls: independent assertions on the agent's own tool
// calls, one result each.
type ExpectedToolCalls []ToolCallSpec

func (tc ExpectedToolCalls) set() bool { return len(tc) > 0 }

// ValidateField checks the tool names.
func (tc ExpectedToolCalls) ValidateField() error {
	var errs check.Errors
	for i, spec := range tc {
		if strings.TrimSpace(spec.Tool) == "" {
			errs.Add(fmt.Sprintf("%s[%d]", FieldExpectedToolCalls, i), "the tool name must not be empty")
		}
	}
	return errs.Err()
}

func (tc ExpectedToolCalls) compile(env check.Env) (expectation, error) {
	var errs []error
	var out toolChecks
	for i, spec := range tc {
		ct := &compiledTool{spec: spec}
		if strings.TrimSpace(spec.Expr) != "" {
			e, err := celexpr.Compile(env.Exprs.Tool, spec.Expr, env.CostLimit, cel.OptPartialEval|cel.OptTrackState)
			if err != nil {
				errs = append(errs, fmt.Errorf("%s[%d] (%s): %w", FieldExpectedToolCalls, i, spec.Tool, err))
			} else {
				ct.e, ct.counts = e, e.Uses("invocations")
			}
		}
		ct.want, ct.id = ct.expected(), toolCallID("", i)
		out = append(out, ct)
	}
	return out, joinErrs(errs)
}

// toolChecks is expected_tool_calls compiled.
type toolChecks []*compiledTool

func (tc toolChecks) refs(prefix string) []check.Ref {
	out := make([]check.Ref, 0, len(tc))
	for i, ct := range tc {
		out = append(out, check.Ref{ID: toolCallID(prefix, i), Action: FieldExpectedToolCalls, Expected: ct.want})
	}
	return out
}

func (tc toolChecks) evaluate(te *TraceEval, base check.Result, a *logicalAgent, prefix string, out []check.Result) []check.Result {
	for i, ct := range tc {
		id := ct.id
		if prefix != "" {
			id = toolCallID(prefix, i)
		}
		r := fieldResult(base, id, FieldExpectedToolCalls)
		te.evalTool(&r, a, ct)
		te.agentSpans(&r, a)
		out = append(out, r)
	}
	return out
}

// toolCallID is the step id of entry i of expected_tool_calls under prefix.
func toolCallID(prefix string, i int) string {
	return fmt.Sprintf("%s%s[%d]", prefix, FieldExpectedToolCalls, i)
}
