package spanfile

import (
	"encoding/binary"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"
	"go.opentelemetry.io/collector/pdata/ptrace"
	"go.opentelemetry.io/collector/pdata/ptrace/ptraceotlp"
	"google.golang.org/protobuf/encoding/protowire"
)

const strands = "../../testdata/traces/strands-ok.json"

// perSpan splits the strands capture into one request per span.
func perSpan(t *testing.T) []ptrace.Traces {
	t.Helper()
	b, err := os.ReadFile(strands)
	require.NoError(t, err)
	td, err := (&ptrace.JSONUnmarshaler{}).UnmarshalTraces(b)
	require.NoError(t, err)
	var out []ptrace.Traces
	src := td.ResourceSpans().At(0)
	spans := src.ScopeSpans().At(0).Spans()
	for k := 0; k < spans.Len(); k++ {
		one := ptrace.NewTraces()
		rs := one.ResourceSpans().AppendEmpty()
		src.Resource().CopyTo(rs.Resource())
		ss := rs.ScopeSpans().AppendEmpty()
		src.ScopeSpans().At(0).Scope().CopyTo(ss.Scope())
		spans.At(k).CopyTo(ss.Spans().AppendEmpty())
		out = append(out, one)
	}
	require.Greater(t, len(out), 5)
	return out
}

func marshal(t *testing.T, td ptrace.Traces) []byte {
	t.Helper()
	b, err := ptraceotlp.NewExportRequestFromTraces(td).MarshalProto()
	require.NoError(t, err)
	return b
}

// frame32 is the contrib file exporter's `format: proto` framing (exportMessageAsBuffer in
// fileexporter v0.161.0 file_writer.go): a 4-byte big-endian length, then the message.
func frame32(msg []byte) []byte {
	return append(binary.BigEndian.AppendUint32(nil, uint32(len(msg))), msg...)
}

func frameVarint(msg []byte) []byte {
	return append(binary.AppendUvarint(nil, uint64(len(msg))), msg...)
}

func write(t *testing.T, name string, b []byte) string {
	t.Helper()
	p := filepath.Join(t.TempDir(), name)
	require.NoError(t, os.WriteFile(p, b, 0o644))
	return p
}

func withMaxRequest(t *testing.T, n int) {
	old := maxRequest
	maxRequest = n
	t.Cleanup(func() { maxRequest = old })
}

// TestDelimitedStreams: both length-delimited framings are read request by request: one
// emit per request, and the reader never holds more than the largest single request.
func TestDelimitedStreams(t *testing.T) {
	reqs := perSpan(t)
	for name, tt := range map[string]struct {
		frame func([]byte) []byte
		want  format
	}{
		"4-byte big-endian (file exporter)": {frame32, formatDelimited32},
		"varint":                            {frameVarint, formatDelimitedVarint},
	} {
		t.Run(name, func(t *testing.T) {
			var file []byte
			largest, spans := 0, 0
			for _, td := range reqs {
				msg := marshal(t, td)
				largest = max(largest, len(msg))
				spans += td.SpanCount()
				file = append(file, tt.frame(msg)...)
			}
			path := write(t, "spans.pb", file)
			emits := 0
			var got []ptrace.Traces
			st, err := readFile(path, func(td ptrace.Traces) error {
				emits++
				got = append(got, td)
				return nil
			})
			require.NoError(t, err)
			require.Equal(t, tt.want, st.format)
			require.Equal(t, len(reqs), emits)
			require.Equal(t, len(reqs), st.requests)
			require.Equal(t, spans, st.spans)
			require.Equal(t, largest, st.peak, "the reader holds one request at a time")
			require.Less(t, st.peak, len(file)/3)
			for i := range reqs {
				require.Equal(t, marshal(t, reqs[i]), marshal(t, got[i]), "request %d", i+1)
			}
		})
	}
}

// TestSingleRequest: a non-delimited request is still read, up to the bound; over it, it
// is refused before it is read.
func TestSingleRequest(t *testing.T) {
	reqs := perSpan(t)
	all := ptrace.NewTraces()
	for _, td := range reqs {
		td.ResourceSpans().MoveAndAppendTo(all.ResourceSpans())
	}
	msg := marshal(t, all)
	path := write(t, "one.pb", msg)
	st, err := readFile(path, func(ptrace.Traces) error { return nil })
	require.NoError(t, err)
	require.Equal(t, formatSingleProto, st.format)
	require.Equal(t, 1, st.requests)
	require.Equal(t, all.SpanCount(), st.spans)

	withMaxRequest(t, len(msg)-1)
	_, err = readFile(path, func(ptrace.Traces) error { t.Fatal("emitted an oversized request"); return nil })
	require.ErrorContains(t, err, path+": one OTLP protobuf request of ")
	require.ErrorContains(t, err, "over the "+itoa(len(msg)-1)+"-byte limit")
}

// TestSingleRequestLooksFramed: a request whose first resource_spans is 16 KiB–2 MiB long
// has a 3-byte length; written in field order (resource first, as most protobuf libraries
// do; pdata writes scope_spans first), its first 5 bytes also read as a 4-byte prefix
// (about 160 MiB) before a request tag. The prefixes do not tile the file, so it is read as
// one request.
func TestSingleRequestLooksFramed(t *testing.T) {
	td := perSpan(t)[0]
	td.ResourceSpans().At(0).Resource().Attributes().PutStr("padding", strings.Repeat("p", 20<<10))
	msg := resourceFirst(t, marshal(t, td))
	require.Equal(t, byte(requestTag), msg[0])
	require.Equal(t, byte(requestTag), msg[4], "the 3-byte length of the first resource_spans, then its resource")
	st, err := readFile(write(t, "padded.pb", msg), func(ptrace.Traces) error { return nil })
	require.NoError(t, err)
	require.Equal(t, formatSingleProto, st.format)
	require.Equal(t, 1, st.spans)
}

// resourceFirst re-encodes a request of one resource_spans with its fields in field-number
// order.
func resourceFirst(t *testing.T, req []byte) []byte {
	t.Helper()
	num, typ, n := protowire.ConsumeTag(req)
	require.Equal(t, protowire.Number(1), num)
	require.Equal(t, protowire.BytesType, typ)
	rs, m := protowire.ConsumeBytes(req[n:])
	require.Equal(t, len(req), n+m, "one resource_spans")
	fields := map[protowire.Number][]byte{}
	for len(rs) > 0 {
		num, _, k := protowire.ConsumeField(rs)
		require.Greater(t, k, 0)
		fields[num] = append(fields[num], rs[:k]...)
		rs = rs[k:]
	}
	var ordered []byte
	for num := protowire.Number(1); num <= 3; num++ {
		ordered = append(ordered, fields[num]...)
	}
	out := protowire.AppendTag(nil, 1, protowire.BytesType)
	return protowire.AppendBytes(out, ordered)
}

// TestOversizedFrameRefused: a length prefix over the bound is an error naming the request,
// before anything of that size is allocated.
func TestOversizedFrameRefused(t *testing.T) {
	reqs := perSpan(t)
	small, big := marshal(t, reqs[0]), marshal(t, reqs[1])
	withMaxRequest(t, max(len(small), len(big))+100)
	// A second request whose prefix claims more than the limit (but the file is big enough
	// for the first to look right).
	file := append(frame32(small), binary.BigEndian.AppendUint32(nil, uint32(maxRequest+1))...)
	file = append(file, big...)
	path := write(t, "big.pb", file)
	st, err := readFile(path, func(ptrace.Traces) error { return nil })
	require.ErrorContains(t, err, path+": request 2: length prefix at byte "+itoa(len(small)+4)+" says "+
		itoa(maxRequest+1)+" bytes, over the "+itoa(maxRequest)+"-byte limit of one request")
	require.Equal(t, 1, st.requests)
	require.Equal(t, len(small), st.peak)
}

// TestTruncated: a file cut inside a request, or inside a length prefix, names the file
// and the request.
func TestTruncated(t *testing.T) {
	reqs := perSpan(t)
	var file []byte
	for _, td := range reqs[:3] {
		file = append(file, frame32(marshal(t, td))...)
	}
	third := len(frame32(marshal(t, reqs[2])))
	for name, tt := range map[string]struct {
		cut  int
		want string
	}{
		"inside a request": {len(file) - 10, ": request 3: truncated: the length prefix says " + itoa(third-4) + " bytes, the file has " + itoa(third-14) + " left"},
		"inside a prefix":  {len(file) - third + 2, ": request 3: truncated length prefix at byte " + itoa(len(file)-third) + ": unexpected EOF"},
	} {
		t.Run(name, func(t *testing.T) {
			path := write(t, "cut.pb", file[:tt.cut])
			emits := 0
			_, err := readFile(path, func(ptrace.Traces) error { emits++; return nil })
			require.ErrorContains(t, err, path+tt.want)
			require.Equal(t, 2, emits)
		})
	}
}

// TestNotRegularRefused: a device that never ends, a directory or a pipe is refused
// before anything is read.
func TestNotRegularRefused(t *testing.T) {
	_, err := Read("/dev/zero", func(ptrace.Traces) error { t.Fatal("emitted"); return nil })
	require.EqualError(t, err, "/dev/zero: not a regular file (a character device): span files are read only "+
		"from regular files, since a device or a pipe may never end")

	dir := t.TempDir()
	_, err = Read(dir, func(ptrace.Traces) error { return nil })
	require.ErrorContains(t, err, dir+": not a regular file (a directory)")
}

// TestProtoThatLooksLikeJSON: a request whose first resource is 123 bytes long starts with
// 0x0A 0x7B ("\n{"), which a white-space-skipping sniffer takes for JSON.
func TestProtoThatLooksLikeJSON(t *testing.T) {
	td := perSpan(t)[0]
	rs := td.ResourceSpans().At(0)
	rs.Resource().Attributes().Clear()
	rs.ScopeSpans().RemoveIf(func(ptrace.ScopeSpans) bool { return true })
	rs.ScopeSpans().AppendEmpty().Spans().AppendEmpty().SetName("x")
	var msg []byte
	for pad := 0; pad < 200; pad++ {
		rs.Resource().Attributes().PutStr("k", strings.Repeat("v", pad))
		if msg = marshal(t, td); msg[1] == '{' {
			break
		}
	}
	require.Equal(t, []byte("\n{"), msg[:2])
	st, err := readFile(write(t, "brace.pb", msg), func(ptrace.Traces) error { return nil })
	require.NoError(t, err)
	require.Equal(t, formatSingleProto, st.format)
	require.Equal(t, 1, st.spans)
}

func TestFormatErrors(t *testing.T) {
	for name, tt := range map[string]struct {
		content []byte
		want    string
	}{
		"empty":             {[]byte(" \n"), "empty file"},
		"zeros":             {make([]byte, 64), "unknown format"},
		"gzip":              {[]byte{0x1F, 0x8B, 8, 0, 0, 0}, "a compressed file (gzip or zstd): decompress it first"},
		"compressed frames": {append(frame32([]byte{0x28, 0xB5, 0x2F, 0xFD, 1, 2, 3}), 0), "file exporter output with compression"},
		"json too large":    {[]byte(`{"resourceSpans": [` + strings.Repeat(" ", 100) + `]}`), "request 1: one JSON value is larger than the 64-byte limit of one request"},
	} {
		t.Run(name, func(t *testing.T) {
			withMaxRequest(t, 64)
			path := write(t, "f", tt.content)
			_, err := Read(path, func(ptrace.Traces) error { return nil })
			require.ErrorContains(t, err, path+": "+tt.want)
		})
	}
}

// TestJSONLinesStream: JSON lines are read one request per line too.
func TestJSONLinesStream(t *testing.T) {
	reqs := perSpan(t)
	var file []byte
	largest := 0
	for _, td := range reqs {
		j, err := (&ptrace.JSONMarshaler{}).MarshalTraces(td)
		require.NoError(t, err)
		largest = max(largest, len(j))
		file = append(append(file, j...), '\n')
	}
	emits := 0
	st, err := readFile(write(t, "spans.jsonl", file), func(ptrace.Traces) error { emits++; return nil })
	require.NoError(t, err)
	require.Equal(t, formatJSON, st.format)
	require.Equal(t, len(reqs), emits)
	require.Equal(t, largest, st.peak)
}

// TestTextBeforeJSON: a UTF-8 byte order mark before the JSON (some editors write one) and
// leading white space longer than the sniffed head are skipped: the file is read as JSON,
// not taken for a truncated protobuf length prefix or an unknown format.
func TestTextBeforeJSON(t *testing.T) {
	doc, err := os.ReadFile(strands)
	require.NoError(t, err)
	want := 0
	_, err = Read(strands, func(td ptrace.Traces) error { want += td.SpanCount(); return nil })
	require.NoError(t, err)
	bom := []byte{0xEF, 0xBB, 0xBF}
	lines := func(reqs ...ptrace.Traces) []byte {
		var b []byte
		for _, td := range reqs {
			j, err := (&ptrace.JSONMarshaler{}).MarshalTraces(td)
			require.NoError(t, err)
			b = append(append(b, j...), '\n')
		}
		return b
	}
	reqs := perSpan(t)
	for name, tt := range map[string]struct {
		content []byte
		spans   int
	}{
		"bom":                     {append(append([]byte{}, bom...), doc...), want},
		"bom, white space":        {append(append(append([]byte{}, bom...), " \r\n\t"...), doc...), want},
		"bom, json lines":         {append(append([]byte{}, bom...), lines(reqs...)...), len(reqs)},
		"5000 spaces":             {append([]byte(strings.Repeat(" ", 5000)), doc...), want},
		"exactly the head":        {append([]byte(strings.Repeat("\n", headSize)), doc...), want},
		"3 MiB of white space":    {append([]byte(strings.Repeat(" \n\t\r", 3<<18)), doc...), want},
		"bom, 5000 spaces, lines": {append(append(append([]byte{}, bom...), strings.Repeat(" ", 5000)...), lines(reqs...)...), len(reqs)},
	} {
		t.Run(name, func(t *testing.T) {
			spans := 0
			st, err := readFile(write(t, "spans.json", tt.content), func(td ptrace.Traces) error { spans += td.SpanCount(); return nil })
			require.NoError(t, err)
			require.Equal(t, formatJSON, st.format)
			require.Equal(t, tt.spans, spans)
		})
	}

	// What is not JSON after them is still refused, naming the file.
	for name, tt := range map[string]struct {
		content []byte
		want    string
	}{
		"bom only":              {bom, "empty file"},
		"bom, white space only": {append(append([]byte{}, bom...), strings.Repeat(" ", 9000)...), "empty file"},
		"white space only":      {[]byte(strings.Repeat("\n", 3*headSize)), "empty file"},
		"bom, protobuf":         {append(append([]byte{}, bom...), marshal(t, reqs[0])...), "unknown format"},
		"spaces, then text":     {[]byte(strings.Repeat(" ", 5000) + "hello"), "unknown format"},
		"spaces, then bad JSON": {[]byte(strings.Repeat(" ", 5000) + `{"resourceSpans": `), "request 1: unexpected end of file inside a JSON value"},
	} {
		t.Run(name, func(t *testing.T) {
			path := write(t, "f", tt.content)
			_, err := Read(path, func(ptrace.Traces) error { return nil })
			require.ErrorContains(t, err, path+": "+tt.want)
		})
	}
}

// TestStatBeforeOpen: a missing file is named by the stat error (nothing was opened).
func TestStatBeforeOpen(t *testing.T) {
	path := filepath.Join(t.TempDir(), "nope.json")
	_, err := Read(path, func(ptrace.Traces) error { return nil })
	require.ErrorIs(t, err, os.ErrNotExist)
	require.ErrorContains(t, err, path)
}

func itoa(n int) string { return strconv.Itoa(n) }

// FuzzRead: any bytes are read without a panic, and an error always names the file.
func FuzzRead(f *testing.F) {
	f.Add([]byte("{\"resourceSpans\": []}"))
	f.Add(frame32([]byte{requestTag, 0}))
	f.Add(frameVarint([]byte{requestTag, 2, 0x12, 0}))
	f.Add([]byte{requestTag, 0x7B, requestTag})
	f.Add([]byte{0, 0, 0, 0, 0})
	f.Add([]byte{0xFF, 0xFF, 0xFF, 0xFF, 0x0F, requestTag})
	dir := f.TempDir()
	f.Fuzz(func(t *testing.T, b []byte) {
		withMaxRequest(t, 1<<16)
		path := filepath.Join(dir, "f")
		require.NoError(t, os.WriteFile(path, b, 0o644))
		_, err := readFile(path, func(ptrace.Traces) error { return nil })
		if err != nil {
			require.True(t, strings.HasPrefix(err.Error(), path+": "), err.Error())
		}
	})
}
