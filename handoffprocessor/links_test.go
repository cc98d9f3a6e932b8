package handoffprocessor

import (
	"context"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
	"go.opentelemetry.io/collector/consumer/consumertest"
	"go.opentelemetry.io/collector/pdata/pcommon"
	"go.opentelemetry.io/collector/pdata/ptrace"
	"go.opentelemetry.io/otel/attribute"
	"go.opentelemetry.io/otel/sdk/metric/metricdata"

	"github.com/otelcol-handoff/otelcol-handoff/handoffprocessor/internal/metadatatest"
	"github.com/otelcol-handoff/otelcol-handoff/internal/agentgraph"
	"github.com/otelcol-handoff/otelcol-handoff/internal/agentgraph/agentgraphtest"
)

// Asynchronous handoffs between traces, assembled from real captures by agentgraphtest:
// google-adk-ok (triage -> weather_specialist, trace f4f85fa1...) publishes a message from
// weather_specialist's first get_weather call (a PRODUCER span); weather-backend consumes
// it in a new trace whose CONSUMER span links to the producer span and runs the OpenAI
// Agents "Hello world" agent (testdata/corpus/lf-openai-agents-openinference).

var receiverTraceID = pcommon.TraceID{0xa5, 0x1c, 0x0f, 0xf0, 2}

const (
	senderSpans   = 11 // google-adk-ok's 10 spans and the producer span
	receiverSpans = 6  // the consumer span and the capture's 5 spans
)

func loadCorpus(t testing.TB, name string) ptrace.Traces {
	t.Helper()
	b, err := os.ReadFile(filepath.Join("..", "testdata", "corpus", name+".otlp.json"))
	require.NoError(t, err)
	td, err := (&ptrace.JSONUnmarshaler{}).UnmarshalTraces(b)
	require.NoError(t, err)
	return td
}

// earliestNamed is the earliest span of td called name.
func earliestNamed(t testing.TB, td ptrace.Traces, name string) ptrace.Span {
	t.Helper()
	var best ptrace.Span
	for _, s := range allSpans(td) {
		if s.span.Name() == name && (best == (ptrace.Span{}) || s.span.StartTimestamp() < best.StartTimestamp()) {
			best = s.span
		}
	}
	require.NotEqual(t, ptrace.Span{}, best, "no span named %q", name)
	return best
}

type asyncPair struct {
	sender, receiver ptrace.Traces
	senderTrace      pcommon.TraceID
	senderAgent      pcommon.SpanID // weather_specialist's agent span
	receiverAgent    pcommon.SpanID // Hello world's agent span
}

func newAsyncPair(t testing.TB, receiverTrace pcommon.TraceID) asyncPair {
	sender := loadCapture(t, adkOK)
	tool := earliestNamed(t, sender, "execute_tool get_weather")
	agentgraphtest.AppendProducer(sender, tool.SpanID(), "forecasts")
	receiver := agentgraphtest.LinkAsync(loadCorpus(t, "lf-openai-agents-openinference"), receiverTrace,
		tool.TraceID(), agentgraphtest.ProducerSpanID, "weather-backend", "forecasts", tool.EndTimestamp())
	require.Equal(t, senderSpans, sender.SpanCount())
	require.Equal(t, receiverSpans, receiver.SpanCount())
	return asyncPair{
		sender: sender, receiver: receiver, senderTrace: tool.TraceID(),
		senderAgent:   earliestNamed(t, sender, "invoke_agent weather_specialist").SpanID(),
		receiverAgent: earliestNamed(t, receiver, "Hello world").SpanID(),
	}
}

// remoteHandoff returns the HANDOFF span of the receiver trace and checks what every
// cross-trace HANDOFF span carries: the receiver's trace, a link to the sender.
func remoteHandoff(t *testing.T, spans []outSpan, receiverTrace pcommon.TraceID, source, resolution string, linkTrace pcommon.TraceID, linkSpan pcommon.SpanID) ptrace.Span {
	t.Helper()
	var found []ptrace.Span
	for _, s := range handoffs(spans) {
		if s.span.TraceID() == receiverTrace {
			found = append(found, s.span)
		}
	}
	require.Len(t, found, 1, "HANDOFF spans in the receiver's trace")
	h := found[0]
	require.Equal(t, "handoff "+source+" -> Hello world", h.Name())
	attrs := h.Attributes()
	for key, want := range map[string]string{
		agentgraph.AttrSource: source, agentgraph.AttrTarget: "Hello world",
		agentgraph.AttrDetection: agentgraph.DetectSpanLink, agentgraph.AttrSourceTraceID: linkTrace.String(),
		agentgraph.AttrSourceSpanID: linkSpan.String(), agentgraph.AttrSourceResolution: resolution,
	} {
		v, ok := attrs.Get(key)
		require.True(t, ok, key)
		require.Equal(t, want, v.Str(), key)
	}
	require.Equal(t, 1, h.Links().Len())
	require.Equal(t, linkTrace, h.Links().At(0).TraceID())
	require.Equal(t, linkSpan, h.Links().At(0).SpanID())
	return h
}

// linkDPs is the expected state of the link counters.
func (h *harness) assertLinks(bySenderTrace, byAttributes, unresolved int64) {
	h.t.Helper()
	var want []metricdata.DataPoint[int64]
	for by, v := range map[string]int64{
		agentgraph.LinkBySenderTrace: bySenderTrace, agentgraph.LinkByAttributes: byAttributes,
		agentgraph.LinkByHandoffSpan: 0,
	} {
		want = append(want, metricdata.DataPoint[int64]{Attributes: attribute.NewSet(attribute.String("by", by)), Value: v})
	}
	metadatatest.AssertEqualProcessorHandoffResolvedLinks(h.t, h.tt, want, ignoreTime)
	metadatatest.AssertEqualProcessorHandoffUnresolvedLinks(h.t, h.tt, dps(unresolved), ignoreTime)
}

// release consumes td and lets its quiet period pass; it waits until the sink holds want
// spans.
func (h *harness) release(sink *consumertest.TracesSink, td ptrace.Traces, want int) {
	h.t.Helper()
	h.consume(td)
	h.advanceAndTick(h.cfg.QuietPeriod + time.Second)
	require.Eventually(h.t, func() bool { return sink.SpanCount() == want }, waitFor, time.Millisecond)
}

// TestAsyncHandoffToReleasedTrace: the sender's trace left the processor first; the link
// cache names the receiver's sender, and the HANDOFF span in the receiver's trace links to
// the sender's agent span.
func TestAsyncHandoffToReleasedTrace(t *testing.T) {
	require.Equal(t, 100000, createDefaultConfig().(*Config).LinkCacheSize)
	pair := newAsyncPair(t, receiverTraceID)
	sink := new(consumertest.TracesSink)
	h := newHarness(t, testConfig(), sink, true)

	h.release(sink, pair.sender, senderSpans+1)
	// triage, weather_specialist, their three tool calls and the producer span; not the
	// LLM calls, nor the "invocation" root that no agent owns.
	require.Equal(t, 6, h.p.links.len())
	h.release(sink, pair.receiver, senderSpans+1+receiverSpans+1)

	hs := remoteHandoff(t, sinkSpans(sink), receiverTraceID, "weather_specialist", agentgraph.LinkBySenderTrace,
		pair.senderTrace, pair.senderAgent)
	require.Equal(t, agentgraph.HandoffSpanID(receiverTraceID, pair.receiverAgent), hs.SpanID())
	h.assertLinks(1, 0, 0)
	h.assertMetrics(wantMetrics{
		released:      map[string]int64{triggerRoot: 2},
		spansReleased: senderSpans + receiverSpans, handoffs: 2,
	})
	require.Equal(t, 8, h.p.links.len(), "and Hello world with its tool call")
}

// TestAsyncHandoffBeforeSender: the receiver's trace leaves first; its link is counted as
// unresolved, the sender stands in as its trace, and the verdict is not revised when the
// sender's trace comes later. A link whose attributes name the sender is resolved by them.
func TestAsyncHandoffBeforeSender(t *testing.T) {
	pair := newAsyncPair(t, receiverTraceID)
	sink := new(consumertest.TracesSink)
	h := newHarness(t, testConfig(), sink, true)

	h.release(sink, pair.receiver, receiverSpans+1)
	remoteHandoff(t, sinkSpans(sink), receiverTraceID, "trace "+pair.senderTrace.String(), agentgraph.LinkUnresolved,
		pair.senderTrace, agentgraphtest.ProducerSpanID)
	h.assertLinks(0, 0, 1)

	h.release(sink, pair.sender, receiverSpans+1+senderSpans+1)
	h.assertLinks(0, 0, 1)

	// The messaging instrumentation recorded the sending agent on the link.
	third := pcommon.TraceID{0xa5, 0x1c, 0x0f, 0xf0, 3}
	other := newAsyncPair(t, third)
	consumer := earliestNamed(t, other.receiver, "process forecasts") // before the processor takes it
	consumer.Links().At(0).SetTraceID(pcommon.TraceID{0xde, 0xad})    // a trace this processor never saw
	consumer.Links().At(0).Attributes().PutStr("gen_ai.agent.name", "dispatcher")
	h.release(sink, other.receiver, 2*(receiverSpans+1)+senderSpans+1)
	remoteHandoff(t, sinkSpans(sink), third, "dispatcher", agentgraph.LinkByAttributes,
		pcommon.TraceID{0xde, 0xad}, agentgraphtest.ProducerSpanID)
	h.assertLinks(0, 1, 1)
}

// TestAsyncHandoffSameReleaseAnyOrder: traces released together (a replay's end of input)
// are all remembered before any link is resolved, so the receiver is named by its sender
// even when it arrived first.
func TestAsyncHandoffSameReleaseAnyOrder(t *testing.T) {
	pair := newAsyncPair(t, receiverTraceID)
	sink := new(consumertest.TracesSink)
	h := newHarness(t, testConfig(func(c *Config) { c.NumShards = 1 }), sink, true)
	h.consume(pair.receiver)
	h.consume(pair.sender)
	require.NoError(t, h.p.EndOfInput(context.Background()))
	remoteHandoff(t, sinkSpans(sink), receiverTraceID, "weather_specialist", agentgraph.LinkBySenderTrace,
		pair.senderTrace, pair.senderAgent)
	h.assertLinks(1, 0, 0)
}

// TestLinkCacheBound: the cache holds at most link_cache_size spans, forgetting the
// oldest first; a receiver whose sender was forgotten is unresolved.
func TestLinkCacheBound(t *testing.T) {
	pair := newAsyncPair(t, receiverTraceID)
	graphs := agentgraph.BuildAll(pair.sender, agentgraph.Options{})
	require.Len(t, graphs, 1)
	triage := earliestNamed(t, pair.sender, "invoke_agent triage").SpanID()

	c := newLinkCache(5)
	c.remember(graphs[0]) // 6 spans, triage's own first
	require.Equal(t, 5, c.len())
	_, ok := c.ResolveLink(pair.senderTrace, triage)
	require.False(t, ok, "the oldest span is forgotten")
	got, ok := c.ResolveLink(pair.senderTrace, agentgraphtest.ProducerSpanID)
	require.True(t, ok)
	require.Equal(t, agentgraph.LinkTarget{TraceID: pair.senderTrace, SpanID: pair.senderAgent, Agent: "weather_specialist"}, got)
	c.remember(graphs[0]) // released again: refreshed in place, still bounded
	require.Equal(t, 5, c.len())
	require.Nil(t, newLinkCache(0), "0: no cache")

	// Through the processor: six spans of room; a later trace pushes the sender out.
	sink := new(consumertest.TracesSink)
	h := newHarness(t, testConfig(func(c *Config) { c.LinkCacheSize = 6 }), sink, true)
	h.release(sink, pair.sender, senderSpans+1)
	require.Equal(t, 6, h.p.links.len())
	filler := loadCapture(t, strandsOK)
	setTraceID(filler, pcommon.TraceID{0xf1, 0x11})
	before := sink.SpanCount()
	h.consume(filler)
	h.advanceAndTick(h.cfg.QuietPeriod + time.Second)
	require.Eventually(t, func() bool { return sink.SpanCount() > before }, waitFor, time.Millisecond)
	require.Equal(t, 6, h.p.links.len())
	want := sink.SpanCount() + receiverSpans + 1
	h.release(sink, pair.receiver, want)
	remoteHandoff(t, sinkSpans(sink), receiverTraceID, "trace "+pair.senderTrace.String(), agentgraph.LinkUnresolved,
		pair.senderTrace, agentgraphtest.ProducerSpanID)
	h.assertLinks(0, 0, 1)
}

// TestLinkCacheOff: link_cache_size 0 keeps no cache: a released sender is not known.
func TestLinkCacheOff(t *testing.T) {
	pair := newAsyncPair(t, receiverTraceID)
	sink := new(consumertest.TracesSink)
	h := newHarness(t, testConfig(func(c *Config) { c.LinkCacheSize = 0 }), sink, true)
	h.release(sink, pair.sender, senderSpans+1)
	h.release(sink, pair.receiver, senderSpans+1+receiverSpans+1)
	remoteHandoff(t, sinkSpans(sink), receiverTraceID, "trace "+pair.senderTrace.String(), agentgraph.LinkUnresolved,
		pair.senderTrace, agentgraphtest.ProducerSpanID)
	h.assertLinks(0, 0, 1)
}

// TestTraceAcrossTwoServices: one trace whose agents live in two services (W3C context over
// HTTP): the HANDOFF span of the cross-service edge is parented on the calling agent.
func TestTraceAcrossTwoServices(t *testing.T) {
	adk := loadCapture(t, adkOK)
	caller := earliestNamed(t, adk, "execute_tool get_weather")
	td := agentgraphtest.JoinOverHTTP(adk, caller.SpanID(), loadCorpus(t, "lf-openai-agents-openinference"),
		"weather-backend", "http://127.0.0.1:8081/forecast", "/forecast")
	n := td.SpanCount()
	require.Equal(t, 10+2+5, n)
	sink := new(consumertest.TracesSink)
	h := newHarness(t, testConfig(), sink, true)
	h.release(sink, td, n+2)
	spans := sinkSpans(sink)
	ws := earliestNamed(t, adk, "invoke_agent weather_specialist").SpanID()
	hs := spanNamed(t, spans, "handoff weather_specialist -> Hello world")
	require.Equal(t, ws, hs.ParentSpanID())
	v, _ := hs.Attributes().Get(agentgraph.AttrDetection)
	require.Equal(t, agentgraph.DetectAgentAsTool, v.Str())
	require.Zero(t, hs.Links().Len())
	spanNamed(t, spans, "handoff triage -> weather_specialist")
	h.assertLinks(0, 0, 0)
}
