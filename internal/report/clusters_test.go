package report

import (
	"bytes"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/otelcol-handoff/otelcol-handoff/internal/cluster"
	"github.com/otelcol-handoff/otelcol-handoff/internal/rules"
)

// clusterCaptures are the real captures of the failure-cluster run (testdata/cluster-cases.yaml).
var clusterCaptures = []string{
	"../../testdata/traces/google-adk-ok.json",
	"../../testdata/traces/strands-ok.json",
	"../../testdata/traces/strands-ok-latest-semconv.json",
	"../../testdata/traces/mastra-ok.json",
	"../../testdata/traces/openai-agents-ok.json",
	"../../testdata/traces/scenario-strands-refund-swarm.json",
	"../../testdata/traces/scenario-strands-error-swallowed.json",
	"../rules/testdata/captures/strands-handback-swallowed.json",
	"../rules/testdata/captures/adk-fanout-dropped.json",
	"../rules/testdata/captures/adk-scope-fabricated.json",
}

// clusterRun evaluates testdata/cluster-cases.yaml over the captures in the given order.
func clusterRun(t *testing.T, order []int) *Run {
	t.Helper()
	ev := casesEvaluator(t, "cluster-cases.yaml")
	run := NewRun(ev.CaseNames())
	for _, i := range order {
		g := fileGraph(t, clusterCaptures[i])
		run.Add(g, ev.Evaluate(g, true))
	}
	return run
}

// TestClusterGolden: a mixed run over real captures where every cluster appears, grouped by
// cluster and signature (testdata/golden/clusters.md, checked by reading it against the
// spans: see the comments of testdata/cluster-cases.yaml). The grouping does not depend on
// the order the traces arrive in.
func TestClusterGolden(t *testing.T) {
	forward := []int{0, 1, 2, 3, 4, 5, 6, 7, 8, 9}
	run := clusterRun(t, forward)
	var b bytes.Buffer
	run.clusterSection(&b)
	checkGolden(t, "clusters.md", b.Bytes())

	backward := []int{9, 8, 7, 6, 5, 4, 3, 2, 1, 0}
	require.Equal(t, run.Clusters(), clusterRun(t, backward).Clusters())

	s := run.Clusters()
	var seen []cluster.Name
	for _, c := range s.Clusters {
		seen = append(seen, c.Cluster)
	}
	require.Equal(t, cluster.Names(), seen, "every cluster appears, in catalogue order")

	// The same budget failure on the five weather traces: one signature, counted five
	// times, the three earliest traces named (OpenAI Agents 05:42:08.692, Mastra 05:42:15.242,
	// Google ADK 05:42:22.044), last seen on strands-ok-latest-semconv (05:42:31.797).
	var budget cluster.Group
	for _, g := range s.Groups {
		if g.Cluster == cluster.BudgetBlowout {
			budget = g
		}
	}
	require.Equal(t, 5, budget.Count)
	require.Equal(t, 5, budget.Traces)
	require.Equal(t, []string{"a8c887d1a2380005c06d5d9523f0dc83", "a45664265c11d1cca98a55c29df6e8b6", "f4f85fa1287a499869aa8f6a54cd202a"}, budget.TraceIDs)
	require.Equal(t, "2026-11-30T05:42:08.692Z", seenAt(budget.FirstSeen))
	require.Equal(t, "2026-11-30T05:42:31.797Z", seenAt(budget.LastSeen))
	require.Equal(t, "weather_specialist (span <id>) used <n> tokens, over maxTokens <n>", budget.Message)

	// The full Markdown report carries the section, after the failures.
	md := string(run.Markdown())
	require.Contains(t, md, "\n## Failure clusters\n")
	require.Less(t, strings.Index(md, "## Failures\n"), strings.Index(md, "## Failure clusters\n"))
	require.Less(t, strings.Index(md, "## Failure clusters\n"), strings.Index(md, "## Failing traces\n"))
	// And the HTML report, each representative drawn trace linked.
	page := string(run.html(nil))
	require.Contains(t, page, `<h2 id="clusters">Failure clusters</h2>`)
	require.Contains(t, page, `<td><code>recovery_blind</code></td>`)
}

// TestClusterSignatureStable: two traces of the same failure (Strands, twice: other trace and
// span ids, other semantic-convention versions) give their results one signature, which the
// results carry; the JSON-lines report writes it with the cluster.
func TestClusterSignatureStable(t *testing.T) {
	ev := casesEvaluator(t, "cluster-cases.yaml")
	budgetOf := func(path string) rules.Result {
		for _, r := range ev.Evaluate(fileGraph(t, path), true) {
			if r.Step == "EXPECT_AGENT_BUDGET#2" {
				return r
			}
		}
		t.Fatalf("no budget result on %s", path)
		return rules.Result{}
	}
	a, c := budgetOf(clusterCaptures[1]), budgetOf(clusterCaptures[2])
	require.NotEqual(t, a.TraceID, c.TraceID)
	require.NotEqual(t, a.Message, c.Message, "other span ids in the messages")
	require.Equal(t, cluster.BudgetBlowout, a.Cluster)
	require.Equal(t, a.Signature, c.Signature)
	require.Equal(t, cluster.Key{Case: "weather", Step: "EXPECT_AGENT_BUDGET#2", Cluster: cluster.BudgetBlowout, Message: a.Message}.Signature(), a.Signature)

	path := filepath.Join(t.TempDir(), "r.jsonl")
	w, err := OpenJSONLines(path)
	require.NoError(t, err)
	require.NoError(t, w.Write([]rules.Result{a}, nil))
	require.NoError(t, w.Close())
	line, err := os.ReadFile(path)
	require.NoError(t, err)
	require.Contains(t, string(line), `"cluster":"budget_blowout","signature":"`+a.Signature+`"`)
}
