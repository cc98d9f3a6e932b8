// Package loadtest drives the built collector under sustained OTLP/HTTP load of real agent
// traces (internal/workload), on loopback only and bounded in time. One invocation runs the
// same binary as three pipelines side by side: bare otlp -> nop (the ceiling), otlp ->
// tail_sampling -> nop (what users would run otherwise, with decision_wait equal to our
// quiet_period) and otlp -> handoff -> assertion (10 rules) + nop (the full pipeline), each
// at a fixed offered rate and at saturation. For each run it measures spans/s accepted,
// collector CPU-seconds per million spans, peak RSS and whether every accepted span came
// out; in process it measures the heap a buffered span holds against its OTLP size. Rounds
// repeat the whole sequence; each ratio is taken within a round. cmd/loadtest prints the
// table; the e2e suite runs it for a second per pipeline.
package loadtest

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"math/rand/v2"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/otelcol-handoff/otelcol-handoff/internal/freeport"
	"github.com/otelcol-handoff/otelcol-handoff/internal/procstat"
	"github.com/otelcol-handoff/otelcol-handoff/internal/workload"
)

// HoldTime is tail_sampling's decision_wait and our quiet_period by default (Options.Hold):
// the same hold time, so the memory figures compare like with like.
const HoldTime = time.Second

// Options is one load-test invocation.
type Options struct {
	// Binary is the collector binary.
	Binary string
	// Baseline, if set, is a second collector binary (the code before a change): every run
	// is also made with it, back to back with Binary's, the baseline first in odd rounds
	// and second in even ones. Its runs are Report.Baseline; Write compares the two.
	Baseline string
	// Duration is the load duration of each run.
	Duration time.Duration
	// Rate is the fixed offered load in spans/s of the fixed-rate runs; 0 = no fixed-rate runs.
	Rate int
	// Saturation adds the runs offered as fast as the collector accepts.
	Saturation bool
	// Senders is the number of concurrent OTLP/HTTP senders; Batch the traces per request.
	Senders, Batch int
	// TracesDir is the folder of the captures; Templates the number of trace templates.
	TracesDir string
	Templates int
	// Progress, if set, gets one line as each run starts.
	Progress io.Writer
	// Retained measures, in process, the heap the handoff processor holds per buffered span
	// of the workload with a buffer_encoding, and the workload's OTLP protobuf size per span
	// (handoffprocessortest.Retained; the caller gives it, as no package under internal/
	// imports a component).
	Retained func(w *workload.Workload, bufferEncoding string) (perSpan, protoPerSpan float64, err error)
	// ProfileDir, if set, gets a CPU profile of each run's load phase and a heap profile
	// taken as the load ends, from the collector's pprof extension
	// (<pipeline>-<offered>[-round<N>][-baseline].cpu.pprof, .heap.pprof).
	ProfileDir string
	// Only, if set, runs just the pipelines whose names contain it.
	Only string
	// Hold is the pipelines' hold time (0 = HoldTime): tail_sampling's decision_wait and
	// the handoff processor's quiet_period. Memory grows with it; agent runs that last
	// minutes need long ones.
	Hold time.Duration
	// Rounds repeats the whole sequence of runs (0 = once). Each ratio is taken within one
	// round, and the targets table gives their median: on a shared 2-core machine the bare
	// pipeline's own CPU per span moves by 10 % and more between runs.
	Rounds int
}

// rounds is the number of rounds o asks for.
func (o Options) rounds() int { return max(o.Rounds, 1) }

func (o Options) validate() error {
	var errs []error
	if o.Binary == "" {
		errs = append(errs, errors.New("binary: empty"))
	}
	if o.Baseline != "" {
		if _, err := os.Stat(o.Baseline); err != nil {
			errs = append(errs, fmt.Errorf("baseline: %w", err))
		}
	}
	if o.Duration <= 0 {
		errs = append(errs, fmt.Errorf("duration (%s) must be > 0", o.Duration))
	}
	if o.Rate < 0 {
		errs = append(errs, fmt.Errorf("rate (%d) must be >= 0", o.Rate))
	}
	if o.Rate == 0 && !o.Saturation {
		errs = append(errs, errors.New("rate: 0 and saturation off leave nothing to run"))
	}
	if o.Senders < 1 {
		errs = append(errs, fmt.Errorf("senders (%d) must be >= 1", o.Senders))
	}
	if o.Batch < 1 {
		errs = append(errs, fmt.Errorf("batch (%d) must be >= 1", o.Batch))
	}
	if o.Rounds < 0 {
		errs = append(errs, fmt.Errorf("rounds (%d) must be >= 0", o.Rounds))
	}
	if o.Hold < 0 {
		errs = append(errs, fmt.Errorf("hold (%s) must be >= 0", o.Hold))
	}
	if o.Templates < 1 {
		errs = append(errs, fmt.Errorf("templates (%d) must be >= 1", o.Templates))
	}
	if o.Retained == nil {
		errs = append(errs, errors.New("retained: no measurement of the processor's retained bytes given"))
	}
	return errors.Join(errs...)
}

// Run is one measured pipeline at one offered load.
type Run struct {
	Pipeline string
	// Round numbers the round the run belongs to, from 1.
	Round int
	// Buffer is the pipeline's buffer_encoding (Pipeline.Buffer).
	Buffer string
	// Rate is the offered spans/s; 0 = saturation.
	Rate int
	// Accepted spans (HTTP 200) and Out spans (the pipeline's own count of what left it).
	Accepted, Out int64
	// Seconds of load; CPU is the collector's user+system CPU-seconds from ready to drained.
	Seconds, CPU float64
	// PeakRSS is the collector's VmHWM in bytes; PeakHeap the most heap it reported
	// (otelcol_process_runtime_heap_alloc_bytes, garbage not yet collected included);
	// PeakBuffered the most spans the handoff processor held at once (0 for the other
	// pipelines). PeakHeap and PeakBuffered are sampled every 250 ms.
	PeakRSS, PeakHeap, PeakBuffered int64
}

// SpansPerSec is the accepted throughput.
func (r Run) SpansPerSec() float64 { return float64(r.Accepted) / r.Seconds }

// CPUPerMillion is the collector's CPU-seconds per million accepted spans.
func (r Run) CPUPerMillion() float64 { return r.CPU / (float64(r.Accepted) / 1e6) }

// Lossless says every accepted span came out of the pipeline.
func (r Run) Lossless() bool { return r.Accepted > 0 && r.Out == r.Accepted }

func (o Options) hold() time.Duration {
	if o.Hold > 0 {
		return o.Hold
	}
	return HoldTime
}

// Report is a whole invocation.
type Report struct {
	Options       Options
	Traces, Spans int
	Runs          []Run
	// Baseline are the runs of Options.Baseline, one beside each of Runs.
	Baseline []Run
	// RetainedPerSpan is by buffer_encoding (Pipeline.Buffer).
	RetainedPerSpan    map[string]float64
	ProtoBytesPerSpan  float64
	RetainedSpansTotal int
	// S2AsIsPerSpan is the retained bytes per span with buffer_encoding proto_s2 on the
	// captures as they are (workload.LoadCapturesAsIs), ProtoAsIsPerSpan their OTLP size
	// per span: what real traces compress to. The scaled templates repeat their capture,
	// which S2 finds, so they compress far more than any real trace.
	S2AsIsPerSpan, ProtoAsIsPerSpan float64
}

// Execute measures retained memory in process, then runs every pipeline at the fixed
// rate (if any), then every pipeline at saturation (if asked).
func Execute(ctx context.Context, o Options) (*Report, error) {
	if err := o.validate(); err != nil {
		return nil, fmt.Errorf("loadtest: %w", err)
	}
	// Created before the first run, so that a missing folder does not end the
	// invocation after the first load phase.
	if o.ProfileDir != "" {
		if err := os.MkdirAll(o.ProfileDir, 0o755); err != nil {
			return nil, fmt.Errorf("loadtest: --profile: %w", err)
		}
	}
	rep, traces, err := prepare(o)
	if err != nil {
		return nil, err
	}
	var rates []int
	if o.Rate > 0 {
		rates = append(rates, o.Rate)
	}
	if o.Saturation {
		rates = append(rates, 0)
	}
	for round := 1; round <= o.rounds(); round++ {
		for _, rate := range rates {
			for _, p := range inRound(PipelinesHolding(o.hold()), round) {
				if !strings.Contains(p.Name, o.Only) {
					continue
				}
				for _, baseline := range o.binariesInRound(round) {
					which := ""
					if baseline {
						which = " (baseline binary)"
					}
					if o.Progress != nil {
						fmt.Fprintf(o.Progress, "loadtest: round %d of %d: %s%s, %s, %s\n", round, o.rounds(), p.Name, which, offered(rate), o.Duration)
					}
					r, err := runOne(ctx, o, baseline, p, traces, rate, round)
					if err != nil {
						return nil, fmt.Errorf("round %d: %s%s at %s: %w", round, p.Name, which, offered(rate), err)
					}
					if baseline {
						rep.Baseline = append(rep.Baseline, r)
					} else {
						rep.Runs = append(rep.Runs, r)
					}
				}
			}
		}
	}
	return rep, nil
}

// binariesInRound is the order the binaries run each pipeline in a round: Binary alone, or,
// with a baseline, the baseline first in odd rounds and second in even ones, so that a
// machine that drifts charges neither binary more (true: the baseline).
func (o Options) binariesInRound(round int) []bool {
	switch {
	case o.Baseline == "":
		return []bool{false}
	case round%2 == 1:
		return []bool{true, false}
	default:
		return []bool{false, true}
	}
}

// inRound is the order pipelines run in round (from 1): each round starts one pipeline
// later than the one before, so that a machine that slows down (or speeds up) within a
// round does not always charge the same pipeline. Ratios pair runs of the same round.
func inRound(pipelines []Pipeline, round int) []Pipeline {
	k := (round - 1) % len(pipelines)
	return append(slices.Clone(pipelines[k:]), pipelines[:k]...)
}

// prepare loads the workload, measures the retained bytes per buffered span with it and
// encodes its templates for the senders. The decoded templates are garbage once it
// returns: kept live, they were most of the load generator's heap, and its GC marked
// them again on every cycle while the collector it measures shared the cores.
func prepare(o Options) (*Report, []workload.Encoded, error) {
	w, err := workload.LoadCaptures(o.TracesDir, o.Templates)
	if err != nil {
		return nil, nil, err
	}
	rep := &Report{Options: o, Traces: len(w.Templates), Spans: w.Spans, RetainedSpansTotal: w.Spans}
	rep.RetainedPerSpan = map[string]float64{}
	for _, p := range Pipelines {
		if _, done := rep.RetainedPerSpan[p.Buffer]; p.Buffer == "" || done {
			continue
		}
		if rep.RetainedPerSpan[p.Buffer], rep.ProtoBytesPerSpan, err = o.Retained(w, p.Buffer); err != nil {
			return nil, nil, err
		}
	}
	asIs, err := workload.LoadCapturesAsIs(o.TracesDir, o.Templates)
	if err != nil {
		return nil, nil, err
	}
	if rep.S2AsIsPerSpan, rep.ProtoAsIsPerSpan, err = o.Retained(asIs, BufferProtoS2); err != nil {
		return nil, nil, err
	}
	parts, err := w.Encode(1)
	if err != nil {
		return nil, nil, err
	}
	traces := make([]workload.Encoded, len(parts))
	for i, p := range parts {
		traces[i] = p[0]
	}
	return rep, traces, nil
}

func offered(rate int) string {
	if rate == 0 {
		return "saturation"
	}
	return fmt.Sprintf("%d spans/s", rate)
}

// runOne runs pipeline p with the collector binary (the baseline one if baseline) at one
// offered rate.
func runOne(ctx context.Context, o Options, baseline bool, p Pipeline, traces []workload.Encoded, rate, round int) (Run, error) {
	binary := o.Binary
	if baseline {
		binary = o.Baseline
	}
	r := Run{Pipeline: p.Name, Buffer: p.Buffer, Rate: rate, Round: round}
	ports, err := freeport.Ports(4)
	if err != nil {
		return r, err
	}
	otlpPort, healthPort, metricsPort, pprofPort := ports[0], ports[1], ports[2], ports[3]
	dir, err := os.MkdirTemp("", "loadtest")
	if err != nil {
		return r, err
	}
	defer os.RemoveAll(dir)
	cfg := filepath.Join(dir, "config.yaml")
	config := fmt.Sprintf(p.Config, otlpPort, healthPort, metricsPort)
	if o.ProfileDir != "" {
		if config, err = withPprof(config, pprofPort); err != nil {
			return r, err
		}
	}
	if err := os.WriteFile(cfg, []byte(config), 0o600); err != nil {
		return r, err
	}
	ctx, cancel := context.WithTimeout(ctx, o.Duration+2*time.Minute)
	defer cancel()
	args := []string{"--config", cfg}
	if p.FeatureGates != "" {
		args = append(args, "--feature-gates", p.FeatureGates)
	}
	cmd := exec.CommandContext(ctx, binary, args...)
	logPath := filepath.Join(dir, "collector.log")
	logs, err := os.Create(logPath)
	if err != nil {
		return r, err
	}
	defer logs.Close()
	cmd.Stdout, cmd.Stderr = logs, logs
	if err := cmd.Start(); err != nil {
		return r, err
	}
	defer func() { _ = cmd.Process.Kill(); _ = cmd.Wait() }()
	if err := waitHTTP(ctx, fmt.Sprintf("http://127.0.0.1:%d/", healthPort), 30*time.Second); err != nil {
		out, _ := os.ReadFile(logPath)
		return r, fmt.Errorf("%w\n%s", err, out)
	}
	pid := cmd.Process.Pid
	cpu0, err := procstat.CPUSeconds(pid)
	if err != nil {
		return r, err
	}
	metricsURL := fmt.Sprintf("http://127.0.0.1:%d/metrics", metricsPort)

	// Watch the buffered spans while the load runs and drains.
	stop := make(chan struct{})
	var peakBuffered, peakHeap atomic.Int64
	var watcher sync.WaitGroup
	watcher.Add(1)
	go func() {
		defer watcher.Done()
		t := time.NewTicker(250 * time.Millisecond)
		defer t.Stop()
		for {
			if m, err := scrape(metricsURL); err == nil {
				peakBuffered.Store(max(peakBuffered.Load(), int64(m.sum("otelcol_processor_handoff_spans_in_memory", nil))))
				peakHeap.Store(max(peakHeap.Load(), int64(m.sum("otelcol_process_runtime_heap_alloc_bytes", nil))))
			}
			select {
			case <-stop:
				return
			case <-t.C:
			}
		}
	}()
	defer func() {
		select {
		case <-stop:
		default:
			close(stop)
		}
		watcher.Wait()
	}()

	var profiled sync.WaitGroup
	var profileErr error
	if o.ProfileDir != "" {
		base := filepath.Join(o.ProfileDir, slug(p.Name)+"-"+slug(offered(rate)))
		if o.rounds() > 1 {
			base += fmt.Sprintf("-round%d", round)
		}
		if baseline {
			base += "-baseline"
		}
		pprofURL := fmt.Sprintf("http://127.0.0.1:%d/debug/pprof/", pprofPort)
		seconds := max(1, int(o.Duration.Seconds())-1)
		profiled.Add(1)
		go func() {
			defer profiled.Done()
			if err := fetchProfile(ctx, fmt.Sprintf("%sprofile?seconds=%d", pprofURL, seconds), base+".cpu.pprof"); err != nil {
				profileErr = errors.Join(profileErr, err)
			}
			if err := fetchProfile(ctx, pprofURL+"heap", base+".heap.pprof"); err != nil {
				profileErr = errors.Join(profileErr, err)
			}
		}()
	}
	began := time.Now()
	r.Accepted = send(ctx, fmt.Sprintf("http://127.0.0.1:%d/v1/traces", otlpPort), traces, began.Add(o.Duration), o.Senders, o.Batch, rate)
	r.Seconds = time.Since(began).Seconds()
	profiled.Wait()
	if profileErr != nil {
		return r, profileErr
	}

	// Drain: every accepted span has left the pipeline (timed releases included).
	drainBy := time.Now().Add(60 * time.Second)
	for {
		m, err := scrape(metricsURL)
		r.Out = int64(m.sum(p.OutMetric, p.OutLabels))
		if err == nil && r.Out >= r.Accepted {
			break
		}
		if time.Now().After(drainBy) {
			break
		}
		select {
		case <-ctx.Done():
			return r, ctx.Err()
		case <-time.After(100 * time.Millisecond):
		}
	}
	cpu1, err := procstat.CPUSeconds(pid)
	if err != nil {
		return r, err
	}
	r.CPU = cpu1 - cpu0
	close(stop)
	watcher.Wait()
	r.PeakBuffered, r.PeakHeap = peakBuffered.Load(), peakHeap.Load()
	if r.PeakRSS, err = procstat.PeakRSSBytes(pid); err != nil {
		return r, err
	}
	return r, nil
}

// withPprof adds the pprof extension on port to a pipeline's config (the service section
// of pipelines.go); an error when that section no longer reads as it expects.
func withPprof(config string, port int) (string, error) {
	const defined, enabled = "extensions: {health_check:", "extensions: [health_check]"
	if !strings.Contains(config, defined) || !strings.Contains(config, enabled) {
		return "", fmt.Errorf("loadtest: cannot add the pprof extension: the config has no %q and %q", defined, enabled)
	}
	config = strings.Replace(config, defined, fmt.Sprintf("extensions: {pprof: {endpoint: \"127.0.0.1:%d\"}, health_check:", port), 1)
	return strings.Replace(config, enabled, "extensions: [health_check, pprof]", 1), nil
}

// fetchProfile saves one profile of the pprof extension.
func fetchProfile(ctx context.Context, url, path string) error {
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, url, nil)
	if err != nil {
		return err
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		return fmt.Errorf("profile %s: %w", url, err)
	}
	defer resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		return fmt.Errorf("profile %s: %s", url, resp.Status)
	}
	body, err := io.ReadAll(resp.Body)
	if err != nil {
		return fmt.Errorf("profile %s: %w", url, err)
	}
	return os.WriteFile(path, body, 0o600)
}

// slug is a name usable in a file name.
func slug(name string) string {
	var b strings.Builder
	for _, r := range name {
		switch {
		case r >= 'a' && r <= 'z', r >= '0' && r <= '9':
			b.WriteRune(r)
		case r >= 'A' && r <= 'Z':
			b.WriteRune(r + 'a' - 'A')
		case b.Len() > 0 && !strings.HasSuffix(b.String(), "-"):
			b.WriteByte('-')
		}
	}
	return strings.TrimSuffix(b.String(), "-")
}

// send offers the workload's traces from senders goroutines until deadline, each sender
// paced to its share of rate (0 = as fast as accepted), and returns the spans accepted
// (HTTP 200). Every trace goes whole in one request, with a fresh trace id patched into
// its encoding (workload.Encode): the generator shares the cores with the collector, and
// copying and marshaling each trace cost it about what the collector's own decode costs.
func send(ctx context.Context, url string, traces []workload.Encoded, deadline time.Time, senders, batch, rate int) int64 {
	var accepted, next atomic.Int64
	size := 0
	for _, t := range traces {
		size = max(size, batch*len(t.Body))
	}
	var wg sync.WaitGroup
	client := &http.Client{Timeout: 30 * time.Second}
	for s := range senders {
		wg.Add(1)
		go func(seed uint64) {
			defer wg.Done()
			rng := rand.New(rand.NewPCG(seed, seed+1))
			began, sent := time.Now(), 0
			for time.Now().Before(deadline) && ctx.Err() == nil {
				if rate > 0 {
					due := began.Add(time.Duration(float64(sent) / float64(rate) * float64(senders) * float64(time.Second)))
					if d := time.Until(due); d > 0 {
						time.Sleep(d)
					}
				}
				body, spans := make([]byte, 0, size), 0
				for range batch {
					t := &traces[int(next.Add(1))%len(traces)]
					body, spans = t.AppendWithID(body, workload.NewTraceID(rng)), spans+t.Spans
				}
				req, err := http.NewRequestWithContext(ctx, http.MethodPost, url, bytes.NewReader(body))
				if err != nil {
					continue
				}
				req.Header.Set("Content-Type", "application/x-protobuf")
				resp, err := client.Do(req)
				sent += spans
				if err != nil {
					continue
				}
				_, _ = io.Copy(io.Discard, resp.Body)
				resp.Body.Close()
				if resp.StatusCode == http.StatusOK {
					accepted.Add(int64(spans))
				}
			}
		}(uint64(s) + 1)
	}
	wg.Wait()
	return accepted.Load()
}

func waitHTTP(ctx context.Context, url string, timeout time.Duration) error {
	deadline := time.Now().Add(timeout)
	for time.Now().Before(deadline) && ctx.Err() == nil {
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
