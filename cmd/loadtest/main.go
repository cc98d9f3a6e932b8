// Command loadtest measures the built collector under sustained OTLP/HTTP load of real agent
// traces (internal/workload), on loopback only and bounded in time: the bare otlp -> nop
// pipeline of the same binary (the ceiling), then otlp -> handoff -> assertion (10 rules).
// For each it reports spans/s offered and accepted, collector CPU-seconds per million spans,
// peak RSS, and checks that every accepted span came out.
//
//	go run ./cmd/loadtest --binary _build/otelcol-handoff --duration 20s
package main

import (
	"bufio"
	"bytes"
	"context"
	"errors"
	"flag"
	"fmt"
	"math/rand/v2"
	"net"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"go.opentelemetry.io/collector/pdata/ptrace"
	"go.opentelemetry.io/collector/pdata/ptrace/ptraceotlp"

	"github.com/otelcol-handoff/otelcol-handoff/internal/procstat"
	"github.com/otelcol-handoff/otelcol-handoff/internal/workload"
)

func main() {
	bin := flag.String("binary", "_build/otelcol-handoff", "collector binary")
	duration := flag.Duration("duration", 20*time.Second, "load duration per pipeline")
	senders := flag.Int("senders", 4, "concurrent OTLP/HTTP senders")
	batch := flag.Int("batch", 5, "traces per request")
	rate := flag.Int("rate", 0, "offered spans per second across all senders (0 = as fast as accepted)")
	traces := flag.String("traces", "testdata/traces", "folder of OTLP/JSON captures")
	flag.Parse()

	var paths []string
	for _, name := range []string{"google-adk-ok", "strands-ok", "langgraph-ok", "openai-agents-ok", "mastra-ok", "vercel-ai-ok"} {
		paths = append(paths, filepath.Join(*traces, name+".json"))
	}
	w, err := workload.Load(paths, 240)
	if err != nil {
		fail(err)
	}
	offered := "as fast as accepted"
	if *rate > 0 {
		offered = fmt.Sprintf("%d spans/s offered", *rate)
	}
	fmt.Printf("workload: %d trace templates, %d spans (%.0f spans/trace), %d traces per request, %d senders, %s, %s per pipeline\n\n",
		len(w.Templates), w.Spans, float64(w.Spans)/float64(len(w.Templates)), *batch, *senders, offered, *duration)
	fmt.Println("| pipeline | spans accepted | spans/s | collector CPU-s | CPU-s per 1M spans | peak RSS MB | spans out = in |")
	fmt.Println("|---|---:|---:|---:|---:|---:|---|")
	var bareCPU float64
	for _, p := range pipelines {
		r, err := run(*bin, p, w, *duration, *senders, *batch, *rate)
		if err != nil {
			fail(fmt.Errorf("%s: %w", p.name, err))
		}
		perM := r.cpu / (float64(r.accepted) / 1e6)
		if p.name == "bare" {
			bareCPU = perM
		}
		ratio := ""
		if p.name != "bare" && bareCPU > 0 {
			ratio = fmt.Sprintf(" (%.2fx bare)", perM/bareCPU)
		}
		fmt.Printf("| %s | %d | %.0f | %.1f | %.1f%s | %.0f | %v |\n", p.name, r.accepted,
			float64(r.accepted)/duration.Seconds(), r.cpu, perM, ratio, r.peakRSS/1e6, r.out == r.accepted)
	}
}

func fail(err error) {
	fmt.Fprintln(os.Stderr, "loadtest:", err)
	os.Exit(1)
}

type pipeline struct {
	name string
	// config is the collector config; %[1]d = OTLP HTTP port, %[2]d = health port,
	// %[3]d = metrics port.
	config string
	// outMetric counts the spans that left the pipeline.
	outMetric string
}

var rules10 = `
      - name: topology
        steps:
          - {action: ASSERT_AGENT_TOPOLOGY, maxDepth: 5}
          - {action: EXPECT_DELEGATION_TO, agentName: weather_specialist, fromAgent: triage}
          - {action: EXPECT_AGENT_BUDGET, agentName: weather_specialist, maxTokens: 100000, maxToolCalls: 600}
          - {action: EXPECT_AGENT_BUDGET, agentName: triage, maxDurationMs: 600000}
          - {action: EXPECT_DELEGATION_TO, agentName: triage, maxInvocations: 100}
      - name: tests
        expected_result: status == "completed"
        expected_tool_calls:
          - get_weather
          - 'get_weather: invocations >= 1'
        expected_no_tool_calls: [delete_everything]
        expected_tool_call_order: [get_weather]
`

var pipelines = []pipeline{
	{name: "bare", outMetric: "otelcol_receiver_accepted_spans", config: `
receivers: {otlp: {protocols: {http: {endpoint: "127.0.0.1:%[1]d"}}}}
exporters: {nop: {}}
extensions: {health_check: {endpoint: "127.0.0.1:%[2]d"}}
service:
  extensions: [health_check]
  pipelines: {traces: {receivers: [otlp], exporters: [nop]}}
  telemetry:
    logs: {level: warn}
    metrics: {readers: [{pull: {exporter: {prometheus: {host: 127.0.0.1, port: %[3]d}}}}]}
`},
	{name: "handoff + assertion (10 rules)", outMetric: "otelcol_processor_handoff_spans_released", config: `
receivers: {otlp: {protocols: {http: {endpoint: "127.0.0.1:%[1]d"}}}}
processors: {handoff: {quiet_period: 1s, max_wait: 10s, num_traces: 50000}}
exporters:
  nop: {}
  assertion:
    log_verdicts: none
    cases:` + rules10 + `
extensions: {health_check: {endpoint: "127.0.0.1:%[2]d"}}
service:
  extensions: [health_check]
  pipelines: {traces: {receivers: [otlp], processors: [handoff], exporters: [assertion, nop]}}
  telemetry:
    logs: {level: warn}
    metrics: {readers: [{pull: {exporter: {prometheus: {host: 127.0.0.1, port: %[3]d}}}}]}
`},
}

type result struct {
	accepted, out int64
	cpu, peakRSS  float64
}

func freePort() int {
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		fail(err)
	}
	defer l.Close()
	return l.Addr().(*net.TCPAddr).Port
}

func run(bin string, p pipeline, w *workload.Workload, duration time.Duration, senders, batch, rate int) (result, error) {
	var r result
	otlpPort, healthPort, metricsPort := freePort(), freePort(), freePort()
	dir, err := os.MkdirTemp("", "loadtest")
	if err != nil {
		return r, err
	}
	defer os.RemoveAll(dir)
	cfg := filepath.Join(dir, "config.yaml")
	if err := os.WriteFile(cfg, []byte(fmt.Sprintf(p.config, otlpPort, healthPort, metricsPort)), 0o600); err != nil {
		return r, err
	}
	ctx, cancel := context.WithTimeout(context.Background(), duration+2*time.Minute)
	defer cancel()
	cmd := exec.CommandContext(ctx, bin, "--config", cfg)
	var logs bytes.Buffer
	cmd.Stdout, cmd.Stderr = &logs, &logs
	if err := cmd.Start(); err != nil {
		return r, err
	}
	defer func() { _ = cmd.Process.Kill(); _ = cmd.Wait() }()
	if err := waitHTTP(fmt.Sprintf("http://127.0.0.1:%d/", healthPort), 30*time.Second); err != nil {
		return r, fmt.Errorf("%w\n%s", err, logs.String())
	}
	pid := cmd.Process.Pid
	cpu0, err := procstat.CPUSeconds(pid)
	if err != nil {
		return r, err
	}

	// Sample RSS while the load runs and drains.
	stop := make(chan struct{})
	var peak atomic.Int64
	var sampler sync.WaitGroup
	sampler.Add(1)
	go func() {
		defer sampler.Done()
		t := time.NewTicker(200 * time.Millisecond)
		defer t.Stop()
		for {
			if rss, err := procstat.RSSBytes(pid); err == nil && rss > peak.Load() {
				peak.Store(rss)
			}
			select {
			case <-stop:
				return
			case <-t.C:
			}
		}
	}()

	url := fmt.Sprintf("http://127.0.0.1:%d/v1/traces", otlpPort)
	var accepted, next atomic.Int64
	deadline := time.Now().Add(duration)
	var wg sync.WaitGroup
	client := &http.Client{Timeout: 30 * time.Second}
	for s := 0; s < senders; s++ {
		wg.Add(1)
		go func(seed uint64) {
			defer wg.Done()
			rng := rand.New(rand.NewPCG(seed, seed+1))
			began, sent := time.Now(), 0
			for time.Now().Before(deadline) {
				if rate > 0 {
					// Pace this sender to its share of the offered rate.
					due := began.Add(time.Duration(float64(sent) / float64(rate) * float64(senders) * float64(time.Second)))
					if d := time.Until(due); d > 0 {
						time.Sleep(d)
					}
				}
				td := ptrace.NewTraces()
				for b := 0; b < batch; b++ {
					i := int(next.Add(1))
					w.Trace(i, rng, 1)[0].ResourceSpans().MoveAndAppendTo(td.ResourceSpans())
				}
				body, err := ptraceotlp.NewExportRequestFromTraces(td).MarshalProto()
				if err != nil {
					continue
				}
				resp, err := client.Post(url, "application/x-protobuf", bytes.NewReader(body))
				if err != nil {
					continue
				}
				resp.Body.Close()
				sent += td.SpanCount()
				if resp.StatusCode == http.StatusOK {
					accepted.Add(int64(td.SpanCount()))
				}
			}
		}(uint64(s) + 1)
	}
	wg.Wait()
	r.accepted = accepted.Load()

	// Drain: every accepted span has left the pipeline (timed releases included).
	metricsURL := fmt.Sprintf("http://127.0.0.1:%d/metrics", metricsPort)
	drainBy := time.Now().Add(60 * time.Second)
	for {
		out, err := metricSum(metricsURL, p.outMetric)
		if err == nil && out >= r.accepted {
			r.out = out
			break
		}
		if time.Now().After(drainBy) {
			r.out = out
			break
		}
		time.Sleep(100 * time.Millisecond)
	}
	cpu1, err := procstat.CPUSeconds(pid)
	if err != nil {
		return r, err
	}
	close(stop)
	sampler.Wait()
	r.cpu = cpu1 - cpu0
	r.peakRSS = float64(peak.Load())
	return r, nil
}

func waitHTTP(url string, timeout time.Duration) error {
	deadline := time.Now().Add(timeout)
	for time.Now().Before(deadline) {
		if resp, err := http.Get(url); err == nil {
			resp.Body.Close()
			if resp.StatusCode == http.StatusOK {
				return nil
			}
		}
		time.Sleep(100 * time.Millisecond)
	}
	return errors.New("collector not ready: " + url)
}

// metricSum adds the samples of a metric (any labels) on a Prometheus endpoint.
func metricSum(url, name string) (int64, error) {
	resp, err := http.Get(url)
	if err != nil {
		return 0, err
	}
	defer resp.Body.Close()
	var sum float64
	sc := bufio.NewScanner(resp.Body)
	sc.Buffer(make([]byte, 1<<20), 1<<20)
	for sc.Scan() {
		line := sc.Text()
		if !strings.HasPrefix(line, name) {
			continue
		}
		rest := line[len(name):]
		if !(strings.HasPrefix(rest, "{") || strings.HasPrefix(rest, " ") || strings.HasPrefix(rest, "_total")) {
			continue
		}
		f := strings.Fields(line)
		v, err := strconv.ParseFloat(f[len(f)-1], 64)
		if err == nil {
			sum += v
		}
	}
	return int64(sum), sc.Err()
}
