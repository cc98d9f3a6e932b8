package report

import (
	"strings"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/otelcol-handoff/otelcol-handoff/internal/gate"
	"github.com/otelcol-handoff/otelcol-handoff/internal/judge"
	"github.com/otelcol-handoff/otelcol-handoff/internal/rubric"
	"github.com/otelcol-handoff/otelcol-handoff/internal/rules"
)

func rubricResult(trace, from, to, axis string, score float64, gated bool) rules.Result {
	o := rules.Pass
	if score < 0.5 {
		o = rules.Fail
	}
	return rules.Result{
		TraceID: trace, Case: "seams", Step: "EXPECT_HANDOFF_RUBRICS#2." + axis, Action: rules.ActionRubrics,
		Outcome: o, From: from, To: to, Axis: axis, Score: &score, Gated: gated, Spans: []string{"00000000000000" + trace[:2]},
		Message: axis + " of " + from + " -> " + to, Complete: true,
	}
}

func TestGateReports(t *testing.T) {
	gs, err := gate.Compile(gate.Config{
		Default:    map[string]float64{rubric.Scope: 0.9, rubric.Recovery: 0.85},
		Pairs:      []gate.PairConfig{{From: "planner", To: "critic", Thresholds: map[string]float64{rubric.Scope: 0.5}}},
		MinSamples: 1, Window: gate.WindowConfig{Size: 10},
	})
	require.NoError(t, err)
	run := NewRun([]string{"seams"})
	run.SetGates(gs)
	run.SetJudge(judge.Info{Model: "gpt-4o-mini", Template: "handoff_v1", Samples: 3})
	run.Add(nil, []rules.Result{
		rubricResult("a1", "planner", "researcher", rubric.Scope, 1, true),
		rubricResult("a1", "planner", "critic", rubric.Scope, 0, true),
		rubricResult("a1", "planner", "researcher", rubric.Integration, 1, false),
	})
	run.Add(nil, []rules.Result{
		rubricResult("b2", "planner", "researcher", rubric.Scope, 0, true),
		rubricResult("b2", "planner", "critic", rubric.Scope, 1, true),
	})

	md := string(run.Markdown())
	require.Contains(t, md, "**FAILED**: 5 assertions over 2 traces: 3 passed, 2 failed, 0 errored, 0 skipped. "+
		"2 failures are per-handoff rubric scores that the gates decide. Gates: 1 of 2 failed.\n")
	require.Contains(t, md, "## Gates\n\nJudge: `gpt-4o-mini`, prompt template `handoff_v1`, temperature 0, 3 samples per verdict (majority).\n\n"+
		"| pair | axis | mean score | threshold | handoffs | gate |\n|---|---|---:|---:|---:|---|\n"+
		`| planner -\> critic | ScopeFidelity | 0.50 | 0.50 | 2 | pass |`+"\n"+
		`| planner -\> researcher | ScopeFidelity | 0.50 | 0.90 | 2 | **FAIL** |`+"\n"+
		`| planner -\> researcher | ResultIntegration | 1.00 | – | 1 | no threshold |`+"\n")
	require.Contains(t, md, "| seams | EXPECT\\_HANDOFF\\_RUBRICS\\#2.ScopeFidelity planner -\\> critic \\(span 00000000000000a1\\) | `a1` | fail (gated) |")

	junit := string(run.JUnit())
	require.Contains(t, junit, `<testsuite name="seams" tests="5" failures="0" errors="0" skipped="0">`, "gated failures do not fail the suite")
	// A rubric testcase names its handoff by the agents (the span id, which differs between
	// runs, is in the body); results added without their graph are named by the trace id.
	require.Contains(t, junit, `<testcase name="EXPECT_HANDOFF_RUBRICS#2.ScopeFidelity planner -&gt; critic [trace a1]" classname="seams">`)
	require.Contains(t, junit, "<system-out>fail, decided by the gate of ScopeFidelity planner -&gt; critic")
	require.Contains(t, junit, "trace: a1&#xA;spans: 00000000000000a1</system-out>")
	require.Contains(t, junit, `<testsuite name="gates" tests="2" failures="1" errors="0" skipped="0">`)
	require.Contains(t, junit, `<property name="judge.model" value="gpt-4o-mini"></property>`)
	require.Contains(t, junit, `<testcase name="ScopeFidelity planner -&gt; researcher" classname="gates">`)
	require.Contains(t, junit, `<failure message="planner -&gt; researcher ScopeFidelity: mean 0.50 over 2 handoffs is below the threshold 0.90" type="gate">`)
	require.Contains(t, junit, `<testsuites name="otelcol-handoff assertions" tests="7" failures="1" errors="0" skipped="0">`)

	// Every gate passing: the run passes although single handoffs failed.
	gs, err = gate.Compile(gate.Config{Default: map[string]float64{rubric.Scope: 0.5}, MinSamples: 1, Window: gate.WindowConfig{Size: 1}})
	require.NoError(t, err)
	run.SetGates(gs)
	md = string(run.Markdown())
	require.True(t, strings.HasPrefix(md, "# Assertion report\n\n**PASSED**"), md)
	require.Contains(t, md, "Gates: 0 of 2 failed.")
}

// TestNoJudgeGates: without a judge the section says where the scores come from.
func TestNoJudgeGates(t *testing.T) {
	gs, err := gate.Compile(gate.Config{Default: map[string]float64{rubric.Recovery: 0.85}, MinSamples: 1, Window: gate.WindowConfig{Size: 1}})
	require.NoError(t, err)
	run := NewRun([]string{"seams"})
	run.SetGates(gs)
	md := string(run.Markdown())
	require.Contains(t, md, "No judge is configured: scores come from the deterministic checks alone (0 or 1).\n\nNo handoff was scored in this run.\n")
	require.NotContains(t, string(run.JUnit()), `name="gates"`)
}
