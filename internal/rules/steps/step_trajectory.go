package steps

import (
	"context"
	"errors"
	"fmt"
	"strings"

	"github.com/otelcol-handoff/otelcol-handoff/internal/agentgraph"
	"github.com/otelcol-handoff/otelcol-handoff/internal/celexpr"
	"github.com/otelcol-handoff/otelcol-handoff/internal/cluster"
	"github.com/otelcol-handoff/otelcol-handoff/internal/rules/check"
	"github.com/otelcol-handoff/otelcol-handoff/internal/textsafe"
	"github.com/otelcol-handoff/otelcol-handoff/internal/trajectory"
)

// EXPECT_TRAJECTORY: the order of what an agent did, matched against a reference
// (internal/trajectory holds the matching; the model reads the sequence from the trace).

// TrajectoryStep is EXPECT_TRAJECTORY: the tool calls (of: tools) or handoffs (of: agents)
// of agentName's runs, of each receiver's run of the fromAgent/toAgent handoffs, or of the
// whole trace, matched against Reference in Mode; scope subtree takes in what the agents
// they delegated to did.
type TrajectoryStep struct {
	AgentName string `seed:"agentName"`
	FromAgent string `seed:"fromAgent"`
	ToAgent   string `seed:"toAgent"`
	Of        string `seed:"of"`
	Scope     string `seed:"scope"`
	Mode      string `seed:"mode"`
	// Reference is the steps as written: names, {tool|agent: name, params, optional} maps
	// and {parallel: [...]} groups of those.
	Reference []any `seed:"reference"`
}

// Action is EXPECT_TRAJECTORY.
func (*TrajectoryStep) Action() string { return check.ActionTrajectory }

func (*TrajectoryStep) ReadsDAG() {}

// of is what the trajectory is of (tools unless set).
func (s *TrajectoryStep) of() string {
	if s.Of == "" {
		return TrajectoryOfTools
	}
	return s.Of
}

// What a trajectory is of, and how far it reaches.
const (
	TrajectoryOfTools  = "tools"
	TrajectoryOfAgents = "agents"
	ScopeAgent         = "agent"
	ScopeSubtree       = "subtree"
)

// maxReferenceSteps bounds a reference (the alignment costs steps × calls).
const maxReferenceSteps = 256

// compiledTrajectory is a compiled EXPECT_TRAJECTORY step.
type compiledTrajectory struct {
	cfg     *TrajectoryStep
	of      string
	subtree bool
	mode    trajectory.Mode
	ref     trajectory.Reference
	// params are the steps' params predicates, in Reference.Steps order (nil: none).
	params []*celexpr.Expr
}

// parsedReference is a reference as written: its steps and their params texts.
type parsedReference struct {
	ref    trajectory.Reference
	params []string // per step, "" for none
	paths  []string // per step, where it is written below the step (reference[2], reference[3].parallel[0])
}

// parseReference reads reference: a list of names, {tool|agent: name, params, optional}
// maps and {parallel: [...]} groups of those. Errors start with the step's key.
func parseReference(raw []any, of string) (parsedReference, []error) {
	p := &refParser{of: of, key: "tool"}
	if of == TrajectoryOfAgents {
		p.key = "agent"
	}
	for i, item := range raw {
		where := fmt.Sprintf("reference[%d]", i)
		if m, isMap := item.(map[string]any); isMap {
			if group, has := m["parallel"]; has {
				p.parallel(where, m, group)
				continue
			}
		}
		if s, params, ok := p.step(where, item); ok {
			p.out.ref = append(p.out.ref, trajectory.Single(s))
			p.add(params, where)
		}
	}
	if len(raw) == 0 {
		p.bad("reference: must list at least one step")
	} else if n := len(p.out.params); n > maxReferenceSteps {
		p.bad("reference: %d steps, at most %d", n, maxReferenceSteps)
	}
	return p.out, p.errs
}

// refParser reads one reference: what its steps are of, the key that names a step (tool or
// agent), what it read and what it refused.
type refParser struct {
	of, key string
	out     parsedReference
	errs    []error
}

func (p *refParser) bad(format string, args ...any) {
	p.errs = append(p.errs, fmt.Errorf(format, args...))
}

// add records the params text and the path of the step just read.
func (p *refParser) add(params, path string) {
	p.out.params = append(p.out.params, params)
	p.out.paths = append(p.out.paths, path)
}

// parallel reads a {parallel: [...]} group: steps issued in one LLM response.
func (p *refParser) parallel(where string, m map[string]any, group any) {
	list, isList := group.([]any)
	if len(m) > 1 || !isList || len(list) == 0 {
		p.bad("%s.parallel: must be the only key, with a non-empty list of steps", where)
		return
	}
	e := trajectory.Element{Parallel: true}
	for j, v := range list {
		if gm, nested := v.(map[string]any); nested && gm["parallel"] != nil {
			p.bad("%s.parallel[%d]: parallel groups do not nest", where, j)
			continue
		}
		path := fmt.Sprintf("%s.parallel[%d]", where, j)
		if s, params, ok := p.step(path, v); ok {
			e.Steps = append(e.Steps, s)
			p.add(params, path)
		}
	}
	p.out.ref = append(p.out.ref, e)
}

// step reads one step: a name, or a map with the step's name, params and optional.
func (p *refParser) step(where string, v any) (trajectory.Step, string, bool) {
	switch x := v.(type) {
	case string:
		if strings.TrimSpace(x) == "" {
			p.bad("%s: a step name must not be empty", where)
			return trajectory.Step{}, "", false
		}
		return trajectory.Step{Name: x}, "", true
	case map[string]any:
		return p.mapStep(where, x)
	}
	p.bad("%s: must be a name or a map with %s", where, p.key)
	return trajectory.Step{}, "", false
}

// mapStep reads a step written as {tool|agent: name, params: CEL, optional: bool}.
func (p *refParser) mapStep(where string, x map[string]any) (trajectory.Step, string, bool) {
	var s trajectory.Step
	var params string
	ok := true
	for k, val := range x {
		switch k {
		case p.key:
			name, isStr := val.(string)
			if !isStr || strings.TrimSpace(name) == "" {
				p.bad("%s.%s: must be a non-empty name", where, k)
				ok = false
			}
			s.Name = name
		case "params":
			text, isStr := val.(string)
			switch {
			case p.of == TrajectoryOfAgents:
				p.bad("%s.params: applies to of: tools (a handoff step is an agent name)", where)
				ok = false
			case !isStr || strings.TrimSpace(text) == "":
				p.bad("%s.params: must be a CEL expression over params.*", where)
				ok = false
			}
			params = text
		case "optional":
			b, isBool := val.(bool)
			if !isBool {
				p.bad("%s.optional: must be true or false", where)
				ok = false
			}
			s.Optional = b
		default:
			p.bad("%s.%s: unknown key (a step of of: %s has %s, params, optional)", where, k, p.of, p.key)
			ok = false
		}
	}
	if _, named := x[p.key]; !named && ok {
		p.bad("%s.%s: must name the step's %s", where, p.key, map[bool]string{true: "agent", false: "tool"}[p.of == TrajectoryOfAgents])
		ok = false
	}
	if !ok {
		return trajectory.Step{}, "", false
	}
	s.Where = params
	return s, params, true
}

// ValidateKeys checks of, mode, scope, whose trajectory it is and the reference (its params
// expressions compile in compile).
func (s *TrajectoryStep) ValidateKeys() error {
	var errs check.Errors
	switch s.Of {
	case "", TrajectoryOfTools, TrajectoryOfAgents:
	default:
		errs.Add("of", "must be %s or %s, got %q", TrajectoryOfTools, TrajectoryOfAgents, s.Of)
	}
	if s.Mode == "" {
		errs.Add("mode", "must be set (exact, in_order, any_order, subset, superset; or agentevals' strict, unordered, or ADK's EXACT, IN_ORDER, ANY_ORDER)")
	} else if _, err := trajectory.ParseMode(s.Mode); err != nil {
		errs.Add("mode", "%v", err)
	}
	switch s.Scope {
	case "", ScopeAgent, ScopeSubtree:
		if s.Scope != "" && s.AgentName == "" && s.FromAgent == "" && s.ToAgent == "" {
			errs.Add("scope", "applies to the runs of agentName or a handoff's receiver (fromAgent/toAgent); without them the trajectory is the whole trace's")
		}
	default:
		errs.Add("scope", "must be %s or %s, got %q", ScopeAgent, ScopeSubtree, s.Scope)
	}
	if s.AgentName != "" && (s.FromAgent != "" || s.ToAgent != "") {
		field := "fromAgent"
		if s.FromAgent == "" {
			field = "toAgent"
		}
		errs.Add(field, "set either agentName (that agent's runs) or fromAgent/toAgent (the receiver's run of a handoff), not both")
	}
	_, refErrs := parseReference(s.Reference, s.of())
	return errors.Join(append(errs, refErrs...)...)
}

// Compile parses the reference and compiles its params predicates (validated before).
func (s *TrajectoryStep) Compile(env check.Env) (check.Compiled, error) {
	mode, _ := trajectory.ParseMode(s.Mode)
	parsed, _ := parseReference(s.Reference, s.of())
	ts := &compiledTrajectory{cfg: s, of: s.of(), subtree: s.Scope == ScopeSubtree, mode: mode, ref: parsed.ref, params: make([]*celexpr.Expr, len(parsed.params))}
	var errs []error
	for k, p := range parsed.params {
		if p == "" {
			continue
		}
		var err error
		ts.params[k], err = celexpr.Compile(env.Exprs.Trajectory, p, env.CostLimit, 0)
		if err != nil {
			errs = append(errs, fmt.Errorf("%s.params: %w", parsed.paths[k], err))
		}
	}
	return ts, errors.Join(errs...)
}

func (ts *compiledTrajectory) Results(id string) []check.Ref {
	return []check.Ref{{ID: id, Action: check.ActionTrajectory}}
}

// names lists the agents the step names and the tools (of: tools) or agents (of: agents)
// its reference holds, each under its key below the step (reference[1],
// reference[2].parallel[0]); a reference that does not parse names none (validation
// reports it).
func (s *TrajectoryStep) Names() []check.StepName {
	out := check.AgentNames("agentName", s.AgentName, "fromAgent", s.FromAgent, "toAgent", s.ToAgent)
	parsed, errs := parseReference(s.Reference, s.of())
	if len(errs) > 0 {
		return out
	}
	for k, st := range parsed.ref.Steps() {
		out = append(out, check.StepName{Key: parsed.paths[k], Tool: s.of() == TrajectoryOfTools, Name: st.Name})
	}
	return out
}

// maxTrajectoryListed caps the steps an actual lists.
const maxTrajectoryListed = 30

// trajectoryRun is one trajectory to match: whose it is, and its steps.
type trajectoryRun struct {
	who   string
	span  string // the run's span id, when the trajectory is one run's
	steps []agentgraph.TrajectoryStep
}

// Evaluate matches the step on the DAG of the case's topology step. Result.Score is the F1
// of the alignment's precision and recall (both in Actual).
func (ts *compiledTrajectory) Evaluate(run *check.Run, id string) {
	r := run.NewResult(id, check.ActionTrajectory)
	ts.match(&r, run.DAG, run.Trace)
	run.Out.Add(r)
}

func (ts *compiledTrajectory) match(r *check.Result, g *agentgraph.Graph, tc *check.Trace) {
	runs, who, skip := ts.runs(g)
	r.Expected = ts.expected(who)
	if skip != "" {
		r.Outcome, r.Actual, r.Message = check.Skipped, "no trajectory", skip
		return
	}
	res := ts.decidingRun(tc, runs, g.TestContext())
	if tc.Ctx.Err() != nil && res.evalErrors > 0 {
		// The params expressions were cut off by eval_timeout: nothing was decided.
		r.Outcome, r.Actual = check.Error, "not evaluated"
		r.Message = context.Cause(tc.Ctx).Error() + ": trajectory not decided: " + res.firstErr
		return
	}
	score := res.Score
	r.Score = &score
	r.Actual = fmt.Sprintf("%s (precision %.2f, recall %.2f)", listSteps(res.run.steps), res.Precision, res.Recall)
	r.Spans = res.spans()
	r.Outcome = check.Pass
	if !res.Pass {
		r.Outcome = check.Fail
		if ts.of == TrajectoryOfAgents {
			r.Classify(cluster.WrongDispatch) // the work went to other agents, or in another order
		}
	}
	r.Message = ts.message(res)
}

// expected words the step: what trajectory of whom, in which mode, against which reference.
func (ts *compiledTrajectory) expected(who string) string {
	mode := string(ts.mode)
	if ts.cfg.Mode != mode {
		mode = fmt.Sprintf("%s (%s)", ts.cfg.Mode, ts.mode)
	}
	return fmt.Sprintf("%s of %s, %s: %s", ts.of, who, mode, ts.ref)
}

// decidingRun matches every run: with several receiving runs, the first that fails decides,
// else the lowest score.
func (ts *compiledTrajectory) decidingRun(tc *check.Trace, runs []trajectoryRun, ctxVars map[string]any) trajectoryResult {
	var pick *trajectoryResult
	for k, run := range runs {
		res := ts.matchRun(tc, run.steps, ctxVars)
		res.run, res.of, res.total = run, k+1, len(runs)
		if pick == nil || (pick.Pass && !res.Pass) || (pick.Pass && res.Pass && res.Score < pick.Score) {
			pick = &res
		}
	}
	return *pick
}

// spans are the result's spans: the run's steps (bounded), else the run itself when it did
// nothing.
func (res trajectoryResult) spans() []string {
	var spans []string
	for _, st := range res.run.steps {
		if len(spans) == check.MaxListed {
			break
		}
		spans = append(spans, stepSpan(st))
	}
	if len(spans) == 0 && res.run.span != "" {
		spans = append(spans, res.run.span) // nothing done: the run itself
	}
	return spans
}

// message words a decided match: whose trajectory, match or divergence, the scores, and
// the params expressions that failed.
func (ts *compiledTrajectory) message(res trajectoryResult) string {
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
		return fmt.Sprintf("%s match the reference (%s): precision %.2f, recall %.2f%s", whose, ts.mode, res.Precision, res.Recall, note)
	}
	return fmt.Sprintf("%s diverge from the reference (%s): %s; precision %.2f, recall %.2f%s",
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

// matchRun aligns one run's steps with the reference, the params predicates evaluated on
// the calls' parsed arguments (with context.*).
func (ts *compiledTrajectory) matchRun(tc *check.Trace, steps []agentgraph.TrajectoryStep, ctxVars map[string]any) trajectoryResult {
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
		val, _, err := expr.Eval(tc.Ctx, map[string]any{"params": params, "context": ctxVars})
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

// runs selects the trajectories the step matches: agentName's runs as one logical agent;
// each receiving run of the fromAgent/toAgent handoffs; else the whole trace.
func (ts *compiledTrajectory) runs(g *agentgraph.Graph) (runs []trajectoryRun, who, skip string) {
	s := ts.cfg
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
			return nil, who, check.NotRun(g, s.AgentName) + "; no trajectory to match"
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
			return nil, who, check.WithNotRun(g, fmt.Sprintf("no handoff %s -> %s in the trace; no trajectory to match", from, to), s.FromAgent, s.ToAgent)
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
