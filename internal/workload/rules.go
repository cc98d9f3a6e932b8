package workload

import (
	"fmt"
	"strings"
)

// The assertions of the load test and of the rule benchmarks, in the exporter's cases
// syntax: seed-000 steps, then seed-001 test-case fields, all on the real captures' agents.
// Each copy c of the set gets its own case names and its own thresholds.
var (
	stepRules = []string{
		"{action: ASSERT_AGENT_TOPOLOGY, maxDepth: %[1]d}",
		"{action: EXPECT_DELEGATION_TO, agentName: weather_specialist, fromAgent: triage}",
		"{action: EXPECT_AGENT_BUDGET, agentName: weather_specialist, maxTokens: %[2]d, maxToolCalls: 600}",
		"{action: EXPECT_AGENT_BUDGET, agentName: triage, maxDurationMs: %[3]d}",
		"{action: EXPECT_DELEGATION_TO, agentName: triage, maxInvocations: %[4]d}",
	}
	// fieldRules are cumulative: rule k adds the k-th field (the second tool-call rule
	// extends the first's list).
	fieldRules = []string{
		`expected_result: status == "completed"`,
		`expected_tool_calls: [get_weather]`,
		`expected_tool_calls: [get_weather, 'get_weather: invocations >= %[5]d']`,
		`expected_no_tool_calls: [delete_everything]`,
		`expected_tool_call_order: [get_weather]`,
	}
)

// Rules returns n assertions (n >= 1) as a YAML list of cases: copies of ten assertions
// (five steps in a case "topology-c", five test-case fields in a case "tests-c"), the
// last copy cut at n. Rules(10) is the load test's full pipeline.
func Rules(n int) string {
	var b strings.Builder
	for c := 0; n > 0; c++ {
		args := []any{5 + c, 100000 + c, 600000 + c, 100 + c, 1}
		steps := min(n, len(stepRules))
		n -= steps
		fmt.Fprintf(&b, "- name: topology-%d\n  steps:\n", c)
		for _, s := range stepRules[:steps] {
			b.WriteString("    - " + fill(s, args) + "\n")
		}
		fields := min(n, len(fieldRules))
		n -= fields
		if fields == 0 {
			continue
		}
		fmt.Fprintf(&b, "- name: tests-%d\n", c)
		for i, f := range fieldRules[:fields] {
			if i == 1 && fields > 2 {
				continue // the next line lists both tool-call rules
			}
			b.WriteString("  " + fill(f, args) + "\n")
		}
	}
	return b.String()
}

// fill puts the copy's thresholds into a rule that has any.
func fill(rule string, args []any) string {
	if !strings.Contains(rule, "%[") {
		return rule
	}
	return fmt.Sprintf(rule, args...)
}
