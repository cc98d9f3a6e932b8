package agentgraph

import (
	"go.opentelemetry.io/collector/pdata/pcommon"
	"go.opentelemetry.io/collector/pdata/ptrace"
)

// Accessors of the normalized model: what rules, reports and the exporter read of a span,
// an invocation or a graph instead of the raw pdata span (see the package doc: this
// package is the only reader of raw spans).

// Start is the span's start time.
func (s *Span) Start() pcommon.Timestamp { return s.Pdata.StartTimestamp() }

// End is the span's end time (0: the span has none).
func (s *Span) End() pcommon.Timestamp { return s.Pdata.EndTimestamp() }

// SpanName is the span's own name, as the instrumentation wrote it (Name is the agent or
// tool name the chains resolved).
func (s *Span) SpanName() string { return s.Pdata.Name() }

// StatusError reports whether the span's status code is ERROR. Error says more: it is also
// set from error attributes and exception events, and cleared for framework control flow.
func (s *Span) StatusError() bool { return s.Pdata.Status().Code() == ptrace.StatusCodeError }

// InvocationOf is the invocation whose agent span s is (nil: s is not an agent span of
// this graph).
func (g *Graph) InvocationOf(s *Span) *Invocation { return g.invocationOf[s] }

// LLMCalls are the LLM spans the invocation owns (its nearest agent span above them is the
// invocation's), in start order.
func (inv *Invocation) LLMCalls() []*Span { return inv.llms }
