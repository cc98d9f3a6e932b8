package rubric

import (
	"maps"
	"regexp"
	"slices"

	"github.com/otelcol-handoff/otelcol-handoff/internal/agentgraph"
	"github.com/otelcol-handoff/otelcol-handoff/internal/cluster"
	"github.com/otelcol-handoff/otelcol-handoff/internal/textsafe"
)

// The deterministic parts of the handoff rubrics. Each part reads the delegation DAG and
// the spans under it, and says pass, fail, or n/a (it cannot decide on this trace); see
// assertionexporter/README.md, "Handoff rubrics".

type PartState int

const (
	PartNA PartState = iota
	PartPass
	PartFail
)

// Part is one deterministic check of a rubric on one handoff: pass, fail, or n/a (it
// cannot decide on this trace), with what it found.
type Part struct {
	Name   string
	State  PartState
	Detail string
	// Cluster is the failure cluster when this part fails (empty: its axis's, FailureCluster).
	Cluster cluster.Name
}

func (p Part) String() string {
	return p.Name + " " + [...]string{"n/a", "pass", "fail"}[p.State]
}

// Checks are the deterministic checks of one EXPECT_HANDOFF_RUBRICS step: the tools it
// never counts as out of scope and the errors it takes as transient.
type Checks struct {
	ignored   map[string]bool
	transient []*regexp.Regexp
}

// NewChecks compiles a step's ignoredTools and transientErrors (default:
// defaultTransient); patterns that do not compile are left out (validation reports them).
func NewChecks(ignoredTools, transientErrors []string) *Checks {
	rs := &Checks{ignored: map[string]bool{}}
	for _, t := range ignoredTools {
		rs.ignored[t] = true
	}
	patterns := transientErrors
	if len(patterns) == 0 {
		patterns = defaultTransient
	}
	for _, p := range patterns {
		if re, err := regexp.Compile(p); err == nil {
			rs.transient = append(rs.transient, re)
		}
	}
	return rs
}

// maxListed caps the items a message lists (the rules' bound): a trace of any size gives
// a message of bounded size.
const maxListed = 10

// listed joins the first items (at most maxListed of total) and says how many more there
// were.
func listed(items []string, total int, sep, what string) string {
	return textsafe.Listed(items, total, maxListed, sep, what)
}

// transferByName matches transfer tool names, transfer_to_X and handoff_to_X (the model's).
var transferByName = agentgraph.TransferNamePattern()

// agentArgKeys are the argument keys that name a transfer's target agent (the model's).
var agentArgKeys = agentgraph.TargetArgKeys()

func sortedKeys[V any](m map[string]V) []string { return slices.Sorted(maps.Keys(m)) }
