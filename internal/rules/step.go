package rules

import (
	"errors"
	"fmt"
	"reflect"
	"slices"
	"strings"

	"github.com/go-viper/mapstructure/v2"
	"go.opentelemetry.io/collector/confmap"

	"github.com/otelcol-handoff/otelcol-handoff/internal/agentgraph"
)

// A seed-000 step is one check kind behind StepKind, as tail_sampling's policies are: each
// kind has its typed config (its own keys, decoded from the step's seed keys), its own
// Validate, its compiled form and its evaluation in one file (step_*.go). A new kind is a
// new file and one line in stepKinds (docs/architecture.md).

// StepKind is the typed config of one kind of step.
type StepKind interface {
	// Action is the step's action key (ASSERT_AGENT_TOPOLOGY, ...).
	Action() string
	// Validate checks the step's own keys; each error starts with the key it is about
	// ("maxDepth: must not be negative, got -1"). The case adds the step's path.
	Validate() error
	// compile builds the step's evaluable form; errors start with the key, as Validate's.
	compile(env compileEnv) (compiledStep, error)
}

// readsDAG is implemented by the kinds that read the DAG of an earlier
// ASSERT_AGENT_TOPOLOGY step of their case.
type readsDAG interface{ readsDAG() }

// compiledStep is a step ready to run on traces.
type compiledStep interface {
	// results lists the results the step produces under its id, in order (one, or one per
	// rubric): their step ids and actions, for metrics and for the not-reached errors.
	results(id string) []stepRef
	// evaluate appends the step's results on the trace to run.
	evaluate(run *stepRun, id string)
}

// stepKinds makes the typed config of each action; the order is the one messages list.
var stepKinds = []struct {
	action string
	make   func() StepKind
}{
	{ActionTopology, func() StepKind { return &TopologyStep{} }},
	{ActionDelegation, func() StepKind { return &DelegationStep{} }},
	{ActionContext, func() StepKind { return &ContextStep{} }},
	{ActionBudget, func() StepKind { return &BudgetStep{} }},
	{ActionRubrics, func() StepKind { return &RubricsStep{} }},
	{ActionTrajectory, func() StepKind { return &TrajectoryStep{} }},
	{ActionAgentTools, func() StepKind { return &AgentToolsStep{} }},
}

// NewStepKind returns an empty typed config of action (false when no kind has it).
func NewStepKind(action string) (StepKind, bool) {
	for _, k := range stepKinds {
		if k.action == action {
			return k.make(), true
		}
	}
	return nil, false
}

// StepActions lists the step actions, in the order messages name them.
func StepActions() []string {
	out := make([]string, len(stepKinds))
	for i, k := range stepKinds {
		out[i] = k.action
	}
	return out
}

// StepConfig is one seed-000 step: its name and its typed config. Keys keep the seed's
// camelCase so specs paste verbatim; the collector's config rules want snake_case tags, so
// steps decode themselves (Unmarshal) from the "seed" tags of their kind, strictly.
type StepConfig struct {
	// Name overrides the step's id (default ACTION#n, n counting from 1 in the case).
	Name string `mapstructure:"-"`
	// Kind is the step's typed config, chosen by its action key.
	Kind StepKind `mapstructure:"-"`

	// action is the action key as written when no kind has it ("" or unknown).
	action string
	// foreign are keys of other kinds set on the step, in stepKeyOrder (validation
	// reports each).
	foreign []string
}

// Action is the step's action key.
func (s StepConfig) Action() string {
	if s.Kind != nil {
		return s.Kind.Action()
	}
	return s.action
}

// ID is the step's name in metrics, logs and reports.
func (s StepConfig) ID(index int) string {
	if s.Name != "" {
		return s.Name
	}
	return fmt.Sprintf("%s#%d", s.Action(), index+1)
}

// Unmarshal decodes a step: action and name, then the keys of the action's kind. A key no
// kind has is a decoding error; a key of another kind is reported by validation.
func (s *StepConfig) Unmarshal(conf *confmap.Conf) error {
	raw := conf.ToStringMap()
	var head struct {
		Action string `seed:"action"`
		Name   string `seed:"name"`
	}
	rest := map[string]any{}
	headKeys := map[string]any{}
	for k, v := range raw {
		if k == "action" || k == "name" {
			headKeys[k] = v
		} else {
			rest[k] = v
		}
	}
	if err := decodeSeed(headKeys, &head); err != nil {
		return err
	}
	s.Name, s.Kind, s.action, s.foreign = head.Name, nil, "", nil
	kind, ok := NewStepKind(head.Action)
	if !ok {
		s.action = head.Action
		// No kind to decode into: only keys no kind has are refused here.
		unknown := map[string]any{}
		for k, v := range rest {
			if !slices.Contains(stepKeyOrder, k) {
				unknown[k] = v
			}
		}
		return decodeSeed(unknown, &struct{}{})
	}
	own := seedKeys(kind)
	for _, k := range stepKeyOrder {
		if _, set := rest[k]; set && !slices.Contains(own, k) {
			s.foreign = append(s.foreign, k)
			delete(rest, k)
		}
	}
	if err := decodeSeed(rest, kind); err != nil {
		return err
	}
	s.Kind = kind
	return nil
}

func decodeSeed(m map[string]any, into any) error {
	dec, err := mapstructure.NewDecoder(&mapstructure.DecoderConfig{TagName: "seed", ErrorUnused: true, Result: into})
	if err != nil {
		return err
	}
	return dec.Decode(m)
}

// seedKeys lists the seed keys of a kind's config, in field order.
func seedKeys(kind StepKind) []string {
	t := reflect.TypeOf(kind).Elem()
	var out []string
	for i := range t.NumField() {
		if tag := t.Field(i).Tag.Get("seed"); tag != "" {
			out = append(out, tag)
		}
	}
	return out
}

// stepKeyOrder is every kind's keys (with action and name), in the order errors name them.
var stepKeyOrder = func() []string {
	out := []string{"action", "name"}
	for _, k := range stepKinds {
		for _, key := range seedKeys(k.make()) {
			if !slices.Contains(out, key) {
				out = append(out, key)
			}
		}
	}
	return out
}()

// keyOwners lists the actions whose kind has key.
func keyOwners(key string) []string {
	var out []string
	for _, k := range stepKinds {
		if slices.Contains(seedKeys(k.make()), key) {
			out = append(out, k.action)
		}
	}
	return out
}

// foreignKeyer is implemented by kinds that word their refusal of other kinds' keys.
type foreignKeyer interface{ foreignKey(key string) string }

// validate checks the step's action and, through its kind, its keys; at is its path.
func (s StepConfig) validate(at string, sawTopology bool, named map[string]string) []error {
	var errs []error
	bad := func(field, format string, args ...any) {
		errs = append(errs, fmt.Errorf("%s.%s: %s", at, field, fmt.Sprintf(format, args...)))
	}
	if s.Kind == nil {
		actions := strings.Join(StepActions(), ", ")
		if s.action == "" {
			bad("action", "must be set (one of %s)", actions)
		} else {
			bad("action", "unknown action %q (want one of %s)", s.action, actions)
		}
		return errs
	}
	if _, ok := s.Kind.(readsDAG); ok && !sawTopology {
		bad("action", "%s reads the DAG of an earlier ASSERT_AGENT_TOPOLOGY step; add one before it in this case", s.Action())
	}
	errs = append(errs, prefixed(at, s.Kind.Validate())...)
	if n, ok := s.Kind.(namedRubricUser); ok {
		errs = append(errs, prefixed(at, n.validateNamed(named))...)
	}
	for _, key := range s.foreign {
		if fk, ok := s.Kind.(foreignKeyer); ok {
			bad(key, "%s", fk.foreignKey(key))
			continue
		}
		owners := keyOwners(key)
		if len(owners) > 1 {
			bad(key, "applies only to %s and %s", strings.Join(owners[:len(owners)-1], ", "), owners[len(owners)-1])
		} else {
			bad(key, "applies only to %s", owners[0])
		}
	}
	return errs
}

// prefixed puts path at before each of err's errors (a Validate's, joined).
func prefixed(at string, err error) []error {
	if err == nil {
		return nil
	}
	list := []error{err}
	if j, ok := err.(interface{ Unwrap() []error }); ok {
		list = j.Unwrap()
	}
	out := make([]error, 0, len(list))
	for _, e := range list {
		out = append(out, fmt.Errorf("%s.%w", at, e))
	}
	return out
}

// fieldErrors collects a Validate's errors, each naming its key.
type fieldErrors []error

func (f *fieldErrors) add(field, format string, args ...any) {
	*f = append(*f, fmt.Errorf("%s: %s", field, fmt.Sprintf(format, args...)))
}

func (f *fieldErrors) nonNegative(field string, v *int) {
	if v != nil && *v < 0 {
		f.add(field, "must not be negative, got %d", *v)
	}
}

func (f fieldErrors) err() error { return errors.Join(f...) }

// compileEnv is what a step's compilation needs: the expression environments and the cost
// limit of one evaluation.
type compileEnv struct {
	envs      exprEnvs
	costLimit uint64
}

// stepRun is one case's steps running on one trace: what each step reads and where it
// puts its results.
type stepRun struct {
	base Result
	tc   *traceCache
	ev   *Evaluator
	// dag is the DAG of the case's most recent ASSERT_AGENT_TOPOLOGY step (nil before one).
	dag *agentgraph.Graph
	out *evalOut
}

// result starts a result of the step id.
func (run *stepRun) result(id, action string) Result {
	r := run.base
	r.Step, r.Action = id, action
	return r
}

// evalOut collects a trace's results in config order, and which of them a judge grading
// decides later (filled: the result the grading fills in).
type evalOut struct {
	results []Result
	pending []int
	filled  []*Result
}

func (o *evalOut) add(r ...Result) { o.results = append(o.results, r...) }

// addGraded adds r, decided as it is unless the judge grades it: filled is then the result
// the grading fills in.
func (o *evalOut) addGraded(r Result, filled *Result) {
	if filled != nil {
		o.pending = append(o.pending, len(o.results))
		o.filled = append(o.filled, filled)
	}
	o.results = append(o.results, r)
}

// truncate drops what was added after n results.
func (o *evalOut) truncate(n int) {
	o.results = o.results[:n]
	for len(o.pending) > 0 && o.pending[len(o.pending)-1] >= n {
		o.pending = o.pending[:len(o.pending)-1]
		o.filled = o.filled[:len(o.filled)-1]
	}
}

// StepName is an agent or tool a step names: the key (with its index for lists) and the
// name. Tools that check names against the trace (handoffcheck validate) read them.
type StepName struct {
	Key  string
	Tool bool // a tool name; else an agent name
	Name string
}

// namer is implemented by the kinds that name agents or tools.
type namer interface{ names() []StepName }

// Names lists the agents and tools the step names, in key order.
func (s StepConfig) Names() []StepName {
	if n, ok := s.Kind.(namer); ok {
		return n.names()
	}
	return nil
}

// agentNames lists the non-empty agent keys of a step.
func agentNames(keys ...string) []StepName {
	var out []StepName
	for i := 0; i+1 < len(keys); i += 2 {
		if keys[i+1] != "" {
			out = append(out, StepName{Key: keys[i], Name: keys[i+1]})
		}
	}
	return out
}
