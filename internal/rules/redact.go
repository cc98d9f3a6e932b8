package rules

import (
	"github.com/otelcol-handoff/otelcol-handoff/internal/redact"
	"github.com/otelcol-handoff/otelcol-handoff/internal/textsafe"
)

// Bounds of a result's texts once masked: names and messages quote trace data, and one
// 10 MB agent name repeated in every result made tens of MB of console, JSON-lines and
// JUnit output. The bounds are far above any message a rule writes about sane data.
const (
	maxResultText = 8 << 10
	maxResultName = 1 << 10
)

// Redact masks (and bounds), in place, the text fields of results that may quote trace content:
// expected, actual, message, the handoff's agent names and the judge's reason (the
// verdict is copied, never changed where other results share it). Ids, case and step
// names come from the config or are hex and are left as they are, and so are the ids of
// the spans a result names (Result.Spans) where its text quotes them. A nil policy is
// redact.Default().
func Redact(results []Result, p *redact.Policy) {
	for i := range results {
		results[i] = RedactResult(results[i], p)
	}
}

// RedactResult returns r with its text fields masked (see Redact) and bounded (masked
// first, so a cut never leaves part of a secret unrecognised).
func RedactResult(r Result, p *redact.Policy) Result {
	r.Expected = textsafe.Clip(p.RedactKeeping(r.Expected, r.Spans), maxResultText)
	r.Actual = textsafe.Clip(p.RedactKeeping(r.Actual, r.Spans), maxResultText)
	r.Message = textsafe.Clip(p.RedactKeeping(r.Message, r.Spans), maxResultText)
	r.From = textsafe.Clip(p.Redact(r.From), maxResultName)
	r.To = textsafe.Clip(p.Redact(r.To), maxResultName)
	if r.Judge != nil {
		if reason := p.Redact(r.Judge.Reason); reason != r.Judge.Reason {
			v := *r.Judge
			v.Reason = reason
			r.Judge = &v
		}
	}
	return r
}
