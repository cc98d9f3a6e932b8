// Command otlpreplay replays OTLP/JSON trace captures to a collector over
// OTLP/HTTP.
//
// Each file argument must hold one OTLP/JSON ExportTraceServiceRequest (the
// format of testdata/traces/*.json). It is validated, re-encoded as protobuf
// and POSTed to {endpoint}/v1/traces. One line is printed per file; the exit
// status is non-zero if any file failed.
//
//	go run ./cmd/otlpreplay --endpoint http://127.0.0.1:4318 testdata/traces/*.json
package main

import (
	"bytes"
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/url"
	"os"
	"os/signal"
	"strings"
	"time"

	"go.opentelemetry.io/collector/pdata/pcommon"
	"go.opentelemetry.io/collector/pdata/ptrace"
	"go.opentelemetry.io/collector/pdata/ptrace/ptraceotlp"
)

const (
	// requestTimeout bounds a single POST.
	requestTimeout = 10 * time.Second
	// maxResponseBody bounds how much of a response body is read.
	maxResponseBody = 1 << 20
)

func main() {
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt)
	code := run(ctx, os.Args[1:], os.Stdout, os.Stderr)
	stop()
	os.Exit(code)
}

// run is main without the process globals; it returns the exit status.
func run(ctx context.Context, args []string, stdout, stderr io.Writer) int {
	fs := flag.NewFlagSet("otlpreplay", flag.ContinueOnError)
	fs.SetOutput(stderr)
	endpoint := fs.String("endpoint", "http://127.0.0.1:4318", "OTLP/HTTP base URL of the collector")
	wait := fs.Duration("wait", 30*time.Second, "how long to wait for the endpoint to accept connections")
	fs.Usage = func() {
		fmt.Fprintln(stderr, "usage: otlpreplay [--endpoint URL] [--wait DURATION] FILE...")
		fs.PrintDefaults()
	}
	if err := fs.Parse(args); err != nil {
		return 2
	}
	if fs.NArg() == 0 {
		fs.Usage()
		return 2
	}

	target, err := tracesURL(*endpoint)
	if err != nil {
		fmt.Fprintf(stderr, "otlpreplay: %v\n", err)
		return 2
	}
	if err := waitForEndpoint(ctx, target, *wait); err != nil {
		fmt.Fprintf(stderr, "otlpreplay: %v\n", err)
		return 1
	}

	client := &http.Client{Timeout: requestTimeout}
	failed := 0
	for _, path := range fs.Args() {
		msg, err := replayFile(ctx, client, target.String(), path)
		if err != nil {
			failed++
			fmt.Fprintf(stdout, "FAIL %s: %v\n", path, err)
			continue
		}
		fmt.Fprintf(stdout, "ok   %s: %s\n", path, msg)
	}
	if failed > 0 {
		fmt.Fprintf(stderr, "otlpreplay: %d of %d files failed\n", failed, fs.NArg())
		return 1
	}
	return 0
}

// tracesURL returns {endpoint}/v1/traces.
func tracesURL(endpoint string) (*url.URL, error) {
	u, err := url.Parse(strings.TrimRight(endpoint, "/") + "/v1/traces")
	if err != nil {
		return nil, fmt.Errorf("invalid endpoint %q: %w", endpoint, err)
	}
	if (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" {
		return nil, fmt.Errorf("invalid endpoint %q: want http(s)://host:port", endpoint)
	}
	return u, nil
}

// waitForEndpoint dials the endpoint's host until it accepts a TCP
// connection or the wait time is over.
func waitForEndpoint(ctx context.Context, u *url.URL, wait time.Duration) error {
	addr := u.Host
	if u.Port() == "" {
		port := "80"
		if u.Scheme == "https" {
			port = "443"
		}
		addr = net.JoinHostPort(u.Hostname(), port)
	}
	ctx, cancel := context.WithTimeout(ctx, wait)
	defer cancel()
	var d net.Dialer
	for {
		attempt, cancelAttempt := context.WithTimeout(ctx, time.Second)
		conn, err := d.DialContext(attempt, "tcp", addr)
		cancelAttempt()
		if err == nil {
			return conn.Close()
		}
		select {
		case <-ctx.Done():
			return fmt.Errorf("%s did not accept connections within %s: %w", addr, wait, err)
		case <-time.After(200 * time.Millisecond):
		}
	}
}

// replayFile sends one OTLP/JSON file and describes what was sent.
func replayFile(ctx context.Context, client *http.Client, target, path string) (string, error) {
	data, err := os.ReadFile(path)
	if err != nil {
		return "", err
	}
	var um ptrace.JSONUnmarshaler
	td, err := um.UnmarshalTraces(data)
	if err != nil {
		return "", fmt.Errorf("not an OTLP/JSON ExportTraceServiceRequest: %w", err)
	}
	spans, traces := countSpans(td)
	if spans == 0 {
		return "", errors.New("no spans in file")
	}
	body, err := ptraceotlp.NewExportRequestFromTraces(td).MarshalProto()
	if err != nil {
		return "", fmt.Errorf("encode protobuf: %w", err)
	}

	req, err := http.NewRequestWithContext(ctx, http.MethodPost, target, bytes.NewReader(body))
	if err != nil {
		return "", err
	}
	req.Header.Set("Content-Type", "application/x-protobuf")
	resp, err := client.Do(req)
	if err != nil {
		return "", err
	}
	defer resp.Body.Close()
	respBody, err := io.ReadAll(io.LimitReader(resp.Body, maxResponseBody))
	if err != nil {
		return "", fmt.Errorf("read response: %w", err)
	}
	if resp.StatusCode/100 != 2 {
		return "", fmt.Errorf("%s: %s", resp.Status, strings.TrimSpace(string(respBody)))
	}
	// A 2xx response may still report rejected spans (partial success).
	if strings.HasPrefix(resp.Header.Get("Content-Type"), "application/x-protobuf") {
		er := ptraceotlp.NewExportResponse()
		if err := er.UnmarshalProto(respBody); err == nil {
			if ps := er.PartialSuccess(); ps.RejectedSpans() > 0 {
				return "", fmt.Errorf("%d of %d spans rejected: %s", ps.RejectedSpans(), spans, ps.ErrorMessage())
			}
		}
	}
	return fmt.Sprintf("%d spans in %d traces -> %s", spans, traces, resp.Status), nil
}

// countSpans returns the number of spans and of distinct trace IDs.
func countSpans(td ptrace.Traces) (spans, traces int) {
	ids := make(map[pcommon.TraceID]struct{})
	for _, rs := range td.ResourceSpans().All() {
		for _, ss := range rs.ScopeSpans().All() {
			for _, s := range ss.Spans().All() {
				ids[s.TraceID()] = struct{}{}
			}
		}
	}
	return td.SpanCount(), len(ids)
}
