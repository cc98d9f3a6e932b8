package rules

import (
	"fmt"
	"strings"
	"sync"

	"github.com/google/cel-go/cel"

	"github.com/otelcol-handoff/otelcol-handoff/internal/celexpr"
	"github.com/otelcol-handoff/otelcol-handoff/internal/trajectory"
)

// EXPECT_TRAJECTORY: the order of what an agent did, matched against a reference
// (internal/trajectory holds the matching; the model reads the sequence from the trace).

// ActionTrajectory matches an agent's tool calls or handoffs against a reference.
const ActionTrajectory = "EXPECT_TRAJECTORY"

// What a trajectory is of, and how far it reaches.
const (
	TrajectoryOfTools  = "tools"
	TrajectoryOfAgents = "agents"
	ScopeAgent         = "agent"
	ScopeSubtree       = "subtree"
)

// maxReferenceSteps bounds a reference (the alignment costs steps × calls).
const maxReferenceSteps = 256

// trajectoryStep is a compiled EXPECT_TRAJECTORY step.
type trajectoryStep struct {
	of      string
	subtree bool
	mode    trajectory.Mode
	ref     trajectory.Reference
	// params are the steps' params predicates, in Reference.Steps order (nil: none).
	params []*celexpr.Expr
}

// trajectoryEnv is the params predicates' environment: params (the call's arguments) and
// context, as expected_tool_calls sees them, without invocations.
var trajectoryEnv = sync.OnceValues(func() (*cel.Env, error) {
	return celexpr.NewEnv(contextVar, cel.Variable("params", cel.MapType(cel.StringType, cel.DynType)))
})

// parsedReference is a reference as written: its steps and their params texts.
type parsedReference struct {
	ref    trajectory.Reference
	params []string // per step, "" for none
	paths  []string // per step, where it is written (cases[0] (c).steps[1].reference[2])
}

// parseReference reads reference: a list of names, {tool|agent: name, params, optional}
// maps and {parallel: [...]} groups of those.
func parseReference(at string, raw []any, of string) (parsedReference, []error) {
	var out parsedReference
	var errs []error
	key := "tool"
	if of == TrajectoryOfAgents {
		key = "agent"
	}
	var step func(where string, v any) (trajectory.Step, string, bool)
	step = func(where string, v any) (trajectory.Step, string, bool) {
		switch x := v.(type) {
		case string:
			if strings.TrimSpace(x) == "" {
				errs = append(errs, fmt.Errorf("%s: a step name must not be empty", where))
				return trajectory.Step{}, "", false
			}
			return trajectory.Step{Name: x}, "", true
		case map[string]any:
			var s trajectory.Step
			var params string
			ok := true
			for k, val := range x {
				switch k {
				case key:
					name, isStr := val.(string)
					if !isStr || strings.TrimSpace(name) == "" {
						errs = append(errs, fmt.Errorf("%s.%s: must be a non-empty name", where, k))
						ok = false
					}
					s.Name = name
				case "params":
					p, isStr := val.(string)
					switch {
					case of == TrajectoryOfAgents:
						errs = append(errs, fmt.Errorf("%s.params: applies to of: tools (a handoff step is an agent name)", where))
						ok = false
					case !isStr || strings.TrimSpace(p) == "":
						errs = append(errs, fmt.Errorf("%s.params: must be a CEL expression over params.*", where))
						ok = false
					}
					params = p
				case "optional":
					b, isBool := val.(bool)
					if !isBool {
						errs = append(errs, fmt.Errorf("%s.optional: must be true or false", where))
						ok = false
					}
					s.Optional = b
				default:
					errs = append(errs, fmt.Errorf("%s.%s: unknown key (a step of of: %s has %s, params, optional)", where, k, of, key))
					ok = false
				}
			}
			if _, named := x[key]; !named && ok {
				errs = append(errs, fmt.Errorf("%s.%s: must name the step's %s", where, key, map[bool]string{true: "agent", false: "tool"}[of == TrajectoryOfAgents]))
				ok = false
			}
			if !ok {
				return trajectory.Step{}, "", false
			}
			s.Where = params
			return s, params, true
		}
		errs = append(errs, fmt.Errorf("%s: must be a name or a map with %s", where, key))
		return trajectory.Step{}, "", false
	}
	for i, item := range raw {
		where := fmt.Sprintf("%s.reference[%d]", at, i)
		if m, isMap := item.(map[string]any); isMap {
			if group, has := m["parallel"]; has {
				list, isList := group.([]any)
				if len(m) > 1 || !isList || len(list) == 0 {
					errs = append(errs, fmt.Errorf("%s.parallel: must be the only key, with a non-empty list of steps", where))
					continue
				}
				e := trajectory.Element{Parallel: true}
				for j, v := range list {
					if gm, nested := v.(map[string]any); nested && gm["parallel"] != nil {
						errs = append(errs, fmt.Errorf("%s.parallel[%d]: parallel groups do not nest", where, j))
						continue
					}
					path := fmt.Sprintf("%s.parallel[%d]", where, j)
					if s, p, ok := step(path, v); ok {
						e.Steps = append(e.Steps, s)
						out.params = append(out.params, p)
						out.paths = append(out.paths, path)
					}
				}
				out.ref = append(out.ref, e)
				continue
			}
		}
		if s, p, ok := step(where, item); ok {
			out.ref = append(out.ref, trajectory.Single(s))
			out.params = append(out.params, p)
			out.paths = append(out.paths, where)
		}
	}
	if len(raw) == 0 {
		errs = append(errs, fmt.Errorf("%s.reference: must list at least one step", at))
	} else if n := len(out.params); n > maxReferenceSteps {
		errs = append(errs, fmt.Errorf("%s.reference: %d steps, at most %d", at, n, maxReferenceSteps))
	}
	return out, errs
}

// validateTrajectory checks an EXPECT_TRAJECTORY step's keys (its CEL compiles in Compile).
func validateTrajectory(at string, s StepConfig) []error {
	var errs []error
	bad := func(field, format string, args ...any) {
		errs = append(errs, fmt.Errorf("%s.%s: %s", at, field, fmt.Sprintf(format, args...)))
	}
	switch s.Of {
	case "", TrajectoryOfTools, TrajectoryOfAgents:
	default:
		bad("of", "must be %s or %s, got %q", TrajectoryOfTools, TrajectoryOfAgents, s.Of)
	}
	if s.Mode == "" {
		bad("mode", "must be set (exact, in_order, any_order, subset, superset; or agentevals' strict, unordered, or ADK's EXACT, IN_ORDER, ANY_ORDER)")
	} else if _, err := trajectory.ParseMode(s.Mode); err != nil {
		bad("mode", "%v", err)
	}
	switch s.Scope {
	case "", ScopeAgent, ScopeSubtree:
		if s.Scope != "" && s.AgentName == "" && s.FromAgent == "" && s.ToAgent == "" {
			bad("scope", "applies to the runs of agentName or a handoff's receiver (fromAgent/toAgent); without them the trajectory is the whole trace's")
		}
	default:
		bad("scope", "must be %s or %s, got %q", ScopeAgent, ScopeSubtree, s.Scope)
	}
	if s.AgentName != "" && (s.FromAgent != "" || s.ToAgent != "") {
		field := "fromAgent"
		if s.FromAgent == "" {
			field = "toAgent"
		}
		bad(field, "set either agentName (that agent's runs) or fromAgent/toAgent (the receiver's run of a handoff), not both")
	}
	of := s.Of
	if of == "" {
		of = TrajectoryOfTools
	}
	_, refErrs := parseReference(at, s.Reference, of)
	return append(errs, refErrs...)
}

// misplacedStepKeys reports the EXPECT_TRAJECTORY and loop keys on a step they do not apply to.
func misplacedStepKeys(at string, s StepConfig) []error {
	var errs []error
	for _, f := range []struct {
		field, action string
		set           bool
	}{
		{"of", ActionTrajectory, s.Of != ""}, {"scope", ActionTrajectory, s.Scope != ""},
		{"mode", ActionTrajectory, s.Mode != ""}, {"reference", ActionTrajectory, s.Reference != nil},
		{"maxHandoffs", ActionTopology, s.MaxHandoffs != nil}, {"maxPairRepeats", ActionTopology, s.MaxPairRepeats != nil},
		{"maxCycleLength", ActionTopology, s.MaxCycleLength != nil},
	} {
		if f.set && s.Action != f.action {
			errs = append(errs, fmt.Errorf("%s.%s: applies only to %s", at, f.field, f.action))
		}
	}
	return errs
}

// compileTrajectories compiles the EXPECT_TRAJECTORY steps of a case (validated before).
func compileTrajectories(at string, steps []StepConfig, costLimit uint64) (map[int]*trajectoryStep, []error) {
	out := map[int]*trajectoryStep{}
	var errs []error
	for j, s := range steps {
		if s.Action != ActionTrajectory {
			continue
		}
		of := s.Of
		if of == "" {
			of = TrajectoryOfTools
		}
		mode, _ := trajectory.ParseMode(s.Mode)
		parsed, _ := parseReference(fmt.Sprintf("%s.steps[%d]", at, j), s.Reference, of)
		ts := &trajectoryStep{of: of, subtree: s.Scope == ScopeSubtree, mode: mode, ref: parsed.ref, params: make([]*celexpr.Expr, len(parsed.params))}
		for k, p := range parsed.params {
			if p == "" {
				continue
			}
			env, err := trajectoryEnv()
			if err == nil {
				ts.params[k], err = celexpr.Compile(env, p, costLimit, 0)
			}
			if err != nil {
				errs = append(errs, fmt.Errorf("%s.params: %w", parsed.paths[k], err))
			}
		}
		out[j] = ts
	}
	return out, errs
}

// ReferenceNames lists the names an EXPECT_TRAJECTORY step's reference holds, in order,
// each with where it is written below the step (".reference[1]",
// ".reference[2].parallel[0]"), and whether they are agent names (of: agents) rather than
// tool names; nil for another step or a reference that does not parse (Compile reports that).
func (s StepConfig) ReferenceNames() (names, paths []string, agents bool) {
	if s.Action != ActionTrajectory {
		return nil, nil, false
	}
	of := s.Of
	if of == "" {
		of = TrajectoryOfTools
	}
	parsed, errs := parseReference("", s.Reference, of)
	if len(errs) > 0 {
		return nil, nil, false
	}
	for _, st := range parsed.ref.Steps() {
		names = append(names, st.Name)
	}
	return names, parsed.paths, of == TrajectoryOfAgents
}
