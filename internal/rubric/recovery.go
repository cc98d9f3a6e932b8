package rubric

import (
	"fmt"
	"sort"
	"strings"

	"go.opentelemetry.io/collector/pdata/pcommon"

	"github.com/otelcol-handoff/otelcol-handoff/internal/agentgraph"
	"github.com/otelcol-handoff/otelcol-handoff/internal/judge"
)

// defaultTransient matches errors taken as transient (a retry of the same scope is then
// fine): timeouts, rate limits, 502/503/504, unavailable or overloaded services, reset
// connections.
var defaultTransient = []string{
	`(?i)time[ds]?[ _-]?out|deadline exceeded|temporar|try again|overloaded|unavailable|rate[ _-]?limit|too many requests|\b(?:429|502|503|504)\b|connection (?:reset|refused|closed)|econnreset|etimedout`,
}

func (rs *Checks) isTransient(e *agentgraph.ErrorInfo) bool {
	t := errText(e)
	for _, re := range rs.transient {
		if t != "" && re.MatchString(t) {
			return true
		}
	}
	return false
}

// roundTripFailed: the receiver's span, or the call that dispatched it, failed.
func roundTripFailed(e *agentgraph.Edge) bool {
	return e.To.Span.Error != nil || (e.Via != nil && e.Via.Error != nil)
}

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
func (x *Index) episodes(e *agentgraph.Edge) []episode {
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
func (rs *Checks) recoveryParts(x *Index, e *agentgraph.Edge) (parts []Part, eps []episode, ok bool) {
	eps = x.episodes(e)
	if len(eps) == 0 {
		return nil, nil, false
	}
	var failed, passed int
	for i, ep := range eps {
		state, detail := rs.recovered(x, e, ep)
		if i < maxListed {
			parts = append(parts, Part{Name: "error handled", State: state, Detail: detail})
			continue
		}
		// Past the first maxListed errors, one part stands for the rest (a failure if
		// any of them failed): the verdict's size does not grow with the errors.
		switch state {
		case PartFail:
			failed++
		case PartPass:
			passed++
		}
	}
	if more := len(eps) - maxListed; more > 0 {
		rest := Part{
			Name: fmt.Sprintf("%d more errors handled", more), State: PartNA,
			Detail: fmt.Sprintf("… and %d more errors on the round trip (%d not handled, %d handled)", more, failed, passed),
		}
		switch {
		case failed > 0:
			rest.State = PartFail
		case passed > 0:
			rest.State = PartPass
		}
		parts = append(parts, rest)
	}
	return parts, eps, true
}

func (rs *Checks) recovered(x *Index, e *agentgraph.Edge, ep episode) (PartState, string) {
	r := e.To
	failed := fmt.Sprintf("%s failed (%s)", ep.label, quote(errText(ep.err), 80))
	transient := rs.isTransient(ep.err)
	kind := "a non-transient"
	if transient {
		kind = "a transient"
	}
	if ep.kind == "tool" || ep.kind == "llm" {
		if state, how := x.receiverReaction(e, ep, transient, kind); state != PartNA {
			return state, failed + "; " + how
		}
	}
	// The sender's reaction after the round trip.
	state, how := x.senderReaction(e, transient, kind)
	if state != PartNA {
		return state, failed + "; " + how
	}
	// The failure surfaced in an answer.
	if state, how := x.answerSurfaced(e, ep); state != PartFail {
		return state, failed + "; " + how
	}
	who := e.From.Name
	if hb := x.handBacks(e); len(hb) > 0 {
		who = fmt.Sprintf("%s, to which %s handed control back (span %s),", who, r.Name, hb[0].Span.ID)
	}
	if ep.kind == "tool" || ep.kind == "llm" {
		return PartFail, fmt.Sprintf("%s; %s did not retry it, fall back or fail, and %s did not retry, fall back, escalate or fail: the error was swallowed",
			failed, r.Name, who)
	}
	return PartFail, fmt.Sprintf("%s; %s did not retry, fall back, escalate or fail: the error was swallowed", failed, who)
}

// receiverReaction is what the receiver did about its own failed tool or LLM call: a retry
// (the same call again after a non-transient error is a retry loop), a fallback to another
// agent (handing control back to the sender is not one), its own failure, or a recorded
// handoff.recovery. PartNA: none of them.
func (x *Index) receiverReaction(e *agentgraph.Edge, ep episode, transient bool, kind string) (PartState, string) {
	r := e.To
	t := end(ep.span)
	x.work++
	if tc, llm, same := x.retryOf(r, ep, t); tc != nil || llm != nil {
		retry, again := "", "retried it with the same arguments"
		if tc != nil {
			retry = toolLabel(tc)
		} else {
			retry, again = "span "+llm.ID.String(), "sent the same request again"
		}
		if same && !transient {
			return PartFail, fmt.Sprintf("%s %s (%s) after %s error: a retry loop on the same scope", r.Name, again, retry, kind)
		}
		return PartPass, fmt.Sprintf("%s retried it (%s)", r.Name, retry)
	}
	if o := x.firstFallbackAfter(e, t); o != nil {
		return PartPass, fmt.Sprintf("%s fell back to %s (span %s)", r.Name, o.To.Name, o.To.Span.ID)
	}
	if f := x.statusOf(r); f.State != agentgraph.StatusCompleted {
		return PartPass, fmt.Sprintf("%s surfaced it (%s)", r.Name, f.State)
	}
	if v, ok := x.marker([]string{r.Name}, func(inv *agentgraph.Invocation) bool { return inv == r }, ep.span); ok {
		return PartPass, fmt.Sprintf("%s recorded the recovery %s=%s", r.Name, agentgraph.AttrRecovery, quote(v, 30))
	}
	return PartNA, ""
}

// retryOf finds the receiver's retry of a failed tool or LLM call: the first call of the
// same tool after t (tc), or the next LLM call (llm), and whether it repeats the failed call
// (the same arguments, the same input). Both nil: no retry.
func (x *Index) retryOf(r *agentgraph.Invocation, ep episode, t pcommon.Timestamp) (tc *agentgraph.ToolCall, llm *agentgraph.Span, same bool) {
	if ep.kind == "tool" {
		tc = firstCallAfter(x.callsNamed(r, ep.tool.Name), t, ep.tool.Span)
		if tc == nil {
			return nil, nil, false
		}
		return tc, nil, tc.Args.Found() && ep.tool.Args.Found() && x.canonical(tc) == x.canonical(ep.tool)
	}
	llms := x.llms[r]
	i := sort.Search(len(llms), func(i int) bool { return start(llms[i]) >= t })
	if i < len(llms) && llms[i] == ep.span {
		i++
	}
	if i >= len(llms) {
		return nil, nil, false
	}
	llm = llms[i]
	return nil, llm, x.inputOf(llm) == x.inputOf(ep.span)
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
	state PartState
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
func (x *Index) senderReaction(e *agentgraph.Edge, transient bool, kind string) (PartState, string) {
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

func (x *Index) react(e *agentgraph.Edge, transient bool, kind string) (PartState, string) {
	t := x.roundReturnedAt(e)
	scope := x.scopeOf(e)
	again, call := x.retryAfter(e, t)
	if o := again; o != nil {
		if scope != "" && x.scopeOf(o) == scope && !transient {
			return PartFail, fmt.Sprintf("%s dispatched %s again with the same scope (span %s) after %s error: a retry loop on the same scope",
				e.From.Name, o.To.Name, o.To.Span.ID, kind)
		}
		return PartPass, fmt.Sprintf("%s retried: dispatched %s again (span %s)", e.From.Name, o.To.Name, o.To.Span.ID)
	}
	if tc := call; tc != nil {
		if via := x.callOf(e.Via); via != nil && via.Args.Found() && tc.Args.Found() &&
			x.canonical(via) == x.canonical(tc) && !transient {
			return PartFail, fmt.Sprintf("%s called %s again with the same arguments after %s error: a retry loop on the same scope",
				e.From.Name, toolLabel(tc), kind)
		}
		return PartPass, fmt.Sprintf("%s retried: called %s again", e.From.Name, toolLabel(tc))
	}
	if how, ok := x.fellBack(e, t, scope); ok {
		return PartPass, how
	}
	return x.escalated(e)
}

// retryAfter is the sender's retry after e's round returned at t: the first sender run (in
// start order) that dispatched the receiver's agent again (again), or made the dispatching
// call again (call); else a new dispatch to the receiver's agent by a run the receiver
// handed control back to (it acts for the sender).
func (x *Index) retryAfter(e *agentgraph.Edge, t pcommon.Timestamp) (again *agentgraph.Edge, call *agentgraph.ToolCall) {
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
func (x *Index) fellBack(e *agentgraph.Edge, t pcommon.Timestamp, scope string) (string, bool) {
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
// or a recorded handoff.recovery; PartNA when none.
func (x *Index) escalated(e *agentgraph.Edge) (PartState, string) {
	for _, run := range x.unfinished(e.From.Name) {
		if e.From.Remote == nil && (x.senderRun(e, run) || x.isHandBack(e, run)) {
			f := x.statusOf(run)
			return PartPass, fmt.Sprintf("%s escalated: its run ended %s (%s)", run.Name, f.State, f.Why)
		}
	}
	if up := x.firstFailedAbove(e.From); up != nil {
		return PartPass, fmt.Sprintf("escalated: %s, up the chain, ended %s", up.Name, x.statusOf(up).State)
	}
	if root := x.g.RootSpan; root != nil && root.StatusError() {
		return PartPass, "escalated: the trace's root span failed"
	}
	member := func(inv *agentgraph.Invocation) bool {
		return inv == e.To || x.senderRun(e, inv) || x.isHandBack(e, inv)
	}
	if v, ok := x.marker([]string{e.From.Name, e.To.Name}, member, e.To.Span); ok {
		return PartPass, fmt.Sprintf("%s recorded the recovery %s=%s", e.From.Name, agentgraph.AttrRecovery, quote(v, 30))
	}
	return PartNA, ""
}

// marker finds a handoff.recovery attribute on a span of the runs (their agent spans and
// the spans they own) that ends after the error began, or on an event of one after it:
// the first such span in start order. names are the names of the runs member accepts.
func (x *Index) marker(names []string, member func(*agentgraph.Invocation) bool, after *agentgraph.Span) (string, bool) {
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

// recoveryFields: the errors, the receiver's turn and what the sender did next.
func (x *Index) recoveryFields(e *agentgraph.Edge, eps []episode) []judge.Field {
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
