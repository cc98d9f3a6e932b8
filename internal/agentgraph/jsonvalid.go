package agentgraph

// validJSON reports what json.Valid reports for s (one JSON value, white space around it
// allowed, at most 10,000 nested arrays and objects), by recursive descent instead of
// encoding/json's per-byte state machine: the builder checks whole model requests and
// responses before reading a few members of them (jsonPath, decodable). Like json.Valid,
// it does not check that strings are valid UTF-8.
func validJSON(s string) bool {
	valid, _ := checkJSON(s)
	return valid
}

// checkJSON is validJSON, and whether every number in s parses as a float64 (what
// json.Unmarshal into an any needs besides; only a number with an exponent or more than
// 300 digits can fail), in one pass.
func checkJSON(s string) (valid, fits bool) {
	fits = true
	i, ok := validValue(s, skipSpace(s, 0), 0, &fits)
	return ok && skipSpace(s, i) == len(s), fits
}

// maxJSONDepth is encoding/json's nesting limit.
const maxJSONDepth = 10000

// validValue checks the value starting at s[i] (no white space before it); it returns the
// index after it, and clears *fits at a number out of float64's range.
func validValue(s string, i, depth int, fits *bool) (int, bool) {
	if i >= len(s) {
		return i, false
	}
	switch c := s[i]; {
	case c == '{' || c == '[':
		if depth >= maxJSONDepth {
			return i, false
		}
		closer := byte('}')
		if c == '[' {
			closer = ']'
		}
		i = skipSpace(s, i+1)
		if i < len(s) && s[i] == closer {
			return i + 1, true
		}
		for {
			var ok bool
			if c == '{' {
				if i, ok = validMemberKey(s, i); !ok {
					return i, false
				}
			}
			if i, ok = validValue(s, i, depth+1, fits); !ok {
				return i, false
			}
			if i = skipSpace(s, i); i >= len(s) {
				return i, false
			}
			switch s[i] {
			case ',':
				i = skipSpace(s, i+1)
			case closer:
				return i + 1, true
			default:
				return i, false
			}
		}
	case c == '"':
		return validString(s, i)
	case c == 't':
		return validLiteral(s, i, "true")
	case c == 'f':
		return validLiteral(s, i, "false")
	case c == 'n':
		return validLiteral(s, i, "null")
	case c == '-' || (c >= '0' && c <= '9'):
		return validNumber(s, i, fits)
	}
	return i, false
}

// validMemberKey checks an object member's key and colon starting at s[i]; it returns the
// index of the member's value.
func validMemberKey(s string, i int) (int, bool) {
	if i >= len(s) || s[i] != '"' {
		return i, false
	}
	i, ok := validString(s, i)
	if !ok {
		return i, false
	}
	if i = skipSpace(s, i); i >= len(s) || s[i] != ':' {
		return i, false
	}
	return skipSpace(s, i+1), true
}

func validLiteral(s string, i int, lit string) (int, bool) {
	if len(s)-i >= len(lit) && s[i:i+len(lit)] == lit {
		return i + len(lit), true
	}
	return i, false
}

// validString checks the string starting at s[i] (a '"'): no control characters, only
// JSON's escapes.
func validString(s string, i int) (int, bool) {
	for i++; i < len(s); i++ {
		switch c := s[i]; {
		case c == '"':
			return i + 1, true
		case c < 0x20:
			return i, false
		case c == '\\':
			i++
			if i >= len(s) {
				return i, false
			}
			switch s[i] {
			case '"', '\\', '/', 'b', 'f', 'n', 'r', 't':
			case 'u':
				if len(s)-i <= 4 {
					return i, false
				}
				for _, h := range []byte(s[i+1 : i+5]) {
					if !(h >= '0' && h <= '9' || h >= 'a' && h <= 'f' || h >= 'A' && h <= 'F') {
						return i, false
					}
				}
				i += 4
			default:
				return i, false
			}
		}
	}
	return i, false
}

// validNumber checks the number starting at s[i]: -?(0|[1-9][0-9]*)(\.[0-9]+)?([eE][+-]?[0-9]+)?
// and clears *fits when it does not parse as a float64.
func validNumber(s string, i int, fits *bool) (int, bool) {
	start := i
	if s[i] == '-' {
		i++
	}
	switch {
	case i < len(s) && s[i] == '0':
		i++
	case i < len(s) && s[i] >= '1' && s[i] <= '9':
		i = digits(s, i+1)
	default:
		return i, false
	}
	if i < len(s) && s[i] == '.' {
		j := digits(s, i+1)
		if j == i+1 {
			return j, false
		}
		i = j
	}
	exp := i < len(s) && (s[i] == 'e' || s[i] == 'E')
	if exp {
		i++
		if i < len(s) && (s[i] == '+' || s[i] == '-') {
			i++
		}
		j := digits(s, i)
		if j == i {
			return j, false
		}
		i = j
	}
	if *fits && (exp || i-start > 300) && !floatFits(s[start:i]) {
		*fits = false
	}
	return i, true
}

func digits(s string, i int) int {
	for i < len(s) && s[i] >= '0' && s[i] <= '9' {
		i++
	}
	return i
}
