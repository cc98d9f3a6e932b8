package agentgraph

import (
	"bytes"
	"encoding/json"
	"strconv"
	"strings"
	"sync"

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
	case pcommon.ValueTypeMap:
		return rawJSON(v.Map().AsRaw())
	case pcommon.ValueTypeSlice:
		return rawJSON(v.Slice().AsRaw())
	default:
		return v.AsString()
	}
}

// rawJSON is pcommon.Value.AsString's JSON of a map or slice value (v its AsRaw):
// encoding/json without HTML escaping and without the encoder's trailing newline, the
// same bytes, encoded into a pooled buffer so that only the text itself is allocated
// (AsString grows a fresh buffer and then copies it out).
func rawJSON(v any) string {
	buf, _ := jsonBufs.Get().(*bytes.Buffer)
	if buf == nil {
		buf = new(bytes.Buffer)
	}
	buf.Reset()
	enc := json.NewEncoder(buf)
	enc.SetEscapeHTML(false)
	_ = enc.Encode(v) // cannot fail for AsRaw's values (as AsString assumes)
	text := string(bytes.TrimRight(buf.Bytes(), "\n"))
	if buf.Cap() <= maxPooledJSON {
		jsonBufs.Put(buf)
	}
	return text
}

// jsonBufs pools rawJSON's buffers; one grown past maxPooledJSON is left to the collector.
var jsonBufs sync.Pool

const maxPooledJSON = 1 << 20

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
		return eventText(s, name, key)
	}
	if strings.HasSuffix(place, ".*") {
		return flattenedUnder(s.Attributes(), place[:len(place)-1])
	}
	if key, path, ok := strings.Cut(place, "#"); ok {
		v, ok := s.Attributes().Get(key)
		return pathValueText(v, ok, path, texts)
	}
	v, ok := s.Attributes().Get(place)
	return valueText(v, ok)
}

// valueText is the text of an attribute value (ok: the span has the attribute), false
// when it is missing or a capture-off placeholder.
func valueText(v pcommon.Value, ok bool) (string, bool) {
	if !ok {
		return "", false
	}
	t := asText(v)
	if absent(t) {
		return "", false
	}
	return t, true
}

// eventText is the place event:NAME:KEY: attribute KEY of the first event called NAME
// that holds a usable value.
func eventText(s ptrace.Span, name, key string) (string, bool) {
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

// pathValueText is the place KEY#a.b given the value of attribute KEY (ok: the span has it),
// rendered through texts (nil: none).
func pathValueText(v pcommon.Value, ok bool, path string, texts pathTexts) (string, bool) {
	if !ok {
		return "", false
	}
	raw, ok := jsonPathIn(v, path)
	if !ok {
		return "", false
	}
	return texts.render(raw)
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
		if n, ok := intValue(v); ok {
			return n, key, true
		}
	}
	return 0, "", false
}

// maxTokenCount bounds a usable token count: no call reads or writes a trillion tokens,
// and under the bound a trace's sums cannot overflow.
const maxTokenCount = 1 << 40

// intValue is a token count's value: an integer, a double (truncated) or a string that
// parses as an integer. A negative count, or one past maxTokenCount (a double of 1e300, a
// wrapped counter), is no count: it would shrink or overflow the sums budgets compare, so
// the chain goes on to its next place.
func intValue(v pcommon.Value) (int64, bool) {
	switch v.Type() {
	case pcommon.ValueTypeInt:
		return tokenCount(v.Int())
	case pcommon.ValueTypeDouble:
		return tokenCountOf(v.Double())
	case pcommon.ValueTypeStr:
		if n, err := strconv.ParseInt(strings.TrimSpace(v.Str()), 10, 64); err == nil {
			return tokenCount(n)
		}
	}
	return 0, false
}

func tokenCount(n int64) (int64, bool) { return n, n >= 0 && n <= maxTokenCount }

// tokenCountOf is a double as a token count (truncated), checked before the conversion:
// converting NaN or a double out of int64's range is undefined.
func tokenCountOf(f float64) (int64, bool) {
	if !(f >= 0 && f <= maxTokenCount) {
		return 0, false
	}
	return int64(f), true
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
	return flattenedUnder(attrs, prefix+".")
}

// flattenedUnder is flattened with the prefix's dot given (p is "PREFIX."); nothing is
// allocated when no key is under it.
func flattenedUnder(attrs pcommon.Map, p string) (string, bool) {
	var vals map[string]any
	for k, v := range attrs.All() {
		if rest, ok := strings.CutPrefix(k, p); ok && rest != "" && rest[0] >= '0' && rest[0] <= '9' {
			if vals == nil {
				vals = map[string]any{}
			}
			vals[rest] = v.AsRaw()
		}
	}
	if len(vals) == 0 {
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
	if !ok {
		return 0, false
	}
	return tokenCountOf(n)
}

// jsonNumber is the number at field of the JSON object held in attribute key.
func jsonNumber(attrs pcommon.Map, key, field string) (float64, bool) {
	v, ok := attrs.Get(key)
	if !ok {
		return 0, false
	}
	return jsonNumberIn(v, field)
}

// jsonFieldIn is jsonField given the attribute's value.
func jsonFieldIn(v pcommon.Value, field string) (int64, bool) {
	n, ok := jsonNumberIn(v, field)
	if !ok {
		return 0, false
	}
	return tokenCountOf(n)
}

// jsonNumberIn is jsonNumber given the attribute's value.
func jsonNumberIn(v pcommon.Value, field string) (float64, bool) {
	if v.Type() != pcommon.ValueTypeStr {
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
	if !ok {
		return "", false
	}
	return jsonPathIn(v, path)
}

// jsonPathIn is jsonPathValue given the attribute's value.
func jsonPathIn(v pcommon.Value, path string) (string, bool) {
	if v.Type() != pcommon.ValueTypeStr || !strings.Contains(v.Str(), `"`+path[strings.LastIndex(path, ".")+1:]+`"`) {
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
	t := rawText(raw)
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
