package pricing

import (
	"encoding/json"
	"fmt"
)

// The snapshot is a compact copy of the genai-prices data (github.com/pydantic/genai-prices,
// MIT License, see data/LICENSE): every provider with its match rules and every model with its
// match rule and the prices a span can be billed by (text input, output, cache read, cache
// write, per request). gen/ writes it from the npm package @pydantic/genai-prices.

// Snapshot is the file data/genai-prices.json.
type Snapshot struct {
	// Package and Version name the npm package the snapshot was generated from; URL is its
	// tarball; License its license (the text is data/LICENSE).
	Package   string     `json:"package"`
	Version   string     `json:"version"`
	URL       string     `json:"url"`
	License   string     `json:"license"`
	Providers []Provider `json:"providers"`
}

// Provider is one provider of the data: its id, the rules that match a provider name and a
// model name to it, the providers whose models it also serves, and its models in data order.
type Provider struct {
	ID            string          `json:"id"`
	ProviderMatch json.RawMessage `json:"provider_match,omitempty"`
	ModelMatch    json.RawMessage `json:"model_match,omitempty"`
	Fallback      []string        `json:"fallback_model_providers,omitempty"`
	Models        []Model         `json:"models"`
}

// Model is one model: its id, the rule matching a model name to it, and its prices, a list
// whose later entries apply from a start date or within a time of day (Constraint), as in
// the data; the first entry is the fallback.
type Model struct {
	ID     string          `json:"id"`
	Match  json.RawMessage `json:"match"`
	Prices []Conditional   `json:"prices"`
}

// Conditional is one price entry of a model.
type Conditional struct {
	Constraint *Constraint `json:"constraint,omitempty"`
	Prices     Prices      `json:"prices"`
}

// Constraint says when a price entry applies: from StartDate (RFC 3339 date or time), or
// daily between StartTime and EndTime (UTC, HH:MM[:SS]; across midnight when EndTime is
// earlier).
type Constraint struct {
	StartDate string `json:"start_date,omitempty"`
	StartTime string `json:"start_time,omitempty"`
	EndTime   string `json:"end_time,omitempty"`
}

// Prices are USD per million tokens (RequestsKCount: per thousand requests). A nil price is
// not in the data.
type Prices struct {
	Input          *Price   `json:"input_mtok,omitempty"`
	Output         *Price   `json:"output_mtok,omitempty"`
	CacheRead      *Price   `json:"cache_read_mtok,omitempty"`
	CacheWrite     *Price   `json:"cache_write_mtok,omitempty"`
	RequestsKCount *float64 `json:"requests_kcount,omitempty"`
}

// any reports whether p holds a price a call can be billed by.
func (p Prices) any() bool {
	return p.Input != nil || p.Output != nil || p.CacheRead != nil || p.CacheWrite != nil || p.RequestsKCount != nil
}

// Price is a flat price, or a tiered one: Base until the call's input tokens exceed a
// tier's Start, then that tier's price (for every token of the kind), as genai-prices does.
type Price struct {
	Base  float64
	Tiers []Tier
}

// Tier is one step of a tiered price.
type Tier struct {
	Start int64   `json:"start"`
	Price float64 `json:"price"`
}

// at is the price per million tokens for a call with inputTokens input tokens.
func (p *Price) at(inputTokens int64) float64 {
	v := p.Base
	for _, t := range p.Tiers {
		if inputTokens > t.Start {
			v = t.Price
		}
	}
	return v
}

// MarshalJSON writes a flat price as a number, a tiered one as {"base", "tiers"}.
func (p Price) MarshalJSON() ([]byte, error) {
	if len(p.Tiers) == 0 {
		return json.Marshal(p.Base)
	}
	return json.Marshal(struct {
		Base  float64 `json:"base"`
		Tiers []Tier  `json:"tiers"`
	}{p.Base, p.Tiers})
}

// UnmarshalJSON reads a number or {"base", "tiers"}.
func (p *Price) UnmarshalJSON(b []byte) error {
	var n float64
	if err := json.Unmarshal(b, &n); err == nil {
		*p = Price{Base: n}
		return nil
	}
	var t struct {
		Base  *float64 `json:"base"`
		Tiers []Tier   `json:"tiers"`
	}
	if err := json.Unmarshal(b, &t); err != nil {
		return err
	}
	if t.Base == nil {
		return fmt.Errorf("tiered price without a base: %s", b)
	}
	*p = Price{Base: *t.Base, Tiers: t.Tiers}
	return nil
}
