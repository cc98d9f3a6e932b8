package loadtest

import (
	"context"
	"fmt"
	"strings"
	"testing"
	"time"
)

func TestOptionsErrorsNameTheField(t *testing.T) {
	_, err := Execute(context.Background(), Options{Rate: -1, Senders: 0, Batch: 0, Hold: -time.Second, Baseline: "/nonexistent/otelcol"})
	if err == nil {
		t.Fatal("empty options accepted")
	}
	for _, want := range []string{
		"binary: empty", "duration (0s) must be > 0", "rate (-1) must be >= 0",
		"senders (0) must be >= 1", "batch (0) must be >= 1", "templates (0) must be >= 1",
		"retained: no measurement of the processor's retained bytes given", "hold (-1s) must be >= 0",
		"baseline: stat /nonexistent/otelcol: no such file or directory",
	} {
		if !strings.Contains(err.Error(), want) {
			t.Errorf("error lacks %q:\n%v", want, err)
		}
	}
	_, err = Execute(context.Background(), Options{Binary: "x", Duration: 1, Senders: 1, Batch: 1, Templates: 1})
	if err == nil || !strings.Contains(err.Error(), "rate: 0 and saturation off leave nothing to run") {
		t.Errorf("rate 0 without saturation: %v", err)
	}
}

// TestWithPprofEveryPipeline: --profile adds the pprof extension to every pipeline's config,
// defined and enabled, and refuses a config whose service section it cannot read.
func TestWithPprofEveryPipeline(t *testing.T) {
	for _, p := range Pipelines {
		config, err := withPprof(fmt.Sprintf(p.Config, 4317, 13133, 8888), 1777)
		if err != nil {
			t.Fatalf("%s: %v", p.Name, err)
		}
		for _, want := range []string{`pprof: {endpoint: "127.0.0.1:1777"}`, "extensions: [health_check, pprof]"} {
			if !strings.Contains(config, want) {
				t.Errorf("%s: no %q in\n%s", p.Name, want, config)
			}
		}
	}
	if _, err := withPprof("service: {}", 1777); err == nil {
		t.Error("a config without the health_check extension: no error")
	}
}

// TestTargetsAreMediansOfRoundRatios: each ratio pairs runs of the same round, and the
// targets table gives the median of the rounds with their range; one round gives its
// ratio alone.
func TestTargetsAreMediansOfRoundRatios(t *testing.T) {
	run := func(pipeline string, round int, cpu float64, rss int64) Run {
		return Run{Pipeline: pipeline, Round: round, Rate: 1000, Accepted: 1e6, Out: 1e6, Seconds: 10, CPU: cpu, PeakRSS: rss}
	}
	rep := &Report{Options: Options{Rate: 1000, Rounds: 3, Batch: 1, Senders: 1, Duration: 1}, RetainedPerSpan: map[string]float64{}}
	for round, cpu := range []struct{ bare, full, decoded, s2 float64 }{{10, 12, 15, 13}, {20, 30, 22, 34}, {10, 11, 14, 16}} {
		rep.Runs = append(rep.Runs,
			run(Bare, round+1, cpu.bare, 1), run(TailSampling, round+1, 1, 100),
			run(FullDecoded, round+1, cpu.decoded, 70), run(FullS2, round+1, cpu.s2, 20), run(Full, round+1, cpu.full, 40))
	}
	table := rep.String()
	// Full / bare per round: 1.2, 1.5, 1.1; decoded: 1.5, 1.1, 1.4; S2: 1.3, 1.7, 1.6.
	// Pooled CPU would give 53/40 = 1.325 instead.
	for _, want := range []string{
		"| CPU-s per 1M spans, full pipeline / bare, at 1000 spans/s | 1.20× (1.10–1.50×, 3 rounds) | 1.40× (1.10–1.50×, 3 rounds) | 1.60× (1.30–1.70×, 3 rounds) | ≤ 1.3× |",
		"| peak RSS at 1000 spans/s, full / tail_sampling (same hold time) | 0.40× (0.40–0.40×, 3 rounds) | 0.70× (0.70–0.70×, 3 rounds) | 0.20× (0.20–0.20×, 3 rounds) | ≤ 0.4× |",
		"| " + Full + " | 1000 spans/s | 2 | 100000 | 1.00× | 30.00 | 1.50× |",
	} {
		if !strings.Contains(table, want) {
			t.Errorf("table lacks %q:\n%s", want, table)
		}
	}
	rep.Options.Rounds, rep.Runs = 1, rep.Runs[:5]
	if want := "| CPU-s per 1M spans, full pipeline / bare, at 1000 spans/s | 1.20× | 1.50× | 1.30× | ≤ 1.3× |"; !strings.Contains(rep.String(), want) {
		t.Errorf("one round: table lacks %q:\n%s", want, rep.String())
	}
	if got := median([]float64{1, 3, 2, 10}); got != "2.50× (1.00–10.00×, 4 rounds)" {
		t.Errorf("median of an even count: %s", got)
	}
}

// TestRoundsRotateThePipelines: every pipeline runs once per round, each round starting one
// pipeline later; the first round runs them in their listed order.
func TestRoundsRotateThePipelines(t *testing.T) {
	names := func(ps []Pipeline) string {
		var out []string
		for _, p := range ps {
			out = append(out, p.Name)
		}
		return strings.Join(out, ", ")
	}
	n := len(Pipelines)
	if got, want := names(inRound(Pipelines, 1)), names(Pipelines); got != want {
		t.Errorf("round 1: %s, want %s", got, want)
	}
	if got, want := names(inRound(Pipelines, 2)), names(append(Pipelines[1:n:n], Pipelines[0])); got != want {
		t.Errorf("round 2: %s, want %s", got, want)
	}
	if got, want := names(inRound(Pipelines, n+1)), names(Pipelines); got != want {
		t.Errorf("round %d: %s, want %s", n+1, got, want)
	}
	if names(Pipelines) != names(inRound(Pipelines, 1)) || len(inRound(Pipelines, 3)) != n {
		t.Error("inRound changed its input or lost a pipeline")
	}
}

// TestPipelinesHoldTracesAlike: at any hold time, tail_sampling's decision_wait and the
// handoff processor's quiet_period are that time, and max_wait leaves room beyond it.
func TestPipelinesHoldTracesAlike(t *testing.T) {
	for hold, want := range map[time.Duration][]string{
		time.Second:      {"decision_wait: 1s", "quiet_period: 1s, max_wait: 10s"},
		10 * time.Second: {"decision_wait: 10s", "quiet_period: 10s, max_wait: 20s"},
	} {
		buffering := 0
		for _, p := range PipelinesHolding(hold) {
			for _, w := range want {
				if strings.Contains(p.Config, w) {
					buffering++
				}
			}
		}
		if buffering != len(PipelinesHolding(hold))-1 {
			t.Errorf("hold %s: %d of the buffering pipelines hold for it, want all but bare", hold, buffering)
		}
	}
}

// TestBaselineAlternatesAndPairsRounds: with a baseline binary each pipeline runs with both,
// the baseline first in odd rounds; the comparison pairs the two binaries' runs of a round
// and gives the median of the rounds' ratios (the numbers are picked so that the median of
// the ratios differs from the ratio of the medians) and the lossless check covers the
// baseline's runs.
func TestBaselineAlternatesAndPairsRounds(t *testing.T) {
	o := Options{Binary: "new", Baseline: "old"}
	for round, want := range map[int][]bool{1: {true, false}, 2: {false, true}, 3: {true, false}} {
		if got := o.binariesInRound(round); fmt.Sprint(got) != fmt.Sprint(want) {
			t.Errorf("round %d: baseline first = %v, want %v", round, got, want)
		}
	}
	if got := (Options{Binary: "new"}).binariesInRound(1); fmt.Sprint(got) != "[false]" {
		t.Errorf("no baseline: %v, want the binary alone", got)
	}

	run := func(round int, cpu float64, accepted, out int64) Run {
		return Run{Pipeline: Full, Round: round, Rate: 1000, Accepted: accepted, Out: out, Seconds: 10, CPU: cpu, PeakRSS: 100}
	}
	rep := &Report{Options: Options{Rate: 1000, Rounds: 3, Baseline: "old"}, RetainedPerSpan: map[string]float64{}}
	// CPU-s per 1M spans: baseline 10, 20, 40; binary 9, 30, 36 (ratios 0.9, 1.5, 0.9:
	// median 0.90; the medians' ratio would be 30/20 = 1.5).
	for round, cpu := range []struct{ old, new float64 }{{10, 9}, {20, 30}, {40, 36}} {
		rep.Baseline = append(rep.Baseline, run(round+1, cpu.old, 1e6, 1e6))
		rep.Runs = append(rep.Runs, run(round+1, cpu.new, 1e6, 1e6))
	}
	out := rep.String()
	want := "| " + Full + " | 1000 spans/s | 10.00, 20.00, 40.00 | 9.00, 30.00, 36.00 | 0.90× (0.90–1.50×, 3 rounds) | 1.00× (1.00–1.00×, 3 rounds) | 1.00× (1.00–1.00×, 3 rounds) | yes |"
	if !strings.Contains(out, want) {
		t.Errorf("no row\n%s\nin\n%s", want, out)
	}
	if !rep.Lossless() {
		t.Error("lossless runs reported as losing spans")
	}
	rep.Baseline[1].Out--
	if rep.Lossless() || !strings.Contains(rep.String(), "3 rounds) | NO |") {
		t.Errorf("a baseline run that lost a span is not reported:\n%s", rep.String())
	}
}
