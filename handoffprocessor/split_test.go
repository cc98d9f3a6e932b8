package handoffprocessor

import (
	"testing"

	"github.com/open-telemetry/opentelemetry-collector-contrib/pkg/pdatatest/ptracetest"
	"github.com/stretchr/testify/require"
	"go.opentelemetry.io/collector/pdata/pcommon"
	"go.opentelemetry.io/collector/pdata/ptrace"

	"github.com/otelcol-handoff/otelcol-handoff/internal/workload"
)

// TestSplitMovesWholeResourcesAndScopes: splitting a batch moving whole resources and
// scopes where they hold one trace gives exactly the fragments of moving every span on its
// own (split without the whole moves), whatever the batch's layout: a resource per trace,
// a scope per trace under one resource, the traces' spans interleaved in one scope, a mix
// of them, with empty scopes and resources. The traces are real captures under distinct
// trace ids.
func TestSplitMovesWholeResourcesAndScopes(t *testing.T) {
	var traces []ptrace.Traces
	for i, name := range []string{adkOK, strandsOK, "strands-agent-tool"} {
		td := loadCapture(t, name)
		workload.SetTraceID(td, pcommon.TraceID{byte(i + 1), 0xaa})
		traces = append(traces, td)
	}
	perResource := func() ptrace.Traces {
		out := ptrace.NewTraces()
		for _, td := range traces {
			for i := 0; i < td.ResourceSpans().Len(); i++ {
				td.ResourceSpans().At(i).CopyTo(out.ResourceSpans().AppendEmpty())
			}
		}
		out.ResourceSpans().AppendEmpty() // a resource without scopes
		out.ResourceSpans().At(0).ScopeSpans().AppendEmpty().Scope().SetName("empty")
		return out
	}
	perScope := func() ptrace.Traces {
		out := ptrace.NewTraces()
		rs := out.ResourceSpans().AppendEmpty()
		traces[0].ResourceSpans().At(0).Resource().CopyTo(rs.Resource())
		rs.SetSchemaUrl("https://opentelemetry.io/schemas/1.26.0")
		for _, td := range traces {
			for i := 0; i < td.ResourceSpans().Len(); i++ {
				sss := td.ResourceSpans().At(i).ScopeSpans()
				for j := 0; j < sss.Len(); j++ {
					sss.At(j).CopyTo(rs.ScopeSpans().AppendEmpty())
				}
			}
		}
		return out
	}
	interleaved := func() ptrace.Traces {
		out := ptrace.NewTraces()
		rs := out.ResourceSpans().AppendEmpty()
		ss := rs.ScopeSpans().AppendEmpty()
		ss.Scope().SetName("mixed")
		var all [][]ptrace.Span
		for _, td := range traces {
			var spans []ptrace.Span
			for i := 0; i < td.ResourceSpans().Len(); i++ {
				sss := td.ResourceSpans().At(i).ScopeSpans()
				for j := 0; j < sss.Len(); j++ {
					for k := 0; k < sss.At(j).Spans().Len(); k++ {
						spans = append(spans, sss.At(j).Spans().At(k))
					}
				}
			}
			all = append(all, spans)
		}
		for k := 0; ; k++ {
			more := false
			for _, spans := range all {
				if k < len(spans) {
					spans[k].CopyTo(ss.Spans().AppendEmpty())
					more = true
				}
			}
			if !more {
				break
			}
		}
		return out
	}
	mixed := func() ptrace.Traces {
		out := perScope()
		interleaved().ResourceSpans().MoveAndAppendTo(out.ResourceSpans())
		perResource().ResourceSpans().MoveAndAppendTo(out.ResourceSpans())
		return out
	}
	for name, layout := range map[string]func() ptrace.Traces{
		"resource per trace": perResource, "scope per trace": perScope, "interleaved": interleaved, "mixed": mixed,
	} {
		t.Run(name, func(t *testing.T) {
			want, got := split(layout(), false), splitByTrace(layout())
			require.Len(t, got, len(want))
			for i := range want {
				require.Equal(t, want[i].id, got[i].id)
				require.Equal(t, want[i].spans, got[i].spans)
				require.Equal(t, want[i].spans, got[i].data.SpanCount())
				require.Equal(t, want[i].hasRoot, got[i].hasRoot)
				require.NoError(t, ptracetest.CompareTraces(want[i].data, got[i].data))
			}
		})
	}
}
