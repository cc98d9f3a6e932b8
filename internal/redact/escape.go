package redact

import (
	"fmt"
	"strings"
	"unicode/utf8"
)

// Escape makes text from spans safe to print on one line of a log, a report or a console:
// \n, \r and \t become the two characters \n, \r, \t; every other C0 control, DEL, C1
// control and the bidirectional overrides and isolates (which reorder what a terminal
// shows) become \u00XX / \u20XX; invalid UTF-8 becomes U+FFFD. Backslashes are kept as
// they are. s is returned as is, without allocating, when nothing needs escaping.
func Escape(s string) string {
	i := 0
	for i < len(s) {
		c := s[i]
		if c < utf8.RuneSelf {
			if c < 0x20 || c == 0x7f {
				break
			}
			i++
			continue
		}
		r, size := utf8.DecodeRuneInString(s[i:])
		if (r == utf8.RuneError && size == 1) || escapedRune(r) {
			break
		}
		i += size
	}
	if i == len(s) {
		return s
	}
	var b strings.Builder
	b.Grow(len(s) + 8)
	b.WriteString(s[:i])
	for i < len(s) {
		r, size := utf8.DecodeRuneInString(s[i:])
		i += size
		switch {
		case r == '\n':
			b.WriteString(`\n`)
		case r == '\r':
			b.WriteString(`\r`)
		case r == '\t':
			b.WriteString(`\t`)
		case r == utf8.RuneError && size == 1:
			b.WriteRune(utf8.RuneError)
		case r < 0x20 || r == 0x7f || escapedRune(r):
			fmt.Fprintf(&b, `\u%04X`, r)
		default:
			b.WriteRune(r)
		}
	}
	return b.String()
}

// escapedRune: C1 controls, and the bidi embeddings, overrides and isolates (the
// "Trojan Source" characters), and the line and paragraph separators.
func escapedRune(r rune) bool {
	return (r >= 0x80 && r <= 0x9f) || (r >= 0x202a && r <= 0x202e) || (r >= 0x2066 && r <= 0x2069) ||
		r == 0x2028 || r == 0x2029
}
