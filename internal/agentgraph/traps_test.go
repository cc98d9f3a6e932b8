package agentgraph

import (
	"os"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/require"
	"go.opentelemetry.io/collector/pdata/pcommon"
	"go.opentelemetry.io/collector/pdata/ptrace"
)

// Each trap of DIALECTS.md sections 4-5, on a minimal hand-made trace.
func TestTraps(t *testing.T) {
	chat := func(in, out int64) map[string]any {
		return map[string]any{"gen_ai.operation.name": "chat", "gen_ai.usage.input_tokens": in, "gen_ai.usage.output_tokens": out}
	}
	tests := []struct {
		name  string
		spans []spanSpec
		check func(t *testing.T, g *Graph)
	}{
		{
			name: "OpenAI Agents workflow root is not an agent",
			spans: []spanSpec{
				{id: 1, name: "Agent workflow", attrs: map[string]any{"openinference.span.kind": "AGENT"}},
				{id: 2, parent: 1, name: "Hello world", start: 1, attrs: map[string]any{"openinference.span.kind": "AGENT", "graph.node.id": "Hello world"}},
			},
			check: func(t *testing.T, g *Graph) {
				require.Len(t, g.Invocations, 1)
				require.Equal(t, "Hello world", g.Root.Name)
				require.Empty(t, g.Edges)
			},
		},
		{
			name: "BeeAI event spans are not agents",
			spans: []spanSpec{
				{id: 1, name: "beeai-framework-main", attrs: map[string]any{"openinference.span.kind": "AGENT"}},
				{id: 2, parent: 1, name: "agent.react.update-12", start: 1, attrs: map[string]any{"openinference.span.kind": "AGENT"}},
				{id: 3, parent: 1, name: "tool.search.wikipedia.start-12", start: 2, attrs: map[string]any{"openinference.span.kind": "TOOL"}},
				{id: 4, parent: 1, name: "tool.search.wikipedia.success-12", start: 3, attrs: map[string]any{"openinference.span.kind": "TOOL"}},
			},
			check: func(t *testing.T, g *Graph) {
				require.Len(t, g.Invocations, 1)
				require.Len(t, g.Invocations[0].ToolCalls, 1, "one tool call, not one per event")
			},
		},
		{
			name: "a name that merely contains agent is not an agent",
			spans: []spanSpec{
				{id: 1, name: "agent", attrs: map[string]any{"openinference.span.kind": "CHAIN"}},
				{id: 2, parent: 1, name: "useragent-parser", start: 1},
			},
			check: func(t *testing.T, g *Graph) { require.Empty(t, g.Invocations) },
		},
		{
			name: "tokens repeated on the agent span count once, from the LLM spans",
			spans: []spanSpec{
				{id: 1, name: "invoke_agent a", attrs: map[string]any{
					"gen_ai.operation.name": "invoke_agent",
					"gen_ai.agent.name":     "a", "gen_ai.usage.input_tokens": int64(30), "gen_ai.usage.output_tokens": int64(3),
				}},
				{id: 2, parent: 1, name: "chat", start: 1, attrs: chat(10, 1)},
				{id: 3, parent: 1, name: "chat", start: 2, attrs: chat(20, 2)},
			},
			check: func(t *testing.T, g *Graph) {
				require.Equal(t, int64(33), g.Invocations[0].Self.TotalTokens)
				require.Equal(t, 2, g.Invocations[0].Self.LLMCalls)
			},
		},
		{
			name: "two instrumentations wrapping one call count the innermost",
			spans: []spanSpec{
				{id: 1, name: "Agent.run", attrs: map[string]any{"openinference.span.kind": "AGENT"}},
				{id: 2, parent: 1, name: "OpenAIChat.invoke", start: 1, attrs: map[string]any{"openinference.span.kind": "LLM", "llm.token_count.prompt": int64(542), "llm.token_count.completion": int64(9)}},
				{id: 3, parent: 2, name: "chat gpt-4o-mini", start: 2, attrs: chat(163, 20)},
			},
			check: func(t *testing.T, g *Graph) {
				require.Equal(t, int64(183), g.Invocations[0].Self.TotalTokens)
				require.Equal(t, 1, g.Invocations[0].Self.LLMCalls)
			},
		},
		{
			name: "an agent without LLM spans keeps its own tokens",
			spans: []spanSpec{
				{id: 1, name: "invoke_agent a", attrs: map[string]any{
					"gen_ai.operation.name": "invoke_agent",
					"gen_ai.agent.name":     "a", "gen_ai.usage.prompt_tokens": "52", "gen_ai.usage.completion_tokens": "7",
				}},
			},
			check: func(t *testing.T, g *Graph) { require.Equal(t, int64(59), g.Invocations[0].Self.TotalTokens) },
		},
		{
			name: "LangGraph ParentCommand on a handoff is not a failure",
			spans: []spanSpec{
				{id: 1, name: "tools", attrs: map[string]any{"openinference.span.kind": "CHAIN"}},
				{id: 2, parent: 1, name: "transfer_to_b", start: 1, attrs: map[string]any{"openinference.span.kind": "TOOL", "tool.name": "transfer_to_b"}},
			},
			check: func(t *testing.T, g *Graph) {
				for _, s := range g.Spans {
					require.Nil(t, s.Error, s.Pdata.Name())
				}
			},
		},
		{
			name: "flat spans without parents make no edges",
			spans: []spanSpec{
				{id: 1, name: "a.agent", attrs: map[string]any{"traceloop.span.kind": "agent", "traceloop.entity.name": "a"}},
				{id: 2, name: "b.agent", start: 1, attrs: map[string]any{"traceloop.span.kind": "agent", "traceloop.entity.name": "b"}},
			},
			check: func(t *testing.T, g *Graph) {
				require.Len(t, g.Invocations, 2)
				require.Empty(t, g.Edges)
			},
		},
		{
			name: "gen_ai.agent.name on a non-agent span names the owner, not a new agent",
			spans: []spanSpec{
				{id: 1, name: "invoke_agent a", attrs: agent("a")},
				{id: 2, parent: 1, name: "chat", start: 1, attrs: map[string]any{"gen_ai.operation.name": "chat", "gen_ai.agent.name": "a"}},
				{id: 3, parent: 1, name: "execute_tool x", start: 2, attrs: map[string]any{"gen_ai.operation.name": "execute_tool", "gen_ai.tool.name": "x", "gen_ai.agent.name": "a"}},
			},
			check: func(t *testing.T, g *Graph) {
				require.Len(t, g.Invocations, 1)
				require.Len(t, g.Invocations[0].ToolCalls, 1)
			},
		},
		{
			name: "CrewAI delegation by argument shape, not tool name",
			spans: []spanSpec{
				{id: 1, name: "Crew.kickoff", attrs: map[string]any{"openinference.span.kind": "CHAIN"}},
				{id: 2, parent: 1, name: "Researcher", start: 1, attrs: map[string]any{"openinference.span.kind": "AGENT", "graph.node.id": "Researcher"}},
				{id: 3, parent: 2, name: "Werk delegeren aan collega", start: 2, attrs: map[string]any{
					"openinference.span.kind": "TOOL",
					"tool.name":               "Werk delegeren aan collega", "input.value": `{"task":"write it","context":"notes","coworker":"Writer"}`,
				}},
				{id: 4, parent: 1, name: "Writer", start: 3, attrs: map[string]any{"openinference.span.kind": "AGENT", "graph.node.id": "Writer", "graph.node.parent_id": "Researcher"}},
			},
			check: func(t *testing.T, g *Graph) {
				require.Len(t, g.Edges, 1)
				e := g.Edges[0]
				require.Equal(t, "Researcher -> Writer transfer_tool", e.From.Name+" -> "+e.To.Name+" "+e.Detection)
				require.Equal(t, "notes", e.Context.Text)
			},
		},
		{
			name: "graph.node.parent_id names the sender of a sibling agent",
			spans: []spanSpec{
				{id: 1, name: "root"},
				{id: 2, parent: 1, name: "planner", start: 1, attrs: map[string]any{"gen_ai.span.kind": "AGENT", "gen_ai.agent.name": "planner", "graph.node.id": "n1"}},
				{id: 3, parent: 1, name: "coder", start: 2, attrs: map[string]any{"gen_ai.span.kind": "AGENT", "gen_ai.agent.name": "coder", "graph.node.parent_id": "n1"}},
			},
			check: func(t *testing.T, g *Graph) {
				require.Len(t, g.Edges, 1)
				require.Equal(t, DetectParentPointer, g.Edges[0].Detection)
				require.Equal(t, "planner", g.Edges[0].From.Name)
			},
		},
		{
			name: "explicit handoff span with a sibling receiver, enriched not duplicated",
			spans: []spanSpec{
				{id: 1, name: "root"},
				{id: 2, parent: 1, name: "invoke_agent a", start: 1, attrs: agent("a")},
				{id: 3, parent: 2, name: "a → b.handoff", start: 2, attrs: map[string]any{
					"traceloop.span.kind":       "handoff",
					"gen_ai.handoff.from_agent": "a", "gen_ai.handoff.to_agent": "b",
				}},
				{id: 4, parent: 1, name: "invoke_agent b", start: 3, attrs: agent("b")},
			},
			check: func(t *testing.T, g *Graph) {
				require.Len(t, g.Edges, 1)
				require.Equal(t, DetectHandoffSpan, g.Edges[0].Detection)
				require.Equal(t, 0, AppendHandoffs(g, ptrace.NewTraces(), ContentPolicy{}), "enriched, no twin")
				v, ok := g.Edges[0].Via.Pdata.Attributes().Get(AttrTarget)
				require.True(t, ok)
				require.Equal(t, "b", v.Str())
			},
		},
		{
			name: "OpenInference handoff tool span names its target",
			spans: []spanSpec{
				{id: 1, name: "root"},
				{id: 2, parent: 1, name: "a", start: 1, attrs: map[string]any{"openinference.span.kind": "AGENT", "graph.node.id": "a"}},
				{id: 3, parent: 2, name: "handoff to b", start: 2, attrs: map[string]any{"openinference.span.kind": "TOOL"}},
				{id: 4, parent: 1, name: "b", start: 3, attrs: map[string]any{"openinference.span.kind": "AGENT", "graph.node.id": "b"}},
			},
			check: func(t *testing.T, g *Graph) {
				require.Len(t, g.Edges, 1)
				require.Equal(t, "a -> b handoff_span", g.Edges[0].From.Name+" -> "+g.Edges[0].To.Name+" "+g.Edges[0].Detection)
			},
		},
		{
			name: "sibling order is the last resort, marked inferred",
			spans: []spanSpec{
				{id: 1, name: "app"},
				{id: 2, parent: 1, name: "joke_agent run", start: 1, attrs: map[string]any{"agent_name": "joke_agent", "gen_ai.agent.name": "joke_agent"}},
				{id: 3, parent: 1, name: "evaluator_agent run", start: 2, attrs: map[string]any{"agent_name": "evaluator_agent", "gen_ai.agent.name": "evaluator_agent"}},
				{id: 4, parent: 1, name: "joke_agent run", start: 3, attrs: map[string]any{"agent_name": "joke_agent", "gen_ai.agent.name": "joke_agent"}},
			},
			check: func(t *testing.T, g *Graph) {
				require.Len(t, g.Edges, 1, "the third run returns to an agent already seen: no edge")
				require.True(t, g.Edges[0].Inferred)
				require.Empty(t, g.Cycles)
			},
		},
		{
			name: "content capture disabled: the input records every key tried",
			spans: []spanSpec{
				{id: 1, name: "invoke_agent a", attrs: agent("a")},
				{id: 2, parent: 1, name: "execute_tool b", start: 1, attrs: map[string]any{"gen_ai.operation.name": "execute_tool", "gen_ai.tool.name": "b"}},
				{id: 3, parent: 2, name: "invoke_agent b", start: 2, attrs: map[string]any{"gen_ai.operation.name": "invoke_agent", "gen_ai.agent.name": "b", "gcp.vertex.agent.llm_request": "{}"}},
			},
			check: func(t *testing.T, g *Graph) {
				in := g.Invocations[1].Input
				require.False(t, in.Found())
				require.Equal(t, SourceNone, in.Source)
				require.Contains(t, in.Tried, "gen_ai.input.messages")
				require.Contains(t, in.Tried, "input.value")
			},
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			tt.check(t, Build(pcommon.TraceID{1}, handMade(tt.spans...), Options{}))
		})
	}
}

// TestChainOverride: a configured chain replaces the default for its field only.
func TestChainOverride(t *testing.T) {
	spans := handMade(spanSpec{id: 1, name: "invoke_agent a", attrs: map[string]any{
		"gen_ai.operation.name": "invoke_agent", "gen_ai.agent.name": "a", "my.app.input": "do X", "input.value": "ignored",
	}})
	g := Build(pcommon.TraceID{1}, spans, Options{Chains: Chains{Input: Chain{"my.app.input"}}})
	require.Equal(t, Value{Text: "do X", Source: "my.app.input"}, g.Invocations[0].Input)
	require.Equal(t, "gen_ai.agent.name", g.Invocations[0].Span.Name.Source, "other chains keep their defaults")
}

// TestNegativeCorpus: traces that must not grow agents or edges.
func TestNegativeCorpus(t *testing.T) {
	corpus := func(name string) []*Graph {
		return BuildAll(readTraces(t, filepath.Join("..", "..", "testdata", "corpus", name+".otlp.json")), Options{})
	}
	beeai := corpus("lf-beeai-openinference")[0]
	require.Len(t, beeai.Invocations, 1, "18 AGENT-kind event spans are not agents")
	require.Empty(t, beeai.Edges)

	for _, f := range []string{"traceloop-langgraph-ok", "traceloop-langgraph-withworkflow"} {
		for _, g := range BuildAll(capture(t, f), Options{}) {
			require.Empty(t, g.Edges, f)
		}
	}
	oai := corpus("lf-openai-agents-openinference")[0]
	require.Len(t, oai.Invocations, 1)
	require.Equal(t, "Hello world", oai.Root.Name)

	agno := corpus("lf-agno-openinference")[0]
	require.Equal(t, int64(663+163), agno.Root.Self.InputTokens, "innermost of two instrumentations")

	for _, f := range []string{"lf-claude-agent-sdk-langsmith", "lf-dotnet-meai-gemini-genai"} {
		require.Empty(t, corpus(f)[0].Invocations, f)
	}
	lg := BuildAll(capture(t, "langgraph-ok"), Options{})[0]
	for _, inv := range lg.Invocations {
		require.Zero(t, inv.Self.Errors, "ParentCommand is control flow")
	}
	lgErr := BuildAll(capture(t, "langgraph-tool-error"), Options{})[0]
	require.Equal(t, 1, lgErr.Invocations[1].Self.Errors, "the failing get_weather call")
}

// TestPhoenixCorpus reads the Elastic-licensed Phoenix traces from the shared corpus when
// it sits beside the checkout (they are not copied into the repository).
func TestPhoenixCorpus(t *testing.T) {
	dir := filepath.Join("..", "..", "..", "shared", "corpus", "otlp")
	if _, err := os.Stat(filepath.Join(dir, "phoenix-pxi-subagent.otlp.json")); err != nil {
		t.Skip("shared corpus not present beside the checkout")
	}
	sub := BuildAll(readTraces(t, filepath.Join(dir, "phoenix-pxi-subagent.otlp.json")), Options{})[0]
	require.Len(t, sub.Edges, 1)
	require.Equal(t, "pxi.turn -> ServerAgent.iter agent_as_tool call_subagent",
		sub.Edges[0].From.Name+" -> "+sub.Edges[0].To.Name+" "+sub.Edges[0].Detection+" "+sub.Edges[0].Via.Pdata.Name())
	require.Equal(t, 16, sub.Invocations[1].Self.LLMCalls)

	turn := BuildAll(readTraces(t, filepath.Join(dir, "phoenix-pxi-turn-error.otlp.json")), Options{})[0]
	require.Len(t, turn.Invocations, 1)
	require.Equal(t, 1, turn.Root.Self.Errors, "add_spans_to_dataset failed")
	require.Equal(t, 9, turn.Root.Self.LLMCalls)
}

// TestSpanLinkToSenderTrace: a sub-agent exporting its own trace links its root agent span
// to the dispatching span of the sender's trace; the HANDOFF span lands in the receiver's
// trace, parented like the receiver and linked to the sender.
func TestSpanLinkToSenderTrace(t *testing.T) {
	td := handMadeTD(spanSpec{id: 1, name: "invoke_agent researcher", attrs: agent("researcher")})
	sp := td.ResourceSpans().At(0).ScopeSpans().At(0).Spans().At(0)
	l := sp.Links().AppendEmpty()
	l.SetTraceID(pcommon.TraceID{2})
	l.SetSpanID(pcommon.SpanID{7})
	l.Attributes().PutStr("gen_ai.agent.name", "planner")

	g := Build(pcommon.TraceID{1}, SpansOf(td)[pcommon.TraceID{1}], Options{})
	require.Len(t, g.Edges, 1)
	e := g.Edges[0]
	require.Equal(t, "planner -> researcher span_link", e.From.Name+" -> "+e.To.Name+" "+e.Detection)
	require.Equal(t, "researcher", g.Root.Name, "the remote sender is not part of this trace's DAG")
	require.Len(t, g.Invocations, 1)

	out := ptrace.NewTraces()
	require.Equal(t, 1, AppendHandoffs(g, out, ContentPolicy{}))
	h := out.ResourceSpans().At(0).ScopeSpans().At(0).Spans().At(0)
	require.True(t, h.ParentSpanID().IsEmpty())
	require.Equal(t, pcommon.TraceID{2}, h.Links().At(0).TraceID())
	v, _ := h.Attributes().Get(AttrSourceTraceID)
	require.Equal(t, pcommon.TraceID{2}.String(), v.Str())
}
