package expect

import (
	"encoding/json"

	"github.com/otelcol-handoff/otelcol-handoff/internal/agentgraph"
)

// What the seed-001 expressions see of an agent invocation: the model's normalized run
// status and output (internal/agentgraph reads the spans).

// Run statuses (seed 001), as the model derives them.
const (
	StatusCompleted        = agentgraph.StatusCompleted
	StatusFailed           = agentgraph.StatusFailed
	StatusAwaitingApproval = agentgraph.StatusAwaitingApproval
)

// Observable markers of a run's status and of the test context (documented in
// assertionexporter/README.md; read by the model).
const (
	// AttrRunStatus on an agent span, set to one of the three statuses, is taken as is.
	AttrRunStatus = agentgraph.AttrRunStatus
	// EventAwaitingApproval on an agent span, or on one of its own tool spans, marks a run
	// that stopped at a pending approval.
	EventAwaitingApproval = agentgraph.EventAwaitingApproval
	// ContextPrefix marks the attributes bound to context.* (root span, root agent span,
	// then resource).
	ContextPrefix = agentgraph.ContextPrefix
)

// runFacts are the bindings of expected_result for one invocation.
type runFacts struct {
	status string
	// statusWhy says which evidence decided the status.
	statusWhy string
	err       string
	// outputText is the captured output content; output its value (contentValue),
	// decoded only for an expression that reads it (TraceEval.output: outputDecoded).
	outputText    string
	output        any
	outputDecoded bool
	// outputFound is false when no output content was captured.
	outputFound bool
	outputFrom  string
	// shown is the run as expected_result's actual text quotes it: status, error and
	// output (TraceEval.shown, once per run for every case on the trace; "" until read).
	shown string
}

// factsOf binds status, error and output of an invocation: the model's run status
// (agentgraph.Invocation.Status) and its output content, where a chat-messages array gives
// its last assistant message (its value is decoded when read: TraceEval.output).
func factsOf(inv *agentgraph.Invocation) runFacts {
	st := inv.Status()
	f := runFacts{status: st.State, statusWhy: st.Why, err: st.Error}
	if inv.Output.Found() {
		f.outputText, f.outputFound, f.outputFrom = inv.Output.Text, true, inv.Output.Source
	}
	return f
}

var (
	assistantRoles = agentgraph.AssistantRoles
	userRoles      = agentgraph.UserRoles
)

// contentValue is the value an expression sees of captured content
// (agentgraph.ContentValue).
func contentValue(text string, roles agentgraph.MessageRoles) any {
	return agentgraph.ContentValue(text, roles)
}

// messageText extracts the last non-empty text of a message with one of roles
// (agentgraph.MessageText).
func messageText(text string, roles agentgraph.MessageRoles) (string, bool) {
	return agentgraph.MessageText(text, roles)
}

// parseJSON parses text as one JSON value, integers as int64 (agentgraph.ParseJSON).
func parseJSON(text string) (any, bool) { return agentgraph.ParseJSON(text) }

// payloadOf is what a trigger carried: when the trigger has a delegating call or explicit
// handoff with arguments (the transfer or agent-as-tool call's arguments, or handoff.reason),
// those arguments — or their "payload" member, the seed's trigger_agent(agent_name,
// payload, wait_for_response) convention; otherwise the receiver's input, where a
// chat-messages array gives its last user message. raw is the text; value is raw parsed as
// JSON when it parses. found is false when neither was captured.
func payloadOf(t *trigger) (value any, raw, from string, found bool) {
	if t.args.Found() {
		if v, ok := parseJSON(t.args.Text); ok {
			if m, ok := v.(map[string]any); ok {
				if p, ok := m["payload"]; ok {
					if s, ok := p.(string); ok {
						return contentValue(s, userRoles), s, t.args.Source + ".payload", true
					}
					b, _ := json.Marshal(p)
					return p, string(b), t.args.Source + ".payload", true
				}
			}
			return v, t.args.Text, t.args.Source, true
		}
		return t.args.Text, t.args.Text, t.args.Source, true
	}
	if t.receiver != nil && t.receiver.Input.Found() {
		in := t.receiver.Input
		text := in.Text
		if s, ok := messageText(text, userRoles); ok {
			text = s
		}
		if v, ok := parseJSON(text); ok {
			return v, text, in.Source, true
		}
		return text, text, in.Source, true
	}
	return nil, "", "", false
}
