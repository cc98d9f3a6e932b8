// Package textsafe makes text that comes from span data safe to print on a console or in a
// CI log: one printed value stays on one line and cannot move the cursor, change colours,
// reorder the text around it, hide characters in it (a zero width space in an agent name),
// or start a line of its own (a forged PASS line, a GitHub
// `::error` annotation).
package textsafe

import (
	"fmt"
	"io"
	"strings"
	"unicode"
	"unicode/utf8"
)

// Escape returns s with every character that could forge or hide console output written
// as a Go-style escape:
//   - C0 controls (U+0000–U+001F: \n, \r, \t, ESC, ...), DEL and C1 controls
//     (U+0080–U+009F, the 8-bit CSI included) as \n, \r, \t or \xNN / \u00NN;
//   - every format character (Unicode category Cf) as \uNNNN or \UNNNNNNNN: the
//     bidirectional overrides, embeddings and isolates (U+202A–U+202E, U+2066–U+2069) and
//     directional marks (U+200E, U+200F, U+061C), which reorder the text around them, and
//     the invisible ones, which hide in a name ("tri\u200bage" would print as "triage"):
//     zero width space, non-joiner and joiner (U+200B–U+200D), word joiner and invisible
//     operators (U+2060–U+2064), the byte order mark U+FEFF, the soft hyphen U+00AD, the
//     tag characters (U+E0001, U+E0020–U+E007F), ...;
//   - the other code points that are invisible by default (Unicode's
//     Other_Default_Ignorable_Code_Point: the Hangul fillers U+115F, U+1160, U+3164,
//     U+FFA0, the combining grapheme joiner U+034F, ...), and a variation selector
//     (U+FE00–U+FE0F, U+E0100–U+E01EF, the Mongolian U+180B–U+180D, U+180F) unless it
//     follows a symbol (the emoji presentation selector of "⚠️" is kept);
//   - the line and paragraph separators U+2028, U+2029 as \uNNNN;
//   - bytes that are not UTF-8 as \xNN.
//
// Everything else, backslashes included, is kept as it is, so the text stays readable (an
// escape in the output is ambiguous only where the original held a backslash).
func Escape(s string) string { return escape(s, false) }

// escape is Escape; keepTabs keeps \t, for a log line whose fields it separates.
func escape(s string, keepTabs bool) string {
	i, prev := 0, rune(0)
	for i < len(s) {
		r, size := utf8.DecodeRuneInString(s[i:])
		if needsEscape(r, size, prev) && !(keepTabs && r == '\t') {
			break
		}
		i += size
		prev = r
	}
	if i == len(s) {
		return s
	}
	var b strings.Builder
	b.Grow(len(s) + 8)
	b.WriteString(s[:i])
	for i < len(s) {
		r, size := utf8.DecodeRuneInString(s[i:])
		switch {
		case keepTabs && r == '\t':
			b.WriteRune(r)
		case r == utf8.RuneError && size == 1:
			fmt.Fprintf(&b, `\x%02x`, s[i])
		case r == '\n':
			b.WriteString(`\n`)
		case r == '\r':
			b.WriteString(`\r`)
		case r == '\t':
			b.WriteString(`\t`)
		case r < 0x20 || r == 0x7F:
			fmt.Fprintf(&b, `\x%02x`, r)
		case needsEscape(r, size, prev) && r > 0xFFFF:
			fmt.Fprintf(&b, `\U%08x`, r)
		case needsEscape(r, size, prev):
			fmt.Fprintf(&b, `\u%04x`, r)
		default:
			b.WriteString(s[i : i+size])
		}
		i += size
		prev = r
	}
	return b.String()
}

// Lines escapes each line of s and starts every line after the first with prefix, for a
// message of several lines (errors.Join) whose parts may hold span data: no part can start
// a line of the output. prefix must not be blank: CI runners trim leading white space
// before they look for a command such as ::error.
func Lines(s, prefix string) string {
	parts := strings.Split(s, "\n")
	for i, p := range parts {
		parts[i] = Escape(p)
		if i > 0 {
			parts[i] = prefix + parts[i]
		}
	}
	return strings.Join(parts, "\n")
}

// Writer escapes what is written through it as Escape does, except tabs and the line
// break that ends each write: for a log encoder that writes one line per entry (zap's
// console encoder), whose message is not escaped at all and whose fields keep bidi
// overrides and C1 controls. A line break inside a write is escaped: it would start a line.
func Writer(w io.Writer) io.Writer { return writer{w} }

type writer struct{ w io.Writer }

func (w writer) Write(p []byte) (int, error) {
	s := string(p)
	end := ""
	if strings.HasSuffix(s, "\n") {
		s, end = s[:len(s)-1], "\n"
	}
	if _, err := io.WriteString(w.w, escape(s, true)+end); err != nil {
		return 0, err
	}
	return len(p), nil
}

// needsEscape reports whether r (size bytes of the text, after prev) is written as an
// escape.
func needsEscape(r rune, size int, prev rune) bool {
	switch {
	case r == utf8.RuneError && size == 1:
		return true
	case r < 0x20, r >= 0x7F && r <= 0x9F:
		return true
	case r < 0xA0:
		return false
	case r == 0x2028, r == 0x2029:
		return true
	case isVariationSelector(r):
		// A selector after a symbol picks its text or emoji form; after anything else it
		// changes nothing that is drawn.
		return !unicode.IsSymbol(prev)
	}
	return unicode.In(r, unicode.Cf, unicode.Other_Default_Ignorable_Code_Point)
}

func isVariationSelector(r rune) bool {
	return r >= 0xFE00 && r <= 0xFE0F || r >= 0xE0100 && r <= 0xE01EF || r >= 0x180B && r <= 0x180D || r == 0x180F
}
