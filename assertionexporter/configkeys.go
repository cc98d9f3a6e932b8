package assertionexporter

import (
	"errors"
	"fmt"
	"maps"
	"math"
	"reflect"
	"slices"
	"strings"
	"time"

	"github.com/go-viper/mapstructure/v2"
	"go.opentelemetry.io/collector/confmap"

	"github.com/otelcol-handoff/otelcol-handoff/internal/confcheck"
	"github.com/otelcol-handoff/otelcol-handoff/internal/rules"
	"github.com/otelcol-handoff/otelcol-handoff/internal/rules/expect"
)

var _ confmap.Unmarshaler = (*Config)(nil)

// Unmarshal decodes the exporter's config. Before decoding, it walks the user's map against
// the config's keys (the mapstructure tags; the seed tags of seed-000 steps), so an unknown
// key is reported by its path with the nearest valid key (`cases[2].steps[1].maxInvocation:
// unknown key, did you mean maxInvocations?`) and a value of the wrong type in words
// (`must be a whole number, got "lots"`), every problem at once, instead of confmap's
// `'cases[0]' has invalid keys: x` and Go type names.
func (c *Config) Unmarshal(conf *confmap.Conf) error {
	var kc keyChecker
	kc.value("", conf.ToStringMap(), reflect.TypeFor[Config]())
	if len(kc.errs) > 0 {
		return errors.Join(kc.errs...)
	}
	if err := conf.Unmarshal(c); err != nil {
		return plainDecodeError(err)
	}
	return nil
}

// plainDecodeError rewords what the walk lets through to the decoder (a number where a
// string is wanted cannot be told apart from an ${env:...} value before decoding): the
// field's path, nested decoders' paths joined, with the expected kind in words.
func plainDecodeError(err error) error {
	if path, ute := unconvertible(err, ""); ute != nil {
		return fmt.Errorf("%s: must be %s, got %s", path, kindWords(ute.Expected.Type()), confcheck.Describe(ute.Value))
	}
	return err
}

// unconvertible finds the first type mismatch in err's tree and the path to it.
func unconvertible(err error, path string) (string, *mapstructure.UnconvertibleTypeError) {
	switch e := err.(type) {
	case *mapstructure.UnconvertibleTypeError:
		return path, e
	case *mapstructure.DecodeError:
		if e.Name() != "" {
			path = confcheck.Join(path, e.Name())
		}
		return unconvertible(e.Unwrap(), path)
	case interface{ Unwrap() []error }:
		for _, inner := range e.Unwrap() {
			if p, ute := unconvertible(inner, path); ute != nil {
				return p, ute
			}
		}
	case interface{ Unwrap() error }:
		return unconvertible(e.Unwrap(), path)
	}
	return "", nil
}

// keyChecker collects the problems of one walk.
type keyChecker struct {
	errs []error
}

var (
	durationType  = reflect.TypeFor[time.Duration]()
	toolCallType  = reflect.TypeFor[expect.ToolCallSpec]()
	childrenType  = reflect.TypeFor[expect.ChildAgents]()
	childSpecType = reflect.TypeFor[expect.ChildAgentSpec]()
	stepType      = reflect.TypeFor[rules.StepConfig]()
)

// stepFields are the keys a seed-000 step may set, whatever its action (each kind's typed
// config; validation refuses a key of another kind with the step's own message).
var stepFields = func() map[string]reflect.Type {
	out := map[string]reflect.Type{"action": reflect.TypeFor[string](), "name": reflect.TypeFor[string]()}
	for _, action := range rules.StepActions() {
		kind, _ := rules.NewStepKind(action)
		for n, ft := range confcheck.Fields(reflect.TypeOf(kind).Elem()) {
			out[n] = ft
		}
	}
	return out
}()

func (k *keyChecker) bad(path, format string, args ...any) {
	k.errs = append(k.errs, fmt.Errorf("%s: %s", path, fmt.Sprintf(format, args...)))
}

// value checks v (a value of the user's map, as YAML parsed it) against the type t that
// decodes it. nil is accepted everywhere: it leaves the default.
func (k *keyChecker) value(path string, v any, t reflect.Type) {
	if v == nil {
		return
	}
	for t.Kind() == reflect.Pointer {
		t = t.Elem()
	}
	switch t {
	case durationType:
		k.duration(path, v)
		return
	case toolCallType:
		k.toolCall(path, v)
		return
	case childrenType:
		k.children(path, v)
		return
	case stepType:
		m, ok := v.(map[string]any)
		if !ok {
			k.bad(path, "must be a map of keys (%s), got %s", strings.Join(slices.Sorted(maps.Keys(stepFields)), ", "), confcheck.Describe(v))
			return
		}
		k.keys(path, m, stepFields)
		return
	}
	switch t.Kind() {
	case reflect.Struct:
		m, ok := v.(map[string]any)
		if !ok {
			k.bad(path, "must be a map of keys (%s), got %s", strings.Join(slices.Sorted(maps.Keys(confcheck.Fields(t))), ", "), confcheck.Describe(v))
			return
		}
		k.keys(path, m, confcheck.Fields(t))
	case reflect.Slice, reflect.Array:
		if _, ok := v.(string); ok && t.Elem().Kind() == reflect.String {
			return // "a,b" is the list [a, b]
		}
		list, ok := v.([]any)
		if !ok {
			k.bad(path, "must be a list, got %s", confcheck.Describe(v))
			return
		}
		for i, item := range list {
			k.value(fmt.Sprintf("%s[%d]", path, i), item, t.Elem())
		}
	case reflect.Map:
		m, ok := v.(map[string]any)
		if !ok {
			k.bad(path, "must be a map, got %s", confcheck.Describe(v))
			return
		}
		for _, key := range slices.Sorted(maps.Keys(m)) {
			k.value(confcheck.Join(path, key), m[key], t.Elem())
		}
	case reflect.String:
		switch v.(type) {
		case string:
		case bool, int, int64, uint64, float64:
			// May come from ${env:...} (whose text a string field keeps): the decoder decides.
		default:
			k.bad(path, "must be a string, got %s", confcheck.Describe(v))
		}
	case reflect.Bool:
		if _, ok := v.(bool); !ok {
			k.bad(path, "must be true or false, got %s", confcheck.Describe(v))
		}
	case reflect.Int, reflect.Int8, reflect.Int16, reflect.Int32, reflect.Int64:
		if _, ok := wholeNumber(v); !ok {
			k.bad(path, "must be a whole number, got %s", confcheck.Describe(v))
		}
	case reflect.Uint, reflect.Uint8, reflect.Uint16, reflect.Uint32, reflect.Uint64:
		if n, ok := wholeNumber(v); !ok || n < 0 {
			k.bad(path, "must be a whole number, at least 0, got %s", confcheck.Describe(v))
		}
	case reflect.Float32, reflect.Float64:
		switch v.(type) {
		case int, int64, uint64, float64:
		default:
			k.bad(path, "must be a number, got %s", confcheck.Describe(v))
		}
	}
}

// keys checks a map against a struct's keys: unknown keys with the nearest valid one.
func (k *keyChecker) keys(path string, m map[string]any, fields map[string]reflect.Type) {
	for _, key := range slices.Sorted(maps.Keys(m)) {
		ft, ok := fields[key]
		if !ok {
			k.errs = append(k.errs, confcheck.UnknownKey(confcheck.Join(path, key), slices.Sorted(maps.Keys(fields))))
			continue
		}
		k.value(confcheck.Join(path, key), m[key], ft)
	}
}

// duration: a Go duration string (5s, 250ms); a bare 0 is zero.
func (k *keyChecker) duration(path string, v any) {
	if err := confcheck.Duration(path, v); err != nil {
		k.errs = append(k.errs, err)
	}
}

// toolCall: an expected_tool_calls item is a tool name or a one-key map tool: expression.
func (k *keyChecker) toolCall(path string, v any) {
	switch v := v.(type) {
	case string:
	case map[string]any:
		if len(v) != 1 {
			k.bad(path, "an expected_tool_calls item is a tool name or a one-key map `tool: expression`, got keys %s",
				strings.Join(slices.Sorted(maps.Keys(v)), ", "))
			return
		}
		for tool, expr := range v {
			switch expr.(type) {
			case nil, string, bool, int, int64, uint64, float64:
			default:
				k.bad(confcheck.Join(path, tool), "the expression must be a string, got %s", confcheck.Describe(expr))
			}
		}
	default:
		k.bad(path, "must be a tool name or a one-key map `tool: expression`, got %s", confcheck.Describe(v))
	}
}

// children: expected_child_agents is keyed by agent name; each entry is a child spec.
func (k *keyChecker) children(path string, v any) {
	m, ok := v.(map[string]any)
	if !ok {
		k.bad(path, "must be a map from agent name to assertions, got %s", confcheck.Describe(v))
		return
	}
	for _, name := range slices.Sorted(maps.Keys(m)) {
		spec := m[name]
		if _, ok := spec.(map[string]any); !ok && spec != nil {
			k.bad(confcheck.Join(path, name), "must be a map of assertions (%s), got %s",
				strings.Join(slices.Sorted(maps.Keys(confcheck.Fields(childSpecType))), ", "), confcheck.Describe(spec))
			continue
		}
		k.value(confcheck.Join(path, name), spec, childSpecType)
	}
}

// wholeNumber is v as an integer when it is one (YAML gives int; 3.0 counts).
func wholeNumber(v any) (float64, bool) {
	switch n := v.(type) {
	case int:
		return float64(n), true
	case int64:
		return float64(n), true
	case uint64:
		return float64(n), true
	case float64:
		return n, n == math.Trunc(n) && !math.IsInf(n, 0)
	}
	return 0, false
}

// kindWords names what a Go type takes, in the words of the walk's messages.
func kindWords(t reflect.Type) string {
	switch t.Kind() {
	case reflect.String:
		return "a string"
	case reflect.Bool:
		return "true or false"
	case reflect.Int, reflect.Int8, reflect.Int16, reflect.Int32, reflect.Int64,
		reflect.Uint, reflect.Uint8, reflect.Uint16, reflect.Uint32, reflect.Uint64:
		return "a whole number"
	case reflect.Float32, reflect.Float64:
		return "a number"
	case reflect.Slice, reflect.Array:
		return "a list"
	case reflect.Map, reflect.Struct:
		return "a map"
	}
	return "a value of another kind"
}
