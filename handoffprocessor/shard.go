package handoffprocessor

import (
	"container/heap"
	"context"
	"time"

	"go.opentelemetry.io/collector/pdata/pcommon"
	"go.opentelemetry.io/collector/pdata/ptrace"
)

// Release triggers, the values of the traces_released "trigger" attribute and of the
// handoff.trace.release_reason span attribute.
const (
	triggerRoot     = "root"
	triggerTimeout  = "timeout"
	triggerEvicted  = "evicted"
	triggerTooLarge = "too_large"
	triggerShutdown = "shutdown"
	// triggerEndOfInput: a replay ran out of input (see EndOfInput).
	triggerEndOfInput = "end_of_input"
	// reasonOrphans marks a trace released on its root whose spans miss parents.
	reasonOrphans = "orphans"
)

// pendingTrace is one buffered trace.
type pendingTrace struct {
	id       pcommon.TraceID
	seq      uint64        // arrival order, for eviction
	encoded  encodedSpans  // the spans while buffered, for buffer_encoding proto and proto_s2 (encoded.go)
	data     ptrace.Traces // the spans decoded: while buffered (decoded) or from release on
	spans    int
	bytes    int // protobuf size: with buffer_encoding proto or proto_s2, or when max_trace_size_bytes is set
	first    time.Time
	rootSeen bool
	quiet    time.Time // release time once the root is seen; restarted by every span
	hard     time.Time // first + max_wait; never extended
	due      time.Time // the deadline last pushed on the heap
	// entry is the stamp of the trace's live heap entry, new whenever the deadline moves;
	// stamps are unique in the shard, so entries left by an earlier trace of the same id
	// (released early, its id since forgotten) or by an earlier deadline are skipped.
	entry uint64
}

// deadline is when the trace is due, and why.
func (t *pendingTrace) deadline() (time.Time, string) {
	if t.rootSeen && t.quiet.Before(t.hard) {
		return t.quiet, triggerRoot
	}
	return t.hard, triggerTimeout
}

// release is a trace leaving the buffer.
type release struct {
	trace   *pendingTrace
	trigger string
}

// releaseChunk is what a shard hands a release worker: traces bounded by
// release.max_batch_spans (one trace over it goes alone), and the context of their
// sending (done when the shutdown budget runs out).
type releaseChunk struct {
	ctx      context.Context
	releases []release
}

type deadlineEntry struct {
	at    time.Time
	id    pcommon.TraceID
	stamp uint64 // live while it is its trace's entry (pendingTrace.entry)
}

// deadlineHeap is a min-heap of trace deadlines: one per shard instead of a timer per trace.
type deadlineHeap []deadlineEntry

func (h deadlineHeap) Len() int           { return len(h) }
func (h deadlineHeap) Less(i, j int) bool { return h[i].at.Before(h[j].at) }
func (h deadlineHeap) Swap(i, j int)      { h[i], h[j] = h[j], h[i] }
func (h *deadlineHeap) Push(x any)        { *h = append(*h, x.(deadlineEntry)) }
func (h *deadlineHeap) Pop() any {
	old := *h
	e := old[len(old)-1]
	*h = old[:len(old)-1]
	return e
}

// shardMsg carries the fragments of one ConsumeTraces call that belong to this shard, or a
// tick request (frags nil) from tests. The shard answers on reply with what must be
// forwarded synchronously: early releases and late spans.
type shardMsg struct {
	frags []*fragment
	reply chan shardReply
	// endOfInput asks the shard to hand back every buffered trace (in-process replay).
	endOfInput bool
}

type shardReply struct {
	releases []release
	late     []*fragment
}

// shard owns a part of the buffer; only its goroutine touches its state.
type shard struct {
	p        *handoffProcessor
	in       chan shardMsg
	traces   map[pcommon.TraceID]*pendingTrace
	deadline deadlineHeap
	arrival  []arrival // FIFO of trace arrivals for eviction, lazily cleaned
	capacity int
	released *idRing
	seq      uint64
	stamps   uint64 // the last deadline entry's stamp
	timer    *time.Timer
}

type arrival struct {
	id  pcommon.TraceID
	seq uint64
}

func newShard(p *handoffProcessor, capacity, lateCache int) *shard {
	return &shard{
		p:        p,
		in:       make(chan shardMsg, 16),
		traces:   make(map[pcommon.TraceID]*pendingTrace),
		capacity: capacity,
		released: newIDRing(lateCache),
	}
}

// run is the shard's loop: intake, deadlines, and on close the final flush.
func (s *shard) run() {
	defer s.p.shardWG.Done()
	s.timer = time.NewTimer(time.Hour)
	s.timer.Stop()
	defer s.timer.Stop()
	for {
		select {
		case msg, ok := <-s.in:
			if !ok {
				s.flush()
				return
			}
			reply := shardReply{}
			var early []release
			for _, f := range msg.frags {
				early = s.add(f, &reply, early)
			}
			// Traces released early (evicted, too large) leave through the release workers
			// like timed ones: the client's request only waits for the queue (backpressure),
			// never for assembly or the destination, so a client timeout cannot make its
			// retry duplicate spans that were already forwarded.
			s.handChunks(early)
			if msg.endOfInput {
				reply.releases = append(reply.releases, s.takeAll(triggerEndOfInput)...)
			}
			// Deadlines are checked on every message too, so a busy shard is never starved
			// of releases.
			s.releaseDue()
			msg.reply <- reply
		case <-s.timer.C:
			s.releaseDue()
		}
		s.rearm()
	}
}

// add buffers one fragment, or hands it back as late; traces it releases early (evicted,
// too large) are appended to early.
func (s *shard) add(f *fragment, reply *shardReply, early []release) []release {
	now := s.p.now()
	t := s.traces[f.id]
	if t == nil {
		if s.released.contains(f.id) {
			reply.late = append(reply.late, f)
			return early
		}
		if len(s.traces) >= s.capacity {
			if victim := s.oldest(); victim != nil {
				early = append(early, s.take(victim, triggerEvicted))
			}
		}
		s.seq++
		t = &pendingTrace{id: f.id, seq: s.seq, first: now, hard: now.Add(s.p.cfg.MaxWait)}
		if !s.p.codec.encoded {
			t.data = ptrace.NewTraces() // encoded, the data is made at release
		}
		s.traces[f.id] = t
		s.arrival = append(s.arrival, arrival{f.id, t.seq})
		s.p.hold(1, 0)
	}
	if s.p.codec.encoded {
		t.encoded = append(t.encoded, f.encoded)
	} else {
		f.data.ResourceSpans().MoveAndAppendTo(t.data.ResourceSpans())
	}
	t.spans += f.spans
	t.bytes += f.bytes
	s.p.hold(0, int64(f.spans))
	if f.hasRoot {
		t.rootSeen = true
	}
	if t.rootSeen {
		t.quiet = now.Add(s.p.cfg.QuietPeriod)
	}
	if t.spans > s.p.cfg.MaxSpansPerTrace || (s.p.cfg.MaxTraceSizeBytes > 0 && t.bytes > s.p.cfg.MaxTraceSizeBytes) {
		return append(early, s.take(t, triggerTooLarge))
	}
	// Push a heap entry only when the deadline moved (a trace without its root keeps its
	// hard deadline however many batches arrive).
	if at, _ := t.deadline(); !at.Equal(t.due) {
		t.due = at
		s.stamps++
		t.entry = s.stamps
		heap.Push(&s.deadline, deadlineEntry{at: at, id: t.id, stamp: t.entry})
	}
	return early
}

// oldest returns the earliest-arrived trace still buffered.
func (s *shard) oldest() *pendingTrace {
	for len(s.arrival) > 0 {
		a := s.arrival[0]
		s.arrival = s.arrival[1:]
		if t := s.traces[a.id]; t != nil && t.seq == a.seq {
			return t
		}
	}
	return nil
}

// take removes a trace from the buffer and remembers its id for late spans. It stays in
// the traces_in_memory / spans_in_memory gauges until it is handed downstream.
func (s *shard) take(t *pendingTrace, trigger string) release {
	delete(s.traces, t.id)
	s.released.add(t.id)
	s.compactArrivals()
	return release{trace: t, trigger: trigger}
}

// compactArrivals drops the arrival entries of released traces once they outnumber the
// live ones, so the queue stays proportional to the buffer under steady traffic.
func (s *shard) compactArrivals() {
	if len(s.arrival) <= 2*len(s.traces)+64 {
		return
	}
	live := make([]arrival, 0, 2*len(s.traces)+1)
	for _, a := range s.arrival {
		if t := s.traces[a.id]; t != nil && t.seq == a.seq {
			live = append(live, a)
		}
	}
	s.arrival = live
}

// releaseDue hands every trace whose deadline passed to the release workers.
func (s *shard) releaseDue() {
	now := s.p.now()
	var due []release
	for len(s.deadline) > 0 && !s.deadline[0].at.After(now) {
		e := heap.Pop(&s.deadline).(deadlineEntry)
		t := s.traces[e.id]
		if t == nil || t.entry != e.stamp {
			continue
		}
		_, trigger := t.deadline()
		due = append(due, s.take(t, trigger))
	}
	s.handChunks(due)
}

// handChunks hands releases to the release workers in chunks of at most
// release.max_batch_spans spans (a larger trace alone).
func (s *shard) handChunks(rs []release) {
	start, spans := 0, 0
	for i, r := range rs {
		if i > start && spans+r.trace.spans > s.p.cfg.Release.MaxBatchSpans {
			s.hand(s.p.runCtx, rs[start:i])
			start, spans = i, 0
		}
		spans += r.trace.spans
	}
	if start < len(rs) {
		s.hand(s.p.runCtx, rs[start:])
	}
}

// hand queues a chunk for the release workers, waiting while they are busy
// (backpressure). When ctx is done first (the shutdown budget ran out) the chunk is
// counted as dropped and false returned.
func (s *shard) hand(ctx context.Context, chunk []release) bool {
	select {
	case s.p.releaseQueue <- releaseChunk{ctx: ctx, releases: chunk}:
		return true
	case <-ctx.Done():
		s.p.dropReleases(chunk)
		return false
	}
}

// rearm points the shard's single timer at its earliest live deadline.
func (s *shard) rearm() {
	for len(s.deadline) > 0 {
		e := s.deadline[0]
		if t := s.traces[e.id]; t != nil && t.entry == e.stamp {
			s.timer.Reset(max(e.at.Sub(s.p.now()), 0))
			return
		}
		heap.Pop(&s.deadline)
	}
	s.timer.Stop()
}

// flush releases every buffered trace in arrival order (shutdown), one bounded chunk at a
// time: the release queue's backpressure keeps the chunks on their way to a few. When the
// shutdown budget runs out, what is left is counted as dropped.
func (s *shard) flush() {
	ctx := s.p.flushCtx
	for {
		chunk := s.takeChunk(triggerShutdown)
		if len(chunk) == 0 {
			return
		}
		if ctx.Err() != nil {
			s.p.dropReleases(chunk)
			s.dropBuffered()
			return
		}
		if !s.hand(ctx, chunk) {
			s.dropBuffered()
			return
		}
	}
}

// dropBuffered counts every trace still buffered as dropped at shutdown and forgets them.
func (s *shard) dropBuffered() {
	var spans int64
	for _, t := range s.traces {
		spans += int64(t.spans)
	}
	s.p.dropped(int64(len(s.traces)), spans)
	clear(s.traces)
	s.arrival = nil
}

// takeChunk takes the oldest buffered traces, up to release.max_batch_spans spans (at
// least one trace, however large).
func (s *shard) takeChunk(trigger string) []release {
	limit := s.p.cfg.Release.MaxBatchSpans
	var chunk []release
	spans := 0
	for spans < limit {
		t := s.peekOldest()
		if t == nil || (len(chunk) > 0 && spans+t.spans > limit) {
			break
		}
		s.arrival = s.arrival[1:] // before take, whose compaction may rebuild arrival
		chunk = append(chunk, s.take(t, trigger))
		spans += t.spans
	}
	return chunk
}

// peekOldest returns the earliest-arrived trace still buffered, leaving its entry first in
// the arrival queue.
func (s *shard) peekOldest() *pendingTrace {
	for len(s.arrival) > 0 {
		a := s.arrival[0]
		if t := s.traces[a.id]; t != nil && t.seq == a.seq {
			return t
		}
		s.arrival = s.arrival[1:]
	}
	return nil
}

// takeAll removes every buffered trace, in arrival order.
func (s *shard) takeAll(trigger string) []release {
	var all []release
	for t := s.oldest(); t != nil; t = s.oldest() {
		all = append(all, s.take(t, trigger))
	}
	return all
}

// idRing remembers the last n trace ids (FIFO), bounded in memory.
type idRing struct {
	ids  []pcommon.TraceID
	next int
	set  map[pcommon.TraceID]int // id -> how many slots hold it
}

func newIDRing(n int) *idRing {
	return &idRing{ids: make([]pcommon.TraceID, 0, n), set: make(map[pcommon.TraceID]int, n)}
}

func (r *idRing) add(id pcommon.TraceID) {
	if len(r.ids) < cap(r.ids) {
		r.ids = append(r.ids, id)
	} else {
		old := r.ids[r.next]
		if r.set[old]--; r.set[old] <= 0 {
			delete(r.set, old)
		}
		r.ids[r.next] = id
		r.next = (r.next + 1) % len(r.ids)
	}
	r.set[id]++
}

func (r *idRing) contains(id pcommon.TraceID) bool { return r.set[id] > 0 }
