package expect

import (
	"fmt"
	"sort"
	"strings"

	"github.com/google/cel-go/cel"
	"go.opentelemetry.io/collector/confmap"

	"github.com/otelcol-handoff/otelcol-handoff/internal/agentgraph"
	"github.com/otelcol-handoff/otelcol-handoff/internal/celexpr"
	"github.com/otelcol-handoff/otelcol-handoff/internal/cluster"
	"github.com/otelcol-handoff/otelcol-handoff/internal/rules/check"
)

type compiledChild struct {
	name      string
	payload   *celexpr.Expr
	triggered *int
	CompiledFields
}

// steps of a child entry: its count, its payload, then its expectations on the receiver.
func (ch *compiledChild) steps(p string) []check.Ref {
	var out []check.Ref
	if ch.triggered != nil {
		out = append(out, check.Ref{ID: p + FieldExpectedTriggered, Action: FieldExpectedTriggered, Expected: fmt.Sprintf("%s triggered %d times", ch.name, *ch.triggered)})
	}
	if ch.payload != nil {
		out = append(out, check.Ref{ID: p + FieldExpectedPayload, Action: FieldExpectedPayload, Expected: ch.payload.Src})
	}
	return append(out, ch.CompiledFields.Refs(p)...)
}

func childPrefix(prefix, name string) string {
	return prefix + FieldExpectedChildAgents + "." + name + "."
}

// trigger is one time a parent triggered (handed off to, or called) a child agent.
type trigger struct {
	edge     *agentgraph.Edge       // nil when the receiver's run is not in this trace
	call     *agentgraph.ToolCall   // the delegating tool call, when there is one
	receiver *agentgraph.Invocation // nil when not in this trace
	args     agentgraph.Value       // the arguments recorded at call time
	// fireAndForget: the parent did not wait for the child (why says how we know), or the
	// child's run is not in this trace (receiver nil).
	fireAndForget bool
	why           string
	spanID        string
	start         uint64
}

// handoffDetections pass control from sender to receiver (an explicit handoff span, a
// transfer call, a graph's parent pointer, or consecutive sibling runs): the receiver runs
// after the sender by design, and its run is in the trace.
var handoffDetections = map[string]bool{
	agentgraph.DetectHandoffSpan: true, agentgraph.DetectTransferTool: true,
	agentgraph.DetectParentPointer: true, agentgraph.DetectInferredSibling: true,
	agentgraph.DetectCommandGoto: true,
}

// triggersOf lists the triggers of the agent called name by inv, in start order: every
// outgoing edge to it, plus trigger and transfer calls to it whose receiver did not run in
// this trace (their payload and count are still observable).
func (te *TraceEval) triggersOf(inv *agentgraph.Invocation, name string) []*trigger {
	var out []*trigger
	via := map[*agentgraph.Span]bool{}
	// Trigger and transfer calls are delegation calls in the model, not tool calls (with
	// count_delegation_calls_as_tool_calls they are in both lists: each is seen once).
	calls := append(append([]*agentgraph.ToolCall(nil), inv.DelegationCalls...), inv.ToolCalls...)
	for _, e := range inv.Out {
		if e.Via != nil {
			via[e.Via] = true
		}
		if e.Call != nil {
			via[e.Call.Span] = true // a transfer call recorded by a HANDOFF span carried e
		}
		if e.To.Name != name {
			continue
		}
		t := &trigger{edge: e, receiver: e.To, args: e.Payload, spanID: e.To.Span.ID.String(), start: uint64(e.To.Span.Start())}
		if tc := viaCall(e); tc != nil && tc.Span.Owner() == inv {
			t.call = tc // the sender's own call carried the trigger
			t.start = uint64(tc.Span.Start())
		}
		t.fireAndForget, t.why = fireAndForget(e, t.call)
		out = append(out, t)
	}
	for _, tc := range calls {
		if via[tc.Span] || tc.TriggerTarget() != name {
			continue
		}
		via[tc.Span] = true
		out = append(out, &trigger{
			call: tc, args: tc.Args, fireAndForget: true,
			why:    fmt.Sprintf("its run is not in this trace (%s call, span %s)", tc.Name, tc.Span.ID),
			spanID: tc.Span.ID.String(), start: uint64(tc.Span.Start()),
		})
	}
	sort.SliceStable(out, func(i, j int) bool { return out[i].start < out[j].start })
	return out
}

// triggersOfAgent lists the triggers of the agent called name by all runs of a, in start
// order; a trigger of one of a's own runs (the same logical agent resumed) is none.
func (te *TraceEval) triggersOfAgent(a *logicalAgent, name string) []*trigger {
	if len(a.runs) == 1 {
		return te.triggersOf(a.runs[0], name)
	}
	var out []*trigger
	for _, inv := range a.runs {
		for _, t := range te.triggersOf(inv, name) {
			if t.receiver == nil || !a.isRun(t.receiver) {
				out = append(out, t)
			}
		}
	}
	sort.SliceStable(out, func(i, j int) bool { return out[i].start < out[j].start })
	return out
}

// viaCall is the tool call that carried an edge's dispatch (nil: none, or the via span is
// not a tool call).
func viaCall(e *agentgraph.Edge) *agentgraph.ToolCall {
	if e.Via == nil {
		return nil
	}
	return e.Via.ToolCall()
}

// fireAndForget decides whether the sender waited for the receiver:
//  1. a seed trigger call says so: wait_for_response false (or trigger_agent_at, scheduled)
//     is fire-and-forget, wait_for_response true is awaited;
//  2. a handoff (explicit handoff span, transfer call other than a seed trigger, graph
//     parent pointer, inferred sibling) passes control to the receiver, whose run is then
//     observed in the trace: not fire-and-forget;
//  3. otherwise (sub-agent, agent-as-tool, trigger without the flag) the receiver's agent
//     span ending after the sender's agent span ended means nobody waited for it.
func fireAndForget(e *agentgraph.Edge, call *agentgraph.ToolCall) (bool, string) {
	if call != nil && call.IsTriggerAgentCall() {
		params, _ := call.ParsedArgs()
		if w, ok := params["wait_for_response"].(bool); ok {
			if !w {
				return true, fmt.Sprintf("%s with wait_for_response=false (span %s)", call.Name, call.Span.ID)
			}
			return false, "wait_for_response=true"
		}
		if call.Name == "trigger_agent_at" {
			return true, fmt.Sprintf("trigger_agent_at schedules the run (span %s)", call.Span.ID)
		}
	} else if handoffDetections[e.Detection] {
		return false, "handoff"
	}
	if e.From.Remote != nil || e.From.Span == nil || e.To.Span == nil {
		return false, "awaited"
	}
	if e.To.Span.End() > e.From.Span.End() {
		return true, fmt.Sprintf("the %s span %s ended after the %s span %s ended: not awaited", e.To.Name, e.To.Span.ID, e.From.Name, e.From.Span.ID)
	}
	return false, "awaited"
}

// evalChild evaluates one expected_child_agents entry under a. Its count is asserted on
// all triggers; the rest of the spec (payload, result, tools, nested children) must be
// satisfied by at least one trigger: the first trigger satisfying all of it is reported,
// else the one closest to it (most assertions passing, earliest on a tie).
func (te *TraceEval) evalChild(base check.Result, a *logicalAgent, ch *compiledChild, p string) []check.Result {
	triggers := te.triggersOfAgent(a, ch.name)
	var out []check.Result
	if ch.triggered != nil {
		out = append(out, te.triggeredCount(base, a, ch, p, triggers))
	}
	rest := ch.steps(p)
	if ch.triggered != nil {
		rest = rest[1:]
	}
	switch {
	case len(rest) == 0:
		return out
	case len(triggers) == 0:
		return append(out, te.notTriggered(base, a, ch, rest)...)
	}
	return append(out, te.bestTrigger(base, a, ch, p, triggers)...)
}

// triggeredCount is expected_triggered: the exact number of triggers.
func (te *TraceEval) triggeredCount(base check.Result, a *logicalAgent, ch *compiledChild, p string, triggers []*trigger) check.Result {
	r := fieldResult(base, p+FieldExpectedTriggered, FieldExpectedTriggered)
	r.Expected = fmt.Sprintf("%s triggered %d times", ch.name, *ch.triggered)
	ff := 0
	for _, t := range triggers {
		r.Spans = append(r.Spans, t.spanID)
		if t.fireAndForget {
			ff++
		}
	}
	if len(triggers) == 0 {
		r.Spans = a.spanIDs()
	}
	r.Actual = fmt.Sprintf("%d times", len(triggers))
	if ff > 0 {
		r.Actual += fmt.Sprintf(" (%d fire-and-forget)", ff)
	}
	if len(triggers) == *ch.triggered {
		r.Outcome = check.Pass
		r.Message = fmt.Sprintf("agent %s triggered %s %s", a.label(), ch.name, r.Actual)
	} else {
		r.Outcome, r.Cluster = check.Fail, cluster.WrongDispatch
		r.Message = fmt.Sprintf("expected agent %s to trigger %s %d times, saw %s", a.label(), ch.name, *ch.triggered, r.Actual)
	}
	if len(triggers) == 0 {
		r.Message = check.WithNotRun(te.G, r.Message, ch.name)
	}
	return r
}

// notTriggered decides the rest of a child spec when a never triggered the child: skipped
// when expected_triggered: 0 asks for just that, else failed.
func (te *TraceEval) notTriggered(base check.Result, a *logicalAgent, ch *compiledChild, rest []check.Ref) []check.Result {
	out := make([]check.Result, 0, len(rest))
	for _, ref := range rest {
		r := fieldResult(base, ref.ID, ref.Action)
		r.Expected, r.Actual = ref.Expected, "not triggered"
		r.Spans = a.spanIDs()
		if ch.triggered != nil && *ch.triggered == 0 {
			r.Outcome = check.Skipped
			r.Message = fmt.Sprintf("agent %s did not trigger %s (as expected_triggered: 0 requires); nothing to assert", a.label(), ch.name)
		} else {
			r.Outcome, r.Cluster = check.Fail, cluster.WrongDispatch
			r.Message = check.WithNotRun(te.G, fmt.Sprintf("agent %s never triggered %s (%s)", a.label(), ch.name, childSummary(a)), ch.name)
		}
		out = append(out, r)
	}
	return out
}

// bestTrigger evaluates the rest of a child spec on each trigger: the first that satisfies
// all of it, else the closest (most assertions passing, earliest on a tie), named in the
// messages when there are several.
func (te *TraceEval) bestTrigger(base check.Result, a *logicalAgent, ch *compiledChild, p string, triggers []*trigger) []check.Result {
	var best []check.Result
	bestScore, bestIndex := -1, 0
	for i, t := range triggers {
		rs := te.evalTrigger(base, t, ch, p)
		score, ok := 0, true
		for _, r := range rs {
			switch r.Outcome {
			case check.Pass, check.Skipped:
				score++
			default:
				ok = false
			}
		}
		if ok {
			best, bestIndex = rs, i
			break
		}
		if score > bestScore {
			best, bestScore, bestIndex = rs, score, i
		}
	}
	if len(triggers) == 1 {
		return best
	}
	t := triggers[bestIndex]
	for i := range best {
		if best[i].Outcome == check.Pass || best[i].Outcome == check.Skipped {
			best[i].Message = fmt.Sprintf("%s trigger %d of %d (span %s): %s", ch.name, bestIndex+1, len(triggers), t.spanID, best[i].Message)
		} else {
			best[i].Message = fmt.Sprintf("no trigger of %s by %s satisfies the whole spec; closest is trigger %d of %d (span %s): %s",
				ch.name, a.label(), bestIndex+1, len(triggers), t.spanID, best[i].Message)
		}
	}
	return best
}

// evalTrigger evaluates a child spec (without its count) on one trigger.
func (te *TraceEval) evalTrigger(base check.Result, t *trigger, ch *compiledChild, p string) []check.Result {
	var out []check.Result
	if ch.payload != nil {
		r := base
		r.Step, r.Action = p+FieldExpectedPayload, FieldExpectedPayload
		te.evalPayload(&r, t, ch)
		out = append(out, r)
	}
	if ch.CompiledFields.Empty() {
		return out
	}
	if t.fireAndForget {
		for _, ref := range ch.CompiledFields.Refs(p) {
			r := base
			r.Step, r.Action, r.Expected = ref.ID, ref.Action, ref.Expected
			r.Outcome, r.Actual = check.Fail, "fire-and-forget trigger"
			r.Spans = []string{t.spanID}
			if t.receiver == nil {
				r.Actual = "run not in this trace"
				r.Message = fmt.Sprintf("%s cannot be asserted on %s: %s; only expected_payload and expected_triggered apply to it",
					ref.Action, ch.name, t.why)
			} else {
				r.Message = fmt.Sprintf("%s cannot be asserted on %s: it was triggered fire-and-forget (%s), so its result, tool calls and "+
					"triggered agents are not awaited; wait for the response (wait_for_response=True) or assert only expected_payload and expected_triggered",
					ref.Action, ch.name, t.why)
			}
			out = append(out, r)
		}
		return out
	}
	return append(out, te.Evaluate(base, oneRun(t.receiver), &ch.CompiledFields, p)...)
}

func (te *TraceEval) evalPayload(r *check.Result, t *trigger, ch *compiledChild) {
	e := ch.payload
	value, raw, from, found := payloadOf(t)
	r.Expected = e.Src
	r.Spans = []string{t.spanID}
	vars := map[string]any{"context": te.contextOf(e)}
	var unknown []*cel.AttributePatternType
	if found {
		vars["payload"], vars["payload_raw"] = value, raw
		r.Actual = fmt.Sprintf("payload %s (from %s)", show(value), from)
	} else {
		unknown = append(unknown, cel.AttributePattern("payload"), cel.AttributePattern("payload_raw"))
		r.Actual = "payload not captured"
	}
	act, err := cel.PartialVars(vars, unknown...)
	if err != nil {
		setError(r, "expected_payload of %s: %v", ch.name, err)
		return
	}
	val, _, err := e.Eval(te.Deadline, act)
	if err != nil {
		setError(r, "expected_payload of %s could not be evaluated: %v%s", ch.name, err, te.contextHint(err, e))
		return
	}
	ok, isUnknown, err := celexpr.Bool(val)
	switch {
	case err != nil:
		setError(r, "expected_payload of %s: %v", ch.name, err)
	case isUnknown:
		tried := "no receiving span"
		if t.receiver != nil {
			tried = "none of " + strings.Join(t.receiver.Input.Tried, ", ")
		}
		r.Outcome = check.Fail
		r.Message = fmt.Sprintf("content capture disabled on the exporter: the payload of %s (span %s) was not captured: "+
			"the trigger recorded no arguments and the receiving span has %s", ch.name, t.spanID, tried)
	case ok:
		r.Outcome = check.Pass
		r.Message = fmt.Sprintf("%s payload: `%s` holds", ch.name, e.Src)
	default:
		r.Outcome, r.Cluster = check.Fail, cluster.DroppedConstraint
		r.Message = fmt.Sprintf("%s payload: expected `%s`, got %s", ch.name, e.Src, r.Actual)
	}
}

// childSummary names the agents an agent triggered, with counts.
func childSummary(a *logicalAgent) string {
	edges := a.out()
	if len(edges) == 0 {
		return "it triggered no agents"
	}
	counts := map[string]int{}
	for _, e := range edges {
		counts[e.To.Name]++
	}
	return "it triggered: " + check.FormatCounts(counts)
}

// ChildAgents is expected_child_agents: agent name → spec, recursively. It wraps the map so
// the spec can nest without making the config type recursive (the collector's config
// checks walk config types).
type ChildAgents struct {
	specs map[string]*ChildAgentSpec
}

// NewChildAgents returns the ChildAgents of specs.
func NewChildAgents(specs map[string]*ChildAgentSpec) ChildAgents { return ChildAgents{specs: specs} }

// Specs returns the specs by agent name.
func (c ChildAgents) Specs() map[string]*ChildAgentSpec { return c.specs }

// Len is the number of agents.
func (c ChildAgents) Len() int { return len(c.specs) }

// Unmarshal decodes the agent-name keyed map; each spec is decoded strictly.
func (c *ChildAgents) Unmarshal(conf *confmap.Conf) error {
	raw := conf.ToStringMap()
	c.specs = make(map[string]*ChildAgentSpec, len(raw))
	for _, name := range sortedKeys(raw) {
		switch v := raw[name].(type) {
		case nil:
			c.specs[name] = nil
		case map[string]any:
			spec := &ChildAgentSpec{}
			if err := confmap.NewFromStringMap(v).Unmarshal(spec); err != nil {
				return fmt.Errorf("%s.%s: %w", FieldExpectedChildAgents, name, err)
			}
			c.specs[name] = spec
		default:
			return fmt.Errorf("%s.%s: must be a map of assertions, got %T", FieldExpectedChildAgents, name, v)
		}
	}
	return nil
}

// ChildAgentSpec is one entry of expected_child_agents.
type ChildAgentSpec struct {
	// ExpectedPayload is an expression over payload, payload_raw and context.
	ExpectedPayload string `mapstructure:"expected_payload"`
	// ExpectedTriggered is the exact number of times the parent triggered this agent.
	ExpectedTriggered *int `mapstructure:"expected_triggered"`

	AgentExpectations `mapstructure:",squash"`
}

func (c ChildAgents) set() bool { return c.Len() > 0 }

// ValidateField checks each entry: a non-empty agent name, at least one assertion, a count that
// is not negative, and its own fields.
func (c ChildAgents) ValidateField() error {
	var errs []error
	for _, name := range sortedKeys(c.specs) {
		child := c.specs[name]
		where := FieldExpectedChildAgents + "." + name
		if strings.TrimSpace(name) == "" {
			errs = append(errs, fmt.Errorf("%s: the agent name must not be empty", FieldExpectedChildAgents))
			continue
		}
		if child == nil || (child.ExpectedPayload == "" && child.ExpectedTriggered == nil && child.Empty()) {
			errs = append(errs, fmt.Errorf("%s: set at least one of expected_payload, expected_triggered, expected_result, "+
				"expected_tool_calls, expected_tool_call_order, expected_no_tool_calls, expected_child_agents", where))
			continue
		}
		if child.ExpectedTriggered != nil && *child.ExpectedTriggered < 0 {
			errs = append(errs, fmt.Errorf("%s.%s: must not be negative, got %d", where, FieldExpectedTriggered, *child.ExpectedTriggered))
		}
		errs = append(errs, validateExpectations(where, child.AgentExpectations)...)
	}
	return joinErrs(errs)
}

func (c ChildAgents) compile(env check.Env) (expectation, error) {
	var errs []error
	var out childChecks
	for _, name := range sortedKeys(c.specs) {
		spec := c.specs[name]
		if spec == nil {
			continue
		}
		where := FieldExpectedChildAgents + "." + name
		ch := &compiledChild{name: name, triggered: spec.ExpectedTriggered}
		if spec.ExpectedPayload != "" {
			e, err := celexpr.Compile(env.Exprs.Payload, spec.ExpectedPayload, env.CostLimit, cel.OptPartialEval)
			if err != nil {
				errs = append(errs, fmt.Errorf("%s.%s: %w", where, FieldExpectedPayload, err))
			}
			ch.payload = e
		}
		sub, subErrs := CompileFields(env, where, spec.AgentExpectations)
		errs = append(errs, subErrs...)
		ch.CompiledFields = *sub
		out = append(out, ch)
	}
	return out, joinErrs(errs)
}

// childChecks is expected_child_agents compiled, sorted by agent name.
type childChecks []*compiledChild

func (cc childChecks) refs(prefix string) []check.Ref {
	var out []check.Ref
	for _, ch := range cc {
		out = append(out, ch.steps(childPrefix(prefix, ch.name))...)
	}
	return out
}

func (cc childChecks) evaluate(te *TraceEval, base check.Result, a *logicalAgent, prefix string, out []check.Result) []check.Result {
	for _, ch := range cc {
		out = append(out, te.evalChild(base, a, ch, childPrefix(prefix, ch.name))...)
	}
	return out
}
