package check

import (
	"fmt"
	"math"
	"sort"
	"strings"

	"github.com/otelcol-handoff/otelcol-handoff/internal/textsafe"
)

// MaxListed caps the items a verdict's message, expected or actual lists: a trace of any
// size gives a message of bounded size.
const MaxListed = 10

// Listed joins the first items (at most maxListed of total) and says how many more
// there were.
func Listed(items []string, total int, sep, what string) string {
	return textsafe.Listed(items, total, MaxListed, sep, what)
}

// CapList keeps the first maxListed problems and counts the rest in a last one.
func CapList(problems []string) []string {
	if len(problems) <= MaxListed {
		return problems
	}
	return append(problems[:MaxListed:MaxListed], fmt.Sprintf("… and %d more", len(problems)-MaxListed))
}

func Verdict(r *Result, problems []string, ok string) {
	if len(problems) > 0 {
		r.Outcome, r.Message = Fail, strings.Join(problems, "; ")
		return
	}
	r.Outcome, r.Message = Pass, ok
}

func FormatCounts(m map[string]int) string {
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	parts := make([]string, 0, len(keys))
	for _, k := range keys {
		parts = append(parts, fmt.Sprintf("%s x%d", k, m[k]))
	}
	return strings.Join(parts, ", ")
}

func Round(ms float64) float64 { return math.Round(ms*100) / 100 }
