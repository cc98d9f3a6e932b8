package assertionconnector

import (
	"go.opentelemetry.io/collector/component"
	"go.opentelemetry.io/otel/metric"
	"go.opentelemetry.io/otel/trace"
	"go.uber.org/zap"
	"go.uber.org/zap/zapcore"
)

// signalOutputKey is the attribute the collector (v0.161.0) injects into a connector's
// telemetry, as instrumentation scope attributes of its meters behind the
// telemetry.newPipelineTelemetry gate (and as logger and tracer attributes): the output
// signal of the instance. The connector's instances of one config share one engine, created
// with the first instance's settings, so the key would name that instance's output on series
// that count for every output.
const signalOutputKey = "otelcol.signal.output"

// The collector's attribute-injecting logger core, tracer and meter providers drop injected
// attributes on request; the collector's own go.opentelemetry.io/collector/internal/telemetry
// package, which the OTLP receiver uses the same way for otelcol.signal, is internal to it.
type (
	injectorCore           interface{ DropInjectedAttributes(...string) zapcore.Core }
	injectorTracerProvider interface {
		DropInjectedAttributes(...string) trace.TracerProvider
	}
	injectorMeterProvider interface {
		DropInjectedAttributes(...string) metric.MeterProvider
	}
)

// dropInjectedAttributes returns ts without the injected attributes named; providers that
// inject nothing are kept as they are.
func dropInjectedAttributes(ts component.TelemetrySettings, attrs ...string) component.TelemetrySettings {
	if ts.Logger != nil {
		ts.Logger = ts.Logger.WithOptions(zap.WrapCore(func(c zapcore.Core) zapcore.Core {
			if ic, ok := c.(injectorCore); ok {
				return ic.DropInjectedAttributes(attrs...)
			}
			return c
		}))
	}
	if itp, ok := ts.TracerProvider.(injectorTracerProvider); ok {
		ts.TracerProvider = itp.DropInjectedAttributes(attrs...)
	}
	if imp, ok := ts.MeterProvider.(injectorMeterProvider); ok {
		ts.MeterProvider = imp.DropInjectedAttributes(attrs...)
	}
	return ts
}
