package rules

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"time"

	"github.com/otelcol-handoff/otelcol-handoff/internal/agentgraph"
	"github.com/otelcol-handoff/otelcol-handoff/internal/celexpr"
	"github.com/otelcol-handoff/otelcol-handoff/internal/gate"
	"github.com/otelcol-handoff/otelcol-handoff/internal/judge"
	"github.com/otelcol-handoff/otelcol-handoff/internal/rules/check"
	"github.com/otelcol-handoff/otelcol-handoff/internal/rules/expect"
)

// DefaultCostLimit bounds one CEL evaluation (cel-go cost units).
const DefaultCostLimit = celexpr.DefaultCostLimit

// MaxCostLimit is the highest eval_cost_limit accepted.
const MaxCostLimit = celexpr.MaxCostLimit

// Evaluator holds compiled cases. It is safe for concurrent use.
type Evaluator struct {
	cases []*compiledCase
	check.Judging
	// evalTimeout bounds the deterministic evaluation of one trace (0: no bound);
	// timeoutCause is the error of a trace that overran it.
	evalTimeout  time.Duration
	timeoutCause error
	// results is how many results the live cases give a trace that every one selects:
	// a trace's results are collected in one allocation of that size.
	results int
}

type compiledCase struct {
	ev   *Evaluator
	cfg  CaseConfig
	when *celexpr.Expr // nil: every trace with at least one agent
	// steps are the seed-000 steps, compiled, in order.
	steps []caseStep
	// expect holds the seed-001 assertions on the root agent (defaults applied).
	expect *expect.CompiledFields
}

// caseStep is one step of a case: its id and its compiled kind.
type caseStep struct {
	id string
	check.Compiled
}

// stepIDs lists the case's step ids in evaluation order: seed-000 steps, then seed-001
// assertions.
func (c *compiledCase) stepIDs() []string {
	var ids []string
	for _, st := range c.steps {
		for _, ref := range st.Results(st.id) {
			ids = append(ids, ref.ID)
		}
	}
	for _, ref := range c.expect.Refs("") {
		ids = append(ids, ref.ID)
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
	Judge judge.Grader
	// Rubrics are named rubric texts (judgeRubricId); one named after an axis or
	// GROUNDEDNESS replaces the built-in text.
	Rubrics map[string]string
	// Gates marks the rubric results a gate decides (Result.Gated).
	Gates *gate.Set
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
	envs, err := check.LoadExprs()
	if err != nil {
		return nil, err
	}
	env := check.Env{Exprs: envs, CostLimit: costLimit}
	defaults, errs := expect.CompileFields(env, "defaults", opts.Defaults.AgentExpectations)
	ev := &Evaluator{Judging: check.Judging{Grader: opts.Judge, Rubrics: opts.Rubrics, Gates: opts.Gates}, evalTimeout: opts.EvalTimeout}
	if ev.evalTimeout > 0 {
		ev.timeoutCause = fmt.Errorf("evaluation exceeded eval_timeout (%s)", ev.evalTimeout)
	}
	for i, c := range cases {
		cc := &compiledCase{ev: ev, cfg: c}
		at := fmt.Sprintf("cases[%d] (%s)", i, c.Name)
		for j, s := range c.Steps {
			cs, err := s.Kind.Compile(env)
			errs = append(errs, check.Prefixed(fmt.Sprintf("%s.steps[%d]", at, j), err)...)
			cc.steps = append(cc.steps, caseStep{id: s.ID(j), Compiled: cs})
		}
		if strings.TrimSpace(c.When) != "" {
			prg, err := celexpr.Compile(envs.When, c.When, costLimit, 0)
			if err != nil {
				errs = append(errs, fmt.Errorf("%s.when: %w", at, err))
			}
			cc.when = prg
		}
		own, ownErrs := expect.CompileFields(env, at, c.AgentExpectations)
		errs = append(errs, ownErrs...)
		own.Inherit(defaults)
		cc.expect = own
		ev.cases = append(ev.cases, cc)
	}
	if err := errors.Join(errs...); err != nil {
		return nil, err
	}
	for _, c := range ev.cases {
		if c.cfg.SpansFile() == "" {
			ev.results += len(c.stepIDs())
		}
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
	return e.evaluateContext(context.Background(), g, complete)
}

// evaluateContext is Evaluate with a context for the judge's calls: the deterministic
// parts of every case run first, then the trace's gradings (in parallel, bounded by the
// judge's concurrency and its per-trace timeout), waited for.
func (e *Evaluator) evaluateContext(ctx context.Context, g *agentgraph.Graph, complete bool) []Result {
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
	return e.evaluateDeferred(ctx, g, complete, false, nil)
}

// EvaluateOutcomesTo is EvaluateDeferred for a caller that reads only each result's case,
// step, outcome and cluster (the exporter when its metrics are its only output): the same
// outcomes and clusters, without the texts that say why (Actual, Message, Spans and the
// signature stay empty where a check kind can leave them so; see check.Trace.Quiet).
//
// It collects the results in buf's storage (from its start) when it holds them all, else in
// new storage, so a caller done with a trace's results before the next can reuse it (nil:
// new storage).
func (e *Evaluator) EvaluateOutcomesTo(ctx context.Context, g *agentgraph.Graph, complete bool, buf []Result) Evaluation {
	return e.evaluateDeferred(ctx, g, complete, true, buf)
}

func (e *Evaluator) evaluateDeferred(ctx context.Context, g *agentgraph.Graph, complete, quiet bool, buf []Result) Evaluation {
	tc, cancel := e.newTraceCache(ctx, g)
	defer cancel()
	tc.Quiet = quiet
	if cap(buf) < e.results {
		buf = make([]check.Result, 0, e.results)
	}
	out := &tc.out
	out.Results = buf[:0]
	for _, c := range e.cases {
		if c.cfg.SpansFile() == "" {
			c.evaluate(tc, complete, out)
		}
	}
	return e.split(tc, out)
}

// newTraceCache starts one trace's evaluation, bounded by eval_timeout. The bound does not
// follow ctx's cancellation: a client going away does not turn verdicts into errors.
func (e *Evaluator) newTraceCache(ctx context.Context, g *agentgraph.Graph) (*traceCache, context.CancelFunc) {
	ectx, cancel := context.WithoutCancel(ctx), context.CancelFunc(func() {})
	if e.evalTimeout > 0 {
		ectx, cancel = context.WithTimeoutCause(ectx, e.evalTimeout, e.timeoutCause)
	}
	// The cache (its results too), its Trace and the trace's judge batch in one allocation.
	st := &struct {
		tc    traceCache
		trace check.Trace
		batch judge.Batch
	}{}
	st.trace = check.Trace{G: g, Batch: &st.batch, Ctx: ectx}
	st.tc = traceCache{Trace: &st.trace, traceID: g.TraceID.String()}
	return &st.tc, cancel
}

// split separates the results decided now from those a grading decides.
func (e *Evaluator) split(tc *traceCache, out *check.Out) Evaluation {
	ev := Evaluation{TimedOut: tc.Ctx.Err() != nil}
	check.StampClusters(out.Results, tc.Quiet)
	if !tc.Quiet {
		check.NameQuotedSpans(out.Results, tc.G)
	}
	if len(out.Pending) == 0 {
		ev.Now = out.Results
		return ev
	}
	gr := &Grading{ev: e, jr: tc.Batch, all: out.Results, pending: out.Pending, filled: out.Filled}
	k := 0
	for i, r := range out.Results {
		if k < len(out.Pending) && out.Pending[k] == i {
			gr.before = append(gr.before, r)
			k++
			continue
		}
		ev.Now = append(ev.Now, r)
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
			out := &check.Out{}
			c.evaluate(tc, true, out)
			return e.wait(ctx, e.split(tc, out))
		}
	}
	return nil
}

// traceCache holds what several cases derive from one trace: the steps' Trace, and what the
// case conditions and the test-case fields read.
type traceCache struct {
	*check.Trace
	vars map[string]any
	te   *expect.TraceEval
	// traceID is the trace id as every result carries it.
	traceID string
	// out collects the trace's results (evaluateDeferred).
	out check.Out
	// run is the case whose steps run now (evaluateSteps: one case at a time; no step
	// keeps it).
	run check.Run
}

// evaluate runs the case on the trace if its condition selects it, into out.
func (c *compiledCase) evaluate(tc *traceCache, complete bool, out *check.Out) {
	g := tc.G
	base := Result{TraceID: tc.traceID, Case: c.cfg.Name, Complete: complete}
	if tc.Ctx.Err() != nil {
		out.Add(c.notReached(base, tc.Ctx, 0, true)...)
		return
	}
	if selected, r := c.selects(tc, base); !selected {
		if r != nil {
			out.Add(*r)
		}
		return
	}
	c.evaluateSteps(base, tc, out)
	if !c.expect.Empty() {
		if tc.te == nil {
			tc.te = expect.NewTraceEval(g)
			tc.te.Deadline, tc.te.Quiet = tc.Ctx, tc.Quiet
		}
		c.evaluateTestCase(base, tc.te, out)
	}
}

// selects evaluates the case's condition on the trace: without one, every trace with an
// agent; r is the error result of a condition that failed to evaluate.
func (c *compiledCase) selects(tc *traceCache, base Result) (bool, *Result) {
	if c.when == nil {
		return len(tc.G.Invocations) > 0, nil
	}
	if tc.vars == nil {
		tc.vars = traceVars(tc.G)
	}
	val, _, err := c.when.Eval(tc.Ctx, tc.vars)
	if err != nil {
		r := c.whenError(base)
		r.Message = "case condition failed to evaluate: " + err.Error()
		if tc.Ctx.Err() != nil {
			r.Message = context.Cause(tc.Ctx).Error() + ": case condition not decided: " + err.Error()
		}
		return false, &r
	}
	selected, ok := val.Value().(bool)
	if !ok {
		// A dyn value (resource["k"]) type-checks as a condition but need not be a bool:
		// an error, as a missing key is, never a silent deselection.
		r := c.whenError(base)
		r.Message = fmt.Sprintf("case condition failed to evaluate: it gave a %s, not a bool", val.Type().TypeName())
		return false, &r
	}
	return selected, nil
}

// whenError is the error result of a case condition that could not decide.
func (c *compiledCase) whenError(base Result) Result {
	r := base
	r.Step, r.Action, r.Outcome = "when", "when", Error
	r.Expected, r.Actual = c.cfg.When, "evaluation error"
	return r
}

// evaluateTestCase runs the seed-001 assertions on the trace's root agent, as one logical
// agent over all its runs (rootAgent: a supervisor resumed as new runs). A panic (a bug, or one in a library) becomes an error result per assertion: bad input never
// takes the collector down.
func (c *compiledCase) evaluateTestCase(base Result, te *expect.TraceEval, out *check.Out) {
	n := len(out.Results)
	defer func() {
		if p := recover(); p != nil {
			out.Truncate(n)
			for _, ref := range c.expect.Refs("") {
				r := base
				r.Step, r.Action, r.Outcome = ref.ID, ref.Action, Error
				r.Expected, r.Actual = ref.Expected, "evaluation error"
				r.Message = fmt.Sprintf("internal error while evaluating the test case: %v", p)
				out.Add(r)
			}
		}
	}()
	if te.G.Root == nil {
		for _, ref := range c.expect.Refs("") {
			r := base
			r.Step, r.Action, r.Outcome = ref.ID, ref.Action, Skipped
			r.Actual = "no agent"
			r.Message = expect.ErrNoRoot.Error() + ": the test-case assertions apply to the root agent"
			out.Add(r)
		}
		return
	}
	out.Results = te.EvaluateTo(out.Results, base, te.RootAgent(), c.expect, "")
}

func (c *compiledCase) evaluateSteps(base Result, tc *traceCache, out *check.Out) {
	run := &tc.run
	*run = check.Run{Base: base, Trace: tc.Trace, Judging: &c.ev.Judging, Out: out}
	for i, st := range c.steps {
		if tc.Ctx.Err() != nil {
			out.Add(c.notReached(base, tc.Ctx, i, false)...)
			return
		}
		st.Evaluate(run, st.id)
	}
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
	for _, st := range c.steps[from:] {
		for _, ref := range st.Results(st.id) {
			mk(ref.ID, ref.Action, ref.Expected)
		}
	}
	if withTestCase {
		for _, ref := range c.expect.Refs("") {
			mk(ref.ID, ref.Action, ref.Expected)
		}
	}
	return out
}

// Scores are the rubric scores among results, for the gates: the scored handoff rubric
// results (a sender, an axis and a score).
func Scores(results []Result) []gate.Score {
	var out []gate.Score
	for _, r := range results {
		if r.Axis != "" && r.Score != nil && r.From != "" {
			out = append(out, gate.Score{From: r.From, To: r.To, Axis: r.Axis, Score: *r.Score})
		}
	}
	return out
}
