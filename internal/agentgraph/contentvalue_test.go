package agentgraph

import (
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/require"
	"go.opentelemetry.io/collector/pdata/pcommon"
)

// contentValueTwoPass is ContentValue's definition: the message text when the content is
// a message format, then that text parsed as JSON when it parses. ContentValue computes it
// in one reading of the content (scanned; see TestContentValueScanAgrees).
func contentValueTwoPass(text string, roles MessageRoles) any {
	if t, ok := MessageText(text, roles); ok {
		text = t
	}
	if v, ok := ParseJSON(text); ok {
		return v
	}
	return text
}

// TestContentValueDecodesOnce: ContentValue gives what its two-pass definition gives, on
// every string attribute and event attribute of the real captures (prompts, chat
// messages, tool arguments and results, model requests of every dialect there) and on the
// edge cases of the formats, for both role sets.
func TestContentValueDecodesOnce(t *testing.T) {
	inputs := []string{
		"", "  ", "plain text", "42", " 4.5 ", "1e400", `"quoted"`, "null", "true", "{}", "[]",
		`{"a": 1} trailing`, `{"a": 1}]`, `{"a": 1} {"b": 2}`, `[1, 2`, "\u00a0{\"role\":\"user\",\"content\":\"hi\"}\u00a0",
		`[{"role": "user", "content": "hello"}, {"role": "assistant", "content": "{\"answer\": 42}"}]`,
		`[{"role": "assistant", "parts": [{"type": "text", "content": "sunny"}]}]`,
		`{"role": "assistant", "content": [{"type": "output_text", "text": "ok"}], "n": 1e400}`,
		`{"role": "assistant", "content": "x", "n": 12345678901234567890}`,
		`{"content": {"role": "model", "parts": [{"text": "[1, 2, 3]"}]}}`,
		`{"candidates": [{"content": {"role": "model", "parts": [{"text": "done"}]}}]}`,
		`[{"text": "a"}, {"text": "b"}]`, `[{"text": "a"}, {"other": 1}]`, `[{"role": "tool", "content": "r"}]`,
		`[{"role": "user"}, 3]`, `{"role": "human", "content": "7"}`,
	}
	paths, err := filepath.Glob(filepath.Join("..", "..", "testdata", "traces", "*.json"))
	require.NoError(t, err)
	require.NotEmpty(t, paths)
	addStrings := func(attrs pcommon.Map) {
		for _, v := range attrs.All() {
			if v.Type() == pcommon.ValueTypeStr {
				inputs = append(inputs, v.Str())
			}
		}
	}
	for _, p := range paths {
		for _, spans := range SpansOf(readTraces(t, p)) {
			for _, s := range spans {
				addStrings(s.Pdata.Attributes())
				for i := 0; i < s.Pdata.Events().Len(); i++ {
					addStrings(s.Pdata.Events().At(i).Attributes())
				}
			}
		}
	}
	messages := 0
	for _, in := range inputs {
		for _, roles := range []MessageRoles{AssistantRoles, UserRoles} {
			require.Equal(t, contentValueTwoPass(in, roles), ContentValue(in, roles), "content %q", in)
			if _, ok := MessageText(in, roles); ok {
				messages++
			}
		}
	}
	require.Greater(t, messages, 20, "the captures hold chat-message content")
}
