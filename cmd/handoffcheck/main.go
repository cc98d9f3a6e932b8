// Command handoffcheck gives a CI job a verdict from the same collector config that runs
// in production: it replays span files (or captures a test run live) through the handoff
// processor and assertion exporter, in process, and exits with a code that says how it went.
//
//	handoffcheck replay --config collector.yaml [flags] FILE...
//	handoffcheck run --config collector.yaml [flags] -- COMMAND ARGS...
//
// Exit codes: 0 every assertion and gate passed; 1 an assertion failed or errored (a judge
// grading that erred included; --fail-on chooses the outcomes: default fail,error, and
// skipped can be added) or a gate failed; 2 config or input error; 3 the wrapped command
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

	"github.com/otelcol-handoff/otelcol-handoff/assertionexporter"
	"github.com/otelcol-handoff/otelcol-handoff/internal/rules"
	"github.com/otelcol-handoff/otelcol-handoff/internal/spanfile"
	"github.com/otelcol-handoff/otelcol-handoff/internal/textsafe"
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

Replays span files or the spans of a command run with OTEL_EXPORTER_OTLP_ENDPOINT pointing at
an embedded OTLP receiver, through the handoff processor and assertion exporter of the collector
config, and exits 0 (all passed), 1 (an assertion failed or errored, or a gate failed), 2 (usage,
config or input error), 3 (the command failed). --fail-on lists the outcomes that exit 1: fail
always does; the default is fail,error (a judge grading that erred fails the run); fail alone
relaxes errors; add skipped to fail on skipped assertions too.

Span files (regular files only): OTLP/JSON, JSON lines (the file exporter's default),
length-delimited OTLP protobuf (the file exporter's format: proto, or varint-delimited), or one
OTLP protobuf request of at most 256 MiB; one request at most 256 MiB in every format.
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
	fs.StringVar(&o.html, "html", "", "write a self-contained HTML report (each failing trace's DAG rendered) to this path")
	fs.StringVar(&failOn, "fail-on", defaultFailOn, "the assertion outcomes that exit 1, comma-separated: fail (always), error, skipped")
	fs.BoolVar(&verbose, "verbose", false, "log the components' info messages to stderr")
	if err := fs.Parse(args[1:]); err != nil {
		return exitUsage
	}
	if o.config == "" {
		fmt.Fprintln(stderr, "handoffcheck: --config is required")
		return exitUsage
	}
	// Report paths are checked before anything runs (the config's are checked with the
	// config), so a typo fails at once, not after the whole replay.
	for _, f := range []struct{ flag, path string }{{"--json", o.jsonOut}, {"--junit", o.junit}, {"--markdown", o.markdown}, {"--html", o.html}} {
		if f.path == "" {
			continue
		}
		if err := assertionexporter.CheckReportPath(f.path); err != nil {
			printError(stderr, fmt.Errorf("%s: %w", f.flag, err))
			return exitUsage
		}
	}
	var err error
	if o.failOn, err = parseFailOn(failOn); err != nil {
		fmt.Fprintf(stderr, "handoffcheck: --fail-on: %v\n", err)
		return exitUsage
	}
	level := zapcore.ErrorLevel
	if verbose {
		level = zapcore.InfoLevel
	}
	o.logger = zap.New(zapcore.NewCore(zapcore.NewConsoleEncoder(zap.NewDevelopmentEncoderConfig()),
		zapcore.AddSync(textsafe.Writer(stderr)), level)) // verdict logs carry span data

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

// defaultFailOn: a failed assertion and an errored one (a judge grading that erred, an
// evaluation over eval_timeout) fail the run; a skipped one does not.
const defaultFailOn = "fail,error"

// parseFailOn reads --fail-on: the outcomes that exit 1. fail is always one of them (a
// failed assertion never passes a run), so the flag relaxes errors (--fail-on fail) or adds
// skipped; an empty value says nothing and is refused.
func parseFailOn(list string) (map[rules.Outcome]bool, error) {
	out := map[rules.Outcome]bool{rules.Fail: true}
	named := 0
	for _, f := range strings.Split(list, ",") {
		switch o := rules.Outcome(strings.TrimSpace(f)); o {
		case "":
			continue
		case rules.Fail, rules.Error, rules.Skipped:
			out[o] = true
		default:
			return nil, fmt.Errorf("unknown outcome %q (want fail, error, skipped)", strings.TrimSpace(f))
		}
		named++
	}
	if named == 0 {
		return nil, fmt.Errorf("name at least one outcome (fail, error, skipped; default %s)", defaultFailOn)
	}
	return out, nil
}

// replay feeds every file through the pipeline, then judges.
func replay(ctx context.Context, o options, files []string, stdout, stderr io.Writer) int {
	pl, err := newPipeline(ctx, o)
	if err != nil {
		printError(stderr, err)
		return exitUsage
	}
	spans := 0
	for _, path := range files {
		n, err := spanfile.Read(path, func(td ptrace.Traces) error { nameSource(pl, td, path); return pl.proc.ConsumeTraces(ctx, td) })
		spans += n
		if err != nil {
			pl.abort(ctx)
			// One line: a parser may quote the file's content.
			printLine(stderr, "handoffcheck: %v", err)
			return exitUsage
		}
	}
	return verdict(ctx, pl, o, spans, stdout, stderr)
}

// verdict completes the traces, prints the summary and picks the exit code.
func verdict(ctx context.Context, pl *pipeline, o options, spans int, stdout, stderr io.Writer) int {
	results, err := pl.finish(ctx)
	if err != nil {
		printError(stderr, err)
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
			printLine(stdout, "%s %s %s trace %s%s: %s", strings.ToUpper(string(r.Outcome)), r.Case, r.Step, r.TraceID, mark, r.Message)
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
			printLine(stdout, "GATE PASS %s", g)
		case rules.GateFail:
			failed++
			printLine(stdout, "GATE FAIL %s", g)
			code = exitFail
		case rules.GateInsufficient:
			few++
			printLine(stdout, "GATE SKIPPED %s", g)
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
		printLine(stdout, "judge: %s, template %s, temperature 0, %s", pl.judge.Model, pl.judge.Template,
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

// printLine prints one line of output. Agent names, messages and gate pairs come from span
// data: escaped, so they cannot end the line, forge another one (a PASS line, a GitHub
// ::error annotation) or send terminal escapes.
func printLine(w io.Writer, format string, args ...any) {
	fmt.Fprintln(w, textsafe.Escape(fmt.Sprintf(format, args...)))
}

// printError prints an error, one line per joined error; span data in it (a span file's
// content quoted by a parser, a judge's reason) is escaped, and every line starts with
// "handoffcheck: " so no part of it starts a line of its own.
func printError(w io.Writer, err error) {
	fmt.Fprintln(w, "handoffcheck: "+textsafe.Lines(err.Error(), "handoffcheck: "))
}
