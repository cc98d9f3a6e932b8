package assertionconnector

import (
	"testing"

	"github.com/stretchr/testify/require"
	"go.opentelemetry.io/collector/pdata/plog"

	"github.com/otelcol-handoff/otelcol-handoff/internal/pricing"
)

// TestPricesDifferFromTheProcessorsAreErrors: like other chains, other prices than the
// handoff processor's in front (here the processor's defaults, the connector's an override)
// make every result an error naming the fix.
func TestPricesDifferFromTheProcessorsAreErrors(t *testing.T) {
	cfg := weatherConfig(t)
	in, out := 1.0, 4.0
	cfg.Assertions.Pricing = pricing.Config{Models: []pricing.ModelPrice{{Model: "mock-weather-1", Input: &in, Output: &out}}}
	h := newHarness(t, cfg)
	td := released(t, "google-adk-ok.json", "strands-ok.json")
	h.consumeIn(t, withProcessorGraphs(td), td)
	h.shutdown(t)

	n := 0
	for _, ld := range h.logs.AllLogs() {
		forEachRecord(ld, func(lr plog.LogRecord) {
			n++
			label, _ := lr.Attributes().Get(AttrScoreLabel)
			require.Equal(t, "error", label.Str())
			expl, _ := lr.Attributes().Get(AttrExplanation)
			require.Contains(t, expl.Str(), "pricing differs from the handoff processor's")
		})
	}
	require.Equal(t, 12, n, "6 results per trace, 2 traces")
}
