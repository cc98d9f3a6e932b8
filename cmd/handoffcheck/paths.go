package main

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"

	"github.com/otelcol-handoff/otelcol-handoff/internal/spanfile"
)

// namedPath is a path the run reads or writes, with what names it in an error: a flag
// (--junit), a config field (exporters.assertion.reports.html), "the config file".
type namedPath struct {
	name, path string
}

// checkReportPaths refuses, before anything is read, removed or written, a report path
// that would destroy something: one of the inputs (the config file, a span file, an
// otelSpansFile), the path of another report (the last written would win), or an existing
// file that is not a regular one. A report replaces its file (a new file renamed over it),
// so a named pipe, a device or a socket would be deleted and replaced by a regular file, and
// a symbolic link replaced by a file: they are refused (a link's target can be named
// instead). Empty paths are not reports.
func checkReportPaths(reports, inputs []namedPath) error {
	var errs []error
	for i, r := range reports {
		if r.path == "" {
			continue
		}
		if err := reportTarget(r.path); err != nil {
			errs = append(errs, fmt.Errorf("%s: %w", r.name, err))
			continue
		}
		clash := false
		for _, in := range inputs {
			if in.path != "" && samePath(r.path, in.path) {
				errs = append(errs, fmt.Errorf("%s: %s is %s: a report must not overwrite an input", r.name, r.path, in.name))
				clash = true
				break
			}
		}
		if clash {
			continue
		}
		for _, other := range reports[:i] {
			if other.path != "" && samePath(r.path, other.path) {
				errs = append(errs, fmt.Errorf("%s: %s is also the path of %s: each report needs a file of its own", r.name, r.path, other.name))
				break
			}
		}
	}
	return errors.Join(errs...)
}

// reportTarget refuses an existing path that is not a regular file (the link itself is
// looked at, not its target); a directory is left to the config's check, which names it.
func reportTarget(path string) error {
	fi, err := os.Lstat(path)
	if err != nil {
		return nil // not there (its directory is checked with the config)
	}
	m := fi.Mode()
	switch {
	case m&os.ModeSymlink != 0:
		target, _ := os.Readlink(path)
		return fmt.Errorf("%s is a symbolic link (to %s): a report replaces its file, so the link would be replaced; "+
			"give the target's path instead", path, target)
	case m.IsDir():
		return nil // assertionexporter.CheckReportPath: "is a directory, not a file"
	case !m.IsRegular():
		return fmt.Errorf("%s is %s, not a regular file: a report is written as a new file that replaces "+
			"what is at its path", path, spanfile.Kind(m))
	}
	return nil
}

// samePath reports whether two paths name one file: the same file when both exist
// (os.SameFile: hard links and links included), else the same absolute path once the
// folder's links are resolved.
func samePath(a, b string) bool {
	fa, errA := os.Stat(a)
	fb, errB := os.Stat(b)
	if errA == nil && errB == nil {
		return os.SameFile(fa, fb)
	}
	return canonical(a) == canonical(b)
}

func canonical(p string) string {
	abs, err := filepath.Abs(p)
	if err != nil {
		return filepath.Clean(p)
	}
	dir, base := filepath.Split(abs)
	if real, err := filepath.EvalSymlinks(dir); err == nil {
		dir = real
	}
	return filepath.Join(dir, base)
}

// flagReports are the report paths of the command line.
func flagReports(o options) []namedPath {
	return []namedPath{{"--json", o.jsonOut}, {"--junit", o.junit}, {"--markdown", o.markdown}, {"--html", o.html}}
}

// flagInputs are the inputs the command line names: the config and the span files.
func flagInputs(o options) []namedPath {
	in := []namedPath{{"the config file (--config)", o.config}}
	for _, f := range o.inputs {
		in = append(in, namedPath{"the span file " + f, f})
	}
	return in
}
