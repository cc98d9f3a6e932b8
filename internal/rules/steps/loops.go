package steps

import (
	"fmt"

	"github.com/otelcol-handoff/otelcol-handoff/internal/agentgraph"
	"github.com/otelcol-handoff/otelcol-handoff/internal/rules/check"
	"github.com/otelcol-handoff/otelcol-handoff/internal/textsafe"
)

// Loop and ping-pong rules of ASSERT_AGENT_TOPOLOGY: maxHandoffs (per trace),
// maxPairRepeats (handoffs of one sender → receiver pair) and maxCycleLength (agents in
// one loop). The model counts (agentgraph.Graph.Loops); the messages name the loop and how
// often it turned.

// validateLoops checks the loop keys of a topology step.
func (s *TopologyStep) validateLoops(errs *check.Errors) {
	for _, f := range []struct {
		field string
		v     *int
		min   int
	}{{"maxHandoffs", s.MaxHandoffs, 0}, {"maxPairRepeats", s.MaxPairRepeats, 1}, {"maxCycleLength", s.MaxCycleLength, 1}} {
		if f.v != nil && *f.v < f.min {
			errs.Add(f.field, "must be at least %d, got %d", f.min, *f.v)
		}
	}
	if s.MaxCycleLength != nil && !s.AllowCycles && len(s.AllowedCycles) == 0 {
		errs.Add("maxCycleLength", "bounds the loops allowCycles or allowedCycles let through; "+
			"without either every cycle fails already (set allowCycles: true to allow loops up to this length)")
	}
}

// loopExpected is what the loop keys expect, for Result.Expected.
func (s *TopologyStep) loopExpected() []string {
	var want []string
	if s.MaxHandoffs != nil {
		want = append(want, fmt.Sprintf("handoffs <= %d", *s.MaxHandoffs))
	}
	if s.MaxPairRepeats != nil {
		want = append(want, fmt.Sprintf("handoffs per sender -> receiver pair <= %d", *s.MaxPairRepeats))
	}
	if s.MaxCycleLength != nil {
		want = append(want, fmt.Sprintf("agents per loop <= %d", *s.MaxCycleLength))
	}
	return want
}

// loopProblems checks the loop keys on the trace.
func (s *TopologyStep) loopProblems(g *agentgraph.Graph) []string {
	if s.MaxHandoffs == nil && s.MaxPairRepeats == nil && s.MaxCycleLength == nil {
		return nil
	}
	f := g.Loops()
	var problems []string
	if s.MaxHandoffs != nil && f.Handoffs > *s.MaxHandoffs {
		msg := fmt.Sprintf("%s, over maxHandoffs %d", textsafe.Plural(f.Handoffs, "handoff", "handoffs"), *s.MaxHandoffs)
		if l := busiestLoop(f.Loops); l != nil {
			msg += " (" + describeLoop(*l) + ")"
		}
		problems = append(problems, msg)
	}
	if s.MaxPairRepeats != nil {
		for _, p := range f.Pairs {
			if p.Count <= *s.MaxPairRepeats {
				break // most first
			}
			msg := fmt.Sprintf("%s -> %s handed off %d times, over maxPairRepeats %d", p.From, p.To, p.Count, *s.MaxPairRepeats)
			if l := loopOf(f.Loops, p.From, p.To); l != nil {
				msg += " (" + describeLoop(*l) + ")"
			}
			problems = append(problems, msg)
		}
	}
	if s.MaxCycleLength != nil {
		for _, l := range f.Loops {
			if l.Length() > *s.MaxCycleLength {
				problems = append(problems, fmt.Sprintf("%s has %s, over maxCycleLength %d",
					describeLoop(l), textsafe.Plural(l.Length(), "agent", "agents"), *s.MaxCycleLength))
			}
		}
	}
	return check.CapList(problems)
}

// describeLoop names a loop and how often it turned: "loop writer -> critic -> writer
// turned 2 times (4 handoffs)".
func describeLoop(l agentgraph.Loop) string {
	return fmt.Sprintf("loop %s turned %s (%s)", l, textsafe.Plural(l.Turns, "time", "times"),
		textsafe.Plural(l.Handoffs, "handoff", "handoffs"))
}

// busiestLoop is the loop with the most handoffs (the first of them), nil when none.
func busiestLoop(loops []agentgraph.Loop) *agentgraph.Loop {
	var best *agentgraph.Loop
	for i := range loops {
		if best == nil || loops[i].Handoffs > best.Handoffs {
			best = &loops[i]
		}
	}
	return best
}

// loopOf is the loop both agents are in, nil when none.
func loopOf(loops []agentgraph.Loop, from, to string) *agentgraph.Loop {
	for i, l := range loops {
		in := map[string]bool{}
		for _, a := range l.Agents {
			in[a] = true
		}
		if in[from] && in[to] {
			return &loops[i]
		}
	}
	return nil
}
