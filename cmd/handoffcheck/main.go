// Command handoffcheck gives a CI job a verdict from the same collector config that runs
// in production: it replays span files (or captures a test run live) through the handoff
// processor and assertion exporter, in process, and exits with a code that says how it went.
//
//	handoffcheck replay --config collector.yaml [flags] FILE...
//	handoffcheck run --config collector.yaml [flags] -- COMMAND ARGS...
//	handoffcheck validate --config collector.yaml [FILE...]
//	handoffcheck version | completion SHELL | help [COMMAND]
//
// Exit codes: 0 every assertion and gate passed; 1 an assertion failed or errored (a judge
// grading that erred included; --fail-on chooses the outcomes: default fail,error, and
// skipped can be added) or a gate failed; 2 config or input error; 3 the wrapped command
// failed. A handoff rubric failure whose axis is gated does not fail the run by itself: the
// gate (the mean score of its pair and axis over every trace of the run) decides.
package main

import (
	"context"
	"fmt"
	"io"
	"os"
	"os/signal"
	"sort"
	"strings"
	"syscall"

	"go.opentelemetry.io/collector/pdata/ptrace"

	"github.com/otelcol-handoff/otelcol-handoff/internal/gate"
	"github.com/otelcol-handoff/otelcol-handoff/internal/rules"
	"github.com/otelcol-handoff/otelcol-handoff/internal/spanfile"
	"github.com/otelcol-handoff/otelcol-handoff/internal/textsafe"
	"github.com/otelcol-handoff/otelcol-handoff/internal/verdict"
)

const (
	exitPass          = verdict.ExitPass
	exitFail          = verdict.ExitFail
	exitUsage         = 2
	exitCommandFailed = 3
)

func main() {
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	code := run(ctx, os.Args[1:], os.Stdout, os.Stderr)
	stop()
	os.Exit(code)
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
		return o.fail(stderr, err)
	}
	spans := 0
	for _, path := range files {
		n, err := spanfile.Read(path, func(td ptrace.Traces) error {
			pl.read(path, td)
			nameSource(pl, td, path)
			return pl.proc.ConsumeTraces(ctx, td)
		})
		spans += n
		if err != nil {
			pl.abort(ctx)
			// One line: a parser may quote the file's content.
			o.note(func(r *runReport) { r.err = err.Error() })
			printLine(stderr, "handoffcheck: %v", err)
			return exitUsage
		}
	}
	return judgeRun(ctx, pl, o, spans, stdout, stderr)
}

// judgeRun completes the traces, prints the summary and picks the exit code.
func judgeRun(ctx context.Context, pl *pipeline, o options, spans int, stdout, stderr io.Writer) int {
	results, err := pl.finish(ctx)
	if err != nil {
		return o.fail(stderr, err)
	}
	for _, w := range pl.warnings() {
		o.note(func(r *runReport) { r.warnings = append(r.warnings, w) })
		printLine(stderr, "handoffcheck: %s", w)
	}
	if len(results) == 0 {
		read := ""
		if spans >= 0 {
			read = fmt.Sprintf(" (%d spans read)", spans)
		}
		msg := fmt.Sprintf("nothing was asserted%s: no case selected any trace "+
			"(no agent span recognized, or every case's when condition was false)", read)
		o.note(func(r *runReport) { r.err = msg })
		fmt.Fprintf(stderr, "handoffcheck: %s\n", msg)
		return exitUsage
	}
	sort.SliceStable(results, func(i, j int) bool {
		a, b := results[i], results[j]
		if a.Case != b.Case {
			return a.Case < b.Case
		}
		return a.TraceID < b.TraceID
	})
	sum := newSummary(pl.cases)
	o.note(func(r *runReport) { r.summary = sum })
	traces := map[string]bool{}
	for _, r := range results {
		traces[r.TraceID] = true
		gatedFail := verdict.GatedFail(r)
		info := pl.index.lookup(r.TraceID)
		sum.add(r, gatedFail, info)
		if r.Outcome != rules.Pass {
			mark := ""
			if gatedFail {
				mark = " (gated)"
			}
			printLine(stdout, "%s %s %s trace %s%s%s: %s", strings.ToUpper(string(r.Outcome)), r.Case, r.Step, r.TraceID,
				info.label(), mark, r.Message)
		}
	}
	tally := gate.NewTally()
	tally.Add(rules.Scores(results))
	gates := tally.Evaluate(pl.gates)
	sum.Gates = gates
	for _, g := range gates {
		switch g.Status {
		case gate.Pass:
			printLine(stdout, "GATE PASS %s", g)
		case gate.Fail:
			printLine(stdout, "GATE FAIL %s", g)
		case gate.Insufficient:
			printLine(stdout, "GATE SKIPPED %s", g)
		}
	}
	run := verdict.Run{Counts: sum.Counts, Gates: gates}
	code := run.ExitCode(o.failOn)
	gc := verdict.CountGates(gates)
	passed, failed, few := gc.Passed, gc.Failed, gc.Insufficient
	sum.Traces, sum.Assertions = len(traces), len(results)
	c := sum.Counts
	fmt.Fprintf(stdout, "handoffcheck: %d traces, %d assertions\n", len(traces), len(results))
	gatedText := ""
	if c.Gated > 0 {
		gatedText = fmt.Sprintf(" (%d gated)", c.Gated)
	}
	fmt.Fprintf(stdout, "%d passed, %d failed%s, %d errors, %d skipped\n", c.Pass, c.Fail, gatedText, c.Error, c.Skipped)
	if pl.gates.Enabled() {
		fmt.Fprintf(stdout, "gates: %d passed, %d failed", passed, failed)
		if few > 0 {
			fmt.Fprintf(stdout, ", %d with too few handoffs", few)
		}
		fmt.Fprintln(stdout)
	}
	if pl.judge != nil {
		sum.Judge = pl.judge
		printLine(stdout, "judge: %s, template %s, temperature 0, %s", pl.judge.Model, pl.judge.Template,
			textsafe.Plural(pl.judge.Samples, "sample", "samples"))
	}
	return code
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
