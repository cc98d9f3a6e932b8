package cluster_test

import (
	"maps"
	"path/filepath"
	"slices"
	"testing"

	"github.com/stretchr/testify/require"
	"go.opentelemetry.io/collector/confmap"
	"go.opentelemetry.io/collector/pdata/pcommon"
	"go.opentelemetry.io/collector/pdata/ptrace"

	"github.com/otelcol-handoff/otelcol-handoff/internal/agentgraph"
	"github.com/otelcol-handoff/otelcol-handoff/internal/cluster"
	"github.com/otelcol-handoff/otelcol-handoff/internal/rules"
	"github.com/otelcol-handoff/otelcol-handoff/internal/spanfile"
	"github.com/otelcol-handoff/otelcol-handoff/internal/spanwalk"
)

// failingCases are rules made to fail on g, so their messages quote what the trace holds:
// budgets of 1 on every agent (tokens, durations, tool calls, span ids), delegations that
// never happen, a depth of 0, and the test-case fields over the root agent's output and
// tools (quoted content, JSON, counts).
func failingCases(g *agentgraph.Graph) []any {
	agents := map[string]bool{}
	tools := map[string]bool{}
	for _, inv := range g.Invocations {
		agents[inv.Name] = true
		for _, c := range inv.ToolCalls {
			tools[c.Name] = true
		}
	}
	names := func(m map[string]bool) []string {
		delete(m, "")
		return slices.Sorted(maps.Keys(m))
	}
	steps := []any{map[string]any{"action": "ASSERT_AGENT_TOPOLOGY", "maxDepth": 0}}
	for _, a := range names(agents) {
		steps = append(steps,
			map[string]any{"action": "EXPECT_AGENT_BUDGET", "agentName": a, "maxTokens": 1, "maxToolCalls": 0, "maxDurationMs": 1},
			map[string]any{"action": "EXPECT_DELEGATION_TO", "agentName": a, "minInvocations": 5, "maxInvocations": 6},
			map[string]any{"action": "EXPECT_DELEGATION_TO", "agentName": a, "fromAgent": "nobody"},
		)
	}
	tc := map[string]any{"name": "tests", "expected_result": `status == "failed" and "nothing" in error`}
	if ts := names(tools); len(ts) > 0 {
		var calls, none []any
		for _, tool := range ts {
			calls = append(calls, tool+": invocations == 99", tool+": invocations == 1 and params.x == 4")
			none = append(none, tool)
		}
		tc["expected_tool_calls"], tc["expected_no_tool_calls"] = calls, none
		order := make([]any, 0, len(ts))
		for i := len(ts) - 1; i >= 0; i-- {
			order = append(order, ts[i])
		}
		tc["expected_tool_call_order"] = append(order, "never_called")
	}
	return []any{map[string]any{"name": "steps", "steps": steps}, tc}
}

// TestSignaturesMatchOldOnResults: over every bundled trace (the real-client captures, the
// third-party corpus and the seed-000 fixtures), the results of rules made to fail sign and
// normalize as the old implementation did (cluster.OldSignature), and so does every string
// the traces hold (span names, attribute values, event names), which is what messages quote.
func TestSignaturesMatchOldOnResults(t *testing.T) {
	var files []string
	for _, dir := range []string{"traces", "corpus", "seed000"} {
		m, err := filepath.Glob(filepath.Join("..", "..", "testdata", dir, "*.json"))
		require.NoError(t, err)
		files = append(files, m...)
	}
	require.GreaterOrEqual(t, len(files), 29)
	same := func(what, s string) {
		require.Equal(t, cluster.OldNormalize(s), cluster.Normalize(s), what)
	}
	messages, failures := 0, 0
	for _, path := range files {
		td, err := spanfile.ReadAll(path)
		require.NoError(t, err, path)
		for _, g := range agentgraph.BuildAll(td, agentgraph.Options{}) {
			var cfg struct {
				Cases []rules.CaseConfig `mapstructure:"cases"`
			}
			require.NoError(t, confmap.NewFromStringMap(map[string]any{"cases": failingCases(g)}).Unmarshal(&cfg), path)
			ev, err := rules.Compile(cfg.Cases, rules.Options{})
			require.NoError(t, err, path)
			for _, r := range ev.Evaluate(g, true) {
				for _, s := range []string{r.Message, r.Expected, r.Actual} {
					same(path+": "+r.Step, s)
				}
				k := cluster.Key{Case: r.Case, Step: r.Step, From: r.From, To: r.To, Cluster: r.Cluster, Message: r.Message}
				require.Equal(t, cluster.OldSignature(k), k.Signature(), "%s: %s", path, r.Message)
				messages++
				if r.Outcome == rules.Fail {
					require.Equal(t, cluster.OldSignature(k), r.Signature, r.Message)
					failures++
				}
			}
		}
		spanwalk.Each(td, func(_ pcommon.Resource, sp ptrace.Span) {
			same(path, sp.Name())
			sp.Attributes().Range(func(_ string, v pcommon.Value) bool {
				same(path, v.AsString())
				return true
			})
			for i := 0; i < sp.Events().Len(); i++ {
				same(path, sp.Events().At(i).Name())
			}
		})
	}
	require.Greater(t, failures, 300, "of %d results", messages)
}
