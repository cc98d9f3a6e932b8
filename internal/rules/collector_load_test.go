package rules_test

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
	"go.opentelemetry.io/collector/confmap"
	"go.opentelemetry.io/collector/pdata/ptrace"
	"gopkg.in/yaml.v3"

	"github.com/otelcol-handoff/otelcol-handoff/assertionexporter"
	"github.com/otelcol-handoff/otelcol-handoff/internal/agentgraph"
	"github.com/otelcol-handoff/otelcol-handoff/internal/gate"
	"github.com/otelcol-handoff/otelcol-handoff/internal/rubric"
	"github.com/otelcol-handoff/otelcol-handoff/internal/rules"
)

// These tests load the exporter's config as the collector does: YAML decoded into the
// factory's default config (its own Unmarshal), then confmap.Validate, which walks every
// nested field implementing confmap.Validator (otelcol v0.161 calls it on the whole config).

// loadExporter decodes an assertion exporter config section and validates it as the
// collector does.
func loadExporter(t *testing.T, section string) (*assertionexporter.Config, error) {
	t.Helper()
	var raw map[string]any
	require.NoError(t, yaml.Unmarshal([]byte(section), &raw))
	cfg := assertionexporter.NewFactory().CreateDefaultConfig().(*assertionexporter.Config)
	require.NoError(t, confmap.NewFromStringMap(raw).Unmarshal(cfg))
	return cfg, confmap.Validate(cfg)
}

// TestCollectorReportsEachProblemOnce: a step's or a test-case field's problem is one line,
// with the case's path. The kinds' and fields' own checks are not confmap.Validators, so
// the collector's walk does not report them a second time under a path such as
// cases::0::steps::0::- or cases::0::testfields::agentexpectations::expected_tool_calls.
func TestCollectorReportsEachProblemOnce(t *testing.T) {
	for name, tt := range map[string]struct{ section, want string }{
		"step key": {
			"cases:\n- name: a\n  steps:\n  - {action: ASSERT_AGENT_TOPOLOGY, source: live}\n",
			`cases[0] (a).steps[0].source: must be LIVE or FILE, got "live"`,
		},
		"step key of a later step": {
			"cases:\n- name: a\n  steps:\n  - {action: ASSERT_AGENT_TOPOLOGY}\n  - {action: EXPECT_TRAJECTORY, agentName: a, mode: in_order, reference: [{tool: x, params: '  '}]}\n",
			"cases[0] (a).steps[1].reference[0].params: must be a CEL expression over params.*",
		},
		"test-case field": {
			"cases:\n- name: a\n  expected_tool_calls: ['']\n",
			"cases[0] (a).expected_tool_calls[0]: the tool name must not be empty",
		},
		"child agents": {
			"cases:\n- name: a\n  expected_child_agents: {b: {expected_triggered: -1}}\n",
			"cases[0] (a).expected_child_agents.b.expected_triggered: must not be negative, got -1",
		},
		"defaults": {
			"defaults: {expected_no_tool_calls: ['']}\ncases:\n- name: a\n  steps: [{action: ASSERT_AGENT_TOPOLOGY}]\n",
			"defaults.expected_no_tool_calls[0]: the tool name must not be empty",
		},
	} {
		t.Run(name, func(t *testing.T) {
			_, err := loadExporter(t, tt.section)
			require.EqualError(t, err, tt.want)
		})
	}
}

// TestConfigGapsRejectedAtLoad: values that were accepted and then checked nothing (or
// checked something else) are refused at load, naming the field.
func TestConfigGapsRejectedAtLoad(t *testing.T) {
	const topo = "  - {action: ASSERT_AGENT_TOPOLOGY}\n"
	steps := func(lines ...string) string {
		return "cases:\n- name: a\n  steps:\n" + topo + strings.Join(lines, "")
	}
	for name, tt := range map[string]struct{ section, want string }{
		// A NaN budget is never exceeded (every comparison is false), nor is +Inf.
		"maxDurationMs NaN": {
			steps("  - {action: EXPECT_AGENT_BUDGET, agentName: x, maxDurationMs: .nan}\n"),
			"cases[0] (a).steps[1].maxDurationMs: must be a finite number of milliseconds, 0 or more, got NaN",
		},
		"maxDurationMs +Inf": {
			steps("  - {action: EXPECT_AGENT_BUDGET, agentName: x, maxDurationMs: .inf}\n"),
			"cases[0] (a).steps[1].maxDurationMs: must be a finite number of milliseconds, 0 or more, got +Inf",
		},
		"maxDurationMs -Inf": {
			steps("  - {action: EXPECT_AGENT_BUDGET, agentName: x, maxDurationMs: -.inf}\n"),
			"cases[0] (a).steps[1].maxDurationMs: must be a finite number of milliseconds, 0 or more, got -Inf",
		},
		"maxCostUsd NaN": {
			steps("  - {action: EXPECT_AGENT_BUDGET, agentName: x, maxCostUsd: .nan}\n"),
			"cases[0] (a).steps[1].maxCostUsd: must be a finite amount of 0 or more, got NaN",
		},
		// Compile skipped a blank contextExpression, yet it counted as the step's check.
		"blank contextExpression": {
			steps("  - {action: EXPECT_HANDOFF_CONTEXT, fromAgent: a, toAgent: b, contextExpression: '   '}\n"),
			"cases[0] (a).steps[1].contextExpression: must not be blank: write a CEL expression over the handoff, or remove the key",
		},
		"blank inlineRubric": {
			steps("  - {action: EXPECT_HANDOFF_CONTEXT, fromAgent: a, toAgent: b, inlineRubric: ' ', requiredPatterns: [x], deterministicOnly: true}\n"),
			"cases[0] (a).steps[1].inlineRubric: must not be blank: write the rubric's criteria, or remove the key",
		},
		"required pattern matching empty content": {
			steps("  - {action: EXPECT_HANDOFF_CONTEXT, fromAgent: a, toAgent: b, requiredPatterns: ['']}\n"),
			`cases[0] (a).steps[1].requiredPatterns[0]: pattern "" matches empty content, so it checks nothing: make it match at least one character`,
		},
		"forbidden pattern matching empty content": {
			steps("  - {action: EXPECT_HANDOFF_CONTEXT, fromAgent: a, toAgent: b, forbiddenPatterns: [x, 'secret|']}\n"),
			`cases[0] (a).steps[1].forbiddenPatterns[1]: pattern "secret|" matches empty content, so it checks nothing: make it match at least one character`,
		},
		// SpansFile ignores the file unless source is FILE: the case judged live traces.
		"otelSpansFile, source unset": {
			"cases:\n- name: a\n  steps:\n  - {action: ASSERT_AGENT_TOPOLOGY, otelSpansFile: /nonexistent.json}\n",
			"cases[0] (a).steps[0].otelSpansFile: otelSpansFile needs source: FILE (got source LIVE (the default)); set source: FILE to read the file, or remove otelSpansFile",
		},
		"otelSpansFile, source LIVE": {
			steps("  - {action: ASSERT_AGENT_TOPOLOGY, source: LIVE, otelSpansFile: /nonexistent.json}\n"),
			"cases[0] (a).steps[1].otelSpansFile: otelSpansFile needs source: FILE (got source LIVE); set source: FILE to read the file, or remove otelSpansFile",
		},
		// A rubric step reports under id.Axis: a step named so would share its series.
		"step named like a rubric result": {
			steps("  - {action: EXPECT_HANDOFF_RUBRICS, deterministicOnly: true, rubrics: [ScopeFidelity]}\n",
				"  - {action: EXPECT_DELEGATION_TO, agentName: w, name: 'EXPECT_HANDOFF_RUBRICS#2.ScopeFidelity'}\n"),
			`cases[0] (a).steps[2].name: duplicate step name "EXPECT_HANDOFF_RUBRICS#2.ScopeFidelity" (already the id of steps[1]'s ScopeFidelity result)`,
		},
		"rubric result named like an earlier step": {
			"cases:\n- name: a\n  steps:\n  - {action: ASSERT_AGENT_TOPOLOGY, name: r.ResultIntegration}\n" +
				"  - {action: EXPECT_HANDOFF_RUBRICS, name: r, deterministicOnly: true}\n",
			`cases[0] (a).steps[1].name: the id "r.ResultIntegration" of the step's ResultIntegration result is already steps[0]'s id`,
		},
		// "*" is the wildcard in validation and matching alike.
		"gate pair * duplicates an empty side": {
			"gates:\n  pairs: [{from: '*', to: b, thresholds: {ScopeFidelity: 0.5}}, {to: b, thresholds: {ScopeFidelity: 0.6}}]\n" +
				"cases:\n- name: a\n  steps:\n" + topo,
			"gates.pairs[1]: duplicate pair * -> b",
		},
		"gate pair * -> *": {
			"gates:\n  pairs: [{from: '*', to: '*', thresholds: {ScopeFidelity: 0.5}}]\ncases:\n- name: a\n  steps:\n" + topo,
			`gates.pairs[0]: set from, to or both ("*" matches any agent; thresholds for every pair go under default)`,
		},
	} {
		t.Run(name, func(t *testing.T) {
			_, err := loadExporter(t, tt.section)
			require.EqualError(t, err, tt.want)
		})
	}
}

// TestCollectorLoadsValidNeighbours: the values next to the refused ones still load.
func TestCollectorLoadsValidNeighbours(t *testing.T) {
	for _, section := range []string{
		"cases:\n- name: a\n  steps:\n  - {action: ASSERT_AGENT_TOPOLOGY}\n  - {action: EXPECT_AGENT_BUDGET, agentName: x, maxDurationMs: 0, maxCostUsd: 0.5}\n",
		"cases:\n- name: a\n  steps:\n  - {action: ASSERT_AGENT_TOPOLOGY}\n  - {action: EXPECT_HANDOFF_CONTEXT, fromAgent: a, toAgent: b, requiredPatterns: [' '], contextExpression: 'from == \"a\"'}\n",
		"cases:\n- name: a\n  steps:\n  - {action: ASSERT_AGENT_TOPOLOGY, source: LIVE}\n  - {action: EXPECT_HANDOFF_RUBRICS, deterministicOnly: true}\n  - {action: EXPECT_DELEGATION_TO, agentName: w, name: 'EXPECT_HANDOFF_RUBRICS#2.DispatchCorrectness'}\n",
		"gates:\n  pairs: [{from: '*', to: b, thresholds: {ScopeFidelity: 0.5}}]\ncases:\n- name: a\n  steps: [{action: ASSERT_AGENT_TOPOLOGY}]\n",
	} {
		_, err := loadExporter(t, section)
		require.NoError(t, err, section)
	}
}

// exporterRun compiles a loaded config as the exporter does (its gates, then the cases
// with them) and evaluates one capture of testdata/traces on it.
func exporterRun(t *testing.T, section, capture string) ([]rules.Result, *gate.Set) {
	t.Helper()
	cfg, err := loadExporter(t, section)
	require.NoError(t, err)
	gs, err := gate.Compile(cfg.Gates)
	require.NoError(t, err)
	ev, err := rules.Compile(cfg.Cases, rules.Options{Defaults: cfg.Defaults, Rubrics: cfg.Rubrics, Gates: gs})
	require.NoError(t, err)
	raw, err := os.ReadFile(filepath.Join("..", "..", "testdata", "traces", capture+".json"))
	require.NoError(t, err)
	td, err := (&ptrace.JSONUnmarshaler{}).UnmarshalTraces(raw)
	require.NoError(t, err)
	graphs := agentgraph.BuildAll(td, agentgraph.Options{})
	require.Len(t, graphs, 1)
	return ev.Evaluate(graphs[0], true), gs
}

// TestWhenNonBoolIsAnError: a dyn-typed condition (a resource attribute) type-checks, but
// on strands-ok it gives the string "realclient-strands": an error result, as a missing key
// is, not a silent deselection of the case.
func TestWhenNonBoolIsAnError(t *testing.T) {
	rs, _ := exporterRun(t, "cases:\n- name: a\n  when: resource[\"service.name\"]\n  steps: [{action: ASSERT_AGENT_TOPOLOGY}]\n", "strands-ok")
	require.Len(t, rs, 1)
	require.Equal(t, "when", rs[0].Step)
	require.Equal(t, rules.Error, rs[0].Outcome)
	require.Equal(t, "case condition failed to evaluate: it gave a string, not a bool", rs[0].Message)
	require.Equal(t, `resource["service.name"]`, rs[0].Expected)

	rs, _ = exporterRun(t, "cases:\n- name: a\n  when: resource[\"service.name\"] == \"realclient-strands\"\n  steps: [{action: ASSERT_AGENT_TOPOLOGY}]\n", "strands-ok")
	require.Len(t, rs, 1)
	require.Equal(t, rules.Pass, rs[0].Outcome, rs[0].Message)
	rs, _ = exporterRun(t, "cases:\n- name: a\n  when: resource[\"service.name\"] == \"other\"\n  steps: [{action: ASSERT_AGENT_TOPOLOGY}]\n", "strands-ok")
	require.Empty(t, rs, "a false condition deselects the case")
}

// TestContextExpressionNonBool: a dyn-typed contextExpression (payload.agentId, the string
// "refund_specialist" on the billing -> refund_specialist handoff of the Strands refund
// swarm) fails saying what it gave, not that it is false.
func TestContextExpressionNonBool(t *testing.T) {
	rs, _ := exporterRun(t, "cases:\n- name: a\n  steps:\n  - {action: ASSERT_AGENT_TOPOLOGY, allowCycles: true}\n"+
		"  - {action: EXPECT_HANDOFF_CONTEXT, fromAgent: billing, toAgent: refund_specialist, contextExpression: payload.agentId}\n", "scenario-strands-refund-swarm")
	require.Len(t, rs, 2)
	require.Equal(t, rules.Fail, rs[1].Outcome)
	require.Contains(t, rs[1].Message, ": contextExpression gave a string, not a bool")
	require.NotContains(t, rs[1].Message, "is false")

	rs, _ = exporterRun(t, "cases:\n- name: a\n  steps:\n  - {action: ASSERT_AGENT_TOPOLOGY, allowCycles: true}\n"+
		"  - {action: EXPECT_HANDOFF_CONTEXT, fromAgent: billing, toAgent: refund_specialist, contextExpression: 'payload.agentId == \"refund_specialist\"'}\n", "scenario-strands-refund-swarm")
	require.Equal(t, rules.Pass, rs[1].Outcome, rs[1].Message)
}

// TestGatePairWildcard: `from: "*"` matches any sender, as an empty from does (validation
// already took them as the same pair). On strands-ok, triage -> weather_specialist's
// ScopeFidelity score is gated by the pair: the result is marked gated, the run's gate
// applies the pair's threshold, and the collector's window files it under the pair.
func TestGatePairWildcard(t *testing.T) {
	for _, from := range []string{`"*"`, `""`} {
		t.Run("from "+from, func(t *testing.T) {
			rs, gs := exporterRun(t, "gates:\n  pairs: [{from: "+from+", to: weather_specialist, thresholds: {ScopeFidelity: 0.99}}]\n"+
				"cases:\n- name: a\n  steps:\n  - {action: ASSERT_AGENT_TOPOLOGY, allowCycles: true}\n"+
				"  - {action: EXPECT_HANDOFF_RUBRICS, deterministicOnly: true, rubrics: [ScopeFidelity]}\n", "strands-ok")
			require.Len(t, rs, 2)
			scope := rs[1]
			require.Equal(t, "EXPECT_HANDOFF_RUBRICS#2.ScopeFidelity", scope.Step)
			require.Equal(t, rules.Pass, scope.Outcome, scope.Message)
			require.True(t, scope.Gated, "the pair's threshold applies to the result")

			tally := gate.NewTally()
			tally.Add(rules.Scores(rs))
			gates := tally.Evaluate(gs)
			require.Len(t, gates, 1)
			require.Equal(t, gate.Pass, gates[0].Status)
			require.Equal(t, "triage -> weather_specialist ScopeFidelity: mean 1.00 over 1 handoff, threshold 0.99", gates[0].String())

			got := gate.NewWindow(gs).Add(time.Unix(1_700_000_000, 0), rules.Scores(rs))
			require.Equal(t, []gate.WindowScore{{Pair: "* -> weather_specialist", Axis: rubric.Scope, Score: 1, Samples: 1}}, got)
			require.Equal(t, []string{"* -> weather_specialist", "default"}, gs.Buckets())
		})
	}
}
