package textsafe

import (
	"bytes"
	"strings"
	"testing"
	"unicode"

	"github.com/stretchr/testify/require"
)

func TestEscape(t *testing.T) {
	for in, want := range map[string]string{
		"":                                              "",
		"weather_specialist":                            "weather_specialist",
		"agent\nPASS all good":                          `agent\nPASS all good`,
		"a\r\nb\tc":                                     `a\r\nb\tc`,
		"\x1b[31mred\x1b[0m":                            `\x1b[31mred\x1b[0m`,
		"bell\a nul\x00 del\x7f":                        `bell\x07 nul\x00 del\x7f`,
		"c1 \u009b2J csi \u0085nel":                     `c1 \u009b2J csi \u0085nel`,
		"x\n::error file=a::forged":                     `x\n::error file=a::forged`,
		"admin\u202Etxt.exe":                            `admin\u202etxt.exe`,
		"\u202A\u202B\u202C\u202D":                      `\u202a\u202b\u202c\u202d`,
		"\u2066\u2067\u2068\u2069":                      `\u2066\u2067\u2068\u2069`,
		"marks \u200E\u200F\u061C":                      `marks \u200e\u200f\u061c`,
		"line\u2028para\u2029":                          `line\u2028para\u2029`,
		"bad utf8 \xff\xfe, raw C1 \x9b":                `bad utf8 \xff\xfe, raw C1 \x9b`,
		`back\slash "quoted" ünïcödé 日本 🙂`:              `back\slash "quoted" ünïcödé 日本 🙂`,
		"tri\u200bage":                                  `tri\u200bage`,
		"zw \u200c\u200d\u2060\ufeff":                   `zw \u200c\u200d\u2060\ufeff`,
		"soft\u00adhyphen mvs\u180e":                    `soft\u00adhyphen mvs\u180e`,
		"ops \u2061\u2062\u2063\u2064 \u206a\u206f":     `ops \u2061\u2062\u2063\u2064 \u206a\u206f`,
		"arabic \u0600 \u06dd syriac \u070f":            `arabic \u0600 \u06dd syriac \u070f`,
		"interlinear \ufff9\ufffa\ufffb":                `interlinear \ufff9\ufffa\ufffb`,
		"tag \U000e0001\U000e0041\U000e007f":            `tag \U000e0001\U000e0041\U000e007f`,
		"fillers \u115f\u1160\u3164\uffa0 cgj a\u034fb": `fillers \u115f\u1160\u3164\uffa0 cgj a\u034fb`,
		"tri\ufe0fage \U000e0100":                       `tri\ufe0fage \U000e0100`,
		"warn \u26a0\ufe0f heart \u2764\ufe0e":          "warn \u26a0\ufe0f heart \u2764\ufe0e",
		"family \U0001f468\u200d\U0001f469":             `family 👨\u200d👩`,
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
	for r := rune(0x20); r < 0x10000; r++ {
		switch {
		case r >= 0x7F && r <= 0x9F, r == 0x2028, r == 0x2029, r >= 0xD800 && r <= 0xDFFF,
			unicode.Is(unicode.Cf, r), unicode.Is(unicode.Other_Default_Ignorable_Code_Point, r),
			r >= 0xFE00 && r <= 0xFE0F, r >= 0x180B && r <= 0x180F:
			continue
		}
		b.WriteRune(r)
	}
	require.Equal(t, b.String(), Escape(b.String()))
}

// TestEscapeInvisible: every format character (Cf) and default-ignorable code point of
// the whole code space is escaped, so nothing invisible is left in a printed name; the
// escaped text has no rune of those classes left.
func TestEscapeInvisible(t *testing.T) {
	invisible := func(r rune) bool {
		return unicode.In(r, unicode.Cf, unicode.Other_Default_Ignorable_Code_Point) ||
			r >= 0xFE00 && r <= 0xFE0F || r >= 0xE0100 && r <= 0xE01EF || r >= 0x180B && r <= 0x180F
	}
	n := 0
	for r := rune(0xA0); r <= unicode.MaxRune; r++ {
		if !invisible(r) {
			continue
		}
		n++
		in := "agent" + string(r) + "name"
		got := Escape(in)
		require.NotEqual(t, in, got, "%U", r)
		require.Regexp(t, `^agent\\(u[0-9a-f]{4}|U[0-9a-f]{8})name$`, got, "%U", r)
		for _, c := range got {
			require.False(t, invisible(c), "%U left in %q", c, got)
		}
	}
	require.Greater(t, n, 4000, "the tag characters and the ignorable planes are covered")
	// The spoof from the audit: the zero width space shows, the name differs from triage.
	require.Equal(t, `tri\u200bage`, Escape("tri\u200bage"))
	require.Equal(t, "zw \t\\u200b", escape("zw \t\u200b", true), "the log writer escapes it too")
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
