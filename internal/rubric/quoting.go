package rubric

import (
	"regexp"
	"strings"

	"github.com/otelcol-handoff/otelcol-handoff/internal/agentgraph"
	"github.com/otelcol-handoff/otelcol-handoff/internal/redact"
	"github.com/otelcol-handoff/otelcol-handoff/internal/textsafe"
)

// What a message quotes from the trace. The exporter passes every message through its
// redaction policy, but the detectors need a secret's own shape: the token of "Bearer
// <token>" quoted without "Bearer ", an email's words lower-cased and space-joined, an AWS
// key id lower-cased, or a key cut after a few characters are no longer recognised. So a
// check never quotes such a derived piece of content as it is: content is masked (with
// redact.Default(), the built-in detectors) before it is cut, and a piece taken out of a
// text (an identifier, a word) is quoted as the mask when the policy masks it in that text.
// The user's own patterns are applied to the final message only.

// quotePolicy masks what the checks quote.
func quotePolicy() *redact.Policy { return redact.Default() }

// maskRE finds the masks the policy writes.
var maskRE = func() *regexp.Regexp {
	alts := []string{regexp.QuoteMeta(redact.Mask)}
	for _, d := range redact.Detectors {
		alts = append(alts, regexp.QuoteMeta(redact.MaskFor(d)))
	}
	return regexp.MustCompile(strings.Join(alts, "|"))
}()

// quoteSlack is how far past the n bytes a quote shows its text is read before masking: a
// secret that starts in the shown part and ends within the slack is masked whole; a longer
// one is read cut with "…", as the detectors expect a cut secret.
const quoteSlack = 1024

// clip renders s on one line (whitespace runs as one space), masked by the redaction
// policy, cut at n bytes; a mask the cut would split is kept whole. Masked on one line,
// as a message shows it: the built-in detectors find there all they find in s, and more
// ("Bearer\n<token>", a card split over lines).
func clip(s string, n int) string {
	if len(s) > n+quoteSlack {
		s = textsafe.Cut(s, n+quoteSlack) + "…"
	}
	s = quotePolicy().Redact(oneLine(s))
	if len(s) <= n {
		return s
	}
	cut := n
	for _, m := range maskRE.FindAllStringIndex(s, -1) {
		if m[0] < n && m[1] > n {
			cut = m[1]
			break
		}
	}
	if cut >= len(s) {
		return s
	}
	return textsafe.Cut(s, cut) + "…"
}

// oneLine is s with every whitespace run as one space.
func oneLine(s string) string { return strings.Join(strings.Fields(s), " ") }

// redactedText is a text of the trace, on one line as a message shows it, with what the
// policy masks in it.
type redactedText struct {
	src, masked string
	// open is the masked text with the masks blanked: what of src a message may show.
	open string
}

// redactedLines is redactedOf(src on one line): there the detectors find all they find in
// src, and more ("Bearer\n<token>" reads as a bearer token).
func redactedLines(src string) redactedText { return redactedOf(oneLine(src)) }

func redactedOf(src string) redactedText {
	r := quotePolicy().Redact(src)
	if r == src {
		return redactedText{src: src, masked: src, open: src}
	}
	return redactedText{src: src, masked: r, open: maskRE.ReplaceAllString(r, " ")}
}

func (t redactedText) masks() bool { return t.open != t.src }

// occurrences finds a piece in a text: the byte ranges where it occurs.
type occurrences func(text string) [][]int

// substringOf finds piece as a substring.
func substringOf(piece string) occurrences {
	return func(text string) [][]int {
		var out [][]int
		for from := 0; ; {
			k := strings.Index(text[from:], piece)
			if k < 0 || piece == "" {
				return out
			}
			out = append(out, []int{from + k, from + k + len(piece)})
			from += k + len(piece)
		}
	}
}

// wordOf finds a lower-cased word (wordRE) as a whole word, in any letter case.
func wordOf(lower string) occurrences {
	return func(text string) [][]int {
		var out [][]int
		for _, m := range wordRE.FindAllStringIndex(text, -1) {
			if strings.ToLower(text[m[0]:m[1]]) == lower {
				out = append(out, m)
			}
		}
		return out
	}
}

// maskFor reports whether the policy masks (part of) an occurrence of a piece in t: fewer
// occurrences stand in the masked text than in the text. It returns the mask to quote
// instead of the piece: the typed mask of the secret around it when that can be told, else
// [REDACTED].
func (t redactedText) maskFor(find occurrences) (string, bool) {
	if !t.masks() {
		return "", false
	}
	occ := find(t.src)
	if len(find(t.open)) >= len(occ) {
		return "", false
	}
	for k, o := range occ {
		if k == maxMaskProbes {
			break
		}
		if m := maskAround(t.src, o[0], o[1], find); m != "" {
			return m, true
		}
	}
	return redact.Mask, true
}

// maxMaskProbes bounds the occurrences maskFor reads the mask of.
const maxMaskProbes = 4

// maskAround is the one mask the policy puts over the piece at s[i:j], read in the
// whitespace-separated field that holds it, then with the field before it too ("Bearer
// <token>"); "" when neither masks the piece under exactly one kind of mask.
func maskAround(s string, i, j int, find occurrences) string {
	from := fieldStart(s, i)
	to := j
	for to < len(s) && !isSpace(s[to]) {
		to++
	}
	for range 2 {
		w := s[from:to]
		if rt := redactedOf(w); rt.masks() && len(find(rt.open)) < len(find(w)) {
			kinds := map[string]bool{}
			for _, m := range maskRE.FindAllString(rt.masked, -1) {
				kinds[m] = true
			}
			if len(kinds) == 1 {
				for m := range kinds {
					return m
				}
			}
			return ""
		}
		k := from
		for k > 0 && isSpace(s[k-1]) {
			k--
		}
		if k == 0 {
			break
		}
		from = fieldStart(s, k)
	}
	return ""
}

// fieldStart is the start of the whitespace-separated field that holds s[i-1] (i when
// s[i-1] is a space).
func fieldStart(s string, i int) int {
	for i > 0 && !isSpace(s[i-1]) {
		i--
	}
	return i
}

func isSpace(c byte) bool {
	return c == ' ' || c == '\t' || c == '\n' || c == '\r' || c == '\f' || c == '\v'
}

// shownIdentifier is how a message quotes id, an identifier found in the string values of
// the JSON arguments args: as it is, or as the mask of the secret it is a part of when the
// policy masks it in a value that holds it (the token of "Authorization: Bearer <token>",
// which quoted alone reads as no bearer token).
func shownIdentifier(id, args string) string {
	v, ok := agentgraph.ParseJSON(args)
	if !ok {
		return id
	}
	find := substringOf(id)
	mask := ""
	var walk func(any) bool
	walk = func(v any) bool {
		switch v := v.(type) {
		case string:
			if strings.Contains(v, id) {
				if m, ok := redactedLines(v).maskFor(find); ok {
					mask = m
					return false
				}
			}
		case map[string]any:
			for _, k := range sortedKeys(v) {
				if !walk(v[k]) {
					return false
				}
			}
		case []any:
			for _, it := range v {
				if !walk(it) {
					return false
				}
			}
		}
		return true
	}
	if walk(v); mask != "" {
		return mask
	}
	return id
}

// shownWords renders the words (lower-cased wordRE words of the error message msg) that
// surfaces found in an answer, as evidence of about n bytes of content: each in the error's
// own spelling, or, when the policy masks it in the error or in the answer (a word of an
// email, an AWS key id), as the mask, which counts as no content; a run of one mask is
// shown once. Quote it whole (quoteEvidence).
func shownWords(words []string, msg, answer string, n int) string {
	texts := []redactedText{redactedLines(msg), redactedLines(answer)}
	var out []string
	size := 0
	for i, w := range words {
		if size >= n || i == maxEvidenceWords {
			out = append(out, "…")
			break
		}
		shown, masked := w, false
		if m := wordOf(w)(msg); len(m) > 0 {
			shown = msg[m[0][0]:m[0][1]]
		}
		for _, t := range texts {
			if mask, ok := t.maskFor(wordOf(w)); ok {
				shown, masked = mask, true
				break
			}
		}
		switch {
		case masked && len(out) > 0 && out[len(out)-1] == shown:
			continue
		case masked:
			size += 2
		case size+len(shown) > n:
			out = append(out, textsafe.Clip(shown, n-size))
			return strings.Join(out, " ")
		default:
			size += len(shown) + 1
		}
		out = append(out, shown)
	}
	return strings.Join(out, " ")
}

// maxEvidenceWords bounds the words shownWords looks at (each is looked up in the error
// and the answer).
const maxEvidenceWords = 16

// quoteEvidence quotes what surfaces found (bounded there) whole.
func quoteEvidence(ev string) string { return quote(ev, len(ev)) }
