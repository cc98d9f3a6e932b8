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
// to hold no letter. Every run of 16 digits covers exactly one index i with i%16 == 15, so
// only those bytes are read until one is a digit (messages are long, such ids rare).
func decimalSpanIDs(s string) []string {
	var out []string
	for at := 15; at < len(s); at += 16 {
		if !isDigit(s[at]) {
			continue
		}
		i, j := at, at+1
		for i > 0 && isDigit(s[i-1]) {
			i--
		}
		for j < len(s) && isDigit(s[j]) {
			j++
		}
		if j-i == 16 && !(i > 0 && isWordByte(s[i-1])) && !(j < len(s) && isWordByte(s[j])) {
			out = append(out, s[i:j])
		}
		for at+16 < j { // the next index read is past this run
			at += 16
		}
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
