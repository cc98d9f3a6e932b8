package rules

import (
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/otelcol-handoff/otelcol-handoff/internal/redact"
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
