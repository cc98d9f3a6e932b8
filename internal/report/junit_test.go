package report

import (
	"encoding/xml"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/otelcol-handoff/otelcol-handoff/internal/agentgraph"
	"github.com/otelcol-handoff/otelcol-handoff/internal/rubric"
	"github.com/otelcol-handoff/otelcol-handoff/internal/rules"
	tr "github.com/otelcol-handoff/otelcol-handoff/internal/rules/rulestest"
)

// junitRun is one run of a scenario as the JUnit report sees it: two traces rooted at
// triage (the first to start has the larger id when swap is set, so names cannot follow
// trace ids), one rooted at intake, and a trace without agents. triage hands off to
// billing twice in its first trace: two rubric results with the same step and agents.
func junitRun(first, second, third, fourth byte) *Run {
	a := tr.New(first)
	root := a.Agent(nil, "triage", 0, 100)
	a.Agent(root, "billing", 10, 40)
	a.Agent(root, "billing", 50, 90)
	b := tr.New(second)
	b.Agent(nil, "triage", 200, 260)
	c := tr.New(third)
	c.Agent(nil, "intake", 300, 310)
	d := tr.New(fourth)
	d.Other(nil, "POST /chat", 400, 401)
	run := NewRun([]string{"seams", "budget"})
	for _, g := range []*agentgraph.Graph{d.Graph(), c.Graph(), b.Graph(), a.Graph()} { // any arrival order
		id := g.TraceID.String()
		results := []rules.Result{{TraceID: id, Case: "budget", Step: "EXPECT_AGENT_BUDGET#2", Outcome: rules.Pass, Complete: true}}
		if g.Root != nil && g.Root.Name == "triage" && len(g.Edges) == 2 {
			results = append(results,
				rules.Result{
					TraceID: id, Case: "seams", Step: "EXPECT_HANDOFF_RUBRICS#1.ScopeFidelity", From: "triage", To: "billing",
					Axis: rubric.Scope, Outcome: rules.Pass, Spans: []string{g.Edges[0].To.Span.ID.String()}, Complete: true,
				},
				rules.Result{
					TraceID: id, Case: "seams", Step: "EXPECT_HANDOFF_RUBRICS#1.ScopeFidelity", From: "triage", To: "billing",
					Axis: rubric.Scope, Outcome: rules.Fail, Message: "out of scope", Spans: []string{g.Edges[1].To.Span.ID.String()}, Complete: true,
				})
		}
		run.Add(g, results)
	}
	return run
}

type junitDoc struct {
	Time      string `xml:"time,attr"`
	Timestamp string `xml:"timestamp,attr"`
	Suites    []struct {
		Name      string `xml:"name,attr"`
		Time      string `xml:"time,attr"`
		Timestamp string `xml:"timestamp,attr"`
		Cases     []struct {
			Name      string `xml:"name,attr"`
			Time      string `xml:"time,attr"`
			Timestamp string `xml:"timestamp,attr"`
			SystemOut string `xml:"system-out"`
			Failure   *struct {
				Body string `xml:",chardata"`
			} `xml:"failure"`
		} `xml:"testcase"`
	} `xml:"testsuite"`
}

func parseJUnit(t *testing.T, b []byte) junitDoc {
	t.Helper()
	var d junitDoc
	require.NoError(t, xml.Unmarshal(b, &d))
	return d
}

// TestJUnitNamesStable: testcase names hold the root agent, never a trace or span id, so
// two runs of one scenario with other ids give the same names in the same order; traces of
// one root agent are numbered in start order; time and timestamp come from the spans.
func TestJUnitNamesStable(t *testing.T) {
	one := parseJUnit(t, junitRun(0x0b, 0x0a, 0x0c, 0x0d).JUnit())
	two := parseJUnit(t, junitRun(0x1a, 0x1b, 0x1c, 0x1d).JUnit())

	names := func(d junitDoc) []string {
		var out []string
		for _, s := range d.Suites {
			for _, c := range s.Cases {
				out = append(out, s.Name+": "+c.Name)
			}
		}
		return out
	}
	require.Equal(t, []string{
		"seams: EXPECT_HANDOFF_RUBRICS#1.ScopeFidelity triage -> billing [root triage, trace 1]",
		"seams: EXPECT_HANDOFF_RUBRICS#1.ScopeFidelity triage -> billing (2) [root triage, trace 1]",
		"budget: EXPECT_AGENT_BUDGET#2 [root triage, trace 1]",
		"budget: EXPECT_AGENT_BUDGET#2 [root triage, trace 2]",
		"budget: EXPECT_AGENT_BUDGET#2 [root intake]",
		"budget: EXPECT_AGENT_BUDGET#2 [root span POST /chat]",
	}, names(one))
	require.Equal(t, names(one), names(two), "another run of the same scenario, other trace and span ids")

	// The trace and span ids are in the body: "trace 1" is the triage trace that started
	// first, whatever its id.
	budget := one.Suites[1].Cases
	require.Equal(t, "trace: 0b0b0b0b0b0b0b0b0b0b0b0b0b0b0b0b", budget[0].SystemOut)
	require.Equal(t, "trace: 0a0a0a0a0a0a0a0a0a0a0a0a0a0a0a0a", budget[1].SystemOut)
	require.Equal(t, "trace: 1a1a1a1a1a1a1a1a1a1a1a1a1a1a1a1a", two.Suites[1].Cases[0].SystemOut)
	leak := one.Suites[0].Cases[1].Failure
	require.NotNil(t, leak)
	require.Contains(t, leak.Body, "trace: 0b0b0b0b0b0b0b0b0b0b0b0b0b0b0b0b\nspans: 0000000000000b03")

	// time is the trace's duration, timestamp its first span's start; a suite and the report
	// span their traces.
	t0 := time.Unix(0, 0).UTC()
	for _, c := range budget {
		_, err := time.Parse(time.RFC3339Nano, c.Timestamp)
		require.NoError(t, err, c.Timestamp)
	}
	start, err := time.Parse(time.RFC3339Nano, budget[0].Timestamp)
	require.NoError(t, err)
	require.True(t, start.After(t0))
	require.Equal(t, "0.100", budget[0].Time)
	require.Equal(t, "0.060", budget[1].Time)
	require.Equal(t, "0.010", budget[2].Time)
	require.Equal(t, "0.001", budget[3].Time)
	second, err := time.Parse(time.RFC3339Nano, budget[1].Timestamp)
	require.NoError(t, err)
	require.Equal(t, 200*time.Millisecond, second.Sub(start))
	require.Equal(t, budget[0].Timestamp, one.Suites[1].Timestamp)
	require.Equal(t, "0.401", one.Suites[1].Time, "from the first trace's start to the last one's end")
	require.Equal(t, "0.100", one.Suites[0].Time)
	require.Equal(t, one.Suites[1].Timestamp, one.Timestamp)
	require.Equal(t, "0.401", one.Time)
}
