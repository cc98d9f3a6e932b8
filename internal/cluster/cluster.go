// Package cluster names why an assertion failed (seed 004's Error Feed, done
// deterministically): the catalogue of failure clusters with their immediate_fix hints, the
// stable signature of one failure (the same failure on two traces has one signature, whatever
// ids, numbers and durations its message holds) and the grouping of failures by cluster and
// signature that the reports show. It is pure: it knows nothing of spans, rules or reports.
//
// The check that fails an assertion names the cluster from what it knew (which sub-check
// failed); nothing here reads a message to guess it.
package cluster

import "strings"

// Name is a failure cluster.
type Name string

// The clusters, in catalogue order.
const (
	// DroppedConstraint: a required pattern, payload field or piece of context did not cross
	// the handoff (EXPECT_HANDOFF_CONTEXT requiredPatterns and contextExpression,
	// expected_payload, the ScopeFidelity "context supplied" part).
	DroppedConstraint Name = "dropped_constraint"
	// WrongDispatch: a delegation to an unexpected agent, or one missing or repeated
	// (EXPECT_DELEGATION_TO, expected_triggered, a missing handoff, EXPECT_TRAJECTORY of agents,
	// DispatchCorrectness).
	WrongDispatch Name = "wrong_dispatch"
	// ScopeBleed: the receiver called tools outside handoff.allowed_tools or did work beyond
	// its scope (ScopeFidelity, expected_no_tool_calls, EXPECT_AGENT_TOOLS).
	ScopeBleed Name = "scope_bleed"
	// IntegrationSkip: the sender ignored the receiver's return value (ResultIntegration).
	IntegrationSkip Name = "integration_skip"
	// RecoveryBlind: an error on the round trip was swallowed (RecoveryOnError).
	RecoveryBlind Name = "recovery_blind"
	// BudgetBlowout: an agent's subtree went over a budget (EXPECT_AGENT_BUDGET: tokens,
	// duration, tool calls, cost).
	BudgetBlowout Name = "budget_blowout"
	// Loop: the delegation turned in circles or ran away (a forbidden cycle, maxDepth, and the
	// loop rules of ASSERT_AGENT_TOPOLOGY).
	Loop Name = "loop"
	// Leak: forbidden content crossed a handoff (EXPECT_HANDOFF_CONTEXT forbiddenPatterns).
	Leak Name = "leak"
	// Other: any other failure (expected_result, expected_tool_calls, content not captured…).
	Other Name = "other"
)

// Info describes one cluster.
type Info struct {
	Name Name `json:"name"`
	// Description says what failed.
	Description string `json:"description"`
	// Fix is the immediate_fix template: {sender} and {receiver} stand for the handoff's
	// agents (see FixFor).
	Fix string `json:"immediate_fix"`
}

var catalogue = []Info{
	{
		DroppedConstraint, "a required pattern or constraint did not cross the handoff",
		"make {sender} emit the constraints {receiver} needs (caps, date ranges, exclusion lists, ids) as a JSON block in the handoff",
	},
	{
		WrongDispatch, "a delegation to an unexpected agent, or one missing or repeated",
		"add an explicit dispatch-or-inline criterion to {sender}'s prompt that says when {receiver} is the right receiver",
	},
	{
		ScopeBleed, "the receiver worked outside its scope or called tools outside handoff.allowed_tools",
		"tighten {receiver}'s scope: offer only the tools it needs and add a one-shot example of the boundary to its instructions",
	},
	{
		IntegrationSkip, "the sender ignored the receiver's return value",
		"make {sender} acknowledge {receiver}'s return value in one sentence before its next step, and build on it instead of redoing the work",
	},
	{
		RecoveryBlind, "an error on the handoff's round trip was swallowed",
		"add an explicit recovery branch to {sender}'s prompt (retry with a changed scope, fall back, or surface the error) and a retry policy for {receiver}",
	},
	{
		BudgetBlowout, "an agent's subtree went over its token, duration, tool-call or cost budget",
		"cap the agent's work: fewer turns or tool calls per run, a smaller context passed at each handoff, or a cheaper model for the receivers",
	},
	{
		Loop, "the delegation turned in circles or ran away",
		"give the orchestration a stop condition (a maximum number of handoffs or turns) and make {receiver} return a final answer instead of handing back",
	},
	{
		Leak, "forbidden content crossed a handoff",
		"keep secrets and personal data out of {sender}'s handoff: pass references instead of values, and redact before dispatching",
	},
	{
		Other, "any other failure",
		"read a representative trace: the message says what was expected and what happened",
	},
}

var byName = func() map[Name]Info {
	m := make(map[Name]Info, len(catalogue))
	for _, i := range catalogue {
		m[i.Name] = i
	}
	return m
}()

// Catalogue lists every cluster in catalogue order.
func Catalogue() []Info { return append([]Info(nil), catalogue...) }

// Names lists every cluster name in catalogue order (a bounded set, for metrics).
func Names() []Name {
	out := make([]Name, len(catalogue))
	for i, c := range catalogue {
		out[i] = c.Name
	}
	return out
}

// Valid reports whether n is in the catalogue.
func (n Name) Valid() bool {
	_, ok := byName[n]
	return ok
}

// Or is n, or Other when n is empty or not in the catalogue.
func (n Name) Or() Name {
	if n.Valid() {
		return n
	}
	return Other
}

// rank orders clusters as the catalogue does (unknown names last).
func (n Name) rank() int {
	for i, c := range catalogue {
		if c.Name == n {
			return i
		}
	}
	return len(catalogue)
}

// FixFor is the cluster's immediate_fix with the handoff's agents filled in ("the sender" and
// "the receiver" where they are not known).
func FixFor(n Name, sender, receiver string) string {
	if sender == "" {
		sender = "the sender"
	}
	if receiver == "" {
		receiver = "the receiver"
	}
	return strings.NewReplacer("{sender}", sender, "{receiver}", receiver).Replace(byName[n.Or()].Fix)
}
