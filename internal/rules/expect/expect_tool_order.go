package expect

import (
	"fmt"
	"strings"

	"github.com/otelcol-handoff/otelcol-handoff/internal/rules/check"
)

func orderExpected(order []string) string {
	return strings.Join(order, " -> ") + " in this relative order"
}

func toolOrder(r *check.Result, a *logicalAgent, order []string, quiet bool) {
	j := 0
	var spans []string
	for _, tc := range a.toolCalls {
		if j < len(order) && tc.Name == order[j] {
			if !quiet {
				spans = append(spans, tc.Span.ID.String())
			}
			j++
		}
	}
	if quiet { // the outcome alone
		r.Outcome = check.PassIf(j == len(order))
		return
	}
	r.Actual = toolSequence(a)
	r.Spans = spans
	if j == len(order) {
		r.Outcome = check.Pass
		r.Message = fmt.Sprintf("agent %s called %s in order", a.label(), strings.Join(order, " -> "))
		return
	}
	r.Outcome = check.Fail
	if j == 0 {
		r.Message = fmt.Sprintf("agent %s: expected %s in this order, but %s was never called (calls: %s)",
			a.label(), strings.Join(order, " -> "), order[0], r.Actual)
		return
	}
	r.Message = fmt.Sprintf("agent %s: expected %s in this order, but no %s call follows %s (calls: %s)",
		a.label(), strings.Join(order, " -> "), order[j], strings.Join(order[:j], " -> "), r.Actual)
}

// toolSequence lists an agent's tool calls in order (at most 20).
func toolSequence(a *logicalAgent) string {
	if len(a.toolCalls) == 0 {
		return "no tool calls"
	}
	var names []string
	for i, tc := range a.toolCalls {
		if i == 20 {
			names = append(names, fmt.Sprintf("... (%d more)", len(a.toolCalls)-20))
			break
		}
		names = append(names, tc.Name)
	}
	return strings.Join(names, ", ")
}

// ExpectedToolCallOrder is expected_tool_call_order: tools the agent calls in this relative
// order (other calls may come between).
type ExpectedToolCallOrder []string

func (o ExpectedToolCallOrder) set() bool { return len(o) > 0 }

// ValidateField checks the tool names.
func (o ExpectedToolCallOrder) ValidateField() error {
	return validToolNames(FieldExpectedToolCallOrder, o)
}

func (o ExpectedToolCallOrder) compile(check.Env) (expectation, error) {
	return toolListCheck{field: FieldExpectedToolCallOrder, tools: o, want: orderExpected(o)}, nil
}

// validToolNames reports each empty tool name of the list field.
func validToolNames(field string, names []string) error {
	var errs check.Errors
	for i, name := range names {
		if strings.TrimSpace(name) == "" {
			errs.Add(fmt.Sprintf("%s[%d]", field, i), "the tool name must not be empty")
		}
	}
	return errs.Err()
}
