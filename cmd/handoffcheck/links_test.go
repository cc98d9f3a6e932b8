package main

import (
	"os"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/require"
	"go.opentelemetry.io/collector/pdata/pcommon"
	"go.opentelemetry.io/collector/pdata/ptrace"

	"github.com/otelcol-handoff/otelcol-handoff/internal/agentgraph/agentgraphtest"
	"github.com/otelcol-handoff/otelcol-handoff/internal/report"
)

// asyncFiles writes an asynchronous handoff between two traces as two span files, built
// from real captures: google-adk-ok's weather_specialist publishes from its first
// get_weather call, and the OpenAI Agents "Hello world" agent consumes in a new trace whose
// first span links to the producer span.
func asyncFiles(t *testing.T) (sender, receiver string) {
	t.Helper()
	read := func(path string) ptrace.Traces {
		b, err := os.ReadFile(path)
		require.NoError(t, err)
		td, err := (&ptrace.JSONUnmarshaler{}).UnmarshalTraces(b)
		require.NoError(t, err)
		return td
	}
	td := read(adk)
	var tool ptrace.Span
	for _, rs := range td.ResourceSpans().All() {
		for _, sp := range rs.ScopeSpans().At(0).Spans().All() {
			if sp.Name() == "execute_tool get_weather" && (tool == (ptrace.Span{}) || sp.StartTimestamp() < tool.StartTimestamp()) {
				tool = sp
			}
		}
	}
	agentgraphtest.AppendProducer(td, tool.SpanID(), "forecasts")
	recv := agentgraphtest.LinkAsync(read("../../testdata/corpus/lf-openai-agents-openinference.otlp.json"),
		pcommon.TraceID{0xa5, 0x1c, 0x0f, 0xf0, 4}, tool.TraceID(), agentgraphtest.ProducerSpanID,
		"weather-backend", "forecasts", tool.EndTimestamp())
	dir := t.TempDir()
	write := func(name string, td ptrace.Traces) string {
		b, err := (&ptrace.JSONMarshaler{}).MarshalTraces(td)
		require.NoError(t, err)
		path := filepath.Join(dir, name)
		require.NoError(t, os.WriteFile(path, b, 0o644))
		return path
	}
	return write("sender.json", td), write("receiver.json", recv)
}

const asyncDelegation = `
      - name: async_forecast
        when: root_agent == "Hello world"
        steps:
          - action: ASSERT_AGENT_TOPOLOGY
          - action: EXPECT_DELEGATION_TO
            agentName: Hello world
            fromAgent: weather_specialist
`

// TestReplayResolvesLinksBetweenTraces: the receiver's trace links to a span of the
// sender's trace in another file of the same replay; the delegation is named by the
// sender's agent whatever the order of the files.
func TestReplayResolvesLinksBetweenTraces(t *testing.T) {
	sender, receiver := asyncFiles(t)
	for _, files := range [][]string{{sender, receiver}, {receiver, sender}} {
		jsonOut := filepath.Join(t.TempDir(), "results.jsonl")
		code, out, errOut := runCmd(t, append([]string{"replay", "--config", config(t, asyncDelegation), "--json", jsonOut}, files...)...)
		require.Equal(t, exitPass, code, out+errOut)
		// One trace judged: the case selects the receiver's.
		require.Equal(t, "handoffcheck: 1 traces, 2 assertions\n2 passed, 0 failed, 0 errors, 0 skipped\n", out)
		results, err := report.ReadJSONLines(jsonOut)
		require.NoError(t, err)
		require.Len(t, results, 2)
		require.Equal(t, "weather_specialist delegated to Hello world 1 times", results[1].Message)
	}
}
