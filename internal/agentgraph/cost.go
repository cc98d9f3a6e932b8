package agentgraph

import (
	"slices"
	"strconv"
	"strings"
	"time"

	"go.opentelemetry.io/collector/pdata/pcommon"

	"github.com/otelcol-handoff/otelcol-handoff/internal/pricing"
)

// Cost. Every call the token rollups count (the innermost LLM spans an agent owns, else an
// agent span's own tokens when no LLM span sits below it; LLM spans outside any agent too) is
// priced once:
//   - the cost the span reports, when the cost chain finds one (gen_ai.usage.cost,
//     OpenInference's llm.cost.total, Pydantic AI's operation.cost, ...): source "reported";
//   - else its tokens (input, output, cached input read and written) times the price of its
//     model (response model, then request model) from Options.Prices: source "override"
//     (a price from config) or "table" (the genai-prices snapshot);
//   - else, when it records tokens, the cost is unknown (Cost.Unpriced): no entry prices its
//     model, or the entry has no price for a kind of token the call used. An unknown cost is
//     never counted as 0: the rollups list the model in UnpricedModels ("(none)" when the
//     span names no model), and a cost budget says it is incomplete.
// A call that records neither tokens nor a cost is not priced (it adds no tokens either).

// Attributes of this distribution for cost (our own names until the GenAI conventions
// settle on one): the handoff processor writes the first three on every priced call's span
// (WriteCosts), AttrCostUSD and the last two on HANDOFF spans (the receiver's subtree).
const (
	// AttrCostUSD is the call's cost in USD (on a HANDOFF span: the receiver subtree's,
	// the known part when AttrCostComplete is false).
	AttrCostUSD = "handoff.usage.cost_usd"
	// AttrCostSource is reported, table, override, or unpriced (the cost is unknown).
	AttrCostSource = "handoff.usage.cost_source"
	// AttrCostBasis is the attribute a reported cost came from, or the price table entry
	// (provider/model) or override (model) that priced the tokens.
	AttrCostBasis = "handoff.usage.cost_basis"
	// AttrCostComplete (HANDOFF spans) is false when a call of the receiver's subtree has no
	// price; AttrUnpricedModels then lists the models without one.
	AttrCostComplete   = "handoff.usage.cost_complete"
	AttrUnpricedModels = "handoff.usage.unpriced_models"
	// CostUnpriced is AttrCostSource's value on a call whose cost is unknown.
	CostUnpriced = "unpriced"
	// NoModel stands for the model of an unpriced call whose span names none.
	NoModel = "(none)"
)

// WriteCosts writes each priced call's cost onto its span (AttrCostUSD, AttrCostSource,
// AttrCostBasis; AttrCostSource unpriced alone when the cost is unknown) and returns how
// many spans it wrote on.
func (g *Graph) WriteCosts() int {
	n := 0
	for _, s := range g.Spans {
		if s.cost == nil {
			continue
		}
		c := *s.cost
		if !c.Priced() && !c.Unpriced {
			continue
		}
		attrs := s.Pdata.Attributes()
		// One exact grow for the keys added, instead of append doubling a slice the decoder
		// sized exactly: the doubled slice is garbage once the trace leaves.
		if c.Priced() {
			attrs.EnsureCapacity(attrs.Len() + 3)
			attrs.PutDouble(AttrCostUSD, c.USD)
			attrs.PutStr(AttrCostSource, c.Source)
			attrs.PutStr(AttrCostBasis, c.From)
		} else {
			attrs.Remove(AttrCostUSD)
			attrs.EnsureCapacity(attrs.Len() + 1)
			attrs.PutStr(AttrCostSource, CostUnpriced)
			attrs.Remove(AttrCostBasis)
		}
		n++
	}
	return n
}

// Cost is what one call cost.
type Cost struct {
	// USD is the cost when it is known (Source set).
	USD float64
	// Source is pricing.SourceReported, SourceTable or SourceOverride; "" when the cost is
	// unknown (Unpriced) or the span is not a priced call.
	Source string
	// From is the attribute key of a reported cost, else the table entry that priced it
	// (provider/model).
	From string
	// Model and Provider are the names the span gives (response model, else request model).
	Model, Provider string
	// Unpriced is set when the call's cost is unknown: no price for its model.
	Unpriced bool
}

// Priced reports whether the cost is known.
func (c Cost) Priced() bool { return c.Source != "" }

// price prices every call the rollups count.
// The costs that are not zero (a span with nothing to price by has none) are gathered in
// scratch with their spans, then copied into one array for the trace.
func (g *Graph) price(chains Chains, prices *pricing.Table) {
	held := costScratch.get(0)
	defer costScratch.put(held)
	priced := (*held)[:0]
	for _, s := range g.Spans {
		s.cost = nil
		if !priceable(s) {
			continue
		}
		if c := priceSpan(g.ix, s, chains, prices); c != (Cost{}) {
			priced = append(priced, pricedSpan{s, c})
		}
	}
	*held = priced // (put clears what was used)
	if len(priced) == 0 {
		return
	}
	costs := make([]Cost, len(priced))
	for i, p := range priced {
		costs[i] = p.c
		p.s.cost = &costs[i]
	}
}

// pricedSpan is a span with the cost price found for it.
type pricedSpan struct {
	s *Span
	c Cost
}

// priceable: the calls the rollups count, LLM calls (not wrapping another) and agent
// spans that called no model below them.
func priceable(s *Span) bool {
	return (s.Role == RoleLLM && !s.llmBelowOwn) || (s.Role == RoleAgent && !s.llmBelow)
}

// costScratch holds price's costs, with their spans, before they are copied out.
var costScratch scratch[pricedSpan]

// priceSpan reads the model, provider and cache chains through Build's attribute index ix
// (slots.go: its chains are compiled from chains).
func priceSpan(ix *attrIndex, s *Span, chains Chains, prices *pricing.Table) Cost {
	resp := ix.resolve(s, &ix.cc.responseModel, nil, nil)
	req := ix.resolve(s, &ix.cc.requestModel, nil, nil)
	provider := ix.resolve(s, &ix.cc.provider, nil, nil).Text
	c := Cost{Provider: provider, Model: resp.Text}
	if c.Model == "" {
		c.Model = req.Text
	}
	if usd, key, ok := resolveFloat(s.Pdata.Attributes(), chains.Cost); ok {
		c.USD, c.Source, c.From = usd, pricing.SourceReported, key
		return c
	}
	if !s.HasTokens {
		// Nothing to price by: an agent that called no model, or a call that records no
		// usage (BeeAI's chat.start spans); it adds no tokens either.
		return Cost{}
	}
	u := pricing.Usage{Input: s.InputTokens, Output: s.OutputTokens}
	u.CacheRead, _, _ = ix.resolveInt(s, &ix.cc.cacheReadTokens)
	u.CacheWrite, _, _ = ix.resolveInt(s, &ix.cc.cacheWriteTokens)
	at := time.Unix(0, int64(s.Pdata.StartTimestamp())).UTC()
	q, ok := prices.Price(provider, []string{resp.Text, req.Text}, at, u)
	if !ok {
		c.Unpriced = true
		return c
	}
	c.USD, c.Source = q.USD, q.Source
	c.From = q.Model
	if q.Provider != "" {
		c.From = q.Provider + "/" + q.Model
	}
	return c
}

// resolveFloat walks a chain of numeric attributes (KEY#FIELD: a number inside a JSON object
// attribute); numeric strings count, negative or non-finite numbers do not.
func resolveFloat(attrs pcommon.Map, chain Chain) (float64, string, bool) {
	for _, key := range chain {
		var n float64
		var ok bool
		if h := strings.IndexByte(key, '#'); h >= 0 {
			n, ok = jsonNumber(attrs, key[:h], key[h+1:])
		} else if v, found := attrs.Get(key); found {
			switch v.Type() {
			case pcommon.ValueTypeDouble:
				n, ok = v.Double(), true
			case pcommon.ValueTypeInt:
				n, ok = float64(v.Int()), true
			case pcommon.ValueTypeStr:
				f, err := strconv.ParseFloat(strings.TrimSpace(v.Str()), 64)
				n, ok = f, err == nil
			}
		}
		if ok && n >= 0 && n-n == 0 { // n-n == 0: finite
			return n, key, true
		}
	}
	return 0, "", false
}

// addCost adds one call's cost to the rollup.
func (r *Rollup) addCost(c Cost) {
	if c.Priced() {
		r.CostUSD += c.USD
	}
	if c.Unpriced {
		model := c.Model
		if model == "" {
			model = NoModel
		}
		r.UnpricedModels = addSorted(r.UnpricedModels, model)
	}
}

// addCosts adds another rollup's cost. An empty list takes o's as it is, clipped: adding
// to either then copies it (slices.Insert past the capacity), never writes the other's.
func (r *Rollup) addCosts(o Rollup) {
	r.CostUSD += o.CostUSD
	if len(r.UnpricedModels) == 0 {
		r.UnpricedModels = slices.Clip(o.UnpricedModels)
		return
	}
	for _, u := range o.UnpricedModels {
		r.UnpricedModels = addSorted(r.UnpricedModels, u)
	}
}

// addSorted inserts s into the sorted set list.
func addSorted(list []string, s string) []string {
	i, found := slices.BinarySearch(list, s)
	if found {
		return list
	}
	return slices.Insert(list, i, s)
}
