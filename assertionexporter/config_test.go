package assertionexporter

import (
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/require"
	"go.opentelemetry.io/collector/component"
	"go.opentelemetry.io/collector/confmap"
	"go.opentelemetry.io/collector/confmap/confmaptest"

	"github.com/otelcol-handoff/otelcol-handoff/assertionexporter/internal/metadata"
	"github.com/otelcol-handoff/otelcol-handoff/internal/rules"
)

func intp(v int) *int             { return &v }
func int64p(v int64) *int64       { return &v }
func float64p(v float64) *float64 { return &v }

func TestLoadConfig(t *testing.T) {
	cm, err := confmaptest.LoadConf(filepath.Join("testdata", "config.yaml"))
	require.NoError(t, err)

	tests := []struct {
		id       component.ID
		expected *Config
	}{
		{id: component.NewID(metadata.Type), expected: createDefaultConfig().(*Config)},
		{
			id: component.NewIDWithName(metadata.Type, "custom"),
			expected: &Config{
				LogVerdicts:   LogAll,
				EvalCostLimit: 5000,
				Reports:       ReportsConfig{JSONLines: "/tmp/verdicts.jsonl"},
				Cases: []rules.CaseConfig{{
					Name: "weather_delegation",
					When: `root_agent == "triage" && service_name.startsWith("realclient")`,
					Steps: []rules.StepConfig{
						{Action: rules.ActionTopology, Source: rules.SourceLive, MaxDepth: intp(3)},
						{Action: rules.ActionDelegation, AgentName: "weather_specialist", MinInvocations: intp(1), FromAgent: "triage"},
						{
							Action: rules.ActionBudget, AgentName: "weather_specialist", MaxTokens: int64p(8000),
							MaxDurationMs: float64p(15000), MaxToolCalls: intp(6),
						},
					},
				}},
			},
		},
	}
	for _, tt := range tests {
		t.Run(tt.id.String(), func(t *testing.T) {
			cfg := NewFactory().CreateDefaultConfig()
			sub, err := cm.Sub(tt.id.String())
			require.NoError(t, err)
			require.NoError(t, sub.Unmarshal(cfg))
			require.NoError(t, confmap.Validate(cfg))
			require.Equal(t, tt.expected, cfg)
		})
	}
}

func TestDefaultConfigIsValid(t *testing.T) {
	require.NoError(t, confmap.Validate(createDefaultConfig()))
}

// TestInvalidConfigs checks that each invalid spec is rejected at load time with a message
// that names the case, the step and the field.
func TestInvalidConfigs(t *testing.T) {
	tests := map[string]string{
		"invalid_expect_without_topology.yaml": "cases[0] (c).steps[0].action: EXPECT_DELEGATION_TO reads the DAG of an earlier ASSERT_AGENT_TOPOLOGY step; add one before it in this case",
		"invalid_unknown_action.yaml":          `cases[0] (c).steps[1].action: unknown action "EXPECT_MAGIC"`,
		"invalid_unknown_step_key.yaml":        "maxDepht",
		"invalid_when_not_bool.yaml":           "cases[0] (c).when: must be a boolean expression, got string",
		"invalid_when_syntax.yaml":             "cases[0] (c).when: ERROR: <input>:1:15: Syntax error",
		"invalid_budget_without_limits.yaml":   "cases[0] (c).steps[1].maxTokens: set at least one of maxTokens, maxDurationMs, maxToolCalls",
		"invalid_duplicate_case.yaml":          `cases[1].name: duplicate case name "c"`,
		"invalid_min_over_max.yaml":            "cases[0] (c).steps[1].maxInvocations: must be at least minInvocations (3), got 1",
		"invalid_log_verdicts.yaml":            `log_verdicts: must be one of all, failures, none, got "sometimes"`,
		"invalid_file_source.yaml":             "cases[0] (c).steps[0].otelSpansFile: source FILE needs otelSpansFile, the span file to read",
		"invalid_file_and_live.yaml":           "cases[0] (c).steps[1].source: a case reads either recorded spans (FILE) or the live traces (LIVE), not both",
		// Seed-001 test-case fields.
		"invalid_seed_bad_cel.yaml": "cases[0] (returns_id_10).expected_result: ERROR: <input>:1:13: Syntax error: token recognition error at: '= '\n" +
			" | output.id === 10\n" +
			" | ............^",
		"invalid_seed_tool_expression.yaml": "cases[0] (calls_add_for_each_pair).expected_tool_calls[0] (math.calculator.add): " +
			"ERROR: <input>:1:22: undeclared reference to 'param' (in container '')\n" +
			" | invocations == 1 and param.a == 4\n" +
			" | .....................^",
		"invalid_seed_approval_decisions.yaml": "cases[0] (approves_the_exact_refund).approval_decisions: not supported: approval decisions are " +
			"supplied by the test runner that drives the agent; a trace collector only observes runs and cannot answer a pending approval. " +
			"Remove it and assert the observable outcome instead, e.g. expected_result: status == \"awaiting_approval\"",
		"invalid_seed_strict_approvals.yaml": "defaults.strict_approval_decisions: not supported: approval decisions are supplied by the test runner",
		"invalid_seed_unknown_key.yaml":      "'cases[0]' has invalid keys: expected_results",
		"invalid_seed_fire_and_forget_count.yaml": "cases[0] (fans_out_telemetry).expected_child_agents.telemetry-writer.expected_triggered: " +
			"must not be negative, got -1",
	}
	for file, want := range tests {
		t.Run(file, func(t *testing.T) {
			cm, err := confmaptest.LoadConf(filepath.Join("testdata", file))
			require.NoError(t, err)
			cfg := createDefaultConfig()
			err = cm.Unmarshal(cfg)
			if err == nil {
				err = confmap.Validate(cfg)
			}
			require.ErrorContains(t, err, want)
		})
	}
}
