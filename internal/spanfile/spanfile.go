// Package spanfile reads span files:
//   - OTLP/JSON: one ExportTraceServiceRequest, or JSON lines as the collector's file
//     exporter writes them (one request per line);
//   - length-delimited OTLP protobuf: a sequence of ExportTraceServiceRequest messages, each
//     preceded by its length, either as a 4-byte big-endian unsigned integer (what the
//     contrib file exporter writes with `format: proto`) or as a protobuf varint (Java's
//     writeDelimitedTo, Go's protodelim);
//   - one OTLP protobuf ExportTraceServiceRequest, not delimited, of at most MaxRequest bytes.
//
// Every format is streamed request by request: no more than one request (at most
// MaxRequest bytes) is held at a time. Only regular files are read: a device or a pipe
// (/dev/zero, /dev/stdin, a named pipe) may never end, so it is refused before it is
// opened. A UTF-8 byte order mark and any amount of white space before JSON are skipped.
package spanfile

import (
	"bufio"
	"bytes"
	"encoding/binary"
	"errors"
	"fmt"
	"io"
	"os"

	"go.opentelemetry.io/collector/pdata/ptrace"
	"go.opentelemetry.io/collector/pdata/ptrace/ptraceotlp"

	"github.com/otelcol-handoff/otelcol-handoff/internal/textsafe"
)

// MaxRequest bounds one request: one JSON value (one line of a file-exporter output), one
// length-delimited protobuf message, or a whole non-delimited protobuf file.
const MaxRequest = 256 << 20

// maxRequest is MaxRequest, lowered by tests.
var maxRequest = MaxRequest

// headSize is how much of a file is looked at to tell the formats apart.
const headSize = 4096

// Read streams the traces of one span file to emit, request by request, and returns the
// number of spans read. Errors name the file (and the request, for the streamed formats).
func Read(path string, emit func(ptrace.Traces) error) (int, error) {
	st, err := readFile(path, emit)
	return st.spans, err
}

// stats is what one read did: spans and requests passed to emit, and the largest request
// buffer it held (the reader's memory bound, for tests).
type stats struct {
	spans, requests int
	format          format
	peak            int
}

type format int

const (
	formatJSON format = iota
	formatDelimited32
	formatDelimitedVarint
	formatSingleProto
)

func (f format) String() string {
	switch f {
	case formatJSON:
		return "OTLP/JSON"
	case formatDelimited32:
		return "length-delimited OTLP protobuf (4-byte big-endian prefix)"
	case formatDelimitedVarint:
		return "length-delimited OTLP protobuf (varint prefix)"
	default:
		return "OTLP protobuf"
	}
}

func readFile(path string, emit func(ptrace.Traces) error) (stats, error) {
	var st stats
	// Stat before opening: opening a named pipe blocks until a writer comes (and a signal
	// does not end the wait), so what is not a regular file is refused unopened.
	fi, err := os.Stat(path)
	if err != nil {
		return st, err
	}
	if !fi.Mode().IsRegular() {
		return st, notRegular(path, fi.Mode())
	}
	f, err := openNoBlock(path)
	if err != nil {
		return st, err
	}
	defer f.Close()
	// The file opened must be the one checked (not swapped for a pipe in between).
	opened, err := f.Stat()
	if err != nil {
		return st, fmt.Errorf("%s: %w", path, err)
	}
	if !opened.Mode().IsRegular() {
		return st, notRegular(path, opened.Mode())
	}
	if !os.SameFile(fi, opened) {
		return st, fmt.Errorf("%s: the file changed while it was opened", path)
	}
	size := opened.Size()
	r := bufio.NewReaderSize(f, 1<<20)
	// Look without consuming: protobuf may start with a byte that looks like white space.
	head, err := r.Peek(headSize)
	if err != nil && !errors.Is(err, io.EOF) && !errors.Is(err, bufio.ErrBufferFull) {
		return st, fmt.Errorf("%s: %w", path, err)
	}
	// Text: a UTF-8 byte order mark before JSON is skipped, and so is white space longer
	// than the head (skipped means the JSON reader never sees it).
	skipped := false
	if bytes.HasPrefix(head, utf8BOM) {
		_, _ = r.Discard(len(utf8BOM))
		skipped = true
	}
	for {
		head, err = r.Peek(headSize)
		if err != nil && !errors.Is(err, io.EOF) && !errors.Is(err, bufio.ErrBufferFull) {
			return st, fmt.Errorf("%s: %w", path, err)
		}
		if len(head) < headSize || len(bytes.TrimLeft(head, " \t\r\n")) > 0 {
			break
		}
		// A whole head of white space is no protobuf framing a request: text, read on.
		_, _ = r.Discard(len(head))
		skipped = true
	}
	if len(bytes.TrimLeft(head, " \t\r\n")) == 0 {
		return st, fmt.Errorf("%s: empty file", path)
	}
	if skipped {
		// Only JSON has a byte order mark or that much leading white space.
		if !looksJSON(head) {
			return st, fmt.Errorf("%s: %w", path, errUnknownFormat)
		}
		st.format = formatJSON
	} else if st.format, err = detect(f, head, size); err != nil {
		return st, fmt.Errorf("%s: %w", path, err)
	}
	switch st.format {
	case formatJSON:
		err = readJSON(path, r, emit, &st)
	case formatDelimited32, formatDelimitedVarint:
		err = readDelimited(path, r, size, st.format, emit, &st)
	default:
		err = readSingle(path, r, size, emit, &st)
	}
	return st, err
}

// utf8BOM is the UTF-8 byte order mark some editors write before text.
var utf8BOM = []byte{0xEF, 0xBB, 0xBF}

var errUnknownFormat = errors.New("unknown format: neither OTLP/JSON, JSON lines, length-delimited OTLP protobuf " +
	"nor an OTLP protobuf request")

func notRegular(path string, m os.FileMode) error {
	return fmt.Errorf("%s: not a regular file (%s): span files are read only from regular files, "+
		"since a device or a pipe may never end", path, Kind(m))
}

// looksJSON: after white space the head starts a JSON object, and holds no raw control
// bytes (JSON escapes them inside strings; protobuf lengths and tags are full of them).
func looksJSON(head []byte) bool {
	text := bytes.TrimLeft(head, " \t\r\n")
	return len(text) > 0 && text[0] == '{' && !hasControl(head)
}

// Kind names the type of a file that is not a regular one: "a named pipe", "a directory".
func Kind(m os.FileMode) string {
	switch {
	case m.IsDir():
		return "a directory"
	case m&os.ModeNamedPipe != 0:
		return "a named pipe"
	case m&os.ModeSocket != 0:
		return "a socket"
	case m&os.ModeCharDevice != 0:
		return "a character device"
	case m&os.ModeDevice != 0:
		return "a device"
	}
	return m.Type().String()
}

var (
	zstdMagic = []byte{0x28, 0xB5, 0x2F, 0xFD}
	gzipMagic = []byte{0x1F, 0x8B}
)

// requestTag is the first byte of a non-empty ExportTraceServiceRequest: field 1
// (resource_spans), wire type 2 (length-delimited).
const requestTag = 0x0A

// detect tells the format from the file's first bytes. JSON starts with '{' and holds no raw
// control bytes (JSON escapes them inside strings; protobuf lengths and tags are full of
// them). Otherwise each protobuf framing is plausible if its first message fits the bound
// and starts like a request; when more than one is, the one whose frames tile
// the whole file wins, in the order 4-byte prefix (the file exporter), varint prefix, single
// request.
func detect(f io.ReaderAt, head []byte, size int64) (format, error) {
	if looksJSON(head) {
		return formatJSON, nil
	}
	switch {
	case bytes.HasPrefix(head, zstdMagic), bytes.HasPrefix(head, gzipMagic):
		return 0, errors.New("a compressed file (gzip or zstd): decompress it first")
	case len(head) >= 8 && bytes.HasPrefix(head[4:], zstdMagic):
		return 0, errors.New("file exporter output with compression (zstd-compressed messages) is not supported: " +
			"export uncompressed (format: proto or json, no compression)")
	}
	var plausible []format
	if n, hlen, ok := prefix(formatDelimited32, head); ok && framePlausible(head, n, hlen) {
		plausible = append(plausible, formatDelimited32)
	}
	if n, hlen, ok := prefix(formatDelimitedVarint, head); ok && framePlausible(head, n, hlen) {
		plausible = append(plausible, formatDelimitedVarint)
	}
	if head[0] == requestTag {
		plausible = append(plausible, formatSingleProto)
	}
	switch len(plausible) {
	case 0:
		return 0, errUnknownFormat
	case 1:
		return plausible[0], nil
	}
	for _, fm := range plausible {
		if fm == formatSingleProto || tiles(f, fm, size) {
			return fm, nil
		}
	}
	// None tiles (a truncated file): read the first framing, which names the request
	// where the file ends.
	return plausible[0], nil
}

func hasControl(b []byte) bool {
	for _, c := range b {
		if c < 0x20 && c != '\t' && c != '\n' && c != '\r' {
			return true
		}
	}
	return false
}

// prefix decodes a length prefix at the start of b: the message length and the prefix's
// own length. ok is false when b does not hold a whole prefix.
func prefix(fm format, b []byte) (n uint64, hlen int, ok bool) {
	if fm == formatDelimited32 {
		if len(b) < 4 {
			return 0, 0, false
		}
		return uint64(binary.BigEndian.Uint32(b)), 4, true
	}
	n, hlen = binary.Uvarint(b)
	return n, hlen, hlen > 0
}

// framePlausible: the first message is within the bound and starts with the request tag
// (when the head shows it). Whether it fits the file is for tiles: a truncated file is
// still read as delimited, to name the request where it ends.
func framePlausible(head []byte, n uint64, hlen int) bool {
	if n == 0 || n > uint64(maxRequest) {
		return false
	}
	return hlen >= len(head) || head[hlen] == requestTag
}

// tiles reports whether the frames of fm cover the file exactly, by reading only their
// prefixes.
func tiles(f io.ReaderAt, fm format, size int64) bool {
	var buf [binary.MaxVarintLen64]byte
	for off := int64(0); off < size; {
		k, err := f.ReadAt(buf[:], off)
		if err != nil && !errors.Is(err, io.EOF) {
			return false
		}
		n, hlen, ok := prefix(fm, buf[:k])
		if !ok || n > uint64(maxRequest) {
			return false
		}
		off += int64(hlen) + int64(n)
		if off > size {
			return false
		}
	}
	return true
}

// readDelimited streams length-prefixed requests, one buffer of one request at a time. A
// length is checked against the bound and against what is left of the file before anything
// is allocated.
func readDelimited(path string, r *bufio.Reader, size int64, fm format, emit func(ptrace.Traces) error, st *stats) error {
	var off int64
	for off < size {
		index := st.requests + 1
		var n uint64
		var hlen int
		if fm == formatDelimited32 {
			var p [4]byte
			if _, err := io.ReadFull(r, p[:]); err != nil {
				return fmt.Errorf("%s: request %d: truncated length prefix at byte %d: %w", path, index, off, noEOF(err))
			}
			n, hlen = uint64(binary.BigEndian.Uint32(p[:])), 4
		} else {
			v, err := binary.ReadUvarint(r)
			if err != nil {
				return fmt.Errorf("%s: request %d: bad length prefix at byte %d: %w", path, index, off, noEOF(err))
			}
			n, hlen = v, varintLen(v)
		}
		off += int64(hlen)
		if n > uint64(maxRequest) {
			return fmt.Errorf("%s: request %d: length prefix at byte %d says %d bytes, over the %d-byte limit of one request",
				path, index, off-int64(hlen), n, maxRequest)
		}
		if left := size - off; int64(n) > left {
			return fmt.Errorf("%s: request %d: truncated: the length prefix says %d bytes, the file has %d left",
				path, index, n, left)
		}
		buf := make([]byte, n)
		if _, err := io.ReadFull(r, buf); err != nil {
			return fmt.Errorf("%s: request %d: %w", path, index, noEOF(err))
		}
		off += int64(n)
		st.peak = max(st.peak, len(buf))
		req := ptraceotlp.NewExportRequest()
		if err := req.UnmarshalProto(buf); err != nil {
			return fmt.Errorf("%s: request %d is not an OTLP protobuf ExportTraceServiceRequest (%s): %w", path, index, fm, err)
		}
		if err := emitRequest(req.Traces(), emit, st); err != nil {
			return err
		}
	}
	if st.spans == 0 {
		return fmt.Errorf("%s: no spans in %s", path, textsafe.Plural(st.requests, "request", "requests"))
	}
	return nil
}

// noEOF turns a bare EOF inside a frame into ErrUnexpectedEOF: the file ended mid-request.
func noEOF(err error) error {
	if errors.Is(err, io.EOF) {
		return io.ErrUnexpectedEOF
	}
	return err
}

func varintLen(v uint64) int {
	var b [binary.MaxVarintLen64]byte
	return binary.PutUvarint(b[:], v)
}

// readSingle reads one non-delimited request; its size is checked before it is read.
func readSingle(path string, r io.Reader, size int64, emit func(ptrace.Traces) error, st *stats) error {
	if size > int64(maxRequest) {
		return fmt.Errorf("%s: one OTLP protobuf request of %d bytes is over the %d-byte limit; "+
			"write length-delimited protobuf (the file exporter's format: proto) or OTLP/JSON lines instead",
			path, size, maxRequest)
	}
	// The limit holds even if the file grows while it is read.
	b, err := io.ReadAll(io.LimitReader(r, int64(maxRequest)+1))
	if err != nil {
		return fmt.Errorf("%s: %w", path, err)
	}
	if len(b) > maxRequest {
		return fmt.Errorf("%s: one OTLP protobuf request is over the %d-byte limit (the file grew while it was read)", path, maxRequest)
	}
	st.peak = len(b)
	req := ptraceotlp.NewExportRequest()
	if err := req.UnmarshalProto(b); err != nil {
		return fmt.Errorf("%s: unknown format: neither OTLP/JSON, JSON lines, length-delimited OTLP protobuf "+
			"nor an OTLP protobuf request (%v)", path, err)
	}
	td := req.Traces()
	if td.SpanCount() == 0 {
		return fmt.Errorf("%s: no spans: not OTLP protobuf traces, or an empty request", path)
	}
	return emitRequest(td, emit, st)
}

func emitRequest(td ptrace.Traces, emit func(ptrace.Traces) error, st *stats) error {
	st.requests++
	st.spans += td.SpanCount()
	return emit(td)
}

func isSpace(b byte) bool { return b == ' ' || b == '\n' || b == '\r' || b == '\t' }

// readJSON reads either one JSON document or JSON lines: it decodes values one after the
// other, so a file of one pretty-printed request and a file of one request per line both
// stream without holding more than one request in memory.
func readJSON(path string, r io.Reader, emit func(ptrace.Traces) error, st *stats) error {
	dec := newJSONSplitter(r)
	var unm ptrace.JSONUnmarshaler
	for {
		doc, err := dec.next()
		if errors.Is(err, io.EOF) {
			break
		}
		index := st.requests + 1
		if err != nil {
			return fmt.Errorf("%s: request %d: %w", path, index, err)
		}
		st.peak = max(st.peak, len(doc))
		td, err := unm.UnmarshalTraces(doc)
		if err != nil {
			return fmt.Errorf("%s: request %d is not OTLP/JSON traces: %w", path, index, err)
		}
		if err := emitRequest(td, emit, st); err != nil {
			return err
		}
	}
	if st.requests == 0 {
		return fmt.Errorf("%s: no OTLP/JSON request in file", path)
	}
	return nil
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
		if s.buf.Len() >= maxRequest {
			return nil, fmt.Errorf("one JSON value is larger than the %d-byte limit of one request", maxRequest)
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
