package pricing

import (
	"fmt"
	"math"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
)

var at = time.Date(2026, 11, 30, 12, 0, 0, 0, time.UTC)

func TestSnapshotLoads(t *testing.T) {
	s, err := loadSnapshot()
	require.NoError(t, err)
	require.Equal(t, "@pydantic/genai-prices@0.1.8", s.version)
	require.Greater(t, len(s.providers), 20)
	require.NotNil(t, Default())
}

// TestPricesAPydanticAICall: the Pydantic AI capture (testdata/corpus/lf-pydantic-ai-multiagent)
// reports operation.cost 0.00009435 for its first chat gpt-4o-mini call (417 input, 53 output
// tokens, response model gpt-4o-mini-2024-07-18, gen_ai.system openai); Logfire computes it
// with genai-prices, so the table gives the same figure: 417 × $0.15 + 53 × $0.60 per million.
func TestPricesAPydanticAICall(t *testing.T) {
	q, ok := Default().Price("openai", []string{"gpt-4o-mini-2024-07-18", "gpt-4o-mini"}, at, Usage{Input: 417, Output: 53})
	require.True(t, ok)
	require.Equal(t, SourceTable, q.Source)
	require.Equal(t, "openai", q.Provider)
	require.InDelta(t, 0.00009435, q.USD, 1e-12)
}

func TestProviderNamesAndFallbacks(t *testing.T) {
	u := Usage{Input: 1_000_000, Output: 1_000_000}
	// Vercel AI SDK writes ai.model.provider "openai.chat": the provider rule matches it.
	a, ok := Default().Price("openai.chat", []string{"gpt-4o-mini"}, at, u)
	require.True(t, ok)
	// No provider: found by the providers' model rules.
	b, ok := Default().Price("", []string{"gpt-4o-mini"}, at, u)
	require.True(t, ok)
	require.InDelta(t, 0.75, a.USD, 1e-9)
	require.Equal(t, a, b)
	// A compact date suffix is tried with dashes.
	c, ok := Default().Price("anthropic", []string{"claude-3-5-haiku-20241022"}, at, u)
	require.True(t, ok)
	require.Equal(t, "claude-3-5-haiku-latest", c.Model)
	require.InDelta(t, 0.8+4, c.USD, 1e-9)
}

// TestCacheTokens: cached input is priced at the cache prices, out of the input count (the
// OTel convention), or beside it when it exceeds the input count.
func TestCacheTokens(t *testing.T) {
	// claude-3-5-haiku: input 0.8, output 4, cache read 0.08, cache write 1 per million.
	in, ok := Default().Price("anthropic", []string{"claude-3-5-haiku-latest"}, at, Usage{Input: 3_000_000, CacheRead: 1_000_000, CacheWrite: 1_000_000})
	require.True(t, ok)
	require.InDelta(t, 0.8+0.08+1, in.USD, 1e-9)
	apart, ok := Default().Price("anthropic", []string{"claude-3-5-haiku-latest"}, at, Usage{Input: 1_000_000, CacheRead: 1_000_000, CacheWrite: 1_000_000})
	require.True(t, ok)
	require.InDelta(t, 0.8+0.08+1, apart.USD, 1e-9)
}

func TestUnknownModelIsNotPriced(t *testing.T) {
	_, ok := Default().Price("openai", []string{"stub-model", ""}, at, Usage{Input: 10, Output: 5})
	require.False(t, ok)
	_, ok = Default().Price("", nil, at, Usage{Input: 10})
	require.False(t, ok)
}

func TestOverrides(t *testing.T) {
	f := func(v float64) *float64 { return &v }
	tab, err := Config{Models: []ModelPrice{
		{Model: "Stub-Model", Input: f(2), Output: f(10)},
		{Model: "gpt-4o-mini", Provider: "azure", Input: f(1), Output: f(1), CacheRead: f(0.5)},
	}}.Compile()
	require.NoError(t, err)
	q, ok := tab.Price("", []string{"stub-model"}, at, Usage{Input: 500_000, Output: 100_000})
	require.True(t, ok)
	require.Equal(t, Quote{USD: 2, Source: SourceOverride, Model: "stub-model"}, q)
	// The provider-bound override applies to that provider only.
	q, _ = tab.Price("azure", []string{"gpt-4o-mini"}, at, Usage{Input: 2_000_000, CacheRead: 1_000_000})
	require.Equal(t, SourceOverride, q.Source)
	require.InDelta(t, 1.5, q.USD, 1e-9)
	q, _ = tab.Price("openai", []string{"gpt-4o-mini"}, at, Usage{Input: 1_000_000})
	require.Equal(t, SourceTable, q.Source)
	require.NotEqual(t, Default().Fingerprint(), tab.Fingerprint())
	again, err := Config{Models: []ModelPrice{
		{Model: "Stub-Model", Input: f(2), Output: f(10)},
		{Model: "gpt-4o-mini", Provider: "azure", Input: f(1), Output: f(1), CacheRead: f(0.5)},
	}}.Compile()
	require.NoError(t, err)
	require.Equal(t, tab.Fingerprint(), again.Fingerprint())
}

func TestConfigValidate(t *testing.T) {
	f := func(v float64) *float64 { return &v }
	err := Config{Models: []ModelPrice{
		{Input: f(1), Output: f(1)},
		{Model: "a", Output: f(1)},
		{Model: "b", Input: f(-1), Output: f(math.Inf(1))},
		{Model: "B", Input: f(1), Output: f(1)},
		// Compile trims what it matches: "c " and " C" are one model.
		{Model: "c ", Provider: "openai", Input: f(1), Output: f(1)},
		{Model: " C", Provider: "OpenAI ", Input: f(2), Output: f(2)},
		{Model: "  ", Input: f(1), Output: f(1)},
	}}.Validate()
	require.EqualError(t, err, "models[0].model: must name the model\n"+
		"models[1].input_usd_per_mtok: must be set\n"+
		"models[2].input_usd_per_mtok: must be a finite price of 0 or more, got -1\n"+
		"models[2].output_usd_per_mtok: must be a finite price of 0 or more, got +Inf\n"+
		`models[3].model: "B" (provider "") is already priced by models[2]`+"\n"+
		`models[5].model: " C" (provider "OpenAI ") is already priced by models[4]`+"\n"+
		"models[6].model: must name the model")
}

func TestTiersAndDates(t *testing.T) {
	p := Price{Base: 1, Tiers: []Tier{{Start: 200_000, Price: 2}}}
	require.Equal(t, 1.0, p.at(200_000))
	require.Equal(t, 2.0, p.at(200_001))
	m := compiledModel{Model: &Model{Prices: []Conditional{
		{Prices: Prices{Input: &Price{Base: 1}}},
		{Constraint: &Constraint{StartDate: "2026-06-01"}, Prices: Prices{Input: &Price{Base: 2}}},
		{Constraint: &Constraint{StartTime: "22:00", EndTime: "06:00"}, Prices: Prices{Input: &Price{Base: 3}}},
	}}}
	require.Equal(t, 1.0, m.pricesAt(time.Date(2026, 1, 1, 12, 0, 0, 0, time.UTC)).Input.Base)
	require.Equal(t, 2.0, m.pricesAt(time.Date(2026, 7, 1, 12, 0, 0, 0, time.UTC)).Input.Base)
	require.Equal(t, 3.0, m.pricesAt(time.Date(2026, 7, 1, 23, 0, 0, 0, time.UTC)).Input.Base)
	require.Equal(t, 3.0, m.pricesAt(time.Date(2026, 1, 1, 1, 0, 0, 0, time.UTC)).Input.Base)
}

func TestISODate(t *testing.T) {
	require.Equal(t, "gpt-4o-2024-08-06", isoDate("gpt-4o-20240806"))
	require.Equal(t, "claude-3-5-haiku-2024-10-22:0", isoDate("claude-3-5-haiku-20241022:0"))
	require.Equal(t, "model-20241399", isoDate("model-20241399"), "not a date")
}

func TestLookahead(t *testing.T) {
	f, err := compileRegex(`^(?![^/]+/)(?:labs-)?(?:mi|co)stral`)
	require.NoError(t, err)
	require.True(t, f("mistral-large"))
	require.True(t, f("labs-costral"))
	require.False(t, f("acme/mistral-large"))
	require.False(t, f("gpt-4o"))
}

// TestLookupCacheIsBounded: model names come from spans; past maxFound names the lookups
// still answer, uncached.
func TestLookupCacheIsBounded(t *testing.T) {
	c, err := compileSnapshot(snapshotJSON)
	require.NoError(t, err)
	for i := range maxFound + 10 {
		_, m := c.find("strands-agents", fmt.Sprintf("stub-%d", i))
		require.Nil(t, m)
	}
	require.Len(t, c.found, maxFound)
	p, m := c.find("openai", "gpt-4o-mini")
	require.Equal(t, "openai", p.ID)
	require.Equal(t, "gpt-4o-mini", m.ID)
}
