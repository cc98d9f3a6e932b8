// Package redact is the one redaction policy of the distribution: everything that leaves
// the process other than the user's own spans (judge requests, log records, report files,
// assertion messages, HANDOFF span content) goes through a Policy.
//
// A Policy masks what its built-in detectors find — payment card numbers (Luhn-checked),
// email addresses, API keys, bearer tokens and JWTs — with a typed mask such as
// [REDACTED:card], and every match of the user's regular expressions with [REDACTED].
// Detectors are a hand-written scanner (one pass over the bytes, no backtracking); the
// user's patterns are RE2 expressions (linear time, no catastrophic backtracking), so the
// cost is linear in the input whatever it holds.
package redact

import (
	"errors"
	"fmt"
	"regexp"
	"slices"
	"strings"
)

// Detector names a built-in detector.
type Detector string

// The built-in detectors.
const (
	// Card: 13 to 19 digits starting with 2-6 (the card networks), optionally grouped by
	// single spaces or dashes, that pass the Luhn check. A digit run that fails it is not
	// masked.
	Card Detector = "card"
	// Email: local@domain.tld.
	Email Detector = "email"
	// APIKey: sk-… (OpenAI, incl. sk-proj-…, Anthropic sk-ant-…), AKIA…/ASIA… (AWS access
	// key ids), ghp_…/github_pat_… (GitHub), xox?-… (Slack), AIza… (Google).
	APIKey Detector = "api_key"
	// Bearer: "Bearer <token>" (any case), as in an Authorization header.
	Bearer Detector = "bearer"
	// JWT: eyJ….….… (three base64url segments, the signature may be empty).
	JWT Detector = "jwt"
)

// Detectors lists every built-in detector, in documentation order.
var Detectors = []Detector{Card, Email, APIKey, Bearer, JWT}

// All disables every detector when listed in Config.DisableDetectors.
const All = "all"

// Mask is what a match of a user pattern becomes; detector matches become
// MaskFor(detector).
const Mask = "[REDACTED]"

// MaskFor is the typed mask of a detector, e.g. [REDACTED:card].
func MaskFor(d Detector) string { return "[REDACTED:" + string(d) + "]" }

// Config is the user's side of a policy, as it appears in collector configs.
type Config struct {
	// DisableDetectors turns built-in detectors off by name (card, email, api_key, bearer,
	// jwt), or all of them with "all". Empty: every detector is on.
	DisableDetectors []string `mapstructure:"disable_detectors"`
	// Patterns are regular expressions (RE2 syntax) whose matches are masked with
	// [REDACTED], in addition to the detectors.
	Patterns []string `mapstructure:"patterns"`

	_ struct{}
}

// Validate checks the config; errors name the field under prefix (e.g. "redaction").
func (c Config) Validate(prefix string) error {
	return errors.Join(validateDetectors(prefix+".disable_detectors", c.DisableDetectors),
		ValidatePatterns(prefix+".patterns", c.Patterns))
}

func validateDetectors(field string, names []string) error {
	var errs []error
	for i, n := range names {
		if n == All {
			continue
		}
		if _, ok := detectorBit(Detector(n)); !ok {
			errs = append(errs, fmt.Errorf("%s[%d]: unknown detector %q (want one of %s, or %s)", field, i, n, detectorList(), All))
		}
	}
	return errors.Join(errs...)
}

// ValidatePatterns checks that every pattern compiles; errors name field[i].
func ValidatePatterns(field string, patterns []string) error {
	var errs []error
	for i, p := range patterns {
		if _, err := regexp.Compile(p); err != nil {
			errs = append(errs, fmt.Errorf("%s[%d]: %w", field, i, err))
		} else if regexp.MustCompile(p).MatchString("") {
			// A pattern that matches nothing at all would mask between every character.
			errs = append(errs, fmt.Errorf("%s[%d]: %q matches the empty string", field, i, p))
		}
	}
	return errors.Join(errs...)
}

// Compile builds the policy of a validated config; extra patterns (e.g. the judge's own
// redact list) are added to the config's.
func (c Config) Compile(extra ...string) (*Policy, error) {
	if err := validateDetectors("disable_detectors", c.DisableDetectors); err != nil {
		return nil, err
	}
	disabled := map[Detector]bool{}
	for _, n := range c.DisableDetectors {
		if n == All {
			for _, d := range Detectors {
				disabled[d] = true
			}
			continue
		}
		disabled[Detector(n)] = true
	}
	var on []Detector
	for _, d := range Detectors {
		if !disabled[d] {
			on = append(on, d)
		}
	}
	return New(on, append(append([]string(nil), c.Patterns...), extra...))
}

// Policy masks secrets in text. It is immutable and safe for concurrent use. A nil
// *Policy behaves like Default().
type Policy struct {
	detectors uint8
	// user are the user's patterns, each compiled on its own: a pattern with a literal
	// prefix keeps RE2's fast prefix scan, which one joined alternation would lose.
	user []*regexp.Regexp
}

var defaultPolicy = mustNew(Detectors, nil)

// Default is the policy with every built-in detector and no user pattern.
func Default() *Policy { return defaultPolicy }

// None masks nothing (a policy that copies).
var None = mustNew(nil, nil)

func mustNew(ds []Detector, patterns []string) *Policy {
	p, err := New(ds, patterns)
	if err != nil {
		panic(err)
	}
	return p
}

// New builds a policy from the detectors to run and the user's patterns.
func New(detectors []Detector, patterns []string) (*Policy, error) {
	p := &Policy{}
	for _, d := range detectors {
		bit, ok := detectorBit(d)
		if !ok {
			return nil, fmt.Errorf("unknown detector %q (want one of %s)", d, detectorList())
		}
		p.detectors |= bit
	}
	if err := ValidatePatterns("patterns", patterns); err != nil {
		return nil, err
	}
	for _, pat := range patterns {
		p.user = append(p.user, regexp.MustCompile(pat)) // validated above
	}
	return p, nil
}

// Enabled reports whether the policy runs detector d.
func (p *Policy) Enabled(d Detector) bool {
	if p == nil {
		p = defaultPolicy
	}
	bit, _ := detectorBit(d)
	return p.detectors&bit != 0
}

// Redact returns s with every detector match and user-pattern match masked. Overlapping
// matches are merged into one mask (a user pattern's [REDACTED] wins over a typed one). s
// is returned as is, without allocating, when nothing matches.
func (p *Policy) Redact(s string) string { return p.RedactKeeping(s, nil) }

// RedactKeeping is Redact that leaves a match standing when it is exactly one of keep: the
// ids of the spans a verdict names are not secrets, even when a span id's 16 hex digits
// happen to be decimal and pass the Luhn check.
func (p *Policy) RedactKeeping(s string, keep []string) string {
	if p == nil {
		p = defaultPolicy
	}
	if s == "" || (p.detectors == 0 && len(p.user) == 0) {
		return s
	}
	var buf [8]span // most texts hold fewer matches: no allocation for them
	spans := buf[:0]
	if p.detectors != 0 {
		spans = scan(s, p.detectors, spans)
	}
	for _, re := range p.user {
		for _, m := range re.FindAllStringIndex(s, -1) {
			if m[1] > m[0] {
				spans = append(spans, span{start: m[0], end: m[1], mask: Mask})
			}
		}
	}
	if len(keep) > 0 {
		spans = slices.DeleteFunc(spans, func(m span) bool { return slices.Contains(keep, s[m.start:m.end]) })
	}
	if len(spans) == 0 {
		return s
	}
	return apply(s, spans)
}

// span is one match: s[start:end] becomes mask.
type span struct {
	start, end int
	mask       string
}

// apply replaces the spans (merging overlaps) in s.
func apply(s string, spans []span) string {
	slices.SortStableFunc(spans, func(a, b span) int { return a.start - b.start })
	return merge(s, spans)
}

// merge replaces the spans, sorted by start, in s; overlapping spans become one.
func merge(s string, spans []span) string {
	var b strings.Builder
	b.Grow(len(s))
	last := 0
	for i := 0; i < len(spans); {
		cur := spans[i]
		i++
		for i < len(spans) && spans[i].start < cur.end {
			if spans[i].end > cur.end {
				cur.end = spans[i].end
			}
			if spans[i].mask == Mask {
				cur.mask = Mask
			}
			i++
		}
		b.WriteString(s[last:cur.start])
		b.WriteString(cur.mask)
		last = cur.end
	}
	b.WriteString(s[last:])
	return b.String()
}

func detectorBit(d Detector) (uint8, bool) {
	for i, x := range Detectors {
		if x == d {
			return 1 << i, true
		}
	}
	return 0, false
}

func detectorList() string {
	names := make([]string, len(Detectors))
	for i, d := range Detectors {
		names[i] = string(d)
	}
	return strings.Join(names, ", ")
}
