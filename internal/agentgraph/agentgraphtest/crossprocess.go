package agentgraphtest

import (
	"go.opentelemetry.io/collector/pdata/pcommon"
	"go.opentelemetry.io/collector/pdata/ptrace"
)

// Traces that cross processes, assembled from real single-process captures the way the
// OpenTelemetry SDKs join them: W3C trace context propagated over an HTTP call (one trace,
// two services), or a new trace whose first span links to the sender's span (an
// asynchronous handoff through a queue). Span ids of the captures are kept; the spans
// added here get fixed ids, so the results are deterministic.

// HTTPScope is the instrumentation scope of the HTTP client and server spans added here.
const HTTPScope = "@opentelemetry/instrumentation-http"

// MessagingScope is the instrumentation scope of the producer and consumer spans.
const MessagingScope = "@opentelemetry/instrumentation-amqplib"

// Ids of the spans added by JoinOverHTTP and LinkAsync.
var (
	HTTPClientSpanID = pcommon.SpanID{'h', 't', 't', 'p', 0, 0, 0, 1}
	HTTPServerSpanID = pcommon.SpanID{'h', 't', 't', 'p', 0, 0, 0, 2}
	ProducerSpanID   = pcommon.SpanID{'q', 'u', 'e', 'u', 'e', 0, 0, 1}
	ConsumerSpanID   = pcommon.SpanID{'q', 'u', 'e', 'u', 'e', 0, 0, 2}
)

// findSpan returns the span with id in td (ok false when absent) and its resource.
func findSpan(td ptrace.Traces, id pcommon.SpanID) (ptrace.Span, ptrace.ResourceSpans, bool) {
	for _, rs := range td.ResourceSpans().All() {
		for _, ss := range rs.ScopeSpans().All() {
			for _, sp := range ss.Spans().All() {
				if sp.SpanID() == id {
					return sp, rs, true
				}
			}
		}
	}
	return ptrace.Span{}, ptrace.ResourceSpans{}, false
}

// span bounds of td: earliest start, latest end.
func bounds(td ptrace.Traces) (start, end pcommon.Timestamp) {
	for _, rs := range td.ResourceSpans().All() {
		for _, ss := range rs.ScopeSpans().All() {
			for _, sp := range ss.Spans().All() {
				if start == 0 || sp.StartTimestamp() < start {
					start = sp.StartTimestamp()
				}
				end = max(end, sp.EndTimestamp())
			}
		}
	}
	return start, end
}

// adopt rewrites inner's spans into traceID, starting at `at`, with its parentless spans
// hung under parent, and every resource's service.name set to service. It returns the new
// bounds.
func adopt(inner ptrace.Traces, traceID pcommon.TraceID, parent pcommon.SpanID, at pcommon.Timestamp, service string) (pcommon.Timestamp, pcommon.Timestamp) {
	start, end := bounds(inner)
	shift := func(ts pcommon.Timestamp) pcommon.Timestamp { return ts - start + at }
	for _, rs := range inner.ResourceSpans().All() {
		rs.Resource().Attributes().PutStr("service.name", service)
		for _, ss := range rs.ScopeSpans().All() {
			for _, sp := range ss.Spans().All() {
				sp.SetTraceID(traceID)
				if sp.ParentSpanID().IsEmpty() {
					sp.SetParentSpanID(parent)
				}
				sp.SetStartTimestamp(shift(sp.StartTimestamp()))
				sp.SetEndTimestamp(shift(sp.EndTimestamp()))
			}
		}
	}
	return at, end - start + at
}

func appendSpan(rs ptrace.ResourceSpans, scope string) ptrace.Span {
	ss := rs.ScopeSpans().AppendEmpty()
	ss.Scope().SetName(scope)
	return ss.Spans().AppendEmpty()
}

// JoinOverHTTP returns one trace: outer's spans, plus an HTTP CLIENT span (in the caller's
// service) under the span callerID, an HTTP SERVER span (in service) under it, and inner's
// spans under the server span, in outer's trace. The caller span's service calls the
// other over POST url; inner's resources become service. outer and inner are not changed.
func JoinOverHTTP(outer ptrace.Traces, callerID pcommon.SpanID, inner ptrace.Traces, service, url, route string) ptrace.Traces {
	out := ptrace.NewTraces()
	outer.CopyTo(out)
	caller, callerRes, ok := findSpan(out, callerID)
	if !ok {
		panic("agentgraphtest: caller span not in the outer trace")
	}
	traceID := caller.TraceID()
	in := ptrace.NewTraces()
	inner.CopyTo(in)
	at := caller.StartTimestamp() + 2_000_000 // 2 ms after the caller starts
	start, end := adopt(in, traceID, HTTPServerSpanID, at, service)

	client := appendSpan(callerRes, HTTPScope)
	client.SetTraceID(traceID)
	client.SetSpanID(HTTPClientSpanID)
	client.SetParentSpanID(callerID)
	client.SetName("POST")
	client.SetKind(ptrace.SpanKindClient)
	client.SetStartTimestamp(start - 1_000_000)
	client.SetEndTimestamp(end + 1_000_000)
	ca := client.Attributes()
	ca.PutStr("http.request.method", "POST")
	ca.PutStr("url.full", url)
	ca.PutStr("server.address", "127.0.0.1")
	ca.PutInt("server.port", 8081)
	ca.PutInt("http.response.status_code", 200)
	ca.PutStr("network.protocol.version", "1.1")

	srvRes := out.ResourceSpans().AppendEmpty()
	srvRes.Resource().Attributes().PutStr("service.name", service)
	server := appendSpan(srvRes, HTTPScope)
	server.SetTraceID(traceID)
	server.SetSpanID(HTTPServerSpanID)
	server.SetParentSpanID(HTTPClientSpanID)
	server.SetName("POST " + route)
	server.SetKind(ptrace.SpanKindServer)
	server.SetStartTimestamp(start - 500_000)
	server.SetEndTimestamp(end + 500_000)
	sa := server.Attributes()
	sa.PutStr("http.request.method", "POST")
	sa.PutStr("http.route", route)
	sa.PutStr("url.path", route)
	sa.PutStr("url.scheme", "http")
	sa.PutStr("server.address", "127.0.0.1")
	sa.PutInt("server.port", 8081)
	sa.PutStr("client.address", "127.0.0.1")
	sa.PutInt("http.response.status_code", 200)
	sa.PutStr("user_agent.original", "node")

	in.ResourceSpans().MoveAndAppendTo(out.ResourceSpans())
	return out
}

// AppendProducer adds to td a PRODUCER span under parentID that publishes a message to
// queue (the span an asynchronous receiver links to), and returns td.
func AppendProducer(td ptrace.Traces, parentID pcommon.SpanID, queue string) ptrace.Traces {
	parent, rs, ok := findSpan(td, parentID)
	if !ok {
		panic("agentgraphtest: producer parent not in the trace")
	}
	sp := appendSpan(rs, MessagingScope)
	sp.SetTraceID(parent.TraceID())
	sp.SetSpanID(ProducerSpanID)
	sp.SetParentSpanID(parentID)
	sp.SetName("publish " + queue)
	sp.SetKind(ptrace.SpanKindProducer)
	sp.SetStartTimestamp(parent.StartTimestamp())
	sp.SetEndTimestamp(parent.StartTimestamp() + 1_000_000)
	a := sp.Attributes()
	a.PutStr("messaging.system", "rabbitmq")
	a.PutStr("messaging.operation.type", "send")
	a.PutStr("messaging.destination.name", queue)
	return td
}

// LinkAsync returns receiver as a new trace traceID in service: a CONSUMER span that
// receives from queue, with a span link to (linkTrace, linkSpan), is its first span, and
// receiver's parentless spans run under it, starting at `at`. receiver is not changed.
func LinkAsync(receiver ptrace.Traces, traceID pcommon.TraceID, linkTrace pcommon.TraceID, linkSpan pcommon.SpanID, service, queue string, at pcommon.Timestamp) ptrace.Traces {
	out := ptrace.NewTraces()
	rs := out.ResourceSpans().AppendEmpty()
	rs.Resource().Attributes().PutStr("service.name", service)
	consumer := appendSpan(rs, MessagingScope)
	in := ptrace.NewTraces()
	receiver.CopyTo(in)
	start, end := adopt(in, traceID, ConsumerSpanID, at+1_000_000, service)
	consumer.SetTraceID(traceID)
	consumer.SetSpanID(ConsumerSpanID)
	consumer.SetName("process " + queue)
	consumer.SetKind(ptrace.SpanKindConsumer)
	consumer.SetStartTimestamp(start - 1_000_000)
	consumer.SetEndTimestamp(end)
	a := consumer.Attributes()
	a.PutStr("messaging.system", "rabbitmq")
	a.PutStr("messaging.operation.type", "process")
	a.PutStr("messaging.destination.name", queue)
	l := consumer.Links().AppendEmpty()
	l.SetTraceID(linkTrace)
	l.SetSpanID(linkSpan)
	in.ResourceSpans().MoveAndAppendTo(out.ResourceSpans())
	return out
}

// LinkedToDeepChain is DeepChain(depth) plus receivers top-level "job" spans, each running
// one agent and linked to the deepest agent's tool call: even ones in the same trace, odd
// ones in another trace. It is the adversarial shape for span-link resolution: every
// receiver's sender sits at the bottom of the deep chain.
func LinkedToDeepChain(depth, receivers int) ptrace.Traces {
	td := DeepChain(depth)
	spans := td.ResourceSpans().At(0).ScopeSpans().At(0).Spans()
	deepestTool := SpanID(uint64(3 * depth))
	n := uint64(3 * depth)
	start := uint64(30 * depth)
	for i := range uint64(receivers) {
		n++
		job := spans.AppendEmpty()
		job.SetTraceID(TraceID)
		job.SetSpanID(SpanID(n))
		job.SetName("job")
		job.SetKind(ptrace.SpanKindConsumer)
		job.SetStartTimestamp(pcommon.Timestamp(start + 10*i))
		job.SetEndTimestamp(pcommon.Timestamp(start + 10*i + 9))
		l := job.Links().AppendEmpty()
		l.SetTraceID(TraceID)
		if i%2 == 1 {
			l.SetTraceID(pcommon.TraceID{0xf0, 0x5e})
		}
		l.SetSpanID(deepestTool)
		n++
		ag := spans.AppendEmpty()
		ag.SetTraceID(TraceID)
		ag.SetSpanID(SpanID(n))
		ag.SetParentSpanID(job.SpanID())
		ag.SetName("invoke_agent receiver")
		ag.SetStartTimestamp(pcommon.Timestamp(start + 10*i + 1))
		ag.SetEndTimestamp(pcommon.Timestamp(start + 10*i + 8))
		ag.Attributes().PutStr("gen_ai.operation.name", "invoke_agent")
		ag.Attributes().PutStr("gen_ai.agent.name", "receiver")
	}
	return td
}

// RemoteAgentSpanID is the id of the caller-side agent span CallRemoteAgent adds.
var RemoteAgentSpanID = pcommon.SpanID{'r', 'e', 'm', 'o', 't', 'e', 0, 1}

// CallRemoteAgent is JoinOverHTTP with the caller-side span of a remote agent in between:
// under callerID an `invoke_agent <agent>` CLIENT span (the OTel GenAI remote-agent client
// span: gen_ai.operation.name invoke_agent, gen_ai.agent.name agent) makes the HTTP call
// to service, where inner (whose top agent is that agent) runs.
func CallRemoteAgent(outer ptrace.Traces, callerID pcommon.SpanID, agent string, inner ptrace.Traces, service, url, route string) ptrace.Traces {
	out := ptrace.NewTraces()
	outer.CopyTo(out)
	caller, rs, ok := findSpan(out, callerID)
	if !ok {
		panic("agentgraphtest: caller span not in the outer trace")
	}
	sp := appendSpan(rs, "gen_ai.remote_agent")
	sp.SetTraceID(caller.TraceID())
	sp.SetSpanID(RemoteAgentSpanID)
	sp.SetParentSpanID(callerID)
	sp.SetName("invoke_agent " + agent)
	sp.SetKind(ptrace.SpanKindClient)
	sp.SetStartTimestamp(caller.StartTimestamp() + 1_000_000)
	a := sp.Attributes()
	a.PutStr("gen_ai.operation.name", "invoke_agent")
	a.PutStr("gen_ai.agent.name", agent)
	a.PutStr("server.address", "127.0.0.1")
	a.PutInt("server.port", 8081)
	joined := JoinOverHTTP(out, RemoteAgentSpanID, inner, service, url, route)
	stub, _, _ := findSpan(joined, RemoteAgentSpanID)
	_, end := bounds(joined)
	stub.SetEndTimestamp(end)
	return joined
}
