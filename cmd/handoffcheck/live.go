package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"strconv"
	"strings"

	"go.opentelemetry.io/collector/component"
	"go.opentelemetry.io/collector/component/componenttest"
	"go.opentelemetry.io/collector/confmap"
	"go.opentelemetry.io/collector/consumer"
	"go.opentelemetry.io/collector/pdata/ptrace"
	"go.opentelemetry.io/collector/receiver"
	"go.opentelemetry.io/collector/receiver/otlpreceiver"

	"github.com/otelcol-handoff/otelcol-handoff/internal/freeport"
)

// The OTLP protocols run can point a command's exporter at (OTEL_EXPORTER_OTLP_PROTOCOL).
const (
	protocolHTTPProtobuf = "http/protobuf"
	protocolHTTPJSON     = "http/json"
	protocolGRPC         = "grpc"
)

// otlpProtocol is the protocol of --protocol; when the flag is not given, the one the
// environment names for traces (OTEL_EXPORTER_OTLP_TRACES_PROTOCOL, then
// OTEL_EXPORTER_OTLP_PROTOCOL), else http/protobuf.
func otlpProtocol(flag string, given bool) (string, error) {
	p, from := flag, "--protocol"
	if !given {
		for _, env := range []string{"OTEL_EXPORTER_OTLP_TRACES_PROTOCOL", "OTEL_EXPORTER_OTLP_PROTOCOL"} {
			if v := strings.TrimSpace(os.Getenv(env)); v != "" {
				p, from = v, env
				break
			}
		}
	}
	switch p {
	case protocolHTTPProtobuf, protocolHTTPJSON, protocolGRPC:
		return p, nil
	}
	return "", fmt.Errorf("%s: unknown OTLP protocol %q (want http/protobuf, http/json or grpc)", from, p)
}

// otlpEnv are the variables that point a command's OTLP exporter at the embedded receiver,
// as the OpenTelemetry SDKs read them: for grpc the endpoint is the gRPC port (an http://
// URL: no TLS), for http/* the HTTP port (the traces endpoint with its /v1/traces path).
// HANDOFFCHECK_OTLP_GRPC_ENDPOINT and HANDOFFCHECK_OTLP_HTTP_ENDPOINT name both, whatever
// the protocol.
func otlpEnv(protocol string, grpcPort, httpPort int) []string {
	grpcURL := "http://127.0.0.1:" + strconv.Itoa(grpcPort)
	httpURL := "http://127.0.0.1:" + strconv.Itoa(httpPort)
	endpoint, traces := httpURL, httpURL+"/v1/traces"
	if protocol == protocolGRPC {
		endpoint, traces = grpcURL, grpcURL
	}
	return []string{
		"OTEL_EXPORTER_OTLP_ENDPOINT=" + endpoint,
		"OTEL_EXPORTER_OTLP_TRACES_ENDPOINT=" + traces,
		"OTEL_EXPORTER_OTLP_PROTOCOL=" + protocol,
		"OTEL_EXPORTER_OTLP_TRACES_PROTOCOL=" + protocol,
		"OTEL_EXPORTER_OTLP_INSECURE=true",
		"OTEL_EXPORTER_OTLP_TRACES_INSECURE=true",
		"HANDOFFCHECK_OTLP_GRPC_ENDPOINT=127.0.0.1:" + strconv.Itoa(grpcPort),
		"HANDOFFCHECK_OTLP_HTTP_ENDPOINT=" + httpURL,
	}
}

// live runs a command with its OTLP exporters pointed at an embedded receiver (the
// collector's own otlp receiver, gRPC and HTTP on free loopback ports), then judges the
// traces it sent: the LIVE source for a test run.
func live(ctx context.Context, o options, protocol string, command []string, stdout, stderr io.Writer) int {
	pl, err := newPipeline(ctx, o)
	if err != nil {
		return o.fail(stderr, err)
	}
	grpcPort, err1 := freeport.Port()
	httpPort, err2 := freeport.Port()
	if err := errors.Join(err1, err2); err != nil {
		pl.abort(ctx)
		return o.fail(stderr, err)
	}
	rf := otlpreceiver.NewFactory()
	rcfg := rf.CreateDefaultConfig()
	if err := confmap.NewFromStringMap(map[string]any{"protocols": map[string]any{
		"grpc": map[string]any{"endpoint": "127.0.0.1:" + strconv.Itoa(grpcPort)},
		"http": map[string]any{"endpoint": "127.0.0.1:" + strconv.Itoa(httpPort)},
	}}).Unmarshal(rcfg); err != nil {
		pl.abort(ctx)
		return o.fail(stderr, fmt.Errorf("embedded receiver: %w", err))
	}
	tel := componenttest.NewNopTelemetrySettings()
	tel.Logger = o.logger
	// The spans of a live capture come from no file: their label says "live".
	in, err := consumer.NewTraces(func(ctx context.Context, td ptrace.Traces) error {
		pl.read("live", td)
		return pl.proc.ConsumeTraces(ctx, td)
	}, consumer.WithCapabilities(pl.proc.Capabilities()))
	if err != nil {
		pl.abort(ctx)
		return o.fail(stderr, err)
	}
	recv, err := rf.CreateTraces(ctx, receiver.Settings{
		ID: component.MustNewID("otlp"), TelemetrySettings: tel,
		BuildInfo: component.NewDefaultBuildInfo(),
	}, rcfg, in)
	if err == nil {
		err = recv.Start(ctx, componenttest.NewNopHost())
	}
	if err != nil {
		pl.abort(ctx)
		return o.fail(stderr, fmt.Errorf("embedded receiver: %w", err))
	}

	env := otlpEnv(protocol, grpcPort, httpPort)
	cmd := exec.CommandContext(ctx, command[0], command[1:]...)
	cmd.Stdout, cmd.Stderr, cmd.Stdin = stdout, stderr, os.Stdin
	cmd.Env = append(os.Environ(), env...)
	fmt.Fprintf(stderr, "handoffcheck: running %q with %s (OTEL_EXPORTER_OTLP_PROTOCOL=%s)\n", command, env[0], protocol)
	runErr := cmd.Run()
	// The command's exporters flushed before it exited and the receiver answers a request
	// only once the processor took it: every span it sent is in.
	if err := recv.Shutdown(ctx); err != nil {
		printError(stderr, fmt.Errorf("embedded receiver: %w", err))
	}
	code := judgeRun(ctx, pl, o, -1, stdout, stderr)
	if runErr != nil {
		var exitErr *exec.ExitError
		if errors.As(runErr, &exitErr) {
			c := exitErr.ExitCode()
			o.note(func(r *runReport) { r.commandExitCode = &c })
			fmt.Fprintf(stderr, "handoffcheck: the command failed with exit code %d\n", exitErr.ExitCode())
		} else {
			printError(stderr, fmt.Errorf("the command could not run: %w", runErr))
		}
		return exitCommandFailed
	}
	return code
}
