package main

import (
	"bytes"
	"context"
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"go.opentelemetry.io/collector/pdata/ptrace/ptraceotlp"
)

const minimalTrace = `{"resourceSpans":[{"resource":{"attributes":[{"key":"service.name","value":{"stringValue":"t"}}]},
"scopeSpans":[{"scope":{"name":"s"},"spans":[
{"traceId":"0102030405060708090a0b0c0d0e0f10","spanId":"0102030405060708","name":"root","kind":1,
 "startTimeUnixNano":"1000","endTimeUnixNano":"2000"},
{"traceId":"0102030405060708090a0b0c0d0e0f10","spanId":"1112131415161718","parentSpanId":"0102030405060708",
 "name":"child","kind":1,"startTimeUnixNano":"1100","endTimeUnixNano":"1900"}]}]}]}`

// collector is a fake OTLP/HTTP traces endpoint that records what it receives.
type collector struct {
	mu       sync.Mutex
	requests []ptraceotlp.ExportRequest
	status   int
}

func (c *collector) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	if r.Method != http.MethodPost || r.URL.Path != "/v1/traces" {
		http.Error(w, "unexpected "+r.Method+" "+r.URL.Path, http.StatusNotFound)
		return
	}
	if ct := r.Header.Get("Content-Type"); ct != "application/x-protobuf" {
		http.Error(w, "unexpected content type "+ct, http.StatusUnsupportedMediaType)
		return
	}
	body, err := io.ReadAll(r.Body)
	if err != nil {
		http.Error(w, err.Error(), http.StatusBadRequest)
		return
	}
	req := ptraceotlp.NewExportRequest()
	if err := req.UnmarshalProto(body); err != nil {
		http.Error(w, err.Error(), http.StatusBadRequest)
		return
	}
	c.mu.Lock()
	c.requests = append(c.requests, req)
	status := c.status
	c.mu.Unlock()
	if status != 0 {
		http.Error(w, "injected failure", status)
		return
	}
	resp, _ := ptraceotlp.NewExportResponse().MarshalProto()
	w.Header().Set("Content-Type", "application/x-protobuf")
	_, _ = w.Write(resp)
}

func (c *collector) spanCounts() []int {
	c.mu.Lock()
	defer c.mu.Unlock()
	var n []int
	for _, r := range c.requests {
		n = append(n, r.Traces().SpanCount())
	}
	return n
}

func newCollector(t *testing.T) (*collector, *httptest.Server) {
	t.Helper()
	c := &collector{}
	srv := httptest.NewUnstartedServer(c)
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	srv.Listener = ln
	srv.Start()
	t.Cleanup(srv.Close)
	return c, srv
}

func writeFile(t *testing.T, name, content string) string {
	t.Helper()
	p := filepath.Join(t.TempDir(), name)
	if err := os.WriteFile(p, []byte(content), 0o600); err != nil {
		t.Fatal(err)
	}
	return p
}

func runReplay(t *testing.T, args ...string) (int, string, string) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()
	var stdout, stderr bytes.Buffer
	code := run(ctx, args, &stdout, &stderr)
	return code, stdout.String(), stderr.String()
}

func TestReplaySendsProtobuf(t *testing.T) {
	c, srv := newCollector(t)
	small := writeFile(t, "small.json", minimalTrace)
	bundled := filepath.Join("..", "..", "testdata", "traces", "strands-ok.json")

	code, stdout, stderr := runReplay(t, "--endpoint", srv.URL+"/", "--wait", "5s", small, bundled)
	if code != 0 {
		t.Fatalf("exit %d\nstdout:\n%s\nstderr:\n%s", code, stdout, stderr)
	}
	lines := strings.Split(strings.TrimSpace(stdout), "\n")
	if len(lines) != 2 {
		t.Fatalf("want one line per file, got %q", stdout)
	}
	if !strings.Contains(lines[0], "2 spans in 1 traces") {
		t.Errorf("unexpected first line %q", lines[0])
	}

	counts := c.spanCounts()
	if len(counts) != 2 || counts[0] != 2 || counts[1] == 0 {
		t.Fatalf("server received span counts %v, want [2 >0]", counts)
	}
}

func TestReplayRejectsInvalidJSON(t *testing.T) {
	c, srv := newCollector(t)
	bad := writeFile(t, "bad.json", `{"resourceSpans": [`)
	good := writeFile(t, "good.json", minimalTrace)

	code, stdout, _ := runReplay(t, "--endpoint", srv.URL, "--wait", "5s", bad, good)
	if code == 0 {
		t.Fatal("want non-zero exit for an invalid file")
	}
	if !strings.Contains(stdout, "FAIL "+bad) || !strings.Contains(stdout, "ok   "+good) {
		t.Errorf("unexpected output %q", stdout)
	}
	if n := len(c.spanCounts()); n != 1 {
		t.Errorf("server received %d requests, want 1 (only the valid file)", n)
	}
}

func TestReplayFailsOnServerError(t *testing.T) {
	c, srv := newCollector(t)
	c.status = http.StatusServiceUnavailable
	good := writeFile(t, "good.json", minimalTrace)

	code, stdout, _ := runReplay(t, "--endpoint", srv.URL, "--wait", "5s", good)
	if code == 0 {
		t.Fatal("want non-zero exit when the server answers 503")
	}
	if !strings.Contains(stdout, "503") {
		t.Errorf("output should mention the status: %q", stdout)
	}
}

func TestReplayWaitsForEndpoint(t *testing.T) {
	// Reserve a loopback port, then free it so nothing listens there yet.
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	addr := ln.Addr().String()
	ln.Close()

	c := &collector{}
	srv := &http.Server{Handler: c, ReadHeaderTimeout: 5 * time.Second}
	t.Cleanup(func() { _ = srv.Close() })
	go func() {
		time.Sleep(500 * time.Millisecond)
		l, err := net.Listen("tcp", addr)
		if err != nil {
			return // port taken meanwhile; the replay then fails and the test reports it
		}
		_ = srv.Serve(l)
	}()

	good := writeFile(t, "good.json", minimalTrace)
	code, stdout, stderr := runReplay(t, "--endpoint", "http://"+addr, "--wait", "10s", good)
	if code != 0 {
		t.Fatalf("exit %d\nstdout:\n%s\nstderr:\n%s", code, stdout, stderr)
	}
	if n := len(c.spanCounts()); n != 1 {
		t.Errorf("server received %d requests, want 1", n)
	}
}

func TestReplayGivesUpWaiting(t *testing.T) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	addr := ln.Addr().String()
	ln.Close()

	good := writeFile(t, "good.json", minimalTrace)
	start := time.Now()
	code, _, stderr := runReplay(t, "--endpoint", "http://"+addr, "--wait", "300ms", good)
	if code == 0 {
		t.Fatal("want non-zero exit when nothing listens")
	}
	if !strings.Contains(stderr, "did not accept connections") {
		t.Errorf("unexpected stderr %q", stderr)
	}
	if d := time.Since(start); d > 5*time.Second {
		t.Errorf("gave up after %s, want about 300ms", d)
	}
}

func TestUsageErrors(t *testing.T) {
	if code, _, _ := runReplay(t); code != 2 {
		t.Errorf("no files: exit %d, want 2", code)
	}
	if code, _, _ := runReplay(t, "--endpoint", "127.0.0.1:4318", "x.json"); code != 2 {
		t.Errorf("endpoint without scheme: exit %d, want 2", code)
	}
}
