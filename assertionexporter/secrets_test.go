package assertionexporter

import (
	"context"
	"encoding/base64"
	"fmt"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"
	"go.opentelemetry.io/collector/component/componenttest"
	"go.opentelemetry.io/collector/confmap"
	"go.opentelemetry.io/collector/confmap/confmaptest"
	"go.opentelemetry.io/collector/pdata/ptrace"
	"go.uber.org/zap"
	"go.uber.org/zap/zapcore"
	"go.uber.org/zap/zaptest/observer"

	"github.com/otelcol-handoff/otelcol-handoff/assertionexporter/internal/metadatatest"
	"github.com/otelcol-handoff/otelcol-handoff/internal/judge/judgetest"
	"github.com/otelcol-handoff/otelcol-handoff/internal/rubric"
	"github.com/otelcol-handoff/otelcol-handoff/internal/rules"
)

// The five secrets of testdata/secrets/trace.json, in its tool arguments and agent inputs.
var fixtureSecrets = map[string]string{
	"card":         "4111 1111 1111 1111",
	"card digits":  "4111111111111111",
	"email":        "jane.doe@example.com",
	"OpenAI key":   "sk-proj-Tq3vX9bL2mN8pR4sW7yZ1aC5dF6gH0jK",
	"AWS key":      "AKIAIOSFODNN7EXAMPLE",
	"JWT":          "eyJhbGciOiJIUzI1NiIsInR5cCI6IkpXVCJ9.eyJzdWIiOiIxMjM0NTY3ODkwIn0.dozjgNryP4J3jVmNHl0w5N_XgL0n3I9PlFUP0THsR8U",
	"JWT header":   "eyJhbGciOiJIUzI1NiIsInR5cCI6IkpXVCJ9",
	"JWT payload":  "eyJzdWIiOiIxMjM0NTY3ODkwIn0",
	"JWT sig part": "dozjgNryP4J3jVmNHl0w5N",
}

// The judge's API key, read from the environment, and the forms a judge echoes it in.
const judgeKey = "sk-judge-LiveKey-7Hq2Zr9Xw4Pm1Ns8"

func judgeKeyForms() map[string]string {
	return map[string]string{
		"key":                   judgeKey,
		"lower-cased key":       strings.ToLower(judgeKey),
		"upper-cased key":       strings.ToUpper(judgeKey),
		"base64 key":            base64.StdEncoding.EncodeToString([]byte(judgeKey)),
		"base64url key":         base64.RawURLEncoding.EncodeToString([]byte(judgeKey)),
		"base64 key, a stretch": base64.RawStdEncoding.EncodeToString([]byte(judgeKey[3:27])),
	}
}

// TestSecretsNeverLeave is the acceptance test of redaction: a real OTLP trace carrying a
// card number, an email, an OpenAI project key, an AWS key id and a JWT in tool arguments
// and agent inputs runs through the exporter with its default redaction, steps that fail
// on those arguments (their messages quote them) and two judged steps against a fake judge
// that echoes its API key lower-cased and base64-encoded in a 500 body and quotes it in a
// verdict reason. None of the secrets, and no form of the key, reaches the judge requests,
// the logs, the JSON lines, the JUnit or the Markdown report.
func TestSecretsNeverLeave(t *testing.T) {
	t.Setenv("SECRETS_TEST_JUDGE_KEY", judgeKey)
	srv := judgetest.New(t, func(req judgetest.Request, n int) judgetest.Reply {
		key := strings.TrimPrefix(req.Authorization, "Bearer ")
		if n == 0 {
			return judgetest.Reply{Status: http.StatusInternalServerError, Body: `{"error":{"message":"invalid api key ` +
				strings.ToLower(key) + `","request":"` + base64.StdEncoding.EncodeToString([]byte(`{"authorization":"`+req.Authorization+`"}`)) +
				`","key_b64":"` + base64.StdEncoding.EncodeToString([]byte(key)) + `"}}`}
		}
		return judgetest.Verdict(0.3, false, "the dispatch used key "+strings.ToUpper(key)+" ("+
			base64.RawURLEncoding.EncodeToString([]byte(key))+") and mailed jane.doe@example.com")
	})

	cm, err := confmaptest.LoadConf(filepath.Join("testdata", "secrets", "config.yaml"))
	require.NoError(t, err)
	cfg := NewFactory().CreateDefaultConfig().(*Config)
	require.NoError(t, cm.Unmarshal(cfg))
	cfg.Judge.Endpoint = srv.URL
	dir := t.TempDir()
	cfg.Reports = ReportsConfig{
		JSONLines: filepath.Join(dir, "verdicts.jsonl"), JUnit: filepath.Join(dir, "report.xml"), Markdown: filepath.Join(dir, "report.md"),
	}
	require.NoError(t, confmap.Validate(cfg))

	core, logs := observer.New(zapcore.DebugLevel)
	tt := componenttest.NewTelemetry()
	t.Cleanup(func() { require.NoError(t, tt.Shutdown(context.Background())) })
	set := metadatatest.NewSettings(tt)
	set.Logger = zap.New(core)
	exp, err := newExporter(set, cfg)
	require.NoError(t, err)
	ctx := context.Background()
	require.NoError(t, exp.Start(ctx, componenttest.NewNopHost()))
	raw, err := os.ReadFile(filepath.Join("testdata", "secrets", "trace.json"))
	require.NoError(t, err)
	td, err := (&ptrace.JSONUnmarshaler{}).UnmarshalTraces(raw)
	require.NoError(t, err)
	require.NoError(t, exp.ConsumeTraces(ctx, td))
	require.NoError(t, exp.Drain(ctx)) // the gradings run off ConsumeTraces
	require.NoError(t, exp.Shutdown(ctx))

	outputs := map[string]string{}
	for i, req := range srv.Requests() {
		outputs[fmt.Sprintf("judge request %d", i)] = string(req.Raw)
	}
	require.Len(t, srv.Requests(), 2, "both judged steps asked the judge")
	var logText strings.Builder
	for _, e := range logs.All() {
		fmt.Fprintf(&logText, "%s %v\n", e.Message, e.ContextMap())
	}
	outputs["logs"] = logText.String()
	for name, file := range map[string]string{"JSON lines": cfg.Reports.JSONLines, "JUnit": cfg.Reports.JUnit, "Markdown": cfg.Reports.Markdown} {
		b, err := os.ReadFile(file)
		require.NoError(t, err)
		outputs[name] = string(b)
	}

	for where, text := range outputs {
		for what, secret := range fixtureSecrets {
			require.NotContains(t, text, secret, "%s leaked into the %s", what, where)
		}
		for what, form := range judgeKeyForms() {
			require.NotContains(t, text, form, "the judge's %s leaked into the %s", what, where)
		}
	}

	// The failures are there, quoting the arguments with the secrets masked.
	var results []rules.Result
	h := &harness{out: cfg.Reports.JSONLines}
	results = h.results(t)
	byStep := map[string]rules.Result{}
	for _, r := range results {
		byStep[r.Step] = r
	}
	args := byStep["expected_tool_calls[0]"]
	require.Equal(t, rules.Fail, args.Outcome)
	require.Contains(t, args.Message, `"card":"[REDACTED:card]"`)
	require.Contains(t, args.Message, `"api_key":"[REDACTED:api_key]"`)
	require.Contains(t, args.Message, `"aws_key":"[REDACTED:api_key]"`)
	require.Contains(t, args.Message, `"email":"[REDACTED:email]"`)
	payload := byStep["expected_child_agents.billing_agent.expected_payload"]
	require.Equal(t, rules.Fail, payload.Outcome)
	require.Contains(t, payload.Actual, "card [REDACTED:card], customer [REDACTED:email], gateway key [REDACTED:api_key], AWS [REDACTED:api_key], session [REDACTED:jwt]…",
		"the JWT cut by the 200-byte quote limit is masked too")

	// The judge saw the handoff content masked, and its echoes came back scrubbed.
	require.Contains(t, srv.Requests()[0].User(), "card [REDACTED:card], customer [REDACTED:email], gateway key [REDACTED:api_key], AWS [REDACTED:api_key], session [REDACTED:jwt]")
	var judgeErr, judged rules.Result
	for _, r := range results {
		if r.Action == rules.ActionContext && r.Outcome == rules.Error {
			judgeErr = r
		}
		if r.Action == rules.ActionContext && r.Judge != nil {
			judged = r
		}
	}
	require.Contains(t, judgeErr.Message, "judge answered HTTP 500")
	require.Contains(t, judgeErr.Message, "invalid api key [REDACTED]")
	require.NotNil(t, judged.Judge)
	require.Equal(t, "the dispatch used key [REDACTED] ([REDACTED]) and mailed [REDACTED:email]", judged.Judge.Reason)
	require.Contains(t, outputs["Markdown"], `\[REDACTED:card\]`) // Markdown-escaped
	require.Contains(t, outputs["JUnit"], "[REDACTED:card]")
	require.Contains(t, outputs["logs"], "[REDACTED:card]")
}

// TestRedactionConfig: the redaction section loads, validates with errors naming the field,
// and turns detectors off or adds patterns; judge.redact patterns join the same policy.
func TestRedactionConfig(t *testing.T) {
	cfg := NewFactory().CreateDefaultConfig().(*Config)
	require.NoError(t, confmap.NewFromStringMap(map[string]any{
		"redaction": map[string]any{"disable_detectors": []any{"email"}, "patterns": []any{`order-\d+`}},
		"judge":     map[string]any{"redact": []any{`(?i)internal-[a-z]+`}},
	}).Unmarshal(cfg))
	require.NoError(t, confmap.Validate(cfg))
	exp, err := newExporter(metadatatest.NewSettings(componenttest.NewTelemetry()), cfg)
	require.NoError(t, err)
	require.Equal(t, "a@example.com [REDACTED] [REDACTED] [REDACTED:card]",
		exp.policy.Redact("a@example.com order-42 INTERNAL-host 4111111111111111"))

	bad := NewFactory().CreateDefaultConfig().(*Config)
	require.NoError(t, confmap.NewFromStringMap(map[string]any{
		"redaction": map[string]any{"disable_detectors": []any{"phone"}, "patterns": []any{"(", ".*"}},
	}).Unmarshal(bad))
	err = confmap.Validate(bad)
	require.ErrorContains(t, err, `redaction.disable_detectors[0]: unknown detector "phone"`)
	require.ErrorContains(t, err, "redaction.patterns[0]: error parsing regexp")
	require.ErrorContains(t, err, `redaction.patterns[1]: ".*" matches the empty string`)
}

// TestVerdictLogsEscapeControlCharacters: trace text in a verdict log (agent names,
// messages) cannot forge a log line or send terminal escapes.
func TestVerdictLogsEscapeControlCharacters(t *testing.T) {
	h := newHarness(t, &Config{LogVerdicts: LogAll})
	h.exp.log([]rules.Result{{
		TraceID: "0a0a", Case: "c", Step: "s", Outcome: rules.Fail, Axis: rubric.Scope,
		From: "triage", To: "evil\nagent\x1b[2J", Message: "saw evil\nagent\x1b[2J\r\nFAIL forged",
	}})
	entries := h.logs.FilterMessageSnippet("assertion fail").All()
	require.Len(t, entries, 1)
	e := entries[0]
	require.Equal(t, `assertion fail: saw evil\nagent\x1b[2J\r\nFAIL forged`, e.Message)
	fields := e.ContextMap()
	require.Equal(t, `evil\nagent\x1b[2J`, fields["handoff.target"])
	require.NotContains(t, fields, "gen_ai.evaluation.explanation", "the message is logged once, as the record's message")
}
