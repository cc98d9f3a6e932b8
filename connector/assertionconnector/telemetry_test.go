package assertionconnector

import (
	"context"
	"slices"
	"sort"
	"testing"

	"github.com/stretchr/testify/require"
	"go.opentelemetry.io/collector/component/componenttest"
	"go.opentelemetry.io/collector/consumer/consumertest"
	"go.opentelemetry.io/otel/attribute"
	"go.opentelemetry.io/otel/metric"
	"go.opentelemetry.io/otel/sdk/metric/metricdata"

	"github.com/otelcol-handoff/otelcol-handoff/connector/assertionconnector/internal/metadatatest"
)

// injectingMeterProvider injects scope attributes into every meter and drops them on
// request, as the collector's meter provider does behind telemetry.newPipelineTelemetry
// (service/internal/componentattribute, v0.161.0).
type injectingMeterProvider struct {
	metric.MeterProvider
	attrs []attribute.KeyValue
}

func (p injectingMeterProvider) Meter(name string, opts ...metric.MeterOption) metric.Meter {
	conf := metric.NewMeterConfig(opts...)
	own := conf.InstrumentationAttributes()
	attrs := append(slices.Clone(p.attrs), own.ToSlice()...)
	return p.MeterProvider.Meter(name, append(opts, metric.WithInstrumentationAttributes(attrs...))...)
}

func (p injectingMeterProvider) DropInjectedAttributes(dropped ...string) metric.MeterProvider {
	return injectingMeterProvider{MeterProvider: p.MeterProvider, attrs: slices.DeleteFunc(slices.Clone(p.attrs), func(kv attribute.KeyValue) bool {
		return slices.Contains(dropped, string(kv.Key))
	})}
}

// TestSharedEngineScopeHasNoOutputSignal: the collector gives each output instance of the
// connector its own settings, injecting otelcol.signal.output; the instances share one
// engine, so its meters (the engine's and the connector's own) carry the component's
// attributes without the output of whichever instance came first.
func TestSharedEngineScopeHasNoOutputSignal(t *testing.T) {
	tt := componenttest.NewTelemetry()
	t.Cleanup(func() { require.NoError(t, tt.Shutdown(context.Background())) })
	cfg := weatherConfig(t)
	cfg.Assertions.RequireHandoffProcessor = false
	f := NewFactory()
	ctx := context.Background()
	settings := func(output string) injectingMeterProvider {
		return injectingMeterProvider{MeterProvider: tt.NewTelemetrySettings().MeterProvider, attrs: []attribute.KeyValue{
			attribute.String("otelcol.component.id", "assertion"),
			attribute.String("otelcol.component.kind", "connector"),
			attribute.String("otelcol.signal", "traces"),
			attribute.String(signalOutputKey, output),
		}}
	}
	set := metadatatest.NewSettings(tt)
	set.MeterProvider = settings("logs")
	lc, err := f.CreateTracesToLogs(ctx, set, cfg, consumertest.NewNop())
	require.NoError(t, err)
	set.MeterProvider = settings("metrics")
	mc, err := f.CreateTracesToMetrics(ctx, set, cfg, consumertest.NewNop())
	require.NoError(t, err)
	require.NoError(t, lc.Start(ctx, componenttest.NewNopHost()))
	require.NoError(t, mc.Start(ctx, componenttest.NewNopHost()))
	t.Cleanup(func() {
		require.NoError(t, lc.Shutdown(ctx))
		require.NoError(t, mc.Shutdown(ctx))
	})

	var rm metricdata.ResourceMetrics
	require.NoError(t, tt.Reader.Collect(ctx, &rm))
	scopes := map[string][]string{}
	for _, sm := range rm.ScopeMetrics {
		var keys []string
		for _, kv := range sm.Scope.Attributes.ToSlice() {
			keys = append(keys, string(kv.Key)+"="+kv.Value.String())
		}
		sort.Strings(keys)
		require.NotEmpty(t, sm.Metrics, sm.Scope.Name)
		require.NotContains(t, scopes, sm.Scope.Name, "one scope per meter name: %v", rm.ScopeMetrics)
		scopes[sm.Scope.Name] = keys
	}
	want := []string{"otelcol.component.id=assertion", "otelcol.component.kind=connector", "otelcol.signal=traces"}
	require.Equal(t, map[string][]string{
		"github.com/otelcol-handoff/otelcol-handoff/assertionexporter":            want,
		"github.com/otelcol-handoff/otelcol-handoff/connector/assertionconnector": want,
	}, scopes)
}
