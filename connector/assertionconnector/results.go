package assertionconnector

import (
	"strings"
	"sync"

	"go.opentelemetry.io/collector/pdata/pcommon"
	"go.opentelemetry.io/collector/pdata/ptrace"
	"go.opentelemetry.io/otel/attribute"
	"go.opentelemetry.io/otel/metric"

	"github.com/otelcol-handoff/otelcol-handoff/internal/agentgraph"
	"github.com/otelcol-handoff/otelcol-handoff/internal/judge"
	"github.com/otelcol-handoff/otelcol-handoff/internal/rules"
	"github.com/otelcol-handoff/otelcol-handoff/internal/spanwalk"
)

// Names the connector emits (see README.md, "Semantic conventions").
const (
	// EventName is the GenAI evaluation event: the log records' EventName and the span
	// events' name.
	EventName = "gen_ai.evaluation.result"

	AttrEvaluationName  = "gen_ai.evaluation.name"
	AttrScoreValue      = "gen_ai.evaluation.score.value"
	AttrScoreLabel      = "gen_ai.evaluation.score.label"
	AttrExplanation     = "gen_ai.evaluation.explanation"
	AttrErrorType       = "error.type"
	AttrExpected        = "handoff.expected"
	AttrActual          = "handoff.actual"
	AttrTestCaseName    = "test.case.name"
	AttrStep            = "handoff.step"
	AttrVerdict         = "handoff.verdict"
	AttrVerdictFailed   = "handoff.verdict.failed"
	AttrVerdictPending  = "handoff.verdict.pending"
	AttrHandoffSource   = agentgraph.AttrSource
	AttrHandoffTarget   = agentgraph.AttrTarget
	AttrAgentName       = "gen_ai.agent.name"
	AttrTokenType       = "gen_ai.token.type"
	AttrCase            = "case"
	AttrStepShort       = "step"
	AttrOutcome         = "outcome"
	AttrBudget          = "budget"
	AttrClient          = "client"
	AttrServer          = "server"
	AttrConnectionType  = "connection_type"
	AttrFailed          = "failed"
	connectionTypeAgent = "agent"
	// otherAgent stands for every agent name beyond max_agents.
	otherAgent = "other"
)

// Failure clusters (internal/cluster): the metric attribute of handoff.assertion.failures,
// and a failing result's cluster and signature on its log record and span event.
const (
	AttrCluster          = "cluster"
	AttrFailureCluster   = "handoff.failure.cluster"
	AttrFailureSignature = "handoff.failure.signature"
)

// Verdicts stamped on the root agent span.
const (
	VerdictPass  = "pass"
	VerdictFail  = "fail"
	VerdictError = "error"
)

// errorTypeOf is a result's error.type: a low-cardinality reason, "_OTHER" (the semantic
// conventions' fallback) when none of the known ones.
func errorTypeOf(r rules.Result) string {
	switch {
	case strings.Contains(r.Message, judge.ErrShutDown.Error()):
		return "shutdown"
	case strings.Contains(r.Message, judge.ErrQueueFull.Error()):
		return "queue_full"
	case strings.Contains(r.Message, "eval_timeout"):
		return "eval_timeout"
	case r.Judge != nil || r.Axis != "" || r.Action == rules.ActionContext:
		return "judge_error"
	}
	return "_OTHER"
}

// spanIndex finds a graph's spans by their hex span id.
type spanIndex map[string]*agentgraph.Span

func indexGraph(g *agentgraph.Graph) spanIndex {
	x := make(spanIndex, len(g.Spans))
	for _, s := range g.Spans {
		x[s.ID.String()] = s
	}
	return x
}

// judgedSpan is the span a result is about:
//   - a result on one handoff (EXPECT_HANDOFF_RUBRICS, EXPECT_HANDOFF_CONTEXT): the HANDOFF
//     span of the edge into the receiver it names, when that span is in the trace
//     (present), else the receiver's agent span;
//   - any other result: the agent run of the first span it names (the span itself when it
//     is an agent span, else its owning agent's);
//   - a result that names no span: the root agent span, else the trace's root span.
//
// It also returns the handoff a result on one handoff is about.
func judgedSpan(g *agentgraph.Graph, x spanIndex, r rules.Result, present func(pcommon.SpanID) bool) (pcommon.SpanID, *agentgraph.Edge) {
	if len(r.Spans) > 0 {
		first := x[r.Spans[0]]
		if first != nil && (r.Axis != "" || r.Action == rules.ActionContext) {
			for _, e := range g.Edges {
				if e.To.Span == first {
					if id := g.HandoffSpanIDOf(e); present(id) {
						return id, e
					}
					return first.ID, e
				}
			}
			return first.ID, nil
		}
		if first != nil {
			if first.Role == agentgraph.RoleAgent || first.Role == agentgraph.RoleHandoff {
				return first.ID, nil
			}
			if inv := first.Owner(); inv != nil && inv.Span != nil {
				return inv.Span.ID, nil
			}
		}
	}
	return rootAgentSpan(g), nil
}

// rootAgentSpan is the root agent's span, else the trace's root span (empty without spans).
func rootAgentSpan(g *agentgraph.Graph) pcommon.SpanID {
	if g.Root != nil && g.Root.Span != nil {
		return g.Root.Span.ID
	}
	if g.RootSpan != nil {
		return g.RootSpan.ID
	}
	return pcommon.SpanID{}
}

// verdictOf is a trace's verdict from its results: fail when any result failed, else error
// when any errored, else pass (skipped results count for nothing; gated results feed their
// gate's window and do not decide a trace, as in the exporter). It also lists the case/step
// ids that failed or errored. ok is false when no case selected the trace.
func verdictOf(results []rules.Result) (verdict string, failed []string, ok bool) {
	verdict = VerdictPass
	for _, r := range results {
		ok = true
		if r.Gated {
			continue
		}
		switch r.Outcome {
		case rules.Fail:
			verdict = VerdictFail
			failed = append(failed, r.Case+"/"+r.Step)
		case rules.Error:
			if verdict != VerdictFail {
				verdict = VerdictError
			}
			failed = append(failed, r.Case+"/"+r.Step)
		}
	}
	return verdict, failed, ok
}

// spanIDsIn lists the span ids of a batch: whether a HANDOFF span the processor
// synthesized is there (the graph it shares was built before it added them).
func spanIDsIn(td ptrace.Traces) map[pcommon.SpanID]bool {
	out := map[pcommon.SpanID]bool{}
	spanwalk.Each(td, func(_ pcommon.Resource, sp ptrace.Span) { out[sp.SpanID()] = true })
	return out
}

// pendingHandoff remembers, for each trace waiting for the judge, which of its HANDOFF
// spans were in the trace, so its graded log records point at them. Bounded by the grading
// queue: the engine hands every queued trace back exactly once.
type pendingHandoff struct {
	mu sync.Mutex
	m  map[*agentgraph.Graph]map[pcommon.SpanID]bool
}

func newPendingHandoff() *pendingHandoff {
	return &pendingHandoff{m: map[*agentgraph.Graph]map[pcommon.SpanID]bool{}}
}

func (p *pendingHandoff) remember(g *agentgraph.Graph, inBatch map[pcommon.SpanID]bool) {
	mine := map[pcommon.SpanID]bool{}
	for _, e := range g.Edges {
		if id := g.HandoffSpanIDOf(e); inBatch[id] {
			mine[id] = true
		}
	}
	p.mu.Lock()
	p.m[g] = mine
	p.mu.Unlock()
}

func (p *pendingHandoff) take(g *agentgraph.Graph) map[pcommon.SpanID]bool {
	p.mu.Lock()
	defer p.mu.Unlock()
	h := p.m[g]
	delete(p.m, g)
	return h
}

// Self-telemetry attributes.
const (
	phaseNow    = "now"
	phaseGraded = "graded"
)

// selfAttrs are the attributes of one self-telemetry data point: kvs plus connector = the
// component id, so two assertion connectors never share a series.
type selfAttrs struct{ id attribute.KeyValue }

func (a selfAttrs) with(kvs ...attribute.KeyValue) metric.MeasurementOption {
	return metric.WithAttributeSet(attribute.NewSet(append(kvs, a.id)...))
}

func (a selfAttrs) phase(phase string) metric.MeasurementOption {
	return a.with(attribute.String("phase", phase))
}

func (a selfAttrs) outcome(outcome string) metric.MeasurementOption {
	return a.with(attribute.String("outcome", outcome))
}
