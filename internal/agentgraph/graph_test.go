package agentgraph

import (
	"bytes"
	"encoding/json"
	"flag"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"
	"go.opentelemetry.io/collector/pdata/pcommon"
	"go.opentelemetry.io/collector/pdata/ptrace"

	"github.com/otelcol-handoff/otelcol-handoff/internal/redact"
)

var update = flag.Bool("update", false, "rewrite the golden files from the current output")

// corpusFiles lists every bundled trace file: real-client captures (testdata/traces) and
// third-party traces (testdata/corpus); see the SOURCES.md files beside them.
func corpusFiles(t testing.TB) []string {
	var files []string
	for _, dir := range []string{"traces", "corpus"} {
		m, err := filepath.Glob(filepath.Join("..", "..", "testdata", dir, "*.json"))
		require.NoError(t, err)
		files = append(files, m...)
	}
	require.GreaterOrEqual(t, len(files), 29)
	return files
}

func baseName(path string) string {
	return strings.TrimSuffix(strings.TrimSuffix(filepath.Base(path), ".json"), ".otlp")
}

func readTraces(t testing.TB, path string) ptrace.Traces {
	t.Helper()
	b, err := os.ReadFile(path)
	require.NoError(t, err)
	td, err := (&ptrace.JSONUnmarshaler{}).UnmarshalTraces(b)
	require.NoError(t, err)
	return td
}

func capture(t testing.TB, name string) ptrace.Traces {
	return readTraces(t, filepath.Join("..", "..", "testdata", "traces", name+".json"))
}

// checkGolden compares got with the golden file, or rewrites it under -update.
func checkGolden(t *testing.T, path string, got []byte) {
	t.Helper()
	if *update {
		require.NoError(t, os.WriteFile(path, got, 0o644))
		return
	}
	want, err := os.ReadFile(path)
	require.NoError(t, err, "golden file missing; run go test ./internal/agentgraph -update and review the diff")
	require.Equal(t, string(want), string(got))
}

func indentJSON(t *testing.T, v any) []byte {
	b, err := json.MarshalIndent(v, "", "  ")
	require.NoError(t, err)
	return append(b, '\n')
}

// TestGoldenDAG builds the delegation DAG of every bundled trace file and compares its
// summary (agents, edges with their detection, tool calls, rollups, errors, content
// sources) with a golden file reviewed against the spans.
func TestGoldenDAG(t *testing.T) {
	for _, path := range corpusFiles(t) {
		name := baseName(path)
		t.Run(name, func(t *testing.T) {
			graphs := BuildAll(readTraces(t, path), Options{})
			sums := []Summary{}
			for _, g := range graphs {
				if len(g.Spans) > 0 {
					sums = append(sums, g.Summarize())
				}
			}
			checkGolden(t, filepath.Join("testdata", "golden", name+".dag.json"), indentJSON(t, sums))
		})
	}
}

// TestGoldenHandoffs compares the synthesized HANDOFF spans of every file that has edges.
func TestGoldenHandoffs(t *testing.T) {
	for _, path := range corpusFiles(t) {
		name := baseName(path)
		t.Run(name, func(t *testing.T) {
			out := ptrace.NewTraces()
			n := 0
			for _, g := range BuildAll(readTraces(t, path), Options{}) {
				n += AppendHandoffs(g, out, ContentPolicy{MaxBytes: 4096})
				// The framework's own handoff spans, enriched in place, are part of the output.
				for _, e := range g.Edges {
					if e.Via != nil && e.Via.Role == RoleHandoff {
						rs := out.ResourceSpans().AppendEmpty()
						e.Via.Pdata.CopyTo(rs.ScopeSpans().AppendEmpty().Spans().AppendEmpty())
						n++
					}
				}
			}
			golden := filepath.Join("testdata", "golden", name+".handoffs.json")
			if n == 0 {
				_, err := os.Stat(golden)
				require.True(t, os.IsNotExist(err), "no handoffs any more, remove %s", golden)
				return
			}
			b, err := (&ptrace.JSONMarshaler{}).MarshalTraces(out)
			require.NoError(t, err)
			var pretty bytes.Buffer
			require.NoError(t, json.Indent(&pretty, b, "", "  "))
			pretty.WriteByte('\n')
			checkGolden(t, golden, pretty.Bytes())
		})
	}
}

// TestExpectedEdges states the handoffs of the captures in plain words, so a golden
// rewrite cannot silently change them.
func TestExpectedEdges(t *testing.T) {
	want := map[string][]string{
		"google-adk-ok":            {"triage -> weather_specialist (transfer_tool)"},
		"google-adk-agent-tool":    {"triage -> weather_specialist (agent_as_tool)"},
		"google-adk-tool-error":    {"triage -> weather_specialist (transfer_tool)"},
		"google-adk-transfer-text": {"triage -> weather_specialist (transfer_tool)"},
		// Strands swarm: the swarm and its nodes are wrappers, not agents; the handoff is the
		// routing call (strands_structured_output naming weather_specialist).
		"strands-ok":                {"triage -> weather_specialist (transfer_tool)"},
		"strands-agent-tool":        {"triage -> weather_specialist (agent_as_tool)"},
		"strands-tool-error":        {"triage -> weather_specialist (transfer_tool)"},
		"strands-ok-latest-semconv": {"triage -> weather_specialist (transfer_tool)"},
		// LangGraph supervisor: transfer tool to a sibling node; the supervisor's second run
		// is control coming back, not a new handoff.
		"langgraph-ok":             {"triage -> weather_specialist (transfer_tool)"},
		"langgraph-tool-error":     {"triage -> weather_specialist (transfer_tool)"},
		"mastra-ok":                {"triage -> weather_specialist (agent_as_tool)"},
		"mastra-tool-error":        {"triage -> weather_specialist (agent_as_tool)"},
		"vercel-ai-ok":             {"triage -> weather_specialist (agent_as_tool)"},
		"vercel-ai-tool-error":     {"triage -> weather_specialist (agent_as_tool)"},
		"openai-agents-ok":         {"triage -> weather_specialist (handoff_span)"},
		"openai-agents-tool-error": {"triage -> weather_specialist (handoff_span)"},
		// Pydantic AI "programmatic hand-off": sibling runs, marked inferred.
		"lf-pydantic-ai-multiagent": {"joke_agent -> evaluator_agent (inferred_sibling)"},
		// The real-framework scenarios of e2e/clients (their e2e goldens hold the same edges).
		"scenario-adk-refund-transfer": {"triage -> refund_specialist (transfer_tool)"},
		"scenario-langgraph-command":   {"triage -> weather_specialist (transfer_tool)"},
		// A writer-critic ping-pong: each node run hands to the next with a transfer_to_* call.
		"scenario-langgraph-pingpong": {
			"writer -> critic (transfer_tool)", "critic -> writer (transfer_tool)", "writer -> critic (transfer_tool)",
			"critic -> writer (transfer_tool)", "writer -> critic (transfer_tool)",
		},
		// Three agents as tools issued in one model response.
		"scenario-mastra-fanout": {"trip_planner -> weather_agent (agent_as_tool)", "trip_planner -> hotel_agent (agent_as_tool)", "trip_planner -> flight_agent (agent_as_tool)"},
		// The specialist hands the failed job back to triage (a second triage run).
		"scenario-strands-error-swallowed": {"triage -> weather_specialist (transfer_tool)", "weather_specialist -> triage (transfer_tool)"},
		"scenario-strands-error-retried":   {"triage -> weather_specialist (transfer_tool)", "weather_specialist -> triage (transfer_tool)", "triage -> backup_weather (transfer_tool)"},
		"scenario-strands-refund-swarm":    {"triage -> billing (transfer_tool)", "billing -> refund_specialist (transfer_tool)"},
		// One trace across two services (HTTP client and server spans are not agents).
		"scenario-vercel-two-services": {"frontdesk -> weather_specialist (agent_as_tool)"},
		// The receiver's trace links to the sender's (BuildAll resolves it within the file).
		"scenario-vercel-async-link": {"intake -> report_writer (span_link)"},
	}
	for _, path := range corpusFiles(t) {
		if _, ok := want[baseName(path)]; !ok {
			want[baseName(path)] = nil // every other file: no edge at all
		}
	}
	for _, path := range corpusFiles(t) {
		name := baseName(path)
		var got []string
		for _, g := range BuildAll(readTraces(t, path), Options{}) {
			for _, e := range g.Edges {
				got = append(got, e.From.Name+" -> "+e.To.Name+" ("+e.Detection+")")
			}
		}
		require.Equal(t, want[name], got, name)
	}
}

// TestTokenRollups checks the budgets against the LLM spans of the captures: tokens come
// from the innermost LLM spans only, never from the totals agents repeat.
func TestTokenRollups(t *testing.T) {
	g := BuildAll(capture(t, "strands-ok"), Options{})[0]
	byName := map[string]*Invocation{}
	for _, inv := range g.Invocations {
		byName[inv.Name] = inv
	}
	// weather_specialist: chat spans of 40+60+90 input and 8+8+15 output tokens; two
	// get_weather calls, and its closing strands_structured_output call is the swarm's
	// routing, a delegation call, not a tool call.
	ws := byName["weather_specialist"]
	require.Equal(t, Rollup{
		InputTokens: 190, OutputTokens: 31, TotalTokens: 221, ToolCalls: 2, DelegationCalls: 1, LLMCalls: 3,
		DurationMs: ws.Self.DurationMs,
		// Its chat spans name the stub model mock-weather-1, which no price table knows.
		UnpricedModels: []string{"mock-weather-1"},
	}, ws.Self)
	// The swarm span repeats the total (240/43) on itself, but it is a wrapper, not an agent:
	// the root is the first agent it ran, whose subtree is the sum of both agents, counted
	// once.
	require.NotContains(t, byName, "weather_swarm")
	require.Equal(t, "triage", g.Root.Name)
	require.Equal(t, int64(283), byName["triage"].Subtree.TotalTokens)
	require.Equal(t, 1, g.Depth)

	tool := BuildAll(capture(t, "strands-tool-error"), Options{})[0]
	for _, inv := range tool.Invocations {
		if inv.Name == "weather_specialist" {
			require.Equal(t, 1, inv.Self.Errors, "the failing get_weather call")
		}
	}
}

// span builds a minimal span for hand-made traces.
type spanSpec struct {
	id, parent byte
	name       string
	attrs      map[string]any
	start      uint64
}

func handMade(specs ...spanSpec) []*Span {
	return SpansOf(handMadeTD(specs...))[pcommon.TraceID{1}]
}

func handMadeTD(specs ...spanSpec) ptrace.Traces {
	td := ptrace.NewTraces()
	ss := td.ResourceSpans().AppendEmpty().ScopeSpans().AppendEmpty()
	for _, s := range specs {
		sp := ss.Spans().AppendEmpty()
		sp.SetTraceID(pcommon.TraceID{1})
		sp.SetSpanID(pcommon.SpanID{s.id})
		if s.parent != 0 {
			sp.SetParentSpanID(pcommon.SpanID{s.parent})
		}
		sp.SetName(s.name)
		sp.SetStartTimestamp(pcommon.Timestamp(s.start))
		sp.SetEndTimestamp(pcommon.Timestamp(s.start + 10))
		_ = sp.Attributes().FromRaw(s.attrs)
	}
	return td
}

func agent(name string) map[string]any {
	return map[string]any{"gen_ai.operation.name": "invoke_agent", "gen_ai.agent.name": name}
}

func TestMalformedTraces(t *testing.T) {
	t.Run("parent loop is cut, not followed", func(t *testing.T) {
		g := Build(pcommon.TraceID{1}, handMade(
			spanSpec{id: 1, parent: 2, name: "a", attrs: agent("a")},
			spanSpec{id: 2, parent: 1, name: "b", attrs: agent("b"), start: 1},
		), Options{})
		require.Equal(t, 1, g.BrokenLinks)
		require.Len(t, g.Invocations, 2)
		require.Len(t, g.Edges, 1)
	})
	t.Run("orphans are counted and kept", func(t *testing.T) {
		g := Build(pcommon.TraceID{1}, handMade(
			spanSpec{id: 1, name: "root", attrs: agent("root")},
			spanSpec{id: 2, parent: 9, name: "lost", attrs: agent("lost"), start: 1},
		), Options{})
		require.Equal(t, 1, g.Orphans)
		require.Len(t, g.Invocations, 2)
		require.Empty(t, g.Edges, "an orphan is not anybody's sub-agent")
	})
	t.Run("duplicate span ids keep the first", func(t *testing.T) {
		g := Build(pcommon.TraceID{1}, handMade(
			spanSpec{id: 1, name: "a", attrs: agent("a")},
			spanSpec{id: 1, name: "a again", attrs: agent("x")},
		), Options{})
		require.Equal(t, 1, g.Duplicates)
		require.Len(t, g.Invocations, 1)
	})
	t.Run("name-level cycle a -> b -> a", func(t *testing.T) {
		g := Build(pcommon.TraceID{1}, handMade(
			spanSpec{id: 1, name: "a", attrs: agent("a")},
			spanSpec{id: 2, parent: 1, name: "b", attrs: agent("b"), start: 1},
			spanSpec{id: 3, parent: 2, name: "a", attrs: agent("a"), start: 2},
		), Options{})
		require.Equal(t, [][]string{{"a", "b"}}, g.Cycles)
		require.Equal(t, 2, g.Depth)
	})
	t.Run("transfer to an agent that never ran is unresolved", func(t *testing.T) {
		g := Build(pcommon.TraceID{1}, handMade(
			spanSpec{id: 1, name: "a", attrs: agent("a")},
			spanSpec{
				id: 2, parent: 1, name: "execute_tool transfer_to_ghost", start: 1,
				attrs: map[string]any{"gen_ai.operation.name": "execute_tool", "gen_ai.tool.name": "transfer_to_ghost"},
			},
		), Options{})
		require.Empty(t, g.Edges)
		require.Len(t, g.Unresolved, 1)
	})
	t.Run("sibling receiver of a transfer call", func(t *testing.T) {
		g := Build(pcommon.TraceID{1}, handMade(
			spanSpec{id: 1, name: "root"},
			spanSpec{id: 2, parent: 1, name: "a", attrs: agent("a"), start: 1},
			spanSpec{
				id: 3, parent: 2, name: "execute_tool transfer_to_agent", start: 2,
				attrs: map[string]any{
					"gen_ai.operation.name": "execute_tool", "gen_ai.tool.name": "transfer_to_agent",
					"gen_ai.tool.call.arguments": `{"agent_name":"b"}`,
				},
			},
			spanSpec{id: 4, parent: 1, name: "b", attrs: agent("b"), start: 3},
		), Options{})
		require.Len(t, g.Edges, 1)
		require.Equal(t, "a", g.Edges[0].From.Name)
		require.Equal(t, "b", g.Edges[0].To.Name)
		require.Equal(t, DetectTransferTool, g.Edges[0].Detection)
	})
}

// TestHandoffReplayIsIdempotent feeds a trace with its HANDOFF spans back in: the edges
// stay the same and no twin span is added.
func TestHandoffReplayIsIdempotent(t *testing.T) {
	td := capture(t, "google-adk-ok")
	g := BuildAll(td, Options{})[0]
	require.Equal(t, 1, AppendHandoffs(g, td, ContentPolicy{}))
	again := BuildAll(td, Options{})[0]
	require.Len(t, again.Edges, 1)
	require.Equal(t, DetectTransferTool, again.Edges[0].Detection, "kept from the replayed HANDOFF span")
	require.Equal(t, 0, AppendHandoffs(again, td, ContentPolicy{}))
}

func TestContentPolicy(t *testing.T) {
	p := ContentPolicy{MaxBytes: 8}
	require.Equal(t, "héllo w", p.Apply("héllo world"))
	require.Equal(t, "abc", ContentPolicy{}.Apply("abc"))
	require.Equal(t, "ab\uFFFDc", ContentPolicy{}.Apply("ab\xffc"))
	// Invalid bytes are replaced before the cap, so the cap holds on what is written.
	capped := ContentPolicy{MaxBytes: 8}.Apply(strings.Repeat("\x80", 10) + "abc")
	require.LessOrEqual(t, len(capped), 8)
	require.Equal(t, "\uFFFDabc", capped, "a run of invalid bytes becomes one U+FFFD")
	digits, err := redact.New(nil, []string{`\d{4}`})
	require.NoError(t, err)
	require.Equal(t, "id [REDACTED] ok", ContentPolicy{Redactor: digits}.Apply("id 4242 ok"))
}
