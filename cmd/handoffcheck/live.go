package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net"
	"os"
	"os/exec"
	"strconv"

	"go.opentelemetry.io/collector/component"
	"go.opentelemetry.io/collector/component/componenttest"
	"go.opentelemetry.io/collector/confmap"
	"go.opentelemetry.io/collector/receiver"
	"go.opentelemetry.io/collector/receiver/otlpreceiver"
)

// live runs a command with its OTLP exporters pointed at an embedded receiver (the
// collector's own otlp receiver, gRPC and HTTP on free loopback ports), then judges the
// traces it sent: seed 000's LIVE source for a test run.
func live(ctx context.Context, o options, command []string, stdout, stderr io.Writer) int {
	pl, err := newPipeline(ctx, o)
	if err != nil {
		printError(stderr, err)
		return exitUsage
	}
	grpcPort, err1 := freePort()
	httpPort, err2 := freePort()
	if err := errors.Join(err1, err2); err != nil {
		pl.abort(ctx)
		printError(stderr, err)
		return exitUsage
	}
	rf := otlpreceiver.NewFactory()
	rcfg := rf.CreateDefaultConfig()
	if err := confmap.NewFromStringMap(map[string]any{"protocols": map[string]any{
		"grpc": map[string]any{"endpoint": "127.0.0.1:" + strconv.Itoa(grpcPort)},
		"http": map[string]any{"endpoint": "127.0.0.1:" + strconv.Itoa(httpPort)},
	}}).Unmarshal(rcfg); err != nil {
		pl.abort(ctx)
		printError(stderr, fmt.Errorf("embedded receiver: %w", err))
		return exitUsage
	}
	tel := componenttest.NewNopTelemetrySettings()
	tel.Logger = o.logger
	recv, err := rf.CreateTraces(ctx, receiver.Settings{ID: component.MustNewID("otlp"), TelemetrySettings: tel,
		BuildInfo: component.NewDefaultBuildInfo()}, rcfg, pl.proc)
	if err == nil {
		err = recv.Start(ctx, componenttest.NewNopHost())
	}
	if err != nil {
		pl.abort(ctx)
		printError(stderr, fmt.Errorf("embedded receiver: %w", err))
		return exitUsage
	}

	endpoint := "http://127.0.0.1:" + strconv.Itoa(httpPort)
	cmd := exec.CommandContext(ctx, command[0], command[1:]...)
	cmd.Stdout, cmd.Stderr, cmd.Stdin = stdout, stderr, os.Stdin
	cmd.Env = append(os.Environ(),
		"OTEL_EXPORTER_OTLP_ENDPOINT="+endpoint,
		"OTEL_EXPORTER_OTLP_TRACES_ENDPOINT="+endpoint+"/v1/traces",
		"OTEL_EXPORTER_OTLP_PROTOCOL=http/protobuf",
		"OTEL_EXPORTER_OTLP_TRACES_PROTOCOL=http/protobuf",
		"HANDOFFCHECK_OTLP_GRPC_ENDPOINT=127.0.0.1:"+strconv.Itoa(grpcPort),
	)
	fmt.Fprintf(stderr, "handoffcheck: running %q with OTEL_EXPORTER_OTLP_ENDPOINT=%s\n", command, endpoint)
	runErr := cmd.Run()
	// The command's exporters flushed before it exited and the receiver answers a request
	// only once the processor took it: every span it sent is in.
	if err := recv.Shutdown(ctx); err != nil {
		printError(stderr, fmt.Errorf("embedded receiver: %w", err))
	}
	code := verdict(ctx, pl, o, -1, stdout, stderr)
	if runErr != nil {
		var exitErr *exec.ExitError
		if errors.As(runErr, &exitErr) {
			fmt.Fprintf(stderr, "handoffcheck: the command failed with exit code %d\n", exitErr.ExitCode())
		} else {
			printError(stderr, fmt.Errorf("the command could not run: %w", runErr))
		}
		return exitCommandFailed
	}
	return code
}

// freePort asks the kernel for a free loopback port.
func freePort() (int, error) {
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return 0, err
	}
	defer l.Close()
	return l.Addr().(*net.TCPAddr).Port, nil
}
