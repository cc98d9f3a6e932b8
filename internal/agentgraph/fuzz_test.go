package agentgraph

import (
	"testing"

	"go.opentelemetry.io/collector/pdata/pcommon"
	"go.opentelemetry.io/collector/pdata/ptrace"
)

// FuzzBuild feeds the builder random span forests: parent links to anywhere (loops,
// self-parents, missing parents), duplicate ids, random roles and names. It must never
// panic, every invocation keeps at most one incoming edge, and the linear reachability,
// subtree rollups and depth agree with a walk per invocation.
func FuzzBuild(f *testing.F) {
	f.Add([]byte{1, 0, 0, 2, 1, 1, 3, 2, 2, 4, 3, 0})
	f.Add([]byte{1, 2, 0, 2, 1, 0, 3, 3, 1})
	f.Add([]byte{5, 5, 5, 5, 5, 5})
	f.Fuzz(func(t *testing.T, data []byte) {
		if len(data) > 3*2000 {
			data = data[:3*2000]
		}
		td := ptrace.NewTraces()
		spans := td.ResourceSpans().AppendEmpty().ScopeSpans().AppendEmpty().Spans()
		roles := []map[string]any{
			{"gen_ai.operation.name": "invoke_agent", "gen_ai.agent.name": "a"},
			{"gen_ai.operation.name": "invoke_agent", "gen_ai.agent.name": "b"},
			{"gen_ai.operation.name": "execute_tool", "gen_ai.tool.name": "transfer_to_agent", "gen_ai.tool.call.arguments": `{"agent_name":"a"}`},
			{"gen_ai.operation.name": "execute_tool", "gen_ai.tool.name": "transfer_to_b"},
			{"gen_ai.operation.name": "chat", "gen_ai.usage.input_tokens": int64(3)},
			{"gen_ai.handoff.from_agent": "b", "gen_ai.handoff.to_agent": "a"},
			{},
		}
		for i := 0; i+2 < len(data); i += 3 {
			sp := spans.AppendEmpty()
			sp.SetTraceID(pcommon.TraceID{1})
			sp.SetSpanID(pcommon.SpanID{data[i]})
			if data[i+1] != 0 {
				sp.SetParentSpanID(pcommon.SpanID{data[i+1]})
			}
			sp.SetStartTimestamp(pcommon.Timestamp(data[i+2]))
			sp.SetEndTimestamp(pcommon.Timestamp(data[i+1]))
			_ = sp.Attributes().FromRaw(roles[int(data[i+2])%len(roles)])
			if data[i]%5 == 0 { // a link to another trace, or to this one
				l := sp.Links().AppendEmpty()
				l.SetTraceID(pcommon.TraceID{data[i+1] % 3})
				l.SetSpanID(pcommon.SpanID{data[i+2]})
			}
		}
		for _, g := range BuildAll(td, Options{}) {
			in := map[*Invocation]int{}
			for _, e := range g.Edges {
				in[e.To]++
				if in[e.To] > 1 {
					t.Fatalf("invocation %d has %d incoming edges", e.To.Index, in[e.To])
				}
			}
			checkReach(t, g)
			_ = g.Summarize()
			AppendHandoffs(g, ptrace.NewTraces(), ContentPolicy{MaxBytes: 16})
		}
	})
}
