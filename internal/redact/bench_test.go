package redact

import (
	"strings"
	"testing"
	"unicode/utf8"
)

// Typical inputs: an assertion message without secrets, one quoting tool arguments with
// secrets, and an 8 KiB judge content field.
var benchInputs = map[string]string{
	"message_clean":   `expected_tool_calls: refund: invocations == 1 and params.amount < 100 — saw 2 matching calls of refund (span 44fecc1eed6b4721): {"order":"A-1001","amount":42.5,"currency":"EUR","note":"customer asked twice"}`,
	"message_secrets": `expected refund params.card == "x", saw {"card":"4111 1111 1111 1111","email":"jane.doe@example.com","key":"` + testSK + `","aws":"` + testAWS + `","jwt":"` + testJWT[:60] + `…`,
	"content_8k":      strings.Repeat(`{"city":"Paris","temp_c":18,"forecast":[12,14,17,18,16],"source":"meteo","ts":1796017350497}`, 90),
}

func BenchmarkRedact(b *testing.B) {
	user, err := Config{Patterns: []string{`(?i)order-\d+`, `internal-[a-z]{3}`}}.Compile()
	if err != nil {
		b.Fatal(err)
	}
	for _, p := range []struct {
		name string
		p    *Policy
	}{{"detectors", Default()}, {"detectors+patterns", user}} {
		for name, in := range benchInputs {
			b.Run(p.name+"/"+name, func(b *testing.B) {
				b.ReportAllocs()
				b.SetBytes(int64(len(in)))
				for b.Loop() {
					_ = p.p.Redact(in)
				}
			})
		}
	}
}

func BenchmarkSecretsScrub(b *testing.B) {
	s := NewSecrets(testSK)
	in := `{"error":{"message":"upstream failed","code":500,"detail":"` + strings.Repeat("x", 150) + `"}}`
	b.ReportAllocs()
	b.SetBytes(int64(len(in)))
	for b.Loop() {
		_ = s.Scrub(in)
	}
}

// FuzzRedact: any input is handled without a panic, masks never make the text invalid
// UTF-8 when it was valid, redaction is idempotent and nothing the detectors mask
// survives.
func FuzzRedact(f *testing.F) {
	for _, in := range benchInputs {
		f.Add(in)
	}
	f.Add("4111 1111 11…")
	f.Add("a@b.co@c.de")
	f.Add("eyJ.eyJ..")
	f.Fuzz(func(t *testing.T, in string) {
		out := Default().Redact(in)
		if utf8.ValidString(in) && !utf8.ValidString(out) {
			t.Fatalf("invalid UTF-8 from %q: %q", in, out)
		}
		if again := Default().Redact(out); again != out {
			t.Fatalf("not idempotent: %q -> %q -> %q", in, out, again)
		}
		_ = NewSecrets(in).Scrub(in)
	})
}
