package redact

import (
	"os"
	"path/filepath"
	"sort"
	"testing"

	"go.opentelemetry.io/collector/pdata/pcommon"
	"go.opentelemetry.io/collector/pdata/ptrace"
)

// captureDirs hold OTLP/JSON captures: the real frameworks' traces, the converted corpus,
// and the shared corpus when this machine has one.
var captureDirs = []string{
	filepath.Join("..", "..", "testdata", "traces"),
	filepath.Join("..", "..", "testdata", "corpus"),
	"/work/shared/corpus",
}

// captureValues is every string of every capture: each attribute value (resource, scope,
// span, event and link attributes, inside maps and arrays too, other types as AsString
// gives them), span names, event names and status messages, in file order.
func captureValues(tb testing.TB) []string {
	tb.Helper()
	var files []string
	for _, dir := range captureDirs {
		_ = filepath.WalkDir(dir, func(path string, d os.DirEntry, err error) error {
			if err == nil && !d.IsDir() && filepath.Ext(path) == ".json" {
				files = append(files, path)
			}
			return nil
		})
	}
	sort.Strings(files)
	var out []string
	var value func(v pcommon.Value)
	value = func(v pcommon.Value) {
		switch v.Type() {
		case pcommon.ValueTypeMap:
			for k, x := range v.Map().All() {
				out = append(out, k)
				value(x)
			}
		case pcommon.ValueTypeSlice:
			for _, x := range v.Slice().All() {
				value(x)
			}
		}
		out = append(out, v.AsString())
	}
	attrs := func(m pcommon.Map) {
		for _, v := range m.All() {
			value(v)
		}
	}
	read := 0
	for _, f := range files {
		raw, err := os.ReadFile(f)
		if err != nil {
			tb.Fatal(err)
		}
		td, err := (&ptrace.JSONUnmarshaler{}).UnmarshalTraces(raw)
		if err != nil || td.SpanCount() == 0 {
			continue // not OTLP/JSON (a source format the corpus converts from)
		}
		read++
		for _, rs := range td.ResourceSpans().All() {
			attrs(rs.Resource().Attributes())
			for _, ss := range rs.ScopeSpans().All() {
				attrs(ss.Scope().Attributes())
				for _, sp := range ss.Spans().All() {
					out = append(out, sp.Name(), sp.Status().Message())
					attrs(sp.Attributes())
					for _, ev := range sp.Events().All() {
						out = append(out, ev.Name())
						attrs(ev.Attributes())
					}
					for _, l := range sp.Links().All() {
						attrs(l.Attributes())
					}
				}
			}
		}
	}
	if read == 0 {
		tb.Fatal("no capture read")
	}
	return out
}

// BenchmarkRedactCaptures redacts every string of the real captures (captureValues) with
// the default policy, as HANDOFF content and judge requests are.
func BenchmarkRedactCaptures(b *testing.B) {
	values := captureValues(b)
	size := 0
	for _, v := range values {
		size += len(v)
	}
	b.ReportAllocs()
	b.SetBytes(int64(size))
	p := Default()
	for b.Loop() {
		for _, v := range values {
			_ = p.Redact(v)
		}
	}
}
