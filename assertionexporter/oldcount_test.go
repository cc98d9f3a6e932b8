package assertionexporter

import (
	"context"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/require"
	"go.opentelemetry.io/collector/component"
	"go.opentelemetry.io/collector/component/componenttest"
	"go.opentelemetry.io/collector/confmap"
	"go.opentelemetry.io/collector/confmap/confmaptest"
	"go.opentelemetry.io/collector/processor/processortest"

	"github.com/otelcol-handoff/otelcol-handoff/assertionexporter/internal/metadata"
	"github.com/otelcol-handoff/otelcol-handoff/assertionexporter/internal/metadatatest"
	"github.com/otelcol-handoff/otelcol-handoff/handoffprocessor"
	"github.com/otelcol-handoff/otelcol-handoff/internal/agentgraph"
)

// countingResults runs the real Google ADK and Strands captures through the handoff
// processor into an exporter configured by testdata/count_delegation_calls.yaml's
// component name (require_handoff_processor: true, the default), and returns every
// result as "case/step: outcome" (with the message when it is not a pass).
func countingResults(t *testing.T, name string) (map[string]string, *Config) {
	t.Helper()
	cm, err := confmaptest.LoadConf(filepath.Join("testdata", "count_delegation_calls.yaml"))
	require.NoError(t, err)
	sub, err := cm.Sub(component.NewIDWithName(metadata.Type, name).String())
	require.NoError(t, err)
	cfg := NewFactory().CreateDefaultConfig().(*Config)
	require.NoError(t, sub.Unmarshal(cfg))
	require.True(t, cfg.RequireHandoffProcessor)
	cfg.Reports.JSONLines = filepath.Join(t.TempDir(), "verdicts.jsonl")
	require.NoError(t, confmap.Validate(cfg))

	ctx := context.Background()
	exp, err := newExporter(metadatatest.NewSettings(componenttest.NewTelemetry()), cfg)
	require.NoError(t, err)
	require.NoError(t, exp.Start(ctx, componenttest.NewNopHost()))
	pf := handoffprocessor.NewFactory()
	proc, err := pf.CreateTraces(ctx, processortest.NewNopSettings(pf.Type()), pf.CreateDefaultConfig(), exp)
	require.NoError(t, err)
	require.NoError(t, proc.Start(ctx, componenttest.NewNopHost()))
	for _, capture := range []string{"google-adk-ok", "strands-ok"} {
		require.NoError(t, proc.ConsumeTraces(ctx, readCapture(t, capture)))
	}
	require.NoError(t, proc.(handoffprocessor.EndOfInput).EndOfInput(ctx))
	require.NoError(t, proc.Shutdown(ctx))
	require.NoError(t, exp.Shutdown(ctx))

	got := map[string]string{}
	for _, r := range (&harness{out: cfg.Reports.JSONLines}).results(t) {
		v := string(r.Outcome)
		if r.Outcome != "pass" {
			v += ": " + r.Message
		}
		got[r.Case+"/"+r.Step] = v
	}
	return got, cfg
}

// TestDelegationCallsAreNotToolCalls: by default the routing calls of the real captures
// (Google ADK's transfer_to_agent, Strands' strands_structured_output) are handoffs, not
// tool calls: not in maxToolCalls, expected_tool_calls, expected_tool_call_order or
// expected_no_tool_calls.
func TestDelegationCallsAreNotToolCalls(t *testing.T) {
	got, cfg := countingResults(t, "new")
	require.False(t, cfg.CountDelegationCallsAsToolCalls)
	require.Equal(t, map[string]string{
		"adk/ASSERT_AGENT_TOPOLOGY#1":                                         "pass",
		"adk/EXPECT_AGENT_BUDGET#2":                                           "pass",
		"adk/expected_tool_calls[0]":                                          "fail: transfer_to_agent was never called by agent triage (it made no tool calls)",
		"adk/expected_no_tool_calls":                                          "pass",
		"adk/expected_child_agents.weather_specialist.expected_triggered":     "pass",
		"adk/expected_child_agents.weather_specialist.expected_tool_calls[0]": "pass",
		"strands/ASSERT_AGENT_TOPOLOGY#1":                                     "pass",
		"strands/EXPECT_AGENT_BUDGET#2":                                       "pass",
		"strands/expected_no_tool_calls":                                      "pass",
		"strands/expected_child_agents.weather_specialist.expected_triggered": "pass",
		"strands/expected_child_agents.weather_specialist.expected_tool_call_order": "fail: agent weather_specialist: expected " +
			"get_weather -> strands_structured_output in this order, but no strands_structured_output call follows get_weather " +
			"(calls: get_weather, get_weather)",
	}, got)
}

// TestCountDelegationCallsAsToolCalls: count_delegation_calls_as_tool_calls asks for the
// old counting on the same captures and cases: the transfer and structured-output calls
// are the sender's tool calls again (maxToolCalls counts them, expected_no_tool_calls on
// them fails), while the handoffs stay what they were. The handoff processor's graph was
// built without the option, so the exporter builds its own (with the processor's graph
// the verdicts would be the default ones) and the trace still counts as assembled.
func TestCountDelegationCallsAsToolCalls(t *testing.T) {
	got, cfg := countingResults(t, "old")
	require.True(t, cfg.CountDelegationCallsAsToolCalls)
	opts, err := cfg.graphOptions()
	require.NoError(t, err)
	require.True(t, opts.CountDelegationCallsAsToolCalls)
	require.Equal(t, agentgraph.Options{CountDelegationCallsAsToolCalls: true}.Fingerprint(), opts.Fingerprint())
	require.Equal(t, map[string]string{
		"adk/ASSERT_AGENT_TOPOLOGY#1": "pass",
		"adk/EXPECT_AGENT_BUDGET#2":   "fail: triage (span 3c4494ae26d3abdc) made 3 tool calls, over maxToolCalls 2",
		"adk/expected_tool_calls[0]":  "pass",
		"adk/expected_no_tool_calls":  "fail: agent triage called tools it must not call: transfer_to_agent x1",
		// The transfer is still one handoff: the HANDOFF span the processor made of it
		// carries the edge in the exporter's own build, and the call it recorded is not a
		// second, fire-and-forget trigger.
		"adk/expected_child_agents.weather_specialist.expected_triggered":           "pass",
		"adk/expected_child_agents.weather_specialist.expected_tool_calls[0]":       "pass",
		"strands/ASSERT_AGENT_TOPOLOGY#1":                                           "pass",
		"strands/EXPECT_AGENT_BUDGET#2":                                             "fail: triage (span fa02bab16782b0b7) made 4 tool calls, over maxToolCalls 2",
		"strands/expected_no_tool_calls":                                            "fail: agent triage called tools it must not call: strands_structured_output x1",
		"strands/expected_child_agents.weather_specialist.expected_triggered":       "pass",
		"strands/expected_child_agents.weather_specialist.expected_tool_call_order": "pass",
	}, got)
}
