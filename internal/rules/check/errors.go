package check

import (
	"errors"
	"fmt"
)

// Prefixed puts path at before each of err's errors (a Validate's, joined).
func Prefixed(at string, err error) []error {
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

// Errors collects a Validate's errors, each naming its key.
type Errors []error

func (f *Errors) Add(field, format string, args ...any) {
	*f = append(*f, fmt.Errorf("%s: %s", field, fmt.Sprintf(format, args...)))
}

func (f *Errors) NonNegative(field string, v *int) {
	if v != nil && *v < 0 {
		f.Add(field, "must not be negative, got %d", *v)
	}
}

func (f Errors) Err() error { return errors.Join(f...) }
