// Package trajectory matches a sequence of what an agent did (tool calls, or the agents it
// handed off to) against a reference, in the modes the agent evaluation tools use: exact,
// in_order, any_order, subset and superset. It is pure: the caller reads the sequence from
// the trace and passes the params predicate in as a function.
//
// Every mode is one of two alignments plus what must be fully aligned:
//
//	mode       alignment   passes when
//	exact      ordered     every reference step and every call aligned (precision = recall = 1)
//	in_order   ordered     every reference step aligned (recall = 1), other calls between
//	any_order  unordered   every step and every call aligned, one to one (same multiset)
//	subset     unordered   every call aligned to a reference step (precision = 1)
//	superset   unordered   every reference step aligned to a call (recall = 1)
//
// Optional steps may stay unaligned. Steps of a parallel group have no order among
// themselves, and neither have the calls one LLM response issued (Call.Response).
package trajectory

import (
	"fmt"
	"strings"
)

// Mode is a matching mode.
type Mode string

// The modes.
const (
	Exact    Mode = "exact"
	InOrder  Mode = "in_order"
	AnyOrder Mode = "any_order"
	Subset   Mode = "subset"
	Superset Mode = "superset"
)

// Modes lists the canonical modes.
var Modes = []Mode{Exact, InOrder, AnyOrder, Subset, Superset}

// aliases maps every accepted name to its mode: ours; agentevals' trajectory match modes
// (strict, unordered, subset, superset); Google ADK's tool_trajectory match types (EXACT,
// IN_ORDER, ANY_ORDER). ADK's ANY_ORDER allows extra calls ("all tool calls from the
// expected list present in the actual list, in any order, and other tool calls in
// between"), so it is superset, not any_order.
var aliases = map[string]Mode{
	"exact": Exact, "in_order": InOrder, "any_order": AnyOrder, "subset": Subset, "superset": Superset,
	"strict": Exact, "unordered": AnyOrder,
	"EXACT": Exact, "IN_ORDER": InOrder, "ANY_ORDER": Superset,
}

// ParseMode reads a mode by any of its names (see aliases); "" is an error.
func ParseMode(name string) (Mode, error) {
	if m, ok := aliases[name]; ok {
		return m, nil
	}
	return "", fmt.Errorf("unknown mode %q (want one of exact, in_order, any_order, subset, superset; "+
		"agentevals' strict, unordered, subset, superset; ADK's EXACT, IN_ORDER, ANY_ORDER)", name)
}

// ordered reports whether the mode aligns in order.
func (m Mode) ordered() bool { return m == Exact || m == InOrder }

// needsPrecision: every call must be aligned; needsRecall: every required step.
func (m Mode) needsPrecision() bool { return m == Exact || m == AnyOrder || m == Subset }

func (m Mode) needsRecall() bool { return m == Exact || m == InOrder || m == AnyOrder || m == Superset }

// Step is one reference step: a name (a tool, or an agent for handoff sequences), whether
// it may be absent, and the text of its params predicate when it has one (for messages).
type Step struct {
	Name     string
	Optional bool
	Where    string
}

// Element is one position of the reference: a single step, or a parallel group whose steps
// match in any order.
type Element struct {
	Steps    []Step
	Parallel bool
}

// Reference is the expected sequence.
type Reference []Element

// Single is a reference element of one step.
func Single(s Step) Element { return Element{Steps: []Step{s}} }

// Names is a reference of plain names, one step each.
func Names(names ...string) Reference {
	out := make(Reference, len(names))
	for i, n := range names {
		out[i] = Single(Step{Name: n})
	}
	return out
}

// Steps returns the reference's steps in order (a parallel group's in the order written):
// the step numbering a Predicate receives.
func (r Reference) Steps() []Step {
	var out []Step
	for _, e := range r {
		out = append(out, e.Steps...)
	}
	return out
}

// String writes the reference as a config would: a, [b | c], d? (? marks optional steps,
// [x | y] a parallel group).
func (r Reference) String() string {
	parts := make([]string, 0, len(r))
	for _, e := range r {
		var ss []string
		for _, s := range e.Steps {
			ss = append(ss, s.label())
		}
		if e.Parallel {
			parts = append(parts, "["+strings.Join(ss, " | ")+"]")
		} else {
			parts = append(parts, strings.Join(ss, ", "))
		}
	}
	return strings.Join(parts, ", ")
}

func (s Step) label() string {
	out := s.Name
	if s.Where != "" {
		out += " where " + s.Where
	}
	if s.Optional {
		out += "?"
	}
	return out
}

// Call is one observed step: its name and the LLM response that issued it. Calls with the
// same Response (>= 0) came from one response and have no order among themselves; a
// negative Response is a response of its own.
type Call struct {
	Name     string
	Response int
}

// Predicate tells whether call (an index into the calls) satisfies the params of step (an
// index into Reference.Steps) that has a Where; it is asked only when the names are
// equal. Nil: names alone decide.
type Predicate func(step, call int) bool

// Result is a match's verdict.
type Result struct {
	Mode Mode
	Pass bool
	// Precision is the share of calls aligned to a reference step; Recall the share of
	// the required steps aligned to a call (1 when there are none: nothing was missed;
	// precision is 1 for an empty sequence). Score is their harmonic mean (F1), 0 when
	// both are 0.
	Precision, Recall, Score float64
	// Aligned counts the aligned pairs; Required the required steps.
	Aligned, Required int
	// Divergence says, in words, where the sequence first departs from the reference
	// ("" on a pass).
	Divergence string
	// Pairs maps each step (Reference.Steps order) to its aligned call (-1: none).
	Pairs []int
}

// Match aligns calls with the reference in mode and scores the alignment. Cost:
// O(steps × calls) for the ordered modes, O(steps × calls × steps) at worst for the
// unordered ones (augmenting paths); steps are few (the reference is written by hand).
func Match(mode Mode, ref Reference, calls []Call, pred Predicate) Result {
	m := newMatrix(ref, calls, pred)
	var pairs []int
	if mode.ordered() {
		pairs = m.ordered()
	} else {
		pairs = m.unordered()
	}
	res := Result{Mode: mode, Pairs: pairs}
	requiredAligned := 0
	for i, s := range m.steps {
		if !s.Optional {
			res.Required++
		}
		if pairs[i] >= 0 {
			res.Aligned++
			if !s.Optional {
				requiredAligned++
			}
		}
	}
	res.Precision, res.Recall = 1, 1
	if len(calls) > 0 {
		res.Precision = float64(res.Aligned) / float64(len(calls))
	}
	if res.Required > 0 {
		res.Recall = float64(requiredAligned) / float64(res.Required)
	}
	if res.Precision+res.Recall > 0 {
		res.Score = 2 * res.Precision * res.Recall / (res.Precision + res.Recall)
	}
	res.Pass = (!mode.needsPrecision() || res.Aligned == len(calls)) && (!mode.needsRecall() || requiredAligned == res.Required)
	if !res.Pass {
		if mode.ordered() {
			res.Divergence = m.orderedDivergence(mode, pairs)
		} else {
			res.Divergence = m.unorderedDivergence(mode, pairs)
		}
	}
	return res
}
