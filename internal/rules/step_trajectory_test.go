package rules

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"
	"go.opentelemetry.io/collector/confmap"
	"go.opentelemetry.io/collector/pdata/ptrace"
	"gopkg.in/yaml.v3"

	"github.com/otelcol-handoff/otelcol-handoff/internal/agentgraph"
	"github.com/otelcol-handoff/otelcol-handoff/internal/cluster"
	"github.com/otelcol-handoff/otelcol-handoff/internal/rules/steps"
)

// EXPECT_TRAJECTORY on real-framework captures (testdata/traces; SOURCES.md says what each
// holds). The expected sequences were read from the spans: in scenario-strands-refund-swarm
// billing calls lookup_order {"order_id":"A-1001"} then hands off (strands_structured_output)
// to refund_specialist, which calls issue_refund {"order_id":"A-1001","amount_eur":42.5};
// in scenario-mastra-fanout trip_planner's first model step issues three agent-as-tool calls
// (weather_agent, hotel_agent, flight_agent, started in that order) and weather_agent calls
// get_weather; in scenario-adk-refund-transfer triage only calls transfer_to_agent and
// refund_specialist calls issue_refund; in scenario-langgraph-command weather_specialist
// calls get_weather for Paris, then (next model response) Berlin.

// trajectoryOn runs one topology step (allowing cycles) plus one EXPECT_TRAJECTORY step
// written in YAML (the step's keys, indented under "- action: EXPECT_TRAJECTORY") on a
// capture of testdata/traces.
func trajectoryOn(t *testing.T, capture, step string) Result {
	t.Helper()
	return trajectoryOnFile(t, filepath.Join("..", "..", "testdata", "traces", capture+".json"), step)
}

func indent(s, by string) string {
	lines := strings.Split(strings.TrimRight(s, "\n"), "\n")
	for i, l := range lines {
		lines[i] = by + l
	}
	return strings.Join(lines, "\n") + "\n"
}

func TestTrajectoryOnRealFrameworks(t *testing.T) {
	for _, tc := range []struct {
		name, capture, step string
		outcome             Outcome
		score               float64
		expected, actual    string
		message             string
	}{
		{
			name: "in_order over the subtree (Strands swarm)", capture: "scenario-strands-refund-swarm",
			step:    "agentName: billing\nscope: subtree\nof: tools\nmode: in_order\nreference: [lookup_order, {tool: issue_refund, params: 'params.amount_eur > 0.0'}]",
			outcome: Pass, score: 1,
			expected: "tools of billing's subtree, in_order: lookup_order, issue_refund where params.amount_eur > 0.0",
			actual:   "lookup_order, issue_refund (precision 1.00, recall 1.00)",
			message:  "billing's subtree's tools match the reference (in_order): precision 1.00, recall 1.00",
		},
		{
			name: "in_order on the agent alone misses the receiver's call", capture: "scenario-strands-refund-swarm",
			step:    "agentName: billing\nmode: in_order\nreference: [lookup_order, {tool: issue_refund, params: 'params.amount_eur > 0.0'}]",
			outcome: Fail, score: 2.0 / 3,
			expected: "tools of billing, in_order: lookup_order, issue_refund where params.amount_eur > 0.0",
			actual:   "lookup_order (precision 1.00, recall 0.50)",
			message:  "billing's tools diverge from the reference (in_order): expected issue_refund where params.amount_eur > 0.0 after lookup_order, saw no issue_refund; precision 1.00, recall 0.50",
		},
		{
			name: "in_order swapped", capture: "scenario-strands-refund-swarm",
			step:    "agentName: billing\nscope: subtree\nmode: in_order\nreference: [issue_refund, lookup_order]",
			outcome: Fail, score: 0.5,
			expected: "tools of billing's subtree, in_order: issue_refund, lookup_order",
			actual:   "lookup_order, issue_refund (precision 0.50, recall 0.50)",
			message:  "billing's subtree's tools diverge from the reference (in_order): expected issue_refund before lookup_order, saw lookup_order first; precision 0.50, recall 0.50",
		},
		{
			name: "params do not hold", capture: "scenario-strands-refund-swarm",
			step:    "agentName: refund_specialist\nmode: exact\nreference: [{tool: issue_refund, params: 'params.amount_eur > 100.0'}]",
			outcome: Fail, score: 0,
			expected: "tools of refund_specialist, exact: issue_refund where params.amount_eur > 100.0",
			actual:   "issue_refund (precision 0.00, recall 0.00)",
			message:  "refund_specialist's tools diverge from the reference (exact): expected issue_refund where params.amount_eur > 100.0, saw issue_refund once, none where it holds; precision 0.00, recall 0.00",
		},
		{
			name: "strict (agentevals) is exact, on a handoff's receiver", capture: "scenario-strands-refund-swarm",
			step:    "fromAgent: billing\ntoAgent: refund_specialist\nmode: strict\nreference: [{tool: issue_refund, params: 'params.order_id == \"A-1001\"'}]",
			outcome: Pass, score: 1,
			expected: "tools of the receiver of billing -> refund_specialist, strict (exact): issue_refund where params.order_id == \"A-1001\"",
			actual:   "issue_refund (precision 1.00, recall 1.00)",
			message:  "refund_specialist's tools match the reference (exact): precision 1.00, recall 1.00",
		},
		{
			name: "the handoff sequence, exact", capture: "scenario-strands-refund-swarm",
			step:    "of: agents\nmode: exact\nreference: [billing, refund_specialist]",
			outcome: Pass, score: 1,
			expected: "agents of the trace, exact: billing, refund_specialist",
			actual:   "billing, refund_specialist (precision 1.00, recall 1.00)",
			message:  "the trace's agents match the reference (exact): precision 1.00, recall 1.00",
		},
		{
			name: "the handoff sequence, wrong order", capture: "scenario-strands-refund-swarm",
			step:    "of: agents\nmode: EXACT\nreference: [refund_specialist, billing]",
			outcome: Fail, score: 0.5,
			expected: "agents of the trace, EXACT (exact): refund_specialist, billing",
			actual:   "billing, refund_specialist (precision 0.50, recall 0.50)",
			message:  "the trace's agents diverge from the reference (exact): expected refund_specialist before billing, saw billing first; precision 0.50, recall 0.50",
		},
		{
			name: "a fan-out of one response as a parallel group (Mastra)", capture: "scenario-mastra-fanout",
			step:    "agentName: trip_planner\nof: agents\nmode: exact\nreference: [{parallel: [flight_agent, hotel_agent, weather_agent]}]",
			outcome: Pass, score: 1,
			expected: "agents of trip_planner, exact: [flight_agent | hotel_agent | weather_agent]",
			actual:   "[weather_agent | hotel_agent | flight_agent] (precision 1.00, recall 1.00)",
			message:  "trip_planner's agents match the reference (exact): precision 1.00, recall 1.00",
		},
		{
			name: "unordered (agentevals) is any_order", capture: "scenario-mastra-fanout",
			step:    "agentName: trip_planner\nof: agents\nmode: unordered\nreference: [flight_agent, weather_agent]",
			outcome: Fail, score: 0.8,
			expected: "agents of trip_planner, unordered (any_order): flight_agent, weather_agent",
			actual:   "[weather_agent | hotel_agent | flight_agent] (precision 0.67, recall 1.00)",
			message:  "trip_planner's agents diverge from the reference (any_order): saw hotel_agent, which the reference does not have; precision 0.67, recall 1.00",
		},
		{
			name: "any_order passes on the same multiset", capture: "scenario-mastra-fanout",
			step:    "agentName: trip_planner\nof: agents\nmode: any_order\nreference: [hotel_agent, flight_agent, weather_agent]",
			outcome: Pass, score: 1,
			expected: "agents of trip_planner, any_order: hotel_agent, flight_agent, weather_agent",
			actual:   "[weather_agent | hotel_agent | flight_agent] (precision 1.00, recall 1.00)",
			message:  "trip_planner's agents match the reference (any_order): precision 1.00, recall 1.00",
		},
		{
			name: "subset", capture: "scenario-mastra-fanout",
			step:    "agentName: trip_planner\nof: agents\nmode: subset\nreference: [weather_agent, hotel_agent]",
			outcome: Fail, score: 0.8,
			expected: "agents of trip_planner, subset: weather_agent, hotel_agent",
			actual:   "[weather_agent | hotel_agent | flight_agent] (precision 0.67, recall 1.00)",
			message:  "trip_planner's agents diverge from the reference (subset): saw flight_agent, which the reference does not have; precision 0.67, recall 1.00",
		},
		{
			name: "delegation calls are not tool calls: the planner's own tools are none", capture: "scenario-mastra-fanout",
			step:    "agentName: trip_planner\nmode: superset\nreference: [get_weather]",
			outcome: Fail, score: 0,
			expected: "tools of trip_planner, superset: get_weather",
			actual:   "none (precision 1.00, recall 0.00)",
			message:  "trip_planner's tools diverge from the reference (superset): expected get_weather, saw no get_weather; precision 1.00, recall 0.00",
		},
		{
			name: "superset over the subtree", capture: "scenario-mastra-fanout",
			step:    "agentName: trip_planner\nscope: subtree\nmode: superset\nreference: [{tool: get_weather, params: 'params.city == \"Lisbon\"'}]",
			outcome: Pass, score: 1,
			expected: "tools of trip_planner's subtree, superset: get_weather where params.city == \"Lisbon\"",
			actual:   "get_weather (precision 1.00, recall 1.00)",
			message:  "trip_planner's subtree's tools match the reference (superset): precision 1.00, recall 1.00",
		},
		{
			name: "ANY_ORDER (ADK) is superset: extras allowed, missing not", capture: "scenario-adk-refund-transfer",
			step:    "agentName: refund_specialist\nmode: ANY_ORDER\nreference: [issue_refund, lookup_order]",
			outcome: Fail, score: 2.0 / 3,
			expected: "tools of refund_specialist, ANY_ORDER (superset): issue_refund, lookup_order",
			actual:   "issue_refund (precision 1.00, recall 0.50)",
			message:  "refund_specialist's tools diverge from the reference (superset): expected lookup_order, saw no lookup_order; precision 1.00, recall 0.50",
		},
		{
			name: "subset holds for an agent whose only call was the transfer", capture: "scenario-adk-refund-transfer",
			step:    "agentName: triage\nmode: subset\nreference: [lookup_order]",
			outcome: Pass, score: 0,
			expected: "tools of triage, subset: lookup_order",
			actual:   "none (precision 1.00, recall 0.00)",
			message:  "triage's tools match the reference (subset): precision 1.00, recall 0.00",
		},
		{
			name: "IN_ORDER (ADK) with an optional step absent", capture: "scenario-langgraph-command",
			step:    "agentName: weather_specialist\nmode: IN_ORDER\nreference: [{tool: get_weather, params: 'params.city == \"Paris\"'}, {tool: get_forecast, optional: true}, {tool: get_weather, params: 'params.city == \"Berlin\"'}]",
			outcome: Pass, score: 1,
			expected: "tools of weather_specialist, IN_ORDER (in_order): get_weather where params.city == \"Paris\", get_forecast?, get_weather where params.city == \"Berlin\"",
			actual:   "get_weather, get_weather (precision 1.00, recall 1.00)",
			message:  "weather_specialist's tools match the reference (in_order): precision 1.00, recall 1.00",
		},
		{
			name: "exact with a call too many", capture: "scenario-langgraph-command",
			step:    "agentName: weather_specialist\nmode: exact\nreference: [get_weather]",
			outcome: Fail, score: 2.0 / 3,
			expected: "tools of weather_specialist, exact: get_weather",
			actual:   "get_weather, get_weather (precision 0.50, recall 1.00)",
			message:  "weather_specialist's tools diverge from the reference (exact): expected nothing after get_weather, saw get_weather; precision 0.50, recall 1.00",
		},
		{
			name: "Berlin before Paris", capture: "scenario-langgraph-command",
			step:    "agentName: weather_specialist\nmode: in_order\nreference: [{tool: get_weather, params: 'params.city == \"Berlin\"'}, {tool: get_weather, params: 'params.city == \"Paris\"'}]",
			outcome: Fail, score: 0.5,
			expected: "tools of weather_specialist, in_order: get_weather where params.city == \"Berlin\", get_weather where params.city == \"Paris\"",
			actual:   "get_weather, get_weather (precision 0.50, recall 0.50)",
			message:  "weather_specialist's tools diverge from the reference (in_order): expected get_weather where params.city == \"Berlin\" before get_weather where params.city == \"Paris\", saw get_weather where params.city == \"Paris\" first; precision 0.50, recall 0.50",
		},
		// Each remaining alias both ways.
		{
			name: "EXACT (ADK) passes", capture: "scenario-adk-refund-transfer",
			step:    "agentName: refund_specialist\nmode: EXACT\nreference: [{tool: issue_refund, params: 'params.order_id == \"A-1001\"'}]",
			outcome: Pass, score: 1,
			expected: "tools of refund_specialist, EXACT (exact): issue_refund where params.order_id == \"A-1001\"",
			actual:   "issue_refund (precision 1.00, recall 1.00)",
			message:  "refund_specialist's tools match the reference (exact): precision 1.00, recall 1.00",
		},
		{
			name: "IN_ORDER (ADK) fails", capture: "scenario-strands-error-retried",
			step:    "of: agents\nmode: IN_ORDER\nreference: [weather_specialist, backup_weather, triage]",
			outcome: Fail, score: 2.0 / 3,
			expected: "agents of the trace, IN_ORDER (in_order): weather_specialist, backup_weather, triage",
			actual:   "weather_specialist, triage, backup_weather (precision 0.67, recall 0.67)",
			message:  "the trace's agents diverge from the reference (in_order): expected backup_weather before triage, saw triage first; precision 0.67, recall 0.67",
		},
		{
			name: "strict (agentevals) fails", capture: "scenario-strands-error-retried",
			step:    "of: agents\nmode: strict\nreference: [weather_specialist, triage]",
			outcome: Fail, score: 0.8,
			expected: "agents of the trace, strict (exact): weather_specialist, triage",
			actual:   "weather_specialist, triage, backup_weather (precision 0.67, recall 1.00)",
			message:  "the trace's agents diverge from the reference (exact): expected nothing after triage, saw backup_weather; precision 0.67, recall 1.00",
		},
		{
			name: "unordered (agentevals) passes", capture: "scenario-strands-error-retried",
			step:    "of: agents\nmode: unordered\nreference: [backup_weather, triage, weather_specialist]",
			outcome: Pass, score: 1,
			expected: "agents of the trace, unordered (any_order): backup_weather, triage, weather_specialist",
			actual:   "weather_specialist, triage, backup_weather (precision 1.00, recall 1.00)",
			message:  "the trace's agents match the reference (any_order): precision 1.00, recall 1.00",
		},
		{
			name: "any_order fails on a repeat", capture: "scenario-langgraph-command",
			step:    "agentName: weather_specialist\nmode: any_order\nreference: [get_weather]",
			outcome: Fail, score: 2.0 / 3,
			expected: "tools of weather_specialist, any_order: get_weather",
			actual:   "get_weather, get_weather (precision 0.50, recall 1.00)",
			message:  "weather_specialist's tools diverge from the reference (any_order): saw get_weather 2 times, the reference has it once; precision 0.50, recall 1.00",
		},
		{
			name: "ANY_ORDER (ADK) passes with calls beyond the reference", capture: "scenario-langgraph-command",
			step:    "agentName: weather_specialist\nmode: ANY_ORDER\nreference: [{tool: get_weather, params: 'params.city == \"Berlin\"'}]",
			outcome: Pass, score: 2.0 / 3,
			expected: "tools of weather_specialist, ANY_ORDER (superset): get_weather where params.city == \"Berlin\"",
			actual:   "get_weather, get_weather (precision 0.50, recall 1.00)",
			message:  "weather_specialist's tools match the reference (superset): precision 0.50, recall 1.00",
		},
	} {
		t.Run(tc.name, func(t *testing.T) {
			r := trajectoryOn(t, tc.capture, tc.step)
			require.Equal(t, ActionTrajectory, r.Action)
			require.Equal(t, tc.outcome, r.Outcome, r.Message)
			require.Equal(t, tc.expected, r.Expected)
			require.Equal(t, tc.actual, r.Actual)
			require.Equal(t, tc.message, r.Message)
			require.NotNil(t, r.Score)
			require.InDelta(t, tc.score, *r.Score, 1e-9)
		})
	}
}

func TestTrajectorySkippedWhenNothingRan(t *testing.T) {
	r := trajectoryOn(t, "scenario-strands-refund-swarm", "agentName: refund_specialst\nmode: exact\nreference: [issue_refund]")
	require.Equal(t, Skipped, r.Outcome)
	require.Equal(t, "agent refund_specialst did not run; agents that ran: billing, refund_specialist, triage; no trajectory to match", r.Message)
	r = trajectoryOn(t, "scenario-strands-refund-swarm", "fromAgent: triage\ntoAgent: refund_specialist\nmode: exact\nreference: [issue_refund]")
	require.Equal(t, Skipped, r.Outcome)
	require.Equal(t, "no handoff triage -> refund_specialist in the trace; no trajectory to match", r.Message)
}

func TestTrajectoryConfigErrors(t *testing.T) {
	for _, tc := range []struct{ step, want string }{
		{"mode: sorted\nreference: [a]", `cases[0] (c).steps[1].mode: unknown mode "sorted" (want one of exact, in_order, any_order, subset, superset; agentevals' strict, unordered, subset, superset; ADK's EXACT, IN_ORDER, ANY_ORDER)`},
		{"reference: [a]", "cases[0] (c).steps[1].mode: must be set"},
		{"mode: exact\nreference: []", "cases[0] (c).steps[1].reference: must list at least one step"},
		{"mode: exact", "cases[0] (c).steps[1].reference: must list at least one step"},
		{"agentName: a\nfromAgent: b\nmode: exact\nreference: [x]", "cases[0] (c).steps[1].fromAgent: set either agentName (that agent's runs) or fromAgent/toAgent (the receiver's run of a handoff), not both"},
		{"of: spans\nmode: exact\nreference: [x]", `cases[0] (c).steps[1].of: must be tools or agents, got "spans"`},
		{"scope: tree\nagentName: a\nmode: exact\nreference: [x]", `cases[0] (c).steps[1].scope: must be agent or subtree, got "tree"`},
		{"scope: subtree\nmode: exact\nreference: [x]", "cases[0] (c).steps[1].scope: applies to the runs of agentName or a handoff's receiver"},
		{"mode: exact\nreference: [{tool: x, params: 'params.a >'}]", "cases[0] (c).steps[1].reference[0].params: ERROR: <input>:1:11: Syntax error"},
		{"mode: exact\nreference: [{tool: x, params: 'size(params)'}]", "cases[0] (c).steps[1].reference[0].params: must be a boolean expression, got int"},
		{"mode: exact\nreference: [{tool: x, args: 1}]", "cases[0] (c).steps[1].reference[0].args: unknown key (a step of of: tools has tool, params, optional)"},
		{"mode: exact\nreference: [{params: 'true'}]", "cases[0] (c).steps[1].reference[0].tool: must name the step's tool"},
		{"of: agents\nmode: exact\nreference: [{agent: x, params: 'true'}]", "cases[0] (c).steps[1].reference[0].params: applies to of: tools"},
		{"mode: exact\nreference: [{parallel: [a, {parallel: [b]}]}]", "cases[0] (c).steps[1].reference[0].parallel[1]: parallel groups do not nest"},
		{"mode: exact\nreference: [{parallel: []}]", "cases[0] (c).steps[1].reference[0].parallel: must be the only key, with a non-empty list of steps"},
		{"mode: exact\nreference: [{tool: a, optional: yes please}]", "cases[0] (c).steps[1].reference[0].optional: must be true or false"},
	} {
		t.Run(tc.want, func(t *testing.T) {
			var raw map[string]any
			text := "cases:\n- name: c\n  steps:\n  - action: ASSERT_AGENT_TOPOLOGY\n  - action: EXPECT_TRAJECTORY\n" + indent(tc.step, "    ")
			require.NoError(t, yaml.Unmarshal([]byte(text), &raw))
			var s specFile
			require.NoError(t, confmap.NewFromStringMap(raw).Unmarshal(&s))
			_, err := Compile(s.Cases, Options{})
			require.ErrorContains(t, err, tc.want)
		})
	}
	// The trajectory keys belong to EXPECT_TRAJECTORY, the loop keys to the topology step.
	_, err := Compile([]CaseConfig{{Name: "c", Steps: []StepConfig{
		stepFromKeys(map[string]any{"action": ActionTopology, "mode": "exact"}),
		stepFromKeys(map[string]any{"action": ActionDelegation, "agentName": "a", "maxHandoffs": 3}),
	}}}, Options{})
	require.ErrorContains(t, err, "cases[0] (c).steps[0].mode: applies only to EXPECT_TRAJECTORY")
	require.ErrorContains(t, err, "cases[0] (c).steps[1].maxHandoffs: applies only to ASSERT_AGENT_TOPOLOGY")
	// Without a topology step before it, like the other DAG readers.
	_, err = Compile([]CaseConfig{{Name: "c", Steps: []StepConfig{{Kind: &steps.TrajectoryStep{Mode: "exact", Reference: []any{"a"}}}}}}, Options{})
	require.ErrorContains(t, err, fmt.Sprintf("cases[0] (c).steps[0].action: %s reads the DAG of an earlier ASSERT_AGENT_TOPOLOGY step", ActionTrajectory))
}

func ptr[T any](v T) *T { return &v }

// The ping-pong capture's handoff sequence, and the writer's own tools (its transfer calls
// are handoffs).
func TestTrajectoryOnPingPong(t *testing.T) {
	r := trajectoryOn(t, "scenario-langgraph-pingpong", "of: agents\nmode: exact\nreference: [critic, writer, critic]")
	require.Equal(t, Fail, r.Outcome)
	require.Equal(t, "critic, writer, critic, writer, critic (precision 0.60, recall 1.00)", r.Actual)
	require.Equal(t, "the trace's agents diverge from the reference (exact): expected nothing after critic, saw writer; precision 0.60, recall 1.00", r.Message)
	require.Equal(t, cluster.WrongDispatch, r.Cluster, "a handoff sequence off the reference is a dispatch failure")
	require.InDelta(t, 0.75, *r.Score, 1e-9)
	r = trajectoryOn(t, "scenario-langgraph-pingpong", "of: agents\nmode: in_order\nreference: [critic, writer, critic, writer, critic]")
	require.Equal(t, Pass, r.Outcome, r.Message)
	r = trajectoryOn(t, "scenario-langgraph-pingpong", "agentName: writer\nmode: exact\nreference: [{tool: search_notes, params: 'params.topic == \"Lisbon office\"'}]")
	require.Equal(t, Pass, r.Outcome, r.Message)
	require.Equal(t, "search_notes (precision 1.00, recall 1.00)", r.Actual)
}

// A handoff's receiver is judged per run: the first run that diverges decides, and the
// message says which.
func TestTrajectoryPerReceivingRun(t *testing.T) {
	g := agentgraph.BuildAll(readCapture(t, "scenario-langgraph-pingpong"), agentgraph.Options{})[0]
	var critics []string
	for _, inv := range g.Invocations {
		if inv.Name == "critic" {
			critics = append(critics, inv.Span.ID.String())
		}
	}
	require.Len(t, critics, 3)
	r := trajectoryOn(t, "scenario-langgraph-pingpong", "fromAgent: writer\ntoAgent: critic\nof: agents\nmode: in_order\nreference: [writer]")
	require.Equal(t, Fail, r.Outcome)
	require.Equal(t, "agents of the receiver of writer -> critic, in_order: writer", r.Expected)
	require.Equal(t, "none (precision 1.00, recall 0.00)", r.Actual)
	require.Equal(t, "critic's agents (run 3 of 3, span "+critics[2]+") diverge from the reference (in_order): expected writer, saw no writer; precision 1.00, recall 0.00", r.Message)
	require.InDelta(t, 0, *r.Score, 1e-9)
	r = trajectoryOn(t, "scenario-langgraph-pingpong", "fromAgent: writer\ntoAgent: critic\nof: agents\nmode: subset\nreference: [writer]")
	require.Equal(t, Pass, r.Outcome, r.Message)
}

// Third-party traces of the corpus (testdata/corpus, SOURCES.md there): the whole trace's
// tool calls. The OpenAI Agents SDK run (OpenInference) calls get_weather {"city":"Tokyo"}
// once; the Agno run calls duckduckgo_search {"query": "currently trending on Twitter"}; the
// Google ADK run (OpenInference) calls say_hello.
func TestTrajectoryOnCorpus(t *testing.T) {
	for _, tc := range []struct {
		file, step string
		outcome    Outcome
		message    string
	}{
		{
			"lf-openai-agents-openinference", "mode: superset\nreference: [{tool: get_weather, params: 'params.city == \"Tokyo\"'}]", Pass,
			"the trace's tools match the reference (superset): precision 1.00, recall 1.00",
		},
		{
			"lf-openai-agents-openinference", "mode: unordered\nreference: [{tool: get_weather, params: 'params.city == \"Paris\"'}]", Fail,
			"the trace's tools diverge from the reference (any_order): expected get_weather where params.city == \"Paris\", saw get_weather once, none where it holds; " +
				"saw get_weather where params.city == \"Paris\" does not hold; precision 0.00, recall 0.00",
		},
		{
			"lf-agno-openinference", "mode: exact\nreference: [{tool: duckduckgo_search, params: 'params.query.contains(\"trending\")'}]", Pass,
			"the trace's tools match the reference (exact): precision 1.00, recall 1.00",
		},
		{
			"lf-google-adk-openinference", "mode: ANY_ORDER\nreference: [say_hello, get_weather]", Fail,
			"the trace's tools diverge from the reference (superset): expected get_weather, saw no get_weather; precision 1.00, recall 0.50",
		},
		{
			"lf-google-adk-openinference", "mode: subset\nreference: [say_hello, get_weather]", Pass,
			"the trace's tools match the reference (subset): precision 1.00, recall 0.50",
		},
	} {
		t.Run(tc.file+" "+tc.step, func(t *testing.T) {
			r := trajectoryOnFile(t, filepath.Join("..", "..", "testdata", "corpus", tc.file+".otlp.json"), tc.step)
			require.Equal(t, tc.outcome, r.Outcome, r.Message)
			require.Equal(t, tc.message, r.Message)
		})
	}
}

func trajectoryOnFile(t *testing.T, path, step string) Result {
	t.Helper()
	raw, err := os.ReadFile(path)
	require.NoError(t, err)
	td, err := (&ptrace.JSONUnmarshaler{}).UnmarshalTraces(raw)
	require.NoError(t, err)
	var doc map[string]any
	text := "cases:\n- name: c\n  steps:\n  - action: ASSERT_AGENT_TOPOLOGY\n    allowCycles: true\n  - action: EXPECT_TRAJECTORY\n" + indent(step, "    ")
	require.NoError(t, yaml.Unmarshal([]byte(text), &doc))
	var s specFile
	require.NoError(t, confmap.NewFromStringMap(doc).Unmarshal(&s))
	ev, err := Compile(s.Cases, Options{})
	require.NoError(t, err)
	rs := ev.Evaluate(agentgraph.BuildAll(td, agentgraph.Options{})[0], true)
	require.Len(t, rs, 2)
	return rs[1]
}

// A params expression that errs on a call counts as not holding there, and the message says so.
func TestTrajectoryParamsError(t *testing.T) {
	r := trajectoryOn(t, "scenario-strands-refund-swarm", "agentName: refund_specialist\nmode: exact\nreference: [{tool: issue_refund, params: 'params.amount_cents > 0'}]")
	require.Equal(t, Fail, r.Outcome)
	require.Equal(t, "refund_specialist's tools diverge from the reference (exact): expected issue_refund where params.amount_cents > 0, "+
		"saw issue_refund once, none where it holds; precision 0.00, recall 0.00; "+
		"the params expression failed on 1 call and counted as not holding: no such key: amount_cents", r.Message)
}
