// Command handoffcheck gives a CI job a verdict from the same collector config that runs
// in production: it replays span files (or captures a test run live) through the handoff
// processor and assertion exporter, in process, and exits with a code that says how it went.
//
//	handoffcheck replay --config collector.yaml [flags] FILE...
//	handoffcheck run --config collector.yaml [flags] -- COMMAND ARGS...
//
// Exit codes: 0 every assertion and gate passed; 1 an assertion failed (or, with --fail-on,
// errored or was skipped) or a gate failed; 2 config or input error; 3 the wrapped command
// failed. A handoff rubric failure whose axis is gated does not fail the run by itself: the
// gate (the mean score of its pair and axis over every trace of the run) decides.
package main

import (
	"context"
	"flag"
	"fmt"
	"io"
	"os"
	"os/signal"
	"sort"
	"strings"
	"syscall"

	"go.opentelemetry.io/collector/pdata/ptrace"
	"go.uber.org/zap"
	"go.uber.org/zap/zapcore"

	"github.com/otelcol-handoff/otelcol-handoff/internal/redact"
	"github.com/otelcol-handoff/otelcol-handoff/internal/rules"
	"github.com/otelcol-handoff/otelcol-handoff/internal/spanfile"
)

const (
	exitPass          = 0
	exitFail          = 1
	exitUsage         = 2
	exitCommandFailed = 3
)

func main() {
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	code := run(ctx, os.Args[1:], os.Stdout, os.Stderr)
	stop()
	os.Exit(code)
}

const usage = `usage:
  handoffcheck replay --config collector.yaml [flags] [FILE...]
  handoffcheck run --config collector.yaml [flags] -- COMMAND [ARGS...]

Replays span files (OTLP/JSON, collector file-exporter JSON lines, OTLP protobuf) or the spans
of a command run with OTEL_EXPORTER_OTLP_ENDPOINT pointing at an embedded OTLP receiver, through
the handoff processor and assertion exporter of the collector config, and exits
0 (all passed), 1 (an assertion or a gate failed), 2 (config or input error), 3 (the command failed).
`

// run is main without the process: arguments in, exit code out.
func run(ctx context.Context, args []string, stdout, stderr io.Writer) int {
	if len(args) == 0 || (args[0] != "replay" && args[0] != "run") {
		fmt.Fprint(stderr, usage)
		return exitUsage
	}
	mode := args[0]
	fs := flag.NewFlagSet("handoffcheck "+mode, flag.ContinueOnError)
	fs.SetOutput(stderr)
	var o options
	var failOn string
	var verbose bool
	fs.StringVar(&o.config, "config", "", "collector config file (required)")
	fs.StringVar(&o.processor, "processor", "", "handoff processor id in the config (default: the one in the traces pipeline)")
	fs.StringVar(&o.exporter, "exporter", "", "assertion exporter id in the config (default: the one in the traces pipeline)")
	fs.StringVar(&o.jsonOut, "json", "", "write every result as JSON lines to this path")
	fs.StringVar(&o.junit, "junit", "", "write a JUnit XML report to this path (a testsuite per case)")
	fs.StringVar(&o.markdown, "markdown", "", "write a Markdown summary with a Mermaid DAG of each failing trace to this path")
	fs.StringVar(&failOn, "fail-on", "", "also exit 1 on these outcomes: comma-separated skipped, error")
	fs.BoolVar(&verbose, "verbose", false, "log the components' info messages to stderr")
	if err := fs.Parse(args[1:]); err != nil {
		return exitUsage
	}
	if o.config == "" {
		fmt.Fprintln(stderr, "handoffcheck: --config is required")
		return exitUsage
	}
	o.failOn = map[rules.Outcome]bool{rules.Fail: true}
	for _, f := range strings.Split(failOn, ",") {
		switch strings.TrimSpace(f) {
		case "":
		case "skipped":
			o.failOn[rules.Skipped] = true
		case "error":
			o.failOn[rules.Error] = true
		default:
			fmt.Fprintf(stderr, "handoffcheck: --fail-on: unknown outcome %q (want skipped, error)\n", f)
			return exitUsage
		}
	}
	level := zapcore.ErrorLevel
	if verbose {
		level = zapcore.InfoLevel
	}
	o.logger = zap.New(zapcore.NewCore(zapcore.NewConsoleEncoder(zap.NewDevelopmentEncoderConfig()),
		zapcore.AddSync(stderr), level))

	rest := fs.Args()
	if mode == "replay" {
		o.needInput = len(rest) == 0
		return replay(ctx, o, rest, stdout, stderr)
	}
	if len(rest) == 0 {
		fmt.Fprintln(stderr, "handoffcheck run: no command given (put it after --)")
		return exitUsage
	}
	return live(ctx, o, rest, stdout, stderr)
}

// replay feeds every file through the pipeline, then judges.
func replay(ctx context.Context, o options, files []string, stdout, stderr io.Writer) int {
	pl, err := newPipeline(ctx, o)
	if err != nil {
		fmt.Fprintln(stderr, "handoffcheck:", err)
		return exitUsage
	}
	spans := 0
	for _, path := range files {
		n, err := spanfile.Read(path, func(td ptrace.Traces) error { return pl.proc.ConsumeTraces(ctx, td) })
		spans += n
		if err != nil {
			pl.abort(ctx)
			fmt.Fprintln(stderr, "handoffcheck:", err)
			return exitUsage
		}
	}
	return verdict(ctx, pl, o, spans, stdout, stderr)
}

// verdict completes the traces, prints the summary and picks the exit code.
func verdict(ctx context.Context, pl *pipeline, o options, spans int, stdout, stderr io.Writer) int {
	results, err := pl.finish(ctx)
	if err != nil {
		fmt.Fprintln(stderr, "handoffcheck:", err)
		return exitUsage
	}
	if len(results) == 0 {
		read := ""
		if spans >= 0 {
			read = fmt.Sprintf(" (%d spans read)", spans)
		}
		fmt.Fprintf(stderr, "handoffcheck: nothing was asserted%s: no case selected any trace "+
			"(no agent span recognized, or every case's when condition was false)\n", read)
		return exitUsage
	}
	sort.SliceStable(results, func(i, j int) bool {
		a, b := results[i], results[j]
		if a.Case != b.Case {
			return a.Case < b.Case
		}
		return a.TraceID < b.TraceID
	})
	counts := map[rules.Outcome]int{}
	traces := map[string]bool{}
	code := exitPass
	gated := 0
	for _, r := range results {
		counts[r.Outcome]++
		traces[r.TraceID] = true
		gatedFail := r.Outcome == rules.Fail && r.Gated
		if r.Outcome != rules.Pass {
			mark := ""
			if gatedFail {
				mark = " (gated)"
				gated++
			}
			esc := redact.Escape // trace text: one console line per result
			fmt.Fprintf(stdout, "%s %s %s trace %s%s: %s\n", strings.ToUpper(string(r.Outcome)), esc(r.Case), esc(r.Step), esc(r.TraceID), mark, esc(r.Message))
		}
		if o.failOn[r.Outcome] && !gatedFail {
			code = exitFail
		}
	}
	tally := rules.NewGateTally()
	tally.Add(results)
	gates := tally.Evaluate(pl.gates)
	passed, failed, few := 0, 0, 0
	for _, g := range gates {
		switch g.Status {
		case rules.GatePass:
			passed++
			fmt.Fprintf(stdout, "GATE PASS %s\n", redact.Escape(g.String()))
		case rules.GateFail:
			failed++
			fmt.Fprintf(stdout, "GATE FAIL %s\n", redact.Escape(g.String()))
			code = exitFail
		case rules.GateInsufficient:
			few++
			fmt.Fprintf(stdout, "GATE SKIPPED %s\n", redact.Escape(g.String()))
		}
	}
	fmt.Fprintf(stdout, "handoffcheck: %d traces, %d assertions\n", len(traces), len(results))
	gatedText := ""
	if gated > 0 {
		gatedText = fmt.Sprintf(" (%d gated)", gated)
	}
	fmt.Fprintf(stdout, "%d passed, %d failed%s, %d errors, %d skipped\n",
		counts[rules.Pass], counts[rules.Fail], gatedText, counts[rules.Error], counts[rules.Skipped])
	if pl.gates.Enabled() {
		fmt.Fprintf(stdout, "gates: %d passed, %d failed", passed, failed)
		if few > 0 {
			fmt.Fprintf(stdout, ", %d with too few handoffs", few)
		}
		fmt.Fprintln(stdout)
	}
	if pl.judge != nil {
		fmt.Fprintf(stdout, "judge: %s, template %s, temperature 0, %s\n", redact.Escape(pl.judge.Model), pl.judge.Template,
			plural(pl.judge.Samples, "sample", "samples"))
	}
	return code
}

func plural(n int, one, many string) string {
	if n == 1 {
		return fmt.Sprintf("%d %s", n, one)
	}
	return fmt.Sprintf("%d %s", n, many)
}
