// Package agentgraphtest generates traces of adversarial shapes (deep, wide, many tool
// calls) for the benchmarks and the work-count tests of agentgraph and rules.
package agentgraphtest

import (
	"encoding/binary"
	"fmt"

	"go.opentelemetry.io/collector/pdata/pcommon"
	"go.opentelemetry.io/collector/pdata/ptrace"
)

// TraceID is the trace id of every generated trace.
var TraceID = pcommon.TraceID{0xde, 0xe9}

type builder struct {
	spans ptrace.SpanSlice
	next  uint64
}

func newBuilder() (ptrace.Traces, *builder) {
	td := ptrace.NewTraces()
	rs := td.ResourceSpans().AppendEmpty()
	rs.Resource().Attributes().PutStr("service.name", "shapes")
	ss := rs.ScopeSpans().AppendEmpty()
	return td, &builder{spans: ss.Spans()}
}

// SpanID is the id of the n-th span a generator made (from 1).
func SpanID(n uint64) pcommon.SpanID {
	var id pcommon.SpanID
	binary.BigEndian.PutUint64(id[:], n)
	return id
}

func (b *builder) span(parent pcommon.SpanID, name string, start, end uint64) (ptrace.Span, pcommon.SpanID) {
	b.next++
	id := SpanID(b.next)
	sp := b.spans.AppendEmpty()
	sp.SetTraceID(TraceID)
	sp.SetSpanID(id)
	sp.SetParentSpanID(parent)
	sp.SetName(name)
	sp.SetStartTimestamp(pcommon.Timestamp(start))
	sp.SetEndTimestamp(pcommon.Timestamp(end))
	return sp, id
}

func (b *builder) agent(parent pcommon.SpanID, name, input string, start, end uint64) pcommon.SpanID {
	sp, id := b.span(parent, "invoke_agent "+name, start, end)
	a := sp.Attributes()
	a.PutStr("gen_ai.operation.name", "invoke_agent")
	a.PutStr("gen_ai.agent.name", name)
	a.PutStr("gen_ai.input.messages", input)
	a.PutStr("gen_ai.output.messages", "done by "+name)
	return id
}

func (b *builder) llm(parent pcommon.SpanID, prompt string, start, end uint64) {
	sp, _ := b.span(parent, "chat model", start, end)
	a := sp.Attributes()
	a.PutStr("gen_ai.operation.name", "chat")
	a.PutStr("gen_ai.request.model", "model")
	a.PutStr("gen_ai.input.messages", prompt)
	a.PutInt("gen_ai.usage.input_tokens", 10)
	a.PutInt("gen_ai.usage.output_tokens", 5)
}

func (b *builder) tool(parent pcommon.SpanID, name, args, result string, start, end uint64) {
	sp, _ := b.span(parent, "execute_tool "+name, start, end)
	a := sp.Attributes()
	a.PutStr("gen_ai.operation.name", "execute_tool")
	a.PutStr("gen_ai.tool.name", name)
	a.PutStr("gen_ai.tool.call.arguments", args)
	a.PutStr("gen_ai.tool.call.result", result)
}

// DeepChain is depth agents, each nested in the one before (agent-0 at the top), each
// with one LLM child and one tool child: 3×depth spans, depth-1 edges.
func DeepChain(depth int) ptrace.Traces {
	td, b := newBuilder()
	n := uint64(depth)
	parent := pcommon.SpanID{}
	for i := uint64(0); i < n; i++ {
		// Agent i runs from 10i to 10(2n-i)+5; its LLM and tool calls come before its child.
		name := fmt.Sprintf("agent-%d", i)
		id := b.agent(parent, name, fmt.Sprintf("task T%d for %s", i, name), 10*i, 10*(2*n-i)+5)
		b.llm(id, fmt.Sprintf("task T%d for %s", i, name), 10*i+1, 10*i+2)
		b.tool(id, "lookup", fmt.Sprintf(`{"task":"T%d"}`, i), fmt.Sprintf("result R%d", i), 10*i+3, 10*i+4)
		parent = id
	}
	return td
}

// FanOut is one root agent dispatching agents agents, each nested directly under it, each
// with one LLM child and one tool child: 1+3×agents spans, agents edges. With the span
// count of a DeepChain it is the flat trace of the same size.
func FanOut(agents int) ptrace.Traces {
	td, b := newBuilder()
	n := uint64(agents)
	root := b.agent(pcommon.SpanID{}, "root", "plan the work", 0, 10*n+10)
	for i := uint64(0); i < n; i++ {
		name := fmt.Sprintf("worker-%d", i)
		start := 10*i + 1
		id := b.agent(root, name, fmt.Sprintf("task T%d for %s", i, name), start, start+8)
		b.llm(id, fmt.Sprintf("task T%d for %s", i, name), start+1, start+2)
		b.tool(id, "lookup", fmt.Sprintf(`{"task":"T%d"}`, i), fmt.Sprintf("result R%d", i), start+3, start+4)
	}
	return td
}

// ToolCalls is a sender agent handing off (by nesting) to a receiver that makes calls tool
// calls, each using an identifier an earlier call's result (or the dispatch) supplied;
// every fourth call uses one nobody supplied. The receiver's allowed tools cover half of
// the tool names used.
func ToolCalls(calls int) ptrace.Traces {
	td, b := newBuilder()
	n := uint64(calls)
	sender := b.agent(pcommon.SpanID{}, "sender", "handle order ORD-0", 0, 20*n+100)
	b.llm(sender, "handle order ORD-0", 1, 2)
	recv := b.agent(sender, "receiver", "look up order ORD-0", 10, 20*n+50)
	sp := b.spans.At(b.spans.Len() - 1)
	sp.Attributes().PutStr("gen_ai.agent.tools", `["tool-even-0","tool-even-1"]`)
	b.llm(recv, "look up order ORD-0", 11, 12)
	for i := uint64(0); i < n; i++ {
		start := 20 + 20*i
		known := fmt.Sprintf("ORD-%d", i) // supplied by the result of call i-1 (or the dispatch)
		if i%4 == 3 {
			known = fmt.Sprintf("INVENTED-%d", i)
		}
		b.tool(recv, fmt.Sprintf("tool-%s-%d", []string{"even", "odd"}[i%2], i%2),
			fmt.Sprintf(`{"order":%q,"page":"next"}`, known),
			fmt.Sprintf("next order ORD-%d", i+1), start, start+10)
	}
	b.llm(sender, "the receiver said: done by receiver", 20*n+60, 20*n+70)
	return td
}

// RecursiveChain is depth runs of one agent ("researcher"), each nested in the one before,
// with one tool call each and an LLM call only at the bottom: the LLM-below marks and the
// same-name lookups cross the whole depth.
func RecursiveChain(depth int) ptrace.Traces {
	td, b := newBuilder()
	n := uint64(depth)
	parent := pcommon.SpanID{}
	for i := uint64(0); i < n; i++ {
		id := b.agent(parent, "researcher", fmt.Sprintf("question Q%d", i), 10*i, 10*(2*n-i)+5)
		b.tool(id, "search", fmt.Sprintf(`{"q":"Q%d"}`, i), fmt.Sprintf("found Q%d", i+1), 10*i+3, 10*i+4)
		if i == n-1 {
			b.llm(id, "answer", 10*i+5, 10*i+6)
		}
		parent = id
	}
	return td
}

// SupervisorLoop is a LangGraph-style loop: runs runs of "supervisor", one after another
// under one graph span, each dispatching a nested "worker" whose tool call fails: every
// handoff has an error to recover from, and every supervisor run acts for the sender.
func SupervisorLoop(runs int) ptrace.Traces {
	td, b := newBuilder()
	n := uint64(runs)
	graph, root := b.span(pcommon.SpanID{}, "LangGraph", 0, 100*n+10)
	graph.Attributes().PutStr("gen_ai.operation.name", "invoke_workflow")
	for i := uint64(0); i < n; i++ {
		start := 100*i + 1
		sup := b.agent(root, "supervisor", fmt.Sprintf("step %d", i), start, start+90)
		b.llm(sup, fmt.Sprintf("step %d", i), start+1, start+2)
		w := b.agent(sup, "worker", fmt.Sprintf("job J%d", i), start+10, start+50)
		b.tool(w, "fetch", fmt.Sprintf(`{"job":"J%d"}`, i), "", start+20, start+30)
		tool := b.spans.At(b.spans.Len() - 1)
		tool.Status().SetCode(ptrace.StatusCodeError)
		tool.Status().SetMessage("permission denied")
		b.llm(sup, fmt.Sprintf("worker said nothing for J%d", i), start+60, start+70)
	}
	return td
}

// FailingToolCalls is ToolCalls with every tool call failing with a timeout: one error
// per call to judge, most of them retried by a later call of the same tool.
func FailingToolCalls(calls int) ptrace.Traces {
	td := ToolCalls(calls)
	spans := td.ResourceSpans().At(0).ScopeSpans().At(0).Spans()
	for i := 0; i < spans.Len(); i++ {
		if sp := spans.At(i); sp.Attributes().AsRaw()["gen_ai.operation.name"] == "execute_tool" {
			sp.Status().SetCode(ptrace.StatusCodeError)
			sp.Status().SetMessage("upstream timed out")
		}
	}
	return td
}
