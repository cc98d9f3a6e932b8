package expect

import (
	"fmt"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/require"
	"go.opentelemetry.io/collector/pdata/ptrace"

	"github.com/otelcol-handoff/otelcol-handoff/internal/agentgraph"
	"github.com/otelcol-handoff/otelcol-handoff/internal/spanfile"
)

// bundledTraces reads every capture of testdata/traces and trace of testdata/corpus,
// by path.
func bundledTraces(t *testing.T) map[string]ptrace.Traces {
	paths, err := filepath.Glob(filepath.Join("..", "..", "..", "testdata", "*", "*.json"))
	require.NoError(t, err)
	out := map[string]ptrace.Traces{}
	for _, p := range paths {
		td := ptrace.NewTraces()
		_, err := spanfile.Read(p, func(part ptrace.Traces) error {
			part.ResourceSpans().MoveAndAppendTo(td.ResourceSpans())
			return nil
		})
		require.NoError(t, err, p)
		out[p] = td
	}
	require.Greater(t, len(out), 20)
	return out
}

// TestShownOutputFromPreview: expected_result's actual text, quoting the output from
// agentgraph.ContentPreview (decoded up to the bytes the quote keeps), is byte for byte
// the text quoting the whole decoded value, for every run of every bundled trace; and the
// value an expression reads (TraceEval.output) is contentValue's, decoded once.
func TestShownOutputFromPreview(t *testing.T) {
	outputs, cut := 0, 0
	for f, td := range bundledTraces(t) {
		for _, g := range agentgraph.BuildAll(td, agentgraph.Options{}) {
			te := NewTraceEval(g)
			for _, inv := range g.Invocations {
				facts := te.factsOf(inv)
				require.Empty(t, facts.shown, "quoted only when read")
				shown := te.shown(inv)
				if !facts.outputFound {
					require.Contains(t, shown, "output not captured")
					continue
				}
				outputs++
				full := contentValue(inv.Output.Text, assistantRoles)
				want := fmt.Sprintf("status %q, error %s, output %s", facts.status, show(facts.err), show(full))
				require.Equal(t, want, shown, "%s, span %s", f, inv.Span.ID)
				require.Equal(t, shown, te.factsOf(inv).shown, "kept with the facts")
				require.Nil(t, facts.output, "not decoded before an expression reads it")
				require.Equal(t, full, te.output(inv), "%s, span %s", f, inv.Span.ID)
				require.True(t, te.factsOf(inv).outputDecoded)
				if len(inv.Output.Text) > 2*maxShown {
					cut++
				}
			}
		}
	}
	require.Greater(t, outputs, 50, "the bundled traces capture outputs")
	require.Greater(t, cut, 10, "outputs longer than the quote keeps")
}
