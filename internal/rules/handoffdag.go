package rules

import (
	"encoding/json"
	"regexp"
	"sort"
	"strings"

	"go.opentelemetry.io/collector/pdata/pcommon"
	"go.opentelemetry.io/collector/pdata/ptrace"

	"github.com/otelcol-handoff/otelcol-handoff/internal/agentgraph"
)

// What the handoff rubrics read of a trace beyond the DAG's exported model: which agent
// run owns each span (the nearest agent span above it), each run's LLM calls, and the
// input-side text of a span.

// dagIndex is built once per trace, when a rubric step needs it.
type dagIndex struct {
	g      *agentgraph.Graph
	byID   map[pcommon.SpanID]*agentgraph.Span
	invOf  map[*agentgraph.Span]*agentgraph.Invocation
	owner  map[*agentgraph.Span]*agentgraph.Invocation
	llms   map[*agentgraph.Invocation][]*agentgraph.Span
	byName map[string][]*agentgraph.Invocation
}

func newDAGIndex(g *agentgraph.Graph) *dagIndex {
	x := &dagIndex{
		g:      g,
		byID:   make(map[pcommon.SpanID]*agentgraph.Span, len(g.Spans)),
		invOf:  make(map[*agentgraph.Span]*agentgraph.Invocation, len(g.Invocations)),
		owner:  make(map[*agentgraph.Span]*agentgraph.Invocation, len(g.Spans)),
		llms:   map[*agentgraph.Invocation][]*agentgraph.Span{},
		byName: map[string][]*agentgraph.Invocation{},
	}
	for _, s := range g.Spans {
		x.byID[s.ID] = s
	}
	for _, inv := range g.Invocations {
		x.invOf[inv.Span] = inv
		x.byName[inv.Name] = append(x.byName[inv.Name], inv)
	}
	for _, s := range g.Spans { // start order
		if o := x.ownerOf(s); o != nil && s.Role == agentgraph.RoleLLM {
			x.llms[o] = append(x.llms[o], s)
		}
	}
	return x
}

// ownerOf is the agent run whose span is the nearest agent span above s (nil at top
// level). Parent loops (which the DAG builder cut) end the walk.
func (x *dagIndex) ownerOf(s *agentgraph.Span) *agentgraph.Invocation {
	if o, ok := x.owner[s]; ok {
		return o
	}
	var path []*agentgraph.Span
	var found *agentgraph.Invocation
	seen := map[*agentgraph.Span]bool{s: true}
	for cur := s; ; {
		p, ok := x.byID[cur.ParentID]
		if cur.ParentID.IsEmpty() || !ok || seen[p] {
			break
		}
		if inv := x.invOf[p]; inv != nil {
			found = inv
			break
		}
		if o, ok := x.owner[p]; ok {
			found = o
			break
		}
		seen[p] = true
		path = append(path, p)
		cur = p
	}
	x.owner[s] = found
	for _, p := range path {
		x.owner[p] = found
	}
	return found
}

// subtree is the set of runs reachable from inv in the DAG, inv included.
func subtree(inv *agentgraph.Invocation) map[*agentgraph.Invocation]bool {
	seen := map[*agentgraph.Invocation]bool{inv: true}
	stack := []*agentgraph.Invocation{inv}
	for len(stack) > 0 {
		cur := stack[len(stack)-1]
		stack = stack[:len(stack)-1]
		for _, e := range cur.Out {
			if !seen[e.To] {
				seen[e.To] = true
				stack = append(stack, e.To)
			}
		}
	}
	return seen
}

// senderRuns are the runs that act for the sender of e after the receiver returns: every
// run of the sender's name outside the receiver's subtree (the sender itself, and a
// supervisor resumed as a new run, as LangGraph does).
func (x *dagIndex) senderRuns(e *agentgraph.Edge) []*agentgraph.Invocation {
	if e.From.Remote != nil {
		return nil
	}
	below := subtree(e.To)
	var out []*agentgraph.Invocation
	for _, inv := range x.byName[e.From.Name] {
		if !below[inv] || inv == e.From {
			out = append(out, inv)
		}
	}
	return out
}

func start(s *agentgraph.Span) pcommon.Timestamp { return s.Span.StartTimestamp() }
func end(s *agentgraph.Span) pcommon.Timestamp   { return s.Span.EndTimestamp() }

// returnedAt is when the round trip of e ended: the receiver's end, or the dispatch call's
// end when that is later.
func returnedAt(e *agentgraph.Edge) pcommon.Timestamp {
	t := end(e.To.Span)
	if e.Via != nil && end(e.Via) > t {
		t = end(e.Via)
	}
	return t
}

// outputKey marks attribute keys (and event names) that hold output, not input.
var outputKey = regexp.MustCompile(`(?i)output|completion|response|choice|result`)

// inputText is the input-side content of a span: every string attribute and event
// attribute whose key (and event name) does not name output, in key order.
func inputText(s ptrace.Span) string {
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
	add(s.Attributes())
	events := s.Events()
	for i := 0; i < events.Len(); i++ {
		if !outputKey.MatchString(events.At(i).Name()) {
			add(events.At(i).Attributes())
		}
	}
	return strings.Join(parts, "\n")
}

// leafText is the text inside content: the string leaves of JSON (recursively, since
// frameworks nest JSON in strings), else the content as is.
func leafText(s string) string {
	var b strings.Builder
	var walk func(v any, depth int)
	walk = func(v any, depth int) {
		switch v := v.(type) {
		case string:
			if depth < 4 {
				t := strings.TrimSpace(v)
				if len(t) > 1 && (t[0] == '{' || t[0] == '[') {
					var inner any
					if json.Unmarshal([]byte(t), &inner) == nil {
						walk(inner, depth+1)
						return
					}
				}
			}
			b.WriteString(v)
			b.WriteByte('\n')
		case map[string]any:
			for _, k := range sortedKeys(v) {
				walk(v[k], depth)
			}
		case []any:
			for _, it := range v {
				walk(it, depth)
			}
		case nil, bool:
		default:
			b.WriteString(strings.TrimSpace(jsonString(v)))
			b.WriteByte('\n')
		}
	}
	t := strings.TrimSpace(s)
	if len(t) > 0 && (t[0] == '{' || t[0] == '[') {
		var v any
		if json.Unmarshal([]byte(t), &v) == nil {
			walk(v, 0)
			return b.String()
		}
	}
	return s
}

func jsonString(v any) string {
	b, err := json.Marshal(v)
	if err != nil {
		return ""
	}
	return string(b)
}

// plainOutput is the text of a return value: the last assistant message's text for a
// chat-messages array, else the string leaves of JSON, else the content as is.
func plainOutput(s string) string {
	if t, ok := messageText(s, assistantRoles); ok {
		return t
	}
	return leafText(s)
}

var wordRE = regexp.MustCompile(`[\p{L}\p{N}]{3,}`)

// normalize lowercases text and collapses whitespace (and the JSON escape of "/").
func normalize(s string) string {
	s = strings.ReplaceAll(s, `\/`, "/")
	return strings.Join(strings.Fields(strings.ToLower(s)), " ")
}

// coverage is the share of value's distinct words (3+ letters or digits, the first 200)
// found among the words of corpus; 1 when value has none.
func coverage(corpus, value string) float64 {
	words := map[string]bool{}
	for _, w := range wordRE.FindAllString(strings.ToLower(corpus), -1) {
		words[w] = true
	}
	seen := map[string]bool{}
	found := 0
	for _, w := range wordRE.FindAllString(strings.ToLower(value), -1) {
		if seen[w] {
			continue
		}
		seen[w] = true
		if words[w] {
			found++
		}
		if len(seen) == 200 {
			break
		}
	}
	if len(seen) == 0 {
		return 1
	}
	return float64(found) / float64(len(seen))
}

// carriedShare is the share of coverage above which a text counts as carrying a value.
const carriedShare = 0.8

// carries reports whether corpus carries value: verbatim (normalized), or with at least
// carriedShare of its words.
func carries(corpus, value string) (bool, float64) {
	nc, nv := normalize(leafText(corpus)), normalize(value)
	if nv == "" || strings.Contains(nc, nv) {
		return true, 1
	}
	c := coverage(nc, nv)
	return c >= carriedShare, c
}

// canonicalArgs renders arguments comparably: JSON re-encoded with sorted keys (without the
// given keys at the top level), else normalized text.
func canonicalArgs(s string, drop ...string) string {
	t := strings.TrimSpace(s)
	if v, ok := parseJSON(t); ok {
		if m, ok := v.(map[string]any); ok && len(drop) > 0 {
			c := make(map[string]any, len(m))
			for k, x := range m {
				c[k] = x
			}
			for _, k := range drop {
				delete(c, k)
			}
			v = c
		}
		return jsonString(v)
	}
	return normalize(t)
}

// scopeOf is what an edge dispatched, comparably: the dispatch arguments without the
// target's name, else the receiver's input; "" when neither was captured.
func scopeOf(e *agentgraph.Edge) string {
	if e.Reason.Found() && !absentText(e.Reason.Text) {
		if s := canonicalArgs(e.Reason.Text, agentArgKeys...); s != "{}" && s != "" {
			return "args:" + s
		}
	}
	if e.To.Input.Found() {
		return "input:" + normalize(e.To.Input.Text)
	}
	return ""
}

func absentText(s string) bool {
	switch strings.TrimSpace(s) {
	case "", "{}", "[]", "null":
		return true
	}
	return false
}

// quote renders content for a message: one line, at most n bytes, in double quotes.
func quote(s string, n int) string { return `"` + clip(s, n) + `"` }

// code renders content (arguments) for a message: one line, at most n bytes, in backticks.
func code(s string, n int) string { return "`" + strings.ReplaceAll(clip(s, n), "`", "'") + "`" }

func clip(s string, n int) string {
	s = strings.Join(strings.Fields(s), " ")
	if len(s) > n {
		cut := n
		for cut > 0 && (s[cut]&0xC0) == 0x80 {
			cut--
		}
		s = s[:cut] + "…"
	}
	return s
}

// toolLabel names a tool call in messages.
func toolLabel(tc *agentgraph.ToolCall) string {
	return tc.Name + " (span " + tc.Span.ID.String() + ")"
}

// errText is an error's type and message.
func errText(e *agentgraph.ErrorInfo) string {
	switch {
	case e == nil:
		return ""
	case e.Type == "" || strings.Contains(e.Message, e.Type):
		return strings.TrimSpace(e.Message)
	case e.Message == "":
		return e.Type
	}
	return e.Type + ": " + e.Message
}
