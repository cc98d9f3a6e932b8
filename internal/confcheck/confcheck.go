// Package confcheck checks raw config values, as the YAML parser and the confmap resolver
// give them before decoding, for the checks the components share: durations that need a
// unit, whole numbers, unknown keys with the nearest valid one. Every error starts with the
// key's path (`shutdown_timeout: ...`, `cases[2].name: ...`), as assertionexporter's do.
package confcheck

import (
	"errors"
	"fmt"
	"maps"
	"math"
	"reflect"
	"slices"
	"strings"
	"time"
)

var durationType = reflect.TypeFor[time.Duration]()

// Duration checks the raw value of a time.Duration key: a Go duration string (5s, 250ms)
// or a bare 0. A bare non-zero number is refused because confmap would decode it as
// nanoseconds (`shutdown_timeout: 10` is 10ns). nil (the key left empty) is accepted.
func Duration(path string, v any) error {
	if v == nil {
		return nil
	}
	if s, ok := v.(string); ok {
		if _, err := time.ParseDuration(s); err != nil {
			return fmt.Errorf("%s: must be a duration such as 5s or 250ms, got %q", path, s)
		}
		return nil
	}
	if reflect.TypeOf(v) == durationType {
		return nil // a Go caller's time.Duration, not a YAML number
	}
	if n, ok := number(v); ok {
		if n != 0 {
			return fmt.Errorf("%s: must be a duration with a unit, such as 5s or 250ms, got %v", path, v)
		}
		return nil
	}
	return fmt.Errorf("%s: must be a duration such as 5s or 250ms, got %s", path, Describe(v))
}

// WholeNumber checks the raw value of an integer key: the decoder would truncate 2.5 to 2
// and word a string in Go type names. nil is accepted.
func WholeNumber(path string, v any) error {
	if v == nil {
		return nil
	}
	if n, ok := number(v); ok && n == math.Trunc(n) && !math.IsInf(n, 0) {
		return nil
	}
	return fmt.Errorf("%s: must be a whole number, got %s", path, Describe(v))
}

// Durations checks, with Duration, every time.Duration key of the struct type t present in
// raw, in nested sections, lists and maps too. Keys are matched by mapstructure tag
// (case-sensitively, as confmap decodes); keys t does not have are left to the decoder.
// All problems are returned at once.
func Durations(raw map[string]any, t reflect.Type) error {
	var errs []error
	walkDurations("", raw, t, &errs)
	return errors.Join(errs...)
}

func walkDurations(path string, v any, t reflect.Type, errs *[]error) {
	if v == nil {
		return
	}
	for t.Kind() == reflect.Pointer {
		t = t.Elem()
	}
	if t == durationType {
		if err := Duration(path, v); err != nil {
			*errs = append(*errs, err)
		}
		return
	}
	switch t.Kind() {
	case reflect.Struct:
		m, ok := v.(map[string]any)
		if !ok {
			return
		}
		fields := Fields(t)
		for _, k := range slices.Sorted(maps.Keys(m)) {
			if ft, ok := fields[k]; ok {
				walkDurations(Join(path, k), m[k], ft, errs)
			}
		}
	case reflect.Slice, reflect.Array:
		list, ok := v.([]any)
		if !ok {
			return
		}
		for i, item := range list {
			walkDurations(fmt.Sprintf("%s[%d]", path, i), item, t.Elem(), errs)
		}
	case reflect.Map:
		m, ok := v.(map[string]any)
		if !ok {
			return
		}
		for _, k := range slices.Sorted(maps.Keys(m)) {
			walkDurations(Join(path, k), m[k], t.Elem(), errs)
		}
	}
}

// Keys lists the mapstructure keys of the struct type t, sorted; a squashed struct lends
// its keys.
func Keys(t reflect.Type) []string { return slices.Sorted(maps.Keys(Fields(t))) }

// UnknownKey is the error for the key at path, which is none of valid: with the nearest
// valid key when one is close, else with the list.
func UnknownKey(path string, valid []string) error {
	key := path[strings.LastIndex(path, ".")+1:]
	if s := Suggest(key, valid); s != "" {
		return fmt.Errorf("%s: unknown key, did you mean %s?", path, s)
	}
	return fmt.Errorf("%s: unknown key (valid keys: %s)", path, strings.Join(valid, ", "))
}

// Suggest is the name nearest to key: the same but for case and separators
// (max_invocations, MaxInvocations), else the closest by edit distance (a transposition is
// one edit) within about one edit in five characters; "" when none is that close.
func Suggest(key string, names []string) string {
	norm := func(s string) string { return strings.ToLower(strings.NewReplacer("_", "", "-", "").Replace(s)) }
	for _, n := range names {
		if norm(n) == norm(key) {
			return n
		}
	}
	best, bestD := "", math.MaxInt
	for _, n := range names {
		if d := editDistance(strings.ToLower(key), strings.ToLower(n)); d < bestD {
			best, bestD = n, d
		}
	}
	if bestD <= 1+len(key)/5 {
		return best
	}
	return ""
}

// editDistance is the optimal string alignment distance (Levenshtein plus adjacent
// transpositions) between a and b, over bytes (keys are ASCII).
func editDistance(a, b string) int {
	prev2 := make([]int, len(b)+1)
	prev := make([]int, len(b)+1)
	cur := make([]int, len(b)+1)
	for j := range prev {
		prev[j] = j
	}
	for i := 1; i <= len(a); i++ {
		cur[0] = i
		for j := 1; j <= len(b); j++ {
			cost := 1
			if a[i-1] == b[j-1] {
				cost = 0
			}
			cur[j] = min(prev[j]+1, cur[j-1]+1, prev[j-1]+cost)
			if i > 1 && j > 1 && a[i-1] == b[j-2] && a[i-2] == b[j-1] {
				cur[j] = min(cur[j], prev2[j-2]+1)
			}
		}
		prev2, prev, cur = prev, cur, prev2
	}
	return prev[len(b)]
}

// Describe renders a user's value for a message: strings quoted, lists and maps by kind.
func Describe(v any) string {
	switch v := v.(type) {
	case string:
		return fmt.Sprintf("%q", v)
	case []any:
		return "a list"
	case map[string]any:
		return "a map"
	case nil:
		return "nothing"
	}
	return fmt.Sprint(v)
}

// number is v as a float64 when it is a number of any Go numeric kind (YAML gives int,
// uint64 and float64).
func number(v any) (float64, bool) {
	rv := reflect.ValueOf(v)
	switch rv.Kind() {
	case reflect.Int, reflect.Int8, reflect.Int16, reflect.Int32, reflect.Int64:
		return float64(rv.Int()), true
	case reflect.Uint, reflect.Uint8, reflect.Uint16, reflect.Uint32, reflect.Uint64:
		return float64(rv.Uint()), true
	case reflect.Float32, reflect.Float64:
		return rv.Float(), true
	}
	return 0, false
}

// Fields maps the keys of a struct type to their field types: the seed tag (seed-000 step
// kinds decode themselves by it), else the mapstructure tag; squashed structs lend their
// keys, `-` fields have none.
func Fields(t reflect.Type) map[string]reflect.Type {
	out := map[string]reflect.Type{}
	for i := range t.NumField() {
		f := t.Field(i)
		if !f.IsExported() {
			continue
		}
		if seed := f.Tag.Get("seed"); seed != "" {
			out[seed] = f.Type
			continue
		}
		name, opts, _ := strings.Cut(f.Tag.Get("mapstructure"), ",")
		if name == "-" {
			continue
		}
		if strings.Contains(","+opts+",", ",squash,") {
			ft := f.Type
			for ft.Kind() == reflect.Pointer {
				ft = ft.Elem()
			}
			maps.Copy(out, Fields(ft))
			continue
		}
		if name == "" {
			name = f.Name
		}
		out[name] = f.Type
	}
	return out
}

// Join is the path of key under path (cases[0].steps: path.key; the top level: key).
func Join(path, key string) string {
	if path == "" {
		return key
	}
	return path + "." + key
}
