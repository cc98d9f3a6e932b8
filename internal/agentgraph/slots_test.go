package agentgraph

import (
	"encoding/json"
	"os"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"
	"go.opentelemetry.io/collector/pdata/pcommon"
	"go.opentelemetry.io/collector/pdata/ptrace"
)

// The compiled chains (slots.go) must resolve exactly as resolve, resolveIn, resolveInt and
// attrStr do, on every span of every capture and corpus trace.

// chainsUnderTest are the chains an agreement test compiles: the defaults and an override
// of every chain with places of every form, odd ones included.
func chainsUnderTest(t *testing.T) map[string]Chains {
	odd := Chain{
		"gen_ai.usage.input_tokens", "llm:llm:input.value", "event:no_key", "event::", "", "#", "x#",
		"gen_ai.prompt.*", ".*", "llm:event:gen_ai.choice:message", "input.value", "input.value",
		"llm:gcp.vertex.agent.llm_request#config.tools", "langfuse.observation.usage_details#input",
		"event:gen_ai.tool.message:content", "llm:llm.input_messages.*", "output.value", "gen_ai.agent.name",
		"llm.token_count.prompt", "gen_ai.tool.name", "error.type", "event:exception:exception.type",
	}
	custom := Chains{
		Role: odd, AgentName: odd, ToolName: odd, ToolArgs: odd, ToolResult: odd, InputTokens: odd,
		OutputTokens: odd, Input: odd, Output: odd, AllowedTools: odd, HandoffFrom: odd, HandoffTo: odd,
		HandoffReason: odd, ErrorType: odd, Cost: odd, ResponseModel: odd, RequestModel: odd,
		Provider: odd, CacheReadTokens: odd, CacheWriteTokens: odd,
	}
	for _, f := range custom.fields() {
		require.Equal(t, odd, f.chain, "every chain is overridden")
	}
	return map[string]Chains{"default": DefaultChains().withDefaults(), "custom": custom}
}

// agreementTraces are every capture and corpus trace the tests can read.
func agreementTraces(t *testing.T) map[string]ptrace.Traces {
	out := map[string]ptrace.Traces{}
	for _, f := range corpusFiles(t) {
		out[f] = readTraces(t, f)
	}
	for _, f := range sharedCorpusFiles(t) {
		b, err := os.ReadFile(f)
		require.NoError(t, err)
		td, err := (&ptrace.JSONUnmarshaler{}).UnmarshalTraces(b)
		if err != nil {
			continue // the shared corpus holds a few files in other shapes
		}
		out[f] = td
	}
	return out
}

// checkAgreement compares the compiled resolution of every chain of chains with the
// place-by-place one on every span of spans, with the LLM child absent, the span itself and
// every other span of the trace in turn.
func checkAgreement(t *testing.T, name string, chains Chains, spans []*Span) (checked int) {
	cc := compileChains(chains)
	// Every chain compiled both ways, not only those Build resolves through the index.
	text := map[string]slotChain{}
	ints := map[string]slotChain{}
	for _, f := range chains.fields() {
		text[f.key], ints[f.key] = compileText(&cc.keys, f.chain), compileInt(&cc.keys, f.chain)
	}
	cc.seal()
	ix := newAttrIndex(cc, len(spans))
	defer ix.release()
	for _, s := range spans {
		var ra roleAttrs
		ix.add(s, &ra)
		want := readRoleAttrs(s.Pdata.Attributes())
		require.Equal(t, want, ra, "%s: role keys", name)
		for i := range requestPlaces {
			got, gok := ix.lookup(s, &cc.requests.places[i], nil)
			w, wok := lookupPlace(s.Pdata, requestPlaces[i])
			require.Equal(t, []any{w, wok}, []any{got, gok}, "%s: request place %s", name, requestPlaces[i])
		}
		require.Equal(t, requestedCalls(nil, s), requestedCalls(ix, s), name)
	}
	for i, s := range spans {
		llms := []*Span{nil, s}
		if len(spans) > 1 {
			llms = append(llms, spans[(i+1)%len(spans)])
		}
		for _, f := range chains.fields() {
			c, ic := text[f.key], ints[f.key]
			for _, llm := range llms {
				require.Equal(t, resolve(s.Pdata, f.chain, llm), ix.resolve(s, &c, llm, nil), "%s: span %d, chain %s", name, i, f.key)
				want, got := pathTexts{}, pathTexts{}
				require.Equal(t, resolveIn(s.Pdata, f.chain, llm, want), ix.resolve(s, &c, llm, got), "%s: span %d, chain %s", name, i, f.key)
				require.Equal(t, want, got)
				checked++
			}
			n, key, ok := resolveInt(s.Pdata, f.chain)
			gn, gkey, gok := ix.resolveInt(s, &ic)
			require.Equal(t, []any{n, key, ok}, []any{gn, gkey, gok}, "%s: span %d, int chain %s", name, i, f.key)
		}
		for id, key := range fixedKeys {
			require.Equal(t, attrStr(s.Pdata, key), ix.str(s, int32(id)), "%s: span %d, key %s", name, i, key)
		}
	}
	// The chains Build resolves, as compileChains compiled them.
	for _, c := range []struct {
		got   *slotChain
		chain Chain
	}{
		{&cc.agentName, chains.AgentName},
		{&cc.toolName, chains.ToolName},
		{&cc.toolArgs, chains.ToolArgs},
		{&cc.toolResult, chains.ToolResult},
		{&cc.input, chains.Input},
		{&cc.output, chains.Output},
		{&cc.allowedTools, chains.AllowedTools},
		{&cc.errorType, chains.ErrorType},
		{&cc.handoffFrom, chains.HandoffFrom},
		{&cc.handoffTo, chains.HandoffTo},
		{&cc.handoffReason, chains.HandoffReason},
		{&cc.requests, requestPlaces},
		{&cc.llmOutput, llmOutputPlaces(chains)},
		{&cc.responseModel, chains.ResponseModel},
		{&cc.requestModel, chains.RequestModel},
		{&cc.provider, chains.Provider},
	} {
		for _, s := range spans {
			require.Equal(t, resolve(s.Pdata, c.chain, s), ix.resolve(s, c.got, s, nil), name)
		}
	}
	for _, c := range []struct {
		got   *slotChain
		chain Chain
	}{
		{&cc.inputTokens, chains.InputTokens},
		{&cc.outputTokens, chains.OutputTokens},
		{&cc.cacheReadTokens, chains.CacheReadTokens},
		{&cc.cacheWriteTokens, chains.CacheWriteTokens},
	} {
		for _, s := range spans {
			n, key, ok := resolveInt(s.Pdata, c.chain)
			gn, gkey, gok := ix.resolveInt(s, c.got)
			require.Equal(t, []any{n, key, ok}, []any{gn, gkey, gok}, name)
		}
	}
	return checked
}

func TestCompiledChainsAgreeOnEveryTrace(t *testing.T) {
	traces := agreementTraces(t)
	for cname, chains := range chainsUnderTest(t) {
		checked := 0
		for f, td := range traces {
			for _, spans := range SpansOf(td) {
				checked += checkAgreement(t, cname+" "+baseName(f), chains, spans)
			}
		}
		require.Greater(t, checked, 10000, cname)
	}
}

// Duplicate keys: the first one counts, as pcommon.Map.Get finds it; an empty key is a key.
func TestCompiledChainsDuplicateAndEmptyKeys(t *testing.T) {
	const doc = `{"resourceSpans":[{"scopeSpans":[{"spans":[{"traceId":"0102030405060708090a0b0c0d0e0f10",
	"spanId":"0102030405060708","name":"invoke_agent a","attributes":[
	{"key":"gen_ai.agent.name","value":{"stringValue":""}},
	{"key":"gen_ai.agent.name","value":{"stringValue":"second"}},
	{"key":"agent.name","value":{"stringValue":"first"}},
	{"key":"agent.name","value":{"stringValue":"shadowed"}},
	{"key":"","value":{"stringValue":"empty key"}},
	{"key":"gen_ai.usage.input_tokens","value":{"stringValue":"x"}},
	{"key":"gen_ai.usage.input_tokens","value":{"intValue":"7"}},
	{"key":"gen_ai.usage.prompt_tokens","value":{"doubleValue":3.9}},
	{"key":"output.value","value":{"kvlistValue":{"values":[{"key":"k","value":{"intValue":"1"}}]}}}]}]}]}]}`
	td, err := (&ptrace.JSONUnmarshaler{}).UnmarshalTraces([]byte(doc))
	require.NoError(t, err)
	for _, spans := range SpansOf(td) {
		chains := DefaultChains().withDefaults()
		chains.AgentName = append(Chain{""}, chains.AgentName...)
		checkAgreement(t, "duplicates", chains, spans)
		cc := compileChains(chains)
		ix := newAttrIndex(cc, len(spans))
		ix.add(spans[0], nil)
		require.Equal(t, Value{Text: "empty key", Source: ""}, ix.resolve(spans[0], &cc.agentName, nil, nil))
		chains.AgentName = chains.AgentName[1:]
		cc = compileChains(chains)
		ix = newAttrIndex(cc, len(spans))
		ix.add(spans[0], nil)
		require.Equal(t, Value{Text: "first", Source: "agent.name"}, ix.resolve(spans[0], &cc.agentName, nil, nil))
		n, key, ok := ix.resolveInt(spans[0], &cc.inputTokens)
		require.Equal(t, []any{int64(3), "gen_ai.usage.prompt_tokens", true}, []any{n, key, ok})
		require.Equal(t, `{"k":1}`, ix.str(spans[0], fkOutputValue))
	}
}

// compiledFor hands out one compilation per set of chains, and a new one when the chains
// differ in any place, even in the same arrays.
func TestCompiledForCachesByContent(t *testing.T) {
	a := DefaultChains().withDefaults()
	require.Same(t, compiledFor(a), compiledFor(DefaultChains().withDefaults()))
	b := DefaultChains().withDefaults()
	b.Input = append(Chain(nil), b.Input...)
	cb := compiledFor(b)
	require.Same(t, cb, compiledFor(b))
	b.Input[0] = "my.input"
	cb2 := compiledFor(b)
	require.NotSame(t, cb, cb2)
	require.Equal(t, "my.input", cb2.input.places[0].src)
	require.Equal(t, "gen_ai.input.messages", cb.input.places[0].src, "a compilation keeps its own copy")
}

// workloadTraces are the spans of every trace of the processor benchmarks' workload (the
// 48 traces BenchmarkBuildWorkload builds), as SpansOf gives them.
func workloadTraces(b *testing.B) [][]*Span {
	var traces [][]*Span
	for _, td := range benchWorkload(b).Templates {
		for _, s := range SpansOf(td) {
			traces = append(traces, s)
		}
	}
	return traces
}

// readRoleAttrs is how classifyRole read the role keys before the attribute index recorded
// them: one scan of the span's attributes, the last of duplicate keys winning, a key
// looked up only when a role key has its length and last byte (oldRoleKeyMay).
func readRoleAttrs(attrs pcommon.Map) roleAttrs {
	var ra roleAttrs
	for k, v := range attrs.All() {
		if n := len(k); n == 0 || n >= len(oldRoleKeyMay) || oldRoleKeyMay[n]&(1<<(k[n-1]&63)) == 0 {
			continue
		}
		if i, ok := oldRoleKeys[k]; ok {
			ra.vals[i], ra.found = v, ra.found|1<<i
		}
	}
	return ra
}

var oldRoleKeys = func() map[string]int {
	m := make(map[string]int, len(roleKeyNames))
	for i, k := range roleKeyNames {
		m[k] = i
	}
	return m
}()

var oldRoleKeyMay = func() (may [64]uint64) {
	for _, k := range roleKeyNames {
		may[len(k)] |= 1 << (k[len(k)-1] & 63)
	}
	return may
}()

// BenchmarkSpanResolution compares, on every span of the processor benchmarks' workload,
// the per-span resolution Build does (role keys, tokens, error type, agent or tool name)
// through the compiled chains with the place-by-place resolution it replaced.
func BenchmarkSpanResolution(b *testing.B) {
	var spans []*Span
	for _, tr := range workloadTraces(b) {
		spans = append(spans, tr...)
	}
	chains := DefaultChains().withDefaults()
	var sink int64
	b.Run("place_by_place", func(b *testing.B) {
		cpu0 := perfProcessCPU()
		for b.Loop() {
			for _, s := range spans {
				ra := readRoleAttrs(s.Pdata.Attributes())
				role, _ := classifyRole(s.Pdata, s.Scope.Name(), &ra)
				in, _, _ := resolveInt(s.Pdata, chains.InputTokens)
				out, _, _ := resolveInt(s.Pdata, chains.OutputTokens)
				typ := resolve(s.Pdata, chains.ErrorType, nil)
				name := resolve(s.Pdata, chains.AgentName, nil)
				if role == RoleTool {
					name = resolve(s.Pdata, chains.ToolName, nil)
				}
				sink += in + out + int64(len(typ.Text)+len(name.Text))
			}
		}
		b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(b.N*len(spans)), "ns/span")
		b.ReportMetric(float64((perfProcessCPU()-cpu0).Nanoseconds())/float64(b.N*len(spans)), "cpu-ns/span")
	})
	b.Run("compiled", func(b *testing.B) {
		cc := compiledFor(chains)
		cpu0 := perfProcessCPU()
		for b.Loop() {
			ix := newAttrIndex(cc, len(spans))
			var ra roleAttrs
			for _, s := range spans {
				ra.found = 0
				ix.add(s, &ra)
				role, _ := classifyRole(s.Pdata, s.Scope.Name(), &ra)
				in, _, _ := ix.resolveInt(s, &cc.inputTokens)
				out, _, _ := ix.resolveInt(s, &cc.outputTokens)
				typ := ix.resolve(s, &cc.errorType, nil, nil)
				name := ix.resolve(s, &cc.agentName, nil, nil)
				if role == RoleTool {
					name = ix.resolve(s, &cc.toolName, nil, nil)
				}
				sink += in + out + int64(len(typ.Text)+len(name.Text))
			}
			ix.release()
		}
		b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(b.N*len(spans)), "ns/span")
		b.ReportMetric(float64((perfProcessCPU()-cpu0).Nanoseconds())/float64(b.N*len(spans)), "cpu-ns/span")
	})
	_ = sink
}

// toolNamesDecoded is toolNames as it was, decoding the text: it reads tool names from a list of names or of tool definitions: the OTel
// ({"name": ...}) or OpenAI ({"function": {"name": ...}}) schema, Google ADK's
// {"functionDeclarations": [...]}, definitions serialized as JSON strings (Vercel AI SDK's
// ai.prompt.tools, Microsoft Agent Framework), and OpenInference's flattened
// llm.tools.N.tool.json_schema keys (an object of JSON strings, in key order).
func toolNamesDecoded(s string) []string {
	var v any
	if json.Unmarshal([]byte(s), &v) != nil {
		return nil
	}
	var names []string
	seen := map[string]bool{}
	add := func(n string) {
		if n != "" && !seen[n] {
			seen[n] = true
			names = append(names, n)
		}
	}
	var walk func(v any, depth int)
	walk = func(v any, depth int) {
		if depth > 6 {
			return
		}
		switch x := v.(type) {
		case string:
			if t := strings.TrimSpace(x); strings.HasPrefix(t, "{") {
				var inner any
				if json.Unmarshal([]byte(t), &inner) == nil {
					walk(inner, depth+1)
				}
				return
			}
			add(x)
		case []any:
			for _, it := range x {
				walk(it, depth+1)
			}
		case map[string]any:
			switch {
			case x["functionDeclarations"] != nil:
				walk(x["functionDeclarations"], depth+1)
			case x["function"] != nil:
				if f, ok := x["function"].(map[string]any); ok {
					if n, ok := f["name"].(string); ok {
						add(n)
					}
				}
			case x["name"] != nil:
				if n, ok := x["name"].(string); ok {
					add(n)
				}
			default:
				if depth == 0 { // flattened indexed keys: one definition per value
					for _, k := range sortedKeys(x) {
						walk(x[k], depth+1)
					}
				}
			}
		}
	}
	walk(v, 0)
	return names
}

// toolNames (scanned) returns what toolNamesDecoded returned, on every value of every
// capture and corpus trace and on edge cases.
func TestToolNamesScanIsDecoded(t *testing.T) {
	vals := append(captureValues(t),
		``, `null`, `[]`, `{}`, ` ["a", "b", "a", ""] `, `[{"name":"a"},{"name":null},{"name":1},{"function":null,"name":"b"}]`,
		`[{"function":{"name":"f"}},{"function":"x","name":"y"},{"function":{"name":2}}]`,
		`{"functionDeclarations":[{"name":"g"}]}`, `{"functionDeclarations":null,"name":"n"}`,
		`{"llm.tools.1.tool.json_schema":"{\"name\":\"t1\"}","llm.tools.0.tool.json_schema":"{\"name\":\"t0\"}"}`,
		`["{\"name\":\"s\"}", " {bad", "\u00a0{\"name\":\"nb\"}"]`, `[[[[[[[["deep"]]]]]]]]`, `[[[[["five"]]]]]`,
		`{"name":"a","name":"b"}`, `[{"name":"x\u0041"}]`, "[\"\xff\"]", `[1e999]`, `{"a":{"name":"nested"}}`,
		`[{"type":"function","function":{"name":"w","parameters":{}}}]`, `"plain"`, `"{\"name\":\"in a string\"}"`,
	)
	// What the allowed-tools chain finds, KEY#a.b places rendered, as collect reads it.
	found := 0
	for _, td := range agreementTraces(t) {
		for _, spans := range SpansOf(td) {
			for _, s := range spans {
				for _, place := range DefaultChains().AllowedTools {
					if v, ok := lookupPlace(s.Pdata, strings.TrimPrefix(place, "llm:")); ok {
						vals, found = append(vals, v), found+1
					}
				}
			}
		}
	}
	require.Greater(t, found, 50)
	require.Greater(t, len(vals), 1000)
	for _, v := range vals {
		require.Equal(t, toolNamesDecoded(v), toolNames(v), "%q", v)
	}
}

// BenchmarkToolNames: reading the tool names of every allowed-tools text the workload's
// spans hold (KEY#a.b places rendered), decoded and scanned.
func BenchmarkToolNames(b *testing.B) {
	var texts []string
	for _, tr := range workloadTraces(b) {
		for _, s := range tr {
			for _, place := range DefaultChains().AllowedTools {
				if v, ok := lookupPlace(s.Pdata, strings.TrimPrefix(place, "llm:")); ok {
					texts = append(texts, v)
				}
			}
		}
	}
	require.NotEmpty(b, texts)
	for _, r := range []struct {
		name string
		read func(string) []string
	}{{"decoded", toolNamesDecoded}, {"scanned", toolNames}} {
		b.Run(r.name, func(b *testing.B) {
			b.ReportAllocs()
			cpu0 := perfProcessCPU()
			for b.Loop() {
				for _, t := range texts {
					r.read(t)
				}
			}
			b.ReportMetric(float64((perfProcessCPU()-cpu0).Nanoseconds())/float64(b.N*len(texts)), "cpu-ns/text")
		})
	}
}
