package handoffprocessor

import (
	"testing"
	"time"

	"github.com/stretchr/testify/require"
	"go.opentelemetry.io/collector/consumer/consumertest"
	"go.opentelemetry.io/collector/pdata/ptrace"

	"github.com/otelcol-handoff/otelcol-handoff/internal/agentgraph"
	tr "github.com/otelcol-handoff/otelcol-handoff/internal/rules/rulestest"
)

const secretInput = "Refund card 4111 1111 1111 1111 for jane.doe@example.com, key sk-proj-Tq3vX9bL2mN8pR4sW7yZ1aC5dF6gH0jK"

// releasedContent runs a two-agent trace with secrets in the receiver's input through the
// processor and returns the HANDOFF span and the receiver's span as forwarded.
func releasedContent(t *testing.T, mods ...func(*Config)) (handoff, receiver ptrace.Span) {
	sink := new(consumertest.TracesSink)
	h := newHarness(t, testConfig(mods...), sink, true)
	b := tr.New(0x42)
	root := b.Agent(nil, "triage", 0, 100)
	b.Agent(root, "refunds", 10, 90).Input(secretInput)
	h.consume(b.Traces())
	h.advanceAndTick(h.cfg.QuietPeriod + time.Millisecond)
	require.Eventually(t, func() bool { return sink.SpanCount() == 3 }, waitFor, time.Millisecond)
	out := sinkSpans(sink)
	hs := handoffs(out)
	require.Len(t, hs, 1)
	for _, s := range out {
		if s.span.Name() == "invoke_agent refunds" {
			receiver = s.span
		}
	}
	return hs[0].span, receiver
}

func TestContentPolicy(t *testing.T) {
	scope := func(sp ptrace.Span) (string, bool) {
		v, ok := sp.Attributes().Get(agentgraph.AttrScopePrompt)
		if !ok {
			return "", false
		}
		return v.AsString(), true
	}
	userInput := func(sp ptrace.Span) string {
		v, _ := sp.Attributes().Get("input.value")
		return v.Str()
	}

	hand, receiver := releasedContent(t)
	got, _ := scope(hand)
	require.Equal(t, "Refund card [REDACTED:card] for [REDACTED:email], key [REDACTED:api_key]", got, "redact is the default")
	require.Equal(t, secretInput, userInput(receiver), "the user's own spans are never modified")

	hand, _ = releasedContent(t, func(c *Config) {
		c.Content.DisableDetectors = []string{"email"}
		c.Content.Redact = []string{`Refund`}
	})
	got, _ = scope(hand)
	require.Equal(t, "[REDACTED] card [REDACTED:card] for jane.doe@example.com, key [REDACTED:api_key]", got)

	hand, _ = releasedContent(t, func(c *Config) { c.Content.Policy = "copy" })
	got, _ = scope(hand)
	require.Equal(t, secretInput, got)

	hand, receiver = releasedContent(t, func(c *Config) { c.Content.Policy = "omit" })
	_, ok := scope(hand)
	require.False(t, ok, "omit writes no content attribute")
	src, ok := hand.Attributes().Get(agentgraph.AttrScopePrompt + agentgraph.SourceSuffix)
	require.True(t, ok, "but where it came from")
	require.Equal(t, "input.value", src.Str())
	require.Equal(t, secretInput, userInput(receiver))
}

func TestContentConfigValidate(t *testing.T) {
	cfg := testConfig(func(c *Config) {
		c.Content.Policy = ""
		c.Content.DisableDetectors = []string{"phone"}
		c.Content.Redact = []string{"x?"}
	})
	err := cfg.Validate()
	require.ErrorContains(t, err, `content.policy: must be one of copy, redact, omit, got ""`)
	require.ErrorContains(t, err, `content.disable_detectors[0]: unknown detector "phone"`)
	require.ErrorContains(t, err, `content.redact[0]: "x?" matches the empty string`)
}
