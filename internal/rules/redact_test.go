package rules

import (
	"encoding/hex"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"
	"go.opentelemetry.io/collector/pdata/pcommon"
	"go.opentelemetry.io/collector/pdata/ptrace"

	"github.com/otelcol-handoff/otelcol-handoff/internal/rules/steps"
	"github.com/otelcol-handoff/otelcol-handoff/internal/spanwalk"

	"github.com/otelcol-handoff/otelcol-handoff/internal/agentgraph"
	"github.com/otelcol-handoff/otelcol-handoff/internal/redact"
	"github.com/otelcol-handoff/otelcol-handoff/internal/rules/check"
)

func TestRedactResults(t *testing.T) {
	shared := &JudgeVerdict{Model: "m", Reason: "quoted jane@example.com back"}
	results := []Result{{
		TraceID: "4bf92f3577b34da6a3ce929d0e0e4736", Case: "refunds", Step: "EXPECT#1",
		Expected: `params.card == "x"`, Actual: `{"card":"4111 1111 1111 1111"}`,
		Message: "saw card 4111111111111111 and key AKIAIOSFODNN7EXAMPLE", Spans: []string{"44fecc1eed6b4721"},
		From: "triage", To: "mail jane@example.com", Judge: shared,
	}, {Case: "clean", Message: "nothing to mask", Judge: shared}}
	Redact(results, nil)
	r := results[0]
	require.Equal(t, `{"card":"[REDACTED:card]"}`, r.Actual)
	require.Equal(t, "saw card [REDACTED:card] and key [REDACTED:api_key]", r.Message)
	require.Equal(t, `params.card == "x"`, r.Expected)
	require.Equal(t, "mail [REDACTED:email]", r.To)
	require.Equal(t, "quoted [REDACTED:email] back", r.Judge.Reason)
	require.Equal(t, "quoted jane@example.com back", shared.Reason, "a shared verdict is copied, not changed")
	require.Equal(t, "4bf92f3577b34da6a3ce929d0e0e4736", r.TraceID)
	require.Equal(t, []string{"44fecc1eed6b4721"}, r.Spans)

	off, err := redact.Config{DisableDetectors: []string{redact.All}}.Compile()
	require.NoError(t, err)
	kept := RedactResult(Result{Message: "4111111111111111"}, off)
	require.Equal(t, "4111111111111111", kept.Message)
}

// TestRedactBoundsTexts: a result quoting a 10 MB agent name is cut, masked first.
func TestRedactBoundsTexts(t *testing.T) {
	huge := strings.Repeat("a", 10<<20)
	r := RedactResult(Result{
		Message: "agent " + huge + " did not run", Actual: huge, Expected: "ok",
		From: huge, To: "card 4111111111111111 " + huge,
	}, nil)
	require.Len(t, r.Message, maxResultText+len("…"))
	require.True(t, strings.HasPrefix(r.Message, "agent aaa") && strings.HasSuffix(r.Message, "a…"))
	require.Len(t, r.Actual, maxResultText+len("…"))
	require.Equal(t, "ok", r.Expected)
	require.Len(t, r.From, maxResultName+len("…"))
	require.True(t, strings.HasPrefix(r.To, "card [REDACTED:card] aaa"), r.To[:40])
	require.Len(t, r.To, maxResultName+len("…"))
}

// TestRedactKeepsQuotedSpanIDs: a span id is 16 hex digits; about one in 40,000 random ids
// holds no letter, starts with 2-6 and passes the Luhn check, and the card detector would
// take it for a card number. The strands-ok capture with weather_specialist's agent span
// renamed to such an id (3552568167993130, a real id of a CI run): its budget failure quotes
// the id, and the id stays readable through redaction while a card number in the same
// message is still masked.
func TestRedactKeepsQuotedSpanIDs(t *testing.T) {
	const old, cardLike = "6bcab0b4c887d392", "3552568167993130"
	require.Equal(t, "x [REDACTED:card] y", redact.Default().Redact("x "+cardLike+" y"), "the id must look like a card")
	td := readCapture(t, "strands-ok")
	var oldID, newID pcommon.SpanID
	_, _ = hex.Decode(oldID[:], []byte(old))
	_, _ = hex.Decode(newID[:], []byte(cardLike))
	renamed := 0
	spanwalk.Each(td, func(_ pcommon.Resource, s ptrace.Span) {
		if s.SpanID() == oldID {
			s.SetSpanID(newID)
			renamed++
		} else if s.ParentSpanID() == oldID {
			s.SetParentSpanID(newID)
		}
	})
	require.Equal(t, 1, renamed)
	limit := int64(100)
	r := budgetResult(t, td, StepConfig{Kind: &steps.BudgetStep{AgentName: "weather_specialist", MaxTokens: &limit}})
	require.Equal(t, Fail, r.Outcome, r.Message)
	require.Contains(t, r.Message, "(span "+cardLike+")")
	require.Contains(t, r.Spans, cardLike)

	r.Message += "; paid with 4111111111111111"
	masked := RedactResult(r, nil)
	require.Contains(t, masked.Message, "(span "+cardLike+")")
	require.Contains(t, masked.Message, "paid with [REDACTED:card]")
	require.NotContains(t, masked.Message, "4111111111111111")
	// A second pass (the JSON-lines writer after the exporter) keeps it too.
	require.Equal(t, masked.Message, RedactResult(masked, nil).Message)
}

// TestNameQuotedSpans: a result whose text quotes a span of the trace by a decimal id it
// does not list gets the span listed, so redaction keeps it; a card number that is no span
// of the trace is not listed, and an id glued to other text is not an id.
func TestNameQuotedSpans(t *testing.T) {
	td := readCapture(t, "strands-ok")
	const cardLike = "3552568167993130"
	var id pcommon.SpanID
	_, _ = hex.Decode(id[:], []byte(cardLike))
	spanwalk.Each(td, func(_ pcommon.Resource, s ptrace.Span) {
		if s.ParentSpanID().IsEmpty() {
			s.SetSpanID(id) // the root: nothing names it as a parent
		}
	})
	g := agentgraph.BuildAll(td, agentgraph.Options{})[0]
	rs := []Result{
		{Message: "trigger_agent_at schedules the run (span " + cardLike + ")", Spans: []string{"44fecc1eed6b4721"}},
		{Actual: "card 4111111111111111", Expected: "x" + cardLike},
	}
	check.NameQuotedSpans(rs, g)
	require.Equal(t, []string{"44fecc1eed6b4721", cardLike}, rs[0].Spans)
	require.Empty(t, rs[1].Spans)
	require.Contains(t, RedactResult(rs[0], nil).Message, "(span "+cardLike+")")
}
