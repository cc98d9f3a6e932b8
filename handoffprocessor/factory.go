package handoffprocessor

import (
	"context"
	"time"

	"go.opentelemetry.io/collector/component"
	"go.opentelemetry.io/collector/consumer"
	"go.opentelemetry.io/collector/processor"

	"github.com/otelcol-handoff/otelcol-handoff/handoffprocessor/internal/metadata"
)

// NewFactory returns the factory of the handoff processor.
func NewFactory() processor.Factory {
	return processor.NewFactory(metadata.Type, createDefaultConfig,
		processor.WithTraces(createTraces, metadata.TracesStability))
}

func createDefaultConfig() component.Config {
	return &Config{
		QuietPeriod:       2 * time.Second,
		MaxWait:           30 * time.Second,
		NumTraces:         10000,
		MaxSpansPerTrace:  10000,
		BufferEncoding:    bufferProto,
		LateSpanCacheSize: 100000,
		LinkCacheSize:     100000,
		Release: ReleaseConfig{
			MaxBatchSpans: 8192,
			// 3 MiB: a downstream OTLP/gRPC receiver rejects messages over 4 MiB by default.
			MaxBatchBytes: 3 << 20,
		},
		// Leaves the exporters most of Kubernetes' default 30 s grace period.
		ShutdownTimeout: 10 * time.Second,
		Content:         ContentConfig{Policy: defaultContentPolicy, MaxBytes: 4096},
	}
}

func createTraces(_ context.Context, set processor.Settings, cfg component.Config, next consumer.Traces) (processor.Traces, error) {
	return newProcessor(set, cfg.(*Config), next)
}
