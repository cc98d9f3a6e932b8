package cluster

import (
	"fmt"
	"regexp"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
)

func TestCatalogue(t *testing.T) {
	require.Equal(t, []Name{DroppedConstraint, WrongDispatch, ScopeBleed, IntegrationSkip, RecoveryBlind, BudgetBlowout, Loop, Leak, Other}, Names())
	for _, c := range Catalogue() {
		require.True(t, c.Name.Valid(), c.Name)
		require.NotEmpty(t, c.Description, c.Name)
		require.NotEmpty(t, c.Fix, c.Name)
	}
	require.Equal(t, Other, Name("").Or())
	require.Equal(t, Other, Name("bogus").Or())
	require.Equal(t, Leak, Leak.Or())
	require.Equal(t, "make planner emit the constraints researcher needs (caps, date ranges, exclusion lists, ids) as a JSON block in the handoff",
		FixFor(DroppedConstraint, "planner", "researcher"))
	require.Equal(t, "add an explicit dispatch-or-inline criterion to the sender's prompt that says when the receiver is the right receiver",
		FixFor(WrongDispatch, "", ""))
}

func TestNormalize(t *testing.T) {
	for _, tc := range []struct{ in, want string }{
		// Span ids, trace ids and UUIDs.
		{"archiver (span 0000000000000c03) made 2 tool calls, over maxToolCalls 1", "archiver (span <id>) made <n> tool calls, over maxToolCalls <n>"},
		{"trace 4bf92f3577b34da6a3ce929d0e0e4736 run 123e4567-e89b-12d3-a456-426614174000", "trace <id> run <id>"},
		// Words of hex letters alone stay.
		{"the deadbeef accepted", "the deadbeef accepted"},
		// Durations, token counts, scores and percentages.
		{"researcher (span 00000000000000a2) took 1534.25ms, over maxDurationMs 1000", "researcher (span <id>) took <duration>, over maxDurationMs <n>"},
		{"took 2m30s and 5 seconds", "took <duration> and <duration>"},
		{"planner used 12345 tokens, over maxTokens 10000", "planner used <n> tokens, over maxTokens <n>"},
		{"does not carry researcher's return value (12% of its words) score 0.25", "does not carry researcher's return value (<n>% of its words) score <n>"},
		// Timestamps.
		{"at 2026-12-01T10:55:33.123Z it failed", "at <time> it failed"},
		// Ids in arguments lose their digits; agent and model names keep theirs.
		{`agent2 used context planner never supplied: ORD-4471 in lookup(ord_88)`, `agent2 used context planner never supplied: ORD-<n> in lookup(ord_<n>)`},
		// Content quoted from the trace: strings and JSON values.
		{`booking_specialist used context triage never supplied: "LC-88412" in book_table`, `booking_specialist used context triage never supplied: <text> in book_table`},
		{
			`agent triage: expected ` + "`status == \"failed\"`" + `, got status "completed", error "", output {"text":"it is \"sunny\"","n":[1,{"a":"}"}]} (status: ok)`,
			`agent triage: expected ` + "`status == \"failed\"`" + `, got status <text>, error <text>, output <json> (status: ok)`,
		},
		{`output [{"role":"user","parts":[{"text":"Paris`, `output <json>`},
		{`output {"content":{"parts":[{"text":"Paris…, and (status: ok)`, `output <json>, and (status: ok)`},
		{`delegation cycle among agents {triage, weather_specialist} [a, b]`, `delegation cycle among agents {triage, weather_specialist} [a, b]`},
		{"gpt-4o answered", "gpt-4o answered"},
		// Counts written "name xN".
		{"other senders to researcher: planner x3, critic x12", "other senders to researcher: planner x<n>, critic x<n>"},
		{"  a \n\t b  ", "a b"},
		// Configured patterns and expressions stay as they are.
		{"agent a: 2 of 3 add calls match `invocations == 1 and params.a == 4`, and 2 more", "agent a: <n> of <n> add calls match `invocations == 1 and params.a == 4`, and <n> more"},
		{"handoff a -> b (span 00000000000000a1): the handoff content lacks /budget: \\d+ USD/; /[0-9]{4}/ too", "handoff a -> b (span <id>): the handoff content lacks /budget: \\d+ USD/; /[0-9]{4}/ too"},
	} {
		require.Equal(t, tc.want, Normalize(tc.in), tc.in)
	}
}

// TestSignatureStable: the same failure on two traces, with other span ids, counts,
// durations and token numbers, has one signature; another step, pair, cluster or wording
// has another.
func TestSignatureStable(t *testing.T) {
	a := Key{
		Case: "c", Step: "EXPECT_AGENT_BUDGET#2", Cluster: BudgetBlowout,
		Message: "researcher (span 00000000000000a2) used 15230 tokens, over maxTokens 10000",
	}
	b := a
	b.Message = "researcher (span 9f86d081884c7d65) used 10001 tokens, over maxTokens 10000"
	require.Equal(t, a.Signature(), b.Signature())
	require.Len(t, a.Signature(), 16)

	for _, other := range []func(k *Key){
		func(k *Key) { k.Case = "d" },
		func(k *Key) { k.Step = "EXPECT_AGENT_BUDGET#3" },
		func(k *Key) { k.From, k.To = "planner", "researcher" },
		func(k *Key) { k.Cluster = Other },
		func(k *Key) { k.Message = "researcher (span 00000000000000a2) made 3 tool calls, over maxToolCalls 2" },
	} {
		k := a
		other(&k)
		require.NotEqual(t, a.Signature(), k.Signature(), k)
	}
	// An empty or unknown cluster signs as other.
	k := a
	k.Cluster = ""
	o := a
	o.Cluster = Other
	require.Equal(t, o.Signature(), k.Signature())
}

func TestGrouper(t *testing.T) {
	at := func(s int) time.Time { return time.Unix(1_700_000_000+int64(s), 0).UTC() }
	leak := func(trace string, s int, span string) Failure {
		return Failure{
			Key: Key{
				Case: "c", Step: "EXPECT_HANDOFF_CONTEXT#1", Cluster: Leak,
				Message: "handoff planner -> researcher (span " + span + "): the handoff content contains forbidden /sk-[A-Za-z0-9]+/",
			},
			TraceID: trace, Seen: at(s),
		}
	}
	fails := []Failure{
		leak("t5", 50, "00000000000000a5"), leak("t1", 10, "00000000000000a1"), leak("t3", 30, "00000000000000a3"),
		leak("t1", 10, "00000000000000b1"), leak("t4", 40, "00000000000000a4"), leak("t2", 20, "00000000000000a2"),
		{Key: Key{
			Case: "c", Step: "steps[2].ScopeFidelity", From: "planner", To: "coder", Cluster: ScopeBleed,
			Message: "coder called shell (span 00000000000000c1), outside handoff.allowed_tools [read_file]",
		}, TraceID: "t9"},
		{Key: Key{Case: "c", Step: "expected_result", Message: "agent a: expected `x`, got 3"}, TraceID: "t2", Seen: at(20)},
	}
	var groups []Summary
	for _, order := range [][]int{{0, 1, 2, 3, 4, 5, 6, 7}, {7, 6, 5, 4, 3, 2, 1, 0}} {
		gr := NewGrouper()
		for _, i := range order {
			gr.Add(fails[i])
		}
		groups = append(groups, gr.Summary())
	}
	require.Equal(t, groups[0], groups[1], "the grouping does not depend on arrival order")
	s := groups[0]
	require.Equal(t, []Total{
		{Cluster: ScopeBleed, Count: 1, Signatures: 1, ImmediateFix: FixFor(ScopeBleed, "", "")},
		{Cluster: Leak, Count: 6, Signatures: 1, ImmediateFix: FixFor(Leak, "", "")},
		{Cluster: Other, Count: 1, Signatures: 1, ImmediateFix: FixFor(Other, "", "")},
	}, s.Clusters)
	require.Len(t, s.Groups, 3)
	g := s.Groups[1]
	first, last := at(10), at(50)
	require.Equal(t, Group{
		Cluster: Leak, Signature: fails[0].Key.Signature(), Case: "c", Step: "EXPECT_HANDOFF_CONTEXT#1",
		Message: "handoff planner -> researcher (span <id>): the handoff content contains forbidden /sk-[A-Za-z0-9]+/",
		Count:   6, Traces: 5, FirstSeen: &first, LastSeen: &last, TraceIDs: []string{"t1", "t2", "t3"},
		ImmediateFix: FixFor(Leak, "", ""),
	}, g)
	require.Equal(t, "tighten coder's scope: offer only the tools it needs and add a one-shot example of the boundary to its instructions", s.Groups[0].ImmediateFix)
	require.Nil(t, s.Groups[0].FirstSeen, "no trace start known")
	require.Equal(t, Other, s.Groups[2].Cluster, "a failure with no cluster is other")
}

func TestGrouperBound(t *testing.T) {
	gr := NewGrouper()
	for i := range MaxGroups + 5 {
		gr.Add(Failure{Key: Key{Case: "c", Step: fmt.Sprintf("steps[%d]", i), Cluster: Loop}, TraceID: "t"})
	}
	s := gr.Summary()
	require.Len(t, s.Groups, MaxGroups)
	require.Equal(t, []Total{{Cluster: Loop, Count: MaxGroups + 5, Signatures: MaxGroups, Unlisted: 5, ImmediateFix: FixFor(Loop, "", "")}}, s.Clusters)
}

// BenchmarkSignature: the cost a failed result adds (passing results are not signed).
func BenchmarkSignature(b *testing.B) {
	k := Key{
		Case: "weather", Step: "EXPECT_HANDOFF_RUBRICS#2.RecoveryOnError", From: "triage", To: "weather_specialist", Cluster: RecoveryBlind,
		Message: `get_weather (span 7bd8701239704d0a) failed ("Error: weather service: unknown city Atlantis"); weather_specialist did not retry it, ` +
			"fall back or fail, and triage, to which weather_specialist handed control back (span 6effc93119a0a2a3), did not retry, " +
			"fall back, escalate or fail: the error was swallowed",
	}
	b.ReportAllocs()
	for b.Loop() {
		_ = k.Signature()
	}
}

// FuzzMayHoldDuration: where mayHoldDuration says no, durationRe finds nothing, so skipping
// it leaves the signature as it was. The seeds are the durations and near misses of the
// messages; `go test -fuzz FuzzMayHoldDuration ./internal/cluster/` searches further.
func FuzzMayHoldDuration(f *testing.F) {
	for _, s := range []string{
		"took 1534.25ms, over maxDurationMs 1000", "took 2m30s and 5 seconds", "1.5h", "3 hours", "2\tminutes",
		"250µs", "7us", "12ns", "1.5.3s", "4.x", "12 tokens", "9", "1m", "x1s", "span 0000000000000c03",
		"tokens 10, duration unknown (span 00000000000000a2 has no end time), tool calls 3", "1 \u00a0s", "5\u00b5s", "",
	} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		if !mayHoldDuration(s) && durationRe.MatchString(s) {
			t.Fatalf("mayHoldDuration(%q) is false, yet durationRe matches %q", s, durationRe.FindString(s))
		}
	})
}

// FuzzMayHoldTime: where mayHoldTime says no, timeRe finds nothing, so skipping it leaves the
// signature as it was. `go test -fuzz FuzzMayHoldTime ./internal/cluster/` searches further.
func FuzzMayHoldTime(f *testing.F) {
	for _, s := range []string{
		"at 2026-12-01T12:40:24Z", "2026-12-01 12:40:24.123+01:00", "2026-12-01T12:40:24", "tool calls: 3",
		"12026-12-01T12:40:24Z", "2026-1-01T12:40:24Z", "2026-12-01", "12:40:24", "x2026-12-01T12:40:24-0700", "",
	} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		if !mayHoldTime(s) && timeRe.MatchString(s) {
			t.Fatalf("mayHoldTime(%q) is false, yet timeRe matches %q", s, timeRe.FindString(s))
		}
	})
}

// FuzzNumberScan: replaceNumbers' scan (numberEnd) finds the numbers the expression
// `\d+(?:[.,]\d+)*` finds, at the same places.
func FuzzNumberScan(f *testing.F) {
	numberRe := regexp.MustCompile(`\d+(?:[.,]\d+)*`)
	for _, s := range []string{
		"tokens 1,234,567 over 1000", "score 0.75.", "1.5.3s", "v1..2", "3,", ",4", "agent2 x3 gpt-4o", "12.x", "९0", "",
	} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		var got [][]int
		for i := 0; i < len(s); {
			if !isDigit(s[i]) {
				i++
				continue
			}
			end := numberEnd(s, i)
			got = append(got, []int{i, end})
			i = end
		}
		want := numberRe.FindAllStringIndex(s, -1)
		if len(got) != len(want) {
			t.Fatalf("%q: scan found %v, numberRe %v", s, got, want)
		}
		for i := range got {
			if got[i][0] != want[i][0] || got[i][1] != want[i][1] {
				t.Fatalf("%q: scan found %v, numberRe %v", s, got, want)
			}
		}
	})
}
