package agentgraph

import (
	"encoding/json"
	"slices"
	"sort"
	"strconv"
	"strings"
	"unicode/utf8"
	"unsafe"
)

// Reading JSON without decoding it into any: the readers that look at a few members of a
// large value (the calls a model response asked for, LangGraph Commands, the text of a
// response) scan the raw text instead, decoding only the strings they read. The text is first
// checked to be what json.Unmarshal into any accepts (decodable), so a reader sees a value
// exactly when decoding would have given one. This file holds every primitive of the
// scanner (members, elements, strings, skipping values); its readers are in content.go,
// delegation.go and lookup.go.

// bytesOf is s as a byte slice without a copy, for json.Unmarshal, which only reads its
// input; it must never be written to.
func bytesOf(s string) []byte { return unsafe.Slice(unsafe.StringData(s), len(s)) }

// decodable reports whether json.Unmarshal of raw into an any succeeds: raw is one valid
// JSON value (validJSON, json.Valid's verdict) and every number in it is within float64's
// range.
func decodable(raw string) bool {
	valid, fits := checkJSON(raw)
	return valid && fits
}

func floatFits(tok string) bool {
	_, err := strconv.ParseFloat(tok, 64)
	return err == nil
}

// rawMember is one member of a JSON object left undecoded: its decoded key and its raw
// value (no surrounding white space).
type rawMember struct {
	key, val string
}

// rawMembers lists the members of the object the valid JSON text raw holds, sorted by key,
// one per key: the last of duplicate keys, as a decoded map keeps. ok is false when raw is
// not an object.
func rawMembers(raw string) (members []rawMember, ok bool) {
	return rawMembersAppend(nil, raw)
}

// rawMembersAppend is rawMembers appending to dst: the members are all[len(dst):], and all
// is dst (false) when raw is not an object.
func rawMembersAppend(dst []rawMember, raw string) (all []rawMember, ok bool) {
	i := skipSpace(raw, 0)
	if i >= len(raw) || raw[i] != '{' {
		return dst, false
	}
	base := len(dst)
	members := dst
	dups := false
	for i = skipSpace(raw, i+1); i < len(raw) && raw[i] == '"'; {
		kEnd := skipString(raw, i)
		k, _ := rawString(raw[i:kEnd])
		i = skipSpace(raw, kEnd)
		i = skipSpace(raw, i+1) // the ':'
		vEnd := skipValue(raw, i)
		members = append(members, rawMember{k, raw[i:vEnd]})
		i = skipSpace(raw, vEnd)
		if i < len(raw) && raw[i] == ',' {
			i = skipSpace(raw, i+1)
		}
	}
	// Stable: among members of one key, the last stays last.
	own := members[base:]
	slices.SortStableFunc(own, func(a, b rawMember) int { return strings.Compare(a.key, b.key) })
	for j := 1; j < len(own); j++ {
		if own[j].key == own[j-1].key {
			dups = true
			break
		}
	}
	if dups {
		out := own[:0]
		for j, m := range own {
			if j+1 < len(own) && own[j+1].key == m.key {
				continue
			}
			out = append(out, m)
		}
		members = members[:base+len(out)]
	}
	return members, true
}

// member is the raw value of key among members (sorted by rawMembers).
func member(members []rawMember, key string) (string, bool) {
	j := sort.Search(len(members), func(j int) bool { return members[j].key >= key })
	if j < len(members) && members[j].key == key {
		return members[j].val, true
	}
	return "", false
}

// memberString is the string value of key among members; ok is false when there is none
// or the value is not a string.
func memberString(members []rawMember, key string) (string, bool) {
	if v, ok := member(members, key); ok {
		return rawString(v)
	}
	return "", false
}

// rawElements calls fn with the raw value of every element of the array the valid JSON
// text raw holds; it reports false (and calls nothing) when raw is not an array.
func rawElements(raw string, fn func(elem string)) bool {
	i := skipSpace(raw, 0)
	if i >= len(raw) || raw[i] != '[' {
		return false
	}
	for i = skipSpace(raw, i+1); i < len(raw) && raw[i] != ']'; {
		end := skipValue(raw, i)
		fn(raw[i:end])
		i = skipSpace(raw, end)
		if i < len(raw) && raw[i] == ',' {
			i = skipSpace(raw, i+1)
		}
	}
	return true
}

// rawString decodes the JSON string token raw (quotes included) as json.Unmarshal does
// (invalid UTF-8 replaced); ok is false when raw is not a string.
func rawString(raw string) (string, bool) {
	if len(raw) < 2 || raw[0] != '"' {
		return "", false
	}
	body := raw[1 : len(raw)-1]
	if strings.IndexByte(body, '\\') < 0 && utf8.ValidString(body) {
		return body, true
	}
	var s string
	if json.Unmarshal(bytesOf(raw), &s) != nil {
		return "", false
	}
	return s, true
}

// rawText is jsonText of the decoded raw value ("null" for a missing one, raw == ""):
// strings bare, everything else re-encoded as encoding/json writes it.
func rawText(raw string) string {
	if raw == "" {
		return "null"
	}
	if s, ok := rawString(raw); ok {
		return s
	}
	var v any
	if json.Unmarshal(bytesOf(raw), &v) != nil {
		return ""
	}
	return jsonText(v)
}

// objectString is the string value of the last member named key of the raw object; ok is
// false when there is none or it is not a string.
func objectString(obj, key string) (string, bool) {
	v, ok := memberOf(obj, key)
	if !ok {
		return "", false
	}
	return rawString(v)
}

// firstElement is the raw first element of the array the valid JSON text raw holds; ok is
// false when raw is not an array or is empty.
func firstElement(raw string) (string, bool) {
	i := skipSpace(raw, 0)
	if i >= len(raw) || raw[i] != '[' {
		return "", false
	}
	i = skipSpace(raw, i+1)
	if i >= len(raw) || raw[i] == ']' {
		return "", false
	}
	return raw[i:skipValue(raw, i)], true
}

// memberOf returns the raw value of the last member named key of the object raw holds
// (leading white space allowed); raw must be valid JSON. ok is false when raw is not an
// object or has no such member.
func memberOf(raw, key string) (val string, ok bool) {
	i := skipSpace(raw, 0)
	if i >= len(raw) || raw[i] != '{' {
		return "", false
	}
	i = skipSpace(raw, i+1)
	for i < len(raw) && raw[i] == '"' {
		kEnd := skipString(raw, i)
		k := raw[i:kEnd]
		i = skipSpace(raw, kEnd)
		i = skipSpace(raw, i+1) // the ':'
		vEnd := skipValue(raw, i)
		if keyIs(k, key) {
			val, ok = raw[i:vEnd], true
		}
		i = skipSpace(raw, vEnd)
		if i < len(raw) && raw[i] == ',' {
			i = skipSpace(raw, i+1)
		}
	}
	return val, ok
}

// keyIs reports whether the raw object key k (a JSON string token) decodes to key.
func keyIs(k, key string) bool {
	if strings.IndexByte(k, '\\') < 0 {
		return k[1:len(k)-1] == key
	}
	s, ok := rawString(k)
	return ok && s == key
}

func skipSpace(b string, i int) int {
	for i < len(b) && (b[i] == ' ' || b[i] == '\t' || b[i] == '\n' || b[i] == '\r') {
		i++
	}
	return i
}

// skipString returns the index after the string starting at b[i] (a '"'): after the first
// quote not escaped, one preceded by an even run of backslashes (len(b) when none).
func skipString(b string, i int) int {
	start := i + 1
	for j := start; ; {
		k := strings.IndexByte(b[j:], '"')
		if k < 0 {
			return len(b)
		}
		q := j + k
		p := q - 1
		for p >= start && b[p] == '\\' {
			p--
		}
		if (q-1-p)%2 == 0 {
			return q + 1
		}
		j = q + 1
	}
}

// skipValue returns the index after the valid JSON value starting at b[i].
func skipValue(b string, i int) int {
	if i >= len(b) {
		return i
	}
	switch b[i] {
	case '"':
		return skipString(b, i)
	case '{', '[':
		depth := 0
		for i < len(b) {
			switch b[i] {
			case '"':
				i = skipString(b, i)
				continue
			case '{', '[':
				depth++
			case '}', ']':
				depth--
				if depth == 0 {
					return i + 1
				}
			}
			i++
		}
		return i
	}
	for i < len(b) {
		switch b[i] {
		case ',', '}', ']', ' ', '\t', '\n', '\r':
			return i
		}
		i++
	}
	return i
}
