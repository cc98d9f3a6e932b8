package rubric

import (
	"math"

	"github.com/otelcol-handoff/otelcol-handoff/internal/agentgraph"
)

// substrings answers "which texts contain this needle, and since when" for many needles
// over many texts in one pass (Aho-Corasick): building is linear in the needles' bytes,
// each text is scanned once, and a query is constant time. The ScopeFidelity context check
// asks it, for every identifier of every tool call, whether a text available before the
// call (not the call's own result) contains it; joining the texts again per call was
// quadratic in tool calls.
type substrings struct {
	next  map[uint64]int32 // state<<8 | byte -> state
	kids  [][]int32
	fail  []int32
	order []int32 // breadth-first: shallower states first
	best  []earliest
	state map[string]int32 // needle -> its state
}

// earliest keeps the earliest time a text reached a state, and the earliest from another
// owner, so a query can leave out one owner's own text.
type earliest struct {
	t1, t2 uint64
	o1, o2 *agentgraph.ToolCall
}

func (b *earliest) add(t uint64, o *agentgraph.ToolCall) {
	switch {
	case o == b.o1:
		b.t1 = min(b.t1, t)
	case o == b.o2:
		if b.t2 = min(b.t2, t); b.t2 < b.t1 {
			b.t1, b.t2, b.o1, b.o2 = b.t2, b.t1, b.o2, b.o1
		}
	case t < b.t1:
		b.t2, b.o2 = b.t1, b.o1
		b.t1, b.o1 = t, o
	case t < b.t2:
		b.t2, b.o2 = t, o
	}
}

func (b *earliest) merge(c earliest) {
	if c.t1 != math.MaxUint64 {
		b.add(c.t1, c.o1)
	}
	if c.t2 != math.MaxUint64 {
		b.add(c.t2, c.o2)
	}
}

func newSubstrings(needles []string) *substrings {
	x := &substrings{next: map[uint64]int32{}, kids: [][]int32{nil}, state: map[string]int32{}}
	for _, n := range needles {
		if _, ok := x.state[n]; ok {
			continue
		}
		s := int32(0)
		for i := 0; i < len(n); i++ {
			key := uint64(s)<<8 | uint64(n[i])
			t, ok := x.next[key]
			if !ok {
				t = int32(len(x.kids))
				x.kids = append(x.kids, nil)
				x.next[key] = t
				x.kids[s] = append(x.kids[s], t)
			}
			s = t
		}
		x.state[n] = s
	}
	// Failure links, breadth-first; the byte into each state is needed to follow them.
	in := make([]byte, len(x.kids))
	for key, t := range x.next {
		in[t] = byte(key)
	}
	x.fail = make([]int32, len(x.kids))
	x.order = append(x.order, 0)
	for i := 0; i < len(x.order); i++ {
		u := x.order[i]
		for _, c := range x.kids[u] {
			x.order = append(x.order, c)
			if u == 0 {
				continue
			}
			f := x.fail[u]
			for {
				if t, ok := x.next[uint64(f)<<8|uint64(in[c])]; ok {
					x.fail[c] = t
					break
				}
				if f == 0 {
					break
				}
				f = x.fail[f]
			}
		}
	}
	x.best = make([]earliest, len(x.kids))
	for i := range x.best {
		x.best[i] = earliest{t1: math.MaxUint64, t2: math.MaxUint64}
	}
	return x
}

// scan records that text is available from time t on, owned by o (nil: nobody's).
func (x *substrings) scan(text string, t uint64, o *agentgraph.ToolCall) {
	s := int32(0)
	for i := 0; i < len(text); i++ {
		c := uint64(text[i])
		for {
			if n, ok := x.next[uint64(s)<<8|c]; ok {
				s = n
				break
			}
			if s == 0 {
				break
			}
			s = x.fail[s]
		}
		if s != 0 {
			x.best[s].add(t, o)
		}
	}
}

// done propagates what each state saw to the states of its suffixes: a text reaching a
// state contains every needle ending there or at a state on its failure chain.
func (x *substrings) done() {
	for i := len(x.order) - 1; i > 0; i-- {
		s := x.order[i]
		x.best[x.fail[s]].merge(x.best[s])
	}
}

// seen reports whether a text not owned by not, available at or before t, contains needle.
func (x *substrings) seen(needle string, t uint64, not *agentgraph.ToolCall) bool {
	s, ok := x.state[needle]
	if !ok {
		return false
	}
	b := x.best[s]
	if b.o1 != not {
		return b.t1 <= t
	}
	return b.t2 <= t
}
