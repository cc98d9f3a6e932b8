package rules

import "github.com/otelcol-handoff/otelcol-handoff/internal/redact"

// Redact masks, in place, the text fields of results that may quote trace content:
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

// RedactResult returns r with its text fields masked (see Redact).
func RedactResult(r Result, p *redact.Policy) Result {
	r.Expected = p.RedactKeeping(r.Expected, r.Spans)
	r.Actual = p.RedactKeeping(r.Actual, r.Spans)
	r.Message = p.RedactKeeping(r.Message, r.Spans)
	r.From = p.Redact(r.From)
	r.To = p.Redact(r.To)
	if r.Judge != nil {
		if reason := p.Redact(r.Judge.Reason); reason != r.Judge.Reason {
			v := *r.Judge
			v.Reason = reason
			r.Judge = &v
		}
	}
	return r
}
