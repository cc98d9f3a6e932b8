package rules

import (
	"fmt"
	"strings"

	"github.com/otelcol-handoff/otelcol-handoff/internal/cluster"
)

func noToolsExpected(tools []string) string {
	return "none of " + strings.Join(tools, ", ") + " called"
}

func noToolCalls(r *Result, a *logicalAgent, forbidden []string) {
	r.Expected = noToolsExpected(forbidden)
	bad := map[string]bool{}
	for _, name := range forbidden {
		bad[name] = true
	}
	counts := map[string]int{}
	for _, tc := range a.toolCalls {
		if bad[tc.Name] {
			counts[tc.Name]++
			r.Spans = append(r.Spans, tc.Span.ID.String())
		}
	}
	if len(counts) == 0 {
		r.Outcome, r.Actual = Pass, "none of them called"
		r.Message = fmt.Sprintf("agent %s called none of %s", a.label(), strings.Join(forbidden, ", "))
		return
	}
	r.Outcome, r.Actual, r.Cluster = Fail, "called: "+formatCounts(counts), cluster.ScopeBleed
	r.Message = fmt.Sprintf("agent %s called tools it must not call: %s", a.label(), formatCounts(counts))
}

// ExpectedNoToolCalls is expected_no_tool_calls: tools the agent must not call.
type ExpectedNoToolCalls []string

func (n ExpectedNoToolCalls) set() bool { return len(n) > 0 }

// Validate checks the tool names.
func (n ExpectedNoToolCalls) Validate() error { return validToolNames(FieldExpectedNoToolCalls, n) }

func (n ExpectedNoToolCalls) compile(compileEnv) (expectation, error) { return n, nil }

func (n ExpectedNoToolCalls) refs(prefix string) []stepRef {
	return []stepRef{{prefix + FieldExpectedNoToolCalls, FieldExpectedNoToolCalls, noToolsExpected(n)}}
}

func (n ExpectedNoToolCalls) evaluate(_ *traceEval, base Result, a *logicalAgent, prefix string) []Result {
	r := fieldResult(base, prefix+FieldExpectedNoToolCalls, FieldExpectedNoToolCalls)
	noToolCalls(&r, a, n)
	r.Spans = append(a.spanIDs(), r.Spans...)
	return []Result{r}
}
