// Package pricing prices LLM calls: a pinned snapshot of the genai-prices data (see
// snapshot.go and data/), matched on a call's provider and model names with the data's own
// rules, under per-model overrides from config.
package pricing

import (
	_ "embed"
	"encoding/json"
	"errors"
	"fmt"
	"hash/fnv"
	"math"
	"strings"
	"sync"
	"time"
)

//go:embed data/genai-prices.json
var snapshotJSON []byte

// Where a call's cost came from.
const (
	// SourceReported: the span carried the cost (the provider's or the framework's figure).
	SourceReported = "reported"
	// SourceTable: tokens times the genai-prices snapshot.
	SourceTable = "table"
	// SourceOverride: tokens times a price from config (pricing.models).
	SourceOverride = "override"
)

// Usage is what one call used, in tokens. Input counts every input token, the cached ones
// included (the OTel GenAI convention: gen_ai.usage.input_tokens includes cached tokens);
// when CacheRead+CacheWrite exceed Input, the instrumentation counted them apart (Anthropic's
// own usage does), and Input is taken as the uncached input.
type Usage struct {
	Input, Output, CacheRead, CacheWrite int64
}

// Quote is the price of one call.
type Quote struct {
	USD float64
	// Source is SourceTable or SourceOverride.
	Source string
	// Provider and Model are the ids of the table entry that priced the call (for an
	// override: the override's provider, if set, and model).
	Provider, Model string
}

// Config holds the price overrides: the processor's (and the assertion exporter's)
// `pricing` section.
type Config struct {
	// Models are prices that win over the table, matched on the model name (and provider,
	// when set).
	Models []ModelPrice `mapstructure:"models"`
	_      struct{}
}

// ModelPrice is one override, in USD per million tokens.
type ModelPrice struct {
	// Model is matched, case-insensitively, against the call's response model and then its
	// request model.
	Model string `mapstructure:"model"`
	// Provider, when set, must equal (case-insensitively) the call's provider name.
	Provider string `mapstructure:"provider"`
	// Input and Output are required; CacheRead and CacheWrite default to Input.
	Input      *float64 `mapstructure:"input_usd_per_mtok"`
	Output     *float64 `mapstructure:"output_usd_per_mtok"`
	CacheRead  *float64 `mapstructure:"cache_read_usd_per_mtok"`
	CacheWrite *float64 `mapstructure:"cache_write_usd_per_mtok"`
	_          struct{}
}

// Validate checks every override, naming the field (models[i].key; confmap.Validate puts
// the section's key, pricing, before it).
func (c Config) Validate() error {
	var errs []error
	seen := map[string]int{}
	for i, m := range c.Models {
		at := fmt.Sprintf("models[%d]", i)
		if strings.TrimSpace(m.Model) == "" {
			errs = append(errs, fmt.Errorf("%s.model: must name the model", at))
		}
		// As Compile matches them: trimmed and lower-cased.
		key := strings.ToLower(strings.TrimSpace(m.Provider)) + "\x00" + strings.ToLower(strings.TrimSpace(m.Model))
		if j, dup := seen[key]; dup && strings.TrimSpace(m.Model) != "" {
			errs = append(errs, fmt.Errorf("%s.model: %q (provider %q) is already priced by models[%d]", at, m.Model, m.Provider, j))
		}
		seen[key] = i
		for _, f := range []struct {
			key      string
			v        *float64
			required bool
		}{
			{"input_usd_per_mtok", m.Input, true},
			{"output_usd_per_mtok", m.Output, true},
			{"cache_read_usd_per_mtok", m.CacheRead, false},
			{"cache_write_usd_per_mtok", m.CacheWrite, false},
		} {
			switch {
			case f.v == nil && f.required:
				errs = append(errs, fmt.Errorf("%s.%s: must be set", at, f.key))
			case f.v != nil && (*f.v < 0 || math.IsNaN(*f.v) || math.IsInf(*f.v, 0)):
				errs = append(errs, fmt.Errorf("%s.%s: must be a finite price of 0 or more, got %g", at, f.key, *f.v))
			}
		}
	}
	return errors.Join(errs...)
}

// Table prices calls: the overrides first, then the snapshot. Safe for concurrent use.
type Table struct {
	snap      *compiled
	overrides []override
	fp        uint64
}

type override struct {
	model, provider string
	prices          Prices
}

type compiledProvider struct {
	Provider
	providerMatch, modelMatch matcher
	models                    []compiledModel
}

type compiledModel struct {
	*Model
	match matcher
}

type compiled struct {
	version   string
	providers []*compiledProvider
	byID      map[string]*compiledProvider

	// found caches find's answers (misses too) by provider and model name: a lookup walks
	// the match rules of up to every model of the data (tens of microseconds for a miss in
	// a large provider), and a trace's calls name few models. Names come from spans, so the
	// cache is bounded: past maxFound entries, lookups are not cached.
	mu    sync.RWMutex
	found map[foundKey]foundEntry
}

const maxFound = 10_000

type foundKey struct{ provider, model string }

type foundEntry struct {
	p *compiledProvider
	m *compiledModel
}

var (
	snapOnce sync.Once
	snap     *compiled
	snapErr  error
)

// loadSnapshot compiles the embedded snapshot (once).
func loadSnapshot() (*compiled, error) {
	snapOnce.Do(func() { snap, snapErr = compileSnapshot(snapshotJSON) })
	return snap, snapErr
}

func compileSnapshot(data []byte) (*compiled, error) {
	var s Snapshot
	if err := json.Unmarshal(data, &s); err != nil {
		return nil, fmt.Errorf("pricing snapshot: %w", err)
	}
	c := &compiled{version: s.Package + "@" + s.Version, byID: map[string]*compiledProvider{}, found: map[foundKey]foundEntry{}}
	for _, p := range s.Providers {
		cp := &compiledProvider{Provider: p}
		var err error
		if p.ProviderMatch != nil {
			if cp.providerMatch, err = compileMatch(p.ProviderMatch); err != nil {
				return nil, fmt.Errorf("pricing snapshot: provider %s: %w", p.ID, err)
			}
		}
		if p.ModelMatch != nil {
			if cp.modelMatch, err = compileMatch(p.ModelMatch); err != nil {
				return nil, fmt.Errorf("pricing snapshot: provider %s: %w", p.ID, err)
			}
		}
		for i := range cp.Provider.Models {
			m := &cp.Provider.Models[i]
			f, err := compileMatch(m.Match)
			if err != nil {
				return nil, fmt.Errorf("pricing snapshot: model %s/%s: %w", p.ID, m.ID, err)
			}
			cp.models = append(cp.models, compiledModel{Model: m, match: f})
		}
		c.providers = append(c.providers, cp)
		c.byID[p.ID] = cp
	}
	return c, nil
}

// SnapshotVersion names the pinned data (package@version).
func SnapshotVersion() string {
	s, err := loadSnapshot()
	if err != nil {
		return ""
	}
	return s.version
}

var (
	defaultOnce  sync.Once
	defaultTable *Table
)

// Default is the snapshot without overrides. It panics if the embedded snapshot does not
// load, which TestSnapshotLoads rules out.
func Default() *Table {
	defaultOnce.Do(func() {
		t, err := Config{}.Compile()
		if err != nil {
			panic(err)
		}
		defaultTable = t
	})
	return defaultTable
}

// Compile builds the table of c (Validate it first).
func (c Config) Compile() (*Table, error) {
	s, err := loadSnapshot()
	if err != nil {
		return nil, err
	}
	if err := c.Validate(); err != nil {
		return nil, err
	}
	t := &Table{snap: s}
	h := fnv.New64a()
	_, _ = h.Write([]byte(s.version))
	for _, m := range c.Models {
		p := Prices{Input: &Price{Base: *m.Input}, Output: &Price{Base: *m.Output}}
		if m.CacheRead != nil {
			p.CacheRead = &Price{Base: *m.CacheRead}
		}
		if m.CacheWrite != nil {
			p.CacheWrite = &Price{Base: *m.CacheWrite}
		}
		t.overrides = append(t.overrides, override{model: strings.ToLower(strings.TrimSpace(m.Model)), provider: strings.ToLower(strings.TrimSpace(m.Provider)), prices: p})
		_, _ = fmt.Fprintf(h, "\x00%s\x00%s\x00%v\x00%v\x00%v\x00%v", strings.ToLower(m.Model), strings.ToLower(m.Provider),
			*m.Input, *m.Output, fmtOpt(m.CacheRead), fmtOpt(m.CacheWrite))
	}
	t.fp = h.Sum64()
	return t, nil
}

func fmtOpt(v *float64) string {
	if v == nil {
		return "-"
	}
	return fmt.Sprint(*v)
}

// Fingerprint identifies the prices: tables with the same fingerprint price every call the
// same. A nil table is the default one.
func (t *Table) Fingerprint() uint64 {
	if t == nil {
		return Default().fp
	}
	return t.fp
}

// Price prices a call of one of models (tried in order: the response model, then the
// request model) from provider (may be empty), started at at, that used u. ok is false when
// no override and no table entry prices it, or the entry has no price for a kind of token
// the call used: the call's cost is then unknown, never 0.
func (t *Table) Price(provider string, models []string, at time.Time, u Usage) (q Quote, ok bool) {
	if t == nil {
		t = Default()
	}
	prov := strings.ToLower(strings.TrimSpace(provider))
	for _, model := range models {
		name := strings.ToLower(strings.TrimSpace(model))
		if name == "" {
			continue
		}
		for _, o := range t.overrides {
			if o.model == name && (o.provider == "" || o.provider == prov) {
				if usd, ok := cost(o.prices, u); ok {
					return Quote{USD: usd, Source: SourceOverride, Provider: o.provider, Model: model}, true
				}
			}
		}
	}
	for _, model := range models {
		name := strings.TrimSpace(model)
		if name == "" {
			continue
		}
		p, m := t.snap.find(prov, name)
		if m == nil {
			continue
		}
		if usd, ok := cost(m.pricesAt(at), u); ok {
			return Quote{USD: usd, Source: SourceTable, Provider: p.ID, Model: m.ID}, true
		}
	}
	return Quote{}, false
}

// find finds the provider and model entry of a call (lookup), cached.
//
// lookup finds them as genai-prices does: the provider by
// id or provider rule (else by the providers' model rules), then the first model whose rule
// matches, in the provider and then its fallback providers, trying the model name again with
// a compact date suffix written with dashes.
func (c *compiled) find(provider, model string) (*compiledProvider, *compiledModel) {
	key := foundKey{provider, model}
	c.mu.RLock()
	e, ok := c.found[key]
	c.mu.RUnlock()
	if ok {
		return e.p, e.m
	}
	e.p, e.m = c.lookup(provider, model)
	c.mu.Lock()
	if len(c.found) < maxFound {
		c.found[key] = e
	}
	c.mu.Unlock()
	return e.p, e.m
}

func (c *compiled) lookup(provider, model string) (*compiledProvider, *compiledModel) {
	var p *compiledProvider
	if provider != "" {
		if p = c.byID[provider]; p == nil {
			for _, cp := range c.providers {
				if cp.providerMatch != nil && cp.providerMatch(provider) {
					p = cp
					break
				}
			}
		}
	}
	if p == nil {
		for _, cp := range c.providers {
			if cp.modelMatch != nil && cp.modelMatch(model) {
				p = cp
				break
			}
		}
	}
	if p == nil {
		return nil, nil
	}
	if m := c.modelIn(p, model, true); m != nil {
		return p, m
	}
	if iso := isoDate(model); iso != model {
		return p, c.modelIn(p, iso, true)
	}
	return p, nil
}

func (c *compiled) modelIn(p *compiledProvider, model string, fallback bool) *compiledModel {
	for i := range p.models {
		if p.models[i].match(model) {
			return &p.models[i]
		}
	}
	if !fallback {
		return nil
	}
	for _, id := range p.Fallback {
		if fp := c.byID[id]; fp != nil {
			if m := c.modelIn(fp, model, false); m != nil {
				return m
			}
		}
	}
	return nil
}

// pricesAt picks the price entry in force at t: the last entry whose constraint holds (an
// entry without one always does), else the first, as genai-prices does.
func (m *compiledModel) pricesAt(t time.Time) Prices {
	t = t.UTC()
	for i := len(m.Prices) - 1; i >= 0; i-- {
		c := m.Prices[i].Constraint
		switch {
		case c == nil:
			return m.Prices[i].Prices
		case c.StartDate != "":
			if start, ok := parseDate(c.StartDate); ok && !t.Before(start) {
				return m.Prices[i].Prices
			}
		default:
			now := t.Sub(t.Truncate(24 * time.Hour))
			from, okFrom := parseClock(c.StartTime)
			to, okTo := parseClock(c.EndTime)
			if okFrom && okTo && ((to < from && (now >= from || now < to)) || (now >= from && now < to)) {
				return m.Prices[i].Prices
			}
		}
	}
	return m.Prices[0].Prices
}

func parseDate(s string) (time.Time, bool) {
	for _, layout := range []string{time.RFC3339, "2006-01-02"} {
		if t, err := time.Parse(layout, s); err == nil {
			return t, true
		}
	}
	return time.Time{}, false
}

// parseClock reads HH:MM[:SS] as the time since midnight.
func parseClock(s string) (time.Duration, bool) {
	for _, layout := range []string{"15:04:05", "15:04"} {
		if t, err := time.Parse(layout, s); err == nil {
			return time.Duration(t.Hour())*time.Hour + time.Duration(t.Minute())*time.Minute + time.Duration(t.Second())*time.Second, true
		}
	}
	return 0, false
}

// cost is u priced at p; ok is false when p has no price for a kind of token u used (cache
// tokens are priced at the input price when p has none for them, as genai-prices does).
func cost(p Prices, u Usage) (float64, bool) {
	if !p.any() {
		return 0, false
	}
	cacheRead, cacheWrite := p.CacheRead, p.CacheWrite
	if cacheRead == nil {
		cacheRead = p.Input
	}
	if cacheWrite == nil {
		cacheWrite = p.Input
	}
	uncached := u.Input - u.CacheRead - u.CacheWrite
	if uncached < 0 {
		uncached = u.Input
	}
	total := u.Input
	if u.Input-u.CacheRead-u.CacheWrite < 0 {
		total = u.Input + u.CacheRead + u.CacheWrite
	}
	var usd float64
	for _, part := range []struct {
		tokens int64
		price  *Price
	}{{uncached, p.Input}, {u.CacheRead, cacheRead}, {u.CacheWrite, cacheWrite}, {u.Output, p.Output}} {
		if part.tokens <= 0 {
			continue
		}
		if part.price == nil {
			return 0, false
		}
		usd += float64(part.tokens) * part.price.at(total) / 1e6
	}
	if p.RequestsKCount != nil {
		usd += *p.RequestsKCount / 1000
	}
	return usd, true
}
