package rulestest

import (
	"encoding/json"

	"go.opentelemetry.io/collector/pdata/ptrace"
)

// LLM adds a chat span whose input (gen_ai.input.messages) is input ("" = not captured).
func (t *Trace) LLM(parent *Span, model, input string, start, end int) *Span {
	s := t.span(parent, "chat "+model, start, end)
	s.Attributes().PutStr("gen_ai.operation.name", "chat")
	s.Attributes().PutStr("gen_ai.request.model", model)
	if input != "" {
		s.Attributes().PutStr("gen_ai.input.messages", input)
	}
	return s
}

// Tools sets the tools offered to an agent (gen_ai.agent.tools, a JSON list of names):
// the receiver's handoff.allowed_tools.
func (s *Span) Tools(names ...string) *Span {
	b, _ := json.Marshal(names)
	s.Attributes().PutStr("gen_ai.agent.tools", string(b))
	return s
}

// Result sets a tool span's result (gen_ai.tool.call.result).
func (s *Span) Result(text string) *Span {
	s.Attributes().PutStr("gen_ai.tool.call.result", text)
	return s
}

// Error marks the span failed with an error type and message (status ERROR).
func (s *Span) Error(typ, msg string) *Span {
	s.Status().SetCode(ptrace.StatusCodeError)
	s.Status().SetMessage(msg)
	s.Attributes().PutStr("error.type", typ)
	return s
}

// UserMessages renders an OTel GenAI input-messages array of user texts.
func UserMessages(texts ...string) string {
	var msgs []map[string]any
	for _, t := range texts {
		msgs = append(msgs, map[string]any{"role": "user", "parts": []map[string]any{{"type": "text", "content": t}}})
	}
	b, _ := json.Marshal(msgs)
	return string(b)
}
