// Package handoffprocessortest holds what measures the handoff processor from outside it:
// the in-process retained-memory measurement that cmd/loadtest and the e2e load test give
// internal/loadtest (Options.Retained), since no package under internal/ imports a component.
package handoffprocessortest

import (
	"context"
	"math/rand/v2"
	"runtime"
	"time"

	"go.opentelemetry.io/collector/component/componenttest"
	"go.opentelemetry.io/collector/consumer/consumertest"
	"go.opentelemetry.io/collector/pdata/ptrace/ptraceotlp"
	"go.opentelemetry.io/collector/processor/processortest"

	"github.com/otelcol-handoff/otelcol-handoff/handoffprocessor"
	"github.com/otelcol-handoff/otelcol-handoff/internal/workload"
)

// Retained measures, in this process, the heap the handoff processor holds per buffered
// span of the workload as the OTLP receiver decodes it (every trace of it buffered at
// once, the quiet period never ending during the measurement), and the workload's OTLP
// protobuf size per span; with the given buffer_encoding ("" = the default).
func Retained(w *workload.Workload, bufferEncoding string) (perSpan, protoPerSpan float64, err error) {
	f := handoffprocessor.NewFactory()
	cfg := f.CreateDefaultConfig().(*handoffprocessor.Config)
	cfg.QuietPeriod, cfg.MaxWait, cfg.NumTraces = time.Hour, time.Hour, 10*len(w.Templates)
	if bufferEncoding != "" {
		cfg.BufferEncoding = bufferEncoding
	}
	p, err := f.CreateTraces(context.Background(), processortest.NewNopSettings(f.Type()), cfg, consumertest.NewNop())
	if err != nil {
		return 0, 0, err
	}
	if err := p.Start(context.Background(), componenttest.NewNopHost()); err != nil {
		return 0, 0, err
	}
	// Each trace as the OTLP receiver hands it over: decoded from its protobuf request.
	rng := rand.New(rand.NewPCG(3, 4))
	bodies := make([][]byte, len(w.Templates))
	for i := range w.Templates {
		if bodies[i], err = ptraceotlp.NewExportRequestFromTraces(w.Trace(i, rng, 1)[0]).MarshalProto(); err != nil {
			return 0, 0, err
		}
	}
	var consumeErr error
	grown := workload.HeapGrowth(func() {
		for _, body := range bodies {
			req := ptraceotlp.NewExportRequest()
			err := req.UnmarshalProto(body)
			if err == nil {
				err = p.ConsumeTraces(context.Background(), req.Traces())
			}
			if err != nil && consumeErr == nil {
				consumeErr = err
			}
		}
	})
	// The request bodies stay live until here, as the receiver's are while it decodes:
	// otherwise the collection inside HeapGrowth frees them and subtracts their size
	// from what the processor holds.
	runtime.KeepAlive(bodies)
	if err := p.Shutdown(context.Background()); err != nil && consumeErr == nil {
		consumeErr = err
	}
	return float64(grown) / float64(w.Spans), w.ProtoBytesPerSpan(), consumeErr
}
