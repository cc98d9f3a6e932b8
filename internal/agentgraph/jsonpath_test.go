package agentgraph

import (
	"encoding/json"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"
	"go.opentelemetry.io/collector/pdata/pcommon"
)

// jsonPath is what lookupPlace reads at a KEY#a.b place: the raw value at the path,
// rendered as text.
func jsonPath(attrs pcommon.Map, key, path string) (string, bool) {
	raw, ok := jsonPathValue(attrs, key, path)
	if !ok {
		return "", false
	}
	return renderPathValue(raw)
}

// jsonPathDecodeAll is jsonPath's definition: the whole attribute decoded, then the path
// followed through the decoded objects.
func jsonPathDecodeAll(attrs pcommon.Map, key, path string) (string, bool) {
	v, ok := attrs.Get(key)
	if !ok || v.Type() != pcommon.ValueTypeStr || !strings.Contains(v.Str(), `"`+path[strings.LastIndex(path, ".")+1:]+`"`) {
		return "", false
	}
	var cur any
	if json.Unmarshal([]byte(v.Str()), &cur) != nil {
		return "", false
	}
	for _, seg := range strings.Split(path, ".") {
		m, ok := cur.(map[string]any)
		if !ok {
			return "", false
		}
		if cur, ok = m[seg]; !ok {
			return "", false
		}
	}
	t := jsonText(cur)
	if absent(t) {
		return "", false
	}
	return t, true
}

// TestJSONPathDecodesOnlyThePath: jsonPath, which leaves the members off the path
// undecoded, finds what decoding the whole attribute finds, on every JSON-object string
// attribute of the real captures (Google ADK's model requests among them) and every path
// of one and two keys into it, plus paths that miss and malformed values.
func TestJSONPathDecodesOnlyThePath(t *testing.T) {
	paths, err := filepath.Glob(filepath.Join("..", "..", "testdata", "traces", "*.json"))
	require.NoError(t, err)
	attrs := pcommon.NewMap()
	var cases [][2]string // attribute key, path
	add := func(val string) {
		key := "a" + string(rune('0'+len(cases)%10)) + strings.Repeat("x", len(cases)/10)
		attrs.PutStr(key, val)
		var m map[string]any
		if json.Unmarshal([]byte(val), &m) != nil {
			cases = append(cases, [2]string{key, "config.tools"}, [2]string{key, "a"})
			return
		}
		keys := sortedKeys(m)
		cases = append(cases, [2]string{key, "missing"}, [2]string{key, "config.tools"})
		for _, k := range keys {
			cases = append(cases, [2]string{key, k}, [2]string{key, k + ".missing"})
			if inner, ok := m[k].(map[string]any); ok {
				for _, k2 := range sortedKeys(inner) {
					cases = append(cases, [2]string{key, k + "." + k2})
				}
			}
		}
	}
	found := 0
	for _, p := range paths {
		for _, spans := range SpansOf(readTraces(t, p)) {
			for _, s := range spans {
				for _, v := range s.Pdata.Attributes().All() {
					if v.Type() == pcommon.ValueTypeStr && strings.HasPrefix(strings.TrimSpace(v.Str()), "{") {
						add(v.Str())
					}
				}
			}
		}
	}
	for _, val := range []string{
		`{"config": {"tools": []}}`, `{"config": null}`, `{"config": {"tools": [1]}, "config": {"x": 1}}`,
		`{"config": {"tools": "t"}} trailing`, `{"config": [{"tools": 1}]}`, `{"config": {"tools": {"a": "<b>"}}}`, `{"config": {"tools": `,
	} {
		add(val)
	}
	for _, c := range cases {
		wantText, wantOK := jsonPathDecodeAll(attrs, c[0], c[1])
		gotText, gotOK := jsonPath(attrs, c[0], c[1])
		require.Equal(t, wantOK, gotOK, "path %s", c[1])
		require.Equal(t, wantText, gotText, "path %s", c[1])
		if gotOK {
			found++
		}
	}
	require.Greater(t, found, 100, "most paths into the captures' JSON attributes resolve")
}

// TestPathTextsRemember: resolving through a graph's memo of KEY#a.b renderings gives what
// resolving without it gives, on every span of the bundled captures, for every chain with
// such a place, the second time (from the memo) as the first.
func TestPathTextsRemember(t *testing.T) {
	chains := DefaultChains()
	var withPath []Chain
	for _, c := range []Chain{chains.AllowedTools, chains.Input, chains.Output} {
		var places Chain
		for _, p := range c {
			if strings.Contains(p, "#") {
				places = append(places, strings.TrimPrefix(p, "llm:"))
			}
		}
		withPath = append(withPath, places)
	}
	texts := pathTexts{}
	found := 0
	for _, f := range corpusFiles(t) {
		for _, spans := range SpansOf(readTraces(t, f)) {
			for _, s := range spans {
				for _, c := range withPath {
					want := resolve(s.Pdata, c, nil)
					require.Equal(t, want, resolveIn(s.Pdata, c, nil, texts), f)
					require.Equal(t, want, resolveIn(s.Pdata, c, nil, texts), f)
					if want.Found() {
						found++
					}
				}
			}
		}
	}
	require.Greater(t, found, 10, "Google ADK's model requests hold tool definitions")
	require.NotEmpty(t, texts)
}
