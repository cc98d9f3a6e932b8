package assertionconnector

import (
	"testing"

	"github.com/otelcol-handoff/otelcol-handoff/internal/pricing"
)

// TestPricesDifferFromTheProcessorsAreErrors: like other chains, other prices than the
// handoff processor's in front (here the processor's defaults, the connector's an override)
// make every result an error naming the fix.
func TestPricesDifferFromTheProcessorsAreErrors(t *testing.T) {
	cfg := weatherConfig(t)
	in, out := 1.0, 4.0
	cfg.Assertions.Pricing = pricing.Config{Models: []pricing.ModelPrice{{Model: "mock-weather-1", Input: &in, Output: &out}}}
	requireAllRefused(t, cfg, "pricing differs from the handoff processor's")
}
