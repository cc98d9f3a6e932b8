package agentgraph

import (
	"fmt"
	"go/ast"
	"go/parser"
	"go/token"
	"io/fs"
	"os"
	"path/filepath"
	"reflect"
	"slices"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"
	"go.opentelemetry.io/collector/pdata/pcommon"
	"go.opentelemetry.io/collector/pdata/ptrace"
)

// The model is the only reader of raw spans (see the package doc): outside this package,
// no non-test Go file reads span, resource or event attributes, span events or links, or
// the raw pdata span behind a Span. These files are exempt: they split, mark or build
// spans rather than read them.
var rawReadersAllowed = []string{
	"internal/agentgraph/",      // the model
	"handoffprocessor/split.go", // the processor's span splitting and marking
	"internal/rules/rulestest/", // test helpers that build spans
	"internal/workload/",        // synthetic workloads
	"cmd/loadtest/",             // load generator
	"cmd/otlpreplay/",           // replays span files
}

// attributeWritersAllowed may call Attributes() (the syntactic check cannot tell a log
// record's or a data point's from a span's) and are checked for every other raw read.
var attributeWritersAllowed = []string{
	"connector/assertionconnector/records.go", // the connector's log records and metric data points
}

// rawAccessors are the pdata calls that read raw content: attributes (of spans,
// resources, scopes, events, links), span events and span links.
var rawAccessors = map[string]bool{"Attributes": true, "Events": true, "Links": true}

// pdataMethods are the methods of the pdata types a Span wraps, by the Span field that
// holds each (Span, Resource, Scope): calling one through the field reads the raw span.
var pdataMethods = map[string]map[string]bool{
	"Pdata":    methodNames(reflect.TypeOf(ptrace.Span{})),
	"Resource": methodNames(reflect.TypeOf(pcommon.Resource{})),
	"Scope":    methodNames(reflect.TypeOf(pcommon.InstrumentationScope{})),
}

func methodNames(t reflect.Type) map[string]bool {
	out := map[string]bool{}
	for i := 0; i < t.NumMethod(); i++ {
		out[t.Method(i).Name] = true
	}
	return out
}

// rawReads parses one Go file and reports, as "file:line: what", every raw read: a call
// of Attributes(), Events() or Links(); a selector X.Pdata (the pdata span behind a
// Span, or its ToolCall's or Invocation's); a pdata method called through a Span's field
// (s.Span.Name(), s.Resource.Attributes(), s.Scope.Name()). The checks are syntactic (no
// type information): a pdata span copied into a local variable and read there by another
// method (sp.Name()) escapes them, but any read of its attributes, events or links is
// found.
func rawReads(fset *token.FileSet, name string, src any) ([]string, error) {
	return scanRawReads(fset, name, src, false)
}

// scanRawReads is rawReads; writesAttributes skips the Attributes() calls (of a file in
// attributeWritersAllowed).
func scanRawReads(fset *token.FileSet, name string, src any, writesAttributes bool) ([]string, error) {
	f, err := parser.ParseFile(fset, name, src, parser.SkipObjectResolution)
	if err != nil {
		return nil, err
	}
	var out []string
	report := func(n ast.Node, what string) {
		out = append(out, fmt.Sprintf("%s: %s", fset.Position(n.Pos()), what))
	}
	ast.Inspect(f, func(n ast.Node) bool {
		switch n := n.(type) {
		case *ast.CallExpr:
			sel, ok := n.Fun.(*ast.SelectorExpr)
			if !ok {
				return true
			}
			if rawAccessors[sel.Sel.Name] && len(n.Args) == 0 && (sel.Sel.Name != "Attributes" || !writesAttributes) {
				report(n, "calls ."+sel.Sel.Name+"()")
				return false // one report per read, not another for its X.Pdata
			}
			if field, ok := sel.X.(*ast.SelectorExpr); ok && pdataMethods[field.Sel.Name][sel.Sel.Name] {
				if isPdataSpan(field) {
					return true // reported as X.Pdata below
				}
				report(n, fmt.Sprintf("calls the pdata method .%s.%s()", field.Sel.Name, sel.Sel.Name))
				return false // one report per read, not another for its raw field
			}
		case *ast.SelectorExpr:
			switch {
			case isPdataSpan(n):
				report(n, "reads the pdata span .Pdata")
			case isRawSpanField(n):
				report(n, "reads the pdata ."+n.Sel.Name+" of a Span")
			}
		}
		return true
	})
	return out, nil
}

// isPdataSpan: the selector is X.Pdata, the pdata span behind a Span.
func isPdataSpan(s *ast.SelectorExpr) bool { return s.Sel.Name == "Pdata" }

// isRawSpanField: the selector is a Span's pdata Resource or Scope (x.Span.Resource,
// g.RootSpan.Scope), taken whole rather than through a method call.
func isRawSpanField(s *ast.SelectorExpr) bool {
	owner, ok := s.X.(*ast.SelectorExpr)
	return ok && (s.Sel.Name == "Resource" || s.Sel.Name == "Scope") && (owner.Sel.Name == "Span" || owner.Sel.Name == "RootSpan")
}

// moduleRoot is the folder of the repository's go.mod.
func moduleRoot(t *testing.T) string {
	t.Helper()
	dir, err := filepath.Abs(".")
	require.NoError(t, err)
	for {
		if _, err := os.Stat(filepath.Join(dir, "go.mod")); err == nil {
			return dir
		}
		parent := filepath.Dir(dir)
		require.NotEqual(t, dir, parent, "no go.mod above the package")
		dir = parent
	}
}

// rawReadsUnder scans every non-test Go file under root outside the exempt paths.
func rawReadsUnder(t *testing.T, root string) []string {
	t.Helper()
	fset := token.NewFileSet()
	var found []string
	files := 0
	err := filepath.WalkDir(root, func(path string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		rel := filepath.ToSlash(strings.TrimPrefix(path, root+string(filepath.Separator)))
		if d.IsDir() {
			switch d.Name() {
			case ".git", "_build", "node_modules", "testdata", "vendor":
				return filepath.SkipDir
			}
			return nil
		}
		if !strings.HasSuffix(rel, ".go") || strings.HasSuffix(rel, "_test.go") {
			return nil
		}
		for _, allowed := range rawReadersAllowed {
			if strings.HasPrefix(rel, allowed) {
				return nil
			}
		}
		files++
		reads, err := scanRawReads(fset, path, nil, slices.Contains(attributeWritersAllowed, rel))
		if err != nil {
			return err
		}
		for _, r := range reads {
			found = append(found, strings.TrimPrefix(r, root+string(filepath.Separator)))
		}
		return nil
	})
	require.NoError(t, err)
	require.Greater(t, files, 20, "the scan found too few Go files under %s", root)
	return found // WalkDir goes in lexical order, the inspection in source order
}

// TestOnlyTheModelReadsRawSpans fails, naming file:line, when a package other than
// agentgraph (and the exempt span splitting and span builders) reads raw span content.
// AGENTGRAPH_ONLYREADER_ROOT points the scan at another checkout (to see it fail on code
// from before the rule: `git archive <commit> | tar -x -C /tmp/old`).
func TestOnlyTheModelReadsRawSpans(t *testing.T) {
	root := os.Getenv("AGENTGRAPH_ONLYREADER_ROOT")
	if root == "" {
		root = moduleRoot(t)
	}
	for _, allowed := range append(slices.Clone(rawReadersAllowed), attributeWritersAllowed...) {
		_, err := os.Stat(filepath.Join(root, filepath.FromSlash(allowed)))
		require.NoError(t, err, "exempt path %s is gone: drop it from rawReadersAllowed", allowed)
	}
	found := rawReadsUnder(t, filepath.Clean(root))
	if len(found) > 0 {
		t.Fatalf("%d raw span reads outside internal/agentgraph: read normalized fields of the model instead, "+
			"or add the field to agentgraph (its package doc says how):\n%s", len(found), strings.Join(found, "\n"))
	}
}

// TestRawReadsFound checks the scanner on the raw reads the rules, the exporter and the
// processor made before the model took them over (verbatim lines of that code).
func TestRawReadsFound(t *testing.T) {
	src := `package rules

func old() {
	if v, ok := span.Pdata.Attributes().Get(AttrRunStatus); ok {}
	events := s.Events()
	add(g.RootSpan.Resource.Attributes())
	vars["root_span_name"] = g.RootSpan.Pdata.Name()
	start := uint64(e.To.Span.Pdata.StartTimestamp())
	if root.Pdata.Status().Code() == ptrace.StatusCodeError {}
	l := found.Pdata.Links().At(0)
	scope := inv.Span.Scope.Name()
	attrs := sp.Attributes()
	raw := inv.Span.Pdata
}

func fine() {
	_ = inv.Span.ID.String()
	_ = e.To.Span.Start()
	_ = tc.Span.Error
	_ = inv.Span.Name.Text
	_ = g.Selector().Attributes
	_ = s.SpanName()
	_ = attrs.Get("k")
}
`
	got, err := rawReads(token.NewFileSet(), "old.go", src)
	require.NoError(t, err)
	require.Equal(t, []string{
		"old.go:4:14: calls .Attributes()",
		"old.go:5:12: calls .Events()",
		"old.go:6:6: calls .Attributes()",
		"old.go:7:27: reads the pdata span .Pdata",
		"old.go:8:18: reads the pdata span .Pdata",
		"old.go:9:5: reads the pdata span .Pdata",
		"old.go:10:7: calls .Links()",
		"old.go:11:11: calls the pdata method .Scope.Name()",
		"old.go:12:11: calls .Attributes()",
		"old.go:13:9: reads the pdata span .Pdata",
	}, got)
}

// TestAttributeWritersAreCheckedForOtherReads: a file allowed to call Attributes() (on its
// log records and data points) is still checked for every other raw read, a Span's whole
// pdata Resource included (what the connector's records once copied).
func TestAttributeWritersAreCheckedForOtherReads(t *testing.T) {
	src := `package records

func build() {
	putResultAttributes(lr.Attributes(), r, e)
	attrs(k, dp.Attributes())
	res := &g.Root.Span.Resource
	g.RootSpan.Resource.CopyTo(rl.Resource())
	name := e.To.Span.Pdata.Name()
	evs := s.Events()
}
`
	got, err := scanRawReads(token.NewFileSet(), "records.go", src, true)
	require.NoError(t, err)
	require.Equal(t, []string{
		"records.go:6:10: reads the pdata .Resource of a Span",
		"records.go:7:2: calls the pdata method .Resource.CopyTo()",
		"records.go:8:10: reads the pdata span .Pdata",
		"records.go:9:9: calls .Events()",
	}, got)
	got, err = rawReads(token.NewFileSet(), "records.go", src)
	require.NoError(t, err)
	require.Len(t, got, 6, "without the exemption both Attributes() calls count: %v", got)
}
