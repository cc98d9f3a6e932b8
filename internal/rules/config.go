// Package rules compiles assertion cases (seed 000 steps, selected by a CEL condition) and
// evaluates them on a trace's delegation DAG. It knows nothing of buffering or exporters.
package rules

import (
	"errors"
	"fmt"
	"strings"

	"github.com/otelcol-handoff/otelcol-handoff/internal/rules/check"
	"github.com/otelcol-handoff/otelcol-handoff/internal/rules/expect"
	"github.com/otelcol-handoff/otelcol-handoff/internal/rules/steps"
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

// validateCases checks the cases (with the defaults applied) without compiling their CEL
// (Compile does both).
func validateCases(cases []CaseConfig, defaults TestFields, named map[string]string) error {
	errs := expect.ValidateTestFields("defaults", defaults)
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
		fields, _ := c.TestFields.WithDefaults(defaults)
		if len(c.Steps) == 0 && fields.Empty() {
			errs = append(errs, fmt.Errorf("%s.steps: at least one step or test-case assertion is required "+
				"(steps, expected_result, expected_tool_calls, expected_tool_call_order, expected_no_tool_calls, expected_child_agents)", where))
		}
		// Only the case's own fields: inherited ones were checked once, at defaults.
		errs = append(errs, expect.ValidateTestFields(where, c.TestFields)...)
		stepIDs := map[string]string{}
		for _, id := range fields.StepIDs("") {
			stepIDs[id] = "a test-case field's id"
		}
		errs = append(errs, validateSteps(where, c.Steps, stepIDs, named)...)
	}
	return errors.Join(errs...)
}

// validateSteps checks a case's steps: each one's keys, unique ids, and one topology
// source per case.
func validateSteps(where string, list []StepConfig, stepIDs map[string]string, named map[string]string) []error {
	var errs []error
	sawTopology := false
	sources := map[string]bool{}
	files := map[string]bool{}
	for _, s := range list {
		if t, ok := s.Kind.(*steps.TopologyStep); ok && t.SpansFile() != "" {
			files[t.SpansFile()] = true
		}
	}
	for j, s := range list {
		at := fmt.Sprintf("%s.steps[%d]", where, j)
		// Every id a result is reported under, with the step's own: a rubric step's id.Axis
		// ids share a namespace (and metric series) with the other steps' names.
		id := s.ID(j)
		ids := []string{id}
		if r, ok := s.Kind.(check.ResultIDer); ok {
			ids = append(ids, r.ResultIDs(id)...)
		}
		for _, rid := range ids {
			if owner, dup := stepIDs[rid]; dup {
				if rid == id {
					errs = append(errs, fmt.Errorf("%s.name: duplicate step name %q (already %s)", at, rid, owner))
				} else {
					errs = append(errs, fmt.Errorf("%s.name: the id %q of the step's %s result is already %s", at, rid, strings.TrimPrefix(rid, id+"."), owner))
				}
				break
			}
		}
		for _, rid := range ids {
			if _, dup := stepIDs[rid]; !dup {
				stepIDs[rid] = idOwner(j, id, rid)
			}
		}
		errs = append(errs, s.validate(at, sawTopology, named)...)
		t, ok := s.Kind.(*steps.TopologyStep)
		if !ok {
			continue
		}
		sawTopology = true
		src := t.Source
		if src == "" {
			src = SourceLive
		}
		if sources[src] = true; len(sources) > 1 {
			errs = append(errs, fmt.Errorf("%s.source: a case reads either recorded spans (FILE) or the live traces (LIVE), not both; split it into two cases", at))
		}
		if t.Source == SourceFile && len(files) > 1 {
			errs = append(errs, fmt.Errorf("%s.otelSpansFile: every ASSERT_AGENT_TOPOLOGY step of a case reads the same file", at))
		}
	}
	return errs
}

// idOwner names, in a duplicate-id error, what has the id rid of steps[j] (whose id is id).
func idOwner(j int, id, rid string) string {
	if rid == id {
		return fmt.Sprintf("steps[%d]'s id", j)
	}
	return fmt.Sprintf("the id of steps[%d]'s %s result", j, strings.TrimPrefix(rid, id+"."))
}

// SpansFile is the file a case's topology reads (source FILE), or "" for a live case.
func (c CaseConfig) SpansFile() string {
	for _, s := range c.Steps {
		if t, ok := s.Kind.(*steps.TopologyStep); ok && t.SpansFile() != "" {
			return t.SpansFile()
		}
	}
	return ""
}

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
			jp, ok := s.Kind.(check.JudgeGraded)
			if !ok {
				continue
			}
			if field, problem, needs := jp.JudgeProblem(s.ID(j)); needs {
				errs = append(errs, fmt.Errorf("%s.steps[%d].%s: %s", where, j, field, problem))
			}
		}
	}
	return errors.Join(errs...)
}
