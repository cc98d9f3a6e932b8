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
	"github.com/otelcol-handoff/otelcol-handoff/internal/spanfile"
)

// JSONLines appends one JSON object per result to a file: a "timestamp" (when the result's
// trace started, its first span: RFC 3339, UTC, nanoseconds; the time of writing for a
// trace whose start is not given), then the result's fields, with no HTML escaping (`<=`
// stays `<=`; JSON's own escapes remain). A replay of the same spans writes the same bytes.
// Each Write is flushed before it returns, so a reader never sees half a batch; it is safe
// for concurrent use.
type JSONLines struct {
	mu   sync.Mutex
	f    *os.File
	w    *bufio.Writer
	path string
	// policy masks every result's text before it is written (nil: redact.Default()).
	policy *redact.Policy
	// now stamps the lines of a trace whose start is not known (time.Now; tests fix it).
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

// Write appends the results, their text masked by the redaction policy, and flushes them;
// starts holds the start of each result's trace by trace id (TraceStart).
func (j *JSONLines) Write(results []rules.Result, starts map[string]time.Time) error {
	j.mu.Lock()
	defer j.mu.Unlock()
	if j.f == nil {
		return fmt.Errorf("JSON lines report %s is closed", j.path)
	}
	enc := json.NewEncoder(j.w)
	enc.SetEscapeHTML(false) // `<=` in expected and actual stays readable
	written := j.now()
	for _, r := range results {
		at, ok := starts[r.TraceID]
		if !ok || at.IsZero() {
			at = written
		}
		line := jsonLine{Timestamp: at.UTC().Format(time.RFC3339Nano), Result: rules.RedactResult(r, j.policy)}
		if err := enc.Encode(line); err != nil {
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

// ReadJSONLines reads the results of a JSON-lines report (the timestamps dropped); a file
// that does not exist holds none.
func ReadJSONLines(path string) ([]rules.Result, error) {
	f, err := os.Open(path)
	if os.IsNotExist(err) {
		return nil, nil
	}
	if err != nil {
		return nil, err
	}
	defer f.Close()
	var out []rules.Result
	sc := bufio.NewScanner(f)
	sc.Buffer(make([]byte, 1<<20), spanfile.MaxRequest)
	for sc.Scan() {
		var r rules.Result
		if err := json.Unmarshal(sc.Bytes(), &r); err != nil {
			return nil, fmt.Errorf("%s: %w", path, err)
		}
		out = append(out, r)
	}
	return out, sc.Err()
}
