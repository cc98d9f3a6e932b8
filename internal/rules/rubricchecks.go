package rules

import (
	"fmt"
	"regexp"
	"sort"
	"strings"

	"go.opentelemetry.io/collector/pdata/pcommon"

	"github.com/otelcol-handoff/otelcol-handoff/internal/agentgraph"
	"github.com/otelcol-handoff/otelcol-handoff/internal/textsafe"
)

// The deterministic parts of the handoff rubrics. Each part reads the delegation DAG and
// the spans under it, and says pass, fail, or n/a (it cannot decide on this trace); see
// assertionexporter/README.md, "Handoff rubrics".

type partState int

const (
	partNA partState = iota
	partPass
	partFail
)

// part is one deterministic check of a rubric on one handoff.
type part struct {
	name   string
	state  partState
	detail string
}

func (p part) String() string {
	return p.name + " " + [...]string{"n/a", "pass", "fail"}[p.state]
}

// defaultTransient matches errors taken as transient (a retry of the same scope is then
// fine): timeouts, rate limits, 502/503/504, unavailable or overloaded services, reset
// connections.
var defaultTransient = []string{
	`(?i)time[ds]?[ _-]?out|deadline exceeded|temporar|try again|overloaded|unavailable|rate[ _-]?limit|too many requests|\b(?:429|502|503|504)\b|connection (?:reset|refused|closed)|econnreset|etimedout`,
}

// builtinPlumbing are framework tools that carry output or control, never work: they are
// not held against handoff.allowed_tools.
var builtinPlumbing = map[string]bool{
	"strands_structured_output": true, "transfer_to_agent": true, "handoff_to_agent": true,
	"final_result": true, "final_answer": true,
}

// AttrRecovery, set by an application on a span (or a span event) after an error, records
// the recovery it chose: retry, fallback or escalation (read by the model).
const AttrRecovery = agentgraph.AttrRecovery

// rubricStep is an EXPECT_HANDOFF_RUBRICS step, compiled.
type rubricStep struct {
	cfg       *RubricsStep
	axes      []string
	ignored   map[string]bool
	transient []*regexp.Regexp
}

func (rs *rubricStep) isTransient(e *agentgraph.ErrorInfo) bool {
	t := errText(e)
	for _, re := range rs.transient {
		if t != "" && re.MatchString(t) {
			return true
		}
	}
	return false
}

// plumbing reports tool calls that are framework plumbing of inv: the built-in list, the
// step's ignoredTools, transfer calls (transfer_to_X, handoff_to_X) and the calls that
// carried inv's own transfers.
func (rs *rubricStep) plumbing(x *dagIndex, tc *agentgraph.ToolCall, inv *agentgraph.Invocation) bool {
	if rs.ignored[tc.Name] || builtinPlumbing[tc.Name] || transferByName.MatchString(tc.Name) {
		return true
	}
	return x.transferVia[tc.Span] == inv
}

// allowedNames reads tool names from handoff.allowed_tools entries, which may be names or
// JSON tool definitions (the model's agentgraph.ToolNamesOf).
func allowedNames(list []string) []string { return agentgraph.ToolNamesOf(list) }

// ---- ScopeFidelity ----

// scopeParts: the receiver called only tools in handoff.allowed_tools, and used no
// identifier the sender never supplied.
func (rs *rubricStep) scopeParts(x *dagIndex, e *agentgraph.Edge) []part {
	return []part{rs.allowedToolsPart(x, e), rs.contextSuppliedPart(x, e)}
}

// allowedToolsPart: the receiver called only tools in handoff.allowed_tools.
func (rs *rubricStep) allowedToolsPart(x *dagIndex, e *agentgraph.Edge) part {
	r := e.To
	tools := part{name: "allowed tools"}
	if r.AllowedTools == nil {
		tools.detail = fmt.Sprintf("no handoff.allowed_tools captured for %s", r.Name)
	} else {
		names := allowedNames(r.AllowedTools)
		allowed := map[string]bool{}
		for _, n := range names {
			allowed[n] = true
		}
		var outside []string
		checked, nOutside := 0, 0
		for _, tc := range r.OwnToolCalls() {
			x.work++
			if rs.plumbing(x, tc, r) {
				continue
			}
			checked++
			if !allowed[tc.Name] {
				if nOutside++; len(outside) < maxListed {
					outside = append(outside, toolLabel(tc))
				}
			}
		}
		sort.Strings(names)
		if nOutside > 0 {
			tools.state = partFail
			tools.detail = fmt.Sprintf("%s called %s, outside handoff.allowed_tools [%s]", r.Name,
				listed(outside, nOutside, ", ", "calls"), listed(names, len(names), ", ", "tools"))
		} else {
			tools.state = partPass
			tools.detail = fmt.Sprintf("%s made %s, all in handoff.allowed_tools", r.Name, textsafe.Plural(checked, "tool call", "tool calls"))
		}
	}
	return tools
}

// contextSuppliedPart: the receiver used no identifier the sender never supplied.
func (rs *rubricStep) contextSuppliedPart(x *dagIndex, e *agentgraph.Edge) part {
	r := e.To
	ctx := part{name: "context supplied"}
	if !r.Input.Found() && !e.Reason.Found() {
		ctx.detail = fmt.Sprintf("what %s received was not captured (content capture disabled on the exporter)", r.Name)
		return ctx
	}
	calls, needles := rs.callIdentifiers(x, r)
	var invented []string
	nInvented := 0
	if len(needles) > 0 {
		known := x.suppliedTexts(e, needles)
		for _, c := range calls {
			for _, id := range c.ids {
				x.work++
				if !known.seen(tokenText(id), uint64(start(c.tc.Span)), c.tc) {
					if nInvented++; len(invented) < maxListed {
						invented = append(invented, fmt.Sprintf("%s in %s", quote(id, 40), toolLabel(c.tc)))
					}
				}
			}
		}
	}
	switch {
	case nInvented > 0:
		ctx.state = partFail
		ctx.detail = fmt.Sprintf("%s used context %s never supplied: %s (not in its input, the dispatch, or an earlier result)",
			r.Name, e.From.Name, listed(invented, nInvented, ", ", "identifiers"))
	case len(calls) == 0:
		ctx.state = partPass
		ctx.detail = fmt.Sprintf("%s made no tool call with arguments", r.Name)
	default:
		ctx.state = partPass
		ctx.detail = fmt.Sprintf("every identifier in %s's tool arguments was supplied", r.Name)
	}
	return ctx
}

// identifiedCall is a receiver's tool call with the identifiers in its arguments.
type identifiedCall struct {
	tc  *agentgraph.ToolCall
	ids []string
}

// callIdentifiers lists the identifiers of every work call of r (plumbing aside), and the
// whole-token needles to look them up by.
func (rs *rubricStep) callIdentifiers(x *dagIndex, r *agentgraph.Invocation) (calls []identifiedCall, needles []string) {
	for _, tc := range r.OwnToolCalls() {
		x.work++
		if rs.plumbing(x, tc, r) || !tc.Args.Found() {
			continue
		}
		ids := identifiers(tc.Args.Text)
		calls = append(calls, identifiedCall{tc, ids})
		for _, id := range ids {
			needles = append(needles, tokenText(id))
		}
	}
	return calls, needles
}

// suppliedTexts indexes what e's receiver had learned, and when: its input, the dispatch,
// earlier tool results and the returns of agents it dispatched. A call's identifier was
// supplied when a text available by the call's start (other than the call's own result)
// contains it. Texts are searched for whole tokens only; the attributes of the receiver's
// span and of its first LLM call are read with the trace's span ids and timestamps blanked
// out: those are not sources of context.
func (x *dagIndex) suppliedTexts(e *agentgraph.Edge, needles []string) *substrings {
	r := e.To
	known := newSubstrings(needles)
	filter := x.sourceFilter()
	attrs := []string{x.inputOf(r.Span)}
	if llms := x.llms[r]; len(llms) > 0 {
		attrs = append(attrs, x.inputOf(llms[0])) // the first prompt, before any model output
	}
	for _, text := range attrs {
		x.work++
		known.scan(tokenText(filter.strip(text)), 0, nil)
	}
	for _, text := range []string{r.Input.Text, e.Reason.Text, e.Context.Text} {
		x.work++
		known.scan(tokenText(text), 0, nil)
	}
	for _, prev := range r.OwnToolCalls() {
		x.work++
		known.scan(tokenText(prev.Result.Text), uint64(end(prev.Span)), prev)
	}
	for _, out := range r.Out {
		x.work++
		known.scan(tokenText(out.To.Output.Text), uint64(end(out.To.Span)), nil)
	}
	known.done()
	return known
}

// ---- ResultIntegration ----

// senderStep is something the sender did after the receiver returned.
type senderStep struct {
	at    pcommon.Timestamp
	label string
	text  string
	span  *agentgraph.Span
}

// returnValue is the receiver's return value: its output, else the result of the call
// that dispatched it.
func (x *dagIndex) returnValue(e *agentgraph.Edge) agentgraph.Value {
	if e.To.Output.Found() {
		return e.To.Output
	}
	if e.Via != nil {
		if tc := x.callOf(e.Via); tc != nil && tc.Result.Found() {
			return tc.Result
		}
	}
	return e.To.Output
}

// integrationParts: the sender's next step carries the receiver's return value, and the
// sender does not redo the receiver's work. ok is false when control never came back to
// the sender (a one-way transfer): the rubric does not apply.
func (rs *rubricStep) integrationParts(x *dagIndex, e *agentgraph.Edge) (parts []part, steps []senderStep, ok bool) {
	steps = x.nextSteps(e)
	if len(steps) == 0 {
		return nil, nil, false
	}
	read := part{name: "return value read"}
	rv := x.returnValue(e)
	var next *senderStep
	for i := range steps {
		if strings.TrimSpace(steps[i].text) != "" {
			next = &steps[i]
			break
		}
	}
	switch {
	case !rv.Found():
		read.detail = fmt.Sprintf("the return value of %s was not captured (content capture disabled on the exporter)", e.To.Name)
	case next == nil:
		read.detail = fmt.Sprintf("the content of %s's next step was not captured (content capture disabled on the exporter)", e.From.Name)
	default:
		// Dispatches one model response issued are one step: the next step is the first
		// after all of them returned, and it must carry each one's return value.
		after := ""
		if n := len(x.roundOf(e).edges); n > 1 {
			after = fmt.Sprintf(", the first after all %d dispatches of its model response returned", n)
		}
		value := plainOutput(rv.Text)
		if carried, share := x.stepCarries(next, value); carried {
			read.state = partPass
			read.detail = fmt.Sprintf("%s's next step (%s%s) carries %s's return value", e.From.Name, next.label, after, e.To.Name)
		} else {
			read.state = partFail
			read.detail = fmt.Sprintf("%s's next step (%s%s) does not carry %s's return value (%.0f%% of its words)",
				e.From.Name, next.label, after, e.To.Name, 100*share)
		}
	}
	parts = append(parts, read)

	redo := part{
		name: "work not repeated", state: partPass,
		detail: fmt.Sprintf("%s did not redo %s's work", e.From.Name, e.To.Name),
	}
	if repeats, n := x.repeats(rs, e); n > 0 {
		redo.state = partFail
		redo.detail = fmt.Sprintf("%s repeated %s's work after it returned: %s", e.From.Name, e.To.Name, listed(repeats, n, ", ", "repeats"))
	}
	return append(parts, redo), steps, true
}

// roundTripFailed: the receiver's span, or the call that dispatched it, failed.
func roundTripFailed(e *agentgraph.Edge) bool {
	return e.To.Span.Error != nil || (e.Via != nil && e.Via.Error != nil)
}

// ---- RecoveryOnError ----

// episode is one error on a handoff's round trip.
type episode struct {
	span  *agentgraph.Span
	kind  string // receiver | dispatch | tool | llm
	label string
	err   *agentgraph.ErrorInfo
	tool  *agentgraph.ToolCall
}

// episodes lists the errors of e's round trip: the receiver's own span (or the dispatch
// call), and the receiver's own tool and LLM calls. Errors of agents the receiver
// dispatched belong to those handoffs.
func (x *dagIndex) episodes(e *agentgraph.Edge) []episode {
	r := e.To
	var out []episode
	switch {
	case r.Span.Error != nil:
		out = append(out, episode{span: r.Span, kind: "receiver", label: fmt.Sprintf("%s (span %s)", r.Name, r.Span.ID), err: r.Span.Error})
	case e.Via != nil && e.Via.Error != nil:
		out = append(out, episode{span: e.Via, kind: "dispatch", label: fmt.Sprintf("the dispatch call %s (span %s)", e.Via.Name.Text, e.Via.ID), err: e.Via.Error})
	}
	for _, tc := range r.OwnToolCalls() {
		if tc.Span.Error != nil {
			out = append(out, episode{span: tc.Span, kind: "tool", label: toolLabel(tc), err: tc.Span.Error, tool: tc})
		}
	}
	for _, llm := range x.llms[r] {
		if llm.Error != nil {
			out = append(out, episode{span: llm, kind: "llm", label: fmt.Sprintf("LLM call %s (span %s)", llm.SpanName(), llm.ID), err: llm.Error})
		}
	}
	sort.SliceStable(out, func(i, j int) bool { return start(out[i].span) < start(out[j].span) })
	return out
}

// recoveryParts judges each error of e's round trip: recovered (retried, fallen back,
// surfaced) or not (swallowed, or a retry loop on the same scope after a non-transient
// error). ok is false when the round trip had no error.
func (rs *rubricStep) recoveryParts(x *dagIndex, e *agentgraph.Edge) (parts []part, eps []episode, ok bool) {
	eps = x.episodes(e)
	if len(eps) == 0 {
		return nil, nil, false
	}
	var failed, passed int
	for i, ep := range eps {
		state, detail := rs.recovered(x, e, ep)
		if i < maxListed {
			parts = append(parts, part{name: "error handled", state: state, detail: detail})
			continue
		}
		// Past the first maxListed errors, one part stands for the rest (a failure if
		// any of them failed): the verdict's size does not grow with the errors.
		switch state {
		case partFail:
			failed++
		case partPass:
			passed++
		}
	}
	if more := len(eps) - maxListed; more > 0 {
		rest := part{name: fmt.Sprintf("%d more errors handled", more), state: partNA,
			detail: fmt.Sprintf("… and %d more errors on the round trip (%d not handled, %d handled)", more, failed, passed)}
		switch {
		case failed > 0:
			rest.state = partFail
		case passed > 0:
			rest.state = partPass
		}
		parts = append(parts, rest)
	}
	return parts, eps, true
}

func (rs *rubricStep) recovered(x *dagIndex, e *agentgraph.Edge, ep episode) (partState, string) {
	r := e.To
	failed := fmt.Sprintf("%s failed (%s)", ep.label, quote(errText(ep.err), 80))
	transient := rs.isTransient(ep.err)
	kind := "a non-transient"
	if transient {
		kind = "a transient"
	}
	if ep.kind == "tool" || ep.kind == "llm" {
		t := end(ep.span)
		x.work++
		// Retried by the receiver.
		if ep.kind == "tool" {
			if tc := firstCallAfter(x.callsNamed(r, ep.tool.Name), t, ep.tool.Span); tc != nil {
				same := tc.Args.Found() && ep.tool.Args.Found() && x.canonical(tc) == x.canonical(ep.tool)
				if same && !transient {
					return partFail, fmt.Sprintf("%s; %s retried it with the same arguments (%s) after %s error: a retry loop on the same scope",
						failed, r.Name, toolLabel(tc), kind)
				}
				return partPass, fmt.Sprintf("%s; %s retried it (%s)", failed, r.Name, toolLabel(tc))
			}
		} else {
			llms := x.llms[r]
			i := sort.Search(len(llms), func(i int) bool { return start(llms[i]) >= t })
			if i < len(llms) && llms[i] == ep.span {
				i++
			}
			if i < len(llms) {
				llm := llms[i]
				if x.inputOf(llm) == x.inputOf(ep.span) && !transient {
					return partFail, fmt.Sprintf("%s; %s sent the same request again (span %s) after %s error: a retry loop on the same scope",
						failed, r.Name, llm.ID, kind)
				}
				return partPass, fmt.Sprintf("%s; %s retried it (span %s)", failed, r.Name, llm.ID)
			}
		}
		// Fell back to another agent (handing control back to the sender is not one).
		if o := x.firstFallbackAfter(e, t); o != nil {
			return partPass, fmt.Sprintf("%s; %s fell back to %s (span %s)", failed, r.Name, o.To.Name, o.To.Span.ID)
		}
		// Surfaced by the receiver.
		if f := x.factsOf(r); f.status != StatusCompleted {
			return partPass, fmt.Sprintf("%s; %s surfaced it (%s)", failed, r.Name, f.status)
		}
		if v, ok := x.marker([]string{r.Name}, func(inv *agentgraph.Invocation) bool { return inv == r }, ep.span); ok {
			return partPass, fmt.Sprintf("%s; %s recorded the recovery %s=%s", failed, r.Name, AttrRecovery, quote(v, 30))
		}
	}
	// The sender's reaction after the round trip.
	state, how := x.senderReaction(e, transient, kind)
	if state != partNA {
		return state, failed + "; " + how
	}
	// The failure surfaced in an answer.
	if state, how := x.answerSurfaced(e, ep); state != partFail {
		return state, failed + "; " + how
	}
	who := e.From.Name
	if hb := x.handBacks(e); len(hb) > 0 {
		who = fmt.Sprintf("%s, to which %s handed control back (span %s),", who, r.Name, hb[0].Span.ID)
	}
	if ep.kind == "tool" || ep.kind == "llm" {
		return partFail, fmt.Sprintf("%s; %s did not retry it, fall back or fail, and %s did not retry, fall back, escalate or fail: the error was swallowed",
			failed, r.Name, who)
	}
	return partFail, fmt.Sprintf("%s; %s did not retry, fall back, escalate or fail: the error was swallowed", failed, who)
}

// receiverTurn renders what the receiver did, for the judge.
func receiverTurn(r *agentgraph.Invocation) string {
	var b strings.Builder
	for _, tc := range r.OwnToolCalls() {
		fmt.Fprintf(&b, "tool %s args %s", tc.Name, strings.TrimSpace(tc.Args.Text))
		if tc.Span.Error != nil {
			fmt.Fprintf(&b, " -> error %s", errText(tc.Span.Error))
		} else if tc.Result.Found() {
			fmt.Fprintf(&b, " -> %s", strings.TrimSpace(tc.Result.Text))
		}
		b.WriteByte('\n')
	}
	for _, o := range r.Out {
		fmt.Fprintf(&b, "dispatched %s\n", o.To.Name)
	}
	if r.Span.Error != nil {
		fmt.Fprintf(&b, "the run failed: %s\n", errText(r.Span.Error))
	}
	if r.Output.Found() {
		fmt.Fprintf(&b, "output: %s\n", plainOutput(r.Output.Text))
	}
	return strings.TrimSpace(b.String())
}

// reaction is a senderReaction verdict.
type reaction struct {
	state partState
	how   string
}

type reactionKey struct {
	e         *agentgraph.Edge
	transient bool
}

// senderReaction looks for the sender's recovery after e's round trip: a new dispatch to
// the receiver (a retry; a loop when the scope is the same and the error not transient),
// the same call again, the same scope given to another agent (a fallback), its own failure
// or a pending approval (escalation), or a recorded handoff.recovery. It depends on the
// handoff and whether the error was transient only: once per handoff and kind.
func (x *dagIndex) senderReaction(e *agentgraph.Edge, transient bool, kind string) (partState, string) {
	key := reactionKey{e, transient}
	if x.reactions == nil {
		x.reactions = map[reactionKey]reaction{}
	}
	if r, ok := x.reactions[key]; ok {
		return r.state, r.how
	}
	state, how := x.react(e, transient, kind)
	x.reactions[key] = reaction{state, how}
	return state, how
}

func (x *dagIndex) react(e *agentgraph.Edge, transient bool, kind string) (partState, string) {
	t := x.roundReturnedAt(e)
	scope := x.scopeOf(e)
	again, call := x.retryAfter(e, t)
	if o := again; o != nil {
		if scope != "" && x.scopeOf(o) == scope && !transient {
			return partFail, fmt.Sprintf("%s dispatched %s again with the same scope (span %s) after %s error: a retry loop on the same scope",
				e.From.Name, o.To.Name, o.To.Span.ID, kind)
		}
		return partPass, fmt.Sprintf("%s retried: dispatched %s again (span %s)", e.From.Name, o.To.Name, o.To.Span.ID)
	}
	if tc := call; tc != nil {
		if via := x.callOf(e.Via); via != nil && via.Args.Found() && tc.Args.Found() &&
			x.canonical(via) == x.canonical(tc) && !transient {
			return partFail, fmt.Sprintf("%s called %s again with the same arguments after %s error: a retry loop on the same scope",
				e.From.Name, toolLabel(tc), kind)
		}
		return partPass, fmt.Sprintf("%s retried: called %s again", e.From.Name, toolLabel(tc))
	}
	if how, ok := x.fellBack(e, t, scope); ok {
		return partPass, how
	}
	return x.escalated(e)
}

// retryAfter is the sender's retry after e's round returned at t: the first sender run (in
// start order) that dispatched the receiver's agent again (again), or made the dispatching
// call again (call); else a new dispatch to the receiver's agent by a run the receiver
// handed control back to (it acts for the sender).
func (x *dagIndex) retryAfter(e *agentgraph.Edge, t pcommon.Timestamp) (again *agentgraph.Edge, call *agentgraph.ToolCall) {
	if e.From.Remote == nil {
		name := e.From.Name
		redispatch := x.firstRun(name, "to", e.To.Name, t, func(run *agentgraph.Invocation) bool {
			return x.senderRun(e, run) && firstEdgeAfter(x.outsTo(run, e.To.Name), t, e) != nil
		})
		var recall *agentgraph.Invocation
		if e.Via != nil && e.Via.Role == agentgraph.RoleTool {
			recall = x.firstRun(name, "call", e.Via.Name.Text, t, func(run *agentgraph.Invocation) bool {
				return x.senderRun(e, run) && firstCallAfter(x.callsNamed(run, e.Via.Name.Text), t, e.Via) != nil
			})
		}
		switch {
		case redispatch != nil && (recall == nil || x.position[redispatch] <= x.position[recall]):
			return firstEdgeAfter(x.outsTo(redispatch, e.To.Name), t, e), nil
		case recall != nil:
			return nil, firstCallAfter(x.callsNamed(recall, e.Via.Name.Text), t, e.Via)
		}
	}
	for i, hb := range x.handBacks(e) {
		if i == maxListed {
			break
		}
		if o := firstEdgeAfter(x.outsTo(hb, e.To.Name), t, e); o != nil {
			return o, nil
		}
	}
	return nil, nil
}

// fellBack says how the sender gave e's work to another agent after t: the same scope to
// another receiver, or a hand-back run handing it elsewhere (no retry was found: the
// hand-back runs' dispatches go to other agents).
func (x *dagIndex) fellBack(e *agentgraph.Edge, t pcommon.Timestamp, scope string) (string, bool) {
	if scope != "" && e.From.Remote == nil {
		// No sender run dispatched e's receiver again after t, so among these only e
		// itself can have the receiver's name.
		fallback := x.firstRun(e.From.Name, "scope", scope, t, func(run *agentgraph.Invocation) bool {
			o := firstEdgeAfter(x.outsScoped(run, scope), t, e)
			return x.senderRun(e, run) && o != nil && o.To.Name != e.To.Name
		})
		if fallback != nil {
			o := firstEdgeAfter(x.outsScoped(fallback, scope), t, e)
			return fmt.Sprintf("%s fell back: gave the same scope to %s (span %s)", e.From.Name, o.To.Name, o.To.Span.ID), true
		}
	}
	for i, hb := range x.handBacks(e) {
		if i == maxListed {
			break
		}
		if o := firstEdgeAfter(hb.Out, t, nil); o != nil && o.To.Name != e.To.Name {
			return fmt.Sprintf("%s fell back: handed the work to %s (span %s) after %s handed control back", e.From.Name, o.To.Name, o.To.Span.ID, e.To.Name), true
		}
	}
	return "", false
}

// escalated says how the failure was surfaced above the receiver: a sender run (or a
// hand-back run) that did not complete, a failed agent up the chain, a failed root span,
// or a recorded handoff.recovery; partNA when none.
func (x *dagIndex) escalated(e *agentgraph.Edge) (partState, string) {
	for _, run := range x.unfinished(e.From.Name) {
		if e.From.Remote == nil && (x.senderRun(e, run) || x.isHandBack(e, run)) {
			f := x.factsOf(run)
			return partPass, fmt.Sprintf("%s escalated: its run ended %s (%s)", run.Name, f.status, f.statusWhy)
		}
	}
	if up := x.firstFailedAbove(e.From); up != nil {
		return partPass, fmt.Sprintf("escalated: %s, up the chain, ended %s", up.Name, x.factsOf(up).status)
	}
	if root := x.g.RootSpan; root != nil && root.StatusError() {
		return partPass, "escalated: the trace's root span failed"
	}
	member := func(inv *agentgraph.Invocation) bool {
		return inv == e.To || x.senderRun(e, inv) || x.isHandBack(e, inv)
	}
	if v, ok := x.marker([]string{e.From.Name, e.To.Name}, member, e.To.Span); ok {
		return partPass, fmt.Sprintf("%s recorded the recovery %s=%s", e.From.Name, AttrRecovery, quote(v, 30))
	}
	return partNA, ""
}

// marker finds a handoff.recovery attribute on a span of the runs (their agent spans and
// the spans they own) that ends after the error began, or on an event of one after it:
// the first such span in start order. names are the names of the runs member accepts.
func (x *dagIndex) marker(names []string, member func(*agentgraph.Invocation) bool, after *agentgraph.Span) (string, bool) {
	t := start(after)
	best, value := -1, ""
	for i, name := range names {
		if i > 0 && name == names[0] {
			continue
		}
		for _, m := range x.marksOf(name) {
			x.work++
			if best >= 0 && m.order >= best {
				break
			}
			s := m.span
			inv := m.runs[0]
			if inv == nil || !member(inv) {
				inv = m.runs[1]
			}
			if inv == nil || !member(inv) || end(s) < t {
				continue
			}
			if v, ok := recoveryValue(s, t); ok {
				best, value = m.order, v
				break
			}
		}
	}
	return value, best >= 0
}

// recoveryValue is a span's handoff.recovery attribute, else that of its first event at
// or after t (the model's Span.Recovery).
func recoveryValue(s *agentgraph.Span, t pcommon.Timestamp) (string, bool) { return s.Recovery(t) }

// repeat is a call or dispatch of a sender run that repeats the receiver's work.
type repeat struct {
	run      int // position of the run among its name's runs
	dispatch bool
	at       pcommon.Timestamp
	order    int
	text     string
}

// repeats lists what the sender's runs did after e returned that repeats the receiver's
// work (at most maxListed, in run order) and how many there were: tool calls with the
// same name and arguments as one of the receiver's, and (when the round trip did not
// fail) the same dispatch to the receiver's agent again. At most maxStepScan candidates
// are looked at per handoff.
func (x *dagIndex) repeats(rs *rubricStep, e *agentgraph.Edge) ([]string, int) {
	if e.From.Remote != nil {
		return nil, 0
	}
	t := x.roundReturnedAt(e)
	var found []repeat
	budget := maxStepScan
	seenKey := map[string]bool{}
	for _, tc := range e.To.OwnToolCalls() {
		x.work++
		if rs.plumbing(x, tc, e.To) || !tc.Args.Found() {
			continue
		}
		key := tc.Name + "\x00" + x.canonical(tc)
		if seenKey[key] {
			continue
		}
		seenKey[key] = true
		calls := x.callsKeyed(e.From.Name, key)
		i := sort.Search(len(calls), func(i int) bool { return start(calls[i].Span) >= t })
		for ; i < len(calls) && budget > 0; i++ {
			budget--
			c := calls[i]
			if run := c.Span.Owner(); x.senderRun(e, run) {
				found = append(found, repeat{run: x.position[run], at: start(c.Span), order: x.spanOrder(c.Span),
					text: fmt.Sprintf("%s %s", toolLabel(c), code(c.Args.Text, 80))})
			}
		}
	}
	if scope := x.scopeOf(e); scope != "" && !roundTripFailed(e) {
		outs := x.outsKeyed(e.From.Name, e.To.Name+"\x00"+scope)
		i := sort.Search(len(outs), func(i int) bool { return start(outs[i].To.Span) >= t })
		for ; i < len(outs) && budget > 0; i++ {
			budget--
			o := outs[i]
			if x.roundOf(o) != x.roundOf(e) && !roundTripFailed(o) && x.senderRun(e, o.From) {
				found = append(found, repeat{run: x.position[o.From], dispatch: true, at: start(o.To.Span), order: o.To.Index,
					text: fmt.Sprintf("the same dispatch to %s again (span %s)", o.To.Name, o.To.Span.ID)})
			}
		}
	}
	sort.Slice(found, func(i, j int) bool {
		a, b := found[i], found[j]
		if a.run != b.run {
			return a.run < b.run
		}
		if a.dispatch != b.dispatch {
			return !a.dispatch
		}
		return a.order < b.order
	})
	var out []string
	for _, r := range found {
		if len(out) == maxListed {
			break
		}
		out = append(out, r.text)
	}
	return out, len(found)
}
