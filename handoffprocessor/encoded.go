package handoffprocessor

import (
	"go.opentelemetry.io/collector/pdata/ptrace"
)

// Buffered spans are held as their OTLP protobuf encoding, not as pdata. Decoded pdata is
// a graph of small pointer-bearing objects, and for the second or so a trace waits the
// buffer is most of the live heap: every GC cycle (triggered by the receiver's garbage)
// marks it again, and the heap goal is twice it. Bytes hold no pointers, so the GC
// skips them, cycles are short and the heap goal follows the rest of the live set. The
// price is one marshal on arrival and one decode at release; the GC work saved pays for
// it (docs/performance.md, "The encoded buffer").

// encodeFragment stores f's spans as protobuf (f.encoded, f.bytes); f.data stays as it
// is, for a fragment that turns out to be late.
func encodeFragment(f *fragment) {
	var m ptrace.ProtoMarshaler
	// MarshalTraces cannot fail: it sizes the message, then writes it.
	f.encoded, _ = m.MarshalTraces(f.data)
	f.bytes = len(f.encoded)
}

// encodedSpans are the fragments of one buffered trace, each as protobuf, in arrival
// order.
type encodedSpans [][]byte

// decode is the buffered spans as one ptrace.Traces, fragments in arrival order (the
// first fragment's, with the others' appended). A fragment that fails to decode (our own
// encoding: only a bug) is skipped and counted in failed; every other fragment's spans
// are still there.
func (e encodedSpans) decode() (td ptrace.Traces, failed int) {
	var u ptrace.ProtoUnmarshaler
	for _, b := range e {
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
