// Package rulestest builds small agent traces for tests: agent and tool spans in the OTel
// GenAI conventions, with times in milliseconds from a fixed origin.
package rulestest

import (
	"encoding/json"

	"go.opentelemetry.io/collector/pdata/pcommon"
	"go.opentelemetry.io/collector/pdata/ptrace"

	"github.com/otelcol-handoff/otelcol-handoff/internal/agentgraph"
)

// Origin is the start of every trace built here (2023-11-14T22:13:20Z).
const Origin = 1_700_000_000_000_000_000

// Trace is a trace under construction.
type Trace struct {
	td    ptrace.Traces
	spans ptrace.SpanSlice
	res   pcommon.Resource
	id    pcommon.TraceID
	next  byte
}

// Span is a span of a Trace.
type Span struct {
	ptrace.Span
}

// New starts a trace whose id is id repeated.
func New(id byte) *Trace {
	td := ptrace.NewTraces()
	rs := td.ResourceSpans().AppendEmpty()
	rs.Resource().Attributes().PutStr("service.name", "test-agent")
	ss := rs.ScopeSpans().AppendEmpty()
	var tid pcommon.TraceID
	for i := range tid {
		tid[i] = id
	}
	return &Trace{td: td, spans: ss.Spans(), res: rs.Resource(), id: tid}
}

// Resource returns the resource attributes.
func (t *Trace) Resource() pcommon.Map { return t.res.Attributes() }

// ID is the trace id.
func (t *Trace) ID() pcommon.TraceID { return t.id }

func (t *Trace) span(parent *Span, name string, start, end int) *Span {
	t.next++
	sp := t.spans.AppendEmpty()
	sp.SetTraceID(t.id)
	sp.SetSpanID(pcommon.SpanID{0, 0, 0, 0, 0, 0, t.id[0], t.next})
	if parent != nil {
		sp.SetParentSpanID(parent.SpanID())
	}
	sp.SetName(name)
	sp.SetStartTimestamp(pcommon.Timestamp(Origin + int64(start)*1_000_000))
	sp.SetEndTimestamp(pcommon.Timestamp(Origin + int64(end)*1_000_000))
	return &Span{sp}
}

// Agent adds an invoke_agent span (parent nil: a root span).
func (t *Trace) Agent(parent *Span, name string, start, end int) *Span {
	s := t.span(parent, "invoke_agent "+name, start, end)
	s.Attributes().PutStr("gen_ai.operation.name", "invoke_agent")
	s.Attributes().PutStr("gen_ai.agent.name", name)
	return s
}

// Tool adds an execute_tool span with JSON arguments args ("" = none captured).
func (t *Trace) Tool(parent *Span, name, args string, start, end int) *Span {
	s := t.span(parent, "execute_tool "+name, start, end)
	s.Attributes().PutStr("gen_ai.operation.name", "execute_tool")
	s.Attributes().PutStr("gen_ai.tool.name", name)
	if args != "" {
		s.Attributes().PutStr("gen_ai.tool.call.arguments", args)
	}
	return s
}

// Other adds a span that is neither an agent nor a tool (e.g. a runner's root span).
func (t *Trace) Other(parent *Span, name string, start, end int) *Span {
	return t.span(parent, name, start, end)
}

// Output sets the span's output as plain content (output.value).
func (s *Span) Output(text string) *Span {
	s.Attributes().PutStr("output.value", text)
	return s
}

// Reply sets the span's output as an OTel GenAI output-messages array whose final
// assistant message says text.
func (s *Span) Reply(text string) *Span {
	msgs := []map[string]any{{
		"role": "assistant", "finish_reason": "stop",
		"parts": []map[string]any{{"type": "text", "content": text}},
	}}
	b, _ := json.Marshal(msgs)
	s.Attributes().PutStr("gen_ai.output.messages", string(b))
	return s
}

// Input sets the span's input content (input.value).
func (s *Span) Input(text string) *Span {
	s.Attributes().PutStr("input.value", text)
	return s
}

// Fail marks the span with an error status and message.
func (s *Span) Fail(msg string) *Span {
	s.Status().SetCode(ptrace.StatusCodeError)
	s.Status().SetMessage(msg)
	return s
}

// Attr sets a string attribute.
func (s *Span) Attr(key, value string) *Span {
	s.Attributes().PutStr(key, value)
	return s
}

// Event adds an event.
func (s *Span) Event(name string) *Span {
	s.Events().AppendEmpty().SetName(name)
	return s
}

// Traces returns the pdata traces.
func (t *Trace) Traces() ptrace.Traces { return t.td }

// Graph builds the delegation DAG.
func (t *Trace) Graph() *agentgraph.Graph {
	return agentgraph.BuildAll(t.td, agentgraph.Options{})[0]
}
