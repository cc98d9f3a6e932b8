// Command loadtest measures the built collector under sustained OTLP/HTTP load of real agent
// traces, on loopback only and bounded in time (internal/loadtest): the same binary as bare
// otlp -> nop, otlp -> tail_sampling -> nop and otlp -> handoff -> assertion (10 rules) +
// nop, each at a fixed offered rate and at saturation, then prints the table of issue 16
// (CPU-seconds per million spans and spans/s with their ratios to bare, peak RSS with its
// ratio to tail_sampling, retained bytes per buffered span against its OTLP size, spans in =
// out). With --rounds N it repeats the whole sequence N times and gives each target as the
// median of the rounds' ratios. It exits 1 when a run lost spans.
//
//	go run ./cmd/loadtest --binary _build/otelcol-handoff --duration 15s --rate 50000 --rounds 3
package main

import (
	"context"
	"flag"
	"fmt"
	"os"
	"os/signal"
	"syscall"
	"time"

	"github.com/otelcol-handoff/otelcol-handoff/handoffprocessor/handoffprocessortest"
	"github.com/otelcol-handoff/otelcol-handoff/internal/loadtest"
)

func main() {
	o := loadtest.Options{Retained: handoffprocessortest.Retained}
	flag.StringVar(&o.Binary, "binary", "_build/otelcol-handoff", "collector binary")
	flag.StringVar(&o.Baseline, "baseline", "", "a second collector binary (the code before a change) to run every run with too, back to back, and compare with")
	flag.DurationVar(&o.Duration, "duration", 15*time.Second, "load duration of each of the runs (5 pipelines × fixed rate and saturation × rounds)")
	flag.IntVar(&o.Rate, "rate", 50000, "offered spans/s of the fixed-rate runs (0 = none)")
	flag.BoolVar(&o.Saturation, "saturation", true, "also run each pipeline as fast as the collector accepts")
	flag.IntVar(&o.Senders, "senders", 4, "concurrent OTLP/HTTP senders")
	flag.IntVar(&o.Batch, "batch", 5, "traces per request")
	flag.StringVar(&o.TracesDir, "traces", "testdata/traces", "folder of the OTLP/JSON captures")
	flag.IntVar(&o.Templates, "templates", 240, "trace templates built from the captures")
	flag.StringVar(&o.ProfileDir, "profile", "", "save a CPU and a heap profile of each run into this folder (the collector's pprof extension)")
	flag.IntVar(&o.Rounds, "rounds", 1, "repeat the whole sequence of runs; each ratio is taken within a round and the targets table gives the median of the rounds")
	flag.DurationVar(&o.Hold, "hold", loadtest.HoldTime, "how long each buffering pipeline holds a trace: tail_sampling's decision_wait, the handoff processor's quiet_period")
	flag.StringVar(&o.Only, "only", "", "run only the pipelines whose names contain this (bare, tail_sampling, handoff); the retained-memory figure is still measured")
	flag.Parse()
	o.Progress = os.Stderr
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	rep, err := loadtest.Execute(ctx, o)
	if err != nil {
		fmt.Fprintln(os.Stderr, "loadtest:", err)
		os.Exit(1)
	}
	rep.Write(os.Stdout)
	if !rep.Lossless() {
		os.Exit(1)
	}
}
