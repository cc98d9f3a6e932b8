package agentgraph

import (
	"encoding/json"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"
)

// decodedCommandGoto is commandGoto's definition: the whole text decoded, then walked.
func decodedCommandGoto(s string) []string {
	if !strings.Contains(s, `"lg_name"`) || !strings.Contains(s, `"Command"`) {
		return nil
	}
	var v any
	if json.Unmarshal([]byte(s), &v) != nil {
		return nil
	}
	var out []string
	var walk func(v any, depth int)
	walk = func(v any, depth int) {
		if depth > 8 {
			return
		}
		switch x := v.(type) {
		case []any:
			for _, it := range x {
				walk(it, depth+1)
			}
		case map[string]any:
			if x["lg_name"] == "Command" {
				out = append(out, decodedGotoNames(x["goto"])...)
				return
			}
			for _, k := range sortedKeys(x) {
				walk(x[k], depth+1)
			}
		}
	}
	walk(v, 0)
	return out
}

func decodedGotoNames(v any) []string {
	switch x := v.(type) {
	case string:
		if x != "" && x != "__end__" {
			return []string{x}
		}
	case []any:
		var out []string
		for _, it := range x {
			out = append(out, decodedGotoNames(it)...)
		}
		return out
	case map[string]any:
		if n, ok := x["node"].(string); ok {
			return decodedGotoNames(n)
		}
	}
	return nil
}

// decodedResponseText is responseText's definition: the whole response decoded, then the
// strings under text and content keys gathered outside call objects.
func decodedResponseText(raw string) string {
	var v any
	if json.Unmarshal([]byte(raw), &v) != nil {
		return strings.TrimSpace(raw)
	}
	if s, ok := v.(string); ok {
		return strings.TrimSpace(s)
	}
	var parts []string
	seen := map[string]bool{}
	var walk func(v any, key string, depth int)
	walk = func(v any, key string, depth int) {
		if depth > 12 {
			return
		}
		switch x := v.(type) {
		case string:
			if t := strings.TrimSpace(x); t != "" && (key == "text" || key == "content") && !seen[t] {
				seen[t] = true
				parts = append(parts, t)
			}
		case []any:
			for _, it := range x {
				walk(it, key, depth+1)
			}
		case map[string]any:
			if t, _ := x["type"].(string); callPartTypes[t] {
				return
			}
			for _, k := range sortedKeys(x) {
				segs := strings.Split(k, ".")
				skip := false
				for _, seg := range segs {
					if nonTextKeys[seg] {
						skip = true
						break
					}
				}
				if !skip {
					walk(x[k], segs[len(segs)-1], depth+1)
				}
			}
		}
	}
	walk(v, "", 0)
	return strings.Join(parts, "\n")
}

// responseEdgeValues: shapes of LangGraph Commands and of model responses the captures
// may lack.
var responseEdgeValues = []string{
	`{"lg_name": "Command", "goto": "a"}`, `{"lg_name": "Command", "goto": "__end__"}`,
	`{"lg_name": "Command", "goto": ["a", {"lg_name": "Send", "node": "b"}, {"node": 3}, ["c"]], "update": {"lg_name": "Command", "goto": "x"}}`,
	`{"output": {"lg_name": "Command", "goto": ""}, "a": [{"lg_name": "Command"}, {"lg_name": "Command", "goto": "d"}]}`,
	`{"lg_name": 1, "x": {"lg_name": "Command", "goto": "e"}, "lg_name": "Command", "goto": "f"}`,
	strings.Repeat(`[`, 9) + `{"lg_name": "Command", "goto": "deep"}` + strings.Repeat(`]`, 9),
	strings.Repeat(`[`, 8) + `{"lg_name": "Command", "goto": "edge"}` + strings.Repeat(`]`, 8),
	`{"lg_name": "Command", "goto": "g"} x`, `{"lg_name": "Command", "goto": "h", "n": 1e999}`,
	`"  plain  "`, `  not json  `, `{"text": " a ", "content": "a", "parts": [{"text": "b"}, {"type": "tool_call", "text": "no"}]}`,
	`{"0.message.content": "flat", "0.message.tool_calls.0.tool_call.function.arguments": "{\"text\":\"no\"}"}`,
	`{"content": {"parts": [{"text": "x\u00e9\n"}, {"functionCall": {"name": "f"}}]}, "role": "model", "text": 5}`,
	`[{"type": "text", "content": "c1"}, {"type": "toolUse", "content": "no"}, {"text": "c1"}, {"text": "c2", "text": "c3"}]`,
	"{\"text\": \"bad\xff utf8\"}", strings.Repeat(`{"a":`, 13) + `{"text": "deep"}` + strings.Repeat(`}`, 13),
}

// TestCommandGotoScanAgrees: scanning for LangGraph Commands finds what decoding finds, on
// every value of the captures and the edge cases.
func TestCommandGotoScanAgrees(t *testing.T) {
	found := 0
	for _, v := range append(append(captureValues(t), edgeValues...), responseEdgeValues...) {
		want := decodedCommandGoto(v)
		require.Equal(t, want, commandGoto(v), "value %.300s", v)
		found += len(want)
	}
	require.Greater(t, found, 5, "the LangGraph captures return Commands")
}

// TestResponseTextScanAgrees: the text a response holds besides its calls, scanned, is
// what decoding the response gives, on every value of the captures and the edge cases.
func TestResponseTextScanAgrees(t *testing.T) {
	texts := 0
	for _, v := range append(append(captureValues(t), edgeValues...), responseEdgeValues...) {
		want := decodedResponseText(v)
		require.Equal(t, want, responseText(v), "value %.300s", v)
		if want != "" && want != strings.TrimSpace(v) {
			texts++
		}
	}
	require.Greater(t, texts, 100, "most JSON responses of the captures hold text")
}
