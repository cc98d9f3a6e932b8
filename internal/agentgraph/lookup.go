package agentgraph

import (
	"encoding/json"
	"strconv"
	"strings"

	"go.opentelemetry.io/collector/pdata/pcommon"
	"go.opentelemetry.io/collector/pdata/ptrace"
)

// Value is a resolved field: the text found and the chain place it came from. Source is
// "none" when no place of the chain held a value; Tried then lists the places looked at.
type Value struct {
	Text   string   `json:"text,omitempty"`
	Source string   `json:"source"`
	Tried  []string `json:"tried,omitempty"`
}

// SourceNone marks a Value whose chain found nothing.
const SourceNone = "none"

// Found reports whether the chain produced a value.
func (v Value) Found() bool { return v.Source != SourceNone && v.Source != "" }

// asText renders an attribute value as text; maps and slices become JSON.
func asText(v pcommon.Value) string {
	switch v.Type() {
	case pcommon.ValueTypeStr:
		return v.Str()
	case pcommon.ValueTypeEmpty:
		return ""
	default:
		return v.AsString()
	}
}

// absent reports the placeholders frameworks write when content capture is off.
func absent(s string) bool {
	switch strings.TrimSpace(s) {
	case "", "{}", "[]", "null", "N/A", "<not specified>", `""`:
		return true
	}
	return false
}

// lookupPlace resolves one attribute or event place on a span.
func lookupPlace(s ptrace.Span, place string) (string, bool) { return lookupPlaceIn(s, place, nil) }

// lookupPlaceIn is lookupPlace with the KEY#a.b values rendered through texts (nil: none).
func lookupPlaceIn(s ptrace.Span, place string, texts pathTexts) (string, bool) {
	if rest, ok := strings.CutPrefix(place, "event:"); ok {
		name, key, ok := strings.Cut(rest, ":")
		if !ok {
			return "", false
		}
		events := s.Events()
		for i := 0; i < events.Len(); i++ {
			e := events.At(i)
			if e.Name() != name {
				continue
			}
			if v, ok := e.Attributes().Get(key); ok {
				if t := asText(v); !absent(t) {
					return t, true
				}
			}
		}
		return "", false
	}
	if prefix, ok := strings.CutSuffix(place, ".*"); ok {
		return flattened(s.Attributes(), prefix)
	}
	if key, path, ok := strings.Cut(place, "#"); ok {
		raw, ok := jsonPathValue(s.Attributes(), key, path)
		if !ok {
			return "", false
		}
		return texts.render(raw)
	}
	v, ok := s.Attributes().Get(place)
	if !ok {
		return "", false
	}
	t := asText(v)
	if absent(t) {
		return "", false
	}
	return t, true
}

// resolve walks a chain on a span. llm: places are looked up on llmChild (may be nil).
func resolve(s ptrace.Span, chain Chain, llmChild *Span) Value {
	return resolveIn(s, chain, llmChild, nil)
}

// resolveIn is resolve with the KEY#a.b values rendered through texts (nil: none).
func resolveIn(s ptrace.Span, chain Chain, llmChild *Span, texts pathTexts) Value {
	for _, place := range chain {
		target := s
		p := place
		if rest, ok := strings.CutPrefix(place, "llm:"); ok {
			if llmChild == nil {
				continue
			}
			target, p = llmChild.Pdata, rest
		}
		if t, ok := lookupPlaceIn(target, p, texts); ok {
			return Value{Text: t, Source: place}
		}
	}
	return Value{Source: SourceNone, Tried: chain}
}

// resolveInt walks a chain of numeric attributes; strings that parse as integers count
// (AgentOps writes token counts as strings).
func resolveInt(s ptrace.Span, chain Chain) (int64, string, bool) {
	attrs := s.Attributes()
	for _, key := range chain {
		if h := strings.IndexByte(key, '#'); h >= 0 {
			// KEY#FIELD: a number inside a JSON object attribute (Langfuse usage_details).
			if n, ok := jsonField(attrs, key[:h], key[h+1:]); ok {
				return n, key, true
			}
			continue
		}
		v, ok := attrs.Get(key)
		if !ok {
			continue
		}
		switch v.Type() {
		case pcommon.ValueTypeInt:
			return v.Int(), key, true
		case pcommon.ValueTypeDouble:
			return int64(v.Double()), key, true
		case pcommon.ValueTypeStr:
			if n, err := strconv.ParseInt(strings.TrimSpace(v.Str()), 10, 64); err == nil {
				return n, key, true
			}
		}
	}
	return 0, "", false
}

// attrStr returns a string attribute or "".
func attrStr(s ptrace.Span, key string) string {
	if v, ok := s.Attributes().Get(key); ok {
		return asText(v)
	}
	return ""
}

// flattened gathers indexed keys spread under prefix (OpenInference llm.input_messages.0.
// message.content, OpenLLMetry gen_ai.prompt.0.content) into one JSON object, sorted by key.
func flattened(attrs pcommon.Map, prefix string) (string, bool) {
	p := prefix + "."
	var keys []string
	vals := map[string]any{}
	attrs.Range(func(k string, v pcommon.Value) bool {
		if rest, ok := strings.CutPrefix(k, p); ok && rest != "" && rest[0] >= '0' && rest[0] <= '9' {
			keys = append(keys, rest)
			vals[rest] = v.AsRaw()
		}
		return true
	})
	if len(keys) == 0 {
		return "", false
	}
	b, err := json.Marshal(vals) // encoding/json sorts map keys: deterministic
	if err != nil {
		return "", false
	}
	return string(b), true
}

// jsonField reads a numeric field of a JSON object held in a string attribute.
func jsonField(attrs pcommon.Map, key, field string) (int64, bool) {
	n, ok := jsonNumber(attrs, key, field)
	return int64(n), ok
}

// jsonNumber is the number at field of the JSON object held in attribute key.
func jsonNumber(attrs pcommon.Map, key, field string) (float64, bool) {
	v, ok := attrs.Get(key)
	if !ok || v.Type() != pcommon.ValueTypeStr {
		return 0, false
	}
	var m map[string]any
	if json.Unmarshal([]byte(v.Str()), &m) != nil {
		return 0, false
	}
	n, ok := m[field].(float64)
	return n, ok
}

// jsonPathValue is the raw value at KEY#a.b, undecoded: the value at the dotted path inside
// the JSON object held in attribute KEY (Google ADK's gcp.vertex.agent.llm_request#
// config.tools). lookupPlace renders it as text (renderPathValue).
func jsonPathValue(attrs pcommon.Map, key, path string) (string, bool) {
	v, ok := attrs.Get(key)
	if !ok || v.Type() != pcommon.ValueTypeStr || !strings.Contains(v.Str(), `"`+path[strings.LastIndex(path, ".")+1:]+`"`) {
		return "", false
	}
	// The whole attribute is checked once (validJSON: json.Valid's verdict, as decoding it
	// all did), then the objects on the path are scanned without decoding: the attribute
	// may hold a whole model request, and only the value at the path is decoded. The last
	// of duplicate keys wins, as in a decoded map. (One difference: a number out of
	// float64's range in another member no longer hides the value.)
	raw := v.Str()
	if !validJSON(raw) {
		return "", false
	}
	for seg := range strings.SplitSeq(path, ".") {
		var ok bool
		if raw, ok = memberOf(raw, seg); !ok {
			return "", false // not an object (null included), or no such member
		}
	}
	return raw, true
}

// renderPathValue renders a raw value found at a KEY#a.b place as text: decoded, then
// re-encoded (strings bare); false when it does not decode or is a capture-off placeholder.
func renderPathValue(raw string) (string, bool) {
	var cur any
	if json.Unmarshal(bytesOf(raw), &cur) != nil {
		return "", false
	}
	t := jsonText(cur)
	if absent(t) {
		return "", false
	}
	return t, true
}

// pathTexts memoizes renderPathValue for one graph, keyed by the raw value: an agent
// offers the same tool definitions on every run, in every model request of it.
type pathTexts map[string]pathText

type pathText struct {
	text string
	ok   bool
}

// render is renderPathValue(raw), remembered when texts is not nil.
func (texts pathTexts) render(raw string) (string, bool) {
	if texts == nil {
		return renderPathValue(raw)
	}
	if t, ok := texts[raw]; ok {
		return t.text, t.ok
	}
	t, ok := renderPathValue(raw)
	texts[raw] = pathText{t, ok}
	return t, ok
}

// memberOf returns the raw value of the last member named key of the object raw holds
// (leading white space allowed); raw must be valid JSON. ok is false when raw is not an
// object or has no such member.
func memberOf(raw, key string) (val string, ok bool) {
	i := skipSpace(raw, 0)
	if i >= len(raw) || raw[i] != '{' {
		return "", false
	}
	i = skipSpace(raw, i+1)
	for i < len(raw) && raw[i] == '"' {
		kEnd := skipString(raw, i)
		k := raw[i:kEnd]
		i = skipSpace(raw, kEnd)
		i = skipSpace(raw, i+1) // the ':'
		vEnd := skipValue(raw, i)
		if keyIs(k, key) {
			val, ok = raw[i:vEnd], true
		}
		i = skipSpace(raw, vEnd)
		if i < len(raw) && raw[i] == ',' {
			i = skipSpace(raw, i+1)
		}
	}
	return val, ok
}

// keyIs reports whether the raw object key k (a JSON string token) decodes to key.
func keyIs(k, key string) bool {
	if strings.IndexByte(k, '\\') < 0 {
		return k[1:len(k)-1] == key
	}
	s, ok := rawString(k)
	return ok && s == key
}

func skipSpace(b string, i int) int {
	for i < len(b) && (b[i] == ' ' || b[i] == '\t' || b[i] == '\n' || b[i] == '\r') {
		i++
	}
	return i
}

// skipString returns the index after the string starting at b[i] (a '"'): after the first
// quote not escaped, one preceded by an even run of backslashes (len(b) when none).
func skipString(b string, i int) int {
	start := i + 1
	for j := start; ; {
		k := strings.IndexByte(b[j:], '"')
		if k < 0 {
			return len(b)
		}
		q := j + k
		p := q - 1
		for p >= start && b[p] == '\\' {
			p--
		}
		if (q-1-p)%2 == 0 {
			return q + 1
		}
		j = q + 1
	}
}

// skipValue returns the index after the valid JSON value starting at b[i].
func skipValue(b string, i int) int {
	if i >= len(b) {
		return i
	}
	switch b[i] {
	case '"':
		return skipString(b, i)
	case '{', '[':
		depth := 0
		for i < len(b) {
			switch b[i] {
			case '"':
				i = skipString(b, i)
				continue
			case '{', '[':
				depth++
			case '}', ']':
				depth--
				if depth == 0 {
					return i + 1
				}
			}
			i++
		}
		return i
	}
	for i < len(b) {
		switch b[i] {
		case ',', '}', ']', ' ', '\t', '\n', '\r':
			return i
		}
		i++
	}
	return i
}
