package handoffprocessor

import (
	"context"
	"os"
	"sort"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"go.opentelemetry.io/collector/component/componenttest"
	"go.opentelemetry.io/collector/consumer/consumertest"
	"go.opentelemetry.io/otel/sdk/metric/metricdata"
	"go.yaml.in/yaml/v3"

	"github.com/otelcol-handoff/otelcol-handoff/handoffprocessor/internal/metadatatest"
)

// TestEveryCounterHasASeriesAtStart: Start records every counter (and the gauge) of
// metadata.yaml at 0, so a dashboard or an "alert on any" rule (undecodable_spans) sees
// the series from the first scrape. Histograms have no zero value to record.
func TestEveryCounterHasASeriesAtStart(t *testing.T) {
	b, err := os.ReadFile("metadata.yaml")
	require.NoError(t, err)
	var md struct {
		Telemetry struct {
			Metrics map[string]struct {
				Sum   *struct{} `yaml:"sum"`
				Gauge *struct{} `yaml:"gauge"`
			} `yaml:"metrics"`
		} `yaml:"telemetry"`
	}
	require.NoError(t, yaml.Unmarshal(b, &md))
	var names []string
	for name, m := range md.Telemetry.Metrics {
		if m.Sum != nil || m.Gauge != nil {
			names = append(names, name)
		}
	}
	sort.Strings(names)
	require.Contains(t, names, "processor_handoff_undecodable_spans")

	tt := componenttest.NewTelemetry()
	t.Cleanup(func() { require.NoError(t, tt.Shutdown(context.Background())) })
	p, err := newProcessor(metadatatest.NewSettings(tt), testConfig(), consumertest.NewNop())
	require.NoError(t, err)
	require.NoError(t, p.Start(context.Background(), componenttest.NewNopHost()))
	t.Cleanup(func() { require.NoError(t, p.Shutdown(context.Background())) })

	for _, name := range names {
		m, err := tt.GetMetric("otelcol_" + name)
		if !assert.NoError(t, err, "%s has no series at start", name) {
			continue
		}
		var points int
		switch d := m.Data.(type) {
		case metricdata.Sum[int64]:
			points = len(d.DataPoints)
		case metricdata.Gauge[int64]:
			points = len(d.DataPoints)
		default:
			t.Errorf("%s: unexpected data %T", name, m.Data)
		}
		require.Positive(t, points, "%s has no data point at start", name)
	}
}
