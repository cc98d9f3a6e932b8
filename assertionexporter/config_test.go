package assertionexporter

import (
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
	"go.opentelemetry.io/collector/component"
	"go.opentelemetry.io/collector/confmap"
	"go.opentelemetry.io/collector/confmap/confmaptest"
	"go.opentelemetry.io/collector/confmap/provider/envprovider"
	"go.opentelemetry.io/collector/confmap/provider/fileprovider"

	"github.com/otelcol-handoff/otelcol-handoff/assertionexporter/internal/metadata"
	"github.com/otelcol-handoff/otelcol-handoff/internal/configtest"
	"github.com/otelcol-handoff/otelcol-handoff/internal/gate"
	"github.com/otelcol-handoff/otelcol-handoff/internal/judge"
	"github.com/otelcol-handoff/otelcol-handoff/internal/rules"
	"github.com/otelcol-handoff/otelcol-handoff/internal/rules/steps"
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
				Judge:                           judge.DefaultConfig(),
				Gates:                           gate.DefaultConfig(),
				LogVerdicts:                     LogAll,
				RequireHandoffProcessor:         false,
				CountDelegationCallsAsToolCalls: true,
				EvalCostLimit:                   5000,
				EvalTimeout:                     250 * time.Millisecond,
				ShutdownTimeout:                 10 * time.Second,
				Reports:                         ReportsConfig{JSONLines: "/tmp/verdicts.jsonl"},
				Cases: []rules.CaseConfig{{
					Name: "weather_delegation",
					When: `root_agent == "triage" && service_name.startsWith("realclient")`,
					Steps: []rules.StepConfig{
						{Kind: &steps.TopologyStep{Source: rules.SourceLive, MaxDepth: intp(3)}},
						{Kind: &steps.DelegationStep{AgentName: "weather_specialist", MinInvocations: intp(1), FromAgent: "triage"}},
						{Kind: &steps.BudgetStep{AgentName: "weather_specialist", MaxTokens: int64p(8000), MaxDurationMs: float64p(15000), MaxToolCalls: intp(6)}},
					},
				}},
			},
		},
	}
	judged := createDefaultConfig().(*Config)
	judged.Judge = judge.Config{
		Endpoint: "https://api.openai.com/v1", Model: "gpt-4o-mini", APIKeyEnv: "OPENAI_API_KEY",
		Timeout: 20 * time.Second, Retries: 3, RetryBackoff: time.Second, Concurrency: 8, MaxCalls: 500, BudgetWindow: time.Hour,
		CacheSize: 4096, Samples: 3, MaxContentBytes: 4096, Redact: []string{`\b(?:\d[ -]?){13,16}\b`},
		ResponseFormat: judge.FormatJSONSchema, TraceTimeout: time.Minute, QueueSize: 200, BlockOnFullQueue: true,
	}
	judged.Rubrics = map[string]string{
		"refund_payload": "The payload carries the order id and the customer's stated reason.",
		"ScopeFidelity":  "The receiver stays inside the scope; research agents never draft the answer.",
	}
	judged.Gates = gate.Config{
		Default: map[string]float64{"DispatchCorrectness": 0.85, "ScopeFidelity": 0.90, "ResultIntegration": 0.80, "RecoveryOnError": 0.85},
		Pairs: []gate.PairConfig{
			{From: "planner", To: "researcher", Thresholds: map[string]float64{"ScopeFidelity": 0.95}},
			{To: "critic", Thresholds: map[string]float64{"ResultIntegration": 0.9}},
		},
		MinSamples: 5, Window: gate.WindowConfig{Size: 200, Duration: time.Hour},
	}
	judged.Cases = []rules.CaseConfig{{Name: "seams", Steps: []rules.StepConfig{
		{Kind: &steps.TopologyStep{}},
		{Kind: &steps.RubricsStep{FromAgent: "planner", Rubrics: []string{"ScopeFidelity", "RecoveryOnError"}, IgnoredTools: []string{"log_progress"}, TransientErrors: []string{"(?i)quota"}}},
		{Kind: &steps.ContextStep{FromAgent: "planner", ToAgent: "researcher", JudgeRubricID: "refund_payload"}},
	}}}
	tests = append(tests, struct {
		id       component.ID
		expected *Config
	}{id: component.NewIDWithName(metadata.Type, "judged"), expected: judged})
	for _, tt := range tests {
		t.Run(tt.id.String(), func(t *testing.T) {
			configtest.RequireLoads(t, cm, tt.id, NewFactory().CreateDefaultConfig(), tt.expected)
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
		"invalid_unknown_step_key.yaml":        "cases[0].steps[0].maxDepht: unknown key, did you mean maxDepth?",
		"invalid_when_not_bool.yaml":           "cases[0] (c).when: must be a boolean expression, got string",
		"invalid_when_syntax.yaml":             "cases[0] (c).when: ERROR: <input>:1:15: Syntax error",
		"invalid_budget_without_limits.yaml":   "cases[0] (c).steps[1].maxTokens: set at least one of maxTokens, maxDurationMs, maxToolCalls, maxCostUsd",
		"invalid_duplicate_case.yaml":          `cases[1].name: duplicate case name "c"`,
		"invalid_budget_negative_cost.yaml":    "cases[0] (c).steps[1].maxCostUsd: must be a finite amount of 0 or more, got -0.5",
		"invalid_pricing.yaml":                 "pricing: models[0].input_usd_per_mtok: must be a finite price of 0 or more, got -1",
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
		"invalid_seed_unknown_key.yaml":      "cases[0].expected_results: unknown key, did you mean expected_result?",
		"invalid_seed_fire_and_forget_count.yaml": "cases[0] (fans_out_telemetry).expected_child_agents.telemetry-writer.expected_triggered: " +
			"must not be negative, got -1",
		// Judge, rubrics and gates.
		"invalid_judge_api_key.yaml":   "judge.api_key_env: must name an environment variable (e.g. OPENAI_API_KEY) that holds the key, not the key itself",
		"invalid_judge_samples.yaml":   "judge.samples: must be odd and between 1 and 15 (a majority decides), got 2",
		"invalid_gate_axis.yaml":       "gates.default.Helpfulness: unknown axis (want one of DispatchCorrectness, ScopeFidelity, ResultIntegration, RecoveryOnError)",
		"invalid_judge_rubric_id.yaml": `cases[0] (c).steps[1].judgeRubricId: no rubric "refund_paylod" is defined under rubrics: (defined: refund_payload)`,
		"invalid_rubrics_step.yaml":    `cases[0] (c).steps[1].rubrics[1]: unknown rubric "TaskCompletion"`,
		// No silent pass: a judge-graded step needs a judge, or deterministicOnly.
		"invalid_context_rubric_without_judge.yaml": "cases[0] (c).steps[1].rubricType: EXPECT_HANDOFF_CONTEXT#2 is graded by the judge (rubricType), " +
			"but no judge is configured: configure judge (judge.endpoint and judge.model), or keep only the deterministic checks with " +
			"deterministicOnly: true on the step",
		"invalid_rubrics_without_judge.yaml": "cases[0] (seams).steps[1].action: EXPECT_HANDOFF_RUBRICS#2 grades DispatchCorrectness, ScopeFidelity, " +
			"ResultIntegration, RecoveryOnError with the judge, but no judge is configured: configure judge (judge.endpoint and judge.model), " +
			"or keep only the deterministic checks with deterministicOnly: true on the step (its default rubrics are then ScopeFidelity, " +
			"ResultIntegration, RecoveryOnError: DispatchCorrectness is graded by the judge alone)",
		"invalid_deterministic_only_dispatch.yaml": "cases[0] (seams).steps[1].rubrics[0]: DispatchCorrectness is graded by the judge alone: " +
			"remove it, or drop deterministicOnly and configure judge",
		"invalid_deterministic_only_nothing.yaml": "cases[0] (c).steps[1].deterministicOnly: leaves nothing to check: add requiredPatterns, " +
			"forbiddenPatterns or contextExpression, or let the judge grade the rubric\n" +
			"cases[0] (c).steps[2].deterministicOnly: applies only to EXPECT_HANDOFF_CONTEXT and EXPECT_HANDOFF_RUBRICS",
		// Time and cost bounds.
		"invalid_eval_cost_limit.yaml":  "eval_cost_limit: must be at most 10000000 (0 = the default 100000), got 18446744073709551615",
		"invalid_eval_timeout.yaml":     "eval_timeout: must be positive and at most 10s, got 0s",
		"invalid_shutdown_timeout.yaml": "shutdown_timeout: must be positive and at most 30s",
		"invalid_judge_queue_size.yaml": "judge.queue_size: must be between 1 and 100000, got 0",
		// A place that can never hold a value (agentgraph.Chains.Validate, walked by confmap).
		"invalid_chains.yaml": "chains: role[0]: an empty place: name an attribute key\n" +
			`input[0]: "event:foo": an event place is event:NAME:KEY (attribute KEY of the first event NAME)`,
		// Checked with no judge too: the exporter's redaction policy compiles it.
		"invalid_judge_redact_without_judge.yaml": "judge.redact[0]: error parsing regexp: missing closing ): `(x`",
		"invalid_rubric_blank.yaml":               "rubrics.refund_payload: the rubric text must not be empty",
		"invalid_reports_same_file.yaml": "reports.junit: report.out is also reports.json_lines: each report needs a file of its own\n" +
			"reports.markdown: ./report.out is also reports.json_lines: each report needs a file of its own",
	}
	for file, want := range tests {
		t.Run(file, func(t *testing.T) {
			configtest.RequireInvalid(t, filepath.Join("testdata", file), createDefaultConfig(), want)
		})
	}
}

// TestConfigKeyErrors: the exporter's Unmarshal names every unknown key by its path, with
// the nearest valid key, and every value of the wrong kind in words, all at once and before
// anything is decoded (confmap alone says `'cases[0]' has invalid keys: x` and Go type names).
func TestConfigKeyErrors(t *testing.T) {
	const prefix = "decoding failed due to the following error(s):\n\n'' " // confmap's wrapping of an Unmarshal error
	tests := map[string]string{
		"invalid_step_key_typo.yaml":   "cases[2].steps[1].maxInvocation: unknown key, did you mean maxInvocations?",
		"invalid_step_wrong_type.yaml": `cases[0].steps[1].maxTokens: must be a whole number, got "lots"`,
		"invalid_unknown_keys.yaml": strings.Join([]string{
			"cases[0].When: unknown key, did you mean when?",
			"cases[0].expectedResult: unknown key, did you mean expected_result?",
			"cases[0].expected_child_agents.refund_specialist.expected_child_agents.ledger.expected_triggerd: unknown key, did you mean expected_triggered?",
			"cases[0].expected_child_agents.refund_specialist.expected_payloads: unknown key, did you mean expected_payload?",
			"cases[0].expected_tool_calls[0]: an expected_tool_calls item is a tool name or a one-key map `tool: expression`, got keys lookup_order, refund",
			"cases[0].steps[0].max_depth: unknown key, did you mean maxDepth?",
			"cases[0].steps[1].forbiddenPattern: unknown key, did you mean forbiddenPatterns?",
			"count_delegation_call_as_tool_calls: unknown key, did you mean count_delegation_calls_as_tool_calls?",
			"defaults.expected_no_tool_call: unknown key, did you mean expected_no_tool_calls?",
			"gates.min_sample: unknown key, did you mean min_samples?",
			"gates.window.sizes: unknown key, did you mean size?",
			"judge.modle: unknown key, did you mean model?",
			"log_verdict: unknown key, did you mean log_verdicts?",
			"redaction.pattern: unknown key, did you mean patterns?",
			"reports.junit_xml: unknown key (valid keys: html, json_lines, junit, markdown)",
		}, "\n"),
		"invalid_wrong_types.yaml": strings.Join([]string{
			"cases[0].expected_child_agents.writer: must be a map of assertions (expected_child_agents, expected_no_tool_calls, " +
				"expected_payload, expected_result, expected_tool_call_order, expected_tool_calls, expected_triggered), got a list",
			`cases[0].expected_tool_calls: must be a list, got "add"`,
			`cases[0].steps[0].allowCycles: must be true or false, got "sometimes"`,
			"cases[0].steps[0].maxDepth: must be a whole number, got 2.5",
			`cases[0].steps[1].maxDurationMs: must be a number, got "fast"`,
			`count_delegation_calls_as_tool_calls: must be true or false, got "old"`,
			"eval_cost_limit: must be a whole number, at least 0, got -1",
			"eval_timeout: must be a duration with a unit, such as 5s or 250ms, got 5",
			`judge.block_on_full_queue: must be true or false, got "yes"`,
			`judge.retries: must be a whole number, got "three"`,
			"reports: must be a map of keys (html, json_lines, junit, markdown), got a list",
			"rubrics.refund_payload: must be a string, got a list",
			`shutdown_timeout: must be a duration such as 5s or 250ms, got "soon"`,
		}, "\n"),
	}
	for file, want := range tests {
		t.Run(file, func(t *testing.T) {
			cm, err := confmaptest.LoadConf(filepath.Join("testdata", file))
			require.NoError(t, err)
			require.EqualError(t, cm.Unmarshal(createDefaultConfig()), prefix+want)
		})
	}
}

// TestConfigValueFromEnv: a string field keeps the text of an ${env:...} value that looks
// like a number (the walk leaves it to the decoder), and a number in a string field
// written as such is reported in words.
func TestConfigValueFromEnv(t *testing.T) {
	t.Setenv("JUDGE_MODEL", "4")
	resolver, err := confmap.NewResolver(confmap.ResolverSettings{
		URIs:              []string{"file:" + filepath.Join("testdata", "judge_model_from_env.yaml")},
		ProviderFactories: []confmap.ProviderFactory{fileprovider.NewFactory(), envprovider.NewFactory()},
	})
	require.NoError(t, err)
	cm, err := resolver.Resolve(t.Context())
	require.NoError(t, err)
	cfg := createDefaultConfig().(*Config)
	require.NoError(t, cm.Unmarshal(cfg))
	require.Equal(t, "4", cfg.Judge.Model)

	conf := confmap.NewFromStringMap(map[string]any{"judge": map[string]any{"model": 4}})
	require.ErrorContains(t, conf.Unmarshal(createDefaultConfig()), "judge.model: must be a string, got 4")
}
