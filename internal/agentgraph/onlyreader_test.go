package agentgraph

import (
	"fmt"
	"go/ast"
	"go/parser"
	"go/token"
	"go/types"
	"os"
	"path/filepath"
	"reflect"
	"slices"
	"sort"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"
	"go.opentelemetry.io/collector/pdata/pcommon"
	"go.opentelemetry.io/collector/pdata/ptrace"
	"golang.org/x/tools/go/packages"
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

// rawAccessors are the pdata calls that read raw content: attributes (of spans,
// resources, scopes, events, links), span events and span links.
var rawAccessors = map[string]bool{"Attributes": true, "Events": true, "Links": true}

// spanSide are the pdata types whose rawAccessors read a span's content. The same calls on
// what a component builds for its own output (a log record's, a data point's attributes)
// read no span.
var spanSide = map[string]bool{
	"go.opentelemetry.io/collector/pdata/ptrace.Span":                  true,
	"go.opentelemetry.io/collector/pdata/ptrace.SpanEvent":             true,
	"go.opentelemetry.io/collector/pdata/ptrace.SpanLink":              true,
	"go.opentelemetry.io/collector/pdata/pcommon.Resource":             true,
	"go.opentelemetry.io/collector/pdata/pcommon.InstrumentationScope": true,
}

// readsSpan reports whether x, the receiver of a rawAccessors call, is a span's side. With
// no type information (info nil, or x's type unknown) every such call counts.
func readsSpan(info *types.Info, x ast.Expr) bool {
	if info == nil {
		return true
	}
	t := info.TypeOf(x)
	if t == nil {
		return true
	}
	if p, ok := t.(*types.Pointer); ok {
		t = p.Elem()
	}
	named, ok := t.(*types.Named)
	if !ok || named.Obj().Pkg() == nil {
		return false
	}
	return spanSide[named.Obj().Pkg().Path()+"."+named.Obj().Name()]
}

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

// rawReads parses one Go file and reports its raw reads (scanRawReads) with no type
// information: every call of Attributes(), Events() or Links() counts.
func rawReads(fset *token.FileSet, name string, src any) ([]string, error) {
	f, err := parser.ParseFile(fset, name, src, parser.SkipObjectResolution)
	if err != nil {
		return nil, err
	}
	return scanRawReads(fset, f, nil), nil
}

// scanRawReads reports, as "file:line: what", every raw read of f: a call of Attributes(),
// Events() or Links() on a span's side (spanSide, when info gives f's types); a selector
// X.Pdata (the pdata span behind a Span, or its ToolCall's or Invocation's); a pdata method
// called through a Span's field (s.Span.Name(), s.Resource.Attributes(), s.Scope.Name()).
// The field checks are syntactic: a pdata span copied into a local variable and read there
// by another method (sp.Name()) escapes them, but any read of its attributes, events or
// links is found.
func scanRawReads(fset *token.FileSet, f *ast.File, info *types.Info) []string {
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
			if rawAccessors[sel.Sel.Name] && len(n.Args) == 0 && readsSpan(info, sel.X) {
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
	return out
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

// rawReadsUnder loads every package of the module at root with its types (non-test files)
// and scans each file outside the exempt paths.
func rawReadsUnder(t *testing.T, root string) []string {
	t.Helper()
	fset := token.NewFileSet()
	pkgs, err := packages.Load(&packages.Config{
		Mode: packages.NeedName | packages.NeedFiles | packages.NeedCompiledGoFiles | packages.NeedSyntax | packages.NeedTypes | packages.NeedTypesInfo,
		Dir:  root, Fset: fset,
	}, "./...")
	require.NoError(t, err)
	var found []string
	files := 0
	for _, pkg := range pkgs {
		for _, e := range pkg.Errors {
			t.Errorf("%s: %v", pkg.PkgPath, e)
		}
		for i, f := range pkg.Syntax {
			rel := filepath.ToSlash(strings.TrimPrefix(pkg.CompiledGoFiles[i], root+string(filepath.Separator)))
			if !strings.HasSuffix(rel, ".go") || slices.ContainsFunc(rawReadersAllowed, func(p string) bool { return strings.HasPrefix(rel, p) }) {
				continue // cgo's generated files, and the exempt paths
			}
			files++
			for _, r := range scanRawReads(fset, f, pkg.TypesInfo) {
				found = append(found, strings.TrimPrefix(r, root+string(filepath.Separator)))
			}
		}
	}
	require.Greater(t, files, 20, "the scan found too few Go files under %s", root)
	sort.Strings(found)
	return found
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
	for _, allowed := range rawReadersAllowed {
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

// TestOutputAttributesAreNotSpanReads: with types, the Attributes() of what a component
// builds (a log record's, a data point's) is not a raw read, the same call on a span is,
// and the file is still checked for every other raw read, a Span's whole pdata Resource
// included (what the connector's records once copied). Without types both Attributes()
// calls count.
func TestOutputAttributesAreNotSpanReads(t *testing.T) {
	src := `package records

import (
	"go.opentelemetry.io/collector/pdata/plog"
	"go.opentelemetry.io/collector/pdata/pmetric"
	"go.opentelemetry.io/collector/pdata/ptrace"

	"github.com/otelcol-handoff/otelcol-handoff/internal/agentgraph"
)

func build(g *agentgraph.Graph, e *agentgraph.Edge, s ptrace.Span, lr plog.LogRecord, dp pmetric.NumberDataPoint, rl plog.ResourceLogs) {
	lr.Attributes().PutStr("k", "v")
	dp.Attributes().PutStr("k", "v")
	res := &g.Root.Span.Resource
	g.RootSpan.Resource.CopyTo(rl.Resource())
	name := e.To.Span.Pdata.Name()
	evs := s.Events()
	s.Attributes().PutStr("k", "v")
	_, _, _ = res, name, evs
}
`
	fset := token.NewFileSet()
	f, err := parser.ParseFile(fset, "records.go", src, parser.SkipObjectResolution)
	require.NoError(t, err)
	deps, err := packages.Load(&packages.Config{Mode: packages.NeedName | packages.NeedTypes},
		"go.opentelemetry.io/collector/pdata/plog", "go.opentelemetry.io/collector/pdata/pmetric",
		"go.opentelemetry.io/collector/pdata/ptrace", "github.com/otelcol-handoff/otelcol-handoff/internal/agentgraph")
	require.NoError(t, err)
	byPath := map[string]*types.Package{}
	for _, d := range deps {
		require.Empty(t, d.Errors, d.PkgPath)
		byPath[d.PkgPath] = d.Types
	}
	info := &types.Info{Types: map[ast.Expr]types.TypeAndValue{}}
	_, err = (&types.Config{Importer: importerFunc(func(path string) (*types.Package, error) {
		if p, ok := byPath[path]; ok {
			return p, nil
		}
		return nil, fmt.Errorf("not loaded: %s", path)
	})}).Check("records", fset, []*ast.File{f}, info)
	require.NoError(t, err)
	require.Equal(t, []string{
		"records.go:14:10: reads the pdata .Resource of a Span",
		"records.go:15:2: calls the pdata method .Resource.CopyTo()",
		"records.go:16:10: reads the pdata span .Pdata",
		"records.go:17:9: calls .Events()",
		"records.go:18:2: calls .Attributes()",
	}, scanRawReads(fset, f, info))
	require.Len(t, scanRawReads(fset, f, nil), 7, "without types both output Attributes() calls count")
}

type importerFunc func(path string) (*types.Package, error)

func (f importerFunc) Import(path string) (*types.Package, error) { return f(path) }
