package rules

import (
	"bytes"
	"encoding/json"
	"math"
	"strconv"
	"strings"

	"go.opentelemetry.io/collector/pdata/pcommon"
	"go.opentelemetry.io/collector/pdata/ptrace"

	"github.com/otelcol-handoff/otelcol-handoff/internal/agentgraph"
)

// What the seed-001 expressions see of an agent invocation, derived from its spans.

// Run statuses (seed 001).
const (
	StatusCompleted        = "completed"
	StatusFailed           = "failed"
	StatusAwaitingApproval = "awaiting_approval"
)

// Observable markers of a run's status (documented in assertionexporter/README.md).
const (
	// AttrRunStatus on an agent span, set to one of the three statuses, is taken as is.
	AttrRunStatus = "agent.run.status"
	// EventAwaitingApproval on an agent span, or on one of its own tool spans, marks a run
	// that stopped at a pending approval.
	EventAwaitingApproval = "awaiting_approval"
	// ContextPrefix marks the attributes bound to context.* (root span, root agent span,
	// then resource).
	ContextPrefix = "test.context."
)

// runFacts are the bindings of expected_result for one invocation.
type runFacts struct {
	status string
	// statusWhy says which evidence decided the status.
	statusWhy string
	err       string
	output    any
	// outputFound is false when no output content was captured.
	outputFound bool
	outputFrom  string
}

// factsOf derives status, error and output of an invocation.
//
// status is "failed" when the agent's own span carries an error (status ERROR, error.type or
// an exception event: an unhandled error propagates to the agent span; errors the agent
// handled stay on its tool or LLM spans; framework control flow recorded as an error, such
// as LangGraph's ParentCommand, does not count), "awaiting_approval" when the agent span or
// one of its own tool spans has an "awaiting_approval" event or the agent span stopped at a
// LangGraph GraphInterrupt, else "completed". agent.run.status on the agent span, when it
// holds one of the three values, overrides all of that.
func factsOf(inv *agentgraph.Invocation) runFacts {
	f := runFacts{status: StatusCompleted, statusWhy: "no error on the agent span"}
	span := inv.Span
	switch e := span.Error; {
	case span.ControlFlow == agentgraph.ControlGraphInterrupt:
		// Not an error for agentgraph; for the run's status it is the pause a
		// human-in-the-loop approval makes.
		f.status, f.statusWhy = StatusAwaitingApproval, "GraphInterrupt on the agent span"
	case e != nil:
		f.status, f.statusWhy = StatusFailed, "error on the agent span ("+e.Source+")"
		f.err = e.Message
		if f.err == "" {
			f.err = e.Type
		}
	}
	if f.status == StatusCompleted && awaitingApproval(inv) {
		f.status, f.statusWhy = StatusAwaitingApproval, "event "+EventAwaitingApproval+" recorded"
	}
	if v, ok := span.Span.Attributes().Get(AttrRunStatus); ok {
		switch s := v.AsString(); s {
		case StatusCompleted, StatusFailed, StatusAwaitingApproval:
			f.status, f.statusWhy = s, "attribute "+AttrRunStatus
		}
	}
	if inv.Output.Found() {
		f.output, f.outputFound, f.outputFrom = contentValue(inv.Output.Text, assistantRoles), true, inv.Output.Source
	}
	return f
}

func awaitingApproval(inv *agentgraph.Invocation) bool {
	if hasEvent(inv.Span.Span, EventAwaitingApproval) {
		return true
	}
	for _, tc := range inv.ToolCalls {
		if hasEvent(tc.Span.Span, EventAwaitingApproval) {
			return true
		}
	}
	return false
}

func hasEvent(s ptrace.Span, name string) bool {
	events := s.Events()
	for i := 0; i < events.Len(); i++ {
		if events.At(i).Name() == name {
			return true
		}
	}
	return false
}

// contextOf binds context.*: attributes named test.context.KEY, from the resource of the
// trace's root span, then the root agent span, then the root span itself (later wins).
func contextOf(g *agentgraph.Graph) map[string]any {
	ctx := map[string]any{}
	add := func(attrs pcommon.Map) {
		attrs.Range(func(k string, v pcommon.Value) bool {
			if key, ok := strings.CutPrefix(k, ContextPrefix); ok && key != "" {
				ctx[key] = v.AsRaw()
			}
			return true
		})
	}
	if g.RootSpan != nil {
		add(g.RootSpan.Resource.Attributes())
	} else if g.Root != nil {
		add(g.Root.Span.Resource.Attributes())
	}
	if g.Root != nil {
		add(g.Root.Span.Span.Attributes())
	}
	if g.RootSpan != nil {
		add(g.RootSpan.Span.Attributes())
	}
	return ctx
}

var (
	assistantRoles = map[string]bool{"assistant": true, "model": true, "ai": true}
	userRoles      = map[string]bool{"user": true, "human": true}
)

// contentValue turns captured content into the value an expression sees: when the content
// is a chat-messages array (OTel GenAI {"role", "parts": [{"type":"text","content"}]},
// OpenAI {"role", "content": string | [{"type":"text","text"}]}), a single such message, a
// Gemini response ({"content": {"role": "model", "parts": [{"text"}]}}) or a list of text
// blocks ([{"text"}]), the text of the last message with one of roles (non-empty) is taken;
// then the text is parsed as JSON when it parses, else kept as a string.
func contentValue(text string, roles map[string]bool) any {
	if t, ok := messageText(text, roles); ok {
		text = t
	}
	if v, ok := parseJSON(text); ok {
		return v
	}
	return text
}

// messageText extracts the last non-empty text of a message with one of roles.
func messageText(text string, roles map[string]bool) (string, bool) {
	t := strings.TrimSpace(text)
	if t == "" || (t[0] != '[' && t[0] != '{') {
		return "", false
	}
	var v any
	if json.Unmarshal([]byte(t), &v) != nil {
		return "", false
	}
	switch v := v.(type) {
	case []any:
		if len(v) == 0 {
			return "", false
		}
		// A list of messages: the last one with a wanted role and some text.
		isMessages := true
		for _, it := range v {
			m, ok := it.(map[string]any)
			if !ok {
				return "", false
			}
			if _, ok := m["role"].(string); !ok {
				isMessages = false
			}
		}
		if isMessages {
			for i := len(v) - 1; i >= 0; i-- {
				m := v[i].(map[string]any)
				if roles[m["role"].(string)] {
					if s := partsText(m); s != "" {
						return s, true
					}
				}
			}
			return "", false
		}
		// A list of text blocks without roles (Strands, Bedrock): [{"text": ...}].
		return blocksText(v)
	case map[string]any:
		if role, ok := v["role"].(string); ok {
			if roles[role] {
				if s := partsText(v); s != "" {
					return s, true
				}
			}
			return "", false
		}
		// Gemini / Vertex response: {"content": {"role": "model", "parts": [...]}} or
		// {"candidates": [{"content": ...}]}.
		content, _ := v["content"].(map[string]any)
		if content == nil {
			if cands, ok := v["candidates"].([]any); ok && len(cands) > 0 {
				if c0, ok := cands[0].(map[string]any); ok {
					content, _ = c0["content"].(map[string]any)
				}
			}
		}
		if content != nil {
			if role, _ := content["role"].(string); roles[role] {
				if s := partsText(content); s != "" {
					return s, true
				}
			}
		}
	}
	return "", false
}

// partsText is the text of one message: a string content, or the text items of its content
// or parts list, concatenated.
func partsText(m map[string]any) string {
	if s, ok := m["content"].(string); ok {
		return s
	}
	var sb strings.Builder
	for _, key := range []string{"content", "parts"} {
		items, ok := m[key].([]any)
		if !ok {
			continue
		}
		for _, it := range items {
			switch it := it.(type) {
			case string:
				sb.WriteString(it)
			case map[string]any:
				typ, _ := it["type"].(string)
				if typ != "" && typ != "text" && typ != "output_text" && typ != "input_text" {
					continue
				}
				if s, ok := it["text"].(string); ok {
					sb.WriteString(s)
				} else if s, ok := it["content"].(string); ok {
					sb.WriteString(s)
				}
			}
		}
	}
	return sb.String()
}

func blocksText(items []any) (string, bool) {
	var sb strings.Builder
	for _, it := range items {
		m := it.(map[string]any)
		s, ok := m["text"].(string)
		if !ok {
			return "", false
		}
		sb.WriteString(s)
	}
	if sb.Len() == 0 {
		return "", false
	}
	return sb.String(), true
}

// parseJSON parses text as one JSON value. Integral numbers written without a fraction or
// exponent become int64 (so `params.a == 4` and `params.a + 1` behave as written), others
// float64.
func parseJSON(text string) (any, bool) {
	t := strings.TrimSpace(text)
	if t == "" {
		return nil, false
	}
	dec := json.NewDecoder(bytes.NewReader([]byte(t)))
	dec.UseNumber()
	var v any
	if dec.Decode(&v) != nil {
		return nil, false
	}
	if _, err := dec.Token(); err == nil {
		return nil, false // trailing data: not one JSON value
	}
	return normalizeNumbers(v), true
}

func normalizeNumbers(v any) any {
	switch v := v.(type) {
	case json.Number:
		s := v.String()
		if !strings.ContainsAny(s, ".eE") {
			if n, err := strconv.ParseInt(s, 10, 64); err == nil {
				return n
			}
		}
		f, err := v.Float64()
		if err != nil || math.IsInf(f, 0) {
			return s
		}
		return f
	case map[string]any:
		for k, x := range v {
			v[k] = normalizeNumbers(x)
		}
		return v
	case []any:
		for i, x := range v {
			v[i] = normalizeNumbers(x)
		}
		return v
	}
	return v
}

// paramsOf parses a tool call's arguments as a JSON object ({} when they are not one).
func paramsOf(tc *agentgraph.ToolCall) (map[string]any, bool) {
	if tc.Args.Found() {
		if v, ok := parseJSON(tc.Args.Text); ok {
			if m, ok := v.(map[string]any); ok {
				return m, true
			}
		}
	}
	return map[string]any{}, false
}

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
