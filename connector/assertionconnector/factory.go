package assertionconnector

import (
	"context"

	"go.opentelemetry.io/collector/component"
	"go.opentelemetry.io/collector/connector"
	"go.opentelemetry.io/collector/consumer"

	"github.com/otelcol-handoff/otelcol-handoff/assertionexporter"
	"github.com/otelcol-handoff/otelcol-handoff/connector/assertionconnector/internal/metadata"
)

// NewFactory returns the factory of the assertion connector: traces to traces (verdicts
// stamped), traces to logs (gen_ai.evaluation.result records), traces to metrics.
func NewFactory() connector.Factory {
	return connector.NewFactory(metadata.Type, createDefaultConfig,
		connector.WithTracesToTraces(createTracesToTraces, metadata.TracesToTracesStability),
		connector.WithTracesToLogs(createTracesToLogs, metadata.TracesToLogsStability),
		connector.WithTracesToMetrics(createTracesToMetrics, metadata.TracesToMetricsStability))
}

// createDefaultConfig is the exporter's default assertion config, with verdicts not
// written to the collector's own log (the connector's logs output carries them), plus the
// connector's keys.
func createDefaultConfig() component.Config {
	assertions := assertionexporter.NewFactory().CreateDefaultConfig().(*assertionexporter.Config)
	assertions.LogVerdicts = assertionexporter.LogNone
	return &Config{
		Assertions:           *assertions,
		MetricsFlushInterval: defaultMetricsFlushInterval,
		MaxAgents:            defaultMaxAgents,
	}
}

func createTracesToTraces(_ context.Context, set connector.Settings, cfg component.Config, next consumer.Traces) (connector.Traces, error) {
	s, err := sharedFor(set, cfg.(*Config))
	if err != nil {
		return nil, err
	}
	return s.attach(&output{traces: next}), nil
}

func createTracesToLogs(_ context.Context, set connector.Settings, cfg component.Config, next consumer.Logs) (connector.Traces, error) {
	s, err := sharedFor(set, cfg.(*Config))
	if err != nil {
		return nil, err
	}
	return s.attach(&output{logs: next}), nil
}

func createTracesToMetrics(_ context.Context, set connector.Settings, cfg component.Config, next consumer.Metrics) (connector.Traces, error) {
	s, err := sharedFor(set, cfg.(*Config))
	if err != nil {
		return nil, err
	}
	return s.attach(&output{metrics: next}), nil
}
