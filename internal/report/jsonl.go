// Package report writes assertion results to files: JSON lines as results arrive, and a
// JUnit XML report and a Markdown summary (with a Mermaid picture of each failing trace's
// delegation DAG) of a whole run, written atomically at its end.
package report

import (
	"bufio"
	"encoding/json"
	"fmt"
	"os"
	"sync"
	"time"

	"github.com/otelcol-handoff/otelcol-handoff/internal/redact"
	"github.com/otelcol-handoff/otelcol-handoff/internal/rules"
)

// JSONLines appends one JSON object per result to a file: a "timestamp" (when the result
// was written: RFC 3339, UTC, nanoseconds) and the result's fields, with no HTML escaping
// (`<=` stays `<=`; JSON's own escapes remain). Each Write is flushed before it returns, so
// a reader never sees half a batch; it is safe for concurrent use.
type JSONLines struct {
	mu   sync.Mutex
	f    *os.File
	w    *bufio.Writer
	path string
	// policy masks every result's text before it is written (nil: redact.Default()).
	policy *redact.Policy
	// now stamps the lines (time.Now; tests fix it).
	now func() time.Time
}

// jsonLine is one line of the report: the time it was written, then the result.
type jsonLine struct {
	Timestamp string `json:"timestamp"`
	rules.Result
}

// OpenJSONLines opens (creating or appending to) path.
func OpenJSONLines(path string) (*JSONLines, error) {
	f, err := os.OpenFile(path, os.O_CREATE|os.O_WRONLY|os.O_APPEND, 0o644)
	if err != nil {
		return nil, fmt.Errorf("open JSON lines report: %w", err)
	}
	return &JSONLines{f: f, w: bufio.NewWriter(f), path: path, now: time.Now}, nil
}

// SetRedaction sets the policy that masks every result's text before it is written;
// without one the built-in detectors apply.
func (j *JSONLines) SetRedaction(p *redact.Policy) {
	j.mu.Lock()
	defer j.mu.Unlock()
	j.policy = p
}

// Write appends the results, their text masked by the redaction policy, and flushes them.
func (j *JSONLines) Write(results []rules.Result) error {
	j.mu.Lock()
	defer j.mu.Unlock()
	if j.f == nil {
		return fmt.Errorf("JSON lines report %s is closed", j.path)
	}
	enc := json.NewEncoder(j.w)
	enc.SetEscapeHTML(false) // `<=` in expected and actual stays readable
	stamp := j.now().UTC().Format(time.RFC3339Nano)
	for _, r := range results {
		if err := enc.Encode(jsonLine{Timestamp: stamp, Result: rules.RedactResult(r, j.policy)}); err != nil {
			j.w.Reset(j.f)
			return err
		}
	}
	if err := j.w.Flush(); err != nil {
		// bufio keeps a write error for good: drop this batch so the next one is tried
		// afresh (a disk that was full may have room again).
		j.w.Reset(j.f)
		return err
	}
	return nil
}

// Close flushes and closes the file; later calls do nothing.
func (j *JSONLines) Close() error {
	j.mu.Lock()
	defer j.mu.Unlock()
	if j.f == nil {
		return nil
	}
	err := j.w.Flush()
	if cerr := j.f.Close(); err == nil {
		err = cerr
	}
	j.f = nil
	return err
}
