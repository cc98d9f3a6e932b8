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
// A message format is only read from content that is one JSON array or object and nothing
// else, every number of its decoded value in float64's range. The message is found by
// scanning the content (jsonscan.go), not decoding it: only the strings read and the
// message text are decoded; the content is decoded only when it is none of the formats.
func ContentValue(text string, roles MessageRoles) any {
	t := strings.TrimSpace(text)
	if valid, fit := jsonContainer(t); valid {
		var v any
		decoded := false
		if !fit {
			// A number out of range may sit in a member a later duplicate key replaces:
			// the decoded value decides, as a decoded map keeps only the last.
			v, _, _ = decodeJSON(t)
			decoded, fit = true, numbersFit(v)
		}
		if fit {
			if m, ok := rawMessageText(t, roles); ok {
				if v, ok := ParseJSON(m); ok {
					return v
				}
				return m
			}
		}
		if !decoded {
			return scannedValue(t) // every number fits: as decoding and normalizing gives
		}
		return normalizeNumbers(v)
	}
	if v, ok := ParseJSON(t); ok {
		return v
	}
	return text
}

// jsonContainer reports whether t is one valid JSON array or object, and whether every
// number in it fits a float64 (checkJSON).
func jsonContainer(t string) (valid, fits bool) {
	if t == "" || (t[0] != '[' && t[0] != '{') {
		return false, false
	}
	return checkJSON(t)
}

// ContentPreview is ContentValue(text, roles) cut to what the first n bytes of its JSON
// encoding (encoding/json's: map keys sorted, HTML escaped) show: the members and elements
// whose encoding starts after those bytes are left out, so that the two encodings agree on
// at least their first n bytes, and entirely when nothing is left out. A quote of the value
// kept to n bytes needs no more, and the rest of the content is not decoded.
func ContentPreview(text string, roles MessageRoles, n int) any {
	t := strings.TrimSpace(text)
	if valid, fit := jsonContainer(t); !valid || !fit {
		return ContentValue(text, roles)
	}
	// As ContentValue when every number fits: the message text, parsed when it parses,
	// or the content itself.
	if m, ok := rawMessageText(t, roles); ok {
		if mt := strings.TrimSpace(m); mt != "" && validJSON(mt) {
			v, _, _ := previewValue(mt, skipSpace(mt, 0), n)
			return v
		}
		if v, ok := ParseJSON(m); ok {
			return v
		}
		return m
	}
	v, _, _ := previewValue(t, 0, n)
	return v
}

// previewValue is scanValue keeping only what the first budget bytes of the value's
// encoding show; shown is a lower bound of how many leading bytes of the encoding of what
// it returns agree with the full value's (all of them, its whole length, when nothing was
// left out). Every byte of a decoded string encodes to at least one byte.
func previewValue(raw string, i, budget int) (v any, end, shown int) {
	switch raw[i] {
	case '{':
		end = skipValue(raw, i)
		members, _ := rawMembers(raw[i:end])
		m := make(map[string]any, len(members))
		shown = 1 // {
		for j, mb := range members {
			if shown >= budget {
				return m, end, shown // the encodings part at the next member
			}
			if j > 0 {
				shown++ // ,
			}
			shown += len(mb.key) + 3 // "key":
			x, _, s := previewValue(mb.val, 0, budget-shown)
			m[mb.key] = x
			shown += s
		}
		return m, end, shown + 1 // }
	case '[':
		a := []any{}
		shown = 1
		j := skipSpace(raw, i+1)
		for raw[j] != ']' {
			if shown >= budget {
				return a, skipValue(raw, i), shown
			}
			if len(a) > 0 {
				shown++
			}
			x, e, s := previewValue(raw, j, budget-shown)
			a = append(a, x)
			shown += s
			if j = skipSpace(raw, e); raw[j] == ',' {
				j = skipSpace(raw, j+1)
			}
		}
		return a, j + 1, shown + 1 // ]
	case '"':
		end = skipString(raw, i)
		s, _ := rawString(raw[i:end])
		return s, end, len(s) + 2
	}
	v, end = scanValue(raw, i)
	return v, end, 1 // a number, true, false or null: at least one byte
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
// not in one of them, does not decode (json.Unmarshal's verdict: decodable) or no such
// message has text.
func MessageText(text string, roles MessageRoles) (string, bool) {
	t := strings.TrimSpace(text)
	if t == "" || (t[0] != '[' && t[0] != '{') || !decodable(t) {
		return "", false
	}
	return rawMessageText(t, roles)
}

// rawMessageText is MessageText on the valid JSON text raw (trimmed, an array or object),
// read by scanning: the last of duplicate keys counts, as in a decoded map.
func rawMessageText(raw string, roles MessageRoles) (string, bool) {
	if raw[0] == '[' {
		var elems []string
		isMessages, isObjects := true, true
		rawElements(raw, func(it string) {
			if it[0] != '{' {
				isObjects = false
				return
			}
			if role, ok := memberOf(it, "role"); !ok || role[0] != '"' {
				isMessages = false
			}
			elems = append(elems, it)
		})
		if len(elems) == 0 || !isObjects {
			return "", false
		}
		if !isMessages {
			// A list of text blocks without roles (Strands, Bedrock): [{"text": ...}].
			return blocksText(elems)
		}
		// A list of messages: the last one with a wanted role and some text.
		for i := len(elems) - 1; i >= 0; i-- {
			if s := roleText(elems[i], roles); s != "" {
				return s, true
			}
		}
		return "", false
	}
	if role, ok := memberOf(raw, "role"); ok && role[0] == '"' {
		if s := roleText(raw, roles); s != "" {
			return s, true
		}
		return "", false
	}
	// Gemini / Vertex response: {"content": {"role": "model", "parts": [...]}} or
	// {"candidates": [{"content": ...}]}.
	content, ok := memberOf(raw, "content")
	if !ok || content[0] != '{' {
		content = ""
		if cands, ok := memberOf(raw, "candidates"); ok {
			if c0, ok := firstElement(cands); ok && c0[0] == '{' {
				if c, ok := memberOf(c0, "content"); ok && c[0] == '{' {
					content = c
				}
			}
		}
	}
	if content != "" {
		if s := roleText(content, roles); s != "" {
			return s, true
		}
	}
	return "", false
}

// roleText is the text of the message object m (raw) when its role (a string; "" when it
// has none) is one of roles, else "".
func roleText(m string, roles MessageRoles) string {
	r, _ := memberOf(m, "role")
	role, _ := rawString(r)
	if !roles[role] {
		return ""
	}
	return partsText(m)
}

// partsText is the text of one message (a raw object): a string content, or the text
// items of its content or parts list, concatenated.
func partsText(m string) string {
	content, hasContent := memberOf(m, "content")
	if s, ok := rawString(content); hasContent && ok {
		return s
	}
	var sb strings.Builder
	for _, key := range []string{"content", "parts"} {
		items, ok := memberOf(m, key)
		if !ok {
			continue
		}
		rawElements(items, func(it string) {
			switch it[0] {
			case '"':
				s, _ := rawString(it)
				sb.WriteString(s)
			case '{':
				t, _ := memberOf(it, "type")
				typ, _ := rawString(t)
				if typ != "" && typ != "text" && typ != "output_text" && typ != "input_text" {
					return
				}
				if s, ok := objectString(it, "text"); ok {
					sb.WriteString(s)
				} else if s, ok := objectString(it, "content"); ok {
					sb.WriteString(s)
				}
			}
		})
	}
	return sb.String()
}

// blocksText is the concatenated "text" of raw objects, each of which must have one.
func blocksText(items []string) (string, bool) {
	var sb strings.Builder
	for _, it := range items {
		s, ok := objectString(it, "text")
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
//
// Text that is one valid JSON value (the usual case) is read by scanning (scannedValue);
// only text followed by more than white space goes through encoding/json's decoder.
func ParseJSON(text string) (any, bool) {
	t := strings.TrimSpace(text)
	if t == "" || !startsValue(t[0]) {
		return nil, false // what the decoder rejects at the first byte
	}
	if validJSON(t) {
		return scannedValue(t), true
	}
	v, ok, _ := decodeJSON(t)
	if !ok {
		return nil, false
	}
	return normalizeNumbers(v), true
}

// startsValue reports whether a JSON value can start with c.
func startsValue(c byte) bool {
	switch c {
	case '{', '[', '"', '-', 't', 'f', 'n':
		return true
	}
	return c >= '0' && c <= '9'
}

// scannedValue is normalizeNumbers of the decoded valid JSON text raw (json.Number
// numbers), built by scanning instead of encoding/json's reflection: objects as
// map[string]any (the last of duplicate keys kept), arrays as []any (never nil), strings
// decoded as json.Unmarshal does, numbers as normalizeNumbers turns them.
func scannedValue(raw string) any {
	v, _ := scanValue(raw, skipSpace(raw, 0))
	return v
}

// scanValue decodes the value starting at raw[i] (valid JSON, no white space before it);
// it returns the index after it.
func scanValue(raw string, i int) (any, int) {
	switch c := raw[i]; c {
	case '{':
		m := map[string]any{}
		for i = skipSpace(raw, i+1); raw[i] == '"'; {
			kEnd := skipString(raw, i)
			k, _ := rawString(raw[i:kEnd])
			i = skipSpace(raw, skipSpace(raw, kEnd)+1) // past the ':'
			var v any
			v, i = scanValue(raw, i)
			m[k] = v
			if i = skipSpace(raw, i); raw[i] == ',' {
				i = skipSpace(raw, i+1)
			}
		}
		return m, i + 1 // past the '}'
	case '[':
		a := []any{}
		for i = skipSpace(raw, i+1); raw[i] != ']'; {
			var v any
			v, i = scanValue(raw, i)
			a = append(a, v)
			if i = skipSpace(raw, i); raw[i] == ',' {
				i = skipSpace(raw, i+1)
			}
		}
		return a, i + 1
	case '"':
		end := skipString(raw, i)
		s, _ := rawString(raw[i:end])
		return s, end
	case 't':
		return true, i + 4
	case 'f':
		return false, i + 5
	case 'n':
		return nil, i + 4
	}
	end := skipValue(raw, i)
	return normalizeNumbers(json.Number(raw[i:end])), end
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
