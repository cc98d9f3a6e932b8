package assertionexporter

import (
	"context"
	"testing"

	"github.com/stretchr/testify/require"
	"go.opentelemetry.io/collector/component/componenttest"
	"go.opentelemetry.io/collector/processor/processortest"
	"go.uber.org/zap/zapcore"

	"github.com/otelcol-handoff/otelcol-handoff/handoffprocessor"
	"github.com/otelcol-handoff/otelcol-handoff/internal/agentgraph"
	"github.com/otelcol-handoff/otelcol-handoff/internal/judge/judgetest"
	"github.com/otelcol-handoff/otelcol-handoff/internal/rules"
)

// throughProcessor sends the Strands capture through a handoff processor with chains into
// exp, twice (two traces' worth of calls: the second keeps the log to one line).
func throughProcessor(t *testing.T, exp *assertionExporter, chains agentgraph.Chains) {
	t.Helper()
	runProcessor(t, exp, func(c *handoffprocessor.Config) { c.Chains = chains }, "strands-agent-tool", "strands-ok")
}

// runProcessor sends each capture, one trace at a time, through a handoff processor
// configured by edit into exp, then shuts both down.
func runProcessor(t *testing.T, exp *assertionExporter, edit func(*handoffprocessor.Config), captures ...string) {
	t.Helper()
	pf := handoffprocessor.NewFactory()
	pcfg := pf.CreateDefaultConfig().(*handoffprocessor.Config)
	edit(pcfg)
	ctx := context.Background()
	proc, err := pf.CreateTraces(ctx, processortest.NewNopSettings(pf.Type()), pcfg, exp)
	require.NoError(t, err)
	require.NoError(t, proc.Start(ctx, componenttest.NewNopHost()))
	for _, c := range captures {
		require.NoError(t, proc.ConsumeTraces(ctx, readCapture(t, c)))
		require.NoError(t, proc.(handoffprocessor.EndOfInput).EndOfInput(ctx))
	}
	require.NoError(t, proc.Shutdown(ctx))
	require.NoError(t, exp.Drain(ctx))
	require.NoError(t, exp.Shutdown(ctx))
}

// customInput is a chain override: the default input chain behind a key of our own.
func customInput() agentgraph.Chains {
	return agentgraph.Chains{Input: append(agentgraph.Chain{"my.app.input"}, agentgraph.DefaultChains().Input...)}
}

// TestSameChainsReuseTheProcessorsGraph: with the same chains in the processor and the
// exporter (here both set, and both left to the defaults) the processor's graph of every
// trace is judged as it is: the exporter builds none.
func TestSameChainsReuseTheProcessorsGraph(t *testing.T) {
	for name, chains := range map[string]agentgraph.Chains{"defaults": {}, "set in both": customInput()} {
		t.Run(name, func(t *testing.T) {
			srv := judgetest.New(t, judgetest.Always(judgetest.Pass))
			exp, _, logs, out := newRequiringExporter(t, srv.URL, func(c *Config) { c.Chains = chains })
			throughProcessor(t, exp, chains)
			require.Zero(t, exp.built.Load(), "the processor's graphs were reused")
			results := (&harness{out: out}).results(t)
			require.Len(t, results, 6)
			for _, r := range results {
				require.NotEqual(t, rules.Error, r.Outcome, r.Step+": "+r.Message)
			}
			require.Empty(t, logs.FilterLevelExact(zapcore.ErrorLevel).All())
		})
	}
}

// TestDefaultChainsWrittenOutReuse: an exporter that writes the default chains out builds
// the same graph as a processor that leaves them empty, so it reuses the processor's.
func TestDefaultChainsWrittenOutReuse(t *testing.T) {
	srv := judgetest.New(t, judgetest.Always(judgetest.Pass))
	exp, _, logs, _ := newRequiringExporter(t, srv.URL, func(c *Config) { c.Chains = agentgraph.DefaultChains() })
	throughProcessor(t, exp, agentgraph.Chains{})
	require.Zero(t, exp.built.Load())
	require.Empty(t, logs.FilterLevelExact(zapcore.ErrorLevel).All())
}

// TestChainsDifferFromTheProcessorsAreErrors: an exporter with other chains than the
// processor it reads from would judge another DAG; every result of every trace (the judged
// one too: the judge is not asked) is an error naming the chains that differ and the fix,
// counted as outcome=error, with one Error line for all.
func TestChainsDifferFromTheProcessorsAreErrors(t *testing.T) {
	srv := judgetest.New(t, judgetest.Always(judgetest.Pass))
	exp, tt, logs, out := newRequiringExporter(t, srv.URL, func(c *Config) { c.Chains = customInput() })
	throughProcessor(t, exp, agentgraph.Chains{})
	require.Zero(t, srv.Count(), "nothing is sent to the judge")

	results := (&harness{out: out}).results(t)
	require.Len(t, results, 6)
	want := "chains differ from the handoff processor's (input): the exporter would judge another graph than the processor built, " +
		"so this trace was not judged; set the same chains in both, or remove them from the exporter"
	for _, r := range results {
		require.Equal(t, rules.Error, r.Outcome, r.Step)
		require.Equal(t, "chains differ", r.Actual)
		require.Equal(t, want, r.Message)
	}
	counts := evaluations(t, tt)
	for _, step := range []string{"ASSERT_AGENT_TOPOLOGY#1", "EXPECT_DELEGATION_TO#2", "EXPECT_HANDOFF_RUBRICS#3.DispatchCorrectness"} {
		require.Equal(t, int64(2), counts[[3]string{"weather", step, "error"}], step)
	}
	errorLines := logs.FilterLevelExact(zapcore.ErrorLevel).All()
	require.Len(t, errorLines, 1)
	require.Contains(t, errorLines[0].Message, "other chains than the handoff processor")
	require.Equal(t, []any{"input"}, errorLines[0].ContextMap()["chains"])
	require.Equal(t, "set the same chains in the handoff processor and this exporter, or remove them from the exporter",
		errorLines[0].ContextMap()["fix"])
}

// TestOldCountingRebuildsWithoutError: count_delegation_calls_as_tool_calls is the
// exporter's own option (the processor has none), so with the same chains the exporter
// builds its own graph of each trace, as documented, and judges it.
func TestOldCountingRebuildsWithoutError(t *testing.T) {
	srv := judgetest.New(t, judgetest.Always(judgetest.Pass))
	exp, _, logs, out := newRequiringExporter(t, srv.URL, func(c *Config) { c.CountDelegationCallsAsToolCalls = true })
	throughProcessor(t, exp, agentgraph.Chains{})
	require.Equal(t, int64(2), exp.built.Load(), "one build per trace")
	for _, r := range (&harness{out: out}).results(t) {
		require.NotEqual(t, rules.Error, r.Outcome, r.Step+": "+r.Message)
	}
	require.Empty(t, logs.FilterLevelExact(zapcore.ErrorLevel).All())
}
