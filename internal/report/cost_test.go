package report

import (
	"testing"

	"github.com/stretchr/testify/require"
)

// TestFiguresShowTheCost: a node shows its cost when its calls are priced, "≥" when some
// model had no price, and nothing when none was priced (unknown, never $0).
func TestFiguresShowTheCost(t *testing.T) {
	base := dagNode{tokens: 221, toolCalls: 2, durationMs: 9.07}
	require.Equal(t, "221 tok · 2 tool calls · 9 ms", figures(base))
	priced := base
	priced.costUSD = 0.000314
	require.Equal(t, "221 tok · 2 tool calls · 9 ms · $0.000314", figures(priced))
	partly := priced
	partly.unpriced = 1
	require.Equal(t, "221 tok · 2 tool calls · 9 ms · ≥ $0.000314", figures(partly))
	unpriced := base
	unpriced.unpriced = 1
	require.Equal(t, figures(base), figures(unpriced))
	require.Equal(t, "0.00003142", formatUSD(0.0000314159))
	require.Equal(t, "12.35", formatUSD(12.3456))
}
