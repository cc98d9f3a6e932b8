package verdict

import (
	"testing"

	"github.com/stretchr/testify/assert"

	"github.com/otelcol-handoff/otelcol-handoff/internal/gate"
	"github.com/otelcol-handoff/otelcol-handoff/internal/rules"
)

func TestRunVerdict(t *testing.T) {
	var c Counts
	for _, r := range []rules.Result{
		{Outcome: rules.Pass}, {Outcome: rules.Fail, Gated: true}, {Outcome: rules.Skipped},
	} {
		c.Add(r)
	}
	assert.Equal(t, Counts{Pass: 1, Fail: 1, Gated: 1, Skipped: 1}, c)
	assert.Equal(t, 3, c.Total())
	assert.Equal(t, 0, c.Failing())

	v := Run{Counts: c}
	assert.Equal(t, ExitPass, v.ExitCode(DefaultFailOn()), "a gated failure does not fail the run")
	assert.Equal(t, ExitFail, v.ExitCode(FailOn{rules.Fail: true, rules.Skipped: true}), "skipped in fail-on")

	v.Counts.Add(rules.Result{Outcome: rules.Error})
	assert.Equal(t, ExitFail, v.ExitCode(DefaultFailOn()))
	assert.Equal(t, ExitPass, v.ExitCode(FailOn{rules.Fail: true}), "--fail-on fail relaxes errors")

	th := 0.5
	v = Run{Counts: Counts{Pass: 1}, Gates: []gate.Result{
		{Status: gate.Pass, Threshold: &th}, {Status: gate.Fail, Threshold: &th}, {Status: gate.Insufficient},
	}}
	assert.Equal(t, Gates{Passed: 1, Failed: 1, Insufficient: 1, Decided: 2}, CountGates(v.Gates))
	assert.Equal(t, ExitFail, v.ExitCode(DefaultFailOn()), "a failing gate fails the run")
	assert.True(t, DefaultFailOn().Fails(rules.Result{Outcome: rules.Fail}))
	assert.False(t, DefaultFailOn().Fails(rules.Result{Outcome: rules.Fail, Gated: true}))
}
