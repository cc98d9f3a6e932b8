// Command perfplot draws the scaling benchmarks as one SVG with two panels: cost per span
// over spans per trace (BenchmarkScalingBuild in internal/agentgraph, BenchmarkScalingProcessor
// in handoffprocessor) and cost per rule per trace over the number of rules
// (BenchmarkScalingRules in assertionexporter). It reads `go test -bench` output on stdin
// (several -count runs of one benchmark give their median) and writes the SVG to stdout; no
// network, no dependencies.
//
//	go test -run='^$' -bench=Scaling -count=5 ./internal/agentgraph/ ./handoffprocessor/ ./assertionexporter/ > bench.txt
//	go run ./cmd/perfplot < bench.txt > docs/scaling.svg
package main

import (
	"bufio"
	"fmt"
	"io"
	"math"
	"os"
	"regexp"
	"slices"
	"sort"
	"strconv"
	"strings"
)

func main() {
	panels, err := parse(os.Stdin)
	if err == nil {
		err = writeSVG(os.Stdout, panels)
	}
	if err != nil {
		fmt.Fprintln(os.Stderr, "perfplot:", err)
		os.Exit(1)
	}
}

// panel is one chart: the benchmarks whose name has the /<param>=N segment, measured in
// the first of units a line reports.
type panel struct {
	title, param, xLabel, yLabel string
	units                        []string
	series                       map[string]map[int][]float64 // series → x → samples
}

func newPanels() []*panel {
	return []*panel{
		{
			title: "Cost per span over trace size", param: "spans", xLabel: "spans per trace", yLabel: "ns per span",
			units: []string{"cpu-ns/span", "ns/span"},
		},
		{
			title: "Exporter cost per rule per trace", param: "rules", xLabel: "rules", yLabel: "ns per trace per rule",
			units: []string{"ns/trace/rule"},
		},
	}
}

var procsSuffix = regexp.MustCompile(`-\d+$`)

// parse reads benchmark lines ("BenchmarkX/spans=10-2  100  123 ns/op  45 ns/span ...").
func parse(r io.Reader) ([]*panel, error) {
	panels := newPanels()
	sc := bufio.NewScanner(r)
	sc.Buffer(make([]byte, 1<<20), 1<<20)
	for sc.Scan() {
		f := strings.Fields(sc.Text())
		if len(f) < 4 || !strings.HasPrefix(f[0], "Benchmark") {
			continue
		}
		name := procsSuffix.ReplaceAllString(f[0], "")
		values := map[string]float64{}
		for i := 2; i+1 < len(f); i += 2 {
			if v, err := strconv.ParseFloat(f[i], 64); err == nil {
				values[f[i+1]] = v
			}
		}
		for _, p := range panels {
			series, x, ok := splitParam(name, p.param)
			if !ok {
				continue
			}
			for _, u := range p.units {
				if v, ok := values[u]; ok {
					if p.series == nil {
						p.series = map[string]map[int][]float64{}
					}
					if p.series[series] == nil {
						p.series[series] = map[int][]float64{}
					}
					p.series[series][x] = append(p.series[series][x], v)
					break
				}
			}
		}
	}
	if err := sc.Err(); err != nil {
		return nil, err
	}
	for _, p := range panels {
		if len(p.series) == 0 {
			return nil, fmt.Errorf("no benchmark with a /%s=N segment reporting %s in the input", p.param, strings.Join(p.units, " or "))
		}
	}
	return panels, nil
}

// splitParam takes the /param=N segment out of a benchmark name: the rest names the series.
func splitParam(name, param string) (series string, x int, ok bool) {
	parts := strings.Split(name, "/")
	for i, part := range parts {
		v, found := strings.CutPrefix(part, param+"=")
		if !found {
			continue
		}
		n, err := strconv.Atoi(v)
		if err != nil || n <= 0 {
			return "", 0, false
		}
		rest := append(slices.Clone(parts[:i]), parts[i+1:]...)
		return strings.TrimPrefix(strings.Join(rest, "/"), "Benchmark"), n, true
	}
	return "", 0, false
}

func median(v []float64) float64 {
	s := slices.Clone(v)
	sort.Float64s(s)
	if len(s)%2 == 1 {
		return s[len(s)/2]
	}
	return (s[len(s)/2-1] + s[len(s)/2]) / 2
}

// Layout of the SVG, in pixels.
const (
	panelW, panelH = 480, 360
	marginL        = 70
	marginR        = 20
	marginT        = 40
	marginB        = 120 // x axis labels and the legend
)

var colors = []string{"#1f77b4", "#d62728", "#2ca02c", "#9467bd", "#ff7f0e", "#8c564b"}

func writeSVG(w io.Writer, panels []*panel) error {
	var b strings.Builder
	fmt.Fprintf(&b, `<svg xmlns="http://www.w3.org/2000/svg" width="%d" height="%d" viewBox="0 0 %d %d" font-family="sans-serif" font-size="12">`+"\n",
		panelW*len(panels), panelH, panelW*len(panels), panelH)
	fmt.Fprintf(&b, `<rect width="100%%" height="100%%" fill="white"/>`+"\n")
	for i, p := range panels {
		drawPanel(&b, p, float64(i*panelW))
	}
	b.WriteString("</svg>\n")
	_, err := io.WriteString(w, b.String())
	return err
}

func drawPanel(b *strings.Builder, p *panel, x0 float64) {
	names := make([]string, 0, len(p.series))
	xs := map[int]bool{}
	ymax := 0.0
	for name, pts := range p.series {
		names = append(names, name)
		for x, v := range pts {
			xs[x] = true
			ymax = math.Max(ymax, median(v))
		}
	}
	sort.Strings(names)
	xticks := make([]int, 0, len(xs))
	for x := range xs {
		xticks = append(xticks, x)
	}
	sort.Ints(xticks)
	lo, hi := math.Log10(float64(xticks[0])), math.Log10(float64(xticks[len(xticks)-1]))
	if hi == lo {
		lo, hi = lo-1, hi+1
	}
	left, right := x0+marginL, x0+panelW-marginR
	top, bottom := float64(marginT), float64(panelH-marginB)
	step := niceStep(ymax / 5)
	ytop := math.Ceil(ymax*1.1/step) * step
	px := func(x int) float64 { return left + (math.Log10(float64(x))-lo)/(hi-lo)*(right-left) }
	py := func(y float64) float64 { return bottom - y/ytop*(bottom-top) }

	fmt.Fprintf(b, `<text x="%.0f" y="22" text-anchor="middle" font-size="14" font-weight="bold">%s</text>`+"\n", (left+right)/2, esc(p.title))
	for y := 0.0; y <= ytop+step/2; y += step {
		fmt.Fprintf(b, `<line x1="%.1f" y1="%.1f" x2="%.1f" y2="%.1f" stroke="#ddd"/>`+"\n", left, py(y), right, py(y))
		fmt.Fprintf(b, `<text x="%.1f" y="%.1f" text-anchor="end" dominant-baseline="middle">%s</text>`+"\n", left-6, py(y), formatNum(y))
	}
	for _, x := range xticks {
		fmt.Fprintf(b, `<line x1="%.1f" y1="%.1f" x2="%.1f" y2="%.1f" stroke="#ddd"/>`+"\n", px(x), top, px(x), bottom)
		fmt.Fprintf(b, `<text x="%.1f" y="%.1f" text-anchor="middle">%s</text>`+"\n", px(x), bottom+16, formatNum(float64(x)))
	}
	fmt.Fprintf(b, `<rect x="%.1f" y="%.1f" width="%.1f" height="%.1f" fill="none" stroke="#333"/>`+"\n", left, top, right-left, bottom-top)
	fmt.Fprintf(b, `<text x="%.1f" y="%.1f" text-anchor="middle">%s (log scale)</text>`+"\n", (left+right)/2, bottom+34, esc(p.xLabel))
	fmt.Fprintf(b, `<text transform="translate(%.1f %.1f) rotate(-90)" text-anchor="middle">%s</text>`+"\n", x0+16, (top+bottom)/2, esc(p.yLabel))
	for i, name := range names {
		color := colors[i%len(colors)]
		var pts []string
		for _, x := range xticks {
			if v, ok := p.series[name][x]; ok {
				pts = append(pts, fmt.Sprintf("%.1f,%.1f", px(x), py(median(v))))
			}
		}
		fmt.Fprintf(b, `<polyline fill="none" stroke="%s" stroke-width="2" points="%s"><title>%s</title></polyline>`+"\n", color, strings.Join(pts, " "), esc(name))
		for _, pt := range pts {
			xy := strings.Split(pt, ",")
			fmt.Fprintf(b, `<circle cx="%s" cy="%s" r="3" fill="%s"/>`+"\n", xy[0], xy[1], color)
		}
		ly := bottom + 54 + float64(i)*16
		fmt.Fprintf(b, `<line x1="%.1f" y1="%.1f" x2="%.1f" y2="%.1f" stroke="%s" stroke-width="2"/>`+"\n", left, ly, left+20, ly, color)
		fmt.Fprintf(b, `<text x="%.1f" y="%.1f" dominant-baseline="middle">%s</text>`+"\n", left+26, ly, esc(name))
	}
}

// niceStep rounds a raw grid step up to 1, 2 or 5 times a power of ten.
func niceStep(raw float64) float64 {
	if raw <= 0 {
		return 1
	}
	p := math.Pow(10, math.Floor(math.Log10(raw)))
	for _, m := range []float64{1, 2, 5, 10} {
		if raw <= m*p {
			return m * p
		}
	}
	return 10 * p
}

// formatNum writes 12000 as "12,000" and 0.5 as "0.5".
func formatNum(v float64) string {
	if v != math.Trunc(v) {
		return strconv.FormatFloat(v, 'g', 3, 64)
	}
	s := strconv.FormatInt(int64(v), 10)
	for i := len(s) - 3; i > 0; i -= 3 {
		s = s[:i] + "," + s[i:]
	}
	return s
}

func esc(s string) string {
	return strings.NewReplacer("&", "&amp;", "<", "&lt;", ">", "&gt;", `"`, "&quot;").Replace(s)
}
