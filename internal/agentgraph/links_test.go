package agentgraph

import (
	"bytes"
	"encoding/json"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/require"
	"go.opentelemetry.io/collector/pdata/pcommon"
	"go.opentelemetry.io/collector/pdata/ptrace"

	"github.com/otelcol-handoff/otelcol-handoff/internal/agentgraph/agentgraphtest"
)

// Cross-process fixtures, assembled from real captures (testdata/traces/SOURCES.md,
// testdata/corpus/SOURCES.md) by agentgraphtest:
//   - google-adk-ok: service realclient-google-adk, triage hands off to weather_specialist
//     (transfer_to_agent), which calls get_weather twice;
//   - lf-openai-agents-openinference: the OpenAI Agents SDK agent "Hello world" (under its
//     "Agent workflow" root, not an agent), which calls get_weather once.

func corpusCapture(t testing.TB, name string) ptrace.Traces {
	return readTraces(t, filepath.Join("..", "..", "testdata", "corpus", name+".json"))
}

// firstSpanNamed is the earliest span of td with that name.
func firstSpanNamed(t testing.TB, td ptrace.Traces, name string) ptrace.Span {
	t.Helper()
	var found ptrace.Span
	ok := false
	for _, rs := range td.ResourceSpans().All() {
		for _, ss := range rs.ScopeSpans().All() {
			for _, sp := range ss.Spans().All() {
				if sp.Name() == name && (!ok || sp.StartTimestamp() < found.StartTimestamp()) {
					found, ok = sp, true
				}
			}
		}
	}
	require.True(t, ok, "no span named %q", name)
	return found
}

func edgeLines(g *Graph) []string {
	var out []string
	for _, e := range g.Edges {
		out = append(out, e.From.Name+" -> "+e.To.Name+" "+e.Detection)
	}
	return out
}

func invocationNamed(t testing.TB, g *Graph, name string) *Invocation {
	t.Helper()
	for _, inv := range g.Invocations {
		if inv.Name == name {
			return inv
		}
	}
	require.Failf(t, "no agent run", "%q", name)
	return nil
}

// crossServiceTrace: ADK's weather_specialist calls its first get_weather over HTTP on
// weather-backend, where the OpenAI Agents "Hello world" agent answers: one trace, two
// services.
func crossServiceTrace(t testing.TB) ptrace.Traces {
	adk := capture(t, "google-adk-ok")
	caller := firstSpanNamed(t, adk, "execute_tool get_weather")
	return agentgraphtest.JoinOverHTTP(adk, caller.SpanID(), corpusCapture(t, "lf-openai-agents-openinference.otlp"),
		"weather-backend", "http://127.0.0.1:8081/forecast", "/forecast")
}

// TestCrossServiceTrace: the DAG of a trace whose agents live in two services spans both,
// nesting through the HTTP client and server spans (which are not agents) to the nearest
// agent ancestor: the tool that made the call, so agent-as-tool.
func TestCrossServiceTrace(t *testing.T) {
	td := crossServiceTrace(t)
	graphs := BuildAll(td, Options{})
	require.Len(t, graphs, 1)
	g := graphs[0]
	require.Equal(t, []string{
		"triage -> weather_specialist transfer_tool",
		"weather_specialist -> Hello world agent_as_tool",
	}, edgeLines(g))
	require.Equal(t, "triage", g.Root.Name)
	require.Equal(t, 2, g.Depth)
	require.Zero(t, g.Orphans)

	hello := invocationNamed(t, g, "Hello world")
	svc, _ := hello.Span.Resource.Attributes().Get("service.name")
	require.Equal(t, "weather-backend", svc.Str())
	ws := invocationNamed(t, g, "weather_specialist")
	svc, _ = ws.Span.Resource.Attributes().Get("service.name")
	require.Equal(t, "realclient-google-adk", svc.Str())
	require.Equal(t, "execute_tool get_weather", hello.In.Via.Pdata.Name(), "the tool that made the HTTP call")
	// Each side keeps its own tool calls; the subtree of the caller holds the remote work.
	// The call that reached the remote agent is a delegation call (agent as tool), not one
	// of weather_specialist's tool calls.
	require.Len(t, ws.ToolCalls, 1)
	require.Len(t, ws.DelegationCalls, 1)
	require.Len(t, hello.ToolCalls, 1)
	require.Equal(t, ws.Self.LLMCalls+hello.Self.LLMCalls, ws.Subtree.LLMCalls)
	require.Equal(t, ws.Self.TotalTokens+hello.Self.TotalTokens, ws.Subtree.TotalTokens)

	for _, s := range g.Spans {
		if s.Scope.Name() == agentgraphtest.HTTPScope {
			require.Equal(t, RoleOther, s.Role, "%s", s.Pdata.Name())
			require.Equal(t, ws, s.Owner(), "the HTTP spans belong to the caller")
		}
	}

	checkGolden(t, filepath.Join("testdata", "golden", "cross-service-http.dag.json"), indentJSON(t, g.Summarize()))
	out := ptrace.NewTraces()
	require.Equal(t, 2, AppendHandoffs(g, out, ContentPolicy{MaxBytes: 4096}))
	checkGolden(t, filepath.Join("testdata", "golden", "cross-service-http.handoffs.json"), prettyTraces(t, out))
}

func prettyTraces(t *testing.T, td ptrace.Traces) []byte {
	t.Helper()
	b, err := (&ptrace.JSONMarshaler{}).MarshalTraces(td)
	require.NoError(t, err)
	var pretty bytes.Buffer
	require.NoError(t, json.Indent(&pretty, b, "", "  "))
	pretty.WriteByte('\n')
	return pretty.Bytes()
}

// asyncReceiverTraceID is the trace the asynchronous receiver runs in.
var asyncReceiverTraceID = pcommon.TraceID{0xa5, 0x1c, 0x0f, 0xf0, 1}

// asyncHandoff: ADK's weather_specialist publishes a message from its first get_weather
// call; weather-backend consumes it in a new trace whose consumer span links to the
// producer span, and runs "Hello world" there. It returns the sender trace, the receiver
// trace and the weather_specialist span id.
func asyncHandoff(t testing.TB, receiverTrace pcommon.TraceID) (sender, receiver ptrace.Traces, senderAgent pcommon.SpanID) {
	sender = capture(t, "google-adk-ok")
	tool := firstSpanNamed(t, sender, "execute_tool get_weather")
	agentgraphtest.AppendProducer(sender, tool.SpanID(), "forecasts")
	ws := firstSpanNamed(t, sender, "invoke_agent weather_specialist")
	receiver = agentgraphtest.LinkAsync(corpusCapture(t, "lf-openai-agents-openinference.otlp"), receiverTrace,
		tool.TraceID(), agentgraphtest.ProducerSpanID, "weather-backend", "forecasts", tool.EndTimestamp())
	return sender, receiver, ws.SpanID()
}

func merged(tds ...ptrace.Traces) ptrace.Traces {
	out := ptrace.NewTraces()
	for _, td := range tds {
		c := ptrace.NewTraces()
		td.CopyTo(c)
		c.ResourceSpans().MoveAndAppendTo(out.ResourceSpans())
	}
	return out
}

func graphOf(t testing.TB, graphs []*Graph, id pcommon.TraceID) *Graph {
	t.Helper()
	for _, g := range graphs {
		if g.TraceID == id {
			return g
		}
	}
	require.Failf(t, "no graph", "%s", id)
	return nil
}

// TestAsyncHandoffLinkedTrace: the receiver's trace starts with a consumer span linked to
// the sender's producer span; with the sender's trace in the same file, the edge is named
// by the agent owning the linked span (weather_specialist, through its tool call) and its
// HANDOFF span lives in the receiver's trace, linked to the sender's agent span.
func TestAsyncHandoffLinkedTrace(t *testing.T) {
	sender, receiver, senderAgent := asyncHandoff(t, asyncReceiverTraceID)
	graphs := BuildAll(merged(sender, receiver), Options{})
	require.Len(t, graphs, 2)
	senderTrace := firstSpanNamed(t, sender, "invocation").TraceID()
	gs := graphOf(t, graphs, senderTrace)
	require.Equal(t, []string{"triage -> weather_specialist transfer_tool"}, edgeLines(gs), "the sender's own trace is unchanged")

	g := graphOf(t, graphs, asyncReceiverTraceID)
	require.Equal(t, []string{"weather_specialist -> Hello world span_link"}, edgeLines(g))
	e := g.Edges[0]
	require.Equal(t, &RemoteRef{
		TraceID: senderTrace, SpanID: senderAgent, LinkedSpanID: agentgraphtest.ProducerSpanID,
		Resolution: LinkBySenderTrace,
	}, e.From.Remote)
	require.Equal(t, "Hello world", g.Root.Name, "the remote sender is not part of this trace's DAG")
	require.Len(t, g.Invocations, 1)
	require.Equal(t, LinkCounts{BySenderTrace: 1}, g.ResolveLinks(nil))

	checkGolden(t, filepath.Join("testdata", "golden", "async-span-link.dag.json"), indentJSON(t, g.Summarize()))
	out := ptrace.NewTraces()
	require.Equal(t, 1, AppendHandoffs(g, out, ContentPolicy{MaxBytes: 4096}))
	h := out.ResourceSpans().At(0).ScopeSpans().At(0).Spans().At(0)
	require.Equal(t, asyncReceiverTraceID, h.TraceID(), "the HANDOFF span lives in the receiver's trace")
	require.Equal(t, e.To.Span.ParentID, h.ParentSpanID(), "parented like the receiver (its Agent workflow span)")
	require.Equal(t, 1, h.Links().Len())
	require.Equal(t, senderTrace, h.Links().At(0).TraceID())
	require.Equal(t, senderAgent, h.Links().At(0).SpanID(), "linked to the sender's agent span")
	for key, want := range map[string]string{
		AttrSource: "weather_specialist", AttrTarget: "Hello world", AttrDetection: DetectSpanLink,
		AttrSourceTraceID: senderTrace.String(), AttrSourceSpanID: senderAgent.String(),
		AttrSourceResolution: LinkBySenderTrace,
	} {
		v, ok := h.Attributes().Get(key)
		require.True(t, ok, key)
		require.Equal(t, want, v.Str(), key)
	}
	svc, _ := out.ResourceSpans().At(0).Resource().Attributes().Get("service.name")
	require.Equal(t, "weather-backend", svc.Str(), "the receiver's resource")
	checkGolden(t, filepath.Join("testdata", "golden", "async-span-link.handoffs.json"), prettyTraces(t, out))
}

// TestAsyncHandoffUnresolved: without the sender's trace (nor link attributes), the
// sender is a stand-in named by the linked trace, counted as unresolved.
func TestAsyncHandoffUnresolved(t *testing.T) {
	_, receiver, _ := asyncHandoff(t, asyncReceiverTraceID)
	graphs := BuildAll(receiver, Options{})
	require.Len(t, graphs, 1)
	g := graphs[0]
	require.Len(t, g.Edges, 1)
	e := g.Edges[0]
	require.Equal(t, "trace "+e.From.Remote.TraceID.String(), e.From.Name)
	require.Equal(t, LinkUnresolved, e.From.Remote.Resolution)
	require.Equal(t, agentgraphtest.ProducerSpanID, e.From.Remote.SpanID, "the linked span: the sender's run is unknown")
	require.Equal(t, LinkCounts{Unresolved: 1}, g.ResolveLinks(nil))

	// A resolver that learns the sender later names it; the name cycles are recomputed.
	r := graphsResolver{e.From.Remote.TraceID: {agentgraphtest.ProducerSpanID: {
		TraceID: e.From.Remote.TraceID, SpanID: pcommon.SpanID{9}, Agent: "dispatcher",
	}}}
	require.Equal(t, LinkCounts{BySenderTrace: 1}, g.ResolveLinks(r))
	require.Equal(t, "dispatcher", e.From.Name)
	require.Equal(t, pcommon.SpanID{9}, e.From.Span.ID)
}

// TestSpanLinkWithinTrace: the consumer span is a second root of the sender's own trace;
// its link resolves directly to the run owning the producer span, as a local edge.
func TestSpanLinkWithinTrace(t *testing.T) {
	sender, _, senderAgent := asyncHandoff(t, asyncReceiverTraceID)
	senderTrace := firstSpanNamed(t, sender, "invocation").TraceID()
	tool := firstSpanNamed(t, sender, "execute_tool get_weather")
	receiver := agentgraphtest.LinkAsync(corpusCapture(t, "lf-openai-agents-openinference.otlp"), senderTrace,
		senderTrace, agentgraphtest.ProducerSpanID, "weather-backend", "forecasts", tool.EndTimestamp())
	graphs := BuildAll(merged(sender, receiver), Options{})
	require.Len(t, graphs, 1)
	g := graphs[0]
	require.Equal(t, []string{
		"triage -> weather_specialist transfer_tool",
		"weather_specialist -> Hello world span_link",
	}, edgeLines(g))
	e := g.Edges[1]
	require.Nil(t, e.From.Remote)
	require.Equal(t, senderAgent, e.From.Span.ID)
	require.Equal(t, `{"city":"Paris"}`, e.Reason.Text, "the dispatching tool call's arguments")
	require.Equal(t, "triage", g.Root.Name)
	require.Equal(t, 2, g.Depth)
	require.True(t, g.Reaches(invocationNamed(t, g, "triage"), invocationNamed(t, g, "Hello world")))

	out := ptrace.NewTraces()
	require.Equal(t, 2, AppendHandoffs(g, out, ContentPolicy{}))
	var h ptrace.Span
	for _, rs := range out.ResourceSpans().All() {
		for _, sp := range rs.ScopeSpans().At(0).Spans().All() {
			if sp.Name() == "handoff weather_specialist -> Hello world" {
				h = sp
			}
		}
	}
	require.Equal(t, senderAgent, h.ParentSpanID(), "a local edge: parented on the sender")
	require.Zero(t, h.Links().Len())
}

// TestSpanLinkWithinTraceIgnoresOwnWork: a link from an agent's work back into its own
// spans, or to a span no agent owns, hands nothing off.
func TestSpanLinkWithinTraceIgnoresOwnWork(t *testing.T) {
	td := handMadeTD(
		spanSpec{id: 1, name: "invoke_agent a", attrs: agent("a")},
		spanSpec{id: 2, parent: 1, name: "execute_tool t", start: 1, attrs: map[string]any{"gen_ai.operation.name": "execute_tool", "gen_ai.tool.name": "t"}},
		spanSpec{id: 3, name: "job", start: 2},
	)
	spans := td.ResourceSpans().At(0).ScopeSpans().At(0).Spans()
	self := spans.At(0).Links().AppendEmpty() // a links to its own tool call
	self.SetTraceID(pcommon.TraceID{1})
	self.SetSpanID(pcommon.SpanID{2})
	g := Build(pcommon.TraceID{1}, SpansOf(td)[pcommon.TraceID{1}], Options{})
	require.Empty(t, g.Edges)

	// b runs under "job", which links to "job" itself and to a missing span: no sender.
	td = handMadeTD(
		spanSpec{id: 3, name: "job", start: 2},
		spanSpec{id: 4, parent: 3, name: "invoke_agent b", start: 3, attrs: agent("b")},
	)
	job := td.ResourceSpans().At(0).ScopeSpans().At(0).Spans().At(0)
	for _, id := range []byte{3, 42} {
		l := job.Links().AppendEmpty()
		l.SetTraceID(pcommon.TraceID{1})
		l.SetSpanID(pcommon.SpanID{id})
	}
	g = Build(pcommon.TraceID{1}, SpansOf(td)[pcommon.TraceID{1}], Options{})
	require.Empty(t, g.Edges)
}

// TestRemoteHandoffReplayed: the processor's output (receiver trace plus its HANDOFF
// span) built again, without the sender's trace, names the sender from the HANDOFF span
// and enriches it instead of adding a twin: the exporter's rebuild and a replay of a
// collector's output agree with the processor.
func TestRemoteHandoffReplayed(t *testing.T) {
	sender, receiver, senderAgent := asyncHandoff(t, asyncReceiverTraceID)
	graphs := BuildAll(merged(sender, receiver), Options{})
	g := graphOf(t, graphs, asyncReceiverTraceID)
	out := ptrace.NewTraces()
	receiver.CopyTo(out)
	require.Equal(t, 1, AppendHandoffs(g, out, ContentPolicy{}))

	again := BuildAll(out, Options{})
	require.Len(t, again, 1)
	g2 := again[0]
	require.Equal(t, []string{"weather_specialist -> Hello world span_link"}, edgeLines(g2))
	ref := g2.Edges[0].From.Remote
	require.Equal(t, LinkByHandoffSpan, ref.Resolution)
	require.Equal(t, senderAgent, ref.SpanID)
	require.Equal(t, LinkCounts{ByHandoffSpan: 1}, g2.ResolveLinks(nil))
	n := out.SpanCount()
	require.Zero(t, AppendHandoffs(g2, out, ContentPolicy{}), "enriched, not twinned")
	require.Equal(t, n, out.SpanCount())
}

// TestHTTPSpansAreNotAgents: HTTP client and server spans (and messaging spans) of the
// OpenTelemetry HTTP and messaging conventions are never agents, tools or LLM calls,
// whatever their route says.
func TestHTTPSpansAreNotAgents(t *testing.T) {
	http := func(extra map[string]any) map[string]any {
		a := map[string]any{
			"http.request.method": "POST", "server.address": "127.0.0.1", "server.port": int64(8081),
			"http.response.status_code": int64(200), "network.protocol.version": "1.1",
		}
		for k, v := range extra {
			a[k] = v
		}
		return a
	}
	cases := []struct {
		name  string
		kind  ptrace.SpanKind
		attrs map[string]any
	}{
		{"POST", ptrace.SpanKindClient, http(map[string]any{"url.full": "http://127.0.0.1:8081/agents/weather_specialist/invoke"})},
		{"POST /agents/:agent/invoke", ptrace.SpanKindServer, http(map[string]any{"http.route": "/agents/:agent/invoke", "url.path": "/agents/weather_specialist/invoke"})},
		{"POST /invoke_agent", ptrace.SpanKindServer, http(map[string]any{"http.route": "/invoke_agent"})},
		{"POST /v1/chat/completions", ptrace.SpanKindClient, http(map[string]any{"url.full": "http://127.0.0.1:11434/v1/chat/completions"})},
		{"GET /tools/execute_tool", ptrace.SpanKindServer, http(map[string]any{"http.route": "/tools/execute_tool", "http.request.method": "GET"})},
		// Older HTTP conventions.
		{"HTTP POST", ptrace.SpanKindClient, map[string]any{"http.method": "POST", "http.url": "http://127.0.0.1:8081/agent", "http.status_code": int64(200)}},
		{"/agent", ptrace.SpanKindServer, map[string]any{"http.method": "POST", "http.target": "/agent", "http.scheme": "http"}},
		{"publish agent.tasks", ptrace.SpanKindProducer, map[string]any{"messaging.system": "rabbitmq", "messaging.destination.name": "agent.tasks"}},
		{"process agent.tasks", ptrace.SpanKindConsumer, map[string]any{"messaging.system": "rabbitmq", "messaging.operation.type": "process"}},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			td := ptrace.NewTraces()
			rs := td.ResourceSpans().AppendEmpty()
			rs.Resource().Attributes().PutStr("service.name", "weather-backend")
			ss := rs.ScopeSpans().AppendEmpty()
			ss.Scope().SetName(agentgraphtest.HTTPScope)
			sp := ss.Spans().AppendEmpty()
			sp.SetTraceID(pcommon.TraceID{1})
			sp.SetSpanID(pcommon.SpanID{1})
			sp.SetName(c.name)
			sp.SetKind(c.kind)
			sp.SetEndTimestamp(10)
			require.NoError(t, sp.Attributes().FromRaw(c.attrs))
			g := Build(pcommon.TraceID{1}, SpansOf(td)[pcommon.TraceID{1}], Options{})
			require.Equal(t, RoleOther, g.Spans[0].Role)
			require.Empty(t, g.Invocations)
		})
	}
	// The real cross-service trace: TestCrossServiceTrace checks its HTTP spans.
}

// TestSpanLinkWorkIsLinear: 5000 receivers linked to the bottom of a 10,000-deep chain
// (half in the same trace, half from another) cost the builder at most workPerItem visits
// per span and edge, as every other shape does (TestBuildWorkIsLinear).
func TestSpanLinkWorkIsLinear(t *testing.T) {
	g := BuildAll(agentgraphtest.LinkedToDeepChain(10000, 5000), Options{})[0]
	local, remote := 0, 0
	for _, e := range g.Edges {
		if e.Detection == DetectSpanLink {
			if e.From.Remote != nil {
				remote++
			} else {
				require.Equal(t, "agent-9999", e.From.Name)
				local++
			}
		}
	}
	require.Equal(t, 2500, local)
	require.Equal(t, 2500, remote)
	items := len(g.Spans) + len(g.Edges)
	t.Logf("work %d for %d spans + %d edges (%.1f per item)", g.work, len(g.Spans), len(g.Edges), float64(g.work)/float64(items))
	require.LessOrEqual(t, g.work, workPerItem*items)
}

// TestRemoteAgentClientSpanIsNotASecondRun: the caller's client-side `invoke_agent Hello
// world` span and Hello world's own run in weather-backend are one run: no self-handoff,
// no cycle; the run nests under weather_specialist through the tool that made the call.
func TestRemoteAgentClientSpanIsNotASecondRun(t *testing.T) {
	adk := capture(t, "google-adk-ok")
	caller := firstSpanNamed(t, adk, "execute_tool get_weather")
	td := agentgraphtest.CallRemoteAgent(adk, caller.SpanID(), "Hello world",
		corpusCapture(t, "lf-openai-agents-openinference.otlp"), "weather-backend", "http://127.0.0.1:8081/a2a", "/a2a")
	g := BuildAll(td, Options{})[0]
	require.Equal(t, []string{
		"triage -> weather_specialist transfer_tool",
		"weather_specialist -> Hello world agent_as_tool",
	}, edgeLines(g))
	require.Empty(t, g.Cycles)
	require.Len(t, g.Invocations, 3)
	for _, s := range g.Spans {
		if s.ID == agentgraphtest.RemoteAgentSpanID {
			require.Equal(t, RoleOther, s.Role)
			require.Equal(t, RoleSourceRemoteAgentClient, s.RoleSource)
		}
	}
	svc, _ := invocationNamed(t, g, "Hello world").Span.Resource.Attributes().Get("service.name")
	require.Equal(t, "weather-backend", svc.Str(), "the callee's run is kept")

	// In one service the same nesting is a real nested run (double instrumentation aside):
	// both stay agents.
	same := agentgraphtest.CallRemoteAgent(adk, caller.SpanID(), "Hello world",
		corpusCapture(t, "lf-openai-agents-openinference.otlp"), "realclient-google-adk", "http://127.0.0.1:8081/a2a", "/a2a")
	g = BuildAll(same, Options{})[0]
	require.Len(t, g.Invocations, 4)
}
