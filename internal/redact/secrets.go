package redact

import (
	"encoding/base64"
	"encoding/hex"
	"encoding/json"
	"net/url"
	"strings"
)

// minDerived is the shortest derived form (an encoding, or a base64 run of a shifted
// alignment) searched for: shorter ones would match ordinary text.
const minDerived = 8

// Secrets scrubs known secret values (e.g. an API key read from the environment) from
// text in every encoding a server may echo them in: as is, in any letter case, base64
// (standard and URL alphabets, padded or raw, at any byte alignment inside a longer
// base64 text, of the value as is, lower- or upper-cased), URL-encoded (query and path
// escaping), hex (any case) and JSON-escaped. It is immutable and safe for concurrent use;
// a nil *Secrets scrubs nothing.
type Secrets struct {
	exact []string // case-sensitive (base64 forms)
	fold  []string // ASCII case-insensitive, stored lower-cased
}

// minSecret is the shortest value taken as a secret: a shorter one would be scrubbed out of
// ordinary words.
const minSecret = 4

// NewSecrets prepares the values (surrounding whitespace trimmed; values shorter than 4
// bytes ignored).
func NewSecrets(values ...string) *Secrets {
	s := &Secrets{}
	seenExact, seenFold := map[string]bool{}, map[string]bool{}
	addExact := func(n string) {
		if len(n) >= minDerived && !seenExact[n] {
			seenExact[n] = true
			s.exact = append(s.exact, n)
		}
	}
	addFold := func(n string, min int) {
		n = asciiLower(n)
		if len(n) >= min && !seenFold[n] {
			seenFold[n] = true
			s.fold = append(s.fold, n)
		}
	}
	for _, v := range values {
		v = strings.TrimSpace(v)
		if len(v) < minSecret {
			continue
		}
		addFold(v, minSecret)
		addFold(hex.EncodeToString([]byte(v)), minDerived)
		addFold(url.QueryEscape(v), minDerived)
		addFold(url.PathEscape(v), minDerived)
		if b, err := json.Marshal(v); err == nil {
			addFold(string(b[1:len(b)-1]), minDerived)
		}
		for _, w := range []string{v, strings.ToLower(v), strings.ToUpper(v)} {
			for _, enc := range []*base64.Encoding{base64.RawStdEncoding, base64.RawURLEncoding} {
				addExact(enc.EncodeToString([]byte(w))) // the value alone, or last
				// Inside a longer base64 text the value starts 0, 1 or 2 bytes into a
				// 3-byte group; the groups that hold only its bytes encode the same way
				// whatever surrounds it.
				for _, skip := range []int{0, 1, 2} {
					if len(w) <= skip {
						continue
					}
					inner := w[skip:]
					inner = inner[:len(inner)/3*3]
					addExact(enc.EncodeToString([]byte(inner)))
				}
			}
		}
	}
	// Longer needles first, so a whole encoding is masked before a part of it.
	byLen := func(list []string) {
		for i := 1; i < len(list); i++ {
			for j := i; j > 0 && len(list[j]) > len(list[j-1]); j-- {
				list[j], list[j-1] = list[j-1], list[j]
			}
		}
	}
	byLen(s.exact)
	byLen(s.fold)
	return s
}

// Empty reports whether there is nothing to scrub.
func (s *Secrets) Empty() bool { return s == nil || (len(s.exact) == 0 && len(s.fold) == 0) }

// Scrub replaces every occurrence of a secret, in any of its forms, with [REDACTED].
func (s *Secrets) Scrub(text string) string {
	if s.Empty() || text == "" {
		return text
	}
	var spans []span
	find := func(hay, needle string) {
		for from := 0; ; {
			k := strings.Index(hay[from:], needle)
			if k < 0 {
				return
			}
			spans = append(spans, span{from + k, from + k + len(needle), Mask})
			from += k + len(needle)
		}
	}
	for _, n := range s.exact {
		find(text, n)
	}
	if len(s.fold) > 0 {
		lower := asciiLower(text) // same byte offsets as text
		for _, n := range s.fold {
			find(lower, n)
		}
	}
	if len(spans) == 0 {
		return text
	}
	return apply(text, spans)
}

// asciiLower lower-cases ASCII letters only, so byte offsets stay those of s.
func asciiLower(s string) string {
	i := 0
	for i < len(s) && !isUpper(s[i]) {
		i++
	}
	if i == len(s) {
		return s
	}
	b := []byte(s)
	for ; i < len(b); i++ {
		if isUpper(b[i]) {
			b[i] += 'a' - 'A'
		}
	}
	return string(b)
}
