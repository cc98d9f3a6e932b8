package rubric

import (
	"fmt"
	"regexp"
	"strings"

	"github.com/otelcol-handoff/otelcol-handoff/internal/agentgraph"
)

// RecoveryOnError, "surfaced in an answer": an answer that says the work failed, or names
// the error, has not swallowed it.

// failureRE finds words that report a failure in an answer.
var failureRE = regexp.MustCompile(`(?i)\b(?:errors?|errored|fail(?:s|ed|ing|ures?)?|exceptions?|could ?n[o'’]t|can ?n[o'’]t|cannot|unable|not able to|went wrong)\b`)

// evidenceLen is how many bytes of the error's words a message quotes (shownWords).
const evidenceLen = 40

// surfaces reports whether an answer reports the error: a failure word, or at least half of
// the error message's words that the receiver's scope did not already contain (the answer
// "Atlantis is an unknown city" names "weather service: unknown city Atlantis" for the scope
// "weather for Paris and Atlantis"; "Atlantis: unavailable" does not). It returns what it
// found, as a message may quote it: the error's words in its own spelling, a word the
// redaction policy masks in the error or the answer as the mask (shownWords).
func surfaces(answer string, err *agentgraph.ErrorInfo, scope string) (string, bool) {
	text := plainOutput(answer)
	// A failure word inside a secret ("error.desk@example.com") reports nothing.
	if m := failureRE.FindString(redactedOf(text).open); m != "" {
		return m, true
	}
	if err == nil {
		return "", false
	}
	inScope := map[string]bool{}
	for _, w := range wordRE.FindAllString(strings.ToLower(scope), -1) {
		inScope[w] = true
	}
	inAnswer := map[string]bool{}
	for _, w := range wordRE.FindAllString(strings.ToLower(text), -1) {
		inAnswer[w] = true
	}
	var distinct, found []string
	seen := map[string]bool{}
	for _, w := range wordRE.FindAllString(strings.ToLower(err.Message), -1) {
		if seen[w] || inScope[w] {
			continue
		}
		seen[w] = true
		distinct = append(distinct, w)
		if inAnswer[w] {
			found = append(found, w)
		}
	}
	if len(found) > 0 && 2*len(found) >= len(distinct) {
		return shownWords(found, err.Message, text, evidenceLen), true
	}
	return "", false
}

// answerSurfaced looks for the error of ep in an answer. When control came back to the
// sender (it took a next step, or the receiver handed control back to it), the sender's
// answers after the round trip must report it: those of the runs the receiver handed back
// to, and the output of the sender's last run. When it did not (a one-way transfer), the
// receiver's own answer is the last word and must report an error inside the receiver. It
// returns PartFail when no answer reports it, PartNA when the receiver reported it to a
// sender whose answer was not captured.
func (x *Index) answerSurfaced(e *agentgraph.Edge, ep episode) (PartState, string) {
	r := e.To
	inside := ep.kind == "tool" || ep.kind == "llm"
	hbs := x.handBacks(e)
	if len(hbs) == 0 && len(x.nextSteps(e)) == 0 {
		if inside && r.Output.Found() {
			if ev, ok := surfaces(r.Output.Text, ep.err, r.Input.Text); ok {
				return PartPass, fmt.Sprintf("%s surfaced it in its answer (%s)", r.Name, quoteEvidence(ev))
			}
		}
		return PartFail, ""
	}
	t := x.roundReturnedAt(e)
	answered := false
	for i, hb := range hbs {
		if i == maxListed {
			break
		}
		x.work++
		if hb.Output.Found() {
			answered = true
			if ev, ok := surfaces(hb.Output.Text, ep.err, r.Input.Text); ok {
				return PartPass, fmt.Sprintf("%s surfaced it in its answer after %s handed control back (span %s: %s)", hb.Name, r.Name, hb.Span.ID, quoteEvidence(ev))
			}
		}
	}
	if run := x.lastOutputRun(e); run != nil && end(run.Span) >= t {
		answered = true
		if ev, ok := surfaces(run.Output.Text, ep.err, r.Input.Text); ok {
			return PartPass, fmt.Sprintf("%s surfaced it in its answer (span %s: %s)", run.Name, run.Span.ID, quoteEvidence(ev))
		}
	}
	if !answered && inside && r.Output.Found() {
		if ev, ok := surfaces(r.Output.Text, ep.err, r.Input.Text); ok {
			return PartNA, fmt.Sprintf("%s reported it to %s (%s), and what %s answered after it was not captured", r.Name, e.From.Name, quoteEvidence(ev), e.From.Name)
		}
	}
	return PartFail, ""
}
