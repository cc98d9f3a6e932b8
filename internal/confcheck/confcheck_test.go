package confcheck

import (
	"reflect"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
)

func TestDuration(t *testing.T) {
	for _, ok := range []any{nil, "5s", "250ms", "0", "-1s", 0, 0.0, uint64(0), 5 * time.Second} {
		require.NoError(t, Duration("d", ok), "%#v", ok)
	}
	for v, want := range map[any]string{
		10:         "d: must be a duration with a unit, such as 5s or 250ms, got 10",
		1.5:        "d: must be a duration with a unit, such as 5s or 250ms, got 1.5",
		uint64(15): "d: must be a duration with a unit, such as 5s or 250ms, got 15",
		"10":       `d: must be a duration such as 5s or 250ms, got "10"`,
		"soon":     `d: must be a duration such as 5s or 250ms, got "soon"`,
		true:       "d: must be a duration such as 5s or 250ms, got true",
	} {
		require.EqualError(t, Duration("d", v), want)
	}
	require.EqualError(t, Duration("d", []any{1}), "d: must be a duration such as 5s or 250ms, got a list")
}

func TestWholeNumber(t *testing.T) {
	for _, ok := range []any{nil, 0, 5, -3, 5.0, uint64(7)} {
		require.NoError(t, WholeNumber("n", ok), "%#v", ok)
	}
	for v, want := range map[any]string{
		"abc": `n: must be a whole number, got "abc"`,
		"5":   `n: must be a whole number, got "5"`,
		2.5:   "n: must be a whole number, got 2.5",
		true:  "n: must be a whole number, got true",
	} {
		require.EqualError(t, WholeNumber("n", v), want)
	}
}

type inner struct {
	Wait  time.Duration  `mapstructure:"wait"`
	Count int            `mapstructure:"count"`
	Ptr   *time.Duration `mapstructure:"ptr"`
}

type squashed struct {
	Grace time.Duration `mapstructure:"grace"`
}

type outer struct {
	Timeout time.Duration     `mapstructure:"timeout"`
	Inner   inner             `mapstructure:"inner"`
	List    []inner           `mapstructure:"list"`
	ByName  map[string]*inner `mapstructure:"by_name"`
	Squash  squashed          `mapstructure:",squash"`
	Skipped time.Duration     `mapstructure:"-"`
	_       struct{}
}

// TestDurations: every duration key is found, however deep, and reported by its path;
// everything else is left to the decoder.
func TestDurations(t *testing.T) {
	raw := map[string]any{
		"timeout": 10,
		"inner":   map[string]any{"wait": "1s", "count": 3, "ptr": 7},
		"list":    []any{map[string]any{"wait": "2s"}, map[string]any{"wait": 5}},
		"by_name": map[string]any{"a": map[string]any{"wait": 6}, "b": nil},
		"grace":   8,
		"Skipped": 9, "unknown": 10, "Timeout": 11,
	}
	err := Durations(raw, reflect.TypeFor[outer]())
	require.EqualError(t, err, "by_name.a.wait: must be a duration with a unit, such as 5s or 250ms, got 6\n"+
		"grace: must be a duration with a unit, such as 5s or 250ms, got 8\n"+
		"inner.ptr: must be a duration with a unit, such as 5s or 250ms, got 7\n"+
		"list[1].wait: must be a duration with a unit, such as 5s or 250ms, got 5\n"+
		"timeout: must be a duration with a unit, such as 5s or 250ms, got 10")

	require.NoError(t, Durations(map[string]any{"timeout": "5s", "inner": "not a map", "list": 3}, reflect.TypeFor[outer]()))
}

func TestKeysAndUnknownKey(t *testing.T) {
	keys := Keys(reflect.TypeFor[outer]())
	require.Equal(t, []string{"by_name", "grace", "inner", "list", "timeout"}, keys)
	require.EqualError(t, UnknownKey("timeuot", keys), "timeuot: unknown key, did you mean timeout?")
	require.EqualError(t, UnknownKey("a.By-Name", keys), "a.By-Name: unknown key, did you mean by_name?")
	require.EqualError(t, UnknownKey("zzz", keys), "zzz: unknown key (valid keys: by_name, grace, inner, list, timeout)")
}

func TestSuggest(t *testing.T) {
	names := []string{"maxDepth", "maxInvocations", "minInvocations", "maxTokens", "agentName"}
	for key, want := range map[string]string{
		"maxDepht": "maxDepth", "max_invocations": "maxInvocations", "MaxTokens": "maxTokens",
		"agent": "", "minInvocation": "minInvocations", "colour": "",
	} {
		require.Equal(t, want, Suggest(key, names), key)
	}
}
