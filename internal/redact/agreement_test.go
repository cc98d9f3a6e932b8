package redact

import (
	"math/rand/v2"
	"sort"
	"strings"
	"testing"
)

// The scan as it was before the class-table pass (2d88ab4): one trigger table for every
// detector, the word-start check on each trigger byte, every key shape tried at each key
// trigger, every digit run gathered into groups, masks built per match and the spans sorted
// with sort.SliceStable. The detectors' matching (cardGroups, email, keyShape.match,
// bearer, jwt) and merge are shared; everything that chooses where they run is the old
// code's.

var refTrigger = func() (t [256]bool) {
	for c := '0'; c <= '9'; c++ {
		t[c] = true
	}
	for _, c := range "@sAgxBbe" {
		t[c] = true
	}
	return t
}()

func refScan(s string, enabled uint8, out []span) []span {
	last := 0
	for i := 0; i < len(s); {
		c := s[i]
		if !refTrigger[c] {
			i++
			continue
		}
		if c == '@' {
			if enabled&bitEmail != 0 {
				if start, end, ok := email(s, i, last); ok {
					out = append(out, span{start, end, MaskFor(Email)})
					i, last = end, end
					continue
				}
			}
			i++
			continue
		}
		if i > 0 && isAlnum(s[i-1]) {
			i++
			continue
		}
		if isDigit(c) {
			if enabled&bitCard == 0 {
				i++
				continue
			}
			var next int
			out, next = cardGroups(s, i, out)
			if next > i {
				last = max(last, lastEnd(out))
			}
			i = next
			continue
		}
		end, d := 0, Detector("")
		switch c {
		case 's', 'A', 'g', 'x':
			if enabled&bitAPIKey != 0 {
				end, d = refAPIKey(s, i), APIKey
			}
		case 'B', 'b':
			if enabled&bitBearer != 0 {
				end, d = bearer(s, i), Bearer
			}
		case 'e':
			if enabled&bitJWT != 0 {
				end, d = jwt(s, i), JWT
			}
		}
		if end > i {
			out = append(out, span{i, end, MaskFor(d)})
			i, last = end, end
			continue
		}
		i++
	}
	return out
}

func refAPIKey(s string, i int) int {
	for _, k := range keyShapes {
		if end := k.match(s, i); end > i {
			return end
		}
	}
	return i
}

// refRedact is the old Redact of a policy with the enabled detectors and no pattern.
func refRedact(s string, enabled uint8) string {
	if s == "" || enabled == 0 {
		return s
	}
	spans := refScan(s, enabled, nil)
	if len(spans) == 0 {
		return s
	}
	sort.SliceStable(spans, func(i, j int) bool { return spans[i].start < spans[j].start })
	return merge(s, spans)
}

// policies is one policy per set of enabled detectors.
func policies(tb testing.TB) []*Policy {
	ps := make([]*Policy, 1<<len(Detectors))
	for set := range ps {
		var on []Detector
		for k, d := range Detectors {
			if set&(1<<k) != 0 {
				on = append(on, d)
			}
		}
		p, err := New(on, nil)
		if err != nil {
			tb.Fatal(err)
		}
		ps[set] = p
	}
	return ps
}

// agree checks that every policy masks s exactly as the old scan does, whole and cut at
// the ellipsis rules quote content with (at a few lengths).
func agree(t *testing.T, ps []*Policy, s string) {
	t.Helper()
	check := func(in string) {
		for set, p := range ps {
			if got, want := p.Redact(in), refRedact(in, uint8(set)); got != want {
				t.Fatalf("detectors %05b on %q:\n got %q\nwant %q", set, in, got, want)
			}
		}
	}
	check(s)
	for _, n := range []int{8, 30, 200} {
		if len(s) > n {
			check(s[:n] + ellipsis)
		}
	}
}

// TestAgreesWithOldScanOnCaptures: over every string of every real capture, the masked
// text is byte-identical to the old scan's, for every set of enabled detectors.
func TestAgreesWithOldScanOnCaptures(t *testing.T) {
	ps := policies(t)
	values := captureValues(t)
	masked := 0
	for _, v := range values {
		agree(t, ps, v)
		if Default().Redact(v) != v {
			masked++
		}
	}
	t.Logf("%d strings, %d with a mask", len(values), masked)
}

// secretSamples are secrets of every detector, near misses and cut ones.
var secretSamples = []string{
	"4111 1111 1111 1111", "4111-1111-1111-1111", "4111111111111111", "378282246310005",
	"6221 2600 0000 0001 009", "5555555555554444", "4111111111111112", "1796017350497",
	"0.4111111111111111", "4111 1111 11…", "1234 5678", "12345678", "1234567",
	"jane.doe+ci@example.co.uk", "ops@corp.example", "a@b.c", "user@localhost", "jane.doe@exam…",
	testSK, "sk-abcdefghij0123456789", "sk-learn-pipeline-config", testAWS, "ASIAIOSFODNN7EXAMPLE",
	"AKIAIOSFODNN7EXAMPLEXYZ", "AIza" + strings.Repeat("Sy0-_", 7), "ghp_" + strings.Repeat("a1", 18),
	"github_pat_" + strings.Repeat("A_1", 8), "gho_" + strings.Repeat("b2", 18), "xoxb-1234567890-abc",
	"xoxp-abc", "sk-proj-Tq3v…", "Bearer abc123.def456", "bearer Zm9vYmFyYmF6cXV4", "BEARER\tx1y2z3w4v5",
	"Bearer token", testJWT, testJWT[:30] + "…", "eyJust.kidding.x", "eyJhbGciOiJIUzI1NiJ9.eyJ.",
	"@", "e", "s", "A", "g", "x", "b", "9", "…", "\xff", "é",
}

var fillers = []string{
	" ", "", ":", "\"", "'", ",", ".", "-", "_", "\n", "\t", "=", "/", "(", ")", "x", "a", "1", "{\"card\":\"",
	"\",\"", "the weather in Paris is 18C", "id", "\\\"", "…", "@", "0.", "%40", "+",
}

// randomText embeds secrets in fillers and cuts the result at random.
func randomText(r *rand.Rand) string {
	var b strings.Builder
	for n := r.IntN(8); n >= 0; n-- {
		b.WriteString(fillers[r.IntN(len(fillers))])
		sample := secretSamples[r.IntN(len(secretSamples))]
		if r.IntN(4) == 0 && len(sample) > 1 {
			sample = sample[:1+r.IntN(len(sample)-1)] // cut
		}
		b.WriteString(sample)
	}
	s := b.String()
	if r.IntN(3) == 0 && len(s) > 0 {
		s = s[r.IntN(len(s)):]
	}
	return s
}

func TestAgreesWithOldScanOnEmbeddedSecrets(t *testing.T) {
	ps := policies(t)
	r := rand.New(rand.NewPCG(18, 18))
	for range 20000 {
		agree(t, ps, randomText(r))
	}
}

// FuzzAgreesWithOldScan: any text, and any text with secrets embedded, is masked exactly as
// the old scan masks it.
func FuzzAgreesWithOldScan(f *testing.F) {
	for _, s := range secretSamples {
		f.Add(s, uint64(0))
	}
	f.Add("paid with 4111 1111 1111 1111, thanks "+testJWT, uint64(7))
	ps := policies(f)
	f.Fuzz(func(t *testing.T, in string, seed uint64) {
		agree(t, ps, in)
		r := rand.New(rand.NewPCG(seed, 0))
		agree(t, ps, in+randomText(r))
		agree(t, ps, randomText(r)+in)
		if len(in) > 0 {
			k := r.IntN(len(in))
			agree(t, ps, in[:k]+secretSamples[r.IntN(len(secretSamples))]+in[k:])
		}
	})
}
