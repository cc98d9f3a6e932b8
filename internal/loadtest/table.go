package loadtest

import (
	"fmt"
	"io"
	"strings"
)

// Lossless says every run gave out every span it accepted.
func (rep *Report) Lossless() bool {
	for _, r := range rep.Runs {
		if !r.Lossless() {
			return false
		}
	}
	return len(rep.Runs) > 0
}

// find returns the run of a pipeline at an offered rate.
func (rep *Report) find(pipeline string, rate int) (Run, bool) {
	for _, r := range rep.Runs {
		if r.Pipeline == pipeline && r.Rate == rate {
			return r, true
		}
	}
	return Run{}, false
}

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
		rep.Traces, rep.Spans, float64(rep.Spans)/float64(rep.Traces), o.Batch, o.Senders, o.Duration, HoldTime)
	fmt.Fprintln(w, "| pipeline | offered | spans/s accepted | vs bare | CPU-s per 1M spans | vs bare | vs tail_sampling | peak RSS MB | vs tail_sampling | spans in | spans out | in = out |")
	fmt.Fprintln(w, "|---|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|---|")
	for _, r := range rep.Runs {
		bare, okB := rep.find(Bare, r.Rate)
		ts, okT := rep.find(TailSampling, r.Rate)
		okB = okB && r.Pipeline != Bare
		okT = okT && r.Pipeline != TailSampling
		fmt.Fprintf(w, "| %s | %s | %.0f | %s | %.2f | %s | %s | %.0f | %s | %d | %d | %s |\n",
			r.Pipeline, offered(r.Rate), r.SpansPerSec(), ratio(r.SpansPerSec(), bare.SpansPerSec(), okB),
			r.CPUPerMillion(), ratio(r.CPUPerMillion(), bare.CPUPerMillion(), okB), ratio(r.CPUPerMillion(), ts.CPUPerMillion(), okT),
			float64(r.PeakRSS)/1e6, ratio(float64(r.PeakRSS), float64(ts.PeakRSS), okT),
			r.Accepted, r.Out, yesNo(r.Lossless()))
	}

	fmt.Fprintln(w, "\nAgainst the targets of issue 16:")
	fmt.Fprintln(w, "\n| figure | measured | target |")
	fmt.Fprintln(w, "|---|---:|---:|")
	type pair struct{ a, b Run }
	get := func(p1, p2 string, rate int) (pair, bool) {
		a, ok1 := rep.find(p1, rate)
		b, ok2 := rep.find(p2, rate)
		return pair{a, b}, ok1 && ok2
	}
	if o.Rate > 0 {
		p, ok := get(Full, Bare, o.Rate)
		fmt.Fprintf(w, "| CPU-s per 1M spans, full pipeline / bare, at %d spans/s | %s | ≤ 1.3× |\n", o.Rate, ratio(p.a.CPUPerMillion(), p.b.CPUPerMillion(), ok))
	}
	if o.Saturation {
		p, ok := get(Full, Bare, 0)
		fmt.Fprintf(w, "| same, at saturation | %s | ≤ 1.5× |\n", ratio(p.a.CPUPerMillion(), p.b.CPUPerMillion(), ok))
		fmt.Fprintf(w, "| spans/s at saturation, full / bare | %s | ≥ 0.7× |\n", ratio(p.a.SpansPerSec(), p.b.SpansPerSec(), ok))
	}
	if o.Rate > 0 {
		p, ok := get(Full, TailSampling, o.Rate)
		fmt.Fprintf(w, "| peak RSS at %d spans/s, full / tail_sampling (same hold time) | %s | ≤ 0.4× |\n", o.Rate, ratio(float64(p.a.PeakRSS), float64(p.b.PeakRSS), ok))
	}
	retained := rep.RetainedPerSpan[BufferProto]
	fmt.Fprintf(w, "| retained bytes per buffered span / its OTLP protobuf size | %.0f B / %.0f B = %s | ≤ 1.5× |\n",
		retained, rep.ProtoBytesPerSpan, ratio(retained, rep.ProtoBytesPerSpan, true))

	fmt.Fprintf(w, "\nSizing check (handoffprocessor README): live heap of the buffer = spans buffered × the retained bytes per span (measured in process on %d spans: %.0f B with buffer_encoding proto, %.0f B with decoded); RSS = bare RSS + that × the factor below (Go heap headroom, in-flight requests and releases)\n\n",
		rep.RetainedSpansTotal, retained, rep.RetainedPerSpan[BufferDecoded])
	fmt.Fprintln(w, "| pipeline | offered | peak spans buffered | buffer live heap MB | peak heap MB | bare peak RSS MB | peak RSS MB | (RSS − bare) / buffer live heap |")
	fmt.Fprintln(w, "|---|---|---:|---:|---:|---:|---:|---:|")
	for _, r := range rep.Runs {
		if r.Buffer == "" {
			continue
		}
		live := float64(r.PeakBuffered) * rep.RetainedPerSpan[r.Buffer]
		bare, ok := rep.find(Bare, r.Rate)
		fmt.Fprintf(w, "| %s | %s | %d | %.0f | %.0f | %s | %.0f | %s |\n", r.Pipeline, offered(r.Rate), r.PeakBuffered, live/1e6, float64(r.PeakHeap)/1e6,
			mb(bare.PeakRSS, ok), float64(r.PeakRSS)/1e6, ratio(float64(r.PeakRSS-bare.PeakRSS), live, ok && live > 0))
	}
	fmt.Fprintf(w, "\nspans in = out in every run: %s\n", yesNo(rep.Lossless()))
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
