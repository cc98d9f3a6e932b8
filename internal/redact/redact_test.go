package redact

import (
	"encoding/base64"
	"encoding/hex"
	"net/url"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"
)

const (
	testJWT = "eyJhbGciOiJIUzI1NiIsInR5cCI6IkpXVCJ9.eyJzdWIiOiIxMjM0NTY3ODkwIn0.dozjgNryP4J3jVmNHl0w5N_XgL0n3I9PlFUP0THsR8U"
	testSK  = "sk-proj-Tq3vX9bL2mN8pR4sW7yZ1aC5dF6gH0jK"
	testAWS = "AKIAIOSFODNN7EXAMPLE"
)

func TestDetectors(t *testing.T) {
	for _, tt := range []struct{ name, in, want string }{
		{"card spaced", "paid with 4111 1111 1111 1111, thanks", "paid with [REDACTED:card], thanks"},
		{"card dashed", "card=4111-1111-1111-1111", "card=[REDACTED:card]"},
		{"card contiguous in JSON", `{"card":"4111111111111111"}`, `{"card":"[REDACTED:card]"}`},
		{"card amex 15 digits", "amex 378282246310005.", "amex [REDACTED:card]."},
		{"card 19 digits", "6221 2600 0000 0001 009 ok", "[REDACTED:card] ok"},
		{"two cards in one run", "4111111111111111 5555555555554444", "[REDACTED:card] [REDACTED:card]"},
		{"card then more digits", "4111 1111 1111 1111 7", "[REDACTED:card] 7"},
		{"non-Luhn run kept", "order 4111111111111112 shipped", "order 4111111111111112 shipped"},
		{"short number kept", "total 1234 5678 EUR", "total 1234 5678 EUR"},
		{"epoch timestamp kept", `{"ts":1796017350497,"ns":"1796017350497000000"}`, `{"ts":1796017350497,"ns":"1796017350497000000"}`},
		{"Luhn-valid id starting with 1 kept", "id 1000000000000008", "id 1000000000000008"},
		{"fraction kept", "score 0.4111111111111111", "score 0.4111111111111111"},
		{"glued to a word kept", "id4111111111111111 and 4111111111111111x", "id4111111111111111 and 4111111111111111x"},
		{"card cut by a limit", `"paid with 4111 1111 11…"`, `"paid with [REDACTED:card]…"`},
		{"email", "mail jane.doe+ci@example.co.uk.", "mail [REDACTED:email]."},
		{"email in escaped JSON", `{\"to\":\"ops@corp.example\"}`, `{\"to\":\"[REDACTED:email]\"}`},
		{"email cut", "to jane.doe@exam…", "to [REDACTED:email]…"},
		{"not an email", "user@localhost and @handle and a@b.c", "user@localhost and @handle and a@b.c"},
		{"sk-proj key", "key " + testSK + " end", "key [REDACTED:api_key] end"},
		{"sk key", "OPENAI_API_KEY=sk-abcdefghij0123456789", "OPENAI_API_KEY=[REDACTED:api_key]"},
		{"sk word kept", "risk-free and sk-learn-pipeline-config", "risk-free and sk-learn-pipeline-config"},
		{"aws key", "aws " + testAWS + ",", "aws [REDACTED:api_key],"},
		{"aws-like too long kept", "AKIAIOSFODNN7EXAMPLEXYZ", "AKIAIOSFODNN7EXAMPLEXYZ"},
		{"github token", "ghp_" + strings.Repeat("a1", 18), "[REDACTED:api_key]"},
		{"key cut", "sk-proj-Tq3v…", "[REDACTED:api_key]…"},
		{"bearer", "Authorization: Bearer abc123.def456", "Authorization: [REDACTED:bearer]"},
		{"bearer lower", "authorization: bearer Zm9vYmFyYmF6cXV4", "authorization: [REDACTED:bearer]"},
		{"bearer prose kept", "send a Bearer token, Bearer authentication", "send a Bearer token, Bearer authentication"},
		{"jwt", "token=" + testJWT + "&x=1", "token=[REDACTED:jwt]&x=1"},
		{"jwt cut", "t " + testJWT[:30] + "…", "t [REDACTED:jwt]…"},
		{"not a jwt", "eyJust.kidding.x", "eyJust.kidding.x"},
		{"nothing", "the weather in Paris is 18C", "the weather in Paris is 18C"},
		{"invalid UTF-8 kept", "a\xff4111111111111111\xfe", "a\xff[REDACTED:card]\xfe"},
		// Encoded text (a JSON attribute, a Go-quoted message): an escape's last letter is no
		// word the secret belongs to.
		{"card after an escaped newline", `"refused:\n4111 1111 1111 1111"`, `"refused:\n[REDACTED:card]"`},
		{"key after an escaped tab", `{"e":"\t` + testSK + `"}`, `{"e":"\t[REDACTED:api_key]"}`},
		{"bearer after an escaped newline", `"hdr\nBearer tok19.abcdefGHIJ-123"`, `"hdr\n[REDACTED:bearer]"`},
		{"aws key after a unicode escape", `"\u201c` + testAWS + `\u201d"`, `"\u201c[REDACTED:api_key]\u201d"`},
		{"card after a hex escape", `"\xa04111111111111111"`, `"\xa0[REDACTED:card]"`},
		{"word after an escape kept", `"\nBearer authentication\tsk-learn-pipeline"`, `"\nBearer authentication\tsk-learn-pipeline"`},
		{"email after escapes", `"\nuser81@example.com \u201cjane@example.org"`, `"\n[REDACTED:email] \u201c[REDACTED:email]"`},
		{"card cut after a separator", `"paid with 4111 1111 1111 …"`, `"paid with [REDACTED:card] …"`},
		{"card cut after a dash", `"4111-1111-…"`, `"[REDACTED:card]-…"`},
		{"short number cut after a separator kept", `"total 1234 567 …"`, `"total 1234 567 …"`},
	} {
		t.Run(tt.name, func(t *testing.T) {
			require.Equal(t, tt.want, Default().Redact(tt.in))
		})
	}
}

func TestNilPolicyIsDefault(t *testing.T) {
	var p *Policy
	require.Equal(t, "[REDACTED:email]", p.Redact("a@example.com"))
	require.True(t, p.Enabled(Card))
}

func TestUserPatternsAndOverlaps(t *testing.T) {
	p, err := Config{Patterns: []string{`(?i)order-\d+`, `4111 1111`}}.Compile(`secret=\S+`)
	require.NoError(t, err)
	require.Equal(t, "[REDACTED] and [REDACTED] and [REDACTED:email] and [REDACTED]",
		p.Redact("ORDER-42 and secret=hunter2 and a@example.com and 4111 1111 1111 1111"),
		"a user pattern overlapping a detector match merges into one [REDACTED]")
	require.True(t, p.Enabled(Email))
}

func TestDisableDetectors(t *testing.T) {
	p, err := Config{DisableDetectors: []string{"email", "card"}}.Compile()
	require.NoError(t, err)
	require.Equal(t, "a@example.com 4111111111111111 [REDACTED:api_key]", p.Redact("a@example.com 4111111111111111 "+testAWS))
	require.False(t, p.Enabled(Email))
	require.True(t, p.Enabled(JWT))

	off, err := Config{DisableDetectors: []string{All}, Patterns: []string{`\d{4}`}}.Compile()
	require.NoError(t, err)
	require.Equal(t, "a@example.com [REDACTED]", off.Redact("a@example.com 4242"))
	require.Equal(t, testJWT, None.Redact(testJWT))
}

func TestConfigValidate(t *testing.T) {
	require.NoError(t, Config{}.Validate("redaction"))
	err := Config{DisableDetectors: []string{"card", "phone"}, Patterns: []string{"ok", "(", "x*"}}.Validate("redaction")
	require.ErrorContains(t, err, `redaction.disable_detectors[1]: unknown detector "phone" (want one of card, email, api_key, bearer, jwt, or all)`)
	require.ErrorContains(t, err, "redaction.patterns[1]: error parsing regexp")
	require.ErrorContains(t, err, `redaction.patterns[2]: "x*" matches the empty string`)
	_, err = Config{DisableDetectors: []string{"phone"}}.Compile()
	require.Error(t, err)
}

func TestRedactIsIdempotent(t *testing.T) {
	in := "4111111111111111 a@example.com " + testSK + " Bearer abc123def " + testJWT
	once := Default().Redact(in)
	require.Equal(t, once, Default().Redact(once))
}

func TestSecretsScrub(t *testing.T) {
	const key = "sk-Live-SECRET-abcdef0123456789"
	s := NewSecrets(key, "")
	b64 := func(enc *base64.Encoding, v string) string { return enc.EncodeToString([]byte(v)) }
	for _, echo := range []string{
		key,
		strings.ToLower(key),
		strings.ToUpper(key),
		b64(base64.StdEncoding, key),
		b64(base64.URLEncoding, key),
		b64(base64.RawStdEncoding, key),
		b64(base64.StdEncoding, strings.ToLower(key)),
		// The key inside a longer base64 text, at each byte alignment.
		b64(base64.StdEncoding, `{"key":"`+key+`"}`),
		b64(base64.StdEncoding, `{"k":"`+key+`"}`),
		b64(base64.RawURLEncoding, `{"kk":"`+key+`"}`),
		b64(base64.StdEncoding, "Bearer "+key),
		url.QueryEscape("Bearer " + key),
		hex.EncodeToString([]byte(key)),
		strings.ToUpper(hex.EncodeToString([]byte(key))),
	} {
		got := s.Scrub(`{"error":"bad key ` + echo + `"}`)
		require.Contains(t, got, Mask, echo)
		require.NotContains(t, strings.ToLower(got), strings.ToLower(key))
		for _, part := range []string{b64(base64.RawStdEncoding, key[3:27]), hex.EncodeToString([]byte(key))[:40]} {
			require.NotContains(t, got, part, "no long stretch of an encoding survives: %s", echo)
		}
	}
	require.Equal(t, "nothing here", s.Scrub("nothing here"))
	require.Equal(t, "x", (*Secrets)(nil).Scrub("x"))
	require.True(t, NewSecrets(" ").Empty())
	require.True(t, NewSecrets("abc").Empty(), "too short to be told from ordinary text")
}

func TestRedactKeeping(t *testing.T) {
	const s = "span 3552568167993130 paid 4111111111111111"
	require.Equal(t, "span [REDACTED:card] paid [REDACTED:card]", Default().Redact(s))
	require.Equal(t, "span 3552568167993130 paid [REDACTED:card]", Default().RedactKeeping(s, []string{"3552568167993130"}))
	p, err := Config{Patterns: []string{`span \d+`}}.Compile()
	require.NoError(t, err)
	require.Equal(t, "[REDACTED] paid [REDACTED:card]", p.RedactKeeping(s, []string{"3552568167993130"}), "a match wider than the kept id is masked")
}
