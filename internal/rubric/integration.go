package rubric

import (
	"fmt"
	"sort"
	"strings"

	"go.opentelemetry.io/collector/pdata/pcommon"

	"github.com/otelcol-handoff/otelcol-handoff/internal/agentgraph"
	"github.com/otelcol-handoff/otelcol-handoff/internal/judge"
)

// senderStep is something the sender did after the receiver returned.
type senderStep struct {
	at    pcommon.Timestamp
	label string
	text  string
	span  *agentgraph.Span
}

// returnValue is the receiver's return value: its output, else the result of the call
// that dispatched it.
func (x *Index) returnValue(e *agentgraph.Edge) agentgraph.Value {
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
func (rs *Checks) integrationParts(x *Index, e *agentgraph.Edge) (parts []Part, steps []senderStep, ok bool) {
	steps = x.nextSteps(e)
	if len(steps) == 0 {
		return nil, nil, false
	}
	read := Part{Name: "return value read"}
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
		read.Detail = fmt.Sprintf("the return value of %s was not captured (content capture disabled on the exporter)", e.To.Name)
	case next == nil:
		read.Detail = fmt.Sprintf("the content of %s's next step was not captured (content capture disabled on the exporter)", e.From.Name)
	default:
		// Dispatches one model response issued are one step: the next step is the first
		// after all of them returned, and it must carry each one's return value.
		after := ""
		if n := len(x.roundOf(e).edges); n > 1 {
			after = fmt.Sprintf(", the first after all %d dispatches of its model response returned", n)
		}
		value := plainOutput(rv.Text)
		if carried, share := x.stepCarries(next, value); carried {
			read.State = PartPass
			read.Detail = fmt.Sprintf("%s's next step (%s%s) carries %s's return value", e.From.Name, next.label, after, e.To.Name)
		} else {
			read.State = PartFail
			read.Detail = fmt.Sprintf("%s's next step (%s%s) does not carry %s's return value (%.0f%% of its words)",
				e.From.Name, next.label, after, e.To.Name, 100*share)
		}
	}
	parts = append(parts, read)

	redo := Part{
		Name: "work not repeated", State: PartPass,
		Detail: fmt.Sprintf("%s did not redo %s's work", e.From.Name, e.To.Name),
	}
	if repeats, n := x.repeats(rs, e); n > 0 {
		redo.State = PartFail
		redo.Detail = fmt.Sprintf("%s repeated %s's work after it returned: %s", e.From.Name, e.To.Name, listed(repeats, n, ", ", "repeats"))
	}
	return append(parts, redo), steps, true
}

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
func (x *Index) repeats(rs *Checks, e *agentgraph.Edge) ([]string, int) {
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
				found = append(found, repeat{
					run: x.position[run], at: start(c.Span), order: x.spanOrder(c.Span),
					text: fmt.Sprintf("%s %s", toolLabel(c), code(c.Args.Text, 80)),
				})
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
				found = append(found, repeat{
					run: x.position[o.From], dispatch: true, at: start(o.To.Span), order: o.To.Index,
					text: fmt.Sprintf("the same dispatch to %s again (span %s)", o.To.Name, o.To.Span.ID),
				})
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

// integrationFields: the return value and the sender's steps after it.
func (x *Index) integrationFields(e *agentgraph.Edge, steps []senderStep) ([]judge.Field, string) {
	rv := x.returnValue(e)
	if !rv.Found() {
		return nil, fmt.Sprintf("content capture disabled on the exporter: %s's return value was not captured", e.To.Name)
	}
	post := x.postTurn(steps)
	if post == "" {
		return nil, fmt.Sprintf("content capture disabled on the exporter: the content of %s's next step was not captured", e.From.Name)
	}
	return []judge.Field{
		{Name: "scope_prompt", Text: orNotCaptured(e.To.Input)},
		{Name: "return_value", Text: plainOutput(rv.Text)},
		{Name: "sender_post_turn", Text: post},
		{Name: "sender_output", Text: x.senderOutput(e)},
	}, ""
}
