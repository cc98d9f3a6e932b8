package agentgraph

import (
	"encoding/json"
	"math"
	"regexp"
	"sort"
	"strconv"
	"strings"

	"go.opentelemetry.io/collector/pdata/pcommon"
)

// Content: how the frameworks' captured content reads as text and values. The chains say
// where content is; this file says what its formats mean (chat-message arrays of every
// dialect, JSON), so rules never parse a framework's format themselves.

// MessageRoles is a set of chat-message roles (user, assistant, ...).
type MessageRoles map[string]bool

var (
	// AssistantRoles are the roles of a model's own messages (OTel GenAI and OpenAI
	// "assistant", Gemini "model", LangChain "ai").
	AssistantRoles = MessageRoles{"assistant": true, "model": true, "ai": true}
	// UserRoles are the roles of the messages a run was given (LangChain "human").
	UserRoles = MessageRoles{"user": true, "human": true}
)

// ContentValue turns captured content into the value an expression sees: when the content
// is a chat-messages array (OTel GenAI {"role", "parts": [{"type":"text","content"}]},
// OpenAI {"role", "content": string | [{"type":"text","text"}]}), a single such message, a
// Gemini response ({"content": {"role": "model", "parts": [{"text"}]}}) or a list of text
// blocks ([{"text"}]), the text of the last message with one of roles (non-empty) is taken;
// then the text is parsed as JSON when it parses (ParseJSON), else kept as a string.
//
// The content is decoded once: the message formats are read from the same decoded value
// that is returned when it is none of them.
func ContentValue(text string, roles MessageRoles) any {
	v, ok, whole := decodeJSON(text)
	if !ok {
		return text
	}
	// A message format is only read from content that is one JSON array or object and
	// nothing else, every number a float64 (what MessageText's json.Unmarshal accepts).
	if t := strings.TrimSpace(text); whole && (t[0] == '[' || t[0] == '{') {
		if m, ok := messageTextOf(v, roles); ok && numbersFit(v) {
			if v, ok := ParseJSON(m); ok {
				return v
			}
			return m
		}
	}
	return normalizeNumbers(v)
}

// numbersFit reports whether every number of v (decoded with json.Number) is in float64's
// range, as json.Unmarshal into any requires.
func numbersFit(v any) bool {
	switch v := v.(type) {
	case json.Number:
		_, err := strconv.ParseFloat(string(v), 64)
		return err == nil
	case map[string]any:
		for _, x := range v {
			if !numbersFit(x) {
				return false
			}
		}
	case []any:
		for _, x := range v {
			if !numbersFit(x) {
				return false
			}
		}
	}
	return true
}

// MessageText extracts the last non-empty text of a message with one of roles from
// chat-message content (see ContentValue for the formats); ok is false when the content is
// not in one of them or no such message has text.
func MessageText(text string, roles MessageRoles) (string, bool) {
	t := strings.TrimSpace(text)
	if t == "" || (t[0] != '[' && t[0] != '{') {
		return "", false
	}
	var v any
	if json.Unmarshal([]byte(t), &v) != nil {
		return "", false
	}
	return messageTextOf(v, roles)
}

// messageTextOf is MessageText on decoded JSON (numbers as float64 or json.Number: only
// strings, lists and objects are read).
func messageTextOf(v any, roles MessageRoles) (string, bool) {
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

// ParseJSON parses text as one JSON value. Integral numbers written without a fraction or
// exponent become int64 (so `params.a == 4` and `params.a + 1` behave as written), others
// float64.
func ParseJSON(text string) (any, bool) {
	v, ok, _ := decodeJSON(text)
	if !ok {
		return nil, false
	}
	return normalizeNumbers(v), true
}

// decodeJSON decodes the first JSON value of text, numbers as json.Number. ok is ParseJSON's
// verdict (no further JSON value follows); whole reports that nothing but white space
// follows, the text then being exactly one JSON value (what json.Unmarshal accepts).
func decodeJSON(text string) (v any, ok, whole bool) {
	t := strings.TrimSpace(text)
	if t == "" {
		return nil, false, false
	}
	dec := json.NewDecoder(strings.NewReader(t))
	dec.UseNumber()
	if dec.Decode(&v) != nil {
		return nil, false, false
	}
	if dec.InputOffset() == int64(len(t)) {
		return v, true, true // t is trimmed: nothing follows
	}
	if _, err := dec.Token(); err == nil {
		return nil, false, false // trailing data: not one JSON value
	}
	return v, true, false
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

// outputKey marks attribute keys (and event names) that hold output, not input.
var outputKey = regexp.MustCompile(`(?i)output|completion|response|choice|result`)

// InputText is the input-side content of a span, whatever the dialect: every string (and
// map or list) attribute and event attribute whose key (and event name) does not name
// output (output, completion, response, choice, result), in key order, one per line. It is
// what an LLM call was given, read without a chain: the rubrics look for values in it, and
// a value anywhere in the prompt counts.
func (s *Span) InputText() string {
	var parts []string
	add := func(attrs pcommon.Map) {
		keys := make([]string, 0, attrs.Len())
		attrs.Range(func(k string, _ pcommon.Value) bool {
			if !outputKey.MatchString(k) {
				keys = append(keys, k)
			}
			return true
		})
		sort.Strings(keys)
		for _, k := range keys {
			v, _ := attrs.Get(k)
			switch v.Type() {
			case pcommon.ValueTypeStr:
				parts = append(parts, v.Str())
			case pcommon.ValueTypeMap, pcommon.ValueTypeSlice:
				parts = append(parts, v.AsString())
			}
		}
	}
	add(s.Pdata.Attributes())
	events := s.Pdata.Events()
	for i := 0; i < events.Len(); i++ {
		if !outputKey.MatchString(events.At(i).Name()) {
			add(events.At(i).Attributes())
		}
	}
	return strings.Join(parts, "\n")
}
