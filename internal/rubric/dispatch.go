package rubric

import (
	"fmt"

	"github.com/otelcol-handoff/otelcol-handoff/internal/agentgraph"
	"github.com/otelcol-handoff/otelcol-handoff/internal/judge"
)

// dispatchFields: the sender's pre-handoff state, the dispatch call and the receiver
// catalog.
func (x *Index) dispatchFields(e *agentgraph.Edge) ([]judge.Field, string) {
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
