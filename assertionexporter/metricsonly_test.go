package assertionexporter

import (
	"context"
	"os"
	"path/filepath"
	"sync"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"go.opentelemetry.io/collector/component/componenttest"
	"go.opentelemetry.io/collector/confmap"
	"go.opentelemetry.io/collector/pdata/ptrace"
	"go.opentelemetry.io/otel/sdk/metric/metricdata"
	"go.opentelemetry.io/otel/sdk/metric/metricdata/metricdatatest"
	"go.yaml.in/yaml/v3"

	"github.com/otelcol-handoff/otelcol-handoff/assertionexporter/internal/metadatatest"
)

// TestMetricsOnlySameMetrics: an exporter whose metrics are its only output
// (log_verdicts: none, no report) evaluates for the outcomes alone, and records the same
// evaluation, failure and traces-evaluated series, value for value, as one that logs every
// result and writes the JSON lines, on every capture of testdata/traces with rules that
// pass and rules that fail (internal/rules/testdata/outcomes.yaml), from four callers at
// once.
func TestMetricsOnlySameMetrics(t *testing.T) {
	raw, err := os.ReadFile(filepath.Join("..", "internal", "rules", "testdata", "outcomes.yaml"))
	require.NoError(t, err)
	var spec map[string]any
	require.NoError(t, yaml.Unmarshal(raw, &spec))
	paths, err := filepath.Glob(filepath.Join("..", "testdata", "traces", "*.json"))
	require.NoError(t, err)
	require.NotEmpty(t, paths)

	run := func(logVerdicts, jsonl string, parallel int) (*assertionExporter, *componenttest.Telemetry) {
		cfg := createDefaultConfig().(*Config)
		require.NoError(t, confmap.NewFromStringMap(map[string]any{"log_verdicts": logVerdicts, "cases": spec["cases"]}).Unmarshal(cfg))
		cfg.RequireHandoffProcessor = false // whole captured traces, without the processor
		cfg.Reports.JSONLines = jsonl
		require.NoError(t, cfg.Validate())
		tt := componenttest.NewTelemetry()
		t.Cleanup(func() { require.NoError(t, tt.Shutdown(context.Background())) })
		exp, err := newExporter(metadatatest.NewSettings(tt), cfg)
		require.NoError(t, err)
		require.NoError(t, exp.Start(context.Background(), componenttest.NewNopHost()))
		var batches []ptrace.Traces
		for _, p := range paths {
			b, err := os.ReadFile(p)
			require.NoError(t, err)
			td, err := (&ptrace.JSONUnmarshaler{}).UnmarshalTraces(b)
			require.NoError(t, err, p)
			td.MarkReadOnly()
			batches = append(batches, td)
		}
		// parallel callers, each with every capture (the metrics-only exporter reuses its
		// result buffers across traces and callers).
		var wg sync.WaitGroup
		for range parallel {
			wg.Go(func() {
				for _, td := range batches {
					assert.NoError(t, exp.ConsumeTraces(context.Background(), td))
				}
			})
		}
		wg.Wait()
		require.NoError(t, exp.Shutdown(context.Background()))
		return exp, tt
	}
	quiet, quietTT := run("none", "", 4)
	loud, loudTT := run("all", filepath.Join(t.TempDir(), "verdicts.jsonl"), 4)
	require.True(t, quiet.metricsOnly())
	require.False(t, loud.metricsOnly())

	for _, name := range []string{
		"otelcol_exporter_assertion_evaluations",
		"otelcol_exporter_assertion_failures",
		"otelcol_exporter_assertion_traces_evaluated",
	} {
		want, err := loudTT.GetMetric(name)
		require.NoError(t, err, name)
		got, err := quietTT.GetMetric(name)
		require.NoError(t, err, name)
		metricdatatest.AssertEqual(t, want, got, metricdatatest.IgnoreTimestamp())
		if name != "otelcol_exporter_assertion_traces_evaluated" {
			// Not only zeros: the rules passed and failed.
			var total int64
			for _, dp := range got.Data.(metricdata.Sum[int64]).DataPoints {
				total += dp.Value
			}
			require.Positive(t, total, name)
		}
	}
}
