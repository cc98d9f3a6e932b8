package handoffprocessor

import (
	"sync"

	"github.com/klauspost/compress/s2"
	"go.opentelemetry.io/collector/pdata/ptrace"
)

// Buffered spans are held as their OTLP protobuf encoding, not as pdata. Decoded pdata is
// a graph of small pointer-bearing objects, and for the second or so a trace waits the
// buffer is most of the live heap: every GC cycle (triggered by the receiver's garbage)
// marks it again, and the heap goal is twice it. Bytes hold no pointers, so the GC
// skips them, cycles are short and the heap goal follows the rest of the live set. The
// price is one marshal on arrival and one decode at release; the GC work saved pays for
// it (docs/performance.md, "The encoded buffer").
//
// buffer_encoding proto_s2 also compresses each fragment's protobuf with S2 (a Snappy
// derivative: fast, no entropy coding). Agent spans are mostly prompt and message text,
// repeated from call to call, so the buffer shrinks about tenfold. S2 itself costs about
// 1.6 µs per span; the larger cost is the GC's, which runs more often once the buffer no
// longer fills the heap (docs/performance.md, "The compressed buffer").

// storedFragment is one buffered fragment's protobuf, S2-compressed when compressed.
type storedFragment struct {
	b          []byte
	compressed bool
}

// bufferCodec is how the buffer holds spans (buffer_encoding): as protobuf (encoded),
// S2-compressed (compress), or as the receiver's pdata (neither). When encoded, it encodes
// fragments on arrival and decodes traces at release.
type bufferCodec struct {
	encoded, compress bool
}

// codecFor is the codec of a valid buffer_encoding.
func codecFor(encoding string) bufferCodec {
	return bufferCodec{encoded: encoding != bufferDecoded, compress: encoding == bufferProtoS2}
}

// scratch holds the buffers a codec compresses into and decompresses into: their contents
// never outlive one call (pdata's unmarshal copies every string and byte slice it keeps).
var scratch = sync.Pool{New: func() any { return new([]byte) }}

// encode stores f's spans as protobuf (f.encoded, f.bytes: the protobuf size, compressed
// or not); f.data stays as it is, for a fragment that turns out to be late.
func (c bufferCodec) encode(f *fragment) {
	var m ptrace.ProtoMarshaler
	// MarshalTraces cannot fail: it sizes the message, then writes it.
	raw, _ := m.MarshalTraces(f.data)
	f.bytes = len(raw)
	// S2 blocks hold up to 4 GiB; a larger fragment (beyond protobuf's own 2 GiB limit,
	// so never from a receiver) is kept uncompressed.
	if !c.compress || s2.MaxEncodedLen(len(raw)) < 0 {
		f.encoded = storedFragment{b: raw}
		return
	}
	buf := scratch.Get().(*[]byte)
	*buf = s2.Encode(*buf, raw)
	// Copied out at its exact size: the scratch buffer's capacity is Encode's worst case.
	f.encoded = storedFragment{b: append([]byte(nil), *buf...), compressed: true}
	scratch.Put(buf)
}

// encodedSpans are the fragments of one buffered trace, in arrival order.
type encodedSpans []storedFragment

// decode is the buffered spans as one ptrace.Traces, fragments in arrival order (the
// first fragment's, with the others' appended). A fragment that fails to decode (our own
// encoding: only a bug) is skipped and counted in failed; every other fragment's spans
// are still there.
func (c bufferCodec) decode(e encodedSpans) (td ptrace.Traces, failed int) {
	var u ptrace.ProtoUnmarshaler
	var buf *[]byte
	for _, f := range e {
		b := f.b
		if f.compressed {
			if buf == nil {
				buf = scratch.Get().(*[]byte)
				defer scratch.Put(buf)
			}
			out, err := s2.Decode(*buf, b)
			if err != nil {
				failed++
				continue
			}
			*buf, b = out, out
		}
		part, err := u.UnmarshalTraces(b)
		switch {
		case err != nil:
			failed++
		case td == (ptrace.Traces{}):
			td = part
		default:
			part.ResourceSpans().MoveAndAppendTo(td.ResourceSpans())
		}
	}
	if td == (ptrace.Traces{}) {
		td = ptrace.NewTraces() // nothing decoded
	}
	return td, failed
}
