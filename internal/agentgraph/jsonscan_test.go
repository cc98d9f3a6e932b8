package agentgraph

import (
	"encoding/json"
	"fmt"
	"os"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"
	"go.opentelemetry.io/collector/pdata/pcommon"
	"go.opentelemetry.io/collector/pdata/ptrace"
)

// The raw readers (jsonscan.go) against their definitions: the whole value decoded into
// any and walked. Each reader is run on every string, map and list attribute and event
// attribute of every bundled capture (testdata/traces, testdata/corpus) and of the shared
// corpus when it sits beside the checkout, plus the malformed and edge-case values below.

// decodedCalls is callsIn's definition: decode the whole value, then collect the call
// objects of the decoded value. The arguments are rendered with jsonText and held as a JSON
// string, which args() gives back bare.
func decodedCalls(raw string) []string {
	var v any
	if json.Unmarshal([]byte(raw), &v) != nil {
		return nil
	}
	var out []*requestedCall
	decodedCollect(v, func(id, name string, args any) {
		if name != "" {
			quoted, _ := json.Marshal(jsonText(args))
			out = append(out, &requestedCall{id: id, name: name, rawArgs: string(quoted)})
		}
	}, 0)
	return callStrings(firstOfEachID(out))
}

func callStrings(calls []*requestedCall) []string {
	var out []string
	for _, c := range calls {
		out = append(out, fmt.Sprintf("%q %q %q", c.id, c.name, c.args()))
	}
	return out
}

func decodedCollect(v any, add func(id, name string, args any), depth int) {
	if depth > 12 {
		return
	}
	switch x := v.(type) {
	case []any:
		for _, it := range x {
			decodedCollect(it, add, depth+1)
		}
	case map[string]any:
		if f, ok := x["function"].(map[string]any); ok {
			if n, ok := f["name"].(string); ok {
				id, _ := x["id"].(string)
				add(id, n, f["arguments"])
				return
			}
		}
		name, _ := x["name"].(string)
		if name == "" {
			name, _ = x["toolName"].(string)
		}
		if name != "" {
			for _, ak := range []string{"args", "arguments", "input"} {
				if a, ok := x[ak]; ok {
					var id string
					for _, ik := range []string{"id", "toolUseId", "toolCallId", "tool_call_id"} {
						if s, ok := x[ik].(string); ok && s != "" {
							id = s
							break
						}
					}
					add(id, name, a)
					return
				}
			}
		}
		keys := sortedKeys(x)
		flat := false
		for _, k := range keys {
			if prefix, ok := strings.CutSuffix(k, ".tool_call.function.name"); ok {
				flat = true
				n, _ := x[k].(string)
				id, _ := x[prefix+".tool_call.id"].(string)
				add(id, n, x[prefix+".tool_call.function.arguments"])
			}
		}
		if flat {
			return
		}
		for _, k := range keys {
			decodedCollect(x[k], add, depth+1)
		}
	}
}

// captureValues are the text of every string, map and list attribute (and event
// attribute) of every span of the bundled captures and the shared corpus: what a place
// lookup can return.
func captureValues(t *testing.T) []string {
	files := corpusFiles(t)
	files = append(files, sharedCorpusFiles(t)...)
	var vals []string
	seen := map[string]bool{}
	add := func(attrs pcommon.Map) {
		for _, v := range attrs.All() {
			switch v.Type() {
			case pcommon.ValueTypeStr, pcommon.ValueTypeMap, pcommon.ValueTypeSlice:
				if t := asText(v); !seen[t] {
					seen[t] = true
					vals = append(vals, t)
				}
			}
		}
	}
	for _, f := range files {
		b, err := os.ReadFile(f)
		require.NoError(t, err)
		td, err := (&ptrace.JSONUnmarshaler{}).UnmarshalTraces(b)
		if err != nil {
			continue // the shared corpus holds a few files in other shapes
		}
		for _, spans := range SpansOf(td) {
			for _, s := range spans {
				add(s.Pdata.Attributes())
				for i := 0; i < s.Pdata.Events().Len(); i++ {
					add(s.Pdata.Events().At(i).Attributes())
				}
				// The flattened places (llm.output_messages.*) as lookupPlace builds them.
				for _, p := range []string{"llm.output_messages", "llm.input_messages", "gen_ai.completion", "gen_ai.prompt", "llm.tools"} {
					if t, ok := flattened(s.Pdata.Attributes(), p); ok && !seen[t] {
						seen[t] = true
						vals = append(vals, t)
					}
				}
			}
		}
	}
	require.Greater(t, len(vals), 1000)
	return vals
}

// edgeValues are hand-written values the captures may lack: duplicate keys, escapes,
// invalid UTF-8, numbers out of float64's range, deep nesting, malformed JSON.
var edgeValues = []string{
	``, `null`, `"name"`, `[]`, `{}`, `{"name": "a"}`, `{"name": "a", "args": null}`,
	`{"name": "a", "args": {"b": 1, "a": [1.50, 2e2, "<x>"]}}`,
	`{"name": "a", "name": "b", "input": "x"}`, `{"name": "a", "args": 1, "args": 2}`,
	`{"function": {"name": "f", "arguments": "{\"x\":1}"}, "id": "c1"}`,
	`{"function": {"name": 3}, "name": "g", "arguments": {}}`, `{"function": null, "toolName": "t", "input": {}}`,
	`{"n\u0061me": "esc", "args": {}}`, `{"name": "caf\u00e9 \"q\"", "args": {}, "id": "i\n"}`,
	"{\"name\": \"bad\xff\", \"args\": \"\xfe\"}", `{"name": "big", "args": {"n": 1e400}}`,
	`{"name": "small", "args": {"n": 1e-400, "m": -0.0, "k": 12345678901234567890}}`,
	`[{"name": "a", "args": {}, "id": "1"}, {"name": "a", "args": {"z": 1}, "id": "1"}, {"name": "a", "args": 2}]`,
	`{"0.message.tool_calls.0.tool_call.function.name": "f", "0.message.tool_calls.0.tool_call.id": "x", "0.message.tool_calls.0.tool_call.function.arguments": "{}", "1.message.tool_calls.0.tool_call.function.name": 5}`,
	`{"b": {"name": "b", "args": {}}, "a": [{"toolName": "a", "input": "s", "toolCallId": ""}, {"toolName": "a", "input": "s", "toolUseId": "u"}]}`,
	strings.Repeat(`{"x":`, 14) + `{"name": "deep", "args": {}}` + strings.Repeat(`}`, 14),
	strings.Repeat(`[`, 12) + `{"name": "edge", "args": {}}` + strings.Repeat(`]`, 12),
	`{"name": "a", "args": {}} trailing`, `{"name": "a", "args": `, `{"name": "a",, "args": {}}`,
	` {"name" : "ws" , "args" : [ 1 , 2 ] } `, `{"name": "a", "args": {"b": "\u003c\u2028"}}`,
}

// TestRequestedCallsScanAgrees: scanning a response for the calls it asked for finds what
// decoding it finds, on every value of the captures and the edge cases.
func TestRequestedCallsScanAgrees(t *testing.T) {
	calls := 0
	for _, v := range append(captureValues(t), edgeValues...) {
		want, got := decodedCalls(v), callStrings(callsIn(v))
		require.Equal(t, want, got, "value %.300s", v)
		calls += len(got)
	}
	require.Greater(t, calls, 100, "the captures' responses ask for calls")
}

// TestRawReaders: the raw readers' own contract on the edge cases.
func TestRawReaders(t *testing.T) {
	for _, v := range append(captureValues(t), edgeValues...) {
		var d any
		require.Equal(t, json.Unmarshal([]byte(v), &d) == nil, decodable(v), "value %.300s", v)
		if !decodable(v) {
			continue
		}
		if m, ok := d.(map[string]any); ok {
			members, isObj := rawMembers(v)
			require.True(t, isObj)
			require.Len(t, members, len(m))
			for _, mb := range members {
				require.Equal(t, jsonText(m[mb.key]), rawText(mb.val), "member %s of %.300s", mb.key, v)
			}
		} else if l, ok := d.([]any); ok {
			var elems []string
			require.True(t, rawElements(v, func(e string) { elems = append(elems, e) }))
			require.Len(t, elems, len(l))
			for i, e := range elems {
				require.Equal(t, jsonText(l[i]), rawText(e))
			}
		} else {
			require.Equal(t, jsonText(d), rawText(strings.TrimSpace(v)))
		}
	}
}
