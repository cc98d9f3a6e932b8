package agentgraph

import (
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"
	"go.opentelemetry.io/collector/pdata/ptrace"

	"github.com/otelcol-handoff/otelcol-handoff/internal/agentgraph/agentgraphtest"
)

// The framework shapes of issue 11 (behaviours 1-6 and 8), each on a real capture of
// testdata/traces (or a minimal in-memory edit of one, said where it is made).

func only(t *testing.T, td ptrace.Traces) *Graph {
	t.Helper()
	graphs := BuildAll(td, Options{})
	require.Len(t, graphs, 1)
	return graphs[0]
}

func names(invs []*Invocation) []string {
	out := []string{}
	for _, inv := range invs {
		out = append(out, inv.Name)
	}
	return out
}

func callNames(calls []*ToolCall) []string {
	out := []string{}
	for _, tc := range calls {
		out = append(out, tc.Name)
	}
	return out
}

// eachSpan calls f on every span of td named name (the in-memory edits of captures).
func eachSpan(t *testing.T, td ptrace.Traces, name string, f func(ptrace.Span)) {
	t.Helper()
	n := 0
	rss := td.ResourceSpans()
	for i := 0; i < rss.Len(); i++ {
		sss := rss.At(i).ScopeSpans()
		for j := 0; j < sss.Len(); j++ {
			spans := sss.At(j).Spans()
			for k := 0; k < spans.Len(); k++ {
				if sp := spans.At(k); sp.Name() == name {
					f(sp)
					n++
				}
			}
		}
	}
	require.NotZero(t, n, "no span named %s", name)
}

// TestSwarmWrapperIsNotAnAgent: the Strands swarm (invoke_swarm, gen_ai.agent.name=swarm)
// and its execute_node spans group triage and weather_specialist but are no agents: the
// root is triage (the first agent the swarm ran), the only edge is triage's handoff, the
// depth is 1, and the model keeps the swarm and its nodes as wrappers.
func TestSwarmWrapperIsNotAnAgent(t *testing.T) {
	for _, name := range []string{"strands-ok", "strands-tool-error", "strands-ok-latest-semconv"} {
		t.Run(name, func(t *testing.T) {
			g := only(t, capture(t, name))
			require.Equal(t, []string{"triage", "weather_specialist"}, names(g.Invocations))
			require.Equal(t, "triage", g.Root.Name)
			require.Equal(t, []string{"triage"}, names(g.RootRuns))
			require.Equal(t, 1, g.Depth)
			require.Len(t, g.Edges, 1)
			require.Equal(t, "triage", g.Edges[0].From.Name)

			require.Len(t, g.Wrappers, 3)
			swarm, triageNode, specialistNode := g.Wrappers[0], g.Wrappers[1], g.Wrappers[2]
			require.Equal(t, WrapperSwarm, swarm.Kind)
			require.Equal(t, Value{Text: "weather_swarm", Source: "gen_ai.agent.id"}, swarm.Name)
			require.Equal(t, "invoke_swarm weather_swarm", swarm.Span.Pdata.Name())
			require.Nil(t, swarm.Parent)
			require.Empty(t, swarm.Members, "the swarm holds its agents through its nodes")
			require.Equal(t, []*Wrapper{triageNode, specialistNode}, swarm.Children)
			for i, node := range []*Wrapper{triageNode, specialistNode} {
				require.Equal(t, WrapperNode, node.Kind)
				require.Same(t, swarm, node.Parent)
				require.Equal(t, []*Invocation{g.Invocations[i]}, node.Members)
				require.Equal(t, g.Invocations[i].Name, node.Name.Text)
			}
			for _, s := range g.Spans {
				if strings.HasPrefix(s.Pdata.Name(), "invoke_swarm") || strings.HasPrefix(s.Pdata.Name(), "node ") {
					require.Equal(t, RoleWorkflow, s.Role, s.Pdata.Name())
				}
			}
		})
	}
}

// TestLangGraphWrapperAndRootRuns: LangGraph's graph span (an OpenInference CHAIN around
// its node agents) is a wrapper of the three agent runs; the supervisor triage resumed
// after the specialist is one logical agent: both of its top-level runs are RootRuns.
func TestLangGraphWrapperAndRootRuns(t *testing.T) {
	g := only(t, capture(t, "langgraph-ok"))
	require.Equal(t, []string{"triage", "weather_specialist", "triage"}, names(g.Invocations))
	require.Len(t, g.Wrappers, 1)
	w := g.Wrappers[0]
	require.Equal(t, WrapperWorkflow, w.Kind)
	require.Equal(t, "triage_workflow", w.Name.Text)
	require.Equal(t, g.Invocations, w.Members)
	require.Same(t, g.Invocations[0], g.Root)
	require.Equal(t, []*Invocation{g.Invocations[0], g.Invocations[2]}, g.RootRuns)
}

// TestDelegationCallsAreNotToolCalls: transfer calls, agent-as-tool calls and Strands'
// swarm routing calls are kept apart from the agents' own tool calls, in every capture
// that has them; the ToolCalls rollups count only the agents' own calls.
func TestDelegationCallsAreNotToolCalls(t *testing.T) {
	type want struct{ tools, delegations []string }
	for name, w := range map[string]map[string]want{
		"google-adk-ok": {
			"triage":             {[]string{}, []string{"transfer_to_agent"}},
			"weather_specialist": {[]string{"get_weather", "get_weather"}, []string{}},
		},
		"google-adk-agent-tool": {
			"triage": {[]string{}, []string{"weather_specialist"}},
		},
		"strands-ok": {
			"triage":             {[]string{}, []string{"strands_structured_output"}},
			"weather_specialist": {[]string{"get_weather", "get_weather"}, []string{"strands_structured_output"}},
		},
		"strands-agent-tool": {
			"triage": {[]string{}, []string{"weather_specialist"}},
		},
		"langgraph-ok": {
			"triage":             {[]string{}, []string{"transfer_to_weather_specialist"}},
			"weather_specialist": {[]string{"get_weather", "get_weather"}, []string{}},
		},
		"mastra-ok": {
			"triage": {[]string{}, []string{"agent-weatherSpecialist"}},
		},
		"vercel-ai-ok": {
			"triage": {[]string{}, []string{"weather_specialist"}},
		},
	} {
		t.Run(name, func(t *testing.T) {
			g := only(t, capture(t, name))
			for agent, calls := range w {
				inv := invocationNamed(t, g, agent)
				require.Equal(t, calls.tools, callNames(inv.ToolCalls), agent)
				require.Equal(t, calls.delegations, callNames(inv.DelegationCalls), agent)
				require.Equal(t, len(calls.tools), inv.Self.ToolCalls, agent)
				require.Equal(t, len(calls.delegations), inv.Self.DelegationCalls, agent)
			}
			root := g.Root
			require.Equal(t, 2, root.Subtree.ToolCalls, "two get_weather calls in the whole run")
		})
	}
	g := only(t, capture(t, "strands-ok"))
	triage, specialist := invocationNamed(t, g, "triage"), invocationNamed(t, g, "weather_specialist")
	require.Equal(t, DelegationTransfer, triage.DelegationCalls[0].Delegation, "names the next agent (agentId)")
	require.Equal(t, []string{"weather_specialist"}, triage.DelegationCalls[0].Targets)
	require.Equal(t, DelegationRouting, specialist.DelegationCalls[0].Delegation, "ends the swarm with its message")
	require.Same(t, triage.DelegationCalls[0].Span, g.Edges[0].Via)

	// Outside a swarm, a tool named like the swarm's routing tool is an ordinary call.
	agentTool := only(t, capture(t, "strands-agent-tool"))
	require.Equal(t, DelegationAgentTool, invocationNamed(t, agentTool, "triage").DelegationCalls[0].Delegation)
}

// TestTransferTextIsPayload: triage's LLM response carries text with its transfer_to_agent
// call (google-adk-transfer-text.json, an edited copy of google-adk-ok: see SOURCES.md):
// that text is what triage said with the dispatch, part of the edge's payload and of the
// HANDOFF span's scope prompt, so a card number in it is visible to payload and content
// checks (and redacted by default on the HANDOFF span).
func TestTransferTextIsPayload(t *testing.T) {
	const said = "Handing you over to our weather specialist. Card on file for the booking: 4111 1111 1111 1111."
	td := capture(t, "google-adk-transfer-text")
	g := only(t, td)
	require.Len(t, g.Edges, 1)
	e := g.Edges[0]
	require.Equal(t, DetectTransferTool, e.Detection)
	require.Equal(t, Value{Text: said, Source: "llm:gcp.vertex.agent.llm_response"}, e.Said)
	require.Equal(t, `{"agentName":"weather_specialist"}`, e.Reason.Text, "the reason stays the call's arguments")
	require.Equal(t, Value{
		Text:   `{"agentName":"weather_specialist","text":"` + said + `"}`,
		Source: "gcp.vertex.agent.tool_call_args+llm:gcp.vertex.agent.llm_response",
	}, e.Payload)
	require.NotContains(t, e.To.Input.Text, "4111", "the receiver's own requests do not repeat it in this capture")

	scope := func(policy ContentPolicy) (string, string) {
		out := ptrace.NewTraces()
		require.Equal(t, 1, AppendHandoffs(g, out, policy))
		attrs := out.ResourceSpans().At(0).ScopeSpans().At(0).Spans().At(0).Attributes()
		v, ok := attrs.Get(AttrScopePrompt)
		require.True(t, ok)
		src, _ := attrs.Get(AttrScopePrompt + SourceSuffix)
		return v.Str(), src.Str()
	}
	text, src := scope(ContentPolicy{Mode: ContentCopy})
	require.True(t, strings.HasPrefix(text, said+"\n\n"), text)
	require.Contains(t, text, "What's the weather in Paris and Berlin?", "then the receiver's input")
	require.Equal(t, "llm:gcp.vertex.agent.llm_response+llm:gcp.vertex.agent.llm_request", src)
	redacted, _ := scope(ContentPolicy{})
	require.NotContains(t, redacted, "4111 1111 1111 1111", "the built-in card detector masks it by default")

	// The unedited capture: the response holds only the call, so nothing was said.
	plain := only(t, capture(t, "google-adk-ok")).Edges[0]
	require.False(t, plain.Said.Found())
	require.Equal(t, plain.Reason, plain.Payload)
}

// TestSaidNeedsTheCallingResponse: Mastra's model_generation span covers the whole
// multi-step generation and records only its final text; it does not hold the
// agent-as-tool call, so that text is not taken as said with the dispatch.
func TestSaidNeedsTheCallingResponse(t *testing.T) {
	g := only(t, capture(t, "mastra-ok"))
	require.Len(t, g.Edges, 1)
	require.False(t, g.Edges[0].Said.Found())
}

// TestCommandGoto: a LangGraph tool or node that returns Command(goto=...) hands off to the
// node it names, whatever the tool is called. Edits of langgraph-ok in memory: the transfer
// tool renamed (only its Command result names the target), and the Command moved from the
// tool to the node that ran it.
func TestCommandGoto(t *testing.T) {
	t.Run("tool with any name", func(t *testing.T) {
		td := capture(t, "langgraph-ok")
		eachSpan(t, td, "transfer_to_weather_specialist", func(sp ptrace.Span) {
			sp.SetName("ask_for_help")
			sp.Attributes().PutStr("tool.name", "ask_for_help")
		})
		g := only(t, td)
		require.Len(t, g.Edges, 1)
		e := g.Edges[0]
		require.Equal(t, "triage -> weather_specialist", e.From.Name+" -> "+e.To.Name)
		require.Equal(t, DetectTransferTool, e.Detection)
		call := invocationNamed(t, g, "triage").DelegationCalls[0]
		require.Equal(t, "ask_for_help", call.Name)
		require.Equal(t, []string{"weather_specialist"}, call.Targets, "from the Command's goto")
	})
	t.Run("node returning a Command", func(t *testing.T) {
		td := capture(t, "langgraph-ok")
		var command string
		eachSpan(t, td, "transfer_to_weather_specialist", func(sp ptrace.Span) {
			out, _ := sp.Attributes().Get("output.value")
			command = strings.TrimSuffix(strings.TrimPrefix(out.Str(), `{"output":`), "}")
			sp.Attributes().PutStr("output.value", "Successfully transferred")
			sp.SetName("note_transfer")
			sp.Attributes().PutStr("tool.name", "note_transfer")
		})
		require.Contains(t, command, `"lg_name":"Command"`)
		eachSpan(t, td, "tools", func(sp ptrace.Span) {
			if md, _ := sp.Attributes().Get("metadata"); strings.Contains(md.Str(), `"langgraph_checkpoint_ns":"triage:`) {
				sp.Attributes().PutStr("output.value", command)
			}
		})
		g := only(t, td)
		require.Len(t, g.Edges, 1)
		e := g.Edges[0]
		require.Equal(t, "triage -> weather_specialist", e.From.Name+" -> "+e.To.Name)
		require.Equal(t, DetectCommandGoto, e.Detection)
		require.Equal(t, "tools", e.Via.Pdata.Name())
		require.Empty(t, invocationNamed(t, g, "triage").DelegationCalls, "note_transfer is an ordinary tool now")
	})
	require.Equal(t, []string{"a", "b"}, commandGoto(`{"output":{"lg_name":"Command","goto":["a",{"lg_name":"Send","node":"b"}]}}`))
	require.Equal(t, []string{"c", "d"}, commandGoto(`[{"lg_name":"Command","goto":"c"},{"lg_name":"Command","goto":"d"}]`))
	require.Nil(t, commandGoto(`{"lg_name":"Command","goto":"__end__"}`))
}

// TestOpenInferenceToolParams: OpenInference's LangChain tool spans record a single
// argument's bare value (input.value "Paris"); the arguments come from the requesting
// LLM response's tool call of the same id, so params.city works.
func TestOpenInferenceToolParams(t *testing.T) {
	for _, name := range []string{"langgraph-ok", "langgraph-tool-error"} {
		g := only(t, capture(t, name))
		calls := invocationNamed(t, g, "weather_specialist").ToolCalls
		require.Len(t, calls, 2)
		second := "Berlin"
		if name == "langgraph-tool-error" {
			second = "Atlantis"
		}
		for i, city := range []string{"Paris", second} {
			require.Equal(t, map[string]any{"city": city}, calls[i].Params(), name)
			require.Equal(t, "llm:output.value", calls[i].Args.Source)
		}
	}
	// Arguments a span records as an object are left alone.
	adk := invocationNamed(t, only(t, capture(t, "google-adk-ok")), "weather_specialist").ToolCalls
	require.Equal(t, "gcp.vertex.agent.tool_call_args", adk[0].Args.Source)
}

// TestOpenInferenceToolParamsSameMillisecond: OpenInference's LangChain spans start at a
// millisecond, so a tool that runs in under one can start at the same instant as the next
// model call. testdata/langgraph-same-millisecond.json is the weather_specialist part of a
// real run of e2e/clients/langgraph-command.mjs that turned the e2e verdict red ("Berlin"
// and "Berlin"): the get_weather span of Paris (79aa5b03642aadc2, tool_call_id lg_w1)
// and the second model call (771f70d50dee443d, which asks for lg_w2, Berlin) both start at
// ...342000000; the first model call (04f0080bfccfe634) asked for lg_w1 with Paris. The
// pairing goes by the call id, whatever order the spans arrive in.
func TestOpenInferenceToolParamsSameMillisecond(t *testing.T) {
	td := readTraces(t, filepath.Join("testdata", "langgraph-same-millisecond.json"))
	start := map[string]uint64{}
	spans := td.ResourceSpans().At(0).ScopeSpans().At(0).Spans()
	for i := 0; i < spans.Len(); i++ {
		start[spans.At(i).SpanID().String()] = uint64(spans.At(i).StartTimestamp())
	}
	require.Equal(t, start["79aa5b03642aadc2"], start["771f70d50dee443d"], "the capture's tie")

	reversed := ptrace.NewTraces()
	td.CopyTo(reversed)
	rs := reversed.ResourceSpans().At(0).ScopeSpans().At(0).Spans()
	for i, j := 0, rs.Len()-1; i < j; i, j = i+1, j-1 {
		a := ptrace.NewSpan()
		rs.At(i).CopyTo(a)
		rs.At(j).CopyTo(rs.At(i))
		a.CopyTo(rs.At(j))
	}
	for name, in := range map[string]ptrace.Traces{"as captured": td, "reversed": reversed} {
		calls := invocationNamed(t, only(t, in), "weather_specialist").ToolCalls
		require.Len(t, calls, 2, name)
		for i, want := range []struct{ span, city string }{{"79aa5b03642aadc2", "Paris"}, {"ae1f3da9fe0c3abb", "Berlin"}} {
			require.Equal(t, want.span, calls[i].Span.ID.String(), name)
			require.Equal(t, map[string]any{"city": want.city}, calls[i].Params(), name)
			require.Equal(t, "llm:output.value", calls[i].Args.Source, name)
		}
	}
}

// TestAllowedToolsPerDialect: the tools offered to each receiver, wherever its framework
// records them.
func TestAllowedToolsPerDialect(t *testing.T) {
	for _, tt := range []struct {
		file, agent string
		tools       []string
		source      string
	}{
		{"google-adk-ok", "weather_specialist", []string{"transfer_to_agent", "get_weather"}, "llm:gcp.vertex.agent.llm_request#config.tools"},
		{"google-adk-agent-tool", "weather_specialist", []string{"get_weather"}, "llm:gcp.vertex.agent.llm_request#config.tools"},
		{"langgraph-ok", "weather_specialist", []string{"get_weather"}, "llm:llm.tools.*"},
		{"vercel-ai-ok", "weather_specialist", []string{"get_weather"}, "llm:ai.prompt.tools"},
		{"vercel-ai-ok", "triage", []string{"weather_specialist"}, "llm:ai.prompt.tools"},
		{"strands-ok", "weather_specialist", []string{"get_weather"}, "gen_ai.agent.tools"},
		{"openai-agents-ok", "weather_specialist", []string{"get_weather"}, "openai.agents.span_data.tools"},
	} {
		inv := invocationNamed(t, only(t, capture(t, tt.file)), tt.agent)
		require.Equal(t, tt.tools, inv.AllowedTools, tt.file+" "+tt.agent)
		require.Equal(t, tt.source, inv.AllowedFrom, tt.file+" "+tt.agent)
	}
	// OTel GenAI gen_ai.tool.definitions (Microsoft Agent Framework: definitions as JSON strings).
	maf := BuildAll(readTraces(t, "../../testdata/corpus/lf-ms-agent-framework-genai.otlp.json"), Options{})
	var found bool
	for _, g := range maf {
		for _, inv := range g.Invocations {
			found = true
			require.Equal(t, []string{"get_weather"}, inv.AllowedTools)
			require.Equal(t, "gen_ai.tool.definitions", inv.AllowedFrom)
		}
	}
	require.True(t, found)
	// Mastra 0.24 records no offered tools at all (its model_generation spans carry only
	// messages): nothing is invented.
	require.Nil(t, invocationNamed(t, only(t, capture(t, "mastra-ok")), "weather_specialist").AllowedTools)
}

// TestDraftGenAIHandoffAttributes: the draft GenAI handoff attributes are evidence where
// present. In-memory edits of real captures: ADK's transfer renamed and stripped of its
// arguments, naming its target only through gen_ai.transfer.target.name (with
// gen_ai.transfer.mode); OpenAI Agents' handoff span removed, the receiver naming its
// sender through gen_ai.agent.handoff.source.name or gen_ai.caller.name.
func TestDraftGenAIHandoffAttributes(t *testing.T) {
	t.Run("gen_ai.transfer.target.name and mode", func(t *testing.T) {
		td := capture(t, "google-adk-ok")
		eachSpan(t, td, "execute_tool transfer_to_agent", func(sp ptrace.Span) {
			a := sp.Attributes()
			a.PutStr("gen_ai.tool.name", "route")
			a.Remove("gcp.vertex.agent.tool_call_args")
			a.PutStr("gen_ai.transfer.target.name", "weather_specialist")
			a.PutStr("gen_ai.transfer.mode", "pass_control")
		})
		g := only(t, td)
		require.Len(t, g.Edges, 1)
		e := g.Edges[0]
		require.Equal(t, DetectTransferTool, e.Detection)
		require.Equal(t, "pass_control", e.Mode)
		require.Equal(t, "route", e.Via.call.Name)
		out := ptrace.NewTraces()
		AppendHandoffs(g, out, ContentPolicy{})
		mode, ok := out.ResourceSpans().At(0).ScopeSpans().At(0).Spans().At(0).Attributes().Get(AttrTransferMode)
		require.True(t, ok)
		require.Equal(t, "pass_control", mode.Str())
	})
	for _, key := range []string{"gen_ai.agent.handoff.source.name", "gen_ai.caller.name"} {
		t.Run(key, func(t *testing.T) {
			td := capture(t, "openai-agents-ok")
			without := ptrace.NewTraces()
			rss := td.ResourceSpans()
			for i := 0; i < rss.Len(); i++ {
				rs := without.ResourceSpans().AppendEmpty()
				rss.At(i).Resource().CopyTo(rs.Resource())
				sss := rss.At(i).ScopeSpans()
				for j := 0; j < sss.Len(); j++ {
					ss := rs.ScopeSpans().AppendEmpty()
					sss.At(j).Scope().CopyTo(ss.Scope())
					spans := sss.At(j).Spans()
					for k := 0; k < spans.Len(); k++ {
						if sp := spans.At(k); !strings.HasPrefix(sp.Name(), "handoff ") {
							sp.CopyTo(ss.Spans().AppendEmpty())
						}
					}
				}
			}
			before := only(t, without).Edges
			require.Len(t, before, 1)
			require.Equal(t, DetectInferredSibling, before[0].Detection, "without the handoff span only timing links the sibling runs")
			eachSpan(t, without, "invoke_agent weather_specialist", func(sp ptrace.Span) { sp.Attributes().PutStr(key, "triage") })
			g := only(t, without)
			require.Len(t, g.Edges, 1)
			require.Equal(t, "triage -> weather_specialist", g.Edges[0].From.Name+" -> "+g.Edges[0].To.Name)
			require.Equal(t, DetectParentPointer, g.Edges[0].Detection)
			require.False(t, g.Edges[0].Inferred)
		})
	}
	t.Run("a span of its own is a handoff span", func(t *testing.T) {
		g := Build([16]byte{1}, handMade(
			spanSpec{id: 1, name: "a", attrs: agent("a")},
			spanSpec{id: 2, parent: 1, name: "transfer", start: 1, attrs: map[string]any{
				"gen_ai.agent.handoff.source.name": "a", "gen_ai.agent.handoff.target.name": "b",
			}},
			spanSpec{id: 3, name: "b", attrs: agent("b"), start: 2},
		), Options{})
		require.Len(t, g.Edges, 1)
		require.Equal(t, DetectHandoffSpan, g.Edges[0].Detection)
		require.Equal(t, "a -> b", g.Edges[0].From.Name+" -> "+g.Edges[0].To.Name)
	})
}

// TestDecoratorToolParams: OpenLLMetry's @tool decorator records its input as
// {"args": [...], "kwargs": {...}}: the keyword arguments are the params.
func TestDecoratorToolParams(t *testing.T) {
	g := Build([16]byte{1}, handMade(
		spanSpec{id: 1, name: "researcher.agent", attrs: map[string]any{"traceloop.span.kind": "agent", "traceloop.entity.name": "researcher"}},
		spanSpec{id: 2, parent: 1, name: "search.tool", start: 1, attrs: map[string]any{
			"traceloop.span.kind": "tool", "traceloop.entity.name": "search",
			"traceloop.entity.input": `{"args":[],"kwargs":{"query":"weather in Paris"}}`,
		}},
		spanSpec{id: 3, parent: 1, name: "fetch.tool", start: 2, attrs: map[string]any{
			"traceloop.span.kind": "tool", "traceloop.entity.name": "fetch",
			"traceloop.entity.input": `{"args":["https://example.test"],"kwargs":{"timeout":5}}`,
		}},
	), Options{})
	calls := g.Invocations[0].ToolCalls
	require.Equal(t, map[string]any{"query": "weather in Paris"}, calls[0].Params())
	require.Equal(t, map[string]any{"timeout": float64(5), "args": []any{"https://example.test"}}, calls[1].Params())
}

// TestWorkflowWrapper: an OTel invoke_workflow span around a supervisor's runs is a
// wrapper holding them, not an agent; the supervisor's runs are all RootRuns.
func TestWorkflowWrapper(t *testing.T) {
	g := BuildAll(agentgraphtest.SupervisorLoop(3), Options{})[0]
	require.Equal(t, []string{"supervisor", "worker", "supervisor", "worker", "supervisor", "worker"}, names(g.Invocations))
	require.Len(t, g.Wrappers, 1)
	w := g.Wrappers[0]
	require.Equal(t, WrapperWorkflow, w.Kind)
	require.Equal(t, "LangGraph", w.Name.Text)
	require.Equal(t, []string{"supervisor", "supervisor", "supervisor"}, names(w.Members), "workers run inside their supervisor, not in the wrapper directly")
	require.Equal(t, w.Members, g.RootRuns)
	require.Equal(t, 1, g.Depth)
}
