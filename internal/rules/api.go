package rules

import (
	"github.com/otelcol-handoff/otelcol-handoff/internal/rules/check"
	"github.com/otelcol-handoff/otelcol-handoff/internal/rules/expect"
)

// The engine's vocabulary, shared with the step kinds (internal/rules/steps) and the
// test-case fields (internal/rules/expect) through internal/rules/check: what the
// components, the reports and handoffcheck read of a result and of the config language.

// Result is one assertion's verdict on one trace.
type Result = check.Result

// Outcome of one assertion on one trace.
type Outcome = check.Outcome

// The outcomes.
const (
	Pass    = check.Pass
	Fail    = check.Fail
	Error   = check.Error
	Skipped = check.Skipped
)

// Outcomes lists every outcome, for zero-initialized metrics.
var Outcomes = check.Outcomes

// JudgeVerdict is the judge's verdict on a graded result.
type JudgeVerdict = check.JudgeVerdict

// The step actions and the topology's sources.
const (
	ActionTopology   = check.ActionTopology
	ActionDelegation = check.ActionDelegation
	ActionBudget     = check.ActionBudget
	ActionContext    = check.ActionContext
	ActionRubrics    = check.ActionRubrics
	ActionAgentTools = check.ActionAgentTools
	ActionTrajectory = check.ActionTrajectory
	SourceLive       = check.SourceLive
	SourceFile       = check.SourceFile
)

// TestFields are a case's seed-001 test-case fields (internal/rules/expect).
type TestFields = expect.TestFields
