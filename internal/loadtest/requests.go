package loadtest

import (
	"bytes"
	"encoding/binary"
	"fmt"
	"math/rand/v2"

	"go.opentelemetry.io/collector/pdata/pcommon"
	"go.opentelemetry.io/collector/pdata/ptrace/ptraceotlp"

	"github.com/otelcol-handoff/otelcol-handoff/internal/workload"
)

// encodedTrace is one workload template encoded once as an OTLP export request, with the
// offsets of its trace id. A sender patches a fresh id in and concatenates a batch of them
// (a request's resource_spans is a repeated field, so concatenated requests are one request):
// the bytes are those of the same template copied and marshaled per request, at a fraction of
// the CPU. The load generator shares the machine with the collector, and copying and
// marshaling every trace cost it about what the collector's own decode costs, a third of the
// two cores at the bare pipeline's saturation.
type encodedTrace struct {
	body  []byte
	idAt  []int
	spans int
}

// encodeTemplates encodes every template of w with a placeholder trace id and finds the id's
// offsets; an error when the placeholder does not appear exactly once per span (it would
// then patch bytes that are not a trace id, or leave a span with the placeholder).
func encodeTemplates(w *workload.Workload) ([]encodedTrace, error) {
	var placeholder pcommon.TraceID
	rng := rand.New(rand.NewPCG(16, 17))
	binary.BigEndian.PutUint64(placeholder[:8], rng.Uint64())
	binary.BigEndian.PutUint64(placeholder[8:], rng.Uint64())
	out := make([]encodedTrace, len(w.Templates))
	for i := range w.Templates {
		td := w.Trace(i, rng, 1)[0]
		workload.SetTraceID(td, placeholder)
		body, err := ptraceotlp.NewExportRequestFromTraces(td).MarshalProto()
		if err != nil {
			return nil, fmt.Errorf("template %d: %w", i, err)
		}
		t := encodedTrace{body: body, spans: td.SpanCount()}
		for at := 0; ; at += len(placeholder) {
			k := bytes.Index(body[at:], placeholder[:])
			if k < 0 {
				break
			}
			at += k
			t.idAt = append(t.idAt, at)
		}
		if len(t.idAt) != t.spans {
			return nil, fmt.Errorf("template %d: its trace id appears %d times in its encoding, it has %d spans", i, len(t.idAt), t.spans)
		}
		out[i] = t
	}
	return out, nil
}

// appendTrace appends t to body with the trace id id in every span.
func appendTrace(body []byte, t *encodedTrace, id pcommon.TraceID) []byte {
	start := len(body)
	body = append(body, t.body...)
	for _, at := range t.idAt {
		copy(body[start+at:], id[:])
	}
	return body
}
