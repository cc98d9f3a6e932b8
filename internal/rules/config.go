// Package rules compiles assertion cases (seed 000 steps, selected by a CEL condition) and
// evaluates them on a trace's delegation DAG. It knows nothing of buffering or exporters.
package rules

import (
	"errors"
	"fmt"
	"regexp"
	"sort"
	"strings"

	"github.com/go-viper/mapstructure/v2"
	"go.opentelemetry.io/collector/confmap"
)

// Step actions (seed 000).
const (
	ActionTopology   = "ASSERT_AGENT_TOPOLOGY"
	ActionDelegation = "EXPECT_DELEGATION_TO"
	ActionBudget     = "EXPECT_AGENT_BUDGET"
	ActionContext    = "EXPECT_HANDOFF_CONTEXT"
	// ActionRubrics grades every matching handoff on the seed-004 rubrics (rubrics.go).
	ActionRubrics = "EXPECT_HANDOFF_RUBRICS"
)

// Topology sources.
const (
	SourceLive = "LIVE"
	SourceFile = "FILE"
)

// CaseConfig is one assertion case: which traces it applies to, its seed-000 steps and its
// seed-001 test-case fields (asserted on the trace's root agent, one logical agent over all its runs).
type CaseConfig struct {
	// Name identifies the case in metrics, logs and reports (seed 001's test name).
	Name string `mapstructure:"name"`
	// When is a CEL condition over the trace (see README); empty = every trace that has at
	// least one agent.
	When string `mapstructure:"when"`
	// Steps are seed-000 steps, evaluated in order.
	Steps []StepConfig `mapstructure:"steps"`
	// TestFields are the seed-001 test-case fields, evaluated after the steps.
	TestFields `mapstructure:",squash"`

	_ struct{}
}

// StepConfig is one seed-000 step. Keys keep the seed's camelCase so specs paste verbatim;
// the collector's config rules want snake_case tags, so steps decode themselves (Unmarshal)
// from the "seed" tags, strictly: an unknown key is an error.
type StepConfig struct {
	Action string `mapstructure:"-" seed:"action"`
	// Name overrides the step's id (default ACTION#n, n counting from 1 in the case).
	Name string `mapstructure:"-" seed:"name"`

	// ASSERT_AGENT_TOPOLOGY
	Source        string `mapstructure:"-" seed:"source"`
	OtelSpansFile string `mapstructure:"-" seed:"otelSpansFile"`
	MaxDepth      *int   `mapstructure:"-" seed:"maxDepth"`
	AllowCycles   bool   `mapstructure:"-" seed:"allowCycles"`
	// AllowedCycles lists intentional loops, each as the set of agent names in it
	// (e.g. [planner, critic] for a planner-critic loop); other cycles still fail.
	AllowedCycles [][]string `mapstructure:"-" seed:"allowedCycles"`
	// Loop rules (loops.go): handoffs per trace, per sender -> receiver pair, agents per loop.
	MaxHandoffs    *int `mapstructure:"-" seed:"maxHandoffs"`
	MaxPairRepeats *int `mapstructure:"-" seed:"maxPairRepeats"`
	MaxCycleLength *int `mapstructure:"-" seed:"maxCycleLength"`

	// EXPECT_TRAJECTORY (trajectory.go): tools or agents, agent or subtree, the mode and
	// the reference steps.
	Of        string `mapstructure:"-" seed:"of"`
	Scope     string `mapstructure:"-" seed:"scope"`
	Mode      string `mapstructure:"-" seed:"mode"`
	Reference []any  `mapstructure:"-" seed:"reference"`

	// EXPECT_DELEGATION_TO, EXPECT_AGENT_BUDGET, EXPECT_HANDOFF_CONTEXT
	AgentName      string `mapstructure:"-" seed:"agentName"`
	FromAgent      string `mapstructure:"-" seed:"fromAgent"`
	ToAgent        string `mapstructure:"-" seed:"toAgent"`
	MinInvocations *int   `mapstructure:"-" seed:"minInvocations"`
	MaxInvocations *int   `mapstructure:"-" seed:"maxInvocations"`

	// EXPECT_AGENT_BUDGET
	MaxTokens     *int64   `mapstructure:"-" seed:"maxTokens"`
	MaxDurationMs *float64 `mapstructure:"-" seed:"maxDurationMs"`
	MaxToolCalls  *int     `mapstructure:"-" seed:"maxToolCalls"`
	// MaxCostUsd bounds the subtree's cost in USD (cost.go).
	MaxCostUsd *float64 `mapstructure:"-" seed:"maxCostUsd"`

	// EXPECT_HANDOFF_CONTEXT (graded by a judge; see Evaluate)
	RubricType    string `mapstructure:"-" seed:"rubricType"`
	InlineRubric  string `mapstructure:"-" seed:"inlineRubric"`
	JudgeRubricID string `mapstructure:"-" seed:"judgeRubricId"`
	// Deterministic checks of the handoff content (no judge needed): regular expressions that
	// must match / must not match the handoff's scope prompt, reason or context, and a CEL
	// expression over the handoff's fields (see handoffcontext.go).
	RequiredPatterns  []string `mapstructure:"-" seed:"requiredPatterns"`
	ForbiddenPatterns []string `mapstructure:"-" seed:"forbiddenPatterns"`
	ContextExpression string   `mapstructure:"-" seed:"contextExpression"`

	// EXPECT_HANDOFF_RUBRICS (fromAgent and toAgent are optional filters there): the
	// rubrics to grade (default: all four of seed 004), tools never counted as out of scope
	// (framework plumbing beyond the built-in list), and the errors taken as transient
	// (regular expressions over the error's type and message; default: DefaultTransient).
	Rubrics         []string `mapstructure:"-" seed:"rubrics"`
	IgnoredTools    []string `mapstructure:"-" seed:"ignoredTools"`
	TransientErrors []string `mapstructure:"-" seed:"transientErrors"`

	// DeterministicOnly (EXPECT_HANDOFF_CONTEXT, EXPECT_HANDOFF_RUBRICS) runs only the
	// step's deterministic checks: the judge is never asked, configured or not. Without a
	// judge, a judge-graded step must set it (CheckJudged): a rubric is never passed or
	// skipped silently because nobody graded it.
	DeterministicOnly bool `mapstructure:"-" seed:"deterministicOnly"`

	_ struct{}
}

// Unmarshal decodes a step from its seed-000 keys.
func (s *StepConfig) Unmarshal(conf *confmap.Conf) error {
	dec, err := mapstructure.NewDecoder(&mapstructure.DecoderConfig{
		TagName: "seed", ErrorUnused: true, Result: s,
	})
	if err != nil {
		return err
	}
	return dec.Decode(conf.ToStringMap())
}

// ID is the step's name in metrics, logs and reports.
func (s StepConfig) ID(index int) string {
	if s.Name != "" {
		return s.Name
	}
	return fmt.Sprintf("%s#%d", s.Action, index+1)
}

// validateCases checks the cases (with the defaults applied) without compiling their CEL
// (Compile does both).
func validateCases(cases []CaseConfig, defaults TestFields, named map[string]string) error {
	errs := validateTestFields("defaults", defaults)
	names := map[string]bool{}
	for i, c := range cases {
		where := fmt.Sprintf("cases[%d]", i)
		if c.Name == "" {
			errs = append(errs, fmt.Errorf("%s.name: must not be empty", where))
		} else if names[c.Name] {
			errs = append(errs, fmt.Errorf("%s.name: duplicate case name %q", where, c.Name))
		} else {
			where = fmt.Sprintf("cases[%d] (%s)", i, c.Name)
		}
		names[c.Name] = true
		fields, _ := c.TestFields.withDefaults(defaults)
		if len(c.Steps) == 0 && fields.empty() {
			errs = append(errs, fmt.Errorf("%s.steps: at least one step or test-case assertion is required "+
				"(steps, expected_result, expected_tool_calls, expected_tool_call_order, expected_no_tool_calls, expected_child_agents)", where))
		}
		// Only the case's own fields: inherited ones were checked once, at defaults.
		errs = append(errs, validateTestFields(where, c.TestFields)...)
		stepIDs := map[string]bool{}
		for _, id := range fields.stepIDs("") {
			stepIDs[id] = true
		}
		sawTopology := false
		sources := map[string]bool{}
		for j, s := range c.Steps {
			at := fmt.Sprintf("%s.steps[%d]", where, j)
			if id := s.ID(j); stepIDs[id] {
				errs = append(errs, fmt.Errorf("%s.name: duplicate step name %q", at, id))
			} else {
				stepIDs[id] = true
			}
			errs = append(errs, validateStep(at, s, sawTopology, named)...)
			if s.Action == ActionTopology {
				sawTopology = true
				src := s.Source
				if src == "" {
					src = SourceLive
				}
				sources[src] = true
				if len(sources) > 1 {
					errs = append(errs, fmt.Errorf("%s.source: a case reads either recorded spans (FILE) or the live traces (LIVE), not both; split it into two cases", at))
				}
				if s.Source == SourceFile && len(c.Steps) > 0 && sawFileMismatch(c.Steps, s.OtelSpansFile) {
					errs = append(errs, fmt.Errorf("%s.otelSpansFile: every ASSERT_AGENT_TOPOLOGY step of a case reads the same file", at))
				}
			}
		}
	}
	return errors.Join(errs...)
}

func validateStep(at string, s StepConfig, sawTopology bool, named map[string]string) []error {
	var errs []error
	bad := func(field, format string, args ...any) {
		errs = append(errs, fmt.Errorf("%s.%s: %s", at, field, fmt.Sprintf(format, args...)))
	}
	nonNegative := func(field string, v *int) {
		if v != nil && *v < 0 {
			bad(field, "must not be negative, got %d", *v)
		}
	}
	switch s.Action {
	case ActionTopology:
		switch s.Source {
		case "", SourceLive:
		case SourceFile:
			if s.OtelSpansFile == "" {
				bad("otelSpansFile", "source FILE needs otelSpansFile, the span file to read")
			}
		default:
			bad("source", "must be LIVE or FILE, got %q", s.Source)
		}
		nonNegative("maxDepth", s.MaxDepth)
		errs = append(errs, validateLoops(at, s)...)
	case ActionDelegation, ActionBudget, ActionContext, ActionRubrics, ActionTrajectory:
		if !sawTopology {
			bad("action", "%s reads the DAG of an earlier ASSERT_AGENT_TOPOLOGY step; add one before it in this case", s.Action)
		}
	case "":
		bad("action", "must be set (one of %s, %s, %s, %s, %s, %s)", ActionTopology, ActionDelegation, ActionContext, ActionBudget, ActionRubrics, ActionTrajectory)
		return errs
	default:
		bad("action", "unknown action %q (want one of %s, %s, %s, %s, %s, %s)", s.Action, ActionTopology, ActionDelegation, ActionContext, ActionBudget, ActionRubrics, ActionTrajectory)
		return errs
	}
	errs = append(errs, misplacedStepKeys(at, s)...)
	switch s.Action {
	case ActionTrajectory:
		errs = append(errs, validateTrajectory(at, s)...)
	case ActionDelegation:
		if s.AgentName == "" {
			bad("agentName", "must name the agent delegated to")
		}
		nonNegative("minInvocations", s.MinInvocations)
		nonNegative("maxInvocations", s.MaxInvocations)
		if s.MaxInvocations != nil && *s.MaxInvocations < s.minInvocations() {
			bad("maxInvocations", "must be at least minInvocations (%d), got %d", s.minInvocations(), *s.MaxInvocations)
		}
	case ActionBudget:
		if s.AgentName == "" {
			bad("agentName", "must name the agent whose subtree is budgeted")
		}
		if s.MaxTokens == nil && s.MaxDurationMs == nil && s.MaxToolCalls == nil && s.MaxCostUsd == nil {
			bad("maxTokens", "set at least one of maxTokens, maxDurationMs, maxToolCalls, maxCostUsd")
		}
		validateCost(s, bad)
		if s.MaxTokens != nil && *s.MaxTokens < 0 {
			bad("maxTokens", "must not be negative, got %d", *s.MaxTokens)
		}
		if s.MaxDurationMs != nil && *s.MaxDurationMs < 0 {
			bad("maxDurationMs", "must not be negative, got %g", *s.MaxDurationMs)
		}
		nonNegative("maxToolCalls", s.MaxToolCalls)
	case ActionContext:
		if s.FromAgent == "" {
			bad("fromAgent", "must name the sending agent")
		}
		if s.ToAgent == "" {
			bad("toAgent", "must name the receiving agent")
		}
		if s.InlineRubric == "" && s.JudgeRubricID == "" && s.RubricType == "" && len(s.RequiredPatterns) == 0 &&
			len(s.ForbiddenPatterns) == 0 && s.ContextExpression == "" {
			bad("inlineRubric", "set a rubric (inlineRubric or judgeRubricId) or a deterministic check (requiredPatterns, forbiddenPatterns, contextExpression)")
		}
		if s.RubricType != "" {
			if _, ok := canonicalRubricType(s.RubricType); !ok {
				bad("rubricType", "unknown rubric type %q (want one of %s)", s.RubricType, strings.Join(RubricTypes(), ", "))
			}
		}
		if s.JudgeRubricID != "" {
			if _, ok := named[s.JudgeRubricID]; !ok {
				bad("judgeRubricId", "no rubric %q is defined under rubrics:%s", s.JudgeRubricID, knownNames(named))
			}
		}
		for i, p := range s.RequiredPatterns {
			if _, err := regexp.Compile(p); err != nil {
				bad(fmt.Sprintf("requiredPatterns[%d]", i), "%v", err)
			}
		}
		for i, p := range s.ForbiddenPatterns {
			if _, err := regexp.Compile(p); err != nil {
				bad(fmt.Sprintf("forbiddenPatterns[%d]", i), "%v", err)
			}
		}
		if s.InlineRubric != "" && s.JudgeRubricID != "" {
			bad("judgeRubricId", "set either inlineRubric or judgeRubricId, not both")
		}
	case ActionRubrics:
		seen := map[string]bool{}
		for i, name := range s.Rubrics {
			axis, ok := canonicalAxis(name)
			switch {
			case !ok:
				bad(fmt.Sprintf("rubrics[%d]", i), "unknown rubric %q (want one of %s)", name, strings.Join(Axes, ", "))
			case seen[axis]:
				bad(fmt.Sprintf("rubrics[%d]", i), "rubric %s is listed twice", axis)
			}
			seen[axis] = true
		}
		for i, p := range s.TransientErrors {
			if _, err := regexp.Compile(p); err != nil {
				bad(fmt.Sprintf("transientErrors[%d]", i), "%v", err)
			}
		}
		for _, f := range []struct {
			field string
			set   bool
		}{
			{"agentName", s.AgentName != ""},
			{"inlineRubric", s.InlineRubric != ""},
			{"judgeRubricId", s.JudgeRubricID != ""},
			{"rubricType", s.RubricType != ""},
		} {
			if f.set {
				bad(f.field, "does not apply to %s (its keys: fromAgent, toAgent, rubrics, ignoredTools, transientErrors)", ActionRubrics)
			}
		}
	}
	if s.DeterministicOnly {
		switch s.Action {
		case ActionContext:
			if len(s.RequiredPatterns) == 0 && len(s.ForbiddenPatterns) == 0 && s.ContextExpression == "" {
				bad("deterministicOnly", "leaves nothing to check: add requiredPatterns, forbiddenPatterns or contextExpression, or let the judge grade the rubric")
			}
		case ActionRubrics:
			for i, name := range s.Rubrics {
				if axis, ok := canonicalAxis(name); ok && !hasDeterministicPart(axis) {
					bad(fmt.Sprintf("rubrics[%d]", i), "%s is graded by the judge alone: remove it, or drop deterministicOnly and configure judge", axis)
				}
			}
		default:
			bad("deterministicOnly", "applies only to %s and %s", ActionContext, ActionRubrics)
		}
	}
	if s.Action != ActionRubrics {
		for _, f := range []struct {
			field string
			set   bool
		}{
			{"rubrics", len(s.Rubrics) > 0}, {"ignoredTools", len(s.IgnoredTools) > 0}, {"transientErrors", len(s.TransientErrors) > 0},
		} {
			if f.set {
				bad(f.field, "applies only to %s", ActionRubrics)
			}
		}
	}
	return errs
}

// knownNames lists the named rubrics for an error message.
func knownNames(named map[string]string) string {
	if len(named) == 0 {
		return " none is defined"
	}
	names := make([]string, 0, len(named))
	for n := range named {
		names = append(names, n)
	}
	sort.Strings(names)
	return " (defined: " + strings.Join(names, ", ") + ")"
}

// sawFileMismatch reports whether the case's FILE topology steps name different files.
func sawFileMismatch(steps []StepConfig, file string) bool {
	for _, s := range steps {
		if s.Action == ActionTopology && s.Source == SourceFile && s.OtelSpansFile != file {
			return true
		}
	}
	return false
}

// SpansFile is the file a case's topology reads (source FILE), or "" for a live case.
func (c CaseConfig) SpansFile() string {
	for _, s := range c.Steps {
		if s.Action == ActionTopology && s.Source == SourceFile {
			return s.OtelSpansFile
		}
	}
	return ""
}

func (s StepConfig) minInvocations() int {
	if s.MinInvocations == nil {
		return 1
	}
	return *s.MinInvocations
}

// judgeFix is how to resolve a judge-graded step without a judge.
const judgeFix = "configure judge (judge.endpoint and judge.model), or keep only the deterministic checks with deterministicOnly: true on the step"

// CheckJudged reports, for a config without a judge, every step the judge would grade:
// EXPECT_HANDOFF_CONTEXT with a rubric (rubricType, inlineRubric, judgeRubricId) and
// EXPECT_HANDOFF_RUBRICS (every rubric has a judge part), unless the step sets
// deterministicOnly. Without a judge such a step would end skipped, or pass on its
// deterministic part alone, in every trace: a start-up error instead, naming the fix.
func CheckJudged(cases []CaseConfig) error {
	var errs []error
	for i, c := range cases {
		where := fmt.Sprintf("cases[%d]", i)
		if c.Name != "" {
			where = fmt.Sprintf("cases[%d] (%s)", i, c.Name)
		}
		for j, s := range c.Steps {
			if s.DeterministicOnly {
				continue
			}
			at := fmt.Sprintf("%s.steps[%d]", where, j)
			switch s.Action {
			case ActionContext:
				var keys []string
				field := ""
				for _, k := range []struct{ key, value string }{
					{"rubricType", s.RubricType}, {"inlineRubric", s.InlineRubric}, {"judgeRubricId", s.JudgeRubricID},
				} {
					if k.value != "" {
						keys = append(keys, k.key)
						if field == "" {
							field = k.key
						}
					}
				}
				if len(keys) == 0 {
					continue
				}
				fix := judgeFix
				if len(s.RequiredPatterns) == 0 && len(s.ForbiddenPatterns) == 0 && s.ContextExpression == "" {
					fix = "configure judge (judge.endpoint and judge.model), or replace the rubric with deterministic checks " +
						"(requiredPatterns, forbiddenPatterns, contextExpression) and set deterministicOnly: true on the step"
				}
				errs = append(errs, fmt.Errorf("%s.%s: %s is graded by the judge (%s), but no judge is configured: %s",
					at, field, s.ID(j), strings.Join(keys, ", "), fix))
			case ActionRubrics:
				field := "action"
				if len(s.Rubrics) > 0 {
					field = "rubrics"
				}
				axes := stepAxes(s)
				var det []string
				for _, a := range axes {
					if hasDeterministicPart(a) {
						det = append(det, a)
					}
				}
				fix := judgeFix
				switch {
				case len(det) == 0:
					fix = "configure judge (judge.endpoint and judge.model): " + strings.Join(axes, ", ") + " has no deterministic part"
				case len(s.Rubrics) == 0:
					fix += fmt.Sprintf(" (its default rubrics are then %s: %s is graded by the judge alone)",
						strings.Join(stepAxes(StepConfig{DeterministicOnly: true}), ", "), AxisDispatch)
				case len(det) < len(axes):
					fix += fmt.Sprintf(" and rubrics: [%s] (%s is graded by the judge alone)", strings.Join(det, ", "), AxisDispatch)
				}
				errs = append(errs, fmt.Errorf("%s.%s: %s grades %s with the judge, but no judge is configured: %s",
					at, field, s.ID(j), strings.Join(axes, ", "), fix))
			}
		}
	}
	return errors.Join(errs...)
}

// hasDeterministicPart reports whether a handoff rubric has a part decided without the
// judge (DispatchCorrectness has none).
func hasDeterministicPart(axis string) bool { return axis != AxisDispatch }
