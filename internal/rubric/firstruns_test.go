package rubric

import (
	"testing"

	"github.com/stretchr/testify/require"
	"go.opentelemetry.io/collector/pdata/pcommon"

	"github.com/otelcol-handoff/otelcol-handoff/internal/agentgraph"
)

// TestFirstRun: the earliest-starting run with an entry at or after t that passes the
// check, through the kept earliest runs of each suffix and, when all of them fail the
// check, the rest one by one.
func TestFirstRun(t *testing.T) {
	var runs []*agentgraph.Invocation
	for i := 0; i < 8; i++ {
		runs = append(runs, &agentgraph.Invocation{Index: i, Name: "s"})
	}
	// Entries (time, run position): run 7 acts first, run 0 last; run 3 twice.
	fr := &firstRuns{}
	for _, en := range []struct {
		at  pcommon.Timestamp
		pos int
	}{{1, 7}, {2, 6}, {3, 3}, {4, 5}, {5, 4}, {6, 3}, {7, 2}, {8, 1}, {9, 0}} {
		fr.at, fr.pos = append(fr.at, en.at), append(fr.pos, en.pos)
	}
	fr.top = make([][firstK]int, len(fr.at)+1)
	fr.top[len(fr.at)] = [firstK]int{-1, -1, -1, -1}
	for i := len(fr.at) - 1; i >= 0; i-- {
		fr.top[i] = insertRun(fr.top[i+1], fr.pos[i])
	}
	require.Equal(t, [firstK]int{0, 1, 2, 3}, fr.top[0])
	require.Equal(t, [firstK]int{0, 1, -1, -1}, fr.top[7])

	x := &Index{
		byName: map[string][]*agentgraph.Invocation{"s": runs},
		first:  map[firstRunsKey]map[string]*firstRuns{{"s", "to"}: {"w": fr}},
	}
	all := func(*agentgraph.Invocation) bool { return true }
	require.Same(t, runs[0], x.firstRun("s", "to", "w", 0, all))
	require.Same(t, runs[4], x.firstRun("s", "to", "w", 5, func(r *agentgraph.Invocation) bool { return r.Index >= 4 }),
		"runs 0-3 (the kept four) fail the check: the rest are looked at")
	require.Nil(t, x.firstRun("s", "to", "w", 5, func(r *agentgraph.Invocation) bool { return r.Index >= 5 }),
		"run 5 and up acted before t=5")
	require.Nil(t, x.firstRun("s", "to", "w", 10, all))
	require.Nil(t, x.firstRun("s", "to", "other", 0, all))
}
