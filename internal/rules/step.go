package rules

import (
	"fmt"
	"reflect"
	"slices"
	"strings"

	"github.com/go-viper/mapstructure/v2"
	"go.opentelemetry.io/collector/confmap"

	"github.com/otelcol-handoff/otelcol-handoff/internal/rules/check"
	"github.com/otelcol-handoff/otelcol-handoff/internal/rules/steps"
)

// A seed-000 step is one check kind behind check.Kind, as tail_sampling's policies are:
// each kind has its typed config (its own keys, decoded from the step's seed keys), its own
// ValidateKeys, its compiled form and its evaluation in one file of internal/rules/steps. A new
// kind is a new file there and one line in its registry (docs/architecture.md).

// NewStepKind returns an empty typed config of action (false when no kind has it).
func NewStepKind(action string) (check.Kind, bool) { return steps.New(action) }

// StepActions lists the step actions, in the order messages name them.
func StepActions() []string {
	kinds := steps.Kinds()
	out := make([]string, len(kinds))
	for i, k := range kinds {
		out[i] = k.Action()
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
	Kind check.Kind `mapstructure:"-"`

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
func seedKeys(kind check.Kind) []string {
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
	for _, k := range steps.Kinds() {
		for _, key := range seedKeys(k) {
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
	for _, k := range steps.Kinds() {
		if slices.Contains(seedKeys(k), key) {
			out = append(out, k.Action())
		}
	}
	return out
}

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
	if _, ok := s.Kind.(check.DAGReader); ok && !sawTopology {
		bad("action", "%s reads the DAG of an earlier ASSERT_AGENT_TOPOLOGY step; add one before it in this case", s.Action())
	}
	errs = append(errs, check.Prefixed(at, s.Kind.ValidateKeys())...)
	if n, ok := s.Kind.(check.NamedRubricUser); ok {
		errs = append(errs, check.Prefixed(at, n.ValidateNamed(named))...)
	}
	for _, key := range s.foreign {
		if fk, ok := s.Kind.(check.ForeignKeyer); ok {
			bad(key, "%s", fk.ForeignKey(key))
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

// Names lists the agents and tools the step names, in key order.
func (s StepConfig) Names() []check.StepName {
	if n, ok := s.Kind.(check.Namer); ok {
		return n.Names()
	}
	return nil
}
