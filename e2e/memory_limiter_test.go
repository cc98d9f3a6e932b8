package e2e

import (
	"bytes"
	"context"
	"fmt"
	"io"
	"math/rand/v2"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strconv"
	"sync"
	"testing"
	"time"

	"go.opentelemetry.io/collector/pdata/pcommon"
	"go.opentelemetry.io/collector/pdata/ptrace"
	"go.opentelemetry.io/collector/pdata/ptrace/ptraceotlp"

	"github.com/otelcol-handoff/otelcol-handoff/internal/agentgraph"
	"github.com/otelcol-handoff/otelcol-handoff/internal/procstat"
	"github.com/otelcol-handoff/otelcol-handoff/internal/workload"
)

// TestMemoryLimiterHoldsUnderOverloadAndLosesNothingAcknowledged puts the memory_limiter in
// front of the handoff processor with a limit far below what the offered traces need while
// buffered (45,140 spans of the real-capture workload, about 50 MB held, against a 30 MiB
// soft limit) and offers them all at once from clients that retry as the OTLP/HTTP exporter
// does. The limiter refuses with a retryable status, the clients back off and retry, the
// processor releases what it holds after its quiet period, and in the end every span the
// collector acknowledged reaches the OTLP sink exactly once. No assertion is about time or
// memory figures; the refusals follow from the volume (held for the 2 s quiet period, what
// the clients offer is over the limit unless they send less than 10 MB/s over loopback from
// bodies encoded beforehand); the only waits are for the clients to finish and for the sink
// to receive what was acknowledged.
func TestMemoryLimiterHoldsUnderOverloadAndLosesNothingAcknowledged(t *testing.T) {
	w, err := workload.LoadCaptures(filepath.Join("..", "testdata", "traces"), 240)
	if err != nil {
		t.Fatal(err)
	}
	// One request per trace, with fresh ids; every span sent is remembered.
	rng := newRNG(t)
	sent := map[spanKey]bool{}
	bodies := make([][]byte, len(w.Templates))
	spansIn := make([]int, len(w.Templates))
	otlpBytes := 0
	for i := range w.Templates {
		td := w.Trace(i, rng, 1)[0]
		eachSpan(td, func(_ string, s ptrace.Span) { sent[keyOf(s)] = true })
		spansIn[i] = td.SpanCount()
		if bodies[i], err = ptraceotlp.NewExportRequestFromTraces(td).MarshalProto(); err != nil {
			t.Fatal(err)
		}
		otlpBytes += len(bodies[i])
	}

	sink := newSpanSink()
	srv := httptest.NewServer(sink)
	defer srv.Close()

	ports := freePorts(t, 3)
	httpPort, healthPort, metricsPort := ports[0], ports[1], ports[2]
	cfg := filepath.Join(t.TempDir(), "collector.yaml")
	if err := os.WriteFile(cfg, []byte(fmt.Sprintf(`
receivers: {otlp: {protocols: {http: {endpoint: "127.0.0.1:%d"}}}}
processors:
  memory_limiter: {check_interval: 20ms, limit_mib: 50, spike_limit_mib: 20}
  handoff: {quiet_period: 2s, max_wait: 4s}
exporters:
  otlp_http:
    traces_endpoint: %s/v1/traces
    compression: none
    retry_on_failure: {enabled: true, initial_interval: 50ms, max_interval: 500ms, max_elapsed_time: 0s}
extensions: {health_check: {endpoint: "127.0.0.1:%d"}}
service:
  extensions: [health_check]
  pipelines: {traces: {receivers: [otlp], processors: [memory_limiter, handoff], exporters: [otlp_http]}}
  telemetry:
    logs: {level: warn}
    metrics: {readers: [{pull: {exporter: {prometheus: {host: 127.0.0.1, port: %d}}}}]}
`, httpPort, srv.URL, healthPort, metricsPort)), 0o600); err != nil {
		t.Fatal(err)
	}
	c := startCollector(t, collectorBinary(t), cfg)
	c.waitReady(t, fmt.Sprintf("http://127.0.0.1:%d/", healthPort))

	// Eight clients take the requests in turn; each retries a request until it is accepted.
	url := fmt.Sprintf("http://127.0.0.1:%d/v1/traces", httpPort)
	ctx, cancel := context.WithTimeout(context.Background(), 3*time.Minute)
	defer cancel()
	var mu sync.Mutex
	acked := map[spanKey]bool{}
	refusals := map[int]int{} // HTTP status → requests refused
	refusedSpans := 0
	var wg sync.WaitGroup
	next := make(chan int, len(bodies))
	for i := range bodies {
		next <- i
	}
	close(next)
	errs := make(chan error, 8)
	for range 8 {
		wg.Go(func() {
			client := &retryingExporter{client: &http.Client{Timeout: 30 * time.Second}, url: url}
			for i := range next {
				refused, err := client.export(ctx, bodies[i])
				mu.Lock()
				for code, n := range refused {
					refusals[code] += n
					refusedSpans += n * spansIn[i]
				}
				mu.Unlock()
				if err != nil {
					errs <- err
					return
				}
				req := ptraceotlp.NewExportRequest()
				if err := req.UnmarshalProto(bodies[i]); err != nil {
					errs <- err
					return
				}
				mu.Lock()
				eachSpan(req.Traces(), func(_ string, s ptrace.Span) { acked[keyOf(s)] = true })
				mu.Unlock()
			}
		})
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		t.Fatal(err)
	}

	// The limiter refused, and only with a status the OTLP exporter retries.
	total := 0
	for code, n := range refusals {
		if !retryableStatus(code) {
			t.Errorf("%d requests refused with HTTP %d, which the OTLP exporter does not retry", n, code)
		}
		total += n
	}
	if total == 0 {
		t.Fatalf("no request was refused: the memory_limiter never held the limit (%d spans, 30 MiB soft limit)", len(sent))
	}
	m := scrape(t, fmt.Sprintf("http://127.0.0.1:%d/metrics", metricsPort))
	// Every refusal was the limiter's, and the receiver told the clients about each one.
	for _, name := range []string{"otelcol_processor_memory_limiter_refused_spans", "otelcol_receiver_refused_spans"} {
		if got := m.sum(name, nil); int(got) != refusedSpans {
			t.Errorf("%s = %v, the clients had %d spans refused", name, got, refusedSpans)
		}
	}
	if len(acked) != len(sent) {
		t.Fatalf("%d of %d spans acknowledged after retries", len(acked), len(sent))
	}

	// Every acknowledged span arrives at the sink once; nothing else but HANDOFF spans.
	c.eventually(t, time.Minute, "every acknowledged span at the sink", func() (bool, string) {
		n := sink.count()
		return n >= len(acked), fmt.Sprintf("%d of %d acknowledged spans at the sink", n, len(acked))
	})
	got := sink.snapshot()
	for id := range acked {
		if got[id] != 1 {
			t.Errorf("acknowledged span %s/%s reached the sink %d times", id.trace, id.span, got[id])
		}
	}
	for id := range got {
		if !acked[id] {
			t.Errorf("span %s/%s at the sink was never acknowledged", id.trace, id.span)
		}
	}
	peak, err := procstat.PeakRSSBytes(c.cmd.Process.Pid)
	if err != nil {
		t.Fatal(err)
	}
	t.Logf("%d spans (%d OTLP bytes) in %d requests; refusals by HTTP status: %v (%d spans); all %d acknowledged spans at the sink once; collector peak RSS %d MB",
		len(sent), otlpBytes, len(bodies), refusals, refusedSpans, len(acked), peak/1e6)
	c.stop(t)
}

// retryableStatus is the OTLP/HTTP exporter's set of retryable statuses
// (otlphttpexporter isRetryableStatusCode).
func retryableStatus(code int) bool {
	switch code {
	case http.StatusTooManyRequests, http.StatusBadGateway, http.StatusServiceUnavailable, http.StatusGatewayTimeout:
		return true
	}
	return false
}

// retryingExporter sends as the collector's OTLP/HTTP exporter does with retry_on_failure:
// a retryable status (429, 502, 503, 504) is retried after Retry-After when the server
// sends one, else after an exponential backoff (here from 20 ms, ×1.5, at most 500 ms, with
// jitter, instead of the exporter's 5 s to 30 s); any other non-200 status is permanent.
type retryingExporter struct {
	client *http.Client
	url    string
}

func (e *retryingExporter) export(ctx context.Context, body []byte) (refused map[int]int, err error) {
	refused = map[int]int{}
	backoff := 20 * time.Millisecond
	for {
		req, err := http.NewRequestWithContext(ctx, http.MethodPost, e.url, bytes.NewReader(body))
		if err != nil {
			return refused, err
		}
		req.Header.Set("Content-Type", "application/x-protobuf")
		resp, err := e.client.Do(req)
		if err != nil {
			return refused, fmt.Errorf("export: %w", err)
		}
		_, _ = io.Copy(io.Discard, resp.Body)
		resp.Body.Close()
		if resp.StatusCode == http.StatusOK {
			return refused, nil
		}
		if !retryableStatus(resp.StatusCode) {
			return refused, fmt.Errorf("export: permanent HTTP %s", resp.Status)
		}
		refused[resp.StatusCode]++
		wait := time.Duration(float64(backoff) * (0.5 + rand.Float64()))
		if s, err := strconv.Atoi(resp.Header.Get("Retry-After")); err == nil {
			wait = time.Duration(s) * time.Second
		}
		backoff = min(time.Duration(float64(backoff)*1.5), 500*time.Millisecond)
		select {
		case <-ctx.Done():
			return refused, fmt.Errorf("export: still refused (%v) when the test's budget ran out", refused)
		case <-time.After(wait):
		}
	}
}

// spanKey names a span: the workload's traces reuse their capture's span ids, with a trace
// id of their own.
type spanKey struct {
	trace pcommon.TraceID
	span  pcommon.SpanID
}

func keyOf(s ptrace.Span) spanKey { return spanKey{s.TraceID(), s.SpanID()} }

// spanSink is an OTLP/HTTP traces endpoint that counts every received span id, HANDOFF
// spans (the processor's own) aside.
type spanSink struct {
	mu  sync.Mutex
	ids map[spanKey]int
	n   int
}

func newSpanSink() *spanSink { return &spanSink{ids: map[spanKey]int{}} }

func (s *spanSink) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	body, err := io.ReadAll(r.Body)
	req := ptraceotlp.NewExportRequest()
	if err == nil {
		err = req.UnmarshalProto(body)
	}
	if err != nil {
		http.Error(w, err.Error(), http.StatusBadRequest)
		return
	}
	s.mu.Lock()
	eachSpan(req.Traces(), func(scope string, sp ptrace.Span) {
		if scope != agentgraph.ScopeName {
			s.ids[keyOf(sp)]++
			s.n++
		}
	})
	s.mu.Unlock()
	out, _ := ptraceotlp.NewExportResponse().MarshalProto()
	w.Header().Set("Content-Type", "application/x-protobuf")
	_, _ = w.Write(out)
}

func (s *spanSink) count() int {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.n
}

func (s *spanSink) snapshot() map[spanKey]int {
	s.mu.Lock()
	defer s.mu.Unlock()
	out := make(map[spanKey]int, len(s.ids))
	for id, n := range s.ids {
		out[id] = n
	}
	return out
}
