// Package spanfile reads span files: an OTLP/JSON ExportTraceServiceRequest, JSON lines as
// the collector's file exporter writes them (one request per line), or an OTLP protobuf
// ExportTraceServiceRequest. JSON is streamed request by request.
package spanfile

import (
	"bufio"
	"bytes"
	"errors"
	"fmt"
	"io"
	"os"

	"go.opentelemetry.io/collector/pdata/ptrace"
	"go.opentelemetry.io/collector/pdata/ptrace/ptraceotlp"
)

// MaxRequest bounds one JSON request (one line of a file-exporter output).
const MaxRequest = 256 << 20

// Read streams the traces of one span file to emit, request by request, and returns the
// number of spans read. Errors name the file (and the request, for JSON).
func Read(path string, emit func(ptrace.Traces) error) (int, error) {
	f, err := os.Open(path)
	if err != nil {
		return 0, err
	}
	defer f.Close()
	r := bufio.NewReaderSize(f, 1<<20)
	// Look (without consuming: protobuf may start with a byte that looks like white space)
	// for the first non-space byte to tell JSON from protobuf.
	head, err := r.Peek(4096)
	if err != nil && !errors.Is(err, io.EOF) {
		return 0, fmt.Errorf("%s: %w", path, err)
	}
	first := bytes.TrimLeft(head, " \t\r\n")
	if len(head) == 0 || (len(first) == 0 && len(head) < 4096) {
		return 0, fmt.Errorf("%s: empty file", path)
	}
	if len(first) > 0 && first[0] == '{' {
		return readJSON(path, r, emit)
	}
	return readProto(path, r, emit)
}

func isSpace(b byte) bool { return b == ' ' || b == '\n' || b == '\r' || b == '\t' }

// readJSON reads either one JSON document or JSON lines: it decodes values one after the
// other, so a file of one pretty-printed request and a file of one request per line both
// stream without holding more than one request in memory.
func readJSON(path string, r io.Reader, emit func(ptrace.Traces) error) (int, error) {
	dec := newJSONSplitter(r)
	var unm ptrace.JSONUnmarshaler
	spans, n := 0, 0
	for {
		doc, err := dec.next()
		if errors.Is(err, io.EOF) {
			break
		}
		if err != nil {
			return spans, fmt.Errorf("%s: request %d: %w", path, n+1, err)
		}
		n++
		td, err := unm.UnmarshalTraces(doc)
		if err != nil {
			return spans, fmt.Errorf("%s: request %d is not OTLP/JSON traces: %w", path, n, err)
		}
		spans += td.SpanCount()
		if err := emit(td); err != nil {
			return spans, err
		}
	}
	if n == 0 {
		return 0, fmt.Errorf("%s: no OTLP/JSON request in file", path)
	}
	return spans, nil
}

func readProto(path string, r io.Reader, emit func(ptrace.Traces) error) (int, error) {
	b, err := io.ReadAll(r)
	if err != nil {
		return 0, fmt.Errorf("%s: %w", path, err)
	}
	req := ptraceotlp.NewExportRequest()
	if err := req.UnmarshalProto(b); err != nil {
		return 0, fmt.Errorf("%s: unknown format: neither OTLP/JSON, JSON lines nor OTLP protobuf (%v)", path, err)
	}
	td := req.Traces()
	if td.SpanCount() == 0 {
		return 0, fmt.Errorf("%s: no spans: not OTLP protobuf traces, or an empty request", path)
	}
	return td.SpanCount(), emit(td)
}

// jsonSplitter cuts a stream into top-level JSON values by tracking braces outside strings.
type jsonSplitter struct {
	r   *bufio.Reader
	buf bytes.Buffer
}

func newJSONSplitter(r io.Reader) *jsonSplitter { return &jsonSplitter{r: bufio.NewReader(r)} }

func (s *jsonSplitter) next() ([]byte, error) {
	s.buf.Reset()
	depth, inString, escaped, started := 0, false, false, false
	for {
		c, err := s.r.ReadByte()
		if err != nil {
			if errors.Is(err, io.EOF) && started {
				return nil, errors.New("unexpected end of file inside a JSON value")
			}
			return nil, err
		}
		if !started {
			if isSpace(c) {
				continue
			}
			if c != '{' {
				return nil, fmt.Errorf("expected '{', found %q", c)
			}
			started = true
		}
		if s.buf.Len() >= MaxRequest {
			return nil, fmt.Errorf("one JSON value is larger than %d MiB", MaxRequest>>20)
		}
		s.buf.WriteByte(c)
		switch {
		case escaped:
			escaped = false
		case inString && c == '\\':
			escaped = true
		case c == '"':
			inString = !inString
		case !inString && c == '{':
			depth++
		case !inString && c == '}':
			depth--
			if depth == 0 {
				return s.buf.Bytes(), nil
			}
		}
	}
}

// ReadAll reads every span of the files into one ptrace.Traces.
func ReadAll(paths ...string) (ptrace.Traces, error) {
	all := ptrace.NewTraces()
	for _, p := range paths {
		if _, err := Read(p, func(td ptrace.Traces) error {
			td.ResourceSpans().MoveAndAppendTo(all.ResourceSpans())
			return nil
		}); err != nil {
			return all, err
		}
	}
	return all, nil
}
