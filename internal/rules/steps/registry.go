// Package steps holds the seed-000 step kinds, one per file (step_*.go), each behind
// check.Kind: its typed config with its own ValidateKeys, its compiled form and its
// evaluation. The case engine (internal/rules) decodes a step into the kind its action
// names and runs it; a new kind is a new file and one line in kinds (docs/architecture.md).
package steps

import "github.com/otelcol-handoff/otelcol-handoff/internal/rules/check"

// kinds makes the typed config of each action; the order is the one messages list.
var kinds = []struct {
	action string
	make   func() check.Kind
}{
	{check.ActionTopology, func() check.Kind { return &TopologyStep{} }},
	{check.ActionDelegation, func() check.Kind { return &DelegationStep{} }},
	{check.ActionContext, func() check.Kind { return &ContextStep{} }},
	{check.ActionBudget, func() check.Kind { return &BudgetStep{} }},
	{check.ActionRubrics, func() check.Kind { return &RubricsStep{} }},
	{check.ActionTrajectory, func() check.Kind { return &TrajectoryStep{} }},
	{check.ActionAgentTools, func() check.Kind { return &AgentToolsStep{} }},
}

// New returns an empty typed config of action (false when no kind has it).
func New(action string) (check.Kind, bool) {
	for _, k := range kinds {
		if k.action == action {
			return k.make(), true
		}
	}
	return nil, false
}

// Kinds returns an empty typed config of every kind, in the order messages name them.
func Kinds() []check.Kind {
	out := make([]check.Kind, len(kinds))
	for i, k := range kinds {
		out[i] = k.make()
	}
	return out
}
