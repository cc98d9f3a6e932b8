package rubric

import (
	"regexp"
	"strconv"
	"strings"
	"unicode"
	"unicode/utf8"

	"github.com/otelcol-handoff/otelcol-handoff/internal/agentgraph"
)

// ScopeFidelity, "context never supplied": which tokens of a tool call's arguments are
// identifiers, and how the texts the receiver had are searched for them.

// identRE finds candidate tokens: letters and digits joined by the punctuation ids, emails
// and URLs use.
var identRE = regexp.MustCompile(`[\p{L}\p{N}][\p{L}\p{N}_.:/@#+-]*[\p{L}\p{N}]`)

var (
	urlRE   = regexp.MustCompile(`^(?i)(?:https?|ftp)://[\p{L}\p{N}-]+(?:\.[\p{L}\p{N}-]+)+`)
	emailRE = regexp.MustCompile(`^[\p{L}\p{N}_.+-]+@[\p{L}\p{N}-]+(?:\.[\p{L}\p{N}-]+)+$`)
	uuidRE  = regexp.MustCompile(`^(?i)[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$`)
	// Dates, times and date-times (ISO 8601 and the common local spellings): not
	// identifiers, and not sources of context either.
	dateRE = regexp.MustCompile(`^(?:\d{4}[-/.]\d{1,2}(?:[-/.]\d{1,2})?|\d{1,2}[-/.]\d{1,2}[-/.]\d{2,4})` +
		`(?:[T ]?\d{1,2}:\d{2}(?::\d{2}(?:[.,]\d+)?)?)?(?:Z|[+-]\d{2}:?\d{2})?$`)
	timeRE = regexp.MustCompile(`^(?i)T?\d{1,2}:\d{2}(?::\d{2}(?:[.,]\d+)?)?(?:Z|[+-]\d{2}:?\d{2})?$`)
	// A number with a short unit or ordinal suffix: 18C, 10am, 25kg, 100ms, 3rd.
	quantityRE = regexp.MustCompile(`^\d+(?:[.,]\d+)?\p{L}{1,3}$`)
	// timestampRE finds date-times and epoch-like digit runs inside a source text.
	timestampRE = regexp.MustCompile(`\d{4}-\d{2}-\d{2}[T ]\d{2}:\d{2}(?::\d{2}(?:[.,]\d+)?)?(?:Z|[+-]\d{2}:?\d{2})?|\b\d{10,19}\b`)
	// hexIDRE finds tokens shaped like span ids (16 hex digits) and trace ids (32).
	hexIDRE = regexp.MustCompile(`\b(?:[0-9a-fA-F]{32}|[0-9a-fA-F]{16})\b`)
	// jsonEscapeRE finds JSON escapes (possibly escaped again): read as a space, so an
	// escaped newline does not glue two words.
	jsonEscapeRE = regexp.MustCompile(`\\+(?:[nrtbf]|u[0-9a-fA-F]{4})?`)
)

// longDigitRun is the shortest run of digits that is an identifier on its own (account and
// card numbers, long order numbers); a year or a small number is shorter.
const longDigitRun = 6

// isIdentifier reports whether a token is identifier-like: a URL, an email, a UUID, a token
// of 4+ characters that mixes letters and digits (A-1001, BA117), or one with a run of 6+
// digits; never a date, a time or a quantity with a unit (18C, 10am).
func isIdentifier(tok string) bool {
	switch {
	case urlRE.MatchString(tok), emailRE.MatchString(tok), uuidRE.MatchString(tok):
		return true
	case dateRE.MatchString(tok), timeRE.MatchString(tok), quantityRE.MatchString(tok):
		return false
	}
	letters, digits, run, longest := 0, 0, 0, 0
	for _, r := range tok {
		switch {
		case unicode.IsDigit(r):
			digits++
			run++
			longest = max(longest, run)
			continue
		case unicode.IsLetter(r):
			letters++
		}
		run = 0
	}
	if longest >= longDigitRun {
		return true
	}
	return letters > 0 && digits > 0 && utf8.RuneCountInString(tok) >= 4
}

// identifiers lists the identifier-like tokens in the string values of JSON arguments, in
// order, once each; nil when the arguments are not JSON.
func identifiers(args string) []string {
	v, ok := agentgraph.ParseJSON(args)
	if !ok {
		return nil
	}
	var out []string
	seen := map[string]bool{}
	var walk func(any)
	walk = func(v any) {
		switch v := v.(type) {
		case string:
			for _, tok := range identRE.FindAllString(v, -1) {
				if !seen[tok] && isIdentifier(tok) {
					seen[tok] = true
					out = append(out, tok)
				}
			}
		case map[string]any:
			for _, k := range sortedKeys(v) {
				walk(v[k])
			}
		case []any:
			for _, it := range v {
				walk(it)
			}
		}
	}
	walk(v)
	return out
}

// tokenText renders text for whole-token search: JSON escapes and every character that is
// not a letter or digit become one space, letters are lowercased, and the text is padded
// with a space on each side. An identifier rendered so is found only as whole tokens: A-1001
// is in "order A-1001." and "ref:A-1001", not in "XA-10012".
func tokenText(s string) string {
	s = jsonEscapeRE.ReplaceAllString(s, " ")
	var b strings.Builder
	b.Grow(len(s) + 2)
	b.WriteByte(' ')
	space := true
	for _, r := range s {
		if unicode.IsLetter(r) || unicode.IsDigit(r) {
			b.WriteRune(unicode.ToLower(r))
			space = false
			continue
		}
		if !space {
			b.WriteByte(' ')
			space = true
		}
	}
	if !space {
		b.WriteByte(' ')
	}
	return b.String()
}

// sourceFilter removes from a text what is not a source of context: date-times, Unix
// timestamps within a day of the trace's spans, and the trace's own span and trace ids.
type sourceFilter struct {
	ids      map[string]bool
	from, to int64 // the trace's time window, a day either side, in Unix nanoseconds
}

const day = int64(24 * 3600 * 1e9)

func (x *Index) sourceFilter() *sourceFilter {
	if f := x.rubric.sources; f != nil {
		return f
	}
	f := &sourceFilter{ids: make(map[string]bool, len(x.g.Spans)+1)}
	f.ids[x.g.TraceID.String()] = true
	first := true
	for _, s := range x.g.Spans {
		x.work++
		f.ids[s.ID.String()] = true
		for _, ts := range []int64{int64(s.Start()), int64(s.End())} {
			if ts <= 0 {
				continue // not recorded
			}
			if first {
				f.from, f.to, first = ts, ts, false
			}
			f.from, f.to = min(f.from, ts), max(f.to, ts)
		}
	}
	if first {
		f.from, f.to = 1, 0 // no time recorded: no window
	} else {
		f.from, f.to = f.from-day, f.to+day
	}
	x.rubric.sources = f
	return f
}

// strip blanks out the timestamps and ids of text.
func (f *sourceFilter) strip(text string) string {
	text = timestampRE.ReplaceAllStringFunc(text, func(m string) string {
		if strings.ContainsAny(m, "-:") || f.epoch(m) {
			return " "
		}
		return m
	})
	return hexIDRE.ReplaceAllStringFunc(text, func(m string) string {
		if f.ids[strings.ToLower(m)] {
			return " "
		}
		return m
	})
}

// epoch reports whether a digit run read as Unix seconds, milliseconds, microseconds or
// nanoseconds falls in the trace's time window.
func (f *sourceFilter) epoch(digits string) bool {
	var scale int64
	switch len(digits) {
	case 10:
		scale = 1e9
	case 13:
		scale = 1e6
	case 16:
		scale = 1e3
	case 19:
		scale = 1
	default:
		return false
	}
	n, err := strconv.ParseInt(digits, 10, 64)
	if err != nil || n > (1<<63-1)/scale {
		return false
	}
	ns := n * scale
	return ns >= f.from && ns <= f.to
}
