// Package celexpr is the expression language of the rules: CEL with the seed evaluator's
// keywords (`and`, `or`, `not`, True/False/None) and `in` as a substring test on strings,
// one environment family, and one evaluator bounded by a cost limit and interrupted by its
// context (eval_timeout). The same dialect is accepted in a case's `when`, a step's
// `contextExpression` and every `expected_*` field.
package celexpr

import (
	"fmt"
	"strings"
)

// Expressions are written in the seed's evaluator syntax (`and`, `or`, `not`,
// `"x" in output` as a substring test) or in native CEL. Rewrite translates the
// former token by token, keeping every token at its column so CEL's line:column positions
// point into the text the user wrote; the `in` operator is expanded (by a parser macro) to
// seed_in (inFunction), which adds the substring test to CEL's list and map membership.

// Rewrite translates the seed's boolean keywords to CEL operators of the same
// length (`and` → `&& `, `or` → `||`, `not` → `!  `) and the Python literals True, False
// and None to true, false and null. String literals, comments, quoted identifiers and
// field names after a dot are left untouched.
func Rewrite(src string) (string, error) {
	out := []byte(src)
	prevSignificant := byte(0) // last non-space byte outside literals
	prevWord := ""             // last identifier, when it was the last token
	i := 0
	for i < len(src) {
		c := src[i]
		switch {
		case c == '/' && i+1 < len(src) && src[i+1] == '/':
			for i < len(src) && src[i] != '\n' {
				i++
			}
			continue
		case c == '"' || c == '\'':
			end, err := skipString(src, i, false)
			if err != nil {
				return "", err
			}
			i = end
			prevSignificant, prevWord = '"', ""
			continue
		case c == '`':
			end := strings.IndexByte(src[i+1:], '`')
			if end < 0 {
				return src, nil // let the CEL parser report it
			}
			i += end + 2
			prevSignificant, prevWord = 'a', ""
			continue
		case isDigit(c):
			for i < len(src) && (isIdent(src[i]) || (src[i] == '.' && i+1 < len(src) && isDigit(src[i+1]))) {
				i++
			}
			prevSignificant, prevWord = '0', ""
			continue
		case isIdentStart(c):
			start := i
			for i < len(src) && isIdent(src[i]) {
				i++
			}
			word := src[start:i]
			// String prefixes: r"…", b'…', rb"…", br'…' (any case).
			if i < len(src) && (src[i] == '"' || src[i] == '\'') && isStringPrefix(word) {
				end, err := skipString(src, i, strings.ContainsAny(word, "rR"))
				if err != nil {
					return "", err
				}
				i = end
				prevSignificant, prevWord = '"', ""
				continue
			}
			afterDot := prevSignificant == '.'
			if !afterDot {
				repl := ""
				switch word {
				case "and":
					repl = "&& "
				case "or":
					repl = "||"
				case "not":
					repl = "!  "
				case "True":
					repl = "true"
				case "False":
					repl = "false"
				case "None":
					repl = "null"
				case "in":
					if prevWord == "not" {
						return "", fmt.Errorf("`not in` is not supported at column %d; write `not (x in y)` or `!(x in y)`", start+1)
					}
				}
				if repl != "" {
					copy(out[start:i], repl)
				}
			}
			prevSignificant, prevWord = 'a', word
			if afterDot {
				prevWord = "" // a field name, not a keyword
			}
			continue
		case c == ' ' || c == '\t' || c == '\n' || c == '\r':
			i++
			continue
		}
		prevSignificant, prevWord = c, ""
		i++
	}
	return string(out), nil
}

// skipString returns the index just past the string literal that starts with a quote at i.
func skipString(src string, i int, raw bool) (int, error) {
	q := src[i]
	if strings.HasPrefix(src[i:], string([]byte{q, q, q})) {
		end := strings.Index(src[i+3:], string([]byte{q, q, q}))
		if end < 0 {
			return 0, fmt.Errorf("unterminated string literal at column %d", i+1)
		}
		return i + 3 + end + 3, nil
	}
	for j := i + 1; j < len(src); j++ {
		switch src[j] {
		case '\\':
			if !raw {
				j++
			}
		case q:
			return j + 1, nil
		case '\n':
			return 0, fmt.Errorf("unterminated string literal at column %d", i+1)
		}
	}
	return 0, fmt.Errorf("unterminated string literal at column %d", i+1)
}

func isStringPrefix(w string) bool {
	switch strings.ToLower(w) {
	case "r", "b", "rb", "br":
		return true
	}
	return false
}

func isDigit(c byte) bool      { return c >= '0' && c <= '9' }
func isIdentStart(c byte) bool { return c == '_' || (c|0x20 >= 'a' && c|0x20 <= 'z') }
func isIdent(c byte) bool      { return isIdentStart(c) || isDigit(c) }
