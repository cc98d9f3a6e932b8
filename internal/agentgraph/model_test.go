package agentgraph

import (
	"testing"

	"github.com/stretchr/testify/require"
	"go.opentelemetry.io/collector/pdata/pcommon"
	"go.opentelemetry.io/collector/pdata/ptrace"
)

// The normalized fields rules, reports and the exporter read instead of raw spans
// (span.go, run.go, content.go, calls.go, selector.go, batch.go), on real-framework
// captures (testdata/traces). Where a capture lacks a shape (a failed run, an approval, a
// test context, a recovery marker), the test adds the one attribute, event or status the
// application would have written to the loaded copy, and says so.

// onlyGraph builds the single graph of a capture.
func onlyGraph(t *testing.T, td ptrace.Traces) *Graph {
	t.Helper()
	graphs := BuildAll(td, Options{})
	require.Len(t, graphs, 1)
	return graphs[0]
}

// invocationNamed is the first run of an agent.
func TestRunStatusOnCaptures(t *testing.T) {
	// Google ADK, both tools succeed: every run completed, no approval pending.
	g := onlyGraph(t, capture(t, "google-adk-ok"))
	for _, inv := range g.Invocations {
		require.Equal(t, RunStatus{State: StatusCompleted, Why: "no error on the agent span"}, inv.Status(), inv.Name)
		require.False(t, inv.AwaitingApproval(), inv.Name)
	}

	// LangGraph marks the triage agent span ERROR with a ParentCommand on every handoff:
	// control flow, not a failure.
	g = onlyGraph(t, capture(t, "langgraph-ok"))
	triage := invocationNamed(t, g, "triage")
	require.Equal(t, ControlParentCommand, triage.Span.ControlFlow())
	require.True(t, triage.Span.StatusError())
	require.Equal(t, StatusCompleted, triage.Status().State)

	// The same span stopped at a GraphInterrupt (the pause of a human-in-the-loop
	// approval): status set to the interrupt on the loaded copy.
	td := capture(t, "langgraph-ok")
	g = onlyGraph(t, td)
	invocationNamed(t, g, "weather_specialist").Span.Pdata.Status().SetCode(ptrace.StatusCodeError)
	invocationNamed(t, g, "weather_specialist").Span.Pdata.Status().SetMessage("GraphInterrupt(approve the forecast?)")
	g = onlyGraph(t, td)
	require.Equal(t, RunStatus{State: StatusAwaitingApproval, Why: "GraphInterrupt on the agent span"},
		invocationNamed(t, g, "weather_specialist").Status())

	// Google ADK, the second tool call fails; the application lets the error propagate to
	// the specialist's agent span (status set on the loaded copy, as an unhandled
	// exception does).
	td = capture(t, "google-adk-tool-error")
	g = onlyGraph(t, td)
	spec := invocationNamed(t, g, "weather_specialist")
	require.Equal(t, StatusCompleted, spec.Status().State, "the capture's specialist handled the tool error")
	spec.Span.Pdata.Status().SetCode(ptrace.StatusCodeError)
	spec.Span.Pdata.Status().SetMessage("weather service: unknown city Atlantis")
	g = onlyGraph(t, td)
	spec = invocationNamed(t, g, "weather_specialist")
	require.Equal(t, RunStatus{State: StatusFailed, Why: "error on the agent span (status)", Error: "weather service: unknown city Atlantis"}, spec.Status())

	// agent.run.status overrides the evidence; other values are ignored.
	spec.Span.Pdata.Attributes().PutStr(AttrRunStatus, "completed")
	require.Equal(t, RunStatus{State: StatusCompleted, Why: "attribute " + AttrRunStatus, Error: "weather service: unknown city Atlantis"}, spec.Status())
	spec.Span.Pdata.Attributes().PutStr(AttrRunStatus, "paused")
	require.Equal(t, StatusFailed, spec.Status().State)

	// An awaiting_approval event on one of the triage's own call spans (its transfer call,
	// a delegation call).
	triage = invocationNamed(t, g, "triage")
	require.False(t, triage.AwaitingApproval())
	require.Len(t, triage.DelegationCalls, 1)
	triage.DelegationCalls[0].Span.Pdata.Events().AppendEmpty().SetName(EventAwaitingApproval)
	require.True(t, triage.AwaitingApproval())
	require.Equal(t, RunStatus{State: StatusAwaitingApproval, Why: "event " + EventAwaitingApproval + " recorded"}, triage.Status())
}

func TestSelectorOfCapture(t *testing.T) {
	g := onlyGraph(t, capture(t, "google-adk-ok"))
	sel := g.Selector()
	require.Equal(t, "triage", sel.RootAgent)
	require.Equal(t, []string{"triage", "weather_specialist"}, sel.Agents)
	require.Equal(t, "realclient-google-adk", sel.ServiceName)
	// The root span is ADK's "invocation" span, above the agent spans.
	require.Equal(t, "invocation", sel.RootSpanName)
	require.Equal(t, "invocation", g.RootSpan.SpanName())
	require.Equal(t, map[string]any{"service.name": "realclient-google-adk"}, sel.Resource)
	require.Equal(t, map[string]any{}, sel.Attributes)

	// A trace without spans: empty values, never nil.
	empty := Build(pcommon.NewTraceIDEmpty(), nil, Options{}).Selector()
	require.Equal(t, Selector{Agents: []string{}, Resource: map[string]any{}, Attributes: map[string]any{}}, empty)
}

func TestTestContextPlaces(t *testing.T) {
	// A test harness stashes fixture ids as test.context.* (added to the loaded copy): on
	// the resource, the root agent span and the root span; the later place wins.
	td := capture(t, "google-adk-ok")
	g := onlyGraph(t, td)
	require.Equal(t, map[string]any{}, g.TestContext())
	require.NotEqual(t, g.RootSpan, g.Root.Span, "ADK's root span is not the root agent's span")
	g.RootSpan.Resource.Attributes().PutStr("test.context.charge_id", "ch_resource")
	g.RootSpan.Resource.Attributes().PutStr("test.context.fixture", "resource")
	g.RootSpan.Resource.Attributes().PutStr("test.context.", "no key: ignored")
	g.Root.Span.Pdata.Attributes().PutStr("test.context.fixture", "root agent")
	g.Root.Span.Pdata.Attributes().PutInt("test.context.attempt", 2)
	g.RootSpan.Pdata.Attributes().PutStr("test.context.attempt", "root span")
	require.Equal(t, map[string]any{"charge_id": "ch_resource", "fixture": "root agent", "attempt": "root span"}, g.TestContext())
}

func TestLLMCallsAndInputText(t *testing.T) {
	g := onlyGraph(t, capture(t, "google-adk-ok"))
	triage, spec := invocationNamed(t, g, "triage"), invocationNamed(t, g, "weather_specialist")
	require.Len(t, triage.LLMCalls(), 1)
	require.Len(t, spec.LLMCalls(), 3)
	for _, inv := range []*Invocation{triage, spec} {
		for _, llm := range inv.LLMCalls() {
			require.Equal(t, RoleLLM, llm.Role)
			require.Equal(t, inv, llm.Owner())
			require.Equal(t, "call_llm", llm.SpanName())
			require.Nil(t, g.InvocationOf(llm))
		}
	}
	require.Equal(t, triage, g.InvocationOf(triage.Span))
	// The prompt (gcp.vertex.agent.llm_request) is input; the response is not.
	in := triage.LLMCalls()[0].InputText()
	require.Contains(t, in, `"text":"What's the weather in Paris and Berlin?"`)
	require.NotContains(t, in, "finishReason")
	last := spec.LLMCalls()[2].InputText()
	require.Contains(t, last, `[triage] called tool `+"`transfer_to_agent`")
	require.NotContains(t, last, `"text":"Paris: 18C sunny; Berlin: 12C rain"`, "the final answer is the call's output")

	// The specialist's output is a Gemini response: its model message's text.
	text, ok := MessageText(spec.Output.Text, AssistantRoles)
	require.True(t, ok)
	require.Equal(t, "Paris: 18C sunny; Berlin: 12C rain", text)
	require.Equal(t, "Paris: 18C sunny; Berlin: 12C rain", ContentValue(spec.Output.Text, AssistantRoles))
	// The triage answered with a transfer call only: no text.
	_, ok = MessageText(triage.Output.Text, AssistantRoles)
	require.False(t, ok)
}

func TestToolCallArgsAndTargets(t *testing.T) {
	g := onlyGraph(t, capture(t, "google-adk-ok"))
	triage, spec := invocationNamed(t, g, "triage"), invocationNamed(t, g, "weather_specialist")
	require.Equal(t, "transfer_to_agent", triage.DelegationCalls[0].Name)
	require.Equal(t, "weather_specialist", triage.DelegationCalls[0].TriggerTarget())
	require.False(t, triage.DelegationCalls[0].IsTriggerAgentCall())
	params, ok := spec.ToolCalls[0].ParsedArgs()
	require.True(t, ok)
	require.Equal(t, map[string]any{"city": "Paris"}, params)
	require.Equal(t, "", spec.ToolCalls[0].TriggerTarget())

	// ADK's failed call recorded no arguments on its span: they come from the LLM response
	// that requested it (matched by call id).
	g = onlyGraph(t, capture(t, "google-adk-tool-error"))
	params, ok = invocationNamed(t, g, "weather_specialist").ToolCalls[1].ParsedArgs()
	require.True(t, ok)
	require.Equal(t, map[string]any{"city": "Atlantis"}, params)

	// A call with no arguments anywhere: an empty map, not an object.
	params, ok = (&ToolCall{Name: "noargs"}).ParsedArgs()
	require.False(t, ok)
	require.Equal(t, map[string]any{}, params)

	// LangGraph supervisor: the target is in the tool's name.
	g = onlyGraph(t, capture(t, "langgraph-ok"))
	require.Equal(t, "weather_specialist", invocationNamed(t, g, "triage").DelegationCalls[0].TriggerTarget())

	// The seed's trigger_agent names its target in an argument, whether or not it ran.
	tc := &ToolCall{Name: "trigger_agent", Args: Value{Text: `{"agent_name":"billing","payload":{"n":4},"wait_for_response":false}`, Source: "gen_ai.tool.call.arguments"}}
	require.True(t, tc.IsTriggerAgentCall())
	require.Equal(t, "billing", tc.TriggerTarget())
	params, ok = tc.ParsedArgs()
	require.True(t, ok)
	require.Equal(t, map[string]any{"agent_name": "billing", "payload": map[string]any{"n": int64(4)}, "wait_for_response": false}, params)
}

func TestParseJSONNumbers(t *testing.T) {
	v, ok := ParseJSON(` {"a": 4, "b": 4.5, "c": 1e3, "d": 123456789012345678901234567890} `)
	require.True(t, ok)
	require.Equal(t, map[string]any{"a": int64(4), "b": 4.5, "c": 1000.0, "d": 1.2345678901234568e+29}, v)
	_, ok = ParseJSON(`{"a": 1} {"b": 2}`)
	require.False(t, ok)
	_, ok = ParseJSON("  ")
	require.False(t, ok)
}

func TestRecoveryMarkers(t *testing.T) {
	// Strands, the second get_weather call throws. An application records the recovery it
	// chose after the error (added to the loaded copy): on the specialist's agent span as an
	// event, on the triage's LLM span as an attribute.
	g := onlyGraph(t, capture(t, "strands-tool-error"))
	spec, triage := invocationNamed(t, g, "weather_specialist"), invocationNamed(t, g, "triage")
	for _, s := range g.Spans {
		require.False(t, s.HasRecovery())
	}
	var failed *Span
	for _, tc := range spec.ToolCalls {
		if tc.Span.Error != nil {
			failed = tc.Span
		}
	}
	require.NotNil(t, failed)
	require.Equal(t, map[string]any{"city": "Atlantis"}, failed.ToolCall().Params())
	ev := spec.Span.Pdata.Events().AppendEmpty()
	ev.SetName("recovery")
	ev.SetTimestamp(failed.End())
	ev.Attributes().PutStr(AttrRecovery, "fallback")
	require.True(t, spec.Span.HasRecovery())
	v, ok := spec.Span.Recovery(failed.Start())
	require.True(t, ok)
	require.Equal(t, "fallback", v)
	_, ok = spec.Span.Recovery(failed.End() + 1) // the event came before that time
	require.False(t, ok)

	llm := triage.LLMCalls()[0]
	llm.Pdata.Attributes().PutStr(AttrRecovery, "escalation")
	v, ok = llm.Recovery(spec.Span.End())
	require.True(t, ok, "an attribute counts whatever the time")
	require.Equal(t, "escalation", v)
	llm.Pdata.Attributes().PutStr(AttrRecovery, "")
	require.False(t, llm.HasRecovery(), "an empty marker is none")
}

func TestScanBatchMarkers(t *testing.T) {
	td := capture(t, "google-adk-ok")
	g := onlyGraph(t, td)
	n := len(g.Spans)
	scan := ScanBatch(td)
	require.Equal(t, map[pcommon.TraceID]*BatchTrace{g.TraceID: {Kept: n, Complete: true}}, scan)

	// The processor releases the trace early and forwards one span late.
	g.MarkIncomplete("timeout")
	v, ok := g.RootSpan.Pdata.Attributes().Get(AttrReleaseReason)
	require.True(t, ok)
	require.Equal(t, "timeout", v.Str())
	lateSpan := g.Invocations[1].Span
	lateSpan.Pdata.Attributes().PutBool(AttrLateSpan, true)
	scan = ScanBatch(td)
	require.Equal(t, map[pcommon.TraceID]*BatchTrace{g.TraceID: {Kept: n - 1, Late: 1, Complete: false}}, scan)

	spans := SpansOf(td)[g.TraceID]
	kept := WithoutLate(spans)
	require.Len(t, kept, n-1)
	for _, s := range kept {
		require.NotEqual(t, lateSpan.ID, s.ID)
	}

	// A graph without spans has no root span to mark.
	Build(g.TraceID, nil, Options{}).MarkIncomplete("timeout")
}

func TestAllowedToolNames(t *testing.T) {
	// The Vercel AI SDK records the offered tools as JSON definitions (ai.prompt.tools).
	g := onlyGraph(t, capture(t, "vercel-ai-ok"))
	spec := invocationNamed(t, g, "weather_specialist")
	// The model reads the names out of the definitions.
	require.Equal(t, []string{"get_weather"}, spec.AllowedTools)
	require.Equal(t, []string{"get_weather"}, spec.AllowedToolNames())
	require.Equal(t, []string{"weather_specialist"}, invocationNamed(t, g, "triage").AllowedToolNames())
	// The OpenAI Agents SDK records names.
	g = onlyGraph(t, capture(t, "openai-agents-ok"))
	require.Equal(t, []string{"get_weather"}, invocationNamed(t, g, "weather_specialist").AllowedToolNames())
	// OpenAI-schema definitions, and nothing captured.
	require.Equal(t, []string{"lookup", "plain"}, ToolNamesOf([]string{`{"type":"function","function":{"name":"lookup"}}`, "plain"}))
	require.Nil(t, (&Invocation{}).AllowedToolNames())
}
