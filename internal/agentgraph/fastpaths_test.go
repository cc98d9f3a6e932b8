package agentgraph

import (
	"encoding/json"
	"math/rand/v2"
	"slices"
	"testing"

	"github.com/stretchr/testify/require"
	"go.opentelemetry.io/collector/pdata/pcommon"
	"go.opentelemetry.io/collector/pdata/ptrace"
)

// The string tests that replaced a regexp or a decode on a per-span path must decide as
// the regexp or the decode did.

func TestTransferSuffixIsTheRegexp(t *testing.T) {
	names := []string{
		"", "transfer_to", "transfer_to_", "transfer_to_x", "transfer_to_agent", "handoff_to_", "handoff_to_billing",
		"transfer_to_a\nb", "transfer_to_\n", "handoff_to_x\n", "xtransfer_to_y", "transfer_to__", "transfer_tox",
		"handoff_to_\xff", "transfer_to_é", "Transfer_to_x", "handoff_to_handoff_to_x",
	}
	for _, td := range agreementTraces(t) {
		for _, spans := range SpansOf(td) {
			for _, s := range spans {
				names = append(names, s.Pdata.Name(), attrStr(s.Pdata, "gen_ai.tool.name"), attrStr(s.Pdata, "tool.name"))
			}
		}
	}
	for _, name := range names {
		m := transferByName.FindStringSubmatch(name)
		got, ok := transferSuffix(name)
		if m == nil {
			require.False(t, ok, "%q", name)
			continue
		}
		require.True(t, ok, "%q", name)
		require.Equal(t, m[1], got, "%q", name)
	}
}

func TestMayDecodeToKeepsEveryMatch(t *testing.T) {
	decode := func(raw string) string {
		var meta struct {
			Node string `json:"langgraph_node"`
		}
		_ = json.Unmarshal([]byte(raw), &meta)
		return meta.Node
	}
	raws := []string{
		`{"langgraph_node":"planner"}`, `{"LANGGRAPH_NODE":"planner"}`, `{"langgraph_node":"pl\u0061nner"}`,
		"{\"langgraph_node\":\"pl\xffnner\"}", `{"langgraph_node":1}`, `not json`, `{"other":"planner"}`,
	}
	names := []string{"planner", "pl\uFFFDnner", "", "x"}
	for _, td := range agreementTraces(t) {
		for _, spans := range SpansOf(td) {
			for _, s := range spans {
				if raw := attrStr(s.Pdata, "metadata"); raw != "" {
					raws = append(raws, raw)
					names = append(names, s.Pdata.Name(), decode(raw))
				}
			}
		}
	}
	require.Greater(t, len(raws), 20, "captures with LangGraph metadata")
	// What it skips: a name the text does not hold.
	require.False(t, mayDecodeTo(`{"langgraph_node":"planner"}`, "writer"))
	require.True(t, mayDecodeTo(`{"langgraph_node":"plan"}`, "plan"))
	for _, raw := range raws {
		for _, name := range names {
			if decode(raw) == name {
				require.True(t, mayDecodeTo(raw, name), "%q in %q", name, raw)
			}
		}
	}
}

// sortSpansPacked orders spans exactly as sortSpansByKey does, or declines.
func TestSortSpansPackedIsByKey(t *testing.T) {
	check := func(name string, spans []*Span, wantPacked bool) {
		seen := map[pcommon.SpanID]bool{} // ids are unique once Build drops duplicates
		spans = slices.DeleteFunc(slices.Clone(spans), func(s *Span) bool {
			dup := seen[s.ID]
			seen[s.ID] = true
			return dup
		})
		want, got := slices.Clone(spans), slices.Clone(spans)
		sortSpansByKey(want)
		require.Equal(t, wantPacked, sortSpansPacked(got), name)
		if wantPacked {
			require.Equal(t, want, got, name)
		}
	}
	rng := rand.New(rand.NewPCG(1, 2))
	n := 0
	for f, td := range agreementTraces(t) {
		for _, spans := range SpansOf(td) {
			check(f, spans, true)
			for range 3 {
				sh := slices.Clone(spans)
				rng.Shuffle(len(sh), func(i, j int) { sh[i], sh[j] = sh[j], sh[i] })
				check(f+" shuffled", sh, true)
			}
			n++
		}
	}
	require.Greater(t, n, 30)
	// Ties on start times (ordered by id), sorted input, and ranges too wide to pack.
	mk := func(starts ...uint64) []*Span {
		var out []*Span
		for i, st := range starts {
			sp := ptrace.NewSpan()
			sp.SetStartTimestamp(pcommon.Timestamp(st))
			id := pcommon.SpanID{byte(rng.Uint32()), byte(i), 1}
			out = append(out, &Span{Pdata: sp, ID: id})
		}
		return out
	}
	check("ties", mk(5, 5, 5, 1, 5, 1, 9, 9), true)
	check("sorted with ties", mk(1, 2, 2, 2, 3), true)
	check("sorted", mk(1, 2, 3, 4), true)
	check("2^40-1 apart", mk(1<<50, 1<<50+1<<40-1, 1<<50+7), true)
	check("2^40 apart", mk(1<<50, 1<<50+1<<40, 3), false)
	check("zero and max", mk(0, ^uint64(0)), false)
}

// BenchmarkSortSpans: sortSpans on every trace of the processor benchmarks' workload, in
// the order SpansOf gives them, by (start, id) keys and packed.
func BenchmarkSortSpans(b *testing.B) {
	traces := workloadTraces(b)
	spans := 0
	for _, tr := range traces {
		spans += len(tr)
	}
	work := make([][]*Span, len(traces))
	for i, tr := range traces {
		work[i] = slices.Clone(tr)
	}
	for _, sorter := range []struct {
		name string
		sort func([]*Span)
	}{{"by_key", sortSpansByKey}, {"packed", func(s []*Span) { sortSpansPacked(s) }}} {
		b.Run(sorter.name, func(b *testing.B) {
			cpu0 := perfProcessCPU()
			for b.Loop() {
				for i, tr := range traces {
					copy(work[i], tr)
					sorter.sort(work[i])
				}
			}
			b.ReportMetric(float64((perfProcessCPU()-cpu0).Nanoseconds())/float64(b.N*spans), "cpu-ns/span")
		})
	}
}

// readParams reads the transfer argument keys and the context as Params decodes them, on
// the arguments of every tool call of every capture and corpus trace and on edge cases.
func TestReadParamsIsParams(t *testing.T) {
	args := []string{
		``, `{}`, ` {"agent_name":"a"}`, `{"agent_name":"a"}`, `{"agent_name":"a","agent_name":"b"}`,
		`{"agent_name":1}`, `{"agent_name":null}`, `{"agent_name":"\u0062ill\"ing"}`, "{\"agent_name\":\"x\xffy\"}",
		`{"kwargs":{"agentId":"k"}}`, `{"args":[1],"kwargs":{"agentId":"k"}}`, `{"args":[],"kwargs":{"agent":"k"},"x":1}`,
		`{"kwargs":{"agent":"k"},"agent":"top"}`, `{"kwargs":null,"agent":"top"}`, `{"kwargs":"s","agent":"top"}`,
		`{"agent":"a","n":1e999}`, `{"agent":"a"`, `["agent_name"]`, `{"coworker":"c","subagent_type":"s"}`,
		`{"kwargs":{"kwargs":{"agent":"deep"}}}`, `{"args":{"agent":"p"},"kwargs":{}}`,
		`{"agent":"a","context":null}`, `{"agent":"a","context":"why"}`, `{"agent":"a","context":{"b":[1,2.50,"<x>"],"a":1e2}}`,
		`{"kwargs":{"context":["c"]}}`, `{"context":""}`, `{"context":"  "}`, `{"context":{"z":1,"z":2}}`,
	}
	for _, td := range agreementTraces(t) {
		for id, spans := range SpansOf(td) {
			for _, inv := range Build(id, spans, Options{}).Invocations {
				for _, tc := range append(append([]*ToolCall{}, inv.ToolCalls...), inv.DelegationCalls...) {
					args = append(args, tc.Args.Text)
				}
			}
		}
	}
	// The 28 edge cases and the 94 tool-call arguments of the bundled captures (more with the
	// shared corpus beside the checkout, which a fresh clone does not have).
	require.GreaterOrEqual(t, len(args), 122)
	for _, a := range args {
		scanned := readParams(&ToolCall{Args: Value{Text: a}})
		decoded := (&ToolCall{Args: Value{Text: a}}).Params()
		for _, key := range transferArgKeys {
			want, _ := decoded[key].(string)
			require.Equal(t, want, scanned.str(key), "%s in %q", key, a)
		}
		c, ok := decoded["context"]
		want := ""
		if ok = ok && c != nil; ok {
			want = jsonText(c)
		}
		got, gok := scanned.text("context")
		require.Equal(t, []any{want, ok}, []any{got, gok}, "context in %q", a)
	}
}
