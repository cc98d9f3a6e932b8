package check

import (
	"testing"

	"github.com/stretchr/testify/require"
)

// oldDecimalSpanIDs is decimalSpanIDs as it was before it read only every 16th byte
// (2f9d729): every byte, each run of digits measured.
func oldDecimalSpanIDs(s string) []string {
	var out []string
	for i := 0; i < len(s); {
		if !isDigit(s[i]) {
			i++
			continue
		}
		j := i
		for j < len(s) && isDigit(s[j]) {
			j++
		}
		if j-i == 16 && !(i > 0 && isWordByte(s[i-1])) && !(j < len(s) && isWordByte(s[j])) {
			out = append(out, s[i:j])
		}
		i = j
	}
	return out
}

func TestDecimalSpanIDs(t *testing.T) {
	for _, tc := range []struct {
		in   string
		want []string
	}{
		{"span 4111111111111111 failed", []string{"4111111111111111"}},
		{"4111111111111111", []string{"4111111111111111"}},
		{"a 1234567890123456 and 6543210987654321.", []string{"1234567890123456", "6543210987654321"}},
		{"12345678901234567 is 17 digits, 123456789012345 is 15", nil},
		{"x1234567890123456 -1234567890123456 1234567890123456_ 1234567890123456-", nil},
		{"(1234567890123456)1234567890123456", []string{"1234567890123456", "1234567890123456"}},
	} {
		require.Equal(t, tc.want, decimalSpanIDs(tc.in), tc.in)
		require.Equal(t, oldDecimalSpanIDs(tc.in), decimalSpanIDs(tc.in), tc.in)
	}
}

// FuzzDecimalSpanIDs: the strided scan finds what the byte-by-byte one found, in order.
// `go test -fuzz FuzzDecimalSpanIDs ./internal/rules/check/` searches further.
func FuzzDecimalSpanIDs(f *testing.F) {
	for _, s := range []string{
		"span 4111111111111111 failed", "12345678901234567", "1234567890123456 1234567890123456",
		"a1234567890123456", "00000000000000000000000000000000 1111111111111111", "", "9",
	} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		require.Equal(t, oldDecimalSpanIDs(s), decimalSpanIDs(s), "%q", s)
	})
}
