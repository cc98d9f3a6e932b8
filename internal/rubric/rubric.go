// Package rubric holds the four handoff rubrics of seed 004 (the axes of the CI gates) and
// the GROUNDEDNESS rubric type, with the judge's built-in text of each, and the checks
// that grade a handoff on them: one file per axis (dispatch.go, scope.go, integration.go,
// recovery.go) with its deterministic parts and what the judge reads, over a per-trace
// Index of the model (index.go). Checks.Check is the entry point; the
// EXPECT_HANDOFF_RUBRICS step (internal/rules) turns its Finding into results.
package rubric

import "strings"

// The four handoff rubrics of seed 004, the axes of the CI gates.
const (
	Dispatch    = "DispatchCorrectness"
	Scope       = "ScopeFidelity"
	Integration = "ResultIntegration"
	Recovery    = "RecoveryOnError"
)

// Axes lists the rubric axes in report order.
var Axes = []string{Dispatch, Scope, Integration, Recovery}

// Groundedness is the seed-000 rubric type of EXPECT_HANDOFF_CONTEXT.
const Groundedness = "GROUNDEDNESS"

// Builtin are the judge's rubric texts (after seed 004's CustomLLMJudge rubrics).
// A rubric of the same name under the exporter's rubrics: replaces one.
var Builtin = map[string]string{
	Dispatch: "Given the sender's pre-handoff state, the handoff call (target, scope prompt, allowed tools) and " +
		"the receiver catalog, score whether the sender picked the right receiver, scoped the prompt tightly enough " +
		"that the receiver did not have to guess, granted no more tools than the task needs, and was right to " +
		"dispatch rather than answer inline.",
	Scope: "Given the dispatched scope prompt, the allowed tools and the receiver's turn, score whether the " +
		"receiver stayed inside the scope. Penalise tools outside the allowed subset, work outside the scope (a " +
		"planner that drafts, a critic that plans, a validator that codes), and fabricated context the dispatch " +
		"did not supply, such as a reference to an agreement or a turn that does not exist.",
	Integration: "Given the receiver's return value and the sender's next step, score whether the sender read " +
		"the return value, propagated its constraints and let it change the plan, rather than regenerating the " +
		"work inline, ignoring a returned constraint, or contradicting the receiver's conclusion without " +
		"justification.",
	Recovery: "Given the error on the handoff's round trip (timeout, tool error, guardrail block, refusal) and " +
		"what happened next, score whether it was handled: retried with a tighter scope, fallen back, escalated, " +
		"or surfaced as a failure. A silently swallowed error scores 0, and so does continuing with the missing " +
		"artifact; retries that loop on the same scope score as failures unless the error is genuinely transient.",
	Groundedness: "Score whether the handoff content is grounded: every fact, identifier and constraint the " +
		"sender passes to the receiver is supported by what the sender had been given or had retrieved, nothing " +
		"is invented, and nothing the criteria require is missing.",
}

// Types lists the rubricType values EXPECT_HANDOFF_CONTEXT accepts.
func Types() []string {
	out := append([]string{Groundedness}, Axes...)
	return out
}

// CanonicalAxis maps a rubric name (ScopeFidelity, SCOPE_FIDELITY, scope_fidelity) to its
// axis.
func CanonicalAxis(name string) (string, bool) {
	key := strings.ToLower(strings.ReplaceAll(name, "_", ""))
	for _, a := range Axes {
		if strings.ToLower(a) == key {
			return a, true
		}
	}
	return "", false
}

// CanonicalType maps a rubricType to GROUNDEDNESS or one of the axes.
func CanonicalType(name string) (string, bool) {
	if strings.EqualFold(name, Groundedness) {
		return Groundedness, true
	}
	return CanonicalAxis(name)
}

// Text is the text of a rubric: a named one from the config, else the built-in.
func Text(named map[string]string, name string) string {
	if t, ok := named[name]; ok {
		return t
	}
	return Builtin[name]
}

// HasDeterministicPart reports whether a handoff rubric has a part decided without the
// judge (DispatchCorrectness has none).
func HasDeterministicPart(axis string) bool { return axis != Dispatch }

// DeterministicAxes are the rubrics with a deterministic part, in report order.
func DeterministicAxes() []string {
	var out []string
	for _, a := range Axes {
		if HasDeterministicPart(a) {
			out = append(out, a)
		}
	}
	return out
}
