package redact

import "strings"

// ellipsis marks text cut by a length limit (rules quote content cut at 200 bytes with
// it). A secret whose visible part ends at the cut cannot be checked whole (no Luhn, no
// full length), so a detector masks it when its visible part starts like one.
const ellipsis = "…"

// Minimum visible length of a secret cut at an ellipsis, so that ordinary words followed by
// an ellipsis are not masked.
const (
	minPartialDigits = 8
	minPartialBody   = 4
)

var (
	bitCard, _   = detectorBit(Card)
	bitEmail, _  = detectorBit(Email)
	bitAPIKey, _ = detectorBit(APIKey)
	bitBearer, _ = detectorBit(Bearer)
	bitJWT, _    = detectorBit(JWT)
)

// Masks of the detectors, built once (not per match).
var (
	maskCard   = MaskFor(Card)
	maskEmail  = MaskFor(Email)
	maskAPIKey = MaskFor(APIKey)
	maskBearer = MaskFor(Bearer)
	maskJWT    = MaskFor(JWT)
)

// Byte classes of the scan.
const (
	cAlnum = 1 << iota // a letter or digit: no detector starts right after one
	cStart             // an enabled detector may start here, at the start of a word
	cAt                // an @, around which an email may stand (enabled)
	cEsc               // a backslash: an escape in encoded text, which ends a word
)

// classes holds, for each set of enabled detectors, every byte's class: the bytes at which
// a disabled detector would start are not candidates at all.
var classes = func() (t [1 << 5][256]uint8) {
	for enabled := range t {
		c := &t[enabled]
		for b := 0; b < 256; b++ {
			if isAlnum(byte(b)) {
				c[b] = cAlnum
			}
		}
		start := func(bit uint8, bytes string) {
			if uint8(enabled)&bit != 0 {
				for k := 0; k < len(bytes); k++ {
					c[bytes[k]] |= cStart
				}
			}
		}
		start(bitCard, "0123456789")
		if uint8(enabled)&bitAPIKey != 0 {
			for _, k := range keyShapes {
				c[k.prefix[0]] |= cStart
			}
		}
		start(bitBearer, "Bb")
		start(bitJWT, "e")
		if uint8(enabled)&bitEmail != 0 {
			c['@'] |= cAt
		}
		if enabled != 0 {
			c['\\'] |= cEsc
		}
	}
	return t
}()

// scan runs the enabled detectors over s in one pass and appends their matches to out.
// Matches never overlap: after a match the scan resumes at its end, and an email's local
// part (found backwards from the @) never reaches into an earlier match.
//
// The pass looks each byte up once in the enabled detectors' class table, carrying the
// previous byte's class: only an @ and a detector's first byte at the start of a word
// (after a byte that is no letter or digit) stop it, so the letters inside words and the
// digits inside numbers take no branch.
func scan(s string, enabled uint8, out []span) []span {
	tab := &classes[enabled&(1<<5-1)]
	last := 0
	var prev uint8 // class of s[i-1]; none before the text
	for i := 0; i < len(s); {
		k := tab[s[i]]
		if k&^((prev&cAlnum)<<1)&(cStart|cAt|cEsc) == 0 {
			prev = k
			i++
			continue
		}
		if k&cEsc != 0 {
			// Content is often redacted as encoded text: an escape (\n, \u00a0) separates
			// words, so what follows it starts one ("\n4111 ...", "\u201csk-...").
			prev, i = 0, i+escapeLen(s, i)
			continue
		}
		next := i + 1
		if k&cAt != 0 {
			if start, end, ok := email(s, i, last); ok {
				out = append(out, span{start, end, maskEmail})
				next, last = end, end
			}
		} else if c := s[i]; isDigit(c) {
			n := len(out)
			out, next = cards(s, i, out)
			if len(out) > n {
				last = max(last, lastEnd(out))
			}
		} else {
			end, mask := i, ""
			switch {
			case keyShapesByFirst[c] != nil:
				end, mask = apiKey(s, i), maskAPIKey
			case c == 'B' || c == 'b':
				end, mask = bearer(s, i), maskBearer
			case c == 'e':
				end, mask = jwt(s, i), maskJWT
			}
			if end > i {
				out = append(out, span{i, end, mask})
				next, last = end, end
			}
		}
		prev, i = tab[s[next-1]], next
	}
	return out
}

// escapeLen is the length of the JSON or Go escape at s[i] (a backslash): \n 2, \xHH 4,
// \uHHHH 6; 1 when none.
func escapeLen(s string, i int) int {
	switch {
	case i+1 >= len(s):
		return 1
	case s[i+1] == 'x' && i+3 < len(s) && isHex(s[i+2]) && isHex(s[i+3]):
		return 4
	case s[i+1] == 'u' && i+5 < len(s) && isHex(s[i+2]) && isHex(s[i+3]) && isHex(s[i+4]) && isHex(s[i+5]):
		return 6
	case strings.IndexByte("abfnrtv\\\"/'", s[i+1]) >= 0:
		return 2
	}
	return 1
}

func isHex(c byte) bool { return isDigit(c) || (c >= 'a' && c <= 'f') || (c >= 'A' && c <= 'F') }

func lastEnd(out []span) int {
	if len(out) == 0 {
		return 0
	}
	return out[len(out)-1].end
}

func isDigit(c byte) bool { return c >= '0' && c <= '9' }
func isUpper(c byte) bool { return c >= 'A' && c <= 'Z' }
func isLower(c byte) bool { return c >= 'a' && c <= 'z' }
func isAlpha(c byte) bool { return isUpper(c) || isLower(c) }
func isAlnum(c byte) bool { return isDigit(c) || isAlpha(c) }

// isB64URL: the base64url alphabet (JWT segments, most API keys).
func isB64URL(c byte) bool { return isAlnum(c) || c == '-' || c == '_' }

// cutAt reports whether s is cut (an ellipsis) at i.
func cutAt(s string, i int) bool { return strings.HasPrefix(s[i:], ellipsis) }

// cards handles the digit run starting at i (digits in groups joined by single spaces or
// dashes): every group window of 13-19 digits that passes the Luhn check is masked, the
// longest first from the left. It returns the index after the run.
//
// Most runs are short numbers (counts, timestamps' parts, ids): one group of fewer digits
// than any card shows ends there, before the groups are gathered.
func cards(s string, i int, out []span) ([]span, int) {
	j := i
	for j < len(s) && isDigit(s[j]) {
		j++
	}
	if j-i < minPartialDigits && !(j+1 < len(s) && (s[j] == ' ' || s[j] == '-') && isDigit(s[j+1])) {
		return out, j
	}
	return cardGroups(s, i, out)
}

// cardGroups is cards on a run that may hold one.
func cardGroups(s string, i int, out []span) ([]span, int) {
	// Groups of the run: [start, end) of each.
	var groupsBuf [24][2]int
	groups := groupsBuf[:0]
	j := i
	for {
		g0 := j
		for j < len(s) && isDigit(s[j]) {
			j++
		}
		groups = append(groups, [2]int{g0, j})
		if j+1 < len(s) && (s[j] == ' ' || s[j] == '-') && isDigit(s[j+1]) {
			j++
			continue
		}
		break
	}
	runEnd := j
	// A fraction (0.4111…) or a run glued to a word is not a card number.
	if i >= 2 && s[i-1] == '.' && isDigit(s[i-2]) {
		return out, runEnd
	}
	gluedAfter := runEnd < len(s) && isAlpha(s[runEnd])
	digits := 0
	for _, g := range groups {
		digits += g[1] - g[0]
	}
	if digits < minPartialDigits {
		return out, runEnd
	}
	masked := 0 // groups before this one are masked
	for a := 0; a < len(groups); a++ {
		n, best := 0, -1
		for b := a; b < len(groups); b++ {
			n += groups[b][1] - groups[b][0]
			if n > 19 {
				break
			}
			if n >= 13 && !(b == len(groups)-1 && gluedAfter) && cardPrefix(s[groups[a][0]]) && luhn(s, groups[a:b+1]) {
				best = b
			}
		}
		if best >= 0 {
			out = append(out, span{groups[a][0], groups[best][1], maskCard})
			a = best
			masked = best + 1
		}
	}
	// Cut at the ellipsis, or just before it after a group separator ("4111 1111 1111 …").
	cut := cutAt(s, runEnd) || (runEnd+1 < len(s) && (s[runEnd] == ' ' || s[runEnd] == '-') && cutAt(s, runEnd+1))
	if masked < len(groups) && cut {
		n := 0
		for _, g := range groups[masked:] {
			n += g[1] - g[0]
		}
		if n >= minPartialDigits {
			out = append(out, span{groups[masked][0], runEnd, maskCard})
		}
	}
	return out, runEnd
}

// cardPrefix: payment cards start with 2-6 (Mastercard 2-series, Amex/Diners/JCB, Visa,
// Mastercard, Discover/UnionPay/Maestro). Epoch timestamps in ms or ns (1…) and ids that
// start with 0, 1, 7, 8 or 9 are kept even when they pass the Luhn check by chance.
func cardPrefix(c byte) bool { return c >= '2' && c <= '6' }

// luhn checks the digits of the groups.
func luhn(s string, groups [][2]int) bool {
	sum, double := 0, false
	for g := len(groups) - 1; g >= 0; g-- {
		for k := groups[g][1] - 1; k >= groups[g][0]; k-- {
			d := int(s[k] - '0')
			if double {
				d *= 2
				if d > 9 {
					d -= 9
				}
			}
			sum += d
			double = !double
		}
	}
	return sum%10 == 0
}

func isLocal(c byte) bool {
	return isAlnum(c) || c == '.' || c == '_' || c == '%' || c == '+' || c == '-'
}

func isDomain(c byte) bool { return isAlnum(c) || c == '.' || c == '-' }

// email finds local@domain.tld around the @ at at; the local part does not reach before
// floor (the end of the previous match).
func email(s string, at, floor int) (start, end int, ok bool) {
	start = at
	for start > floor && at-start < 64 && isLocal(s[start-1]) {
		start--
	}
	if start > floor && s[start-1] == '\\' {
		start += escapeLen(s, start-1) - 1 // "\nuser@...": the escape is not the address's
	}
	for start < at && s[start] == '.' {
		start++
	}
	if start == at {
		return 0, 0, false
	}
	raw := at + 1
	for raw < len(s) && isDomain(s[raw]) {
		raw++
	}
	end = raw
	for end > at+1 && (s[end-1] == '.' || s[end-1] == '-') {
		end--
	}
	domain := s[at+1 : end]
	dot := strings.LastIndexByte(domain, '.')
	if dot > 0 && len(domain)-dot-1 >= 2 && !strings.Contains(domain, "..") {
		tld := domain[dot+1:]
		allAlpha := true
		for k := 0; k < len(tld); k++ {
			allAlpha = allAlpha && isAlpha(tld[k])
		}
		if allAlpha && !(end < len(s) && isLocal(s[end]) && s[end] != '.' && s[end] != '-') {
			return start, end, true
		}
	}
	if cutAt(s, raw) {
		return start, raw, true // jane.doe@exam…
	}
	return 0, 0, false
}

// keyShape is one API key format: a prefix, then a body of allowed bytes.
type keyShape struct {
	prefix    string
	body      func(byte) bool
	min, max  int  // body length bounds (max 0 = none)
	needDigit bool // the body has a digit (keeps kebab-case words out)
}

func isUpperDigit(c byte) bool { return isUpper(c) || isDigit(c) }
func isTokenBody(c byte) bool  { return isAlnum(c) || c == '_' }

var keyShapes = []keyShape{
	{prefix: "sk-", body: isB64URL, min: 16, needDigit: true},
	{prefix: "AKIA", body: isUpperDigit, min: 16, max: 16},
	{prefix: "ASIA", body: isUpperDigit, min: 16, max: 16},
	{prefix: "AIza", body: isB64URL, min: 35, max: 35},
	{prefix: "github_pat_", body: isTokenBody, min: 22},
	{prefix: "ghp_", body: isAlnum, min: 36},
	{prefix: "gho_", body: isAlnum, min: 36},
	{prefix: "ghu_", body: isAlnum, min: 36},
	{prefix: "ghs_", body: isAlnum, min: 36},
	{prefix: "ghr_", body: isAlnum, min: 36},
	{prefix: "xoxb-", body: isB64URL, min: 10},
	{prefix: "xoxa-", body: isB64URL, min: 10},
	{prefix: "xoxp-", body: isB64URL, min: 10},
	{prefix: "xoxr-", body: isB64URL, min: 10},
	{prefix: "xoxs-", body: isB64URL, min: 10},
}

// keyShapesByFirst are the key shapes by their prefix's first byte: at most one shape's
// prefix starts a text.
var keyShapesByFirst = func() (t [256][]keyShape) {
	for _, k := range keyShapes {
		t[k.prefix[0]] = append(t[k.prefix[0]], k)
	}
	return t
}()

// apiKey returns the end of an API key starting at i, or i.
func apiKey(s string, i int) int {
	for _, k := range keyShapesByFirst[s[i]] {
		if end := k.match(s, i); end > i {
			return end
		}
	}
	return i
}

// match returns the end of a key of shape k starting at i, or i.
func (k keyShape) match(s string, i int) int {
	if !strings.HasPrefix(s[i:], k.prefix) {
		return i
	}
	j := i + len(k.prefix)
	digit := false
	for j < len(s) && k.body(s[j]) && (k.max == 0 || j-i-len(k.prefix) < k.max) {
		digit = digit || isDigit(s[j])
		j++
	}
	n := j - i - len(k.prefix)
	if j < len(s) && k.body(s[j]) {
		return i // longer than the shape allows: another kind of token
	}
	if n >= k.min && (digit || !k.needDigit) && !(j < len(s) && isAlnum(s[j])) {
		return j
	}
	if n >= minPartialBody && cutAt(s, j) {
		return j
	}
	return i
}

func isBearerToken(c byte) bool {
	return isAlnum(c) || c == '-' || c == '.' || c == '_' || c == '~' || c == '+' || c == '/' || c == '='
}

// bearer returns the end of "Bearer <token>" starting at i, or i. The token has at least
// 8 characters and a digit or symbol, so prose ("a Bearer token", "Bearer authentication")
// is not masked.
func bearer(s string, i int) int {
	const word = "bearer"
	if len(s)-i < len(word)+2 || !strings.EqualFold(s[i:i+len(word)], word) {
		return i
	}
	j := i + len(word)
	if s[j] != ' ' && s[j] != '\t' {
		return i
	}
	for j < len(s) && (s[j] == ' ' || s[j] == '\t') {
		j++
	}
	t := j
	mixed := false
	for j < len(s) && isBearerToken(s[j]) {
		mixed = mixed || !isAlpha(s[j])
		j++
	}
	if (j-t >= 8 && mixed) || (j-t >= minPartialBody && cutAt(s, j)) {
		return j
	}
	return i
}

// jwt returns the end of a JWT (eyJ header . payload . signature) starting at i, or i.
func jwt(s string, i int) int {
	if !strings.HasPrefix(s[i:], "eyJ") {
		return i
	}
	j := i
	var seg [3]int
	for k := 0; k < 3; k++ {
		start := j
		for j < len(s) && isB64URL(s[j]) {
			j++
		}
		seg[k] = j - start
		if cutAt(s, j) && j-i >= 3+minPartialBody*2 {
			return j // cut inside the token
		}
		if k < 2 {
			if j >= len(s) || s[j] != '.' {
				return i
			}
			j++
		}
	}
	if seg[0] < 10 || seg[1] < 2 {
		return i
	}
	return j
}
