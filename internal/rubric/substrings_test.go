package rubric

import (
	"fmt"
	"math/rand/v2"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/otelcol-handoff/otelcol-handoff/internal/agentgraph"
)

// TestSubstringsAgainstJoin checks the index against the check it replaced: join every
// text available by time t (other than the asker's own) and search the needle in it.
func TestSubstringsAgainstJoin(t *testing.T) {
	rng := rand.New(rand.NewPCG(1, 2))
	word := func() string {
		const abc = "ab1-c2/"
		n := 1 + rng.IntN(6)
		var b strings.Builder
		for range n {
			b.WriteByte(abc[rng.IntN(len(abc))])
		}
		return b.String()
	}
	owners := []*agentgraph.ToolCall{nil, {Name: "a"}, {Name: "b"}, {Name: "c"}}
	for round := 0; round < 200; round++ {
		type text struct {
			s string
			t uint64
			o *agentgraph.ToolCall
		}
		var texts []text
		for range 1 + rng.IntN(6) {
			texts = append(texts, text{word() + " " + word() + word(), uint64(rng.IntN(5)), owners[rng.IntN(len(owners))]})
		}
		var needles []string
		for range 1 + rng.IntN(8) {
			needles = append(needles, word())
		}
		x := newSubstrings(needles)
		for _, tx := range texts {
			x.scan(tx.s, tx.t, tx.o)
		}
		x.done()
		for _, n := range needles {
			for at := uint64(0); at < 6; at++ {
				for _, not := range owners[1:] { // the asker is always a tool call
					var known []string
					for _, tx := range texts {
						if tx.t <= at && tx.o != not {
							known = append(known, tx.s)
						}
					}
					want := strings.Contains(strings.Join(known, "\n"), n)
					require.Equal(t, want, x.seen(n, at, not), fmt.Sprintf("needle %q at %d not %v in %+v", n, at, not, texts))
				}
			}
		}
	}
}
