package cluster

import (
	"crypto/sha256"
	"encoding/hex"
	"regexp"
	"strings"
	"unicode"
	"unicode/utf8"
)

// Key is what names one failure: the case and step that failed, the handoff's sender and
// receiver (empty when the result names no handoff), the cluster and the message.
type Key struct {
	Case, Step, From, To string
	Cluster              Name
	Message              string
}

// Signature is the failure's stable signature: 16 hex digits of a SHA-256 over the case,
// step, sender → receiver, cluster and normalized message (Normalize), each ended by a zero
// byte, so the same failure on two traces with other ids, numbers, durations or token counts
// has one signature. The hashed bytes are built in one buffer (on the stack for the usual
// sizes), the normalized message appended to it as Normalize would return it.
func (k Key) Signature() string {
	var stack [512]byte
	buf := stack[:0]
	for _, f := range [...]string{k.Case, k.Step, k.From, k.To, string(k.Cluster.Or())} {
		buf = append(buf, f...)
		buf = append(buf, 0)
	}
	buf = appendNormalized(buf, k.Message)
	buf = append(buf, 0)
	sum := sha256.Sum256(buf)
	var out [16]byte
	hex.Encode(out[:], sum[:8])
	return string(out[:])
}

// Placeholders Normalize puts in place of what varies between traces.
const (
	PlaceholderID       = "<id>"
	PlaceholderTime     = "<time>"
	PlaceholderDuration = "<duration>"
	PlaceholderNumber   = "<n>"
	PlaceholderText     = "<text>"
	PlaceholderJSON     = "<json>"
)

var (
	// UUIDs; then replaceHex takes runs of 8 or more hex digits (span and trace ids, hashes).
	uuidRe = regexp.MustCompile(`(?i)\b[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}\b`)
	// RFC 3339 timestamps.
	timeRe = regexp.MustCompile(`\b\d{4}-\d{2}-\d{2}[T ]\d{2}:\d{2}:\d{2}(?:\.\d+)?(?:Z|[+-]\d{2}:?\d{2})?`)
	// Go-style durations (1.5s, 250ms, 1m30s, 2h) and numbers with a duration unit word.
	durationRe = regexp.MustCompile(`\b(?:\d+(?:\.\d+)?(?:ns|us|µs|ms|s|m|h))+\b|\b\d+(?:\.\d+)?\s?(?:milliseconds?|seconds?|minutes?|hours?)\b`)
	// A quoted `expression`, or a quoted /pattern/ (after the start, a space or "(", before
	// the end, a space or punctuation).
	patternRe = regexp.MustCompile("`[^`\n]*`|(?:^|[\\s(])/[^/\n]+/(?:$|[\\s,;:).])")
)

// Normalize replaces what varies between two traces with the same failure: content quoted
// from the trace (a "double-quoted" string with <text>, a JSON object or array with <json>),
// ids (UUIDs, hex span and trace ids) with <id>, timestamps with <time>, durations with <duration>, and the
// remaining numbers (token counts, counts, scores, percentages) with <n>, except digits glued
// to a letter (an agent or model name such as agent2 or gpt-4o). Runs of white space
// become one space.
//
// A `expression` or a /pattern/ (configured ones, as the messages quote them) is kept as it
// is: it comes from the config, not from the trace.
func Normalize(msg string) string { return string(appendNormalized(nil, msg)) }

// appendNormalized appends Normalize(msg) to dst. Each step leaves its input as it is (no
// copy) when it has nothing to replace; without a kept expression or pattern the numbers
// are replaced, and the white space collapsed, as the text is appended to dst.
func appendNormalized(dst []byte, msg string) []byte {
	var kept []string
	msg = strings.ReplaceAll(msg, "\x00", "")
	if strings.ContainsAny(msg, "/`") {
		msg = patternRe.ReplaceAllStringFunc(msg, func(m string) string {
			i := strings.IndexAny(m, "/`")
			kept = append(kept, m[i:])
			return m[:i] + "\x00"
		})
	}
	s := replaceContent(msg)
	start := len(dst)
	digits := strings.ContainsAny(s, "0123456789") // every placeholder below stands for digits
	if digits {
		if strings.Count(s, "-") >= 4 {
			s = uuidRe.ReplaceAllString(s, PlaceholderID)
		}
		s = replaceHex(s)
		if mayHoldTime(s) {
			s = timeRe.ReplaceAllString(s, PlaceholderTime)
		}
		if mayHoldDuration(s) {
			s = durationRe.ReplaceAllString(s, PlaceholderDuration)
		}
	}
	switch {
	case len(kept) > 0:
		if digits {
			s = string(appendNumbers(nil, s))
		}
		for _, k := range kept {
			s = strings.Replace(s, "\x00", k, 1)
		}
		dst = append(dst, s...)
	case digits:
		dst = appendNumbers(dst, s)
	default:
		dst = append(dst, s...)
	}
	return collapseSpace(dst, start)
}

// collapseSpace rewrites b[from:] in place as strings.Join(strings.Fields(b[from:]), " "):
// the runs of white space (unicode.IsSpace, as Fields decides it) become one space, and
// none is left at either end.
func collapseSpace(b []byte, from int) []byte {
	w := from
	pending := false // a space is due before the next field
	for r := from; r < len(b); {
		c := b[r]
		size := 1
		space := asciiSpace(c)
		if c >= utf8.RuneSelf {
			var ru rune
			ru, size = utf8.DecodeRune(b[r:])
			space = unicode.IsSpace(ru)
		}
		if space {
			pending = w > from
			r += size
			continue
		}
		if pending {
			b[w] = ' '
			w++
			pending = false
		}
		w += copy(b[w:], b[r:r+size])
		r += size
	}
	return b[:w]
}

// asciiSpace: the ASCII white space of strings.Fields (and unicode.IsSpace).
func asciiSpace(c byte) bool {
	return c == ' ' || c == '\t' || c == '\n' || c == '\v' || c == '\f' || c == '\r'
}

// mayHoldDuration is false when durationRe cannot match s: every match has a run of digits
// followed by a unit's first letter (n, u, µ, m, s, h), or by one white space and m, s or h.
// The regular expression is most of a signature's cost; most messages have no duration.
func mayHoldDuration(s string) bool {
	for i := 0; i < len(s); i++ {
		if !isDigit(s[i]) {
			continue
		}
		for i < len(s) && isDigit(s[i]) {
			i++
		}
		if i == len(s) {
			return false
		}
		switch c := s[i]; c {
		case 'n', 'u', 'm', 's', 'h', "µ"[0]:
			return true
		case ' ', '\t', '\n', '\f', '\r':
			if i+1 < len(s) && (s[i+1] == 'm' || s[i+1] == 's' || s[i+1] == 'h') {
				return true
			}
		}
	}
	return false
}

func isDigit(c byte) bool { return '0' <= c && c <= '9' }

// mayHoldTime is false when timeRe cannot match s: every match has a ':' and starts with
// four digits and a '-' (the year). The expression costs more than this scan on every
// message with a colon (most do: "tool calls: 3").
func mayHoldTime(s string) bool {
	if !strings.Contains(s, ":") {
		return false
	}
	for i := 0; i+4 < len(s); i++ {
		if s[i+4] == '-' && isDigit(s[i]) && isDigit(s[i+1]) && isDigit(s[i+2]) && isDigit(s[i+3]) {
			return true
		}
	}
	return false
}

// numberEnd returns the end of the number that starts with the digit s[i]: digits, then
// every '.' or ',' followed by digits (the leftmost-longest match of `\d+(?:[.,]\d+)*`,
// checked against that expression by FuzzNumberScan).
func numberEnd(s string, i int) int {
	for {
		for i < len(s) && isDigit(s[i]) {
			i++
		}
		if i+1 >= len(s) || s[i] != '.' && s[i] != ',' || !isDigit(s[i+1]) {
			return i
		}
		i++
	}
}

// appendNumbers appends s to dst with <n> in place of every number not glued to an ASCII
// letter (gpt-4o and agent2 keep their digits), and of the count in a word "x3" (a count as
// "planner x3").
func appendNumbers(dst []byte, s string) []byte {
	last := 0
	for start := 0; start < len(s); {
		if !isDigit(s[start]) {
			start++
			continue
		}
		end := numberEnd(s, start)
		count := start > 0 && s[start-1] == 'x' && (start == 1 || s[start-2] == ' ')
		glued := start > 0 && isLetter(s[start-1]) || end < len(s) && isLetter(s[end])
		if !glued || count {
			dst = append(dst, s[last:start]...)
			dst = append(dst, PlaceholderNumber...)
			last = end
		}
		start = end
	}
	return append(dst, s[last:]...)
}

func isLetter(c byte) bool { return c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' }

// replaceContent puts <text> in place of every double-quoted string and <json> in place of
// every JSON object or array (one that opens with {" or [ followed by {, [ or "), scanning
// strings with their escapes; an unclosed one runs to a cut or the end.
func replaceContent(s string) string {
	var b []byte
	last := 0
	for i := 0; i < len(s); {
		c := s[i]
		switch {
		case c == '"':
			if b == nil {
				b = make([]byte, 0, len(s)+len(PlaceholderJSON))
			}
			b = append(append(b, s[last:i]...), PlaceholderText...)
			i = skipString(s, i)
			last = i
		case (c == '{' || c == '[') && jsonStart(s[i:]):
			if b == nil {
				b = make([]byte, 0, len(s)+len(PlaceholderJSON))
			}
			b = append(append(b, s[last:i]...), PlaceholderJSON...)
			i = skipJSON(s, i)
			last = i
		default:
			i++
		}
	}
	if b == nil {
		return s
	}
	return string(append(b, s[last:]...))
}

func jsonStart(s string) bool {
	if len(s) < 2 {
		return false
	}
	if s[0] == '{' {
		return s[1] == '"' || s[1] == '}'
	}
	return s[1] == '{' || s[1] == '[' || s[1] == '"' || s[1] == ']'
}

// skipString returns the index after the string that opens at s[i].
func skipString(s string, i int) int {
	for j := i + 1; j < len(s); j++ {
		switch s[j] {
		case '\\':
			j++
		case '"':
			return j + 1
		}
	}
	return len(s)
}

// skipJSON returns the index after the object or array that opens at s[i]; one left open
// by a cut ("…", as the messages shorten long values) ends at the cut.
func skipJSON(s string, i int) int {
	depth := 0
	for j := i; j < len(s); j++ {
		switch s[j] {
		case '"':
			j = skipString(s, j) - 1
		case '{', '[':
			depth++
		case '}', ']':
			if depth--; depth == 0 {
				return j + 1
			}
		}
	}
	if k := strings.Index(s[i:], "…"); k >= 0 {
		return i + k + len("…")
	}
	return len(s)
}

// replaceHex puts <id> in place of every word of 8 or more hex digits that holds a digit (a
// span or trace id, a hash), so an English word such as "deadbeef" or "accepted" stays.
func replaceHex(s string) string {
	var b strings.Builder
	last := 0
	for i := 0; i < len(s); {
		if !isHex(s[i]) || i > 0 && isWord(s[i-1]) {
			i++
			continue
		}
		j, digit := i, false
		for j < len(s) && isHex(s[j]) {
			digit = digit || s[j] >= '0' && s[j] <= '9'
			j++
		}
		if j-i >= 8 && digit && (j == len(s) || !isWord(s[j])) {
			if last == 0 {
				b.Grow(len(s)) // an id is longer than its placeholder: one allocation
			}
			b.WriteString(s[last:i])
			b.WriteString(PlaceholderID)
			last = j
		}
		i = j
	}
	if last == 0 {
		return s
	}
	b.WriteString(s[last:])
	return b.String()
}

func isHex(c byte) bool { return c >= '0' && c <= '9' || c >= 'a' && c <= 'f' || c >= 'A' && c <= 'F' }

// isWord is \w of a regular expression: a letter, a digit or an underscore.
func isWord(c byte) bool { return isLetter(c) || c >= '0' && c <= '9' || c == '_' }
