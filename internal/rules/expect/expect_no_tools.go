package expect

import (
	"fmt"
	"slices"
	"strings"

	"github.com/otelcol-handoff/otelcol-handoff/internal/cluster"
	"github.com/otelcol-handoff/otelcol-handoff/internal/rules/check"
)

func noToolsExpected(tools []string) string {
	return "none of " + strings.Join(tools, ", ") + " called"
}

func noToolCalls(r *check.Result, a *logicalAgent, forbidden []string, quiet bool) {
	var counts map[string]int
	for _, tc := range a.toolCalls {
		if !slices.Contains(forbidden, tc.Name) {
			continue
		}
		if quiet { // the outcome alone: fails on the first forbidden call
			r.Outcome, r.Cluster = check.Fail, cluster.ScopeBleed
			return
		}
		if counts == nil {
			counts = map[string]int{}
		}
		counts[tc.Name]++
		r.Spans = append(r.Spans, tc.Span.ID.String())
	}
	if len(counts) == 0 {
		r.Outcome = check.Pass
		if !quiet {
			r.Actual = "none of them called"
			r.Message = fmt.Sprintf("agent %s called none of %s", a.label(), strings.Join(forbidden, ", "))
		}
		return
	}
	r.Outcome, r.Actual, r.Cluster = check.Fail, "called: "+check.FormatCounts(counts), cluster.ScopeBleed
	r.Message = fmt.Sprintf("agent %s called tools it must not call: %s", a.label(), check.FormatCounts(counts))
}

// ExpectedNoToolCalls is expected_no_tool_calls: tools the agent must not call.
type ExpectedNoToolCalls []string

func (n ExpectedNoToolCalls) set() bool { return len(n) > 0 }

// ValidateField checks the tool names.
func (n ExpectedNoToolCalls) ValidateField() error {
	return validToolNames(FieldExpectedNoToolCalls, n)
}

func (n ExpectedNoToolCalls) compile(check.Env) (expectation, error) {
	return toolListCheck{field: FieldExpectedNoToolCalls, tools: n, want: noToolsExpected(n)}, nil
}
