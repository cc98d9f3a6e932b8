package handoffprocessor

import (
	"testing"
	"time"

	"github.com/stretchr/testify/require"
	"go.opentelemetry.io/collector/consumer/consumertest"
	"go.opentelemetry.io/collector/pdata/pcommon"

	"github.com/otelcol-handoff/otelcol-handoff/internal/agentgraph"
	"github.com/otelcol-handoff/otelcol-handoff/internal/pricing"
)

// TestCostOnLLMAndHandoffSpans: the processor writes each chat span's cost and the
// receiver subtree's cost on the HANDOFF span. The Strands capture runs on stub models
// (gen_ai.request.model mock-triage-1, mock-weather-1): without a price they are unpriced
// (no cost written as 0) and the HANDOFF span says the cost is incomplete; with the models
// priced under pricing.models, weather_specialist's three chat spans (40+60+90 input, 8+8+15
// output tokens) cost 190×$1 + 31×$4 per million.
func TestCostOnLLMAndHandoffSpans(t *testing.T) {
	run := func(cfg *Config) []outSpan {
		sink := new(consumertest.TracesSink)
		h := newHarness(t, cfg, sink, true)
		h.consume(loadCapture(t, strandsOK))
		h.advanceAndTick(h.cfg.QuietPeriod + time.Millisecond)
		require.Eventually(t, func() bool { return sink.SpanCount() == 18 }, waitFor, time.Millisecond)
		return sinkSpans(sink)
	}

	out := run(testConfig())
	chats := chatAttrs(out)
	require.Len(t, chats, 4)
	for _, attrs := range chats {
		src, _ := attrs.Get(agentgraph.AttrCostSource)
		require.Equal(t, agentgraph.CostUnpriced, src.Str())
		_, has := attrs.Get(agentgraph.AttrCostBasis)
		require.False(t, has)
		_, has = attrs.Get(agentgraph.AttrCostUSD)
		require.False(t, has, "an unknown cost is not written as 0")
	}
	hs := handoffs(out)
	require.Len(t, hs, 1)
	complete, _ := hs[0].span.Attributes().Get(agentgraph.AttrCostComplete)
	require.False(t, complete.Bool())
	unpriced, _ := hs[0].span.Attributes().Get(agentgraph.AttrUnpricedModels)
	require.Equal(t, []any{"mock-weather-1"}, unpriced.Slice().AsRaw())

	f := func(v float64) *float64 { return &v }
	out = run(testConfig(func(c *Config) {
		c.Pricing.Models = []pricing.ModelPrice{
			{Model: "mock-weather-1", Input: f(1), Output: f(4)},
			{Model: "mock-triage-1", Input: f(1), Output: f(4)},
		}
	}))
	for _, attrs := range chatAttrs(out) {
		src, _ := attrs.Get(agentgraph.AttrCostSource)
		require.Equal(t, pricing.SourceOverride, src.Str())
		basis, _ := attrs.Get(agentgraph.AttrCostBasis)
		require.Contains(t, []string{"mock-weather-1", "mock-triage-1"}, basis.Str())
	}
	hs = handoffs(out)
	cost, _ := hs[0].span.Attributes().Get(agentgraph.AttrCostUSD)
	require.InDelta(t, (190*1+31*4)/1e6, cost.Double(), 1e-12)
	complete, _ = hs[0].span.Attributes().Get(agentgraph.AttrCostComplete)
	require.True(t, complete.Bool())
	_, has := hs[0].span.Attributes().Get(agentgraph.AttrUnpricedModels)
	require.False(t, has, "every model priced")
}

// chatAttrs are the attributes of the Strands chat spans (the LLM calls) in out.
func chatAttrs(out []outSpan) []pcommon.Map {
	var attrs []pcommon.Map
	for _, s := range out {
		if s.span.Name() == "chat" {
			attrs = append(attrs, s.span.Attributes())
		}
	}
	return attrs
}

// TestPricesInTheFingerprint: the graphs the processor hands on carry the fingerprint of
// its prices, so a consumer priced otherwise does not reuse them.
func TestPricesInTheFingerprint(t *testing.T) {
	f := func(v float64) *float64 { return &v }
	sink := new(consumertest.TracesSink)
	plain := newHarness(t, testConfig(), sink, false)
	priced := newHarness(t, testConfig(func(c *Config) {
		c.Pricing.Models = []pricing.ModelPrice{{Model: "mock-weather-1", Input: f(1), Output: f(4)}}
	}), sink, false)
	require.True(t, plain.p.graphFP.SameChains(priced.p.graphFP))
	require.False(t, plain.p.graphFP.SamePrices(priced.p.graphFP))
	require.Equal(t, agentgraph.Options{}.Fingerprint(), plain.p.graphFP)
}
