package pricing

import (
	"encoding/json"
	"fmt"
	"regexp"
	"strings"
)

// matcher is a compiled genai-prices match rule: equals, starts_with, ends_with, contains
// (all case-insensitive), regex (case-sensitive, as in the data's engines), or and and of
// rules.
type matcher func(name string) bool

func compileMatch(raw json.RawMessage) (matcher, error) {
	var m map[string]json.RawMessage
	if err := json.Unmarshal(raw, &m); err != nil {
		return nil, err
	}
	if len(m) != 1 {
		return nil, fmt.Errorf("a match rule has one key, got %s", raw)
	}
	for op, arg := range m {
		switch op {
		case "or", "and":
			var parts []json.RawMessage
			if err := json.Unmarshal(arg, &parts); err != nil {
				return nil, err
			}
			subs := make([]matcher, len(parts))
			for i, p := range parts {
				var err error
				if subs[i], err = compileMatch(p); err != nil {
					return nil, err
				}
			}
			if op == "or" {
				return func(s string) bool {
					for _, f := range subs {
						if f(s) {
							return true
						}
					}
					return false
				}, nil
			}
			return func(s string) bool {
				for _, f := range subs {
					if !f(s) {
						return false
					}
				}
				return true
			}, nil
		}
		var text string
		if err := json.Unmarshal(arg, &text); err != nil {
			return nil, fmt.Errorf("%s: %w", op, err)
		}
		lower := strings.ToLower(text)
		switch op {
		case "equals":
			return func(s string) bool { return strings.ToLower(s) == lower }, nil
		case "starts_with":
			return func(s string) bool { return strings.HasPrefix(strings.ToLower(s), lower) }, nil
		case "ends_with":
			return func(s string) bool { return strings.HasSuffix(strings.ToLower(s), lower) }, nil
		case "contains":
			return func(s string) bool { return strings.Contains(strings.ToLower(s), lower) }, nil
		case "regex":
			return compileRegex(text)
		}
		return nil, fmt.Errorf("unknown match rule %q", op)
	}
	panic("unreachable")
}

// compileRegex compiles a regex rule. Go's RE2 has no lookahead; the data uses one shape of
// it, a leading negative lookahead "^(?!A)B", which is compiled as: "^A" does not match and
// "^B" does.
func compileRegex(text string) (matcher, error) {
	if rest, ok := strings.CutPrefix(text, "^(?!"); ok {
		end := closingParen(rest)
		if end < 0 {
			return nil, fmt.Errorf("regex %q: unbalanced lookahead", text)
		}
		not, err := regexp.Compile("^(?:" + rest[:end] + ")")
		if err != nil {
			return nil, fmt.Errorf("regex %q: %w", text, err)
		}
		then, err := regexp.Compile("^(?:" + rest[end+1:] + ")")
		if err != nil {
			return nil, fmt.Errorf("regex %q: %w", text, err)
		}
		return func(s string) bool { return !not.MatchString(s) && then.MatchString(s) }, nil
	}
	re, err := regexp.Compile(text)
	if err != nil {
		return nil, fmt.Errorf("regex %q: %w", text, err)
	}
	return re.MatchString, nil
}

// closingParen is the index of the parenthesis that closes a group opened just before s
// (escapes and character classes skipped), or -1.
func closingParen(s string) int {
	depth, class := 0, false
	for i := 0; i < len(s); i++ {
		switch c := s[i]; {
		case c == '\\':
			i++
		case class:
			class = c != ']'
		case c == '[':
			class = true
		case c == '(':
			depth++
		case c == ')':
			if depth == 0 {
				return i
			}
			depth--
		}
	}
	return -1
}

// isoDate rewrites a compact date suffix in a model name (gpt-4o-2024-08-06 is also written
// gpt-4o-20240806) to the dashed form, as genai-prices does before its second try.
var compactDate = regexp.MustCompile(`-(20\d{2})(0[1-9]|1[0-2])(0[1-9]|[12]\d|3[01])(-|:|$)`)

func isoDate(model string) string {
	return compactDate.ReplaceAllString(model, "-$1-$2-$3$4")
}
