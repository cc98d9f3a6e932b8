package report

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/otelcol-handoff/otelcol-handoff/internal/redact"
	"github.com/otelcol-handoff/otelcol-handoff/internal/rules"
	tr "github.com/otelcol-handoff/otelcol-handoff/internal/rules/rulestest"
)

const (
	secretCard  = "4111 1111 1111 1111"
	secretEmail = "jane.doe@example.com"
	secretKey   = "sk-proj-Tq3vX9bL2mN8pR4sW7yZ1aC5dF6gH0jK"
)

// secretResults: a failing result quoting secrets, on a trace whose agent name carries a
// newline, an escape sequence and an email.
func secretResults() ([]rules.Result, *tr.Trace) {
	b := tr.New(0x0d)
	root := b.Agent(nil, "dispatcher", 0, 100)
	b.Agent(root, "evil\nFAIL fake \x1b[31m "+secretEmail, 10, 90)
	id := strings.Repeat("0d", 16)
	return []rules.Result{{
		TraceID: id, Case: "payments", Step: "expected_tool_calls[0]", Action: "expected_tool_calls", Outcome: rules.Fail,
		Expected: `charge: params.card == "x"`, Actual: `charge {"card":"` + secretCard + `","key":"` + secretKey + `"}`,
		Message: "no matching call of charge\nFAIL forged line; saw card " + secretCard + " for " + secretEmail,
		From:    "dispatcher", To: "evil\nFAIL fake \x1b[31m " + secretEmail, Complete: true,
		Judge: &rules.JudgeVerdict{Reason: "the payload carried " + secretKey},
	}}, b
}

// TestReportsRedactAndEscape: every report masks what the policy finds and escapes control
// characters, whatever the caller passed in.
func TestReportsRedactAndEscape(t *testing.T) {
	results, b := secretResults()
	run := NewRun([]string{"payments"})
	run.Add(b.Graph(), results)

	path := filepath.Join(t.TempDir(), "r.jsonl")
	w, err := OpenJSONLines(path)
	require.NoError(t, err)
	require.NoError(t, w.Write(results, nil))
	require.NoError(t, w.Close())
	jsonl, err := os.ReadFile(path)
	require.NoError(t, err)

	for name, out := range map[string]string{"jsonl": string(jsonl), "junit": string(run.JUnit()), "markdown": string(run.Markdown())} {
		for _, s := range []string{secretCard, secretEmail, secretKey, "4111111111111111"} {
			require.NotContains(t, out, s, name)
		}
		if name == "markdown" { // the mask's brackets are escaped as all span text's are
			out = strings.NewReplacer(`\[`, "[", `\]`, "]", `\_`, "_").Replace(out)
		}
		require.Contains(t, out, "[REDACTED:card]", name)
		require.Contains(t, out, "[REDACTED:api_key]", name)
		require.NotContains(t, out, "\x1b", name)
		require.NotContains(t, out, "\nFAIL", name+": no forged line")
	}
	junit := string(run.JUnit())
	require.Contains(t, junit, `message="no matching call of charge\nFAIL forged line; saw card [REDACTED:card] for [REDACTED:email]"`)
	require.Contains(t, junit, `evil\nFAIL fake \x1b[31m [REDACTED:email]`)
	md := string(run.Markdown())
	require.Contains(t, md, `no matching call of charge\\nFAIL forged line`)
	require.Contains(t, md, `n1["<b>evil\nFAIL fake \x1b[31m [REDACTED:email]</b><br/>`, "the picture's agent names too")
	require.Contains(t, md, `\[REDACTED:card\] for \[REDACTED:email\]`)
	require.Equal(t, "the payload carried "+secretKey, results[0].Judge.Reason, "the caller's results are not changed")
}

// TestReportsCustomPolicy: a policy set on the run and the writer replaces the default.
func TestReportsCustomPolicy(t *testing.T) {
	p, err := redact.Config{DisableDetectors: []string{"email"}, Patterns: []string{`charge`}}.Compile()
	require.NoError(t, err)
	results, b := secretResults()
	run := NewRun([]string{"payments"})
	run.SetRedaction(p)
	run.Add(b.Graph(), results)
	md := string(run.Markdown())
	require.Contains(t, md, `jane.doe\@example.com`, "email detector off")
	require.Contains(t, md, `no matching call of \[REDACTED\]`)
	require.NotContains(t, md, secretCard)

	path := filepath.Join(t.TempDir(), "r.jsonl")
	w, err := OpenJSONLines(path)
	require.NoError(t, err)
	w.SetRedaction(p)
	require.NoError(t, w.Write(results, nil))
	require.NoError(t, w.Close())
	jsonl, err := os.ReadFile(path)
	require.NoError(t, err)
	require.Contains(t, string(jsonl), secretEmail)
	require.Contains(t, string(jsonl), "no matching call of [REDACTED]")
}
