package workload

import (
	"math/rand/v2"
	"testing"

	"github.com/open-telemetry/opentelemetry-collector-contrib/pkg/pdatatest/ptracetest"
	"go.opentelemetry.io/collector/pdata/pcommon"
	"go.opentelemetry.io/collector/pdata/ptrace"
	"go.opentelemetry.io/collector/pdata/ptrace/ptraceotlp"
)

// TestEncodedIsTheTemplates: a request made of encoded parts with their ids patched in
// decodes to the same traces as copying the templates (Trace) and setting the ids, each
// trace with its own id in every span, whole or in parts.
func TestEncodedIsTheTemplates(t *testing.T) {
	w, err := LoadCaptures("../../testdata/traces", 8)
	if err != nil {
		t.Fatal(err)
	}
	a, b := pcommon.TraceID{1, 2, 3}, pcommon.TraceID{4, 5, 6}
	for _, parts := range []int{1, 3} {
		enc, err := w.Encode(parts)
		if err != nil {
			t.Fatal(err)
		}
		for i := range enc {
			j := (i + 1) % len(enc)
			var body []byte
			want := ptrace.NewTraces()
			for _, k := range []struct {
				template int
				id       pcommon.TraceID
			}{{i, a}, {j, b}} {
				for p, td := range w.Trace(k.template, rand.New(rand.NewPCG(1, 2)), parts) {
					body = enc[k.template][p].AppendWithID(body, k.id)
					SetTraceID(td, k.id)
					td.ResourceSpans().MoveAndAppendTo(want.ResourceSpans())
				}
			}
			req := ptraceotlp.NewExportRequest()
			if err := req.UnmarshalProto(body); err != nil {
				t.Fatalf("%d parts, template %d: %v", parts, i, err)
			}
			if err := ptracetest.CompareTraces(want, req.Traces()); err != nil {
				t.Errorf("%d parts, templates %d then %d: %.300s", parts, i, j, err)
			}
		}
	}
}
