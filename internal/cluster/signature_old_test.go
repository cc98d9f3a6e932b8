package cluster

import (
	"crypto/sha256"
	"encoding/hex"
	"strings"
	"testing"
)

// The signature and Normalize as they were before they were made to allocate less (at
// 2f9d729): Signature through a hash.Hash and the hex of the whole sum, Normalize with a
// strings.Builder per step and strings.Fields. The new ones must give the same bytes:
// FuzzNormalizeMatchesOld here, and TestSignaturesMatchOldOnResults (corpus_test.go) over
// the results of rules on every bundled trace. The helpers that did not change are shared.

// OldNormalize and OldSignature are the old implementations, for the external tests.
var (
	OldNormalize = oldNormalize
	OldSignature = oldSignature
)

func oldSignature(k Key) string {
	h := sha256.New()
	for _, f := range []string{k.Case, k.Step, k.From, k.To, string(k.Cluster.Or()), oldNormalize(k.Message)} {
		h.Write([]byte(f))
		h.Write([]byte{0})
	}
	return hex.EncodeToString(h.Sum(nil))[:16]
}

func oldNormalize(msg string) string {
	var kept []string
	msg = strings.ReplaceAll(msg, "\x00", "")
	if strings.ContainsAny(msg, "/`") {
		msg = patternRe.ReplaceAllStringFunc(msg, func(m string) string {
			i := strings.IndexAny(m, "/`")
			kept = append(kept, m[i:])
			return m[:i] + "\x00"
		})
	}
	s := oldReplaceContent(msg)
	if strings.ContainsAny(s, "0123456789") { // every placeholder below stands for digits
		if strings.Count(s, "-") >= 4 {
			s = uuidRe.ReplaceAllString(s, PlaceholderID)
		}
		s = replaceHex(s)
		if mayHoldTime(s) {
			s = timeRe.ReplaceAllString(s, PlaceholderTime)
		}
		if mayHoldDuration(s) {
			s = durationRe.ReplaceAllString(s, PlaceholderDuration)
		}
		s = oldReplaceNumbers(s)
	}
	for _, k := range kept {
		s = strings.Replace(s, "\x00", k, 1)
	}
	return strings.Join(strings.Fields(s), " ")
}

func oldReplaceNumbers(s string) string {
	var b strings.Builder
	last := 0
	for start := 0; start < len(s); {
		if !isDigit(s[start]) {
			start++
			continue
		}
		end := numberEnd(s, start)
		count := start > 0 && s[start-1] == 'x' && (start == 1 || s[start-2] == ' ')
		glued := start > 0 && isLetter(s[start-1]) || end < len(s) && isLetter(s[end])
		if !glued || count {
			b.WriteString(s[last:start])
			b.WriteString(PlaceholderNumber)
			last = end
		}
		start = end
	}
	if last == 0 {
		return s
	}
	b.WriteString(s[last:])
	return b.String()
}

func oldReplaceContent(s string) string {
	var b strings.Builder
	for i := 0; i < len(s); {
		c := s[i]
		switch {
		case c == '"':
			b.WriteString(PlaceholderText)
			i = skipString(s, i)
		case (c == '{' || c == '[') && jsonStart(s[i:]):
			b.WriteString(PlaceholderJSON)
			i = skipJSON(s, i)
		default:
			b.WriteByte(c)
			i++
		}
	}
	return b.String()
}

// FuzzNormalizeMatchesOld: Normalize and Signature give what the old ones gave. The seeds
// are TestNormalize's messages and their near misses; `go test -fuzz FuzzNormalizeMatchesOld
// ./internal/cluster/` searches further.
func FuzzNormalizeMatchesOld(f *testing.F) {
	for _, s := range []string{
		"archiver (span 0000000000000c03) made 2 tool calls, over maxToolCalls 1",
		"trace 4bf92f3577b34da6a3ce929d0e0e4736 run 123e4567-e89b-12d3-a456-426614174000",
		"researcher (span 00000000000000a2) took 1534.25ms, over maxDurationMs 1000", "took 2m30s and 5 seconds",
		"at 2026-12-01T10:55:33.123Z it failed", `agent2 used context planner never supplied: ORD-4471 in lookup(ord_88)`,
		`got status "completed", error "", output {"text":"it is \"sunny\"","n":[1,{"a":"}"}]} (status: ok)`,
		`output [{"role":"user","parts":[{"text":"Paris`, `output {"content":{"parts":[{"text":"Paris…, and (status: ok)`,
		"other senders to researcher: planner x3, critic x12", "  a \n\t b  ", "a\u00a0\u0085b\u2003 c\u3000", "\xff \xc2 x\x00y",
		"agent a: 2 of 3 add calls match `invocations == 1 and params.a == 4`, and 2 more",
		"handoff a -> b (span 00000000000000a1): the handoff content lacks /budget: \\d+ USD/; /[0-9]{4}/ too",
		"expected any agent delegating to triage between 1 and 100 times, saw 0 times", "", " ", "x1 9",
	} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		if got, want := Normalize(s), oldNormalize(s); got != want {
			t.Fatalf("Normalize(%q) = %q, the old one %q", s, got, want)
		}
		k := Key{Case: "c", Step: s, From: "a", To: "b", Cluster: Leak, Message: s}
		if got, want := k.Signature(), oldSignature(k); got != want {
			t.Fatalf("Signature of %q = %s, the old one %s", s, got, want)
		}
	})
}
