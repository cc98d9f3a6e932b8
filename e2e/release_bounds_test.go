package e2e

// Release bounds: the handoff processor's batches must fit what a standard OTLP/gRPC
// receiver accepts (4 MiB per message by default). Tier 1 is the built collector with the
// handoff processor and an otlp exporter with the collector's defaults; tier 2 is a second
// collector whose otlp receiver keeps its default max_recv_msg_size and writes every span
// it accepts to a file. Two moments put many traces in motion at once: thousands of
// traces whose quiet periods end together, and a SIGTERM with a large buffer. In both,
// every span must reach tier 2 exactly once.

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"go.opentelemetry.io/collector/pdata/pcommon"
	"go.opentelemetry.io/collector/pdata/ptrace"
)

const (
	// Traces of each case; about 13 KB of OTLP protobuf each (Google ADK and Strands
	// captures), so both loads are several times the 4 MiB message limit.
	simultaneousTraces = 2000
	shutdownTraces     = 1000
	// releaseTimeout bounds each wait for tier 2 to have written everything.
	releaseTimeout = 90 * time.Second
	// grpcDefaultMaxRecv is the otlp receiver's default max_recv_msg_size.
	grpcDefaultMaxRecv = 4 << 20
)

// releaseTier1Params fills testdata/release_tier1.yaml.tmpl.
type releaseTier1Params struct {
	HTTPPort, HealthPort, MetricsPort, Tier2Port int
	QuietPeriod, MaxWait                         string
}

// releaseTier2Params fills testdata/release_tier2.yaml.tmpl.
type releaseTier2Params struct {
	GRPCPort, HealthPort, MetricsPort int
	SpansPath                         string
}

type releasePair struct {
	tier1, tier2 *instance
	tracesURL    string // tier 1 OTLP/HTTP
}

// startReleasePair starts tier 2, then tier 1 (its exporter connects at once), and waits
// for both.
func startReleasePair(t *testing.T, quiet, maxWait string) *releasePair {
	t.Helper()
	bin := collectorBinary(t)
	dir := t.TempDir()
	ports := freePorts(t, 6)
	p2 := releaseTier2Params{GRPCPort: ports[0], HealthPort: ports[1], MetricsPort: ports[2], SpansPath: filepath.Join(dir, "tier2-spans.jsonl")}
	p1 := releaseTier1Params{HTTPPort: ports[3], HealthPort: ports[4], MetricsPort: ports[5], Tier2Port: p2.GRPCPort, QuietPeriod: quiet, MaxWait: maxWait}
	d1, d2 := filepath.Join(dir, "tier1"), filepath.Join(dir, "tier2")
	for _, d := range []string{d1, d2} {
		if err := os.Mkdir(d, 0o755); err != nil {
			t.Fatal(err)
		}
	}
	t2 := startInstance(t, bin, "tier2", renderConfig(t, d2, "release_tier2.yaml.tmpl", p2), p2.HealthPort, p2.MetricsPort)
	t2.spansPath = p2.SpansPath
	// Tier 2 listens before tier 1 starts: a gRPC client whose first dial is refused waits
	// out a reconnect backoff, and an export in that window fails at once; at SIGTERM the
	// exporter drops it instead of retrying (seen on a loaded CI machine).
	t2.col.waitReady(t, t2.healthURL)
	t1 := startInstance(t, bin, "tier1", renderConfig(t, d1, "release_tier1.yaml.tmpl", p1), p1.HealthPort, p1.MetricsPort)
	t1.col.waitReady(t, t1.healthURL)
	return &releasePair{tier1: t1, tier2: t2, tracesURL: fmt.Sprintf("http://127.0.0.1:%d/v1/traces", p1.HTTPPort)}
}

// releaseLoad is the traffic of one case: cloned captures with fresh ids, their non-root
// spans in requests of about 2000 spans, and every root span in one last request.
type releaseLoad struct {
	ids      map[pcommon.SpanID]bool
	handoffs int // HANDOFF spans tier 1 adds
	bytes    int // OTLP protobuf size of the input
	rest     []ptrace.Traces
	roots    ptrace.Traces
}

func makeReleaseLoad(t *testing.T, n int) releaseLoad {
	t.Helper()
	rng := newRNG(t)
	traces := makeScaleTraces(t, rng, loadCapture(t, "google-adk-ok.json"), loadCapture(t, "strands-ok.json"), n)
	load := releaseLoad{ids: map[pcommon.SpanID]bool{}, roots: ptrace.NewTraces()}
	var sizer ptrace.ProtoMarshaler
	cur := ptrace.NewTraces()
	for _, st := range traces {
		eachSpan(st.c.td, func(_ string, s ptrace.Span) { load.ids[s.SpanID()] = true })
		load.handoffs += len(st.handoffs)
		load.bytes += sizer.TracesSize(st.c.td)
		rest, root := splitRoot(st.c.td)
		rest.ResourceSpans().MoveAndAppendTo(cur.ResourceSpans())
		root.ResourceSpans().MoveAndAppendTo(load.roots.ResourceSpans())
		if cur.SpanCount() >= 2000 {
			load.rest = append(load.rest, cur)
			cur = ptrace.NewTraces()
		}
	}
	if cur.SpanCount() > 0 {
		load.rest = append(load.rest, cur)
	}
	if load.bytes <= 2*grpcDefaultMaxRecv {
		t.Fatalf("load of %d bytes: want well over the 4 MiB message limit", load.bytes)
	}
	return load
}

// splitRoot separates the root span (no parent) from the rest of a trace.
func splitRoot(td ptrace.Traces) (rest, root ptrace.Traces) {
	rest, root = ptrace.NewTraces(), ptrace.NewTraces()
	td.CopyTo(rest)
	td.CopyTo(root)
	for _, rs := range rest.ResourceSpans().All() {
		for _, ss := range rs.ScopeSpans().All() {
			ss.Spans().RemoveIf(func(s ptrace.Span) bool { return s.ParentSpanID().IsEmpty() })
		}
	}
	for _, rs := range root.ResourceSpans().All() {
		for _, ss := range rs.ScopeSpans().All() {
			ss.Spans().RemoveIf(func(s ptrace.Span) bool { return !s.ParentSpanID().IsEmpty() })
		}
	}
	pruneEmpty(rest)
	pruneEmpty(root)
	return rest, root
}

func (l releaseLoad) spans() int { return len(l.ids) }

// tier2Output is what tier 2 wrote: span id counts, and one entry per accepted message.
type tier2Output struct {
	acceptedAt time.Time // when tier 2's receiver had accepted every span

	counts        map[pcommon.SpanID]int
	spans         int
	batchSpans    []int
	batchBytes    []int
	handoffSpans  int
	maxBatchSpans int
	maxBatchBytes int
}

func readTier2(t *testing.T, path string) tier2Output {
	t.Helper()
	out := tier2Output{counts: map[pcommon.SpanID]int{}}
	lines, err := completeLines(path)
	if os.IsNotExist(err) {
		return out
	}
	if err != nil {
		t.Fatal(err)
	}
	var sizer ptrace.ProtoMarshaler
	for _, td := range fileTraces(t, lines) {
		eachSpan(td, func(scope string, s ptrace.Span) {
			out.counts[s.SpanID()]++
			out.spans++
			if scope == handoffScope {
				out.handoffSpans++
			}
		})
		n, b := td.SpanCount(), sizer.TracesSize(td)
		out.batchSpans = append(out.batchSpans, n)
		out.batchBytes = append(out.batchBytes, b)
		out.maxBatchSpans = max(out.maxBatchSpans, n)
		out.maxBatchBytes = max(out.maxBatchBytes, b)
	}
	return out
}

// waitTier2 waits until tier 2 has accepted and written want spans, failing at once when
// tier 1's exporter reports a failed send (the symptom of an oversized batch).
func waitTier2(t *testing.T, pair *releasePair, want int, tier1Running bool) tier2Output {
	t.Helper()
	pair.tier2.col.eventually(t, releaseTimeout, fmt.Sprintf("%d spans accepted by tier 2", want), func() (bool, string) {
		if tier1Running {
			if failed := scrape(t, pair.tier1.metricsURL).sum("otelcol_exporter_send_failed_spans", nil); failed > 0 {
				t.Fatalf("tier 1 exporter failed to send %v spans (rejected by tier 2?)\ntier 1 output:\n%s", failed, tail(pair.tier1.col.output(), 4000))
			}
		}
		got := scrape(t, pair.tier2.metricsURL).sum("otelcol_receiver_accepted_spans", nil)
		return got >= float64(want), fmt.Sprintf("tier 2 accepted %v spans", got)
	})
	acceptedAt := time.Now()
	var out tier2Output
	pair.tier2.col.eventually(t, releaseTimeout, fmt.Sprintf("%d spans in tier 2's file", want), func() (bool, string) {
		out = readTier2(t, pair.tier2.spansPath)
		return out.spans >= want, fmt.Sprintf("%d spans written", out.spans)
	})
	out.acceptedAt = acceptedAt
	return out
}

// checkExactlyOnce: every input span once at tier 2, and nothing else but the HANDOFF
// spans tier 1 added, each once.
func checkExactlyOnce(t *testing.T, load releaseLoad, out tier2Output) {
	t.Helper()
	for id := range load.ids {
		if n := out.counts[id]; n != 1 {
			t.Fatalf("span %s reached tier 2 %d times, want once", id, n)
		}
	}
	if out.handoffSpans != load.handoffs {
		t.Errorf("tier 2 got %d HANDOFF spans, want %d", out.handoffSpans, load.handoffs)
	}
	if want := load.spans() + load.handoffs; out.spans != want || len(out.counts) != want {
		t.Errorf("tier 2 got %d spans (%d distinct), want %d", out.spans, len(out.counts), want)
	}
	if out.maxBatchBytes > grpcDefaultMaxRecv {
		t.Errorf("tier 2 accepted a message of %d bytes, over the 4 MiB limit it was meant to enforce", out.maxBatchBytes)
	}
}

func tail(s string, n int) string {
	if len(s) <= n {
		return s
	}
	return "..." + s[len(s)-n:]
}

func post(t *testing.T, pair *releasePair, load releaseLoad, roots bool) time.Duration {
	t.Helper()
	began := time.Now()
	for _, td := range load.rest {
		postTraces(t, pair.tracesURL, td)
	}
	if roots {
		postTraces(t, pair.tracesURL, load.roots)
	}
	return time.Since(began)
}

// (a) Thousands of traces whose quiet periods end together: their non-root spans first
// (no root, so nothing is due before max_wait), then every root in one request. About
// 26 MB leave tier 1 within moments; no batch may go over 4 MiB.
func TestReleaseBoundsSimultaneousRelease(t *testing.T) {
	began := time.Now()
	pair := startReleasePair(t, "2s", "60s")
	load := makeReleaseLoad(t, simultaneousTraces)
	want := load.spans() + load.handoffs

	sendTime := post(t, pair, load, false)
	rootsAt := time.Now()
	postTraces(t, pair.tracesURL, load.roots)
	out := waitTier2(t, pair, want, true)
	elapsed := out.acceptedAt.Sub(rootsAt)
	peak, err := vmHWM(pair.tier1.col.cmd.Process.Pid)
	if err != nil {
		t.Fatal(err)
	}
	checkExactlyOnce(t, load, out)

	m1 := scrape(t, pair.tier1.metricsURL)
	for _, c := range []struct {
		name string
		want float64
	}{
		{"otelcol_processor_handoff_release_failures", 0},
		{"otelcol_processor_handoff_release_failed_traces", 0},
		{"otelcol_processor_handoff_traces_released", simultaneousTraces},
		{"otelcol_processor_handoff_traces_in_memory", 0},
		{"otelcol_processor_handoff_spans_in_memory", 0},
		{"otelcol_exporter_send_failed_spans", 0},
		{"otelcol_exporter_sent_spans", float64(want)},
		{"otelcol_receiver_accepted_spans", float64(load.spans())},
	} {
		if got := m1.sum(c.name, nil); got != c.want {
			t.Errorf("tier 1 %s = %v, want %v", c.name, got, c.want)
		}
	}
	if got := scrape(t, pair.tier2.metricsURL).sum("otelcol_receiver_refused_spans", nil); got != 0 {
		t.Errorf("tier 2 refused %v spans", got)
	}
	t.Logf("%d traces, %d spans (%d bytes of OTLP) in, non-root spans sent in %s, roots in one request; %d spans out (%d HANDOFF) in %d messages (largest %d spans, %d bytes; limit %d), all accepted by tier 2 %s after the roots (quiet_period 2s); tier 1 peak RSS %d MB; total %s",
		simultaneousTraces, load.spans(), load.bytes, sendTime.Round(time.Millisecond), out.spans, out.handoffSpans,
		len(out.batchSpans), out.maxBatchSpans, out.maxBatchBytes, grpcDefaultMaxRecv, elapsed.Round(time.Millisecond), peak/1024, time.Since(began).Round(time.Millisecond))
	pair.tier1.col.stop(t)
	pair.tier2.col.stop(t)
}

// (b) SIGTERM with a large buffer: quiet_period and max_wait far away, so everything is
// still buffered when the signal comes; the shutdown flush must send it all, in batches
// tier 2 accepts, within the default shutdown_timeout.
func TestReleaseBoundsShutdownFlush(t *testing.T) {
	began := time.Now()
	pair := startReleasePair(t, "5m", "10m")
	load := makeReleaseLoad(t, shutdownTraces)
	want := load.spans() + load.handoffs

	sendTime := post(t, pair, load, true)
	pair.tier1.col.eventually(t, releaseTimeout, "every trace buffered in tier 1", func() (bool, string) {
		m := scrape(t, pair.tier1.metricsURL)
		held := m.sum("otelcol_processor_handoff_traces_in_memory", nil)
		return held == shutdownTraces, fmt.Sprintf("traces_in_memory %v", held)
	})
	if got := scrape(t, pair.tier2.metricsURL).sum("otelcol_receiver_accepted_spans", nil); got != 0 {
		t.Fatalf("tier 2 got %v spans before the shutdown: the buffer was meant to be full", got)
	}
	before, err := vmHWM(pair.tier1.col.cmd.Process.Pid)
	if err != nil {
		t.Fatal(err)
	}
	peak := watchPeakRSS(pair.tier1.col)
	stopAt := time.Now()
	pair.tier1.col.stop(t) // SIGTERM; requires a clean exit (a timed-out flush fails it)
	exited := time.Since(stopAt)
	out := waitTier2(t, pair, want, false)
	arrived := out.acceptedAt.Sub(stopAt)
	checkExactlyOnce(t, load, out)

	logs := pair.tier1.col.output()
	for _, bad := range []string{"downstream rejected released traces", "shutdown budget ran out", "Exporting failed", "Dropping data"} {
		if strings.Contains(logs, bad) {
			t.Errorf("tier 1 logged %q during the shutdown:\n%s", bad, tail(logs, 4000))
		}
	}
	if got := scrape(t, pair.tier2.metricsURL).sum("otelcol_receiver_refused_spans", nil); got != 0 {
		t.Errorf("tier 2 refused %v spans", got)
	}
	t.Logf("%d traces, %d spans (%d bytes of OTLP) buffered in %s; SIGTERM: tier 1 exited after %s, all %d spans (%d HANDOFF) accepted by tier 2 %s after the signal, in %d messages (largest %d spans, %d bytes; limit %d); tier 1 peak RSS %d MB before the signal, %d MB at exit; total %s",
		shutdownTraces, load.spans(), load.bytes, sendTime.Round(time.Millisecond), exited.Round(time.Millisecond),
		out.spans, out.handoffSpans, arrived.Round(time.Millisecond), len(out.batchSpans), out.maxBatchSpans, out.maxBatchBytes, grpcDefaultMaxRecv,
		before/1024, peak()/1024, time.Since(began).Round(time.Millisecond))
	pair.tier2.col.stop(t)
}
