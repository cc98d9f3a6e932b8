package agentgraph

import (
	"fmt"
	"testing"

	"github.com/stretchr/testify/require"
	"go.opentelemetry.io/collector/pdata/pcommon"
	"go.opentelemetry.io/collector/pdata/ptrace"
)

func stepNames(steps []TrajectoryStep) (names []string, responses []int) {
	for _, s := range steps {
		names = append(names, s.Name)
		responses = append(responses, s.Response)
	}
	return names, responses
}

func runsNamed(g *Graph, name string) []*Invocation {
	var out []*Invocation
	for _, inv := range g.Invocations {
		if inv.Name == name {
			out = append(out, inv)
		}
	}
	return out
}

// The ping-pong capture (SOURCES.md): writer, critic, writer, critic, writer, critic, each
// handing to the next with a transfer_to_* call; writer's first run calls search_notes.
func TestTrajectoriesOnPingPong(t *testing.T) {
	g := BuildAll(capture(t, "scenario-langgraph-pingpong"), Options{})[0]
	names, responses := stepNames(g.HandoffTrajectory(nil, false))
	require.Equal(t, []string{"critic", "writer", "critic", "writer", "critic"}, names)
	require.Equal(t, []int{0, 1, 2, 3, 4}, responses, "each handoff is its own model response")
	// The writer's runs issued the handoffs to critic; subtree = all of them (it reaches every run).
	names, _ = stepNames(g.HandoffTrajectory(runsNamed(g, "writer"), false))
	require.Equal(t, []string{"critic", "critic", "critic"}, names)
	names, _ = stepNames(g.HandoffTrajectory(g.Invocations[:1], true))
	require.Equal(t, []string{"critic", "writer", "critic", "writer", "critic"}, names)
	// Tools: the transfer calls are delegation calls, not tools.
	names, responses = stepNames(g.ToolTrajectory(runsNamed(g, "writer"), false))
	require.Equal(t, []string{"search_notes"}, names)
	require.Equal(t, []int{0}, responses)
	names, _ = stepNames(g.ToolTrajectory(nil, false))
	require.Equal(t, []string{"search_notes"}, names)
	require.Empty(t, g.ToolTrajectory(runsNamed(g, "critic"), false))

	f := g.Loops()
	require.Equal(t, 5, f.Handoffs)
	require.Equal(t, []PairCount{{"writer", "critic", 3}, {"critic", "writer", 2}}, f.Pairs)
	require.Equal(t, []Loop{{Agents: []string{"writer", "critic"}, Handoffs: 5, Turns: 2}}, f.Loops)
	require.Equal(t, "writer -> critic -> writer", f.Loops[0].String())
	require.Equal(t, 2, f.Loops[0].Length())
}

// Mastra's fan-out: three agent-as-tool calls in trip_planner's first model step are one
// response; the only own tool call is weather_agent's get_weather.
func TestTrajectoriesOnFanOut(t *testing.T) {
	g := BuildAll(capture(t, "scenario-mastra-fanout"), Options{})[0]
	names, responses := stepNames(g.HandoffTrajectory(runsNamed(g, "trip_planner"), false))
	require.Equal(t, []string{"weather_agent", "hotel_agent", "flight_agent"}, names)
	require.Equal(t, []int{0, 0, 0}, responses)
	require.Empty(t, g.ToolTrajectory(runsNamed(g, "trip_planner"), false))
	names, _ = stepNames(g.ToolTrajectory(runsNamed(g, "trip_planner"), true))
	require.Equal(t, []string{"get_weather"}, names)
	f := g.Loops()
	require.Equal(t, 3, f.Handoffs)
	require.Empty(t, f.Loops)
}

// Calls of one LLM response share a Response; a call before any LLM call is its own.
func TestToolTrajectoryResponses(t *testing.T) {
	td := ptrace.NewTraces()
	spans := td.ResourceSpans().AppendEmpty().ScopeSpans().AppendEmpty().Spans()
	add := func(id byte, parent byte, op, name string, start uint64) {
		sp := spans.AppendEmpty()
		sp.SetTraceID(pcommon.TraceID{9})
		sp.SetSpanID(pcommon.SpanID{id})
		if parent != 0 {
			sp.SetParentSpanID(pcommon.SpanID{parent})
		}
		sp.SetName(op + " " + name)
		sp.SetStartTimestamp(pcommon.Timestamp(start))
		sp.SetEndTimestamp(pcommon.Timestamp(start + 1))
		sp.Attributes().PutStr("gen_ai.operation.name", op)
		switch op {
		case "invoke_agent":
			sp.Attributes().PutStr("gen_ai.agent.name", name)
			sp.SetEndTimestamp(100)
		case "execute_tool":
			sp.Attributes().PutStr("gen_ai.tool.name", name)
		}
	}
	add(1, 0, "invoke_agent", "a", 1)
	add(2, 1, "execute_tool", "warmup", 2) // before any model call
	add(3, 1, "chat", "m", 3)
	add(4, 1, "execute_tool", "x", 5)
	add(5, 1, "execute_tool", "y", 5)
	add(6, 1, "chat", "m", 7)
	add(7, 1, "execute_tool", "z", 8)
	g := BuildAll(td, Options{})[0]
	names, responses := stepNames(g.ToolTrajectory(nil, false))
	require.Equal(t, []string{"warmup", "x", "y", "z"}, names)
	require.Equal(t, []int{-1, 0, 0, 1}, responses)
}

// A long ping-pong: the loop facts count every handoff and turn.
func TestLoopsLongPingPong(t *testing.T) {
	const runs = 2001
	td := ptrace.NewTraces()
	spans := td.ResourceSpans().AppendEmpty().ScopeSpans().AppendEmpty().Spans()
	for i := 0; i < runs; i++ {
		sp := spans.AppendEmpty()
		sp.SetTraceID(pcommon.TraceID{8})
		sp.SetSpanID(spanID(i + 1))
		if i > 0 {
			sp.SetParentSpanID(spanID(i))
		}
		name := []string{"ping", "pong"}[i%2]
		sp.SetName("invoke_agent " + name)
		sp.SetStartTimestamp(pcommon.Timestamp(i + 1))
		sp.SetEndTimestamp(pcommon.Timestamp(10 * runs))
		sp.Attributes().PutStr("gen_ai.operation.name", "invoke_agent")
		sp.Attributes().PutStr("gen_ai.agent.name", name)
	}
	g := BuildAll(td, Options{})[0]
	f := g.Loops()
	require.Equal(t, runs-1, f.Handoffs)
	require.Equal(t, []PairCount{{"ping", "pong", 1000}, {"pong", "ping", 1000}}, f.Pairs)
	require.Equal(t, []Loop{{Agents: []string{"ping", "pong"}, Handoffs: 2000, Turns: 1000}}, f.Loops)
	names, _ := stepNames(g.HandoffTrajectory(g.Invocations[:1], true))
	require.Len(t, names, runs-1)
	require.Equal(t, fmt.Sprint([]string{"pong", "ping", "pong"}), fmt.Sprint(names[:3]))
}

func spanID(n int) pcommon.SpanID {
	return pcommon.SpanID{byte(n >> 24), byte(n >> 16), byte(n >> 8), byte(n), 1}
}

// A sender in another trace (a span link): the receiver's trace's handoff sequence holds
// the handoff, though its sender has no run there.
func TestHandoffTrajectoryRemoteSender(t *testing.T) {
	var receiver *Graph
	for _, g := range BuildAll(capture(t, "scenario-vercel-async-link"), Options{}) {
		if len(g.Edges) > 0 {
			receiver = g
		}
	}
	require.NotNil(t, receiver)
	names, _ := stepNames(receiver.HandoffTrajectory(nil, false))
	require.Equal(t, []string{"report_writer"}, names)
	require.Equal(t, "intake", receiver.Edges[0].From.Name)
	require.NotNil(t, receiver.Edges[0].From.Remote)
	require.Equal(t, 1, receiver.Loops().Handoffs)
}
