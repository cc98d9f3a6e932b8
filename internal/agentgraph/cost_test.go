package agentgraph

import (
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/require"
	"go.opentelemetry.io/collector/pdata/ptrace"

	"github.com/otelcol-handoff/otelcol-handoff/internal/pricing"
)

func byAgent(g *Graph) map[string][]*Invocation {
	out := map[string][]*Invocation{}
	for _, inv := range g.Invocations {
		out[inv.Name] = append(out[inv.Name], inv)
	}
	return out
}

func llmSpans(g *Graph) []*Span {
	var out []*Span
	for _, s := range g.Spans {
		if s.Role == RoleLLM {
			out = append(out, s)
		}
	}
	return out
}

// TestReportedCost: Pydantic AI (through Logfire) reports operation.cost on its four chat
// gpt-4o-mini spans: 0.00009435 and 0.00008355 under the first joke_agent run, 0.0000837
// under the second, 0.00006105 under evaluator_agent (read from
// testdata/corpus/lf-pydantic-ai-multiagent).
// Logfire computes the figure with genai-prices, so the same capture with operation.cost
// removed gives the same costs from the table, from the tokens and the response model.
func TestReportedCost(t *testing.T) {
	path := filepath.Join("..", "..", "testdata", "corpus", "lf-pydantic-ai-multiagent.otlp.json")
	g := BuildAll(readTraces(t, path), Options{})[0]
	for _, s := range llmSpans(g) {
		require.Equal(t, pricing.SourceReported, s.Cost().Source, s.Pdata.Name())
		require.Equal(t, "operation.cost", s.Cost().From)
		require.Equal(t, "gpt-4o-mini-2024-07-18", s.Cost().Model)
	}
	want := map[string][]float64{"joke_agent": {0.00009435 + 0.00008355, 0.0000837}, "evaluator_agent": {0.00006105}}
	check := func(g *Graph) {
		t.Helper()
		agents := byAgent(g)
		for name, costs := range want {
			require.Len(t, agents[name], len(costs), name)
			for i, c := range costs {
				require.InDelta(t, c, agents[name][i].Self.CostUSD, 1e-12, name)
				require.Empty(t, agents[name][i].Subtree.UnpricedModels)
			}
		}
		// The second joke_agent run hands off to evaluator_agent (an inferred sibling edge):
		// its subtree holds both.
		require.InDelta(t, 0.0000837+0.00006105, agents["joke_agent"][1].Subtree.CostUSD, 1e-12)
	}
	check(g)

	td := readTraces(t, path)
	eachSpan(t, td, "chat gpt-4o-mini", func(s ptrace.Span) { s.Attributes().Remove("operation.cost") })
	table := BuildAll(td, Options{})[0]
	for _, s := range llmSpans(table) {
		require.Equal(t, pricing.SourceTable, s.Cost().Source)
		require.Equal(t, "openai/gpt-4o-mini", s.Cost().From)
	}
	check(table)
}

// TestAddedReportedCost: no framework of the captures emits gen_ai.usage.cost; a copy of
// strands-ok with it added on every chat span (0.001 each) is summed from it, although the
// stub model has no price.
func TestAddedReportedCost(t *testing.T) {
	td := capture(t, "strands-ok")
	eachSpan(t, td, "chat", func(s ptrace.Span) { s.Attributes().PutStr("gen_ai.usage.cost", "0.001") })
	g := BuildAll(td, Options{})[0]
	ws := byAgent(g)["weather_specialist"][0]
	require.InDelta(t, 0.003, ws.Self.CostUSD, 1e-12, "three chat spans")
	require.Empty(t, ws.Self.UnpricedModels)
	require.InDelta(t, 0.003+0.001, byAgent(g)["triage"][0].Subtree.CostUSD, 1e-12, "and triage's one")
}

// TestUnpricedAndOverride: the strands-ok capture runs on stub models (gen_ai.request.model
// mock-triage-1 and mock-weather-1) that no table prices: the cost is unknown, and says
// which models; priced in config, the tokens give the cost: weather_specialist's chat spans
// used 190 input and 31 output tokens, triage's one 50 and 12.
func TestUnpricedAndOverride(t *testing.T) {
	g := BuildAll(capture(t, "strands-ok"), Options{})[0]
	triage := byAgent(g)["triage"][0]
	require.Equal(t, []string{"mock-triage-1", "mock-weather-1"}, triage.Subtree.UnpricedModels)
	require.Zero(t, triage.Subtree.CostUSD)
	for _, s := range llmSpans(g) {
		require.False(t, s.Cost().Priced())
	}

	f := func(v float64) *float64 { return &v }
	prices, err := pricing.Config{Models: []pricing.ModelPrice{
		{Model: "mock-weather-1", Input: f(1), Output: f(2)},
		{Model: "mock-triage-1", Input: f(10), Output: f(20)},
	}}.Compile()
	require.NoError(t, err)
	opts := Options{Prices: prices}
	require.NotEqual(t, Options{}.Fingerprint(), opts.Fingerprint())
	require.False(t, Options{}.Fingerprint().SamePrices(opts.Fingerprint()))
	require.True(t, Options{}.Fingerprint().SameChains(opts.Fingerprint()))
	g = BuildAll(capture(t, "strands-ok"), opts)[0]
	ws := byAgent(g)["weather_specialist"][0]
	require.InDelta(t, (190*1+31*2)/1e6, ws.Self.CostUSD, 1e-12)
	triage = byAgent(g)["triage"][0]
	require.Equal(t, int64(283), triage.Subtree.TotalTokens)
	require.InDelta(t, (50*10+12*20)/1e6, triage.Self.CostUSD, 1e-12)
	require.InDelta(t, (50*10+12*20)/1e6+(190*1+31*2)/1e6, triage.Subtree.CostUSD, 1e-12)
	require.Empty(t, triage.Subtree.UnpricedModels)
	for _, s := range llmSpans(g) {
		if s.HasTokens {
			require.Equal(t, pricing.SourceOverride, s.Cost().Source)
		}
	}
}

// TestCostAttributes: WriteCosts puts each call's cost on its span, and the HANDOFF span
// carries the receiver subtree's: evaluator_agent's one call (0.00006105, reported) in the
// Pydantic AI capture; in strands-ok, weather_specialist's calls of a model without a price.
func TestCostAttributes(t *testing.T) {
	path := filepath.Join("..", "..", "testdata", "corpus", "lf-pydantic-ai-multiagent.otlp.json")
	g := BuildAll(readTraces(t, path), Options{})[0]
	require.Equal(t, 4, g.WriteCosts())
	for _, s := range llmSpans(g) {
		attrs := s.Pdata.Attributes()
		v, _ := attrs.Get(AttrCostUSD)
		require.Equal(t, s.Cost().USD, v.Double())
		v, _ = attrs.Get(AttrCostSource)
		require.Equal(t, "reported", v.Str())
		v, _ = attrs.Get(AttrCostBasis)
		require.Equal(t, "operation.cost", v.Str())
	}
	out := ptrace.NewTraces()
	require.Equal(t, 1, AppendHandoffs(g, out, ContentPolicy{}))
	attrs := out.ResourceSpans().At(0).ScopeSpans().At(0).Spans().At(0).Attributes()
	v, _ := attrs.Get(AttrCostUSD)
	require.InDelta(t, 0.00006105, v.Double(), 1e-12)
	v, _ = attrs.Get(AttrCostComplete)
	require.True(t, v.Bool())
	_, has := attrs.Get(AttrUnpricedModels)
	require.False(t, has)

	g = BuildAll(capture(t, "strands-ok"), Options{})[0]
	require.Equal(t, 4, g.WriteCosts(), "the four chat spans")
	for _, s := range llmSpans(g) {
		if !s.HasTokens {
			continue
		}
		attrs := s.Pdata.Attributes()
		v, _ := attrs.Get(AttrCostSource)
		require.Equal(t, "unpriced", v.Str())
		_, has := attrs.Get(AttrCostUSD)
		require.False(t, has, "an unknown cost is not written as 0")
	}
	out = ptrace.NewTraces()
	require.Equal(t, 1, AppendHandoffs(g, out, ContentPolicy{}))
	attrs = out.ResourceSpans().At(0).ScopeSpans().At(0).Spans().At(0).Attributes()
	v, _ = attrs.Get(AttrCostComplete)
	require.False(t, v.Bool())
	v, _ = attrs.Get(AttrUnpricedModels)
	require.Equal(t, []any{"mock-weather-1"}, v.Slice().AsRaw())
}
