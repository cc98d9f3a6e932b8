package rules

import (
	"path/filepath"
	"sort"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"
	"go.opentelemetry.io/collector/confmap/confmaptest"

	"github.com/otelcol-handoff/otelcol-handoff/internal/agentgraph"
	tr "github.com/otelcol-handoff/otelcol-handoff/internal/rules/rulestest"
)

// specFile is the shape of the test configs: the exporter's cases and defaults.
type specFile struct {
	Cases    []CaseConfig `mapstructure:"cases"`
	Defaults TestFields   `mapstructure:"defaults"`
}

func loadSpec(t *testing.T, name string) specFile {
	t.Helper()
	cm, err := confmaptest.LoadConf(filepath.Join("testdata", name))
	require.NoError(t, err)
	var s specFile
	require.NoError(t, cm.Unmarshal(&s))
	return s
}

// verdicts evaluates g and returns "outcome: message" by step id.
func verdicts(t *testing.T, ev *Evaluator, g *agentgraph.Graph) map[string]string {
	t.Helper()
	out := map[string]string{}
	for _, r := range ev.Evaluate(g, true) {
		key := r.Step
		if _, dup := out[key]; dup {
			key = r.Case + "/" + r.Step
		}
		out[key] = string(r.Outcome) + ": " + r.Message
	}
	return out
}

// seed001Verdicts are the verdicts expected on each seed-001 example's passing and failing
// traces (rulestest.Seed001 built with trace ids 1 and 2).
var seed001Verdicts = map[string][2]map[string]string{
	"completes_cleanly": {
		{
			"expected_result": "pass: agent assistant: `status == \"completed\"` holds",
		},
		{
			"expected_result": "fail: agent assistant: expected `status == \"completed\"`, got status \"failed\", error \"tool crashed\", " +
				"output \"partial answer\" (status: error on the agent span (status))",
		},
	},
	"returns_id_10": {
		{
			"expected_result": "pass: agent assistant: `output.id == 10` holds",
		},
		{
			"expected_result": "fail: agent assistant: expected `output.id == 10`, got status \"completed\", error \"\", output {\"id\":11} (status: no error on the agent span)",
		},
	},
	"greets_user": {
		{
			"expected_result": "pass: agent assistant: `\"hello\" in output` holds",
		},
		{
			"expected_result": "fail: agent assistant: expected `\"hello\" in output`, got status \"completed\", error \"\", output \"Hi! How can I help?\" (status: no error on the agent span)",
		},
	},
	"high_confidence_only": {
		{
			"expected_result": "pass: agent assistant: `output.confidence >= 0.8 and output.label != \"unknown\"` holds",
		},
		{
			"expected_result": "fail: agent assistant: expected `output.confidence >= 0.8 and output.label != \"unknown\"`, got status \"completed\", error \"\", " +
				"output {\"confidence\":0.93,\"label\":\"unknown\"} (status: no error on the agent span)",
		},
	},
	"rejects_invalid_input": {
		{
			"expected_result": "pass: agent assistant: `status == \"failed\" and \"missing vendor\" in error` holds",
		},
		{
			"expected_result": "fail: agent assistant: expected `status == \"failed\" and \"missing vendor\" in error`, got status \"completed\", error \"\", " +
				"output \"Created invoice for vendor \\\"\\\"\" (status: no error on the agent span)",
		},
	},
	"uses_calculator": {
		{
			"expected_tool_calls[0]": "pass: agent assistant called math.calculator.add 1 times",
		},
		{
			"expected_tool_calls[0]": "fail: math.calculator.add was never called by agent assistant (its tool calls: math.calculator.multiply x1)",
		},
	},
	"calls_add_at_least_five_times": {
		{
			"expected_tool_calls[0]": "pass: agent assistant: 6 of 6 math.calculator.add calls match `invocations >= 5`, and the residual `invocations >= 5` holds with invocations = 6",
		},
		{
			"expected_tool_calls[0]": "fail: agent assistant: 4 of 4 math.calculator.add calls match `invocations >= 5`, and the residual `invocations >= 5` is false with invocations = 4",
		},
	},
	"calls_send_exactly_once": {
		{
			"expected_tool_calls[0]": "pass: agent assistant: 1 of 1 notifications.send calls match `invocations == 1`, and the residual `invocations == 1` holds with invocations = 1",
		},
		{
			"expected_tool_calls[0]": "fail: agent assistant: 2 of 2 notifications.send calls match `invocations == 1`, and the residual `invocations == 1` is false with invocations = 2",
		},
	},
	"calls_add_with_payload_args": {
		{
			"expected_tool_calls[0]": "pass: agent assistant: 1 of 2 math.calculator.add calls match `params.a == 4 and params.b == 6`",
		},
		{
			"expected_tool_calls[0]": "fail: agent assistant: none of 2 math.calculator.add calls match `params.a == 4 and params.b == 6` " +
				"(arguments seen: {\"a\":4,\"b\":5}; {\"a\":6,\"b\":4})",
		},
	},
	"calls_add_for_each_pair": {
		{
			"expected_tool_calls[0]": "pass: agent assistant: 1 of 2 math.calculator.add calls match `invocations == 1 and params.a == 4`, " +
				"and the residual `invocations == 1` holds with invocations = 1",
			"expected_tool_calls[1]": "pass: agent assistant: 1 of 2 math.calculator.add calls match `invocations == 1 and params.a == 7`, " +
				"and the residual `invocations == 1` holds with invocations = 1",
		},
		{
			"expected_tool_calls[0]": "fail: agent assistant: 2 of 3 math.calculator.add calls match `invocations == 1 and params.a == 4`, " +
				"and the residual `invocations == 1` is false with invocations = 2",
			"expected_tool_calls[1]": "pass: agent assistant: 1 of 3 math.calculator.add calls match `invocations == 1 and params.a == 7`, " +
				"and the residual `invocations == 1` holds with invocations = 1",
		},
	},
	"fetches_then_sends": {
		{
			"expected_tool_call_order": "pass: agent assistant called orders.lookup -> notifications.send in order",
		},
		{
			"expected_tool_call_order": "fail: agent assistant: expected orders.lookup -> notifications.send in this order, " +
				"but no notifications.send call follows orders.lookup (calls: notifications.send, orders.lookup)",
		},
	},
	"fetches_the_row_we_just_inserted": {
		{
			"expected_result":        "pass: agent assistant: `output.row.id == context.test_uuid` holds",
			"expected_tool_calls[0]": "pass: agent assistant: 1 of 1 db.fetch_row calls match `params.uuid == context.test_uuid and invocations == 1`, and the residual `invocations == 1` holds with invocations = 1",
		},
		{
			"expected_result": "fail: agent assistant: expected `output.row.id == context.test_uuid`, got status \"completed\", error \"\", " +
				"output {\"row\":{\"id\":\"row-7\"}} (status: no error on the agent span)",
			"expected_tool_calls[0]": "fail: agent assistant: 0 of 1 db.fetch_row calls match `params.uuid == context.test_uuid and invocations == 1` " +
				"(arguments seen: {\"uuid\":\"row-7\"}), and `params.uuid == context.test_uuid and invocations == 1` is false with invocations = 0",
		},
	},
	"plain_chat_no_tools": {
		{
			"expected_no_tool_calls": "pass: agent assistant called none of math.calculator.add, notifications.send",
		},
		{
			"expected_no_tool_calls": "fail: agent assistant called tools it must not call: notifications.send x1",
		},
	},
	"dispatches_to_summarizer": {
		{
			"expected_child_agents.summarizer.expected_payload":       "pass: summarizer payload: `payload.text != \"\"` holds",
			"expected_child_agents.summarizer.expected_result":        "pass: agent summarizer: `output.summary != \"\"` holds",
			"expected_child_agents.summarizer.expected_tool_calls[0]": "pass: agent summarizer: 1 of 1 llm.complete calls match `invocations >= 1`, and the residual `invocations >= 1` holds with invocations = 1",
			"expected_child_agents.summarizer.expected_no_tool_calls": "pass: agent summarizer called none of email.send",
		},
		{
			"expected_child_agents.summarizer.expected_payload": "fail: summarizer payload: expected `payload.text != \"\"`, got payload {\"text\":\"\"} (from gen_ai.tool.call.arguments.payload)",
			"expected_child_agents.summarizer.expected_result": "fail: agent summarizer: expected `output.summary != \"\"`, got status \"completed\", error \"\", " +
				"output {\"summary\":\"\"} (status: no error on the agent span)",
			"expected_child_agents.summarizer.expected_tool_calls[0]": "fail: llm.complete was never called by agent summarizer (its tool calls: email.send x1), " +
				"and `invocations >= 1` is false with invocations = 0",
			"expected_child_agents.summarizer.expected_no_tool_calls": "fail: agent summarizer called tools it must not call: email.send x1",
		},
	},
	"forwards_charge_id_unchanged": {
		{
			"expected_child_agents.billing-refunder.expected_payload": "pass: billing-refunder payload: `payload.charge_id == context.charge_id` holds",
		},
		{
			"expected_child_agents.billing-refunder.expected_payload": "fail: billing-refunder payload: expected `payload.charge_id == context.charge_id`, " +
				"got payload {\"charge_id\":\"ch_999\"} (from gen_ai.tool.call.arguments.payload)",
		},
	},
	"dispatches_summarizer_then_publisher": {
		{
			"expected_child_agents.summarizer.expected_result":                                        "pass: agent summarizer: `output.summary != \"\"` holds",
			"expected_child_agents.summarizer.expected_child_agents.publisher.expected_tool_calls[0]": "pass: agent publisher: 1 of 1 kafka.publish calls match `params.topic == \"summaries\"`",
		},
		{
			"expected_child_agents.summarizer.expected_result": "pass: agent summarizer: `output.summary != \"\"` holds",
			"expected_child_agents.summarizer.expected_child_agents.publisher.expected_tool_calls[0]": "fail: agent publisher: none of 1 kafka.publish calls " +
				"match `params.topic == \"summaries\"` (arguments seen: {\"topic\":\"drafts\"})",
		},
	},
	"fans_out_telemetry": {
		{
			"expected_child_agents.telemetry-writer.expected_triggered": "pass: agent checkout-agent triggered telemetry-writer 1 times (1 fire-and-forget)",
			"expected_child_agents.telemetry-writer.expected_payload":   "pass: telemetry-writer payload: `payload.event == \"checkout\"` holds",
		},
		{
			"expected_child_agents.telemetry-writer.expected_triggered": "fail: expected agent checkout-agent to trigger telemetry-writer 1 times, saw 2 times (2 fire-and-forget)",
			"expected_child_agents.telemetry-writer.expected_payload": "pass: telemetry-writer trigger 2 of 2 (span 0000000000000205): " +
				"telemetry-writer payload: `payload.event == \"checkout\"` holds",
		},
	},
}

// TestSeed001Examples runs every example of seed 001, loaded verbatim from
// testdata/seed001.yaml, on a trace that satisfies it and on one that does not.
func TestSeed001Examples(t *testing.T) {
	spec := loadSpec(t, "seed001.yaml")
	examples := seed001Verdicts
	var names []string
	for _, c := range spec.Cases {
		names = append(names, c.Name)
	}
	sort.Strings(names)
	var covered []string
	for name := range examples {
		covered = append(covered, name)
	}
	sort.Strings(covered)
	require.Equal(t, names, covered, "every seed-001 example has a passing and a failing trace")

	for _, c := range spec.Cases {
		ev, err := Compile([]CaseConfig{c}, Options{})
		require.NoError(t, err, c.Name)
		traces := tr.Seed001[c.Name]
		for i, build := range []func(byte) *tr.Trace{traces.Pass, traces.Fail} {
			t.Run(c.Name+"/"+[]string{"passes", "fails"}[i], func(t *testing.T) {
				require.Equal(t, examples[c.Name][i], verdicts(t, ev, build(byte(i+1)).Graph()))
			})
		}
	}
}

// TestSeed001ExamplesTogether evaluates all examples as one config (as the exporter does)
// on one trace: every case yields its results, in config order, with config-derived ids.
func TestSeed001ExamplesTogether(t *testing.T) {
	spec := loadSpec(t, "seed001.yaml")
	ev, err := Compile(spec.Cases, Options{})
	require.NoError(t, err)
	results := ev.Evaluate(tr.Summarize(9, `{"text": "x"}`, `{"summary": "s"}`, "llm.complete").Graph(), true)
	var got []string
	for _, r := range results {
		got = append(got, r.Case+" "+r.Step)
	}
	var want []string
	for _, c := range spec.Cases {
		for _, id := range ev.Cases()[c.Name] {
			want = append(want, c.Name+" "+id)
		}
	}
	require.Equal(t, want, got)
	require.Equal(t, []string{
		"expected_child_agents.summarizer.expected_result",
		"expected_child_agents.summarizer.expected_child_agents.publisher.expected_tool_calls[0]",
	}, ev.Cases()["dispatches_summarizer_then_publisher"])
	for _, r := range results {
		require.Equal(t, strings.Repeat("09", 16), r.TraceID)
		require.NotEmpty(t, r.Expected, r.Step)
		require.NotEmpty(t, r.Actual, r.Step)
		require.NotEmpty(t, r.Spans, r.Step)
	}
}
