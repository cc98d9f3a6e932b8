package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"strings"

	"github.com/spf13/cobra"
	"github.com/spf13/pflag"
	"go.uber.org/zap"
	"go.uber.org/zap/zapcore"

	"github.com/otelcol-handoff/otelcol-handoff/assertionexporter"
	"github.com/otelcol-handoff/otelcol-handoff/internal/textsafe"
)

const longHelp = `handoffcheck gives a CI job a verdict from the same collector config that runs in production.

It replays span files, or the spans of a command run with its OTLP exporter pointed at an
embedded receiver, through the handoff processor and assertion exporter of the collector config,
in process, and exits 0 (all passed), 1 (an assertion failed or errored, or a gate failed),
2 (usage, config or input error), 3 (the wrapped command failed). validate checks a config
without judging anything, and warns about rules the given traces would never exercise.`

const examples = `  handoffcheck replay --config collector.yaml [flags] [FILE...]
  handoffcheck run --config collector.yaml [flags] -- COMMAND [ARGS...]
  handoffcheck validate --config collector.yaml [FILE...]
  handoffcheck version
  handoffcheck completion bash|zsh|fish|powershell`

const spanFilesHelp = `
Span files (regular files only): OTLP/JSON, JSON lines (the file exporter's default),
length-delimited OTLP protobuf (the file exporter's format: proto, or varint-delimited), or one
OTLP protobuf request of at most 256 MiB; one request at most 256 MiB in every format.`

const failOnHelp = `
--fail-on lists the outcomes that exit 1: fail always does; the default is fail,error (a judge
grading that erred fails the run); fail alone relaxes errors; add skipped to fail on skipped
assertions too. --summary json prints one JSON object on stdout (counts, exit code, per case,
failure clusters) and moves the human-readable lines to stderr.`

// usageTemplate is cobra's, with the command lines of the examples as the root's usage.
const usageTemplate = `usage:{{if .HasParent}}
  {{.UseLine}}{{else}}
{{.Example}}{{end}}{{if .HasAvailableSubCommands}}

Commands:{{range .Commands}}{{if (or .IsAvailableCommand (eq .Name "help"))}}
  {{rpad .Name .NamePadding }} {{.Short}}{{end}}{{end}}{{end}}{{if and .HasParent .HasExample}}

Examples:
{{.Example}}{{end}}{{if .HasAvailableLocalFlags}}

Flags:
{{.LocalFlags.FlagUsages | trimTrailingWhitespaces}}{{end}}{{if .HasAvailableInheritedFlags}}

Global Flags:
{{.InheritedFlags.FlagUsages | trimTrailingWhitespaces}}{{end}}{{if .HasAvailableSubCommands}}

Use "{{.CommandPath}} [command] --help" for more information about a command.{{end}}
`

// usageError is an error of the command line: exit 2, the message on stderr; withUsage
// also prints the command's usage (a bad flag, an unknown command).
type usageError struct {
	err       error
	withUsage bool
}

func (e usageError) Error() string { return e.err.Error() }

// run is main without the process: arguments in, exit code out.
func run(ctx context.Context, args []string, stdout, stderr io.Writer) int {
	code := exitPass
	root := newRootCommand(ctx, stdout, stderr, &code)
	root.SetArgs(goStyleFlags(root, args))
	cmd, err := root.ExecuteC()
	if err == nil {
		return code
	}
	var ue usageError
	if !errors.As(err, &ue) {
		ue = usageError{err: err, withUsage: true} // cobra's own: an unknown command, bad arguments
	}
	printError(stderr, ue.err)
	if ue.withUsage {
		fmt.Fprint(stderr, cmd.UsageString())
	}
	return exitUsage
}

func newRootCommand(ctx context.Context, stdout, stderr io.Writer, code *int) *cobra.Command {
	root := &cobra.Command{
		Use:     "handoffcheck",
		Short:   "Check agent delegation traces against the assertion cases of a collector config",
		Long:    longHelp,
		Example: examples,
		Version: versionLine(),
		// Bare, the command is a usage error (exit 2, usage on stderr); --help is not.
		RunE: func(cmd *cobra.Command, args []string) error {
			fmt.Fprint(stderr, cmd.UsageString())
			*code = exitUsage
			return nil
		},
		SilenceErrors: true,
		SilenceUsage:  true,
	}
	root.SetOut(stdout)
	root.SetErr(stderr)
	root.SetContext(ctx)
	root.SetUsageTemplate(usageTemplate)
	root.SetVersionTemplate("{{.Version}}\n")
	root.SetFlagErrorFunc(func(_ *cobra.Command, err error) error {
		return usageError{err: err, withUsage: true}
	})
	root.AddCommand(replayCommand(stdout, stderr, code), runCommand(stdout, stderr, code),
		validateCommand(stdout, stderr, code), versionCommand(stdout))
	// cobra's completion command, made strict: without a shell it is a usage error, not
	// its help (a shell it does not know is an unknown command).
	root.InitDefaultCompletionCmd()
	for _, c := range root.Commands() {
		if c.Name() == "completion" {
			c.RunE = func(*cobra.Command, []string) error {
				return usageError{err: errors.New("completion: name a shell (bash, zsh, fish or powershell)"), withUsage: true}
			}
		}
	}
	return root
}

// checkFlags are the flags replay and run share.
type checkFlags struct {
	o       options
	failOn  string
	verbose bool
	summary string
}

func (f *checkFlags) register(fs *pflag.FlagSet) {
	fs.StringVar(&f.o.config, "config", "", "collector config file (required)")
	fs.StringVar(&f.o.processor, "processor", "", "handoff processor id in the config (default: the one in the traces pipeline)")
	fs.StringVar(&f.o.exporter, "exporter", "", "assertion exporter id in the config (default: the one in the traces pipeline)")
	fs.StringVar(&f.o.jsonOut, "json", "", "write every result as JSON lines to this path")
	fs.StringVar(&f.o.junit, "junit", "", "write a JUnit XML report to this path (a testsuite per case)")
	fs.StringVar(&f.o.markdown, "markdown", "", "write a Markdown summary with a Mermaid DAG of each failing trace to this path")
	fs.StringVar(&f.o.html, "html", "", "write a self-contained HTML report (each failing trace's DAG rendered) to this path")
	fs.StringVar(&f.failOn, "fail-on", defaultFailOn, "the assertion outcomes that exit 1, comma-separated: fail (always), error, skipped")
	fs.BoolVar(&f.verbose, "verbose", false, "log the components' info messages to stderr")
	fs.StringVar(&f.summary, "summary", "text", "the summary on stdout: text, or json (one JSON object; the other lines go to stderr)")
}

// options checks the flags before anything runs (the config's report paths are checked
// with the config), so a typo fails at once, not after the whole replay; inputs are the
// span files to read (replay).
func (f *checkFlags) options(stderr io.Writer, inputs []string) (options, error) {
	o := f.o
	o.inputs = inputs
	if o.config == "" {
		return o, usageError{err: errors.New("--config is required")}
	}
	// Before anything is read or removed: no report may overwrite an input or another
	// report, or replace what is not a regular file.
	if err := checkReportPaths(flagReports(o), flagInputs(o)); err != nil {
		return o, usageError{err: err}
	}
	for _, rp := range []struct{ flag, path string }{{"--json", o.jsonOut}, {"--junit", o.junit}, {"--markdown", o.markdown}, {"--html", o.html}} {
		if rp.path == "" {
			continue
		}
		if err := assertionexporter.CheckReportPath(rp.path); err != nil {
			return o, usageError{err: fmt.Errorf("%s: %w", rp.flag, err)}
		}
	}
	var err error
	if o.failOn, err = parseFailOn(f.failOn); err != nil {
		return o, usageError{err: fmt.Errorf("--fail-on: %w", err)}
	}
	switch f.summary {
	case "text":
	case "json":
		o.summaryJSON = true
	default:
		return o, usageError{err: fmt.Errorf("--summary: unknown format %q (want text or json)", f.summary)}
	}
	o.logger = newLogger(stderr, f.verbose)
	o.report = &runReport{}
	return o, nil
}

// newLogger logs the components' errors (with verbose, their info messages) to stderr,
// escaped: verdict logs carry span data.
func newLogger(stderr io.Writer, verbose bool) *zap.Logger {
	level := zapcore.ErrorLevel
	if verbose {
		level = zapcore.InfoLevel
	}
	return zap.New(zapcore.NewCore(zapcore.NewConsoleEncoder(zap.NewDevelopmentEncoderConfig()),
		zapcore.AddSync(textsafe.Writer(stderr)), level))
}

func replayCommand(stdout, stderr io.Writer, code *int) *cobra.Command {
	var f checkFlags
	cmd := &cobra.Command{
		Use:   "replay --config collector.yaml [flags] [FILE...]",
		Short: "Judge recorded span files",
		Long: "Replays span files through the handoff processor and assertion exporter of the collector config\n" +
			"and judges every trace (with no file, the config's source FILE cases read theirs).\n" + spanFilesHelp + "\n" + failOnHelp,
		RunE: func(cmd *cobra.Command, args []string) error {
			o, err := f.options(stderr, args)
			if err != nil {
				return err
			}
			o.needInput = len(args) == 0
			o.endOfInput = true
			*code = finish(o, replay(cmd.Context(), o, args, humanOut(o, stdout, stderr), stderr), stdout)
			return nil
		},
	}
	f.register(cmd.Flags())
	return cmd
}

func runCommand(stdout, stderr io.Writer, code *int) *cobra.Command {
	var f checkFlags
	var protocol string
	cmd := &cobra.Command{
		Use:   "run --config collector.yaml [flags] -- COMMAND [ARGS...]",
		Short: "Run a command with its OTLP exporter pointed at an embedded receiver, then judge its traces",
		Long: "Runs the command with OTEL_EXPORTER_OTLP_ENDPOINT (and _TRACES_ENDPOINT, _PROTOCOL) pointing at an\n" +
			"embedded OTLP receiver on free loopback ports (gRPC and HTTP), then judges the traces it sent.\n" +
			"--protocol picks what the variables name: http/protobuf (default), http/json or grpc; the\n" +
			"environment's OTEL_EXPORTER_OTLP_TRACES_PROTOCOL (else OTEL_EXPORTER_OTLP_PROTOCOL), when set, is\n" +
			"the default. handoffcheck's flags come before the command: what follows its name is its own.\n" +
			"HANDOFFCHECK_OTLP_GRPC_ENDPOINT and HANDOFFCHECK_OTLP_HTTP_ENDPOINT name both receivers whatever\n" +
			"the protocol. Exit 3 when the command fails (the verdicts are still printed).\n" + failOnHelp,
		RunE: func(cmd *cobra.Command, args []string) error {
			o, err := f.options(stderr, nil)
			if err != nil {
				return err
			}
			if len(args) == 0 {
				return usageError{err: errors.New("run: no command given (put it after --)")}
			}
			p, err := otlpProtocol(protocol, cmd.Flags().Changed("protocol"))
			if err != nil {
				return usageError{err: err}
			}
			// With --summary json, stdout holds the JSON object alone: the command's own
			// output goes to stderr too.
			human := humanOut(o, stdout, stderr)
			*code = finish(o, live(cmd.Context(), o, p, args, human, stderr), stdout)
			return nil
		},
	}
	f.register(cmd.Flags())
	cmd.Flags().StringVar(&protocol, "protocol", protocolHTTPProtobuf,
		"the OTLP protocol the command's OTEL_EXPORTER_OTLP_* variables name: http/protobuf, http/json or grpc")
	// The command's own flags are not handoffcheck's: flags end at the first argument.
	cmd.Flags().SetInterspersed(false)
	return cmd
}

// humanOut is where the verdict lines go: stdout, or stderr when stdout holds the JSON
// summary.
func humanOut(o options, stdout, stderr io.Writer) io.Writer {
	if o.summaryJSON {
		return stderr
	}
	return stdout
}

// goStyleFlags keeps the single-dash long flags of the flag package working (`-config x`,
// `-fail-on=fail`): before the subcommand's first argument, a single-dash token naming one
// of its long flags is rewritten with two dashes. Arguments (a file, the wrapped command's
// own flags) are never touched.
func goStyleFlags(root *cobra.Command, args []string) []string {
	if len(args) == 0 {
		return args
	}
	sub, _, err := root.Find(args[:1])
	if err != nil || sub == root {
		return args
	}
	out := append([]string(nil), args...)
	fs := sub.Flags()
	for i := 1; i < len(out); i++ {
		tok := out[i]
		if tok == "--" || !strings.HasPrefix(tok, "-") || tok == "-" {
			break
		}
		name, _, hasValue := strings.Cut(strings.TrimLeft(tok, "-"), "=")
		fl := fs.Lookup(name)
		if fl == nil {
			continue // a shorthand (-h) or an unknown flag: pflag reports it
		}
		if !strings.HasPrefix(tok, "--") && len(name) > 1 {
			out[i] = "-" + tok
		}
		if !hasValue && fl.Value.Type() != "bool" {
			i++ // its value
		}
	}
	return out
}
