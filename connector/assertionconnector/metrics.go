package assertionconnector

import (
	"context"
	"sort"
	"sync"
	"time"

	"go.opentelemetry.io/collector/pdata/pcommon"
	"go.opentelemetry.io/collector/pdata/pmetric"

	"github.com/otelcol-handoff/otelcol-handoff/assertionexporter"
	"github.com/otelcol-handoff/otelcol-handoff/connector/assertionconnector/internal/metadata"
	"github.com/otelcol-handoff/otelcol-handoff/internal/agentgraph"
	"github.com/otelcol-handoff/otelcol-handoff/internal/rules"
	"github.com/otelcol-handoff/otelcol-handoff/internal/rules/steps"
)

// Metric names, units and bucket boundaries the connector emits (README.md, "Metrics").
const (
	MetricResults         = "handoff.assertion.results"
	MetricFailures        = "handoff.assertion.failures"
	MetricAgentDuration   = "gen_ai.invoke_agent.duration"
	MetricAgentTokens     = "gen_ai.invoke_agent.tokens"
	MetricAgentToolCalls  = "gen_ai.invoke_agent.tool_calls"
	MetricAgentLLMCalls   = "gen_ai.invoke_agent.llm_calls"
	MetricBudgetUse       = "handoff.budget.utilization"
	MetricEdgeTotal       = "traces_service_graph_request_total"
	MetricEdgeFailedTotal = "traces_service_graph_request_failed_total"
	MetricEdgeServerSecs  = "traces_service_graph_request_server_seconds"
)

var (
	// durationBounds are the GenAI semantic conventions' advice for
	// gen_ai.client.operation.duration (seconds).
	durationBounds = []float64{0.01, 0.02, 0.04, 0.08, 0.16, 0.32, 0.64, 1.28, 2.56, 5.12, 10.24, 20.48, 40.96, 81.92}
	// tokenBounds are the GenAI semantic conventions' advice for gen_ai.client.token.usage.
	tokenBounds = []float64{1, 4, 16, 64, 256, 1024, 4096, 16384, 65536, 262144, 1048576, 4194304, 16777216, 67108864}
	callBounds  = []float64{0, 1, 2, 4, 8, 16, 32, 64, 128}
	// budgetBounds put 1 (the limit) on a boundary, so "over budget" is a bucket of its own.
	budgetBounds = []float64{0.1, 0.25, 0.5, 0.75, 0.9, 1, 1.25, 1.5, 2, 5}
	// serviceGraphBounds are contrib servicegraph's default latency buckets (seconds).
	serviceGraphBounds = []float64{0.002, 0.004, 0.006, 0.008, 0.01, 0.05, 0.1, 0.2, 0.4, 0.8, 1, 1.4, 2, 5, 10, 15}
)

// Budget kinds (the budget attribute).
const (
	budgetTokens    = "tokens"
	budgetDuration  = "duration"
	budgetToolCalls = "tool_calls"
)

// exemplar is the last observation of a series: its trace and span.
type exemplar struct {
	trace pcommon.TraceID
	span  pcommon.SpanID
	at    pcommon.Timestamp
	value float64
}

type sumPoint struct {
	value int64
	ex    exemplar
}

type histPoint struct {
	counts     []uint64
	sum        float64
	count      uint64
	minV, maxV float64
	ex         exemplar
}

func (h *histPoint) observe(bounds []float64, v float64, ex exemplar) {
	if h.counts == nil {
		h.counts = make([]uint64, len(bounds)+1)
		h.minV, h.maxV = v, v
	}
	h.counts[sort.SearchFloat64s(bounds, v)]++
	h.sum += v
	h.count++
	h.minV, h.maxV = min(h.minV, v), max(h.maxV, v)
	h.ex = ex
}

type resultKey struct{ caseName, step, outcome string }

// failureKey is a failing result's series: its case, step and failure cluster.
type failureKey struct{ caseName, step, cluster string }

type tokenKey struct{ agent, tokenType string }

type budgetKey struct{ caseName, step, agent, budget string }

type edgeKey struct {
	client, server string
	failed         bool
}

// aggregator holds the cumulative metrics since start. Attribute values are config
// names (case, step, budget agent), fixed sets (outcome, token type, budget), or agent
// names bounded by max_agents.
type aggregator struct {
	mu        sync.Mutex
	start     pcommon.Timestamp
	maxAgents int
	// agents maps each tracked agent name to what the metrics carry: masked by the
	// redaction policy (mask), as the verdict records' texts are.
	agents map[string]string
	mask   func(string) string
	tb     *metadata.TelemetryBuilder
	self   selfAttrs
	cfg    *assertionexporter.Config

	results   map[resultKey]*sumPoint
	failures  map[failureKey]*sumPoint
	duration  map[string]*histPoint
	tokens    map[tokenKey]*histPoint
	toolCalls map[string]*histPoint
	llmCalls  map[string]*histPoint
	budget    map[budgetKey]*histPoint
	edges     map[edgeKey]*sumPoint
	failed    map[edgeKey]*sumPoint
	server    map[edgeKey]*histPoint
}

func newAggregator(cfg *Config, start time.Time, tb *metadata.TelemetryBuilder, self selfAttrs, mask func(string) string) *aggregator {
	return &aggregator{
		start: pcommon.NewTimestampFromTime(start), maxAgents: cfg.MaxAgents, agents: map[string]string{}, mask: mask,
		tb: tb, self: self, cfg: &cfg.Assertions,
		results: map[resultKey]*sumPoint{}, failures: map[failureKey]*sumPoint{}, duration: map[string]*histPoint{}, tokens: map[tokenKey]*histPoint{},
		toolCalls: map[string]*histPoint{}, llmCalls: map[string]*histPoint{}, budget: map[budgetKey]*histPoint{},
		edges: map[edgeKey]*sumPoint{}, failed: map[edgeKey]*sumPoint{}, server: map[edgeKey]*histPoint{},
	}
}

// agentName is name as the metrics carry it (masked), or "other" once max_agents names are
// tracked; fold reports the latter.
func (a *aggregator) agentName(name string) (string, bool) {
	if masked, ok := a.agents[name]; ok {
		return masked, false
	}
	if len(a.agents) < a.maxAgents {
		masked := a.mask(name)
		a.agents[name] = masked
		return masked, false
	}
	return otherAgent, true
}

func seconds(s *agentgraph.Span) (float64, bool) {
	if s == nil || s.DurationUnknown {
		return 0, false
	}
	return time.Duration(s.End() - s.Start()).Seconds(), true
}

func exemplarOf(trace pcommon.TraceID, s *agentgraph.Span, v float64) exemplar {
	ex := exemplar{trace: trace, value: v}
	if s != nil {
		ex.span, ex.at = s.ID, s.End()
	}
	return ex
}

// pointAt returns m's point for k, adding a zero one the first time k is seen.
func pointAt[K comparable, P any](m map[K]*P, k K) *P {
	p := m[k]
	if p == nil {
		p = new(P)
		m[k] = p
	}
	return p
}

// add records a batch's deterministic verdicts: the results, every agent run, every
// agent edge and the budget utilizations.
func (a *aggregator) add(ctx context.Context, verdicts []assertionexporter.TraceVerdict) {
	folded := 0
	a.mu.Lock()
	for _, v := range verdicts {
		g := v.Graph
		a.addResultsLocked(v.Results, g)
		for _, inv := range g.Invocations {
			name, fold := a.agentName(inv.Name)
			if fold {
				folded++
			}
			if d, ok := seconds(inv.Span); ok {
				pointAt(a.duration, name).observe(durationBounds, d, exemplarOf(g.TraceID, inv.Span, d))
			}
			in, out := float64(inv.Self.InputTokens), float64(inv.Self.OutputTokens)
			pointAt(a.tokens, tokenKey{name, "input"}).observe(tokenBounds, in, exemplarOf(g.TraceID, inv.Span, in))
			pointAt(a.tokens, tokenKey{name, "output"}).observe(tokenBounds, out, exemplarOf(g.TraceID, inv.Span, out))
			tools, llms := float64(inv.Self.ToolCalls), float64(inv.Self.LLMCalls)
			pointAt(a.toolCalls, name).observe(callBounds, tools, exemplarOf(g.TraceID, inv.Span, tools))
			pointAt(a.llmCalls, name).observe(callBounds, llms, exemplarOf(g.TraceID, inv.Span, llms))
		}
		for _, e := range g.Edges {
			client, _ := a.agentName(e.From.Name)
			server, _ := a.agentName(e.To.Name)
			k := edgeKey{client: client, server: server, failed: e.To.Span.Error != nil}
			p := pointAt(a.edges, k)
			p.value++
			p.ex = exemplarOf(g.TraceID, e.To.Span, 1)
			if k.failed {
				f := pointAt(a.failed, k)
				f.value++
				f.ex = p.ex
			}
			if d, ok := seconds(e.To.Span); ok {
				pointAt(a.server, k).observe(serviceGraphBounds, d, exemplarOf(g.TraceID, e.To.Span, d))
			}
		}
	}
	a.mu.Unlock()
	if folded > 0 {
		a.tb.ConnectorAssertionAgentsFolded.Add(ctx, int64(folded), a.self.with())
	}
}

// addResults records results the judge decided later.
func (a *aggregator) addResults(results []rules.Result, g *agentgraph.Graph) {
	a.mu.Lock()
	defer a.mu.Unlock()
	a.addResultsLocked(results, g)
}

func (a *aggregator) addResultsLocked(results []rules.Result, g *agentgraph.Graph) {
	x := indexGraph(g)
	none := func(pcommon.SpanID) bool { return false }
	for _, r := range results {
		p := pointAt(a.results, resultKey{r.Case, r.Step, string(r.Outcome)})
		p.value++
		id, _ := judgedSpan(g, x, r, none)
		p.ex = exemplar{trace: g.TraceID, span: id, value: 1}
		if s := x[p.ex.span.String()]; s != nil {
			p.ex.at = s.End()
		}
		if r.Outcome == rules.Fail {
			f := pointAt(a.failures, failureKey{r.Case, r.Step, string(r.Cluster.Or())})
			f.value++
			f.ex = p.ex
		}
		if r.Action == rules.ActionBudget && (r.Outcome == rules.Pass || r.Outcome == rules.Fail) {
			a.budgetUse(r, g)
		}
	}
}

// budgetUse records used / limit of each limit of an EXPECT_AGENT_BUDGET step, per run of
// its agent (over the run's subtree, as the step checks it).
func (a *aggregator) budgetUse(r rules.Result, g *agentgraph.Graph) {
	cfg, _ := a.cfg.Step(r.Case, r.Step)
	step, ok := cfg.Kind.(*steps.BudgetStep)
	if !ok {
		return
	}
	for _, inv := range g.Invocations {
		if inv.Name != step.AgentName {
			continue
		}
		sub := inv.Subtree
		obs := func(budget string, used, limit float64) {
			if limit <= 0 {
				return
			}
			u := used / limit
			pointAt(a.budget, budgetKey{r.Case, r.Step, step.AgentName, budget}).observe(budgetBounds, u, exemplarOf(g.TraceID, inv.Span, u))
		}
		if step.MaxTokens != nil {
			obs(budgetTokens, float64(sub.TotalTokens), float64(*step.MaxTokens))
		}
		if step.MaxDurationMs != nil && sub.DurationUnknown == 0 {
			obs(budgetDuration, sub.DurationMs, *step.MaxDurationMs)
		}
		if step.MaxToolCalls != nil {
			obs(budgetToolCalls, float64(sub.ToolCalls), float64(*step.MaxToolCalls))
		}
	}
}

// build renders the cumulative state as metrics, in a fixed order (metrics as listed,
// data points sorted by their attributes).
func (a *aggregator) build(now time.Time) pmetric.Metrics {
	md := pmetric.NewMetrics()
	sm := md.ResourceMetrics().AppendEmpty().ScopeMetrics().AppendEmpty()
	sm.Scope().SetName(metadata.ScopeName)
	ts := pcommon.NewTimestampFromTime(now)
	a.mu.Lock()
	defer a.mu.Unlock()

	ms := sm.Metrics()
	sums(ms, MetricResults, "{result}", "Assertion results, by case, step and outcome.", a.results, ts, a.start,
		func(k resultKey, m pcommon.Map) {
			m.PutStr(AttrCase, k.caseName)
			m.PutStr(AttrStepShort, k.step)
			m.PutStr(AttrOutcome, k.outcome)
		}, func(a, b resultKey) bool {
			return a.caseName+"\x00"+a.step+"\x00"+a.outcome < b.caseName+"\x00"+b.step+"\x00"+b.outcome
		})
	sums(ms, MetricFailures, "{result}", "Failed assertion results, by case, step and failure cluster.", a.failures, ts, a.start,
		func(k failureKey, m pcommon.Map) {
			m.PutStr(AttrCase, k.caseName)
			m.PutStr(AttrStepShort, k.step)
			m.PutStr(AttrCluster, k.cluster)
		}, func(a, b failureKey) bool {
			return a.caseName+"\x00"+a.step+"\x00"+a.cluster < b.caseName+"\x00"+b.step+"\x00"+b.cluster
		})
	agentAttr := func(k string, m pcommon.Map) { m.PutStr(AttrAgentName, k) }
	byString := func(a, b string) bool { return a < b }
	hists(ms, MetricAgentDuration, "s", "Duration of one agent run (its span).", durationBounds, a.duration, ts, a.start, agentAttr, byString)
	hists(ms, MetricAgentTokens, "{token}", "Tokens of one agent run's own model calls, by type.", tokenBounds, a.tokens, ts, a.start,
		func(k tokenKey, m pcommon.Map) {
			m.PutStr(AttrAgentName, k.agent)
			m.PutStr(AttrTokenType, k.tokenType)
		}, func(a, b tokenKey) bool { return a.agent+"\x00"+a.tokenType < b.agent+"\x00"+b.tokenType })
	hists(ms, MetricAgentToolCalls, "{call}", "Tool calls of one agent run (its own).", callBounds, a.toolCalls, ts, a.start, agentAttr, byString)
	hists(ms, MetricAgentLLMCalls, "{call}", "Model calls of one agent run (its own).", callBounds, a.llmCalls, ts, a.start, agentAttr, byString)
	hists(ms, MetricBudgetUse, "1", "Used / limit of each EXPECT_AGENT_BUDGET limit, per run of the agent (its subtree).", budgetBounds, a.budget, ts, a.start,
		func(k budgetKey, m pcommon.Map) {
			m.PutStr(AttrCase, k.caseName)
			m.PutStr(AttrStepShort, k.step)
			m.PutStr(AttrAgentName, k.agent)
			m.PutStr(AttrBudget, k.budget)
		}, func(a, b budgetKey) bool {
			return a.caseName+"\x00"+a.step+"\x00"+a.agent+"\x00"+a.budget < b.caseName+"\x00"+b.step+"\x00"+b.agent+"\x00"+b.budget
		})
	edgeAttrs := func(k edgeKey, m pcommon.Map) {
		m.PutStr(AttrClient, k.client)
		m.PutStr(AttrServer, k.server)
		m.PutStr(AttrConnectionType, connectionTypeAgent)
		m.PutBool(AttrFailed, k.failed)
	}
	byEdge := func(a, b edgeKey) bool {
		if a.client != b.client {
			return a.client < b.client
		}
		if a.server != b.server {
			return a.server < b.server
		}
		return !a.failed && b.failed
	}
	sums(ms, MetricEdgeTotal, "", "Agent-to-agent handoffs (servicegraph shape: client = sender, server = receiver).", a.edges, ts, a.start, edgeAttrs, byEdge)
	sums(ms, MetricEdgeFailedTotal, "", "Agent-to-agent handoffs whose receiver run errored.", a.failed, ts, a.start, edgeAttrs, byEdge)
	hists(ms, MetricEdgeServerSecs, "s", "Duration of the receiver's run of each handoff.", serviceGraphBounds, a.server, ts, a.start, edgeAttrs, byEdge)
	return md
}

func sortedKeys[K comparable, V any](m map[K]V, less func(a, b K) bool) []K {
	keys := make([]K, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	sort.Slice(keys, func(i, j int) bool { return less(keys[i], keys[j]) })
	return keys
}
