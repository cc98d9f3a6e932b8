package workload

import (
	"bytes"
	"encoding/binary"
	"fmt"
	"math/rand/v2"

	"go.opentelemetry.io/collector/pdata/pcommon"
	"go.opentelemetry.io/collector/pdata/ptrace/ptraceotlp"
)

// Encoded is one trace of the workload (or one part of it) encoded once as an OTLP export
// request, with the offsets of its trace id, so that a copy with a fresh id costs a copy
// of bytes. A request's resource_spans is a repeated field: Encoded bodies appended one
// after another are one request.
type Encoded struct {
	Body  []byte
	Spans int
	idAt  []int
}

// Encode is every template of w split into parts (as Trace splits it), each part encoded
// with a placeholder trace id whose offsets it records; an error when the placeholder does
// not appear exactly once per span (a patch would then write into bytes that are not a
// trace id, or leave a span with the placeholder).
func (w *Workload) Encode(parts int) ([][]Encoded, error) {
	rng := rand.New(rand.NewPCG(16, 17))
	placeholder := NewTraceID(rng)
	out := make([][]Encoded, len(w.Templates))
	for i := range w.Templates {
		for p, td := range w.Trace(i, rng, parts) {
			SetTraceID(td, placeholder)
			body, err := ptraceotlp.NewExportRequestFromTraces(td).MarshalProto()
			if err != nil {
				return nil, fmt.Errorf("template %d, part %d: %w", i, p, err)
			}
			e := Encoded{Body: body, Spans: td.SpanCount()}
			for at := 0; ; at += len(placeholder) {
				k := bytes.Index(body[at:], placeholder[:])
				if k < 0 {
					break
				}
				at += k
				e.idAt = append(e.idAt, at)
			}
			if len(e.idAt) != e.Spans {
				return nil, fmt.Errorf("template %d, part %d: its trace id appears %d times in its encoding, it has %d spans", i, p, len(e.idAt), e.Spans)
			}
			out[i] = append(out[i], e)
		}
	}
	return out, nil
}

// AppendWithID appends e's body to body with the trace id id in every span.
func (e *Encoded) AppendWithID(body []byte, id pcommon.TraceID) []byte {
	start := len(body)
	body = append(body, e.Body...)
	for _, at := range e.idAt {
		copy(body[start+at:], id[:])
	}
	return body
}

// NewTraceID is a random trace id from rng.
func NewTraceID(rng *rand.Rand) pcommon.TraceID {
	var id pcommon.TraceID
	binary.BigEndian.PutUint64(id[:8], rng.Uint64())
	binary.BigEndian.PutUint64(id[8:], rng.Uint64())
	return id
}
