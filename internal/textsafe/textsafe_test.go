package textsafe

import (
	"bytes"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"
)

func TestEscape(t *testing.T) {
	for in, want := range map[string]string{
		"":                                 "",
		"weather_specialist":               "weather_specialist",
		"agent\nPASS all good":             `agent\nPASS all good`,
		"a\r\nb\tc":                        `a\r\nb\tc`,
		"\x1b[31mred\x1b[0m":               `\x1b[31mred\x1b[0m`,
		"bell\a nul\x00 del\x7f":           `bell\x07 nul\x00 del\x7f`,
		"c1 \u009b2J csi \u0085nel":        `c1 \u009b2J csi \u0085nel`,
		"x\n::error file=a::forged":        `x\n::error file=a::forged`,
		"admin\u202Etxt.exe":               `admin\u202etxt.exe`,
		"\u202A\u202B\u202C\u202D":         `\u202a\u202b\u202c\u202d`,
		"\u2066\u2067\u2068\u2069":         `\u2066\u2067\u2068\u2069`,
		"marks \u200E\u200F\u061C":         `marks \u200e\u200f\u061c`,
		"line\u2028para\u2029":             `line\u2028para\u2029`,
		"bad utf8 \xff\xfe, raw C1 \x9b":   `bad utf8 \xff\xfe, raw C1 \x9b`,
		`back\slash "quoted" ünïcödé 日本 🙂`: `back\slash "quoted" ünïcödé 日本 🙂`,
	} {
		got := Escape(in)
		require.Equal(t, want, got, "%q", in)
		require.NotContains(t, got, "\n")
		require.NotContains(t, got, "\x1b")
	}
}

// TestEscapeKeepsSafeTextUnchanged: every printable rune outside the escaped ranges passes
// as it is.
func TestEscapeKeepsSafeTextUnchanged(t *testing.T) {
	var b strings.Builder
	for r := rune(0x20); r < 0x3000; r++ {
		switch {
		case r >= 0x7F && r <= 0x9F, r >= 0x202A && r <= 0x202E, r >= 0x2066 && r <= 0x2069,
			r == 0x200E, r == 0x200F, r == 0x061C, r == 0x2028, r == 0x2029, r >= 0xD800 && r <= 0xDFFF:
			continue
		}
		b.WriteRune(r)
	}
	require.Equal(t, b.String(), Escape(b.String()))
}

func TestLines(t *testing.T) {
	got := Lines("cases[0]: bad\nspans.json: agent \x1b[2Kx\n::error::forged", "handoffcheck: ")
	require.Equal(t, "cases[0]: bad\nhandoffcheck: spans.json: agent \\x1b[2Kx\nhandoffcheck: ::error::forged", got)
	for _, line := range strings.Split(got, "\n") {
		require.False(t, strings.HasPrefix(strings.TrimSpace(line), "::"), line)
	}
}

func TestWriter(t *testing.T) {
	var b bytes.Buffer
	line := "WARN\tassertion fail: a\n::error::x\t{\"agent\": \"a\u202eb\\n\x1b\"}\n"
	n, err := Writer(&b).Write([]byte(line))
	require.NoError(t, err)
	require.Equal(t, len(line), n)
	require.Equal(t, "WARN\tassertion fail: a\\n::error::x\t{\"agent\": \"a\\u202eb\\n\\x1b\"}\n", b.String())
}
