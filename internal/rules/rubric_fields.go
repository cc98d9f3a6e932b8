package rules

import (
	"fmt"
	"strings"

	"github.com/otelcol-handoff/otelcol-handoff/internal/agentgraph"
	"github.com/otelcol-handoff/otelcol-handoff/internal/judge"
)

// What the judge reads per rubric of EXPECT_HANDOFF_RUBRICS (step_rubrics.go).

// ---- what the judge reads per rubric ----

func tools(list []string) string {
	if list == nil {
		return "(not captured)"
	}
	names := allowedNames(list)
	return strings.Join(names, ", ")
}

// dispatchFields: the sender's pre-handoff state, the dispatch call and the receiver
// catalog.
func (x *dagIndex) dispatchFields(e *agentgraph.Edge) ([]judge.Field, string) {
	if !e.To.Input.Found() && !e.Reason.Found() {
		return nil, fmt.Sprintf("content capture disabled on the exporter: neither the dispatch's arguments nor %s's input were captured", e.To.Name)
	}
	catalog := "agents in this run: " + x.catalog(e.From.Name)
	if e.From.AllowedTools != nil {
		catalog += "\ntools offered to " + e.From.Name + ": " + tools(e.From.AllowedTools)
	}
	fields := []judge.Field{
		{Name: "sender", Text: e.From.Name},
		{Name: "sender_pre_state", Text: orNotCaptured(e.From.Input)},
		{Name: "dispatch_call", Text: fmt.Sprintf("to %s (%s)\n%s", e.To.Name, e.Detection, orNotCaptured(e.Reason))},
		{Name: "scope_prompt", Text: orNotCaptured(e.To.Input)},
		{Name: "allowed_tools", Text: tools(e.To.AllowedTools)},
		{Name: "receiver_catalog", Text: catalog},
	}
	return fields, ""
}

// scopeFields: the dispatched scope, the allowed tools and the receiver's turn.
func (x *dagIndex) scopeFields(e *agentgraph.Edge) ([]judge.Field, string) {
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

// integrationFields: the return value and the sender's steps after it.
func (x *dagIndex) integrationFields(e *agentgraph.Edge, steps []senderStep) ([]judge.Field, string) {
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

// recoveryFields: the errors, the receiver's turn and what the sender did next.
func (x *dagIndex) recoveryFields(e *agentgraph.Edge, eps []episode) []judge.Field {
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

// postTurn renders the sender's next steps (at most 5), each step's text read once per
// trace (the handoffs of a fan-out share their next steps).
func (x *dagIndex) postTurn(steps []senderStep) string {
	var b strings.Builder
	for i, st := range steps {
		if i == shownSteps {
			more := fmt.Sprint(len(steps) - shownSteps)
			if len(steps) == maxNextSteps {
				more += " or more" // nextSteps looks no further
			}
			fmt.Fprintf(&b, "(%s more steps)\n", more)
			break
		}
		if strings.TrimSpace(st.text) == "" {
			continue
		}
		fmt.Fprintf(&b, "%s:\n%s\n", st.label, x.stepLeafText(&st))
	}
	return strings.TrimSpace(b.String())
}

// senderOutput is the output of the sender's last run.
func (x *dagIndex) senderOutput(e *agentgraph.Edge) string {
	if run := x.lastOutputRun(e); run != nil {
		return plainOutput(run.Output.Text)
	}
	return "(not captured)"
}

func orNotCaptured(v agentgraph.Value) string {
	if v.Found() {
		return v.Text
	}
	return "(not captured)"
}
