package rubric

import (
	"testing"

	"github.com/stretchr/testify/require"
)

func TestIsIdentifier(t *testing.T) {
	for _, tok := range []string{
		"A-1001", "BA117", "ORD-0", "LC-88412", "T123", "4111111111111111", "784512",
		"123e4567-e89b-12d3-a456-426614174000", "jane.doe@example.com", "https://example.com/orders/17",
	} {
		require.True(t, isIdentifier(tok), tok)
	}
	for _, tok := range []string{
		"2026", "17", "12000", "1.08", // a year, small numbers
		"2026-12-24", "24/12/2026", "2026-05-01T10:00:00Z", "2023-11-14T22:13:20.011Z", "20:00", "08:25", // dates and times
		"18C", "10am", "100ms", "3rd", // quantities
		"Paris", "x2",
	} {
		require.False(t, isIdentifier(tok), tok)
	}
	require.Equal(t, []string{"A-1001", "jane.doe@example.com"},
		identifiers(`{"order": "A-1001", "year": "2026", "date": "2026-12-24", "guests": "2", "to": "jane.doe@example.com", "at": "20:00"}`))
}

func TestTokenText(t *testing.T) {
	require.Equal(t, " a 1001 ", tokenText("A-1001"))
	require.Equal(t, " order a 1001 ref a 1001 ", tokenText(`order "A-1001".\nref:A-1001`))
	require.Equal(t, " xa 10012 ", tokenText("XA-10012"))
	require.Equal(t, " line a 1001 ", tokenText(`line\\nA-1001`), "an escaped newline does not glue words")
}
