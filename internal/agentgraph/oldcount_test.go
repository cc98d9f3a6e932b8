package agentgraph

import (
	"fmt"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"
	"go.opentelemetry.io/collector/pdata/ptrace"
)

// callCounts renders, per invocation, the names of its tool calls and of its delegation
// calls and the ToolCalls and DelegationCalls of its self and subtree rollups, then its
// edges.
func callCounts(g *Graph) []string {
	names := func(calls []*ToolCall) string {
		var out []string
		for _, tc := range calls {
			out = append(out, tc.Name)
		}
		return "[" + strings.Join(out, " ") + "]"
	}
	var out []string
	for _, inv := range g.Invocations {
		out = append(out, fmt.Sprintf("%s tools=%s delegations=%s self=%d/%d subtree=%d/%d", inv.Name,
			names(inv.ToolCalls), names(inv.DelegationCalls), inv.Self.ToolCalls, inv.Self.DelegationCalls,
			inv.Subtree.ToolCalls, inv.Subtree.DelegationCalls))
	}
	for _, e := range g.Edges {
		out = append(out, fmt.Sprintf("edge %s -> %s %s via %s payload %s", e.From.Name, e.To.Name, e.Detection, e.Via.Pdata.Name(), e.Payload.Text))
	}
	return out
}

// TestCountDelegationCallsAsToolCalls: on the real Strands swarm and Google ADK transfer
// captures, delegation calls are handoff evidence only by default; with
// Options.CountDelegationCallsAsToolCalls (the old counting) they are tool calls too, in
// ToolCalls and in the ToolCalls rollups, and still listed and counted as delegation
// calls. The handoffs themselves are the same either way.
func TestCountDelegationCallsAsToolCalls(t *testing.T) {
	tests := map[string]struct{ new, old []string }{
		"strands-ok": {
			new: []string{
				"triage tools=[] delegations=[strands_structured_output] self=0/1 subtree=2/2",
				"weather_specialist tools=[get_weather get_weather] delegations=[strands_structured_output] self=2/1 subtree=2/1",
			},
			old: []string{
				"triage tools=[strands_structured_output] delegations=[strands_structured_output] self=1/1 subtree=4/2",
				"weather_specialist tools=[get_weather get_weather strands_structured_output] delegations=[strands_structured_output] self=3/1 subtree=3/1",
			},
		},
		"google-adk-ok": {
			new: []string{
				"triage tools=[] delegations=[transfer_to_agent] self=0/1 subtree=2/1",
				"weather_specialist tools=[get_weather get_weather] delegations=[] self=2/0 subtree=2/0",
			},
			old: []string{
				"triage tools=[transfer_to_agent] delegations=[transfer_to_agent] self=1/1 subtree=3/1",
				"weather_specialist tools=[get_weather get_weather] delegations=[] self=2/0 subtree=2/0",
			},
		},
	}
	for name, tt := range tests {
		t.Run(name, func(t *testing.T) {
			td := capture(t, name)
			def := BuildAll(td, Options{})
			old := BuildAll(td, Options{CountDelegationCallsAsToolCalls: true})
			require.Len(t, def, 1)
			require.Len(t, old, 1)
			gotNew, gotOld := callCounts(def[0]), callCounts(old[0])
			n := len(def[0].Invocations)
			require.Equal(t, tt.new, gotNew[:n], "default: delegation calls are not tool calls")
			require.Equal(t, tt.old, gotOld[:n], "the old counting")
			require.Equal(t, gotNew[n:], gotOld[n:], "the same handoffs either way")
			require.Len(t, gotNew[n:], 1)
			require.Empty(t, def[0].Unresolved)
			require.Empty(t, old[0].Unresolved)
			for _, inv := range old[0].Invocations {
				for _, tc := range inv.DelegationCalls {
					require.Contains(t, inv.ToolCalls, tc, "a delegation call is a tool call too in the old counting")
				}
			}
			for _, e := range def[0].Edges {
				require.NotNil(t, e.Call, "a transfer edge names its call")
				require.Same(t, e.Via.ToolCall(), e.Call)
			}
		})
	}
}

// TestRecordedTransferKeepsItsCall: the processor's output (the trace plus the HANDOFF
// spans made of it) built again, as the assertion exporter does when it cannot reuse the
// processor's graph (count_delegation_calls_as_tool_calls, other chains): the HANDOFF span,
// read first, carries the edge, and the transfer call it recorded is the edge's Call, not a
// transfer to an agent that did not run.
func TestRecordedTransferKeepsItsCall(t *testing.T) {
	for _, name := range []string{"strands-ok", "google-adk-ok"} {
		for _, opts := range []Options{{}, {CountDelegationCallsAsToolCalls: true}} {
			td := capture(t, name)
			g := BuildAll(td, opts)[0]
			out := ptrace.NewTraces()
			td.CopyTo(out)
			require.Equal(t, 1, AppendHandoffs(g, out, ContentPolicy{MaxBytes: 4096}))
			again := BuildAll(out, opts)[0]
			require.Len(t, again.Edges, 1, name)
			e := again.Edges[0]
			require.Equal(t, RoleHandoff, e.Via.Role, name)
			require.Equal(t, DetectTransferTool, e.Detection, name)
			require.NotNil(t, e.Call, name)
			require.Equal(t, g.Edges[0].Call.Span.ID, e.Call.Span.ID, name)
			require.Empty(t, again.Unresolved, name)
			require.Equal(t, callCounts(g)[:len(g.Invocations)], callCounts(again)[:len(again.Invocations)], name)
		}
	}
}
