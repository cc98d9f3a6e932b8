package loadtest

import (
	"fmt"
	"io"
	"slices"
	"strings"
)

// Lossless says every run, the baseline binary's included, gave out every span it accepted.
func (rep *Report) Lossless() bool {
	for _, r := range append(slices.Clone(rep.Runs), rep.Baseline...) {
		if !r.Lossless() {
			return false
		}
	}
	return len(rep.Runs) > 0
}

// find returns the run of a pipeline at an offered rate in a round.
func (rep *Report) find(pipeline string, rate, round int) (Run, bool) {
	return findIn(rep.Runs, pipeline, rate, round)
}

// findIn returns the run of runs of a pipeline at an offered rate in a round.
func findIn(runs []Run, pipeline string, rate, round int) (Run, bool) {
	for _, r := range runs {
		if r.Pipeline == pipeline && r.Rate == rate && r.Round == round {
			return r, true
		}
	}
	return Run{}, false
}

// ratios is a figure of two pipelines' runs at an offered rate, a/b taken within each
// round that ran both, in round order.
func (rep *Report) ratios(a, b string, rate int, figure func(Run) float64) []float64 {
	var out []float64
	for round := 1; round <= rep.Options.rounds(); round++ {
		ra, okA := rep.find(a, rate, round)
		rb, okB := rep.find(b, rate, round)
		if okA && okB && figure(rb) != 0 {
			out = append(out, figure(ra)/figure(rb))
		}
	}
	return out
}

// median renders the median of ratios as "1.23×", with their range and count when there
// are several, or "—" without any.
func median(ratios []float64) string {
	if len(ratios) == 0 {
		return "—"
	}
	s := slices.Sorted(slices.Values(ratios))
	m := s[len(s)/2]
	if len(s)%2 == 0 {
		m = (s[len(s)/2-1] + s[len(s)/2]) / 2
	}
	if len(s) == 1 {
		return fmt.Sprintf("%.2f×", m)
	}
	return fmt.Sprintf("%.2f× (%.2f–%.2f×, %d rounds)", m, s[0], s[len(s)-1], len(s))
}

func peakRSS(r Run) float64 { return float64(r.PeakRSS) }

// ratio renders a/b as "1.23×", or "—" without both figures.
func ratio(a, b float64, ok bool) string {
	if !ok || b == 0 {
		return "—"
	}
	return fmt.Sprintf("%.2f×", a/b)
}

// Write prints the workload, one row per run, the figures of issue 16 against their
// targets, and the processor README's sizing formula checked against the measured RSS.
func (rep *Report) Write(w io.Writer) {
	o := rep.Options
	fmt.Fprintf(w, "workload: %d trace templates from the real captures, %d spans (%.0f spans/trace), %d traces per request, %d OTLP/HTTP senders, %s per run, quiet_period = decision_wait = %s\n\n",
		rep.Traces, rep.Spans, float64(rep.Spans)/float64(rep.Traces), o.Batch, o.Senders, o.Duration, o.hold())
	fmt.Fprintln(w, "| pipeline | offered | round | spans/s accepted | vs bare | CPU-s per 1M spans | vs bare | vs tail_sampling | peak RSS MB | vs tail_sampling | spans in | spans out | in = out |")
	fmt.Fprintln(w, "|---|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---|")
	for _, r := range rep.Runs {
		bare, okB := rep.find(Bare, r.Rate, r.Round)
		ts, okT := rep.find(TailSampling, r.Rate, r.Round)
		okB = okB && r.Pipeline != Bare
		okT = okT && r.Pipeline != TailSampling
		fmt.Fprintf(w, "| %s | %s | %d | %.0f | %s | %.2f | %s | %s | %.0f | %s | %d | %d | %s |\n",
			r.Pipeline, offered(r.Rate), r.Round, r.SpansPerSec(), ratio(r.SpansPerSec(), bare.SpansPerSec(), okB),
			r.CPUPerMillion(), ratio(r.CPUPerMillion(), bare.CPUPerMillion(), okB), ratio(r.CPUPerMillion(), ts.CPUPerMillion(), okT),
			float64(r.PeakRSS)/1e6, ratio(float64(r.PeakRSS), float64(ts.PeakRSS), okT),
			r.Accepted, r.Out, yesNo(r.Lossless()))
	}

	fmt.Fprintln(w, "\nAgainst the targets of issue 16 (each ratio within one round; the median of the rounds):")
	fmt.Fprintln(w, "\n| figure | measured | decoded buffer, same rounds | S2 buffer, same rounds | target |")
	fmt.Fprintln(w, "|---|---:|---:|---:|---:|")
	row := func(figure, target string, b string, rate int, of func(Run) float64) {
		fmt.Fprintf(w, "| %s | %s | %s | %s | %s |\n", figure, median(rep.ratios(Full, b, rate, of)), median(rep.ratios(FullDecoded, b, rate, of)),
			median(rep.ratios(FullS2, b, rate, of)), target)
	}
	if o.Rate > 0 {
		row(fmt.Sprintf("CPU-s per 1M spans, full pipeline / bare, at %d spans/s", o.Rate), "≤ 1.3×", Bare, o.Rate, Run.CPUPerMillion)
	}
	if o.Saturation {
		row("same, at saturation", "≤ 1.5×", Bare, 0, Run.CPUPerMillion)
		row("spans/s at saturation, full / bare", "≥ 0.7×", Bare, 0, Run.SpansPerSec)
	}
	if o.Rate > 0 {
		row(fmt.Sprintf("peak RSS at %d spans/s, full / tail_sampling (same hold time)", o.Rate), "≤ 0.4×", TailSampling, o.Rate, peakRSS)
	}
	retained, s2 := rep.RetainedPerSpan[BufferProto], rep.RetainedPerSpan[BufferProtoS2]
	fmt.Fprintf(w, "| retained bytes per buffered span / its OTLP protobuf size | %.0f B / %.0f B = %s | %.0f B = %s | %.0f B = %s; captures as they are: %.0f B / %.0f B = %s | ≤ 1.5× |\n",
		retained, rep.ProtoBytesPerSpan, ratio(retained, rep.ProtoBytesPerSpan, true),
		rep.RetainedPerSpan[BufferDecoded], ratio(rep.RetainedPerSpan[BufferDecoded], rep.ProtoBytesPerSpan, true),
		s2, ratio(s2, rep.ProtoBytesPerSpan, true), rep.S2AsIsPerSpan, rep.ProtoAsIsPerSpan, ratio(rep.S2AsIsPerSpan, rep.ProtoAsIsPerSpan, true))
	fmt.Fprintln(w, "\nThe S2 buffer's memory in this workload is lower than real traces give: each scaled template repeats its capture, and S2 finds the repeats. Real traces compress as the captures as they are do.")

	fmt.Fprintf(w, "\nSizing check (handoffprocessor README): live heap of the buffer = spans buffered × the retained bytes per span (measured in process on %d spans: %.0f B with buffer_encoding proto, %.0f B with decoded, %.0f B with proto_s2); RSS = bare RSS + that × the factor below (Go heap headroom, in-flight requests and releases)\n\n",
		rep.RetainedSpansTotal, retained, rep.RetainedPerSpan[BufferDecoded], s2)
	fmt.Fprintln(w, "| pipeline | offered | round | peak spans buffered | buffer live heap MB | peak heap MB | bare peak RSS MB | peak RSS MB | (RSS − bare) / buffer live heap |")
	fmt.Fprintln(w, "|---|---|---:|---:|---:|---:|---:|---:|---:|")
	for _, r := range rep.Runs {
		if r.Buffer == "" {
			continue
		}
		live := float64(r.PeakBuffered) * rep.RetainedPerSpan[r.Buffer]
		bare, ok := rep.find(Bare, r.Rate, r.Round)
		fmt.Fprintf(w, "| %s | %s | %d | %d | %.0f | %.0f | %s | %.0f | %s |\n", r.Pipeline, offered(r.Rate), r.Round, r.PeakBuffered, live/1e6, float64(r.PeakHeap)/1e6,
			mb(bare.PeakRSS, ok), float64(r.PeakRSS)/1e6, ratio(float64(r.PeakRSS-bare.PeakRSS), live, ok && live > 0))
	}
	rep.writeBaseline(w)
	fmt.Fprintf(w, "\nspans in = out in every run: %s\n", yesNo(rep.Lossless()))
}

// writeBaseline compares the binary with the baseline binary, when there is one: for each
// pipeline and offered rate, every round's CPU-s per 1M spans of both, then the binary's
// figures over the baseline's, each ratio taken within one round (the two ran back to
// back), the median of the rounds.
func (rep *Report) writeBaseline(w io.Writer) {
	if rep.Options.Baseline == "" {
		return
	}
	fmt.Fprintf(w, "\nAgainst the baseline binary %s (binary / baseline, each ratio within one round, where the two ran back to back; the median of the rounds):\n\n", rep.Options.Baseline)
	fmt.Fprintln(w, "| pipeline | offered | CPU-s per 1M spans, baseline | CPU-s per 1M spans, binary | CPU per span | spans/s accepted | peak RSS | in = out, baseline |")
	fmt.Fprintln(w, "|---|---|---|---|---:|---:|---:|---|")
	type key struct {
		pipeline string
		rate     int
	}
	var seen []key
	for _, r := range rep.Runs {
		if k := (key{r.Pipeline, r.Rate}); !slices.Contains(seen, k) {
			seen = append(seen, k)
		}
	}
	for _, k := range seen {
		var before, after []string
		var cpu, spans, rss []float64
		lossless := true
		for round := 1; round <= rep.Options.rounds(); round++ {
			a, okA := rep.find(k.pipeline, k.rate, round)
			b, okB := findIn(rep.Baseline, k.pipeline, k.rate, round)
			if !okA || !okB {
				continue
			}
			before = append(before, fmt.Sprintf("%.2f", b.CPUPerMillion()))
			after = append(after, fmt.Sprintf("%.2f", a.CPUPerMillion()))
			lossless = lossless && b.Lossless()
			if b.CPUPerMillion() > 0 && b.SpansPerSec() > 0 && b.PeakRSS > 0 {
				cpu = append(cpu, a.CPUPerMillion()/b.CPUPerMillion())
				spans = append(spans, a.SpansPerSec()/b.SpansPerSec())
				rss = append(rss, float64(a.PeakRSS)/float64(b.PeakRSS))
			}
		}
		fmt.Fprintf(w, "| %s | %s | %s | %s | %s | %s | %s | %s |\n", k.pipeline, offered(k.rate), strings.Join(before, ", "), strings.Join(after, ", "),
			median(cpu), median(spans), median(rss), yesNo(lossless && len(before) > 0))
	}
}

func mb(b int64, ok bool) string {
	if !ok {
		return "—"
	}
	return fmt.Sprintf("%.0f", float64(b)/1e6)
}

func yesNo(b bool) string {
	return map[bool]string{true: "yes", false: "NO"}[b]
}

// String is the report as Write prints it.
func (rep *Report) String() string {
	var b strings.Builder
	rep.Write(&b)
	return b.String()
}
