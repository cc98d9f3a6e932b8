package expect

import (
	"fmt"
	"sort"
)

// Seed-001 test-case fields. They keep the seed's snake_case keys so users' specs paste in
// verbatim; see assertionexporter/README.md for the semantics.

// Field names of the seed-001 test case; also the leaf of every step id they produce.
const (
	FieldExpectedResult        = "expected_result"
	FieldExpectedToolCalls     = "expected_tool_calls"
	FieldExpectedToolCallOrder = "expected_tool_call_order"
	FieldExpectedNoToolCalls   = "expected_no_tool_calls"
	FieldExpectedChildAgents   = "expected_child_agents"
	FieldExpectedPayload       = "expected_payload"
	FieldExpectedTriggered     = "expected_triggered"
)

// AgentExpectations are the assertions on one agent invocation, shared by a case (on the
// root agent) and by each entry of expected_child_agents (on the triggered agent).
type AgentExpectations struct {
	// ExpectedResult is an expression over status, output, error and context.
	ExpectedResult ExpectedResult `mapstructure:"expected_result"`
	// ExpectedToolCalls are independent assertions on the agent's own tool calls.
	ExpectedToolCalls ExpectedToolCalls `mapstructure:"expected_tool_calls"`
	// ExpectedToolCallOrder names tools that must be called in this relative order.
	ExpectedToolCallOrder ExpectedToolCallOrder `mapstructure:"expected_tool_call_order"`
	// ExpectedNoToolCalls names tools that must not be called.
	ExpectedNoToolCalls ExpectedNoToolCalls `mapstructure:"expected_no_tool_calls"`
	// ExpectedChildAgents asserts on the agents this one triggered, keyed by agent name.
	ExpectedChildAgents ChildAgents `mapstructure:"expected_child_agents"`
}

// TestFields are the seed-001 test-case fields of a case, and of the exporter's defaults.
type TestFields struct {
	AgentExpectations `mapstructure:",squash"`

	// Payload, Builder and BuilderArgs drive the agent in the seed's test runner. A trace
	// collector observes runs and does not start them: accepted (so specs paste in) and
	// ignored.
	Payload     any `mapstructure:"payload"`
	Builder     any `mapstructure:"builder"`
	BuilderArgs any `mapstructure:"builder_args"`

	// ApprovalDecisions and StrictApprovalDecisions answer pending approvals in the seed's
	// runner. A collector cannot answer them: decoded only to be rejected with a reason.
	ApprovalDecisions       any   `mapstructure:"approval_decisions"`
	StrictApprovalDecisions *bool `mapstructure:"strict_approval_decisions"`
}

// WithDefaults returns the fields of t with every unset field taken from d (a field set on
// the case wins as a whole; lists and maps are not merged item by item). inherited names the
// fields taken from d.
func (t TestFields) WithDefaults(d TestFields) (out TestFields, inherited map[string]bool) {
	out = t
	inherited = map[string]bool{}
	if out.ExpectedResult == "" && d.ExpectedResult != "" {
		out.ExpectedResult = d.ExpectedResult
		inherited[FieldExpectedResult] = true
	}
	if len(out.ExpectedToolCalls) == 0 && len(d.ExpectedToolCalls) > 0 {
		out.ExpectedToolCalls = d.ExpectedToolCalls
		inherited[FieldExpectedToolCalls] = true
	}
	if len(out.ExpectedToolCallOrder) == 0 && len(d.ExpectedToolCallOrder) > 0 {
		out.ExpectedToolCallOrder = d.ExpectedToolCallOrder
		inherited[FieldExpectedToolCallOrder] = true
	}
	if len(out.ExpectedNoToolCalls) == 0 && len(d.ExpectedNoToolCalls) > 0 {
		out.ExpectedNoToolCalls = d.ExpectedNoToolCalls
		inherited[FieldExpectedNoToolCalls] = true
	}
	if out.ExpectedChildAgents.Len() == 0 && d.ExpectedChildAgents.Len() > 0 {
		out.ExpectedChildAgents = d.ExpectedChildAgents
		inherited[FieldExpectedChildAgents] = true
	}
	return out, inherited
}

// approvalReason explains why approval decisions are rejected.
const approvalReason = "approval decisions are supplied by the test runner that drives the agent; " +
	"a trace collector only observes runs and cannot answer a pending approval. " +
	`Remove it and assert the observable outcome instead, e.g. expected_result: status == "awaiting_approval"`

// ValidateTestFields checks the seed-001 fields at path (e.g. `cases[0] (c)` or `defaults`)
// that CEL compilation does not check.
func ValidateTestFields(at string, t TestFields) []error {
	var errs []error
	if t.ApprovalDecisions != nil {
		errs = append(errs, fmt.Errorf("%s.approval_decisions: not supported: %s", at, approvalReason))
	}
	if t.StrictApprovalDecisions != nil {
		errs = append(errs, fmt.Errorf("%s.strict_approval_decisions: not supported: %s", at, approvalReason))
	}
	return append(errs, validateExpectations(at, t.AgentExpectations)...)
}

// StepIDs lists, in evaluation order, the step ids the expectations produce under prefix
// ("" for a case's root agent, "expected_child_agents.NAME." below it).
func (a AgentExpectations) StepIDs(prefix string) []string {
	var ids []string
	if a.ExpectedResult != "" {
		ids = append(ids, prefix+FieldExpectedResult)
	}
	for i := range a.ExpectedToolCalls {
		ids = append(ids, toolCallID(prefix, i))
	}
	if len(a.ExpectedToolCallOrder) > 0 {
		ids = append(ids, prefix+FieldExpectedToolCallOrder)
	}
	if len(a.ExpectedNoToolCalls) > 0 {
		ids = append(ids, prefix+FieldExpectedNoToolCalls)
	}
	for _, name := range sortedKeys(a.ExpectedChildAgents.specs) {
		child := a.ExpectedChildAgents.specs[name]
		if child == nil {
			continue
		}
		p := prefix + FieldExpectedChildAgents + "." + name + "."
		if child.ExpectedTriggered != nil {
			ids = append(ids, p+FieldExpectedTriggered)
		}
		if child.ExpectedPayload != "" {
			ids = append(ids, p+FieldExpectedPayload)
		}
		ids = append(ids, child.AgentExpectations.StepIDs(p)...)
	}
	return ids
}

func sortedKeys[V any](m map[string]V) []string {
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	return keys
}
