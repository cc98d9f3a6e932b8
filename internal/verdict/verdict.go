// Package verdict owns the verdict of a run: the assertion results counted by outcome, the
// gates' outcomes, and whether the run failed (the exit code handoffcheck returns). The
// reports, handoffcheck and the exporter read the verdict from here, so they cannot
// disagree on it.
package verdict

import (
	"github.com/otelcol-handoff/otelcol-handoff/internal/gate"
	"github.com/otelcol-handoff/otelcol-handoff/internal/rules"
)

// Counts are assertion results by outcome; Gated counts the failures a gate decides
// (included in Fail).
type Counts struct {
	Pass    int `json:"pass"`
	Fail    int `json:"fail"`
	Gated   int `json:"gated"`
	Error   int `json:"error"`
	Skipped int `json:"skipped"`
}

// GatedFail reports whether r is a failure a gate decides: it feeds the gate's mean score
// and does not fail a run by itself.
func GatedFail(r rules.Result) bool { return r.Outcome == rules.Fail && r.Gated }

// Add counts one result.
func (c *Counts) Add(r rules.Result) {
	switch r.Outcome {
	case rules.Pass:
		c.Pass++
	case rules.Fail:
		c.Fail++
		if r.Gated {
			c.Gated++
		}
	case rules.Error:
		c.Error++
	case rules.Skipped:
		c.Skipped++
	}
}

// Total is the number of results counted.
func (c Counts) Total() int { return c.Pass + c.Fail + c.Error + c.Skipped }

// Failing counts the failures and errors that fail a run by themselves (not the failures
// a gate decides).
func (c Counts) Failing() int { return c.Fail - c.Gated + c.Error }

// FailOn is the set of outcomes that fail a run (handoffcheck's --fail-on).
type FailOn map[rules.Outcome]bool

// DefaultFailOn fails a run on a failed and on an errored assertion: the reports' verdict,
// and handoffcheck's without --fail-on.
func DefaultFailOn() FailOn { return FailOn{rules.Fail: true, rules.Error: true} }

// Fails reports whether r fails the run by itself.
func (f FailOn) Fails(r rules.Result) bool { return f[r.Outcome] && !GatedFail(r) }

// failsCounts reports whether results counted in c fail the run.
func (f FailOn) failsCounts(c Counts) bool {
	return f[rules.Fail] && c.Fail > c.Gated || f[rules.Error] && c.Error > 0 || f[rules.Skipped] && c.Skipped > 0
}

// Gates are the gates' outcomes by status; Decided counts the gates with a threshold.
type Gates struct {
	Passed, Failed, Insufficient, Decided int
}

// CountGates counts the gates' outcomes.
func CountGates(gates []gate.Result) Gates {
	var n Gates
	for _, g := range gates {
		switch g.Status {
		case gate.Pass:
			n.Passed++
		case gate.Fail:
			n.Failed++
		case gate.Insufficient:
			n.Insufficient++
		}
		if g.Threshold != nil {
			n.Decided++
		}
	}
	return n
}

// Run is the verdict of a run: its results counted and its gates' outcomes.
type Run struct {
	Counts Counts
	Gates  []gate.Result
}

// Failed reports whether the run failed: a result whose outcome is in failOn (a failure a
// gate decides aside), or a failing gate.
func (v Run) Failed(failOn FailOn) bool {
	return failOn.failsCounts(v.Counts) || CountGates(v.Gates).Failed > 0
}

// Exit codes of a judged run.
const (
	ExitPass = 0
	ExitFail = 1
)

// ExitCode is the exit code of the run: ExitFail when it failed, else ExitPass.
func (v Run) ExitCode(failOn FailOn) int {
	if v.Failed(failOn) {
		return ExitFail
	}
	return ExitPass
}
