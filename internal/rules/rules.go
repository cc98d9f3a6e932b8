package rules

import (
	"context"
	"errors"
	"fmt"
	"math"
	"sort"
	"strings"
	"time"

	"github.com/otelcol-handoff/otelcol-handoff/internal/agentgraph"
	"github.com/otelcol-handoff/otelcol-handoff/internal/celexpr"
	"github.com/otelcol-handoff/otelcol-handoff/internal/cluster"
	"github.com/otelcol-handoff/otelcol-handoff/internal/judge"
)

// Outcome of one assertion on one trace.
type Outcome string

const (
	Pass    Outcome = "pass"
	Fail    Outcome = "fail"
	Error   Outcome = "error"
	Skipped Outcome = "skipped"
)

// Outcomes lists every outcome, for zero-initialized metrics.
var Outcomes = []Outcome{Pass, Fail, Error, Skipped}

// Result is one assertion's verdict on one trace.
type Result struct {
	TraceID  string   `json:"trace_id"`
	Case     string   `json:"case"`
	Step     string   `json:"step"`
	Action   string   `json:"action"`
	Outcome  Outcome  `json:"outcome"`
	Expected string   `json:"expected"`
	Actual   string   `json:"actual"`
	Message  string   `json:"message"`
	Spans    []string `json:"spans,omitempty"`
	// Complete is false when the trace was released before it was complete.
	Complete bool `json:"trace_complete"`

	// Handoff rubric results (EXPECT_HANDOFF_RUBRICS): the handoff's sender and receiver,
	// the rubric (axis) and its score from 0 to 1 (absent when not graded).
	From  string   `json:"from,omitempty"`
	To    string   `json:"to,omitempty"`
	Axis  string   `json:"axis,omitempty"`
	Score *float64 `json:"score,omitempty"`
	// Gated is true when a gate decides this axis for this pair: the result feeds the
	// gate's mean score and does not fail a run by itself.
	Gated bool `json:"gated,omitempty"`
	// Judge is the judge's verdict, when a judge graded the result.
	Judge *JudgeVerdict `json:"judge,omitempty"`
	// Cluster names why a failing result failed, as its check decided; Signature is the
	// failure's stable signature (internal/cluster). Both are empty unless the outcome is fail.
	Cluster   cluster.Name `json:"cluster,omitempty"`
	Signature string       `json:"signature,omitempty"`

	// pending is the result a judge grading fills in after the trace's steps ran.
	pending *Result
}

// DefaultCostLimit bounds one CEL evaluation (cel-go cost units).
const DefaultCostLimit = celexpr.DefaultCostLimit

// MaxCostLimit is the highest eval_cost_limit accepted.
const MaxCostLimit = celexpr.MaxCostLimit

// Evaluator holds compiled cases. It is safe for concurrent use.
type Evaluator struct {
	cases []*compiledCase
	// judge grades rubrics (nil: judge-graded parts are skipped).
	judge Grader
	// rubrics are the named rubrics (judgeRubricId; a rubric named after an axis or
	// GROUNDEDNESS replaces the built-in text).
	rubrics map[string]string
	gates   *GateSet
	// evalTimeout bounds the deterministic evaluation of one trace (0: no bound).
	evalTimeout time.Duration
}

type compiledCase struct {
	ev   *Evaluator
	cfg  CaseConfig
	when *celexpr.Expr // nil: every trace with at least one agent
	// expect holds the seed-001 assertions on the root agent (defaults applied).
	expect *compiledExpectations
	// contextChecks are the deterministic checks of the EXPECT_HANDOFF_CONTEXT steps.
	contextChecks map[int]*contextCheck
	// rubricSteps are the EXPECT_HANDOFF_RUBRICS steps, by step index.
	rubricSteps map[int]*rubricStep
	// trajectories are the compiled EXPECT_TRAJECTORY steps, by step index.
	trajectories map[int]*trajectoryStep
}

// stepIDs lists the case's step ids in evaluation order: seed-000 steps, then seed-001
// assertions.
func (c *compiledCase) stepIDs() []string {
	var ids []string
	for i, s := range c.cfg.Steps {
		if s.Action == ActionRubrics {
			for _, a := range stepAxes(s) {
				ids = append(ids, s.ID(i)+"."+a)
			}
			continue
		}
		ids = append(ids, s.ID(i))
	}
	for _, ref := range c.expect.steps("") {
		ids = append(ids, ref.id)
	}
	return ids
}

// Cases lists the case names and, per case, its step ids (for metrics). Every id comes
// from the config, so the set is bounded.
func (e *Evaluator) Cases() map[string][]string {
	out := make(map[string][]string, len(e.cases))
	for _, c := range e.cases {
		out[c.cfg.Name] = c.stepIDs()
	}
	return out
}

// CaseNames lists the case names in config order.
func (e *Evaluator) CaseNames() []string {
	out := make([]string, 0, len(e.cases))
	for _, c := range e.cases {
		out = append(out, c.cfg.Name)
	}
	return out
}

// Options configure Compile.
type Options struct {
	// Defaults are seed-001 test-case fields every case inherits unless it sets them
	// (a field set on the case wins as a whole).
	Defaults TestFields
	// CostLimit bounds one CEL evaluation; 0 means DefaultCostLimit.
	CostLimit uint64
	// Judge grades rubrics; nil: judge-graded parts end skipped ("no judge is configured")
	// and the deterministic parts still run. A config without a judge must not have such
	// steps unless they are deterministicOnly: CheckJudged refuses them at validation.
	Judge Grader
	// Rubrics are named rubric texts (judgeRubricId); one named after an axis or
	// GROUNDEDNESS replaces the built-in text.
	Rubrics map[string]string
	// Gates marks the rubric results a gate decides (Result.Gated).
	Gates *GateSet
	// EvalTimeout bounds the wall-clock time of one trace's deterministic evaluation (CEL
	// and the Go-side checks); past it, the results not reached are errors. 0: no bound.
	EvalTimeout time.Duration
}

// Compile validates the cases and compiles their CEL (case conditions and seed-001
// expressions); errors name the case, the field and, for CEL, the line:column.
func Compile(cases []CaseConfig, opts Options) (*Evaluator, error) {
	if err := validateCases(cases, opts.Defaults, opts.Rubrics); err != nil {
		return nil, err
	}
	costLimit := opts.CostLimit
	if costLimit == 0 {
		costLimit = DefaultCostLimit
	}
	envs, err := getExprEnvs()
	if err != nil {
		return nil, err
	}
	defaults, errs := compileExpectations(envs, "defaults", opts.Defaults.AgentExpectations, costLimit)
	ev := &Evaluator{judge: opts.Judge, rubrics: opts.Rubrics, gates: opts.Gates, evalTimeout: opts.EvalTimeout}
	for i, c := range cases {
		cc := &compiledCase{ev: ev, cfg: c, rubricSteps: map[int]*rubricStep{}}
		for j, s := range c.Steps {
			if s.Action == ActionRubrics {
				cc.rubricSteps[j] = compileRubricStep(s)
			}
		}
		at := fmt.Sprintf("cases[%d] (%s)", i, c.Name)
		if strings.TrimSpace(c.When) != "" {
			prg, err := celexpr.Compile(envs.when, c.When, costLimit, 0)
			if err != nil {
				errs = append(errs, fmt.Errorf("%s.when: %w", at, err))
			}
			cc.when = prg
		}
		checks, checkErrs := compileContextChecks(envs.context, at, c.Steps, costLimit)
		errs = append(errs, checkErrs...)
		cc.contextChecks = checks
		trajectories, trajErrs := compileTrajectories(at, c.Steps, costLimit)
		errs = append(errs, trajErrs...)
		cc.trajectories = trajectories
		own, ownErrs := compileExpectations(envs, at, c.AgentExpectations, costLimit)
		errs = append(errs, ownErrs...)
		own.inherit(defaults)
		cc.expect = own
		ev.cases = append(ev.cases, cc)
	}
	if err := errors.Join(errs...); err != nil {
		return nil, err
	}
	return ev, nil
}

// traceVars binds a trace for case conditions: the model's selector view of it.
func traceVars(g *agentgraph.Graph) map[string]any {
	sel := g.Selector()
	return map[string]any{
		"root_agent": sel.RootAgent, "agents": sel.Agents, "service_name": sel.ServiceName,
		"root_span_name": sel.RootSpanName, "resource": sel.Resource, "attributes": sel.Attributes,
	}
}

// Evaluate runs every live case that selects the trace and returns one result per step and
// per seed-001 assertion, in config order. Cases whose topology reads a file (source FILE)
// are judged once on that file instead (EvaluateFileCase).
func (e *Evaluator) Evaluate(g *agentgraph.Graph, complete bool) []Result {
	return e.EvaluateContext(context.Background(), g, complete)
}

// EvaluateContext is Evaluate with a context for the judge's calls: the deterministic
// parts of every case run first, then the trace's gradings (in parallel, bounded by the
// judge's concurrency and its per-trace timeout), waited for.
func (e *Evaluator) EvaluateContext(ctx context.Context, g *agentgraph.Graph, complete bool) []Result {
	return e.wait(ctx, e.EvaluateDeferred(ctx, g, complete))
}

// Evaluation is one trace's evaluation: the results decided at once and the judge's work
// left for later.
type Evaluation struct {
	// Now are the results decided without the judge, in config order.
	Now []Result
	// Grading holds the trace's gradings (nil: none); its Run returns every result.
	Grading *Grading
	// TimedOut: the evaluation overran eval_timeout; the results it did not reach are
	// errors ("evaluation exceeded eval_timeout").
	TimedOut bool
}

// EvaluateDeferred runs the deterministic parts of every live case that selects the trace,
// within eval_timeout, and leaves the judge's gradings to the caller (Evaluation.Grading):
// no judge call is made here.
func (e *Evaluator) EvaluateDeferred(ctx context.Context, g *agentgraph.Graph, complete bool) Evaluation {
	tc, cancel := e.newTraceCache(ctx, g)
	defer cancel()
	var out []Result
	for _, c := range e.cases {
		if c.cfg.SpansFile() == "" {
			out = append(out, c.evaluate(tc, complete)...)
		}
	}
	return e.split(tc, out)
}

// newTraceCache starts one trace's evaluation, bounded by eval_timeout. The bound does not
// follow ctx's cancellation: a client going away does not turn verdicts into errors.
func (e *Evaluator) newTraceCache(ctx context.Context, g *agentgraph.Graph) (*traceCache, context.CancelFunc) {
	ectx, cancel := context.WithoutCancel(ctx), context.CancelFunc(func() {})
	if e.evalTimeout > 0 {
		ectx, cancel = context.WithTimeoutCause(ectx, e.evalTimeout, fmt.Errorf("evaluation exceeded eval_timeout (%s)", e.evalTimeout))
	}
	return &traceCache{g: g, jr: &judgeRun{}, ctx: ectx}, cancel
}

// split separates the results decided now from those a grading decides.
func (e *Evaluator) split(tc *traceCache, out []Result) Evaluation {
	ev := Evaluation{TimedOut: tc.ctx.Err() != nil}
	stampClusters(out)
	var gr *Grading
	for i := range out {
		p := out[i].pending
		if p == nil {
			ev.Now = append(ev.Now, out[i])
			continue
		}
		if gr == nil {
			gr = &Grading{ev: e, jr: tc.jr, all: out}
		}
		gr.pending = append(gr.pending, i)
		gr.before = append(gr.before, *p)
	}
	ev.Grading = gr
	return ev
}

// wait runs an evaluation's gradings now and returns every result in config order.
func (e *Evaluator) wait(ctx context.Context, ev Evaluation) []Result {
	if ev.Grading == nil {
		return ev.Now
	}
	all, _ := ev.Grading.Run(ctx)
	return all
}

// HasJudge reports whether a judge grades rubrics.
func (e *Evaluator) HasJudge() bool { return e.judge != nil }

// JudgeInfo describes the judge (zero without one).
func (e *Evaluator) JudgeInfo() judge.Info {
	if e.judge == nil {
		return judge.Info{}
	}
	return e.judge.Info()
}

// FileCases maps each case whose topology reads recorded spans (source FILE) to its file.
func (e *Evaluator) FileCases() map[string]string {
	out := map[string]string{}
	for _, c := range e.cases {
		if f := c.cfg.SpansFile(); f != "" {
			out[c.cfg.Name] = f
		}
	}
	return out
}

// EvaluateFileCase judges one FILE case on one trace of its file.
func (e *Evaluator) EvaluateFileCase(name string, g *agentgraph.Graph) []Result {
	return e.EvaluateFileCaseContext(context.Background(), name, g)
}

// EvaluateFileCaseContext is EvaluateFileCase with a context for the judge's calls.
func (e *Evaluator) EvaluateFileCaseContext(ctx context.Context, name string, g *agentgraph.Graph) []Result {
	for _, c := range e.cases {
		if c.cfg.Name == name {
			tc, cancel := e.newTraceCache(ctx, g)
			defer cancel()
			return e.wait(ctx, e.split(tc, c.evaluate(tc, true)))
		}
	}
	return nil
}

// traceCache holds what several cases derive from one trace.
type traceCache struct {
	// ctx bounds the deterministic evaluation (eval_timeout); CEL programs and the
	// Go-side checks stop when it is done.
	ctx  context.Context
	g    *agentgraph.Graph
	vars map[string]any
	te   *traceEval
	x    *dagIndex
	jr   *judgeRun
}

// index returns the trace's span index for the handoff rubrics.
func (tc *traceCache) index() *dagIndex {
	if tc.x == nil {
		tc.x = newDAGIndex(tc.g)
	}
	return tc.x
}

// evaluate runs the case on the trace if its condition selects it.
func (c *compiledCase) evaluate(tc *traceCache, complete bool) []Result {
	g := tc.g
	base := Result{TraceID: g.TraceID.String(), Case: c.cfg.Name, Complete: complete}
	if tc.ctx.Err() != nil {
		return c.notReached(base, tc.ctx, 0, true)
	}
	if c.when == nil {
		if len(g.Invocations) == 0 {
			return nil
		}
	} else {
		if tc.vars == nil {
			tc.vars = traceVars(g)
		}
		val, _, err := c.when.Eval(tc.ctx, tc.vars)
		if err != nil {
			r := base
			r.Step, r.Action, r.Outcome = "when", "when", Error
			r.Expected, r.Actual = c.cfg.When, "evaluation error"
			r.Message = "case condition failed to evaluate: " + err.Error()
			if tc.ctx.Err() != nil {
				r.Message = context.Cause(tc.ctx).Error() + ": case condition not decided: " + err.Error()
			}
			return []Result{r}
		}
		if selected, ok := val.Value().(bool); !ok || !selected {
			return nil
		}
	}
	out := c.evaluateSteps(base, tc)
	if !c.expect.empty() {
		if tc.te == nil {
			tc.te = newTraceEval(g)
			tc.te.deadline = tc.ctx
		}
		out = append(out, c.evaluateTestCase(base, tc.te)...)
	}
	return out
}

// evaluateTestCase runs the seed-001 assertions on the trace's root agent, as one logical
// agent over all its runs (rootAgent: a supervisor resumed as new runs). A panic (a bug, or one in a library) becomes an error result per assertion: bad input never
// takes the collector down.
func (c *compiledCase) evaluateTestCase(base Result, te *traceEval) (out []Result) {
	defer func() {
		if p := recover(); p != nil {
			out = nil
			for _, ref := range c.expect.steps("") {
				r := base
				r.Step, r.Action, r.Outcome = ref.id, ref.action, Error
				r.Expected, r.Actual = ref.expected, "evaluation error"
				r.Message = fmt.Sprintf("internal error while evaluating the test case: %v", p)
				out = append(out, r)
			}
		}
	}()
	if te.g.Root == nil {
		var out []Result
		for _, ref := range c.expect.steps("") {
			r := base
			r.Step, r.Action, r.Outcome = ref.id, ref.action, Skipped
			r.Actual = "no agent"
			r.Message = errNoRoot.Error() + ": the test-case assertions apply to the root agent"
			out = append(out, r)
		}
		return out
	}
	return te.evalExpectations(base, te.rootAgent(), c.expect, "")
}

func (c *compiledCase) evaluateSteps(base Result, tc *traceCache) []Result {
	g := tc.g
	var out []Result
	var topo *agentgraph.Graph
	for i, s := range c.cfg.Steps {
		if tc.ctx.Err() != nil {
			return append(out, c.notReached(base, tc.ctx, i, false)...)
		}
		if s.Action == ActionRubrics {
			out = append(out, c.handoffRubrics(base, i, s, topo, tc)...)
			continue
		}
		r := base
		r.Step, r.Action = s.ID(i), s.Action
		switch s.Action {
		case ActionTopology:
			topo = g
			topology(&r, s, g)
		case ActionDelegation:
			delegation(&r, s, topo)
		case ActionBudget:
			budget(&r, s, topo)
		case ActionTrajectory:
			c.trajectory(&r, i, s, topo, tc)
		case ActionContext:
			if p := c.handoffContext(&r, i, s, topo, tc); p != nil {
				r.pending = p
			}
		}
		out = append(out, r)
	}
	return out
}

// notReached is an error result for every step of the case from step index from on (and
// for its test-case assertions when withTestCase): the trace's evaluation ran out of
// eval_timeout before them.
func (c *compiledCase) notReached(base Result, ctx context.Context, from int, withTestCase bool) []Result {
	var out []Result
	mk := func(id, action, expected string) {
		r := base
		r.Step, r.Action, r.Outcome = id, action, Error
		r.Expected, r.Actual = expected, "not evaluated"
		r.Message = context.Cause(ctx).Error() + ": not evaluated"
		out = append(out, r)
	}
	for i := from; i < len(c.cfg.Steps); i++ {
		s := c.cfg.Steps[i]
		if s.Action == ActionRubrics {
			for _, a := range stepAxes(s) {
				mk(s.ID(i)+"."+a, ActionRubrics, rubricExpected[a])
			}
			continue
		}
		mk(s.ID(i), s.Action, "")
	}
	if withTestCase {
		for _, ref := range c.expect.steps("") {
			mk(ref.id, ref.action, ref.expected)
		}
	}
	return out
}

func topology(r *Result, s StepConfig, g *agentgraph.Graph) {
	var want []string
	if s.MaxDepth != nil {
		want = append(want, fmt.Sprintf("depth <= %d", *s.MaxDepth))
	}
	if !s.AllowCycles {
		w := "no delegation cycles"
		if len(s.AllowedCycles) > 0 {
			var allowed []string
			for _, c := range s.AllowedCycles {
				allowed = append(allowed, "{"+strings.Join(c, ", ")+"}")
			}
			w += " but " + strings.Join(allowed, " ")
		}
		want = append(want, w)
	}
	want = append(append(want, loopExpected(s)...), "at least one agent")
	r.Expected = strings.Join(want, ", ")
	cycles := "none"
	if len(g.Cycles) > 0 {
		var cs []string
		for _, c := range g.Cycles {
			cs = append(cs, "{"+strings.Join(c, ", ")+"}")
		}
		cycles = strings.Join(cs, " ")
	}
	r.Actual = fmt.Sprintf("%d agent invocations, %d handoffs, depth %d, cycles %s",
		len(g.Invocations), len(g.Edges), g.Depth, cycles)
	for _, inv := range g.Invocations {
		r.Spans = append(r.Spans, inv.Span.ID.String())
	}
	var problems []string
	if len(g.Invocations) == 0 {
		problems = append(problems, fmt.Sprintf("no agent span recognized among %d spans", len(g.Spans)))
	}
	if s.MaxDepth != nil && g.Depth > *s.MaxDepth {
		problems = append(problems, fmt.Sprintf("delegation depth %d exceeds maxDepth %d (%s)", g.Depth, *s.MaxDepth, longestChain(g)))
	}
	if !s.AllowCycles {
		var forbidden []string
		for _, c := range g.Cycles {
			if !allowedCycle(c, s.AllowedCycles) {
				forbidden = append(forbidden, "{"+strings.Join(c, ", ")+"}")
			}
		}
		if len(forbidden) > 0 {
			problems = append(problems, "delegation cycle among agents "+strings.Join(forbidden, " "))
		}
	}
	problems = append(problems, loopProblems(s, g)...)
	verdict(r, problems, "topology ok: "+r.Actual)
	r.classify(topologyCluster(g))
}

func delegation(r *Result, s StepConfig, g *agentgraph.Graph) {
	minN := s.minInvocations()
	maxN := math.MaxInt
	bounds := fmt.Sprintf("at least %d", minN)
	if s.MaxInvocations != nil {
		maxN = *s.MaxInvocations
		bounds = fmt.Sprintf("between %d and %d", minN, maxN)
	}
	from := "any agent"
	if s.FromAgent != "" {
		from = s.FromAgent
	}
	r.Expected = fmt.Sprintf("%s delegates to %s %s times", from, s.AgentName, bounds)
	count := 0
	others := map[string]int{}
	for _, e := range g.Edges {
		if e.To.Name != s.AgentName {
			continue
		}
		if s.FromAgent == "" || e.From.Name == s.FromAgent {
			count++
			r.Spans = append(r.Spans, e.To.Span.ID.String())
		} else {
			others[e.From.Name]++
		}
	}
	r.Actual = fmt.Sprintf("%d times", count)
	if len(others) > 0 {
		r.Actual += fmt.Sprintf(" (other senders to %s: %s)", s.AgentName, formatCounts(others))
	}
	var problems []string
	if count < minN || count > maxN {
		problems = append(problems, fmt.Sprintf("expected %s delegating to %s %s times, saw %s", from, s.AgentName, bounds, r.Actual))
	}
	verdict(r, problems, fmt.Sprintf("%s delegated to %s %d times", from, s.AgentName, count))
	r.classify(cluster.WrongDispatch)
	r.Message = withNotRun(g, r.Message, s.AgentName, s.FromAgent)
}

func budget(r *Result, s StepConfig, g *agentgraph.Graph) {
	var want []string
	if s.MaxTokens != nil {
		want = append(want, fmt.Sprintf("tokens <= %d", *s.MaxTokens))
	}
	if s.MaxDurationMs != nil {
		want = append(want, fmt.Sprintf("duration <= %gms", *s.MaxDurationMs))
	}
	if s.MaxToolCalls != nil {
		want = append(want, fmt.Sprintf("tool calls <= %d", *s.MaxToolCalls))
	}
	if c := costWant(s); c != "" {
		want = append(want, c)
	}
	r.Expected = s.AgentName + " subtree: " + strings.Join(want, ", ")
	var problems, unknown, actual []string
	runs := 0
	for _, inv := range g.Invocations {
		if inv.Name != s.AgentName {
			continue
		}
		runs++
		sub := inv.Subtree
		at := fmt.Sprintf("%s (span %s)", inv.Name, inv.Span.ID)
		duration := fmt.Sprintf("%gms", round(sub.DurationMs))
		if sub.DurationUnknown > 0 {
			duration = "unknown (" + unknownDuration(sub) + ")"
		}
		if len(actual) < maxListed {
			actual = append(actual, fmt.Sprintf("tokens %d, duration %s, tool calls %d", sub.TotalTokens, duration, sub.ToolCalls)+costActual(s, sub))
			r.Spans = append(r.Spans, inv.Span.ID.String())
		}
		if s.MaxTokens != nil && sub.TotalTokens > *s.MaxTokens {
			problems = append(problems, fmt.Sprintf("%s used %d tokens, over maxTokens %d", at, sub.TotalTokens, *s.MaxTokens))
		}
		if s.MaxDurationMs != nil {
			// With spans of unknown duration, DurationMs covers the others: a lower bound.
			// Over the limit it is a failure all the same; under it, the budget cannot be
			// decided.
			switch {
			case sub.DurationMs > *s.MaxDurationMs && sub.DurationUnknown > 0:
				problems = append(problems, fmt.Sprintf("%s took at least %gms, over maxDurationMs %g (%s)", at, round(sub.DurationMs), *s.MaxDurationMs, unknownDuration(sub)))
			case sub.DurationMs > *s.MaxDurationMs:
				problems = append(problems, fmt.Sprintf("%s took %gms, over maxDurationMs %g", at, round(sub.DurationMs), *s.MaxDurationMs))
			case sub.DurationUnknown > 0:
				unknown = append(unknown, fmt.Sprintf("%s: the duration is unknown because %s, so maxDurationMs %g cannot be checked", at, unknownDuration(sub), *s.MaxDurationMs))
			}
		}
		if s.MaxToolCalls != nil && sub.ToolCalls > *s.MaxToolCalls {
			problems = append(problems, fmt.Sprintf("%s made %d tool calls, over maxToolCalls %d", at, sub.ToolCalls, *s.MaxToolCalls))
		}
		problems, unknown = checkCost(s, at, sub, problems, unknown)
	}
	if runs == 0 {
		r.Outcome, r.Actual = Skipped, "agent did not run"
		r.Message = notRun(g, s.AgentName) + "; nothing to budget"
		return
	}
	r.Actual = listed(actual, runs, "; ", "runs")
	if len(problems) == 0 && len(unknown) > 0 {
		// Never a pass on a duration nobody knows; an error, like a grading that erred:
		// the trace's timestamps are broken, not the agent's budget.
		r.Outcome, r.Message = Error, listed(unknown, len(unknown), "; ", "runs")
		return
	}
	verdict(r, capList(append(problems, unknown...)), fmt.Sprintf("%s within budget: %s", s.AgentName, r.Actual))
	r.classify(cluster.BudgetBlowout)
}

// unknownDuration says why a rollup's duration is unknown, naming the first span.
func unknownDuration(sub agentgraph.Rollup) string {
	sp := sub.DurationUnknownSpan
	why := fmt.Sprintf("span %s ends before it starts", sp.ID)
	if sp.End() == 0 {
		why = fmt.Sprintf("span %s has no end time", sp.ID)
	}
	if sub.DurationUnknown > 1 {
		why += fmt.Sprintf(" (and %d more spans of unknown duration)", sub.DurationUnknown-1)
	}
	return why
}

// maxListed caps the items a verdict's message, expected or actual lists: a trace of any
// size gives a message of bounded size.
const maxListed = 10

// listed joins the first items (at most maxListed of total) and says how many more
// there were.
func listed(items []string, total int, sep, what string) string {
	if len(items) > maxListed {
		items = items[:maxListed]
	}
	out := strings.Join(items, sep)
	if more := total - len(items); more > 0 {
		out += fmt.Sprintf("%s… and %d more %s", sep, more, what)
	}
	return out
}

// capList keeps the first maxListed problems and counts the rest in a last one.
func capList(problems []string) []string {
	if len(problems) <= maxListed {
		return problems
	}
	return append(problems[:maxListed:maxListed], fmt.Sprintf("… and %d more", len(problems)-maxListed))
}

func rubricName(s StepConfig) string {
	switch {
	case s.RubricType != "":
		return s.RubricType
	case s.JudgeRubricID != "":
		return s.JudgeRubricID
	}
	return "inline"
}

func verdict(r *Result, problems []string, ok string) {
	if len(problems) > 0 {
		r.Outcome, r.Message = Fail, strings.Join(problems, "; ")
		return
	}
	r.Outcome, r.Message = Pass, ok
}

// allowedCycle reports whether a cycle (its sorted agent names) is one of the allowed ones,
// compared as sets.
func allowedCycle(cycle []string, allowed [][]string) bool {
	for _, a := range allowed {
		set := append([]string(nil), a...)
		sort.Strings(set)
		if strings.Join(set, "\x00") == strings.Join(cycle, "\x00") {
			return true
		}
	}
	return false
}

// longestChain names the agents along the deepest delegation chain: the first and last
// few when it is long. Every invocation has at most one incoming edge, so the chains from
// the roots form trees: heights bottom-up, then one walk down the tallest branch.
func longestChain(g *agentgraph.Graph) string {
	height := make(map[*agentgraph.Invocation]int, len(g.Invocations))
	next := make(map[*agentgraph.Invocation]*agentgraph.Invocation, len(g.Invocations))
	// Preorder from the roots (iterative: chains can be deep), then heights in reverse.
	var order, stack []*agentgraph.Invocation
	seen := make(map[*agentgraph.Invocation]bool, len(g.Invocations))
	for _, inv := range g.Invocations {
		if inv.In != nil {
			continue
		}
		stack = append(stack[:0], inv)
		seen[inv] = true
		for len(stack) > 0 {
			cur := stack[len(stack)-1]
			stack = stack[:len(stack)-1]
			order = append(order, cur)
			for i := len(cur.Out) - 1; i >= 0; i-- {
				if to := cur.Out[i].To; !seen[to] {
					seen[to] = true
					stack = append(stack, to)
				}
			}
		}
	}
	for i := len(order) - 1; i >= 0; i-- {
		cur := order[i]
		for _, e := range cur.Out {
			// The first child of greatest height, as a walk in edge order finds it.
			if h := height[e.To] + 1; next[cur] == nil || h > height[cur] {
				height[cur], next[cur] = h, e.To
			}
		}
	}
	var best *agentgraph.Invocation
	for _, inv := range g.Invocations {
		if inv.In == nil && (best == nil || height[inv] > height[best]) {
			best = inv
		}
	}
	var names []string
	n := 0
	for cur := best; cur != nil; cur = next[cur] {
		if n < chainHead || n > height[best]-chainTail {
			names = append(names, cur.Name)
		} else if n == chainHead {
			names = append(names, fmt.Sprintf("… %d more …", height[best]+1-chainHead-chainTail))
		}
		n++
	}
	return strings.Join(names, " -> ")
}

// chainHead and chainTail are how many agents of a long chain a message names at each end.
const chainHead, chainTail = 5, 3

func formatCounts(m map[string]int) string {
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	parts := make([]string, 0, len(keys))
	for _, k := range keys {
		parts = append(parts, fmt.Sprintf("%s x%d", k, m[k]))
	}
	return strings.Join(parts, ", ")
}

func round(ms float64) float64 { return math.Round(ms*100) / 100 }
