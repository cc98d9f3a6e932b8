package expect

import (
	"testing"

	"github.com/stretchr/testify/require"
)

// TestOutputExtraction: the final assistant text of a messages array, then JSON when it
// parses.
func TestOutputExtraction(t *testing.T) {
	tests := []struct {
		name, content string
		want          any
	}{
		{"plain text", "Paris: 18C", "Paris: 18C"},
		{"JSON object", `{"id": 10, "score": 0.5}`, map[string]any{"id": int64(10), "score": 0.5}},
		{"JSON string", `"hello"`, "hello"},
		{
			"OTel GenAI output messages", `[{"role":"assistant","parts":[{"type":"text","content":"{\"id\": 10}"}],"finish_reason":"stop"}]`,
			map[string]any{"id": int64(10)},
		},
		{"OTel parts: text parts only", `[{"role":"assistant","parts":[{"type":"tool_call","name":"x"},{"type":"text","content":"done"}]}]`, "done"},
		{"last assistant message with text", `[{"role":"user","content":"hi"},{"role":"assistant","content":"first"},` +
			`{"role":"tool","content":"r"},{"role":"assistant","content":""},{"role":"assistant","content":[{"type":"text","text":"final"}]}]`, "final"},
		{"OpenAI responses output_text", `[{"type":"message","role":"assistant","content":[{"type":"output_text","text":"hello there"}]}]`, "hello there"},
		{"single message object", `{"role":"assistant","content":"hello"}`, "hello"},
		{"Gemini response", `{"content":{"role":"model","parts":[{"text":"Paris: 18C"}]},"finishReason":"STOP"}`, "Paris: 18C"},
		{"Gemini candidates", `{"candidates":[{"content":{"role":"model","parts":[{"text":"a"},{"text":"b"}]}}]}`, "ab"},
		{"text blocks", `[{"text":"hello "},{"text":"world"}]`, "hello world"},
		{
			"messages without assistant text stay a list", `[{"role":"assistant","parts":[{"type":"tool_call","name":"x"}]}]`,
			[]any{map[string]any{"role": "assistant", "parts": []any{map[string]any{"type": "tool_call", "name": "x"}}}},
		},
		{"other JSON arrays stay lists", `[1, 2]`, []any{int64(1), int64(2)}},
		{"not one JSON value", `{"a":1} {"b":2}`, `{"a":1} {"b":2}`},
		{"big and fractional numbers", `[1e3, 1.5, 99999999999999999999]`, []any{1000.0, 1.5, 1e20}},
	}
	for _, tt := range tests {
		require.Equal(t, tt.want, contentValue(tt.content, assistantRoles), tt.name)
	}
}
