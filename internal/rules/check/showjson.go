package check

import (
	"math"
	"slices"
	"strconv"
	"unicode/utf8"

	"github.com/otelcol-handoff/otelcol-handoff/internal/textsafe"
)

// ShowJSON is textsafe.Clip(string(json.Marshal(v)), n) for the values decoded JSON holds
// (map[string]any, []any, string, int64, float64, bool and nil), written only as far as
// the cut needs: quoting a long output costs what its first n bytes cost. ok is false when
// v holds anything else, or a float json.Marshal refuses (NaN, ±Inf): the caller marshals
// it as before. It encodes as encoding/json does (map keys sorted, HTML characters, U+2028
// and U+2029 escaped, invalid UTF-8 as U+FFFD, floats as ES6 numbers), which
// FuzzShowJSON checks against json.Marshal.
func ShowJSON(v any, n int) (string, bool) {
	if !jsonValue(v) {
		return "", false
	}
	e := jsonShower{limit: n + 1} // Clip reads the byte at n to know where to cut
	e.value(v)
	return textsafe.Clip(string(e.buf), n), true
}

// jsonValue reports whether ShowJSON encodes v as json.Marshal would (without an error).
func jsonValue(v any) bool {
	switch v := v.(type) {
	case nil, string, int64, bool:
		return true
	case float64:
		return !math.IsInf(v, 0) && !math.IsNaN(v)
	case []any:
		for _, x := range v {
			if !jsonValue(x) {
				return false
			}
		}
		return true
	case map[string]any:
		for _, x := range v {
			if !jsonValue(x) {
				return false
			}
		}
		return true
	}
	return false
}

// jsonShower writes json.Marshal's bytes of a value until it holds limit bytes.
type jsonShower struct {
	buf   []byte
	limit int
}

func (e *jsonShower) full() bool { return len(e.buf) >= e.limit }

func (e *jsonShower) value(v any) {
	if e.full() {
		return
	}
	switch v := v.(type) {
	case nil:
		e.buf = append(e.buf, "null"...)
	case bool:
		e.buf = strconv.AppendBool(e.buf, v)
	case int64:
		e.buf = strconv.AppendInt(e.buf, v, 10)
	case float64:
		e.float(v)
	case string:
		e.str(v)
	case []any:
		if e.begin(v == nil, '[') {
			return
		}
		for i, x := range v {
			if !e.next(i) {
				return
			}
			e.value(x)
		}
		e.buf = append(e.buf, ']')
	case map[string]any:
		if e.begin(v == nil, '{') {
			return
		}
		keys := make([]string, 0, len(v))
		for k := range v {
			keys = append(keys, k)
		}
		slices.Sort(keys) // as encoding/json sorts map keys
		for i, k := range keys {
			if !e.next(i) {
				return
			}
			e.str(k)
			e.buf = append(e.buf, ':')
			e.value(v[k])
		}
		e.buf = append(e.buf, '}')
	}
}

// begin writes null for a nil array or object (true: done), else its opening bracket.
func (e *jsonShower) begin(isNil bool, open byte) bool {
	if isNil {
		e.buf = append(e.buf, "null"...)
	} else {
		e.buf = append(e.buf, open)
	}
	return isNil
}

// next starts the i-th element of an array or member of an object (false: the buffer is
// full, stop).
func (e *jsonShower) next(i int) bool {
	if e.full() {
		return false
	}
	if i > 0 {
		e.buf = append(e.buf, ',')
	}
	return true
}

// float writes f as encoding/json's floatEncoder does (64 bits).
func (e *jsonShower) float(f float64) {
	format := byte('f')
	if abs := math.Abs(f); abs != 0 && (abs < 1e-6 || abs >= 1e21) {
		format = 'e'
	}
	e.buf = strconv.AppendFloat(e.buf, f, format, -1, 64)
	if n := len(e.buf); format == 'e' && n >= 4 && e.buf[n-4] == 'e' && e.buf[n-3] == '-' && e.buf[n-2] == '0' {
		e.buf[n-2] = e.buf[n-1] // e-09 to e-9
		e.buf = e.buf[:n-1]
	}
}

const lowerHex = "0123456789abcdef"

// str writes s quoted as encoding/json's appendString does with HTML escaping, stopping
// once the buffer is full.
func (e *jsonShower) str(s string) {
	e.buf = append(e.buf, '"')
	start := 0
	for i := 0; i < len(s); {
		if e.full() {
			e.buf = append(e.buf, s[start:i]...)
			return
		}
		if b := s[i]; b < utf8.RuneSelf {
			if b >= 0x20 && b != '"' && b != '\\' && b != '<' && b != '>' && b != '&' {
				i++
				if i-start >= 64 { // flush in chunks so that full() sees the length
					e.buf = append(e.buf, s[start:i]...)
					start = i
				}
				continue
			}
			e.buf = append(e.buf, s[start:i]...)
			switch b {
			case '\\', '"':
				e.buf = append(e.buf, '\\', b)
			case '\b':
				e.buf = append(e.buf, '\\', 'b')
			case '\f':
				e.buf = append(e.buf, '\\', 'f')
			case '\n':
				e.buf = append(e.buf, '\\', 'n')
			case '\r':
				e.buf = append(e.buf, '\\', 'r')
			case '\t':
				e.buf = append(e.buf, '\\', 't')
			default:
				e.buf = append(e.buf, '\\', 'u', '0', '0', lowerHex[b>>4], lowerHex[b&0xF])
			}
			i++
			start = i
			continue
		}
		c, size := utf8.DecodeRuneInString(s[i:])
		if c == utf8.RuneError && size == 1 {
			e.buf = append(e.buf, s[start:i]...)
			e.buf = append(e.buf, `\ufffd`...)
			i += size
			start = i
			continue
		}
		if c == '\u2028' || c == '\u2029' {
			e.buf = append(e.buf, s[start:i]...)
			e.buf = append(e.buf, '\\', 'u', '2', '0', '2', lowerHex[c&0xF])
			i += size
			start = i
			continue
		}
		i += size
	}
	e.buf = append(e.buf, s[start:]...)
	e.buf = append(e.buf, '"')
}
