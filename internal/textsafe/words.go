package textsafe

import (
	"fmt"
	"strings"
	"unicode/utf8"
)

// Plural renders a count with the word that fits it: "1 trace", "2 traces".
func Plural(n int, one, many string) string {
	if n == 1 {
		return fmt.Sprintf("%d %s", n, one)
	}
	return fmt.Sprintf("%d %s", n, many)
}

// Cut returns the longest prefix of s of at most n bytes that does not split a UTF-8
// sequence (s itself when it is short enough).
func Cut(s string, n int) string {
	if len(s) <= n {
		return s
	}
	cut := max(n, 0)
	for cut > 0 && !utf8.RuneStart(s[cut]) {
		cut--
	}
	return s[:cut]
}

// Clip cuts s to at most n bytes at a UTF-8 boundary and marks a cut with "…".
func Clip(s string, n int) string {
	if c := Cut(s, n); len(c) < len(s) {
		return c + "…"
	}
	return s
}

// Listed joins the first items (at most limit of total) with sep and says how many more
// there were: "a, b, … and 3 more agents".
func Listed(items []string, total, limit int, sep, what string) string {
	if len(items) > limit {
		items = items[:limit]
	}
	out := strings.Join(items, sep)
	if more := total - len(items); more > 0 {
		out += fmt.Sprintf("%s… and %d more %s", sep, more, what)
	}
	return out
}
