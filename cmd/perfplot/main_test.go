package main

import (
	"os"
	"strings"
	"testing"
)

// The input is real `go test -bench=Scaling` output of this repository (the last two
// rules=100 lines are further -count runs, with their ns/trace/rule edited to 12119 and
// 11000 so that the median is visible).
func readBench(t *testing.T) []*panel {
	t.Helper()
	f, err := os.Open("testdata/bench.txt")
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	panels, err := parse(f)
	if err != nil {
		t.Fatal(err)
	}
	return panels
}

func TestParseScalingBenchmarks(t *testing.T) {
	panels := readBench(t)
	spans, rules := panels[0], panels[1]
	for series, want := range map[string]map[int]float64{
		"ScalingBuild/capture=google-adk-ok": {10: 15048, 100: 9624, 1000: 10988, 10000: 15706},
		"ScalingBuild/capture=vercel-ai-ok":  {10: 4290, 100: 4538, 1000: 5897, 10000: 10541},
		"ScalingProcessor":                   {10: 11604, 100: 10646, 1000: 10367, 10000: 10148}, // cpu-ns/span, not ns/op
	} {
		got := spans.series[series]
		if len(got) != len(want) {
			t.Errorf("%s: %d points, want %d (%v)", series, len(got), len(want), got)
		}
		for x, v := range want {
			if m := median(got[x]); m != v {
				t.Errorf("%s spans=%d: %v, want %v", series, x, m, v)
			}
		}
	}
	if len(spans.series) != 3 {
		t.Errorf("spans panel: %d series, want 3", len(spans.series))
	}
	got := rules.series["ScalingRules"]
	for x, v := range map[int]float64{1: 18169, 10: 26208, 100: 11000} {
		if m := median(got[x]); m != v {
			t.Errorf("rules=%d: median %v, want %v (samples %v)", x, m, v, got[x])
		}
	}
}

func TestSVGDrawsEverySeriesOnLogAxes(t *testing.T) {
	panels := readBench(t)
	var b strings.Builder
	if err := writeSVG(&b, panels); err != nil {
		t.Fatal(err)
	}
	svg := b.String()
	if !strings.HasPrefix(svg, "<svg ") || !strings.HasSuffix(svg, "</svg>\n") {
		t.Fatalf("not one SVG document:\n%s", svg)
	}
	if n := strings.Count(svg, "<polyline"); n != 4 {
		t.Errorf("%d lines, want 4 (three series of spans, one of rules)", n)
	}
	if n := strings.Count(svg, "<circle"); n != 3*4+3 {
		t.Errorf("%d points, want 15", n)
	}
	for _, want := range []string{
		"Cost per span over trace size", "Exporter cost per rule per trace",
		"spans per trace (log scale)", "rules (log scale)", ">10,000</text>", ">100</text>",
		">ScalingProcessor</text>", ">ScalingRules</text>",
	} {
		if !strings.Contains(svg, want) {
			t.Errorf("SVG lacks %q", want)
		}
	}
}

func TestInputWithoutScalingBenchmarksIsAnError(t *testing.T) {
	_, err := parse(strings.NewReader("BenchmarkBuild/spans=17-2  100  1000 ns/op  58 ns/span\n"))
	if err == nil || !strings.Contains(err.Error(), "/rules=N") {
		t.Fatalf("err = %v, want one naming the missing rules panel", err)
	}
}

func TestSplitParam(t *testing.T) {
	for _, c := range []struct {
		name, param, series string
		x                   int
		ok                  bool
	}{
		{"BenchmarkScalingBuild/capture=a/spans=100", "spans", "ScalingBuild/capture=a", 100, true},
		{"BenchmarkScalingRules/rules=10", "rules", "ScalingRules", 10, true},
		{"BenchmarkScalingRules/rules=x", "rules", "", 0, false},
		{"BenchmarkOther/n=3", "spans", "", 0, false},
	} {
		s, x, ok := splitParam(c.name, c.param)
		if s != c.series || x != c.x || ok != c.ok {
			t.Errorf("splitParam(%q, %q) = %q, %d, %v; want %q, %d, %v", c.name, c.param, s, x, ok, c.series, c.x, c.ok)
		}
	}
}
