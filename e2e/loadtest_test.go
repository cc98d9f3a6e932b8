package e2e

import (
	"bytes"
	"compress/gzip"
	"context"
	"io"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/otelcol-handoff/otelcol-handoff/handoffprocessor/handoffprocessortest"
	"github.com/otelcol-handoff/otelcol-handoff/internal/loadtest"
)

// TestLoadTestHarness runs `make loadtest`'s harness for a second per pipeline at a low fixed
// rate against the built binary: the table comes out with every pipeline and figure, and
// every span the collector accepted left it. No figure is asserted (the machine is shared).
func TestLoadTestHarness(t *testing.T) {
	rep, err := loadtest.Execute(context.Background(), loadtest.Options{
		Binary: collectorBinary(t), Duration: time.Second, Rate: 4000,
		Senders: 2, Batch: 2, TracesDir: "../testdata/traces", Templates: 24,
		Retained: handoffprocessortest.Retained,
	})
	if err != nil {
		t.Fatal(err)
	}
	if len(rep.Runs) != len(loadtest.Pipelines) {
		t.Fatalf("%d runs, want one per pipeline (%d)", len(rep.Runs), len(loadtest.Pipelines))
	}
	for _, r := range rep.Runs {
		if r.Accepted == 0 || r.Out != r.Accepted {
			t.Errorf("%s: %d spans accepted, %d came out", r.Pipeline, r.Accepted, r.Out)
		}
		if r.CPU <= 0 || r.PeakRSS <= 0 {
			t.Errorf("%s: CPU %.2f s, peak RSS %d B: not measured", r.Pipeline, r.CPU, r.PeakRSS)
		}
	}
	if full := rep.Runs[len(rep.Runs)-1]; full.Pipeline != loadtest.Full || full.PeakBuffered == 0 {
		t.Errorf("last run %q buffered %d spans at most: the processor's gauge was not read", full.Pipeline, full.PeakBuffered)
	}
	for _, buffer := range []string{loadtest.BufferProto, loadtest.BufferProtoS2, loadtest.BufferDecoded} {
		if rep.RetainedPerSpan[buffer] <= 0 || rep.ProtoBytesPerSpan <= 0 {
			t.Errorf("retained %v B per span, OTLP %.0f B per span: %s not measured", rep.RetainedPerSpan, rep.ProtoBytesPerSpan, buffer)
		}
	}
	if rep.S2AsIsPerSpan <= 0 || rep.ProtoAsIsPerSpan <= 0 {
		t.Errorf("S2 on the captures as they are: %.0f B retained per span of %.0f B: not measured", rep.S2AsIsPerSpan, rep.ProtoAsIsPerSpan)
	}
	// The compressed buffer holds a fraction of the protobuf (0.03× and 0.13× when this
	// was written): half would mean the S2 pipeline's buffer was not compressed.
	if s2, proto := rep.RetainedPerSpan[loadtest.BufferProtoS2], rep.RetainedPerSpan[loadtest.BufferProto]; s2 >= proto/2 || rep.S2AsIsPerSpan >= rep.ProtoAsIsPerSpan/2 {
		t.Errorf("S2 retained %.0f B per span against proto's %.0f B, %.0f B on the captures as they are (%.0f B of OTLP): not compressed", s2, proto, rep.S2AsIsPerSpan, rep.ProtoAsIsPerSpan)
	}
	table := rep.String()
	for _, want := range []string{
		"| pipeline | offered | round | spans/s accepted | vs bare | CPU-s per 1M spans | vs bare | vs tail_sampling | peak RSS MB | vs tail_sampling | spans in | spans out | in = out |",
		"| " + loadtest.Bare + " | 4000 spans/s |", "| " + loadtest.TailSampling + " | 4000 spans/s |", "| " + loadtest.Full + " | 4000 spans/s |",
		"| " + loadtest.FullDecoded + " | 4000 spans/s |", "| " + loadtest.FullS2 + " | 4000 spans/s |",
		"| CPU-s per 1M spans, full pipeline / bare, at 4000 spans/s |",
		"| peak RSS at 4000 spans/s, full / tail_sampling (same hold time) |",
		"| retained bytes per buffered span / its OTLP protobuf size |",
		"| pipeline | offered | round | peak spans buffered | buffer live heap MB |",
		"spans in = out in every run: yes",
	} {
		if !strings.Contains(table, want) {
			t.Errorf("table lacks %q:\n%s", want, table)
		}
	}
	// Each handoff pipeline has a row in the run table and one in the sizing check.
	for _, name := range []string{loadtest.Full, loadtest.FullDecoded, loadtest.FullS2} {
		if n := strings.Count(table, "| "+name+" | 4000 spans/s |"); n != 2 {
			t.Errorf("%d rows of %q, want 2 (run and sizing):\n%s", n, name, table)
		}
	}
	t.Log("\n" + table)
}

// TestLoadTestProfile runs `make loadtest-profile`'s harness for a second on the three
// handoff pipelines alone: the collector's pprof extension gives a CPU and a heap profile of
// each run, each a gzipped pprof protobuf, and the other pipelines do not run. The
// folder does not exist yet: the harness creates it.
func TestLoadTestProfile(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "profiles")
	rep, err := loadtest.Execute(context.Background(), loadtest.Options{
		Binary: collectorBinary(t), Duration: time.Second, Rate: 4000,
		Senders: 2, Batch: 2, TracesDir: "../testdata/traces", Templates: 24,
		ProfileDir: dir, Only: "handoff", Retained: handoffprocessortest.Retained,
	})
	if err != nil {
		t.Fatal(err)
	}
	if len(rep.Runs) != 3 || rep.Runs[0].Pipeline != loadtest.FullDecoded || rep.Runs[1].Pipeline != loadtest.FullS2 ||
		rep.Runs[2].Pipeline != loadtest.Full || !rep.Lossless() {
		t.Fatalf("runs %+v, want the three handoff pipelines alone, nothing lost", rep.Runs)
	}
	for _, name := range []string{"otlp-handoff-decoded-buffer-assertion-10-rules-nop", "otlp-handoff-s2-buffer-assertion-10-rules-nop", "otlp-handoff-assertion-10-rules-nop"} {
		for _, kind := range []string{"cpu", "heap"} {
			requireProfile(t, filepath.Join(dir, name+"-4000-spans-s."+kind+".pprof"))
		}
	}
}

// TestLoadTestBaseline runs the harness with a baseline binary (here the same one) for a
// second on the full pipeline alone: each run is made with both binaries, the comparison
// table pairs them, and each binary's profiles are its own files.
func TestLoadTestBaseline(t *testing.T) {
	dir := t.TempDir()
	binary := collectorBinary(t)
	rep, err := loadtest.Execute(context.Background(), loadtest.Options{
		Binary: binary, Baseline: binary, Duration: time.Second, Rate: 4000,
		Senders: 2, Batch: 2, TracesDir: "../testdata/traces", Templates: 24,
		ProfileDir: dir, Only: "handoff →", Retained: handoffprocessortest.Retained,
	})
	if err != nil {
		t.Fatal(err)
	}
	if len(rep.Runs) != 1 || len(rep.Baseline) != 1 || rep.Runs[0].Pipeline != loadtest.Full ||
		rep.Baseline[0].Pipeline != loadtest.Full || !rep.Lossless() {
		t.Fatalf("runs %+v, baseline %+v: want the full pipeline once with each binary, nothing lost", rep.Runs, rep.Baseline)
	}
	table := rep.String()
	if !strings.Contains(table, "Against the baseline binary") ||
		!regexp.MustCompile(`\| `+regexp.QuoteMeta(loadtest.Full)+` \| 4000 spans/s \| [0-9.]+ \| [0-9.]+ \| [0-9.]+× \| [0-9.]+× \| [0-9.]+× \| yes \|`).MatchString(table) {
		t.Errorf("no comparison row for the full pipeline:\n%s", table)
	}
	for _, name := range []string{"otlp-handoff-assertion-10-rules-nop-4000-spans-s", "otlp-handoff-assertion-10-rules-nop-4000-spans-s-baseline"} {
		requireProfile(t, filepath.Join(dir, name+".cpu.pprof"))
	}
}

// requireProfile fails unless path holds a gzipped, non-empty pprof protobuf.
func requireProfile(t *testing.T, path string) {
	t.Helper()
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	zr, err := gzip.NewReader(bytes.NewReader(b))
	if err != nil {
		t.Fatalf("%s: not a gzipped profile: %v", path, err)
	}
	raw, err := io.ReadAll(zr)
	if err != nil || len(raw) == 0 {
		t.Fatalf("%s: %d bytes of profile, %v", path, len(raw), err)
	}
}
