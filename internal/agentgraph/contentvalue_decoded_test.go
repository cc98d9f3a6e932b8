package agentgraph

import (
	"encoding/json"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// sharedCorpusFiles are the OTLP files of the shared corpus (shared/corpus/otlp in a
// directory above the repository: beside the checkout, or further up from a worktree), or
// none when there is no such folder (a fresh clone, CI). Its Phoenix traces are under the
// Elastic License 2.0 and not copied into testdata (testdata/corpus/SOURCES.md); the rest of
// it is in testdata/corpus, which the tests always read.
func sharedCorpusFiles(t testing.TB) []string {
	dir, err := filepath.Abs(".")
	require.NoError(t, err)
	for {
		files, err := filepath.Glob(filepath.Join(dir, "shared", "corpus", "otlp", "*.json"))
		require.NoError(t, err)
		if len(files) > 0 {
			return files
		}
		parent := filepath.Dir(dir)
		if parent == dir {
			t.Logf("no shared/corpus/otlp above the package: its Phoenix traces are not read")
			return nil
		}
		dir = parent
	}
}

// contentValueDecoded is ContentValue as it was before it scanned: the whole content
// decoded into any (numbers as json.Number), the message formats read from the decoded
// value. ContentValue must return exactly what it returns.
func contentValueDecoded(text string, roles MessageRoles) any {
	v, ok, whole := decodeJSON(text)
	if !ok {
		return text
	}
	if t := strings.TrimSpace(text); whole && (t[0] == '[' || t[0] == '{') {
		if m, ok := decodedMessageText(v, roles); ok && numbersFit(v) {
			if v, ok := ParseJSON(m); ok {
				return v
			}
			return m
		}
	}
	return normalizeNumbers(v)
}

// parseJSONDecoded is ParseJSON as it was: encoding/json's decoder (json.Number), then
// normalizeNumbers.
func parseJSONDecoded(text string) (any, bool) {
	v, ok, _ := decodeJSON(text)
	if !ok {
		return nil, false
	}
	return normalizeNumbers(v), true
}

// messageTextDecoded is MessageText as it was: json.Unmarshal, then the decoded value read.
func messageTextDecoded(text string, roles MessageRoles) (string, bool) {
	t := strings.TrimSpace(text)
	if t == "" || (t[0] != '[' && t[0] != '{') {
		return "", false
	}
	var v any
	if json.Unmarshal([]byte(t), &v) != nil {
		return "", false
	}
	return decodedMessageText(v, roles)
}

func decodedMessageText(v any, roles MessageRoles) (string, bool) {
	switch v := v.(type) {
	case []any:
		if len(v) == 0 {
			return "", false
		}
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
					if s := decodedPartsText(m); s != "" {
						return s, true
					}
				}
			}
			return "", false
		}
		texts := make([]string, len(v))
		for i, it := range v {
			var ok bool
			if texts[i], ok = it.(map[string]any)["text"].(string); !ok {
				return "", false
			}
		}
		joined := strings.Join(texts, "")
		return joined, joined != ""
	case map[string]any:
		if role, ok := v["role"].(string); ok {
			if roles[role] {
				if s := decodedPartsText(v); s != "" {
					return s, true
				}
			}
			return "", false
		}
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
				if s := decodedPartsText(content); s != "" {
					return s, true
				}
			}
		}
	}
	return "", false
}

func decodedPartsText(m map[string]any) string {
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

// contentEdgeValues are message-format edge cases the captures may lack: duplicate keys
// (the last counts), roles of other types, empty texts, part types, escapes, numbers out
// of range in a replaced member, Gemini shapes with the wrong types, white space.
var contentEdgeValues = []string{
	`[{"role": "assistant", "content": "a"}, {"role": "assistant", "content": ""}]`,
	`[{"role": "assistant", "content": "a"}, {"role": 1, "content": "b"}]`,
	`[{"role": "assistant", "content": "a"}, {"text": "b"}]`, `[{"text": "a"}, {"text": ""}]`,
	`[{"text": ""}]`, `[{"text": 1}]`, `[{"text": "a", "text": 2}]`, `[{"text": 2, "text": "a"}]`,
	`[{"role": "user", "role": "assistant", "content": "x"}]`, `{"role": "assistant", "role": null, "content": {"role": "model", "parts": ["p"]}}`,
	`{"role": "assistant", "content": "x", "n": 1e400, "n": 1}`, `{"role": "assistant", "content": "x", "n": 1, "n": 1e400}`,
	`[{"role": "assistant", "content": "1e400"}]`, `[{"role": "assistant", "content": "12345678901234567890"}]`,
	`{"role": "assistant", "content": [{"type": "text", "text": "a"}, {"type": "image", "text": "b"}, {"type": 3, "text": "c"}, {"content": "d"}, {"text": 1, "content": "e"}, "f", 7, null], "parts": [{"type": "input_text", "text": "g"}, "h"]}`,
	`{"role": "assistant", "content": null, "parts": [{"text": "p"}]}`, `{"role": "assistant", "content": ""}`,
	`{"role": "assistant", "content": "{\"a\": [1, 2.5, 3e2, -0, 9223372036854775808]}"}`,
	`{"role": "assistant", "content": "\u00e9\ud83d\ude00 \"q\" \\ \/"}`, "{\"role\": \"assistant\", \"content\": \"\xff\xfe\"}",
	`{"content": "text", "candidates": [{"content": {"role": "model", "parts": [{"text": "c"}]}}]}`,
	`{"content": null, "candidates": [{"content": {"role": "model", "parts": [{"text": "c"}]}}]}`,
	`{"candidates": []}`, `{"candidates": [1]}`, `{"candidates": [{"content": "x"}]}`, `{"candidates": {"content": {}}}`,
	`{"content": {"parts": [{"text": "no role"}]}}`, `{"content": {"role": "model", "parts": []}}`,
	`{"content": {"role": "model", "parts": [{"text": "a"}]}, "content": {"role": "user", "parts": [{"text": "b"}]}}`,
	" \t\n[ { \"role\" : \"ai\" , \"content\" : [ \"x\" , { \"text\" : \"y\" } ] } ] \r\n",
	"\u2003[{\"role\": \"model\", \"parts\": [{\"text\": \"[1, 2]\"}]}]\u2003", `[{"role": "assistant", "content": "x"}] [1]`,
	`[{"role": "assistant", "content": "x"}]]`, `[{"role": "assistant", "content": "x"},]`, `[[{"role": "assistant", "content": "x"}]]`,
	`[-0, 1.0, 1E2, 9223372036854775807, 9223372036854775808, -9223372036854775809, 1e400, -1e400, 1e-400, 0.5e1]`,
	`{"a": {}, "b": [], "c": [[], {}], "d": null, "e": true, "f": false, "a": {"x": "\u0041\n"}}`, ` "x" `, `-1`, `tru`, `nul`,
	`{"role": "ai", "content": " 42 "}`, `{"role": "ai", "content": "4 2"}`, `{"role": "ai", "content": "{\"a\":1} x"}`,
}

// TestContentValueScanAgrees: ContentValue, MessageText and ParseJSON, scanning, return
// exactly what decoding the content gave (contentValueDecoded, messageTextDecoded,
// parseJSONDecoded), on every attribute
// value of testdata/traces, testdata/corpus and the shared corpus and on the edge cases,
// for both role sets.
func TestContentValueScanAgrees(t *testing.T) {
	messages := 0
	inputs := append(append(captureValues(t), edgeValues...), contentEdgeValues...)
	for _, in := range inputs {
		for _, roles := range []MessageRoles{AssistantRoles, UserRoles} {
			require.Equal(t, contentValueDecoded(in, roles), ContentValue(in, roles), "content %.300q", in)
			want, wantOK := parseJSONDecoded(in)
			got, ok := ParseJSON(in)
			require.Equal(t, wantOK, ok, "content %.300q", in)
			require.Equal(t, want, got, "content %.300q", in)
			text, textOK := messageTextDecoded(in, roles)
			gotText, ok := MessageText(in, roles)
			require.Equal(t, textOK, ok, "content %.300q", in)
			require.Equal(t, text, gotText, "content %.300q", in)
			if ok {
				messages++
			}
		}
	}
	require.Greater(t, messages, 100, "the captures hold chat-message content")
}

// FuzzContentValue: ContentValue, MessageText and ParseJSON agree with their decoding
// definitions on any input, and ContentPreview with ContentValue. The seeds are the edge cases; run it with -fuzz=FuzzContentValue.
func FuzzContentValue(f *testing.F) {
	for _, s := range append(append([]string{}, edgeValues...), contentEdgeValues...) {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		want, wantOK := parseJSONDecoded(s)
		if got, ok := ParseJSON(s); ok != wantOK || !equalValues(want, got) {
			t.Fatalf("ParseJSON(%q) = %#v, %v; decoding gives %#v, %v", s, got, ok, want, wantOK)
		}
		for _, roles := range []MessageRoles{AssistantRoles, UserRoles} {
			if want, got := contentValueDecoded(s, roles), ContentValue(s, roles); !equalValues(want, got) {
				t.Fatalf("ContentValue(%q) = %#v, decoding gives %#v", s, got, want)
			}
			for _, n := range []int{3, 201} {
				if ok, full, preview := previewAgrees(s, roles, n); !ok {
					t.Fatalf("ContentPreview(%q, %d) encodes to %s, the full value to %s", s, n, preview, full)
				}
			}
			want, wantOK := messageTextDecoded(s, roles)
			if got, ok := MessageText(s, roles); got != want || ok != wantOK {
				t.Fatalf("MessageText(%q) = %q, %v; decoding gives %q, %v", s, got, ok, want, wantOK)
			}
		}
	})
}

// equalValues compares decoded values as require.Equal does (types included; NaN cannot
// occur in JSON).
func equalValues(a, b any) bool {
	return assert.ObjectsAreEqual(a, b)
}

// TestSkipStringEscapes: skipString, finding quotes with IndexByte, ends each string of
// valid JSON where the byte-by-byte walk it replaced ends it (escaped quotes and runs of
// backslashes of both parities).
func TestSkipStringEscapes(t *testing.T) {
	walk := func(b string, i int) int {
		for i++; i < len(b); i++ {
			switch b[i] {
			case '\\':
				i++
			case '"':
				return i + 1
			}
		}
		return i
	}
	for _, s := range []string{`""`, `"a"`, `"\""`, `"\\"`, `"\\\""`, `"\\\\"`, `"a\"b\\"`, `"\\\\\"x\\"`, `"\u0022"`, `"é\"ü"`} {
		b := `[` + s + `, "tail"]`
		require.Equal(t, walk(b, 1), skipString(b, 1), "string %s", s)
		require.Equal(t, 1+len(s), skipString(b, 1), "string %s", s)
	}
}

// BenchmarkContentValue: ContentValue against its decoding definition on the output of
// every invocation of the bundled captures (what expected_result binds as output).
func BenchmarkContentValue(b *testing.B) {
	var outputs []string
	for _, p := range corpusFiles(b) {
		for _, g := range BuildAll(readTraces(b, p), Options{}) {
			for _, inv := range g.Invocations {
				if inv.Output.Found() {
					outputs = append(outputs, inv.Output.Text)
				}
			}
		}
	}
	for _, impl := range []struct {
		name string
		fn   func(string, MessageRoles) any
	}{{"decoded", contentValueDecoded}, {"scanned", ContentValue}} {
		b.Run(impl.name, func(b *testing.B) {
			b.ReportAllocs()
			i := 0
			for b.Loop() {
				impl.fn(outputs[i%len(outputs)], AssistantRoles)
				i++
			}
		})
	}
}

// previewAgrees reports whether ContentPreview(s, roles, n) encodes (encoding/json, as a
// result's quote does) to the same first n bytes as ContentValue(s, roles), and is the same
// value when n exceeds that encoding.
func previewAgrees(s string, roles MessageRoles, n int) (ok bool, full, preview []byte) {
	fullV, previewV := ContentValue(s, roles), ContentPreview(s, roles, n)
	full, _ = json.Marshal(fullV)
	preview, _ = json.Marshal(previewV)
	if n > len(full) {
		return assert.ObjectsAreEqual(fullV, previewV), full, preview
	}
	return len(preview) >= n && string(preview[:n]) == string(full[:n]), full, preview
}

// TestContentPreviewAgrees: the preview's encoding agrees with the full value's on the
// bytes asked for, on every attribute value of the captures and the edge cases, at cuts
// from 1 byte to more than any value; and the preview decodes less of a large value.
func TestContentPreviewAgrees(t *testing.T) {
	cut := 0
	for _, in := range append(append(captureValues(t), edgeValues...), contentEdgeValues...) {
		for _, roles := range []MessageRoles{AssistantRoles, UserRoles} {
			for _, n := range []int{1, 2, 7, 64, 201, 1 << 30} {
				ok, full, preview := previewAgrees(in, roles, n)
				require.True(t, ok, "content %.300q, n=%d:\nfull    %.400s\npreview %.400s", in, n, full, preview)
				if len(preview) < len(full) {
					cut++
				}
			}
		}
	}
	require.Greater(t, cut, 1000, "large values are cut")
}
