package e2e

// Faults: the built collector under a failing destination, a shutdown with traces
// buffered and clients still sending, malformed OTLP, broken span trees, a 100k-span
// trace, a 1 MB attribute and invalid UTF-8. In every case the collector keeps serving
// (health check), forwards every span it accepted, and its metrics count what happened.

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"
	"unicode/utf8"

	"go.opentelemetry.io/collector/pdata/pcommon"
	"go.opentelemetry.io/collector/pdata/ptrace"
	"go.opentelemetry.io/collector/pdata/ptrace/ptraceotlp"
	"google.golang.org/grpc"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/credentials/insecure"
	"google.golang.org/grpc/status"
)

// faultParams fills testdata/faults.yaml.tmpl.
type faultParams struct {
	GRPCPort, HTTPPort, HealthPort, MetricsPort int
	ReportPath, SpansPath                       string
	QuietPeriod, MaxWait                        string
	MaxSpans                                    int
	FailURL                                     string // set: an otlp_http exporter to it, no retry, no queue
	FailTimeout                                 string // that exporter's timeout (default 2s)
	ShutdownTimeout                             string // the processor's shutdown_timeout (default: its default)
	MetricsLevel                                string // the collector's own metrics level (default normal)
	BufferEncoding                              string // the processor's buffer_encoding (default: its default, proto)
}

type faultCollector struct {
	*instance
	tracesURL string
	grpcAddr  string
}

// startFaultCollector starts the collector of testdata/faults.yaml.tmpl (quiet_period
// 300ms, max_wait 5s, max_spans_per_trace 10000 unless set changes them) and waits for it.
func startFaultCollector(t *testing.T, set func(*faultParams)) *faultCollector {
	t.Helper()
	dir := t.TempDir()
	ports := freePorts(t, 4)
	p := faultParams{
		GRPCPort: ports[0], HTTPPort: ports[1], HealthPort: ports[2], MetricsPort: ports[3],
		ReportPath: filepath.Join(dir, "verdicts.jsonl"), SpansPath: filepath.Join(dir, "spans.jsonl"),
		QuietPeriod: "300ms", MaxWait: "5s", MaxSpans: 10000,
	}
	if set != nil {
		set(&p)
	}
	in := startInstance(t, collectorBinary(t), t.Name(), renderConfig(t, dir, "faults.yaml.tmpl", p), p.HealthPort, p.MetricsPort)
	in.reportPath, in.spansPath = p.ReportPath, p.SpansPath
	in.col.waitReady(t, in.healthURL)
	return &faultCollector{
		instance:  in,
		tracesURL: fmt.Sprintf("http://127.0.0.1:%d/v1/traces", p.HTTPPort),
		grpcAddr:  fmt.Sprintf("127.0.0.1:%d", p.GRPCPort),
	}
}

// underEachBufferEncoding runs a data-safety fault test once per buffer_encoding: each
// holds the buffered spans differently (protobuf, S2-compressed protobuf, pdata), and
// each must come through the fault with nothing lost. The test starts its collector with
// the set it is given and checks with requireEncoding that the encoding took effect.
func underEachBufferEncoding(t *testing.T, test func(t *testing.T, encoding string)) {
	for _, enc := range []string{"proto", "proto_s2", "decoded"} {
		t.Run(enc, func(t *testing.T) { test(t, enc) })
	}
}

// requireEncoding checks the processor's start-up line names the buffer_encoding the
// test asked for, so that a template that lost the setting cannot pass as another run
// of the default.
func (f *faultCollector) requireEncoding(t *testing.T, encoding string) {
	t.Helper()
	want := fmt.Sprintf(`"buffer_encoding": %q`, encoding)
	f.col.eventually(t, resultTimeout, "the start-up line names "+want, func() (bool, string) {
		return strings.Contains(f.col.output(), want), "not in the collector's output yet"
	})
}

// requireHealthy checks the process is up and its health check answers 200.
func (f *faultCollector) requireHealthy(t *testing.T) {
	t.Helper()
	if f.col.exited() {
		t.Fatalf("collector exited: %v", f.col.waitErr)
	}
	resp, err := (&http.Client{Timeout: 2 * time.Second}).Get(f.healthURL)
	if err != nil {
		t.Fatalf("health check: %v", err)
	}
	resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		t.Fatalf("health check: %s", resp.Status)
	}
}

// waitMetric polls the metrics endpoint until cond holds for the summed value.
func (f *faultCollector) waitMetric(t *testing.T, name string, labels map[string]string, what string, cond func(float64) bool) metrics {
	t.Helper()
	var m metrics
	f.col.eventually(t, resultTimeout, what, func() (bool, string) {
		m = scrape(t, f.metricsURL)
		v := m.sum(name, labels)
		return cond(v), fmt.Sprintf("%s%s = %v", name, labelString(labels), v)
	})
	return m
}

// ---- a failing destination ----

func TestFaultDownstreamFailing(t *testing.T) {
	var hits atomic.Int64
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		hits.Add(1)
		http.Error(w, "backend unavailable", http.StatusServiceUnavailable)
	}))
	defer srv.Close()
	f := startFaultCollector(t, func(p *faultParams) { p.FailURL = srv.URL + "/v1/traces" })

	rng := newRNG(t)
	adk, strands := loadCapture(t, "google-adk-ok.json"), loadCapture(t, "strands-ok.json")
	traces := makeScaleTraces(t, rng, adk, strands, 4)
	want := map[string]map[[2]string]wantResult{}
	perTrace := map[string]int{}
	spans := 0
	for id, st := range traces {
		postTraces(t, f.tracesURL, st.c.td) // buffered: the receiver answers 200
		want[id] = st.want
		perTrace[id] = len(st.want)
		spans += len(st.c.spanIDs) + len(st.handoffs)
	}

	// The assertion exporter and the file exporter still get every trace.
	checkResults(t, f.col.waitForResults(t, f.reportPath, perTrace), want)
	wantSpans := map[string]int{}
	for id, st := range traces {
		wantSpans[id] = len(st.c.spanIDs) + len(st.handoffs)
	}
	forwarded := f.col.waitForSpans(t, f.spansPath, wantSpans)
	for _, st := range traces {
		checkForwarded(t, forwarded, st.c, st.handoffs)
	}
	// The processor counts every span of the rejected timed releases (HANDOFF spans too).
	m := f.waitMetric(t, "otelcol_processor_handoff_release_failures", nil, "release_failures to count the rejected releases",
		func(v float64) bool { return v >= float64(spans) })
	if got := m.sum("otelcol_processor_handoff_release_failures", nil); got != float64(spans) {
		t.Errorf("release_failures = %v, want %d (every released span, HANDOFF spans included)", got, spans)
	}
	failed := m.sum("otelcol_exporter_send_failed_spans", nil)
	if failed != float64(spans) {
		t.Errorf("otelcol_exporter_send_failed_spans = %v, want %d (the otlp_http exporter's)", failed, spans)
	}
	if !strings.Contains(f.col.output(), "downstream rejected released traces") {
		t.Errorf("no error log for the rejected release")
	}
	f.requireHealthy(t)
	t.Logf("4 traces, %d spans released; destination got %d requests (all 503); release_failures %v, otlp_http send_failed_spans %v; verdicts and file output complete",
		spans, hits.Load(), m.sum("otelcol_processor_handoff_release_failures", nil), failed)

	// A late span is forwarded inside the receiving call, so the destination's error reaches
	// the client (a retryable 503), although the assertion and file exporters took it.
	var some scaleTrace
	for _, st := range traces {
		some = st
		break
	}
	late := ptrace.NewTraces()
	lrs := late.ResourceSpans().AppendEmpty()
	some.c.td.ResourceSpans().At(0).Resource().CopyTo(lrs.Resource())
	lateSpan := lrs.ScopeSpans().AppendEmpty().Spans().AppendEmpty()
	lateSpan.SetTraceID(traceIDOf(t, some.c.traceID))
	lateSpan.SetSpanID(randomSpanID(rng))
	lateSpan.SetParentSpanID(spanIDOf(t, some.c.agentSpans["triage"]))
	lateSpan.SetName("late straggler")
	err := postOTLP(context.Background(), f.tracesURL, late)
	t.Logf("late span with the destination failing: %v", err)
	if err == nil || !strings.Contains(err.Error(), "503") {
		t.Errorf("late span with a failing destination: %v, want a 503 (the downstream error handed back to the client)", err)
	}
	f.waitMetric(t, "otelcol_processor_handoff_late_spans", nil, "the late span counted", func(v float64) bool { return v == 1 })
	wantSpans[some.c.traceID]++
	f.col.waitForSpans(t, f.spansPath, wantSpans)
	f.requireHealthy(t)
	f.col.stop(t)
}

// ---- a destination that hangs ----

// TestFaultDestinationHangs: a destination that takes each request and never answers (the
// otlp_http exporter's timeout far beyond the test) holds every release worker, the release
// queue fills, and requests wait on backpressure. A client's request still ends with its own
// deadline, and on SIGTERM the collector still exits within shutdown_timeout, well before
// Kubernetes' SIGKILL, counting what it could not forward. Before the fix a request waiting
// on backpressure ignored its context, the receiver's shutdown waited for it, and SIGTERM
// hung until the kill.
func TestFaultDestinationHangs(t *testing.T) {
	letGo := make(chan struct{})
	var hits atomic.Int64
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		hits.Add(1)
		select {
		case <-r.Context().Done():
		case <-letGo:
		}
	}))
	defer srv.Close()
	defer close(letGo) // first (deferred calls run last-in first-out): the handlers return
	f := startFaultCollector(t, func(p *faultParams) {
		p.FailURL, p.FailTimeout, p.ShutdownTimeout = srv.URL+"/v1/traces", "10m", "1s"
	})
	pool := makeScaleTraces(t, newRNG(t), loadCapture(t, "google-adk-ok.json"), loadCapture(t, "strands-ok.json"), 150)

	// Whole traces, one request each with a one-second deadline, until two requests have
	// waited out their deadline on backpressure.
	var acked, timedOut int
	for _, st := range pool {
		ctx, cancel := context.WithTimeout(context.Background(), time.Second)
		err := postOTLP(ctx, f.tracesURL, st.c.td)
		cancel()
		switch {
		case err == nil:
			acked++
		case errors.Is(err, context.DeadlineExceeded):
			timedOut++
		default:
			t.Fatalf("post: %v", err)
		}
		if timedOut == 2 {
			break
		}
		time.Sleep(20 * time.Millisecond)
	}
	if timedOut < 2 {
		t.Fatalf("%d requests acknowledged and none waited on backpressure: the hanging destination never filled the release queue", acked)
	}

	stopAt := time.Now()
	if !f.col.terminate() {
		t.Fatalf("the collector did not exit within %s of SIGTERM (killed): the shutdown waited on the hanging destination", stopTimeout)
	}
	took := time.Since(stopAt)
	out := f.col.output()
	for _, want := range []string{
		"the caller gave up while the release workers were all busy downstream",
		"shutdown budget ran out before every buffered trace was forwarded",
	} {
		if !strings.Contains(out, want) {
			t.Errorf("no log line %q", want)
		}
	}
	t.Logf("%d requests acknowledged, %d ended at their deadline on backpressure; the destination took %d requests and answered none; SIGTERM to exit %s (shutdown_timeout 1s), exit status %v",
		acked, timedOut, hits.Load(), took.Round(time.Millisecond), f.col.waitErr)
}

// ---- shutdown under load ----

func TestFaultShutdownUnderLoad(t *testing.T) { underEachBufferEncoding(t, faultShutdownUnderLoad) }

func faultShutdownUnderLoad(t *testing.T, encoding string) {
	// Traces are never due while the test runs: only the shutdown flush releases them.
	f := startFaultCollector(t, func(p *faultParams) {
		p.QuietPeriod, p.MaxWait, p.BufferEncoding = "60s", "90s", encoding
	})
	f.requireEncoding(t, encoding)
	rng := newRNG(t)
	adk, strands := loadCapture(t, "google-adk-ok.json"), loadCapture(t, "strands-ok.json")
	pool := makeScaleTraces(t, rng, adk, strands, 800)
	ids := make([]string, 0, len(pool))
	for id := range pool {
		ids = append(ids, id)
	}

	// Three clients post whole traces back to back until the collector stops answering.
	var (
		mu       sync.Mutex
		acked    = map[string]bool{}
		attempts atomic.Int64
		next     atomic.Int64
		wg       sync.WaitGroup
		stopping atomic.Bool
	)
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	for range 3 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for {
				i := int(next.Add(1)) - 1
				if i >= len(ids) {
					return
				}
				attempts.Add(1)
				if err := postOTLP(ctx, f.tracesURL, pool[ids[i]].c.td); err != nil {
					if !stopping.Load() {
						t.Errorf("post before shutdown: %v", err)
					}
					return
				}
				mu.Lock()
				acked[ids[i]] = true
				mu.Unlock()
			}
		}()
	}
	m := f.waitMetric(t, "otelcol_processor_handoff_traces_in_memory", nil, "traces buffered", func(v float64) bool { return v >= 40 })
	buffered := m.sum("otelcol_processor_handoff_traces_in_memory", nil)
	stopping.Store(true)
	stopAt := time.Now()
	f.col.stop(t) // SIGTERM with clients still sending; requires a clean exit
	stopTook := time.Since(stopAt)
	wg.Wait()
	if int(next.Load()) >= len(ids) {
		t.Fatalf("the clients sent all %d traces before the shutdown; the test did not stop under load", len(ids))
	}

	// Every acknowledged trace is judged exactly once, marked incomplete, with the verdicts
	// of the whole trace (all of it was buffered).
	results, err := readReport(f.reportPath)
	if err != nil {
		t.Fatal(err)
	}
	got := map[string][]result{}
	for _, r := range results {
		got[r.TraceID] = append(got[r.TraceID], r)
	}
	for id, rs := range got {
		if _, ok := pool[id]; !ok {
			t.Errorf("result for an unknown trace %s", id)
			continue
		}
		if len(rs) != len(pool[id].want) {
			t.Errorf("trace %s: %d results, want %d (judged once)", id, len(rs), len(pool[id].want))
		}
		for _, r := range rs {
			w, ok := pool[id].want[[2]string{r.Case, r.Step}]
			if !ok {
				t.Errorf("trace %s: unexpected result %+v", id, r)
				continue
			}
			if r.Outcome != w.outcome {
				t.Errorf("trace %s %s/%s: outcome %s, want %s (%s)", id, r.Case, r.Step, r.Outcome, w.outcome, r.Message)
			}
			if r.Complete {
				t.Errorf("trace %s %s/%s: trace_complete true, want false (released by the shutdown flush)", id, r.Case, r.Step)
			}
		}
	}
	for id := range acked {
		if len(got[id]) == 0 {
			t.Errorf("acknowledged trace %s never judged", id)
		}
	}

	// And the file exporter has every acknowledged span once, the roots marked.
	forwarded, total, err := readSpans(f.spansPath)
	if err != nil {
		t.Fatal(err)
	}
	for id := range acked {
		st := pool[id]
		count := map[string]int{}
		handoffs := 0
		for _, s := range forwarded[id] {
			count[s.spanID]++
			if s.scope == handoffScope {
				handoffs++
			}
			if s.parentID == "" && s.scope != handoffScope {
				if s.attrs["handoff.trace.complete"] != false || s.attrs["handoff.trace.release_reason"] != "shutdown" {
					t.Errorf("trace %s root span %s: complete=%v release_reason=%v, want false, shutdown", id, s.spanID,
						s.attrs["handoff.trace.complete"], s.attrs["handoff.trace.release_reason"])
				}
			}
		}
		for _, sid := range st.c.spanIDs {
			if count[sid] != 1 {
				t.Errorf("trace %s: acknowledged span %s forwarded %d times, want once", id, sid, count[sid])
			}
		}
		if handoffs != len(st.handoffs) {
			t.Errorf("trace %s: %d HANDOFF spans, want %d", id, handoffs, len(st.handoffs))
		}
	}
	if !strings.Contains(f.col.output(), "handoff processor stopped") {
		t.Errorf("no \"handoff processor stopped\" log line")
	}
	t.Logf("SIGTERM with %v traces buffered and 3 clients sending: %d posts attempted, %d acknowledged; exited cleanly in %s; %d traces judged (all trace_complete=false), %d spans in the file output",
		buffered, attempts.Load(), len(acked), stopTook.Round(time.Millisecond), len(got), total)
}

// ---- malformed OTLP ----

// rawCodec sends bytes as they are over gRPC (for a garbage protobuf request).
type rawCodec struct{}

func (rawCodec) Marshal(v any) ([]byte, error) { return v.([]byte), nil }
func (rawCodec) Unmarshal([]byte, any) error   { return nil }
func (rawCodec) Name() string                  { return "proto" }

func TestFaultMalformedOTLP(t *testing.T) {
	// At level detailed the receivers' HTTP and gRPC servers report their requests, by status.
	f := startFaultCollector(t, func(p *faultParams) { p.MetricsLevel = "detailed" })
	ctx := context.Background()
	garbage := []byte("\x0a\xff\xff\xff\xff\x0fthis is not a protobuf")
	for _, c := range []struct {
		name, contentType string
		body              []byte
		status            int
	}{
		{"garbage protobuf", "application/x-protobuf", garbage, http.StatusBadRequest},
		{"truncated protobuf", "application/x-protobuf", truncatedRequest(t), http.StatusBadRequest},
		{"bad JSON", "application/json", []byte(`{"resourceSpans": [{"scopeSpans": [`), http.StatusBadRequest},
		{"JSON of the wrong shape", "application/json", []byte(`{"resourceSpans": "nope"}`), http.StatusBadRequest},
		{"JSON with a bad trace id", "application/json", []byte(`{"resourceSpans":[{"scopeSpans":[{"spans":[{"traceId":"xyz","spanId":"0102030405060708","name":"s"}]}]}]}`), http.StatusBadRequest},
		{"unknown content type", "text/plain", []byte("hello"), http.StatusUnsupportedMediaType},
	} {
		if err := postRaw(ctx, f.tracesURL, c.contentType, c.body, c.status); err != nil {
			t.Errorf("%s: %v", c.name, err)
		}
		f.requireHealthy(t)
	}
	// The same garbage over gRPC.
	conn, err := grpc.NewClient(f.grpcAddr, grpc.WithTransportCredentials(insecure.NewCredentials()))
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close()
	var out []byte
	err = conn.Invoke(ctx, "/opentelemetry.proto.collector.trace.v1.TraceService/Export", garbage, &out, grpc.ForceCodec(rawCodec{}))
	if code := status.Code(err); code == codes.OK || code == codes.Unavailable {
		t.Errorf("garbage over gRPC: %v, want a rejection", err)
	}
	t.Logf("garbage over gRPC: %v", err)
	f.requireHealthy(t)

	// The collector still serves: a real trace goes through and is judged.
	st := makeScaleTraces(t, newRNG(t), loadCapture(t, "google-adk-ok.json"), loadCapture(t, "strands-ok.json"), 1)
	for id, tr := range st {
		postTraces(t, f.tracesURL, tr.c.td)
		checkResults(t, f.col.waitForResults(t, f.reportPath, map[string]int{id: 6}), map[string]map[[2]string]wantResult{id: tr.want})
		forwarded := f.col.waitForSpans(t, f.spansPath, map[string]int{id: len(tr.c.spanIDs) + 1})
		checkForwarded(t, forwarded, tr.c, tr.handoffs)
	}
	m := scrape(t, f.metricsURL)
	for _, c := range []struct {
		name string
		want float64
	}{
		{"otelcol_receiver_accepted_spans", float64(len(firstTrace(st).c.spanIDs))},
		{"otelcol_receiver_refused_spans", 0},
		{"otelcol_processor_handoff_spans_released", float64(len(firstTrace(st).c.spanIDs))},
	} {
		if got := m.sum(c.name, nil); got != c.want {
			t.Errorf("%s = %v, want %v", c.name, got, c.want)
		}
	}
	// The rejected requests never reach the pipeline (no receiver span metric moves); at
	// level detailed the servers count them by status.
	for _, c := range []struct {
		name   string
		labels map[string]string
		want   float64
	}{
		{"http_server_request_duration_count", map[string]string{"http_route": "/v1/traces", "http_response_status_code": "400"}, 5},
		{"http_server_request_duration_count", map[string]string{"http_route": "/v1/traces", "http_response_status_code": "415"}, 1},
		{"http_server_request_duration_count", map[string]string{"http_route": "/v1/traces", "http_response_status_code": "200"}, 1},
		{"rpc_server_call_duration_count", map[string]string{"rpc_response_status_code": "INTERNAL"}, 1},
	} {
		if got := m.sum(c.name, c.labels); got != c.want {
			t.Errorf("%s%s = %v, want %v; server series:\n%s", c.name, labelString(c.labels), got, c.want, m.names("http_server", "rpc_server"))
		}
	}
	f.requireHealthy(t)
	f.col.stop(t)
}

func firstTrace(m map[string]scaleTrace) scaleTrace {
	for _, st := range m {
		return st
	}
	return scaleTrace{}
}

// truncatedRequest is a valid export request cut in the middle of a span.
func truncatedRequest(t *testing.T) []byte {
	t.Helper()
	body, err := ptraceotlp.NewExportRequestFromTraces(loadCapture(t, "google-adk-ok.json").td).MarshalProto()
	if err != nil {
		t.Fatal(err)
	}
	return body[:len(body)/2+3]
}

// ---- broken span trees ----

func TestFaultParentCycleAndDuplicates(t *testing.T) {
	f := startFaultCollector(t, func(p *faultParams) { p.MaxWait = "2s" })
	rng := newRNG(t)
	tr := firstTrace(makeScaleTraces(t, rng, loadCapture(t, "google-adk-ok.json"), loadCapture(t, "strands-ok.json"), 1))
	traceID := traceIDOf(t, tr.c.traceID)

	// Into the ADK trace: a duplicate of one of the specialist's LLM calls (same span id: its
	// tokens must count once, or the budget verdicts change), a two-span parent loop, and a
	// span that is its own parent.
	ss := tr.c.td.ResourceSpans().At(0).ScopeSpans().At(0)
	parent := map[string]string{}
	eachSpan(tr.c.td, func(_ string, s ptrace.Span) { parent[s.SpanID().String()] = s.ParentSpanID().String() })
	underSpecialist := func(id string) bool {
		for i := 0; id != "" && i < len(parent); i++ {
			if id == tr.c.agentSpans["weather_specialist"] {
				return true
			}
			id = parent[id]
		}
		return false
	}
	var llm ptrace.Span
	found := false
	eachSpan(tr.c.td, func(_ string, s ptrace.Span) {
		if v, ok := s.Attributes().Get("gen_ai.usage.input_tokens"); ok && v.Int() > 0 && !found && underSpecialist(s.SpanID().String()) {
			llm, found = s, true
		}
	})
	if !found {
		t.Fatal("no LLM span with tokens under the specialist in the ADK capture")
	}
	dup := ss.Spans().AppendEmpty()
	llm.CopyTo(dup)
	dup.SetName(llm.Name() + " (duplicate)")
	loopA, loopB, self := randomSpanID(rng), randomSpanID(rng), randomSpanID(rng)
	for _, s := range []struct {
		id, parent pcommon.SpanID
		name       string
	}{{loopA, loopB, "loop a"}, {loopB, loopA, "loop b"}, {self, self, "own parent"}} {
		sp := ss.Spans().AppendEmpty()
		sp.SetTraceID(traceID)
		sp.SetSpanID(s.id)
		sp.SetParentSpanID(s.parent)
		sp.SetName(s.name)
		sp.SetStartTimestamp(llm.StartTimestamp())
		sp.SetEndTimestamp(llm.EndTimestamp())
	}
	inputSpans := tr.c.td.SpanCount()

	// And a trace that is nothing but a parent loop of two agents: no root span ever comes,
	// so max_wait releases it, marked incomplete.
	loopOnly := ptrace.NewTraces()
	lss := loopOnly.ResourceSpans().AppendEmpty().ScopeSpans().AppendEmpty()
	loopTrace := randomTraceID(rng)
	agentA, agentB := randomSpanID(rng), randomSpanID(rng)
	now := time.Now()
	for i, a := range []struct {
		id, parent pcommon.SpanID
		name       string
	}{{agentA, agentB, "alpha"}, {agentB, agentA, "beta"}} {
		sp := lss.Spans().AppendEmpty()
		sp.SetTraceID(loopTrace)
		sp.SetSpanID(a.id)
		sp.SetParentSpanID(a.parent)
		sp.SetName("invoke_agent " + a.name)
		sp.Attributes().PutStr("gen_ai.operation.name", "invoke_agent")
		sp.Attributes().PutStr("gen_ai.agent.name", a.name)
		sp.SetStartTimestamp(pcommon.NewTimestampFromTime(now.Add(time.Duration(i) * time.Millisecond)))
		sp.SetEndTimestamp(pcommon.NewTimestampFromTime(now.Add(time.Second)))
	}

	postTraces(t, f.tracesURL, loopOnly)
	postTraces(t, f.tracesURL, tr.c.td)

	// The ADK verdicts are unchanged: the duplicate is dropped (tokens still 221) and the
	// extra spans are no agents.
	results := f.col.waitForResults(t, f.reportPath, map[string]int{tr.c.traceID: 6, loopTrace.String(): 6})
	var adkResults, loopResults []result
	for _, r := range results {
		if r.TraceID == tr.c.traceID {
			adkResults = append(adkResults, r)
		} else {
			loopResults = append(loopResults, r)
		}
	}
	checkResults(t, adkResults, map[string]map[[2]string]wantResult{tr.c.traceID: tr.want})
	for _, r := range loopResults {
		if r.Complete {
			t.Errorf("loop-only trace %s/%s: trace_complete true, want false (no root: released by max_wait)", r.Case, r.Step)
		}
	}
	t.Logf("loop-only trace verdicts: %s", summarize(loopResults))

	// Every input span forwarded, the duplicate included (the processor forwards what it
	// received; only the DAG drops the copy).
	forwarded := f.col.waitForSpans(t, f.spansPath, map[string]int{tr.c.traceID: inputSpans + 1, loopTrace.String(): 2})
	count := map[string]int{}
	for _, s := range forwarded[tr.c.traceID] {
		count[s.spanID]++
	}
	if n := count[llm.SpanID().String()]; n != 2 {
		t.Errorf("duplicated span %s forwarded %d times, want 2 (both copies)", llm.SpanID(), n)
	}
	for _, id := range []pcommon.SpanID{loopA, loopB, self} {
		if count[id.String()] != 1 {
			t.Errorf("span %s forwarded %d times, want once", id, count[id.String()])
		}
	}
	if got := len(forwarded[tr.c.traceID]); got != inputSpans+1 {
		t.Errorf("%d spans forwarded for the ADK trace, want %d input spans + 1 HANDOFF span", got, inputSpans+1)
	}
	for _, s := range forwarded[loopTrace.String()] {
		if s.parentID == "" {
			t.Errorf("loop-only trace: span %s lost its parent", s)
		}
	}

	m := f.waitMetric(t, "otelcol_processor_handoff_traces_released", map[string]string{"trigger": "timeout"}, "the loop-only trace released by max_wait",
		func(v float64) bool { return v == 1 })
	for _, c := range []struct {
		name   string
		labels map[string]string
		want   float64
	}{
		{"otelcol_processor_handoff_traces_released", map[string]string{"trigger": "root"}, 1},
		{"otelcol_processor_handoff_spans_released", nil, float64(inputSpans + 2)},
		// Each loop (the own-parent span, the two-span one in the ADK trace, the loop-only
		// trace) has one link cut; no span misses its parent; the duplicate is counted.
		{"otelcol_processor_handoff_orphan_spans", nil, 0},
		{"otelcol_processor_handoff_broken_parent_links", nil, 3},
		{"otelcol_processor_handoff_duplicate_spans", nil, 1},
		{"otelcol_exporter_assertion_traces_evaluated", map[string]string{"complete": "false"}, 1},
		{"otelcol_exporter_assertion_traces_evaluated", map[string]string{"complete": "true"}, 1},
	} {
		if got := m.sum(c.name, c.labels); got != c.want {
			t.Errorf("%s%s = %v, want %v", c.name, labelString(c.labels), got, c.want)
		}
	}
	f.requireHealthy(t)
	f.col.stop(t)
}

func summarize(rs []result) string {
	var parts []string
	for _, r := range rs {
		parts = append(parts, fmt.Sprintf("%s/%s=%s (%s)", r.Case, r.Step, r.Outcome, r.Actual))
	}
	return strings.Join(parts, "; ")
}

// ---- a 100k-span trace ----

func TestFaultHugeTrace(t *testing.T) { underEachBufferEncoding(t, faultHugeTrace) }

func faultHugeTrace(t *testing.T, encoding string) {
	const (
		total   = 100_000
		batch   = 5_000
		maxSpan = 10_000
	)
	f := startFaultCollector(t, func(p *faultParams) { p.MaxSpans, p.BufferEncoding = maxSpan, encoding })
	f.requireEncoding(t, encoding)
	rng := newRNG(t)
	traceID := randomTraceID(rng)
	ids := make([]pcommon.SpanID, total)
	for i := range ids {
		ids[i] = randomSpanID(rng)
	}
	start := time.Now()
	// Span 0 is the root; every span i > 0 hangs under (i-1)/10 (depth 5). Spans 0, 1 and 11
	// are agents (a case without `when` judges only traces with an agent, and the part
	// released early must have some). The root goes last, so the trace is never due before
	// it crosses max_spans_per_trace.
	build := func(from, to int) ptrace.Traces {
		td := ptrace.NewTraces()
		rs := td.ResourceSpans().AppendEmpty()
		rs.Resource().Attributes().PutStr("service.name", "huge")
		spans := rs.ScopeSpans().AppendEmpty().Spans()
		spans.EnsureCapacity(to - from)
		for i := from; i < to; i++ {
			s := spans.AppendEmpty()
			s.SetTraceID(traceID)
			s.SetSpanID(ids[i])
			s.SetName("step")
			if i > 0 {
				s.SetParentSpanID(ids[(i-1)/10])
			}
			switch i {
			case 0, 1, 11: // three agents: orchestrator > planner > worker
				name := map[int]string{0: "orchestrator", 1: "planner", 11: "worker"}[i]
				s.SetName("invoke_agent " + name)
				s.Attributes().PutStr("gen_ai.operation.name", "invoke_agent")
				s.Attributes().PutStr("gen_ai.agent.name", name)
			}
			s.SetStartTimestamp(pcommon.NewTimestampFromTime(start.Add(time.Duration(i) * time.Microsecond)))
			s.SetEndTimestamp(pcommon.NewTimestampFromTime(start.Add(time.Duration(i+1) * time.Microsecond)))
		}
		return td
	}
	sendStart := time.Now()
	for from := 1; from < total; from += batch {
		postTraces(t, f.tracesURL, build(from, min(from+batch, total)))
	}
	postTraces(t, f.tracesURL, build(0, 1))
	sent := time.Since(sendStart)

	// The third batch crosses max_spans_per_trace: the trace leaves at once with 15000
	// spans (too_large, incomplete); every later span is late and forwarded as it comes.
	released := 3 * batch
	m := f.waitMetric(t, "otelcol_exporter_assertion_late_spans", nil, "every span through", func(v float64) bool { return v >= float64(total-released) })
	for _, c := range []struct {
		name   string
		labels map[string]string
		want   float64
	}{
		{"otelcol_processor_handoff_traces_too_large", nil, 1},
		{"otelcol_processor_handoff_traces_released", map[string]string{"trigger": "too_large"}, 1},
		{"otelcol_processor_handoff_traces_released", nil, 1},
		{"otelcol_processor_handoff_spans_released", nil, float64(released)},
		{"otelcol_processor_handoff_late_spans", nil, float64(total - released)},
		{"otelcol_processor_handoff_spans_in_memory", nil, 0},
		{"otelcol_processor_handoff_traces_in_memory", nil, 0},
		{"otelcol_exporter_assertion_late_spans", nil, float64(total - released)},
		{"otelcol_exporter_assertion_traces_evaluated", map[string]string{"complete": "false"}, 1},
		{"otelcol_receiver_accepted_spans", nil, total},
	} {
		if got := m.sum(c.name, c.labels); got != c.want {
			t.Errorf("%s%s = %v, want %v", c.name, labelString(c.labels), got, c.want)
		}
	}
	results := f.col.waitForResults(t, f.reportPath, map[string]int{traceID.String(): 6})
	for _, r := range results {
		if r.Complete {
			t.Errorf("%s/%s: trace_complete true, want false (too_large)", r.Case, r.Step)
		}
	}
	if len(results) != 6 {
		t.Errorf("%d results, want 6 (judged once)", len(results))
	}

	// Every span in the file output exactly once.
	// The early release leaves from a release worker, so the late spans (the root among them)
	// may be written before it: wait for every span id, not for a span count.
	var counts map[pcommon.SpanID]int
	f.col.eventually(t, resultTimeout, "100000 spans in the file output", func() (bool, string) {
		var n int
		counts, n = countSpanIDs(t, f.spansPath)
		missing := 0
		for _, id := range ids {
			if counts[id] == 0 {
				missing++
			}
		}
		return missing == 0, fmt.Sprintf("%d spans, %d of the sent ones missing", n, missing)
	})
	for i, id := range ids {
		if counts[id] != 1 {
			t.Fatalf("span %d (%s) forwarded %d times, want once", i, id, counts[id])
		}
	}
	f.requireHealthy(t)
	t.Logf("100000 spans in %d batches sent in %s; released too_large with %d spans, %d late spans forwarded; all in the file output once (+%d HANDOFF span); verdicts trace_complete=false",
		(total+batch-1)/batch+1, sent.Round(time.Millisecond), released, total-released, len(counts)-total)
	f.col.stop(t)
}

// countSpanIDs counts the span ids of a file exporter output (no attribute decoding).
func countSpanIDs(t *testing.T, path string) (map[pcommon.SpanID]int, int) {
	t.Helper()
	lines, err := completeLines(path)
	if os.IsNotExist(err) {
		return nil, 0
	}
	if err != nil {
		t.Fatal(err)
	}
	counts := map[pcommon.SpanID]int{}
	n := 0
	for _, td := range fileTraces(t, lines) {
		eachSpan(td, func(_ string, s ptrace.Span) {
			counts[s.SpanID()]++
			n++
		})
	}
	return counts, n
}

// ---- a 1 MB attribute ----

func TestFaultHugeAttribute(t *testing.T) { underEachBufferEncoding(t, faultHugeAttribute) }

func faultHugeAttribute(t *testing.T, encoding string) {
	f := startFaultCollector(t, func(p *faultParams) { p.BufferEncoding = encoding })
	f.requireEncoding(t, encoding)
	tr := firstTrace(makeScaleTraces(t, newRNG(t), loadCapture(t, "google-adk-ok.json"), loadCapture(t, "strands-ok.json"), 1))
	// 1 MB on the specialist's agent span, in the first key of the input chain: it becomes
	// the HANDOFF span's scope_prompt, capped by content.max_bytes (4096).
	big := strings.Repeat("weather in Paris? ", (1<<20)/18+1)[:1<<20]
	specialist := tr.c.agentSpans["weather_specialist"]
	eachSpan(tr.c.td, func(_ string, s ptrace.Span) {
		if s.SpanID().String() == specialist {
			s.Attributes().PutStr("gen_ai.input.messages", big)
			s.Attributes().PutStr("app.blob", big)
		}
	})
	postTraces(t, f.tracesURL, tr.c.td)
	checkResults(t, f.col.waitForResults(t, f.reportPath, map[string]int{tr.c.traceID: 6}), map[string]map[[2]string]wantResult{tr.c.traceID: tr.want})
	forwarded := f.col.waitForSpans(t, f.spansPath, map[string]int{tr.c.traceID: len(tr.c.spanIDs) + 1})
	checkForwarded(t, forwarded, tr.c, tr.handoffs)
	for _, s := range forwarded[tr.c.traceID] {
		switch {
		case s.spanID == specialist:
			if v, _ := s.attrs["app.blob"].(string); v != big {
				t.Errorf("the 1 MB attribute came out with %d bytes, want it intact", len(v))
			}
		case s.scope == handoffScope:
			p, _ := s.attrs["handoff.scope_prompt"].(string)
			if len(p) == 0 || len(p) > 4096 {
				t.Errorf("HANDOFF scope_prompt has %d bytes, want 1..4096 (content.max_bytes)", len(p))
			}
			t.Logf("HANDOFF scope_prompt: %d bytes (from %v), the 1 MB value capped", len(p), s.attrs["handoff.scope_prompt.source"])
		}
	}
	m := scrape(t, f.metricsURL)
	if got := m.sum("otelcol_processor_handoff_spans_released", nil); got != float64(len(tr.c.spanIDs)) {
		t.Errorf("spans_released = %v, want %d", got, len(tr.c.spanIDs))
	}
	if got := m.sum("otelcol_processor_handoff_traces_released", map[string]string{"trigger": "root"}); got != 1 {
		t.Errorf("traces_released{trigger=root} = %v, want 1", got)
	}
	f.requireHealthy(t)
	f.col.stop(t)
}

// ---- invalid UTF-8 ----

func TestFaultInvalidUTF8(t *testing.T) { underEachBufferEncoding(t, faultInvalidUTF8) }

func faultInvalidUTF8(t *testing.T, encoding string) {
	f := startFaultCollector(t, func(p *faultParams) { p.BufferEncoding = encoding })
	f.requireEncoding(t, encoding)
	rng := newRNG(t)
	adk, strands := loadCapture(t, "google-adk-ok.json"), loadCapture(t, "strands-ok.json")
	bad := "caf\xe9 \xff\xfe r\xc3sum\xc3" // Latin-1 bytes and broken sequences
	if utf8.ValidString(bad) {
		t.Fatal("the test string is valid UTF-8")
	}
	conn, err := grpc.NewClient(f.grpcAddr, grpc.WithTransportCredentials(insecure.NewCredentials()))
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close()
	client := ptraceotlp.NewGRPCClient(conn)

	accepted := map[string]scaleTrace{}
	for _, transport := range []string{"http", "grpc"} {
		tr := firstTrace(makeScaleTraces(t, rng, adk, strands, 1))
		specialist := tr.c.agentSpans["weather_specialist"]
		eachSpan(tr.c.td, func(_ string, s ptrace.Span) {
			s.Attributes().PutStr("app.note", bad)
			if s.SpanID().String() == specialist {
				s.Attributes().PutStr("gen_ai.input.messages", bad) // into the HANDOFF span
			}
		})
		// pdata marshals the raw bytes as they are: check the request really carries them.
		body, err := ptraceotlp.NewExportRequestFromTraces(tr.c.td).MarshalProto()
		if err != nil {
			t.Fatal(err)
		}
		if !strings.Contains(string(body), bad) {
			t.Fatal("the marshalled request does not carry the invalid bytes")
		}
		switch transport {
		case "http":
			err = postRaw(context.Background(), f.tracesURL, "application/x-protobuf", body, http.StatusOK)
		case "grpc":
			err = grpcExport(context.Background(), client, tr.c.td)
		}
		t.Logf("invalid UTF-8 over %s: %v", transport, err)
		if err != nil {
			t.Errorf("invalid UTF-8 over %s refused: %v", transport, err)
			continue
		}
		accepted[tr.c.traceID] = tr
	}
	f.requireHealthy(t)
	if len(accepted) == 0 {
		t.FailNow()
	}
	want := map[string]map[[2]string]wantResult{}
	perTrace, perTraceSpans := map[string]int{}, map[string]int{}
	for id, tr := range accepted {
		want[id], perTrace[id], perTraceSpans[id] = tr.want, 6, len(tr.c.spanIDs)+1
	}
	checkResults(t, f.col.waitForResults(t, f.reportPath, perTrace), want)
	forwarded := f.col.waitForSpans(t, f.spansPath, perTraceSpans)
	for id, tr := range accepted {
		checkForwarded(t, forwarded, tr.c, tr.handoffs)
		for _, s := range forwarded[id] {
			if s.scope == handoffScope {
				p, _ := s.attrs["handoff.scope_prompt"].(string)
				if !utf8.ValidString(p) || !strings.Contains(p, "\ufffd") {
					t.Errorf("HANDOFF scope_prompt %q: want valid UTF-8 with U+FFFD for the invalid bytes", p)
				}
				continue
			}
			if v, _ := s.attrs["app.note"].(string); v != bad {
				t.Logf("span %s app.note came out of the file exporter as %q (sent %q)", s.spanID, v, bad)
			}
		}
	}
	raw, err := os.ReadFile(f.spansPath)
	if err != nil {
		t.Fatal(err)
	}
	// The contrib file exporter writes the bytes as they came (its JSON is then not valid
	// UTF-8); the verdict report is.
	t.Logf("file exporter output: valid UTF-8 %v, carries the raw bytes %v", utf8.Valid(raw), strings.Contains(string(raw), bad))
	if report, err := os.ReadFile(f.reportPath); err != nil || !utf8.Valid(report) {
		t.Errorf("verdict report: %v, valid UTF-8 %v", err, utf8.Valid(report))
	}
	m := scrape(t, f.metricsURL)
	spans := 0
	for _, tr := range accepted {
		spans += len(tr.c.spanIDs)
	}
	if got := m.sum("otelcol_processor_handoff_spans_released", nil); got != float64(spans) {
		t.Errorf("spans_released = %v, want %d", got, spans)
	}
	f.requireHealthy(t)
	f.col.stop(t)
}
