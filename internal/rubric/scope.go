package rubric

import (
	"fmt"
	"sort"

	"github.com/otelcol-handoff/otelcol-handoff/internal/agentgraph"
	"github.com/otelcol-handoff/otelcol-handoff/internal/cluster"
	"github.com/otelcol-handoff/otelcol-handoff/internal/judge"
	"github.com/otelcol-handoff/otelcol-handoff/internal/textsafe"
)

// builtinPlumbing are framework tools that carry output or control, never work: they are
// not held against handoff.allowed_tools.
var builtinPlumbing = map[string]bool{
	"strands_structured_output": true, "transfer_to_agent": true, "handoff_to_agent": true,
	"final_result": true, "final_answer": true,
}

// plumbing reports tool calls that are framework plumbing of inv: the built-in list, the
// step's ignoredTools, transfer calls (transfer_to_X, handoff_to_X) and the calls that
// carried inv's own transfers.
func (rs *Checks) plumbing(x *Index, tc *agentgraph.ToolCall, inv *agentgraph.Invocation) bool {
	if rs.ignored[tc.Name] || builtinPlumbing[tc.Name] || transferByName.MatchString(tc.Name) {
		return true
	}
	return x.transferVia[tc.Span] == inv
}

// allowedNames reads tool names from handoff.allowed_tools entries, which may be names or
// JSON tool definitions (the model's agentgraph.ToolNamesOf).
func allowedNames(list []string) []string { return agentgraph.ToolNamesOf(list) }

// scopeParts: the receiver called only tools in handoff.allowed_tools, and used no
// identifier the sender never supplied.
func (rs *Checks) scopeParts(x *Index, e *agentgraph.Edge) []Part {
	return []Part{rs.allowedToolsPart(x, e), rs.contextSuppliedPart(x, e)}
}

// allowedToolsPart: the receiver called only tools in handoff.allowed_tools.
func (rs *Checks) allowedToolsPart(x *Index, e *agentgraph.Edge) Part {
	r := e.To
	tools := Part{Name: "allowed tools"}
	if r.AllowedTools == nil {
		tools.Detail = fmt.Sprintf("no handoff.allowed_tools captured for %s", r.Name)
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
			tools.State = PartFail
			tools.Detail = fmt.Sprintf("%s called %s, outside handoff.allowed_tools [%s]", r.Name,
				listed(outside, nOutside, ", ", "calls"), listed(names, len(names), ", ", "tools"))
		} else {
			tools.State = PartPass
			tools.Detail = fmt.Sprintf("%s made %s, all in handoff.allowed_tools", r.Name, textsafe.Plural(checked, "tool call", "tool calls"))
		}
	}
	return tools
}

// contextSuppliedPart: the receiver used no identifier the sender never supplied.
func (rs *Checks) contextSuppliedPart(x *Index, e *agentgraph.Edge) Part {
	r := e.To
	ctx := Part{Name: "context supplied", Cluster: cluster.DroppedConstraint}
	if !r.Input.Found() && !e.Reason.Found() {
		ctx.Detail = fmt.Sprintf("what %s received was not captured (content capture disabled on the exporter)", r.Name)
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
						invented = append(invented, fmt.Sprintf("%s in %s", quote(shownIdentifier(id, c.tc.Args.Text), 40), toolLabel(c.tc)))
					}
				}
			}
		}
	}
	switch {
	case nInvented > 0:
		ctx.State = PartFail
		ctx.Detail = fmt.Sprintf("%s used context %s never supplied: %s (not in its input, the dispatch, or an earlier result)",
			r.Name, e.From.Name, listed(invented, nInvented, ", ", "identifiers"))
	case len(calls) == 0:
		ctx.State = PartPass
		ctx.Detail = fmt.Sprintf("%s made no tool call with arguments", r.Name)
	default:
		ctx.State = PartPass
		ctx.Detail = fmt.Sprintf("every identifier in %s's tool arguments was supplied", r.Name)
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
func (rs *Checks) callIdentifiers(x *Index, r *agentgraph.Invocation) (calls []identifiedCall, needles []string) {
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
func (x *Index) suppliedTexts(e *agentgraph.Edge, needles []string) *substrings {
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

// scopeFields: the dispatched scope, the allowed tools and the receiver's turn.
func (x *Index) scopeFields(e *agentgraph.Edge) ([]judge.Field, string) {
	if !e.To.Input.Found() && !e.Reason.Found() {
		return nil, fmt.Sprintf("content capture disabled on the exporter: %s's input was not captured", e.To.Name)
	}
	fields := []judge.Field{
		{Name: "scope_prompt", Text: orNotCaptured(e.To.Input)},
		{Name: "dispatch_call", Text: orNotCaptured(e.Reason)},
		{Name: "allowed_tools", Text: tools(e.To.AllowedTools)},
	}
	if e.Context.Found() {
		fields = append(fields, judge.Field{Name: "context_summary", Text: e.Context.Text})
	}
	return append(fields, judge.Field{Name: "receiver_trace", Text: receiverTurn(e.To)}), ""
}
