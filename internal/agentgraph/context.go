package agentgraph

import (
	"context"
	"hash/fnv"
	"slices"

	"go.opentelemetry.io/collector/pdata/pcommon"
)

// Sharing: the handoff processor builds each released trace's graph anyway; it passes the
// graphs downstream in the context of the ConsumeTraces call that carries the trace, so the
// assertion exporter can skip a second build. The graphs travel with the Fingerprint of the
// options they were built with; a consumer reuses a graph only when its own fingerprint is
// the same and the trace still has the number of spans it had when the graph was made (the
// HANDOFF spans included). A batch processor in between drops the context, so the consumer
// rebuilds.

type graphsKey struct{}

// Fingerprint identifies the options a graph is built with: a hash of the chains (each
// empty chain taken as its default, which Build uses) and the other options that change
// the graph. Options with the same fingerprint build the same graph. It is comparable
// (==), so components compute it once, from their config, and not per trace.
type Fingerprint struct {
	chains uint64
	// countDelegation is Options.CountDelegationCallsAsToolCalls.
	countDelegation bool
	// prices is Options.Prices' fingerprint: a graph priced otherwise has other costs.
	prices uint64
}

// Fingerprint computes the fingerprint of o.
func (o Options) Fingerprint() Fingerprint {
	c := o.Chains.withDefaults()
	h := fnv.New64a()
	for _, f := range c.fields() {
		for _, place := range f.chain {
			_, _ = h.Write([]byte(place))
			_, _ = h.Write([]byte{0}) // ends a place
		}
		_, _ = h.Write([]byte{1}) // ends a chain
	}
	return Fingerprint{chains: h.Sum64(), countDelegation: o.CountDelegationCallsAsToolCalls, prices: o.Prices.Fingerprint()}
}

// SameChains reports whether f and o were computed from the same chains (whatever the
// other options).
func (f Fingerprint) SameChains(o Fingerprint) bool { return f.chains == o.chains }

// SamePrices reports whether f and o were computed from the same prices (the pinned table
// and the same overrides).
func (f Fingerprint) SamePrices(o Fingerprint) bool { return f.prices == o.prices }

// chainField is one chain of Chains with its config key.
type chainField struct {
	key   string
	chain Chain
}

// fields lists every chain of c with its config key, in a fixed order.
func (c Chains) fields() [20]chainField {
	return [20]chainField{
		{"role", c.Role},
		{"agent_name", c.AgentName},
		{"tool_name", c.ToolName},
		{"tool_args", c.ToolArgs},
		{"tool_result", c.ToolResult},
		{"input_tokens", c.InputTokens},
		{"output_tokens", c.OutputTokens},
		{"input", c.Input},
		{"output", c.Output},
		{"allowed_tools", c.AllowedTools},
		{"handoff_source", c.HandoffFrom},
		{"handoff_target", c.HandoffTo},
		{"handoff_reason", c.HandoffReason},
		{"error_type", c.ErrorType},
		{"cost", c.Cost},
		{"response_model", c.ResponseModel},
		{"request_model", c.RequestModel},
		{"provider", c.Provider},
		{"cache_read_tokens", c.CacheReadTokens},
		{"cache_write_tokens", c.CacheWriteTokens},
	}
}

// DifferingChains returns the config keys of the chains that a and b set differently (an
// empty chain taken as its default), in config order.
func DifferingChains(a, b Chains) []string {
	fa, fb := a.withDefaults().fields(), b.withDefaults().fields()
	var out []string
	for i := range fa {
		if !slices.Equal(fa[i].chain, fb[i].chain) {
			out = append(out, fa[i].key)
		}
	}
	return out
}

// Shared is a graph as passed downstream, with what the handoff processor knows of its
// trace's spans: none of them is marked late (AttrLateSpan marks only spans forwarded
// outside a trace), and the trace is marked incomplete (AttrTraceComplete=false on its root
// span) exactly when Incomplete is set. A consumer reads that instead of the markers
// (BatchTraces) when the entries account for every span of the batch.
type Shared struct {
	Graph *Graph
	// Spans is how many spans of the trace left with it (HANDOFF spans included).
	Spans int
	// Incomplete: the processor released the trace before it was complete and marked it
	// so (Graph.MarkIncomplete).
	Incomplete bool
}

// sharedGraphs is what rides in the context: the graphs of one ConsumeTraces call, all
// built with opts, whose fingerprint is fp.
type sharedGraphs struct {
	opts   Options
	fp     Fingerprint
	graphs map[pcommon.TraceID]Shared
}

// ContextWithGraphs attaches graphs, built with opts, to ctx; fp is opts.Fingerprint(),
// which the caller computes once.
func ContextWithGraphs(ctx context.Context, opts Options, fp Fingerprint, graphs map[pcommon.TraceID]Shared) context.Context {
	return context.WithValue(ctx, graphsKey{}, &sharedGraphs{opts: opts, fp: fp, graphs: graphs})
}

// sharedIn returns the graphs passed in ctx (nil: none).
func sharedIn(ctx context.Context) *sharedGraphs {
	s, _ := ctx.Value(graphsKey{}).(*sharedGraphs)
	return s
}

// SharedGraph returns the graph of a trace passed in ctx, if it was built with options of
// fingerprint fp from a trace of spans spans.
func SharedGraph(ctx context.Context, id pcommon.TraceID, fp Fingerprint, spans int) *Graph {
	s := sharedIn(ctx)
	if s == nil || s.fp != fp {
		return nil
	}
	sh, ok := s.graphs[id]
	if !ok || sh.Spans != spans {
		return nil
	}
	return sh.Graph
}

// SharedOptions returns the options the graphs passed in ctx were built with and their
// fingerprint (ok false when ctx carries none).
func SharedOptions(ctx context.Context) (opts Options, fp Fingerprint, ok bool) {
	s := sharedIn(ctx)
	if s == nil {
		return Options{}, Fingerprint{}, false
	}
	return s.opts, s.fp, true
}
