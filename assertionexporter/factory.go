package assertionexporter

import (
	"context"

	"go.opentelemetry.io/collector/component"
	"go.opentelemetry.io/collector/exporter"

	"github.com/otelcol-handoff/otelcol-handoff/assertionexporter/internal/metadata"
	"github.com/otelcol-handoff/otelcol-handoff/internal/gate"
	"github.com/otelcol-handoff/otelcol-handoff/internal/judge"
)

// NewFactory returns the factory of the assertion exporter.
func NewFactory() exporter.Factory {
	return exporter.NewFactory(metadata.Type, createDefaultConfig,
		exporter.WithTraces(createTraces, metadata.TracesStability))
}

func createDefaultConfig() component.Config {
	return &Config{
		LogVerdicts: LogFailures, Judge: judge.DefaultConfig(), Gates: gate.DefaultConfig(),
		EvalTimeout: defaultEvalTimeout, ShutdownTimeout: defaultShutdownTimeout, RequireHandoffProcessor: true,
	}
}

func createTraces(_ context.Context, set exporter.Settings, cfg component.Config) (exporter.Traces, error) {
	return newExporter(set, cfg.(*Config))
}
