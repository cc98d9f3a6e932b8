package assertionexporter

import (
	"context"
	"testing"

	"github.com/stretchr/testify/require"
	"go.opentelemetry.io/collector/component"
	"go.opentelemetry.io/collector/component/componenttest"
	"go.opentelemetry.io/otel/attribute"
	"go.opentelemetry.io/otel/sdk/metric/metricdata"
	"go.opentelemetry.io/otel/sdk/metric/metricdata/metricdatatest"

	"github.com/otelcol-handoff/otelcol-handoff/assertionexporter/internal/metadata"
	"github.com/otelcol-handoff/otelcol-handoff/assertionexporter/internal/metadatatest"
	"github.com/otelcol-handoff/otelcol-handoff/internal/rules"
)

// TestTwoInstancesNeverCollide: two assertion exporters with the same case names, in one
// collector (one meter provider), keep separate series: every data point carries
// exporter = the component id.
func TestTwoInstancesNeverCollide(t *testing.T) {
	tt := componenttest.NewTelemetry()
	t.Cleanup(func() { require.NoError(t, tt.Shutdown(context.Background())) })
	ctx := context.Background()
	consume := map[string]int{"assertion/a": 1, "assertion/b": 2}
	for _, name := range []string{"a", "b"} {
		set := metadatatest.NewSettings(tt)
		set.ID = component.NewIDWithName(metadata.Type, name)
		cfg := withTimeouts(&Config{LogVerdicts: LogNone, Cases: weatherCases()})
		exp, err := newExporter(set, cfg)
		require.NoError(t, err)
		require.NoError(t, exp.Start(ctx, componenttest.NewNopHost()))
		for range consume[set.ID.String()] {
			require.NoError(t, exp.ConsumeTraces(ctx, readCapture(t, "google-adk-ok")))
		}
		require.NoError(t, exp.Shutdown(ctx))
	}
	id := func(name string, kvs ...attribute.KeyValue) attribute.Set {
		return attribute.NewSet(append(kvs, attribute.String(ExporterAttr, name))...)
	}
	metadatatest.AssertEqualExporterAssertionTracesEvaluated(t, tt, []metricdata.DataPoint[int64]{
		{Value: 1, Attributes: id("assertion/a", attribute.Bool("complete", true))},
		{Value: 0, Attributes: id("assertion/a", attribute.Bool("complete", false))},
		{Value: 2, Attributes: id("assertion/b", attribute.Bool("complete", true))},
		{Value: 0, Attributes: id("assertion/b", attribute.Bool("complete", false))},
	}, metricdatatest.IgnoreTimestamp())

	got, err := tt.GetMetric("otelcol_exporter_assertion_evaluations")
	require.NoError(t, err)
	passes := map[string]int64{}
	for _, dp := range got.Data.(metricdata.Sum[int64]).DataPoints {
		c, _ := dp.Attributes.Value("case")
		s, _ := dp.Attributes.Value("step")
		o, _ := dp.Attributes.Value("outcome")
		e, _ := dp.Attributes.Value(ExporterAttr)
		if c.AsString() == "ok" && s.AsString() == "ASSERT_AGENT_TOPOLOGY#1" && o.AsString() == string(rules.Pass) {
			passes[e.AsString()] = dp.Value
		}
	}
	require.Equal(t, map[string]int64{"assertion/a": 1, "assertion/b": 2}, passes)
}
