package agentgraph_test

import (
	"testing"

	"github.com/stretchr/testify/require"
	"go.opentelemetry.io/collector/pdata/ptrace"

	"github.com/otelcol-handoff/otelcol-handoff/internal/agentgraph"
	"github.com/otelcol-handoff/otelcol-handoff/internal/redact"
	tr "github.com/otelcol-handoff/otelcol-handoff/internal/rules/rulestest"
)

const (
	contentInput  = "Refund card 4111 1111 1111 1111 for jane.doe@example.com"
	contentOutput = "done, token eyJhbGciOiJIUzI1NiIsInR5cCI6IkpXVCJ9.eyJzdWIiOiIxIn0.c2lnbmF0dXJl"
)

// handoffOf builds a two-agent trace whose receiver input, output and error carry secrets,
// appends its HANDOFF span under policy, and returns the HANDOFF span and the receiver span.
func handoffOf(t *testing.T, policy agentgraph.ContentPolicy) (handoff, receiver ptrace.Span) {
	t.Helper()
	b := tr.New(0x77)
	root := b.Agent(nil, "triage", 0, 100)
	child := b.Agent(root, "refunds", 10, 90).Input(contentInput).Output(contentOutput).Fail("card 4111111111111111 declined")
	g := b.Graph()
	out := ptrace.NewTraces()
	require.Equal(t, 1, agentgraph.AppendHandoffs(g, out, policy))
	return out.ResourceSpans().At(0).ScopeSpans().At(0).Spans().At(0), child.Span
}

func attr(sp ptrace.Span, key string) (string, bool) {
	v, ok := sp.Attributes().Get(key)
	if !ok {
		return "", false
	}
	return v.AsString(), true
}

func TestContentPolicyModes(t *testing.T) {
	t.Run("redact by default", func(t *testing.T) {
		h, receiver := handoffOf(t, agentgraph.ContentPolicy{})
		v, _ := attr(h, agentgraph.AttrScopePrompt)
		require.Equal(t, "Refund card [REDACTED:card] for [REDACTED:email]", v)
		v, _ = attr(h, agentgraph.AttrReturnValue)
		require.Equal(t, "done, token [REDACTED:jwt]", v)
		v, _ = attr(h, agentgraph.AttrError)
		require.Contains(t, v, `"message":"card [REDACTED:card] declined"`)
		require.Equal(t, "card [REDACTED:card] declined", h.Status().Message())
		// The user's own span is never modified.
		v, _ = attr(receiver, "input.value")
		require.Equal(t, contentInput, v)
		require.Equal(t, "card 4111111111111111 declined", receiver.Status().Message())
	})
	t.Run("redact with patterns, detectors off", func(t *testing.T) {
		p, err := redact.Config{DisableDetectors: []string{redact.All}, Patterns: []string{`jane\.\w+`}}.Compile()
		require.NoError(t, err)
		h, _ := handoffOf(t, agentgraph.ContentPolicy{Mode: agentgraph.ContentRedact, Redactor: p})
		v, _ := attr(h, agentgraph.AttrScopePrompt)
		require.Equal(t, "Refund card 4111 1111 1111 1111 for [REDACTED]@example.com", v)
	})
	t.Run("copy", func(t *testing.T) {
		h, _ := handoffOf(t, agentgraph.ContentPolicy{Mode: agentgraph.ContentCopy, MaxBytes: 20})
		v, _ := attr(h, agentgraph.AttrScopePrompt)
		require.Equal(t, contentInput[:20], v, "copied as is, capped")
	})
	t.Run("omit", func(t *testing.T) {
		h, receiver := handoffOf(t, agentgraph.ContentPolicy{Mode: agentgraph.ContentOmit})
		for _, key := range []string{agentgraph.AttrScopePrompt, agentgraph.AttrReturnValue} {
			_, ok := attr(h, key)
			require.False(t, ok, key)
			src, ok := attr(h, key+agentgraph.SourceSuffix)
			require.True(t, ok, key)
			require.NotEqual(t, agentgraph.SourceNone, src, "where the content came from is still written")
		}
		v, _ := attr(h, agentgraph.AttrError)
		require.NotContains(t, v, "declined")
		require.Contains(t, v, `"source"`)
		require.Equal(t, ptrace.StatusCodeError, h.Status().Code())
		require.Empty(t, h.Status().Message())
		v, _ = attr(receiver, "input.value")
		require.Equal(t, contentInput, v)
	})
}
