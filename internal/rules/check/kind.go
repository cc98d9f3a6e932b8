package check

// Kind is the typed config of one kind of step.
type Kind interface {
	// Action is the step's action key (ASSERT_AGENT_TOPOLOGY, ...).
	Action() string
	// ValidateKeys checks the step's own keys; each error starts with the key it is about
	// ("maxDepth: must not be negative, got -1"). The case adds the step's path. Not named
	// Validate: confmap.Validate would call it again, with a path of its own.
	ValidateKeys() error
	// Compile builds the step's evaluable form; errors start with the key, as ValidateKeys'.
	Compile(env Env) (Compiled, error)
}

// DAGReader is implemented by the kinds that read the DAG of an earlier
// ASSERT_AGENT_TOPOLOGY step of their case.
type DAGReader interface{ ReadsDAG() }

// Compiled is a step ready to run on traces.
type Compiled interface {
	// Results lists the Results the step produces under its id, in order (one, or one per
	// rubric): their step ids and actions, for metrics and for the not-reached errors.
	Results(id string) []Ref
	// Evaluate appends the step's results on the trace to run.
	Evaluate(run *Run, id string)
}

// ResultIDer is implemented by the kinds whose results are not under the step's id alone
// (EXPECT_HANDOFF_RUBRICS: one per rubric, id.Axis): the ids they produce, so that a step
// name cannot share one (and its metric series) with them.
type ResultIDer interface{ ResultIDs(id string) []string }

// ForeignKeyer is implemented by kinds that word their refusal of other kinds' keys.
type ForeignKeyer interface{ ForeignKey(key string) string }

// Env is what a step's compilation needs: the expression environments and the cost
// limit of one evaluation.
type Env struct {
	Exprs     Exprs
	CostLimit uint64
}

// StepName is an agent or tool a step names: the key (with its index for lists) and the
// name. Tools that check names against the trace (handoffcheck validate) read them.
type StepName struct {
	Key  string
	Tool bool // a tool name; else an agent name
	Name string
}

// Namer is implemented by the kinds that name agents or tools.
type Namer interface{ Names() []StepName }

// AgentNames lists the non-empty agent keys of a step.
func AgentNames(keys ...string) []StepName {
	var out []StepName
	for i := 0; i+1 < len(keys); i += 2 {
		if keys[i+1] != "" {
			out = append(out, StepName{Key: keys[i], Name: keys[i+1]})
		}
	}
	return out
}

// NamedRubricUser is implemented by kinds that name a rubric of the config's rubrics:.
type NamedRubricUser interface {
	ValidateNamed(named map[string]string) error
}

// Step actions (seed 000).
const (
	ActionTopology   = "ASSERT_AGENT_TOPOLOGY"
	ActionDelegation = "EXPECT_DELEGATION_TO"
	ActionBudget     = "EXPECT_AGENT_BUDGET"
	ActionContext    = "EXPECT_HANDOFF_CONTEXT"
	// ActionRubrics grades every matching handoff on the seed-004 rubrics (step_rubrics.go).
	ActionRubrics = "EXPECT_HANDOFF_RUBRICS"
	// ActionAgentTools limits the tools an agent may call (step_agent_tools.go).
	ActionAgentTools = "EXPECT_AGENT_TOOLS"
	// ActionTrajectory matches an agent's tool calls or handoffs against a reference
	// (step_trajectory.go).
	ActionTrajectory = "EXPECT_TRAJECTORY"
)

// Topology sources.
const (
	SourceLive = "LIVE"
	SourceFile = "FILE"
)

// JudgeFix is how to resolve a judge-graded step without a judge.
const JudgeFix = "configure judge (judge.endpoint and judge.model), or keep only the deterministic checks with deterministicOnly: true on the step"

// JudgeGraded is implemented by the kinds a judge grades.
type JudgeGraded interface {
	// JudgeProblem is, without a judge, the key to name and the problem after the step's
	// path (needs false: the step does not need the judge).
	JudgeProblem(id string) (field, problem string, needs bool)
}

// Ref is one assertion a compiled step or field produces: its step id, its action and
// what it expects.
type Ref struct{ ID, Action, Expected string }
