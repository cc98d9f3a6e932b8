package check

import (
	"encoding/hex"
	"slices"

	"go.opentelemetry.io/collector/pdata/pcommon"

	"github.com/otelcol-handoff/otelcol-handoff/internal/agentgraph"
	"github.com/otelcol-handoff/otelcol-handoff/internal/redact"
)

// NameQuotedSpans adds to each result's Spans the spans of g its text quotes by an id the
// redaction detectors would take for a card number (16 decimal digits that pass the Luhn
// check, about one random id in 40,000), when it does not list them yet: redaction leaves
// the spans a result lists standing (rules.RedactResult).
func NameQuotedSpans(rs []Result, g *agentgraph.Graph) {
	for i := range rs {
		r := &rs[i]
		for _, text := range [...]string{r.Expected, r.Actual, r.Message} {
			for _, id := range decimalSpanIDs(text) {
				if redact.Default().Redact(id) != id && !slices.Contains(r.Spans, id) && hasSpan(g, id) {
					r.Spans = append(slices.Clip(r.Spans), id) // Spans may be shared
				}
			}
		}
	}
}

// decimalSpanIDs returns the runs of exactly 16 decimal digits in s that stand alone (no
// letter, digit or '-' next to them): the shape of a span id written in hex that happens
// to hold no letter.
func decimalSpanIDs(s string) []string {
	var out []string
	for i := 0; i < len(s); {
		if !isDigit(s[i]) {
			i++
			continue
		}
		j := i
		for j < len(s) && isDigit(s[j]) {
			j++
		}
		if j-i == 16 && !(i > 0 && isWordByte(s[i-1])) && !(j < len(s) && isWordByte(s[j])) {
			out = append(out, s[i:j])
		}
		i = j
	}
	return out
}

func hasSpan(g *agentgraph.Graph, id string) bool {
	var sid pcommon.SpanID
	if _, err := hex.Decode(sid[:], []byte(id)); err != nil || g == nil {
		return false
	}
	for _, s := range g.Spans {
		if s.ID == sid {
			return true
		}
	}
	return false
}

func isDigit(c byte) bool { return c >= '0' && c <= '9' }

func isWordByte(c byte) bool {
	return isDigit(c) || c == '-' || c == '_' || (c|0x20 >= 'a' && c|0x20 <= 'z')
}
