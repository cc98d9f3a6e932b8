package report

import (
	"bytes"
	"embed"
	"fmt"
	"html/template"
	"io/fs"
	"regexp"
	"sort"
	"strings"
	"sync"

	"github.com/otelcol-handoff/otelcol-handoff/internal/gate"
	"github.com/otelcol-handoff/otelcol-handoff/internal/rules"
	"github.com/otelcol-handoff/otelcol-handoff/internal/textsafe"
	"github.com/otelcol-handoff/otelcol-handoff/internal/verdict"
)

// assets holds the page template and, when the build had it, the Mermaid renderer (see
// assets/README.md).
//
//go:embed assets
var assets embed.FS

var pageTemplate = template.Must(template.ParseFS(assets, "assets/report.html.tmpl"))

// mermaidJS is the bundled renderer, made safe to inline in a <script> element (nil when
// the binary was built without it). Made on the first HTML report: a collector that writes
// none does not hold its 5.5 MB on the heap.
var mermaidJS = sync.OnceValue(loadMermaid)

func loadMermaid() []byte {
	b, err := assets.ReadFile("assets/mermaid.min.js")
	if err != nil {
		return nil
	}
	return inlineScript(b)
}

// inlineScript makes a script's text safe inside a <script> element: "</script" would end
// the element and "<!--" switch the parser's state. Both only occur in strings and regular
// expressions of the minified renderer, where \x3C is the same '<'.
func inlineScript(b []byte) []byte {
	b = regexp.MustCompile(`(?i)</script`).ReplaceAllFunc(b, func(m []byte) []byte {
		return append([]byte(`\x3C/`), m[2:]...)
	})
	return bytes.ReplaceAll(b, []byte("<!--"), []byte(`\x3C!--`))
}

// HasRenderer reports whether the HTML report carries the Mermaid renderer (the binary
// was built with assets/mermaid.min.js).
func HasRenderer() bool {
	_, err := fs.Stat(assets, "assets/mermaid.min.js")
	return err == nil
}

// HTML renders the run as one self-contained page: the verdict and totals, the gates, the
// failures grouped by case, the failure clusters (by cluster and signature, with each
// cluster's immediate_fix), and each drawn failing trace with its delegation DAG (the same
// Mermaid drawing as the Markdown report's) and the content of its handoffs behind a
// click, redacted as the logs are. Everything is inline: the style, the data, and the
// Mermaid renderer when the build bundled it (else each diagram shows as its source); the
// page's content security policy forbids every network request.
func (r *Run) HTML() []byte { return r.html(mermaidJS()) }

func (r *Run) html(renderer []byte) []byte {
	r.mu.Lock()
	defer r.mu.Unlock()
	p := r.page()
	if renderer != nil {
		p.Mermaid = template.JS(renderer) //nolint:gosec // the pinned renderer, made safe by inlineScript
	}
	var b bytes.Buffer
	if err := pageTemplate.Execute(&b, p); err != nil {
		// The template and its data are ours: an error is a bug, shown in the page.
		return []byte("<!DOCTYPE html><title>report error</title><pre>" + template.HTMLEscapeString(err.Error()) + "</pre>")
	}
	return b.Bytes()
}

type htmlPage struct {
	Verdict, Summary string
	Cases            []htmlCount
	Total            htmlCount
	Judge            string
	Gates            []htmlGate
	Groups           []htmlGroup
	Unlisted         int
	Clusters         []htmlCluster
	Signatures       []htmlSignature
	Traces           []htmlTrace
	Mermaid          template.JS
}

type htmlCount struct {
	Name                       string
	Pass, Fail, Error, Skipped int
}

type htmlGate struct {
	Pair, Axis, Score, Threshold, Verdict string
	Samples                               int
}

type htmlGroup struct {
	Case, Anchor string
	Count        int
	Rows         []htmlRow
}

type htmlRow struct {
	Assertion, TraceID, Where, Outcome, OutcomeText, Expected, Actual, Message string
	Drawn                                                                      bool
}

type htmlTrace struct {
	TraceID, Service, Source, Failed, Graph string
	// TooLarge says why the trace's diagram is not drawn (empty: Graph is drawn).
	TooLarge string
	Notes    []string
	Handoffs []htmlHandoff
}

type htmlHandoff struct {
	Title  string
	Failed bool
	Parts  []htmlPart
}

type htmlPart struct{ Label, Text string }

// page gathers the page's data (r.mu held). Text from spans is escaped (control and bidi
// characters shown as escapes); the template escapes it for HTML.
func (r *Run) page() htmlPage {
	v := r.verdict()
	t, gates, gc := v.Counts, v.Gates, verdict.CountGates(v.Gates)
	total := t.Total()
	p := htmlPage{Verdict: "PASSED"}
	if v.Failed(verdict.DefaultFailOn()) {
		p.Verdict = "FAILED"
	}
	summary := fmt.Sprintf("%s over %s", textsafe.Plural(total, "assertion", "assertions"), textsafe.Plural(r.traces, "trace", "traces"))
	if r.incomplete > 0 {
		summary += fmt.Sprintf(" (%d released incomplete)", r.incomplete)
	}
	summary += fmt.Sprintf(": %d passed, %d failed, %d errored, %d skipped.", t.Pass, t.Fail, t.Error, t.Skipped)
	if gated := t.Gated; gated > 0 {
		summary += fmt.Sprintf(" %s per-handoff rubric scores that the gates decide.", textsafe.Plural(gated, "failure is one of the", "failures are"))
	}
	if len(gates) > 0 && r.gates.Enabled() {
		summary += fmt.Sprintf(" Gates: %d of %d failed.", gc.Failed, gc.Decided)
	}
	p.Summary = summary
	for _, c := range r.cases {
		n := r.byCase[c]
		p.Cases = append(p.Cases, htmlCount{htmlName(c), n.Pass, n.Fail, n.Error, n.Skipped})
	}
	p.Total = htmlCount{"total", t.Pass, t.Fail, t.Error, t.Skipped}
	if len(gates) > 0 || r.gates.Enabled() {
		p.Judge = "No judge is configured: scores come from the deterministic checks alone (0 or 1)."
		if r.judge != nil {
			p.Judge = fmt.Sprintf("Judge: %s, prompt template %s, temperature 0, %s per verdict (majority).",
				htmlName(r.judge.Model), r.judge.Template, textsafe.Plural(r.judge.Samples, "sample", "samples"))
		}
		for _, g := range gates {
			hg := htmlGate{Pair: htmlName(g.Pair()), Axis: g.Axis, Score: fmt.Sprintf("%.2f", g.Score), Threshold: "–", Samples: g.Samples}
			if g.Threshold != nil {
				hg.Threshold = fmt.Sprintf("%.2f", *g.Threshold)
			}
			switch g.Status {
			case gate.Pass:
				hg.Verdict = "pass"
			case gate.Fail:
				hg.Verdict = "FAIL"
			case gate.Insufficient:
				hg.Verdict = "too few handoffs (min_samples)"
			default:
				hg.Verdict = "no threshold"
			}
			p.Gates = append(p.Gates, hg)
		}
		if len(gates) == 0 {
			p.Gates = nil
		}
	}

	listed := 0
	groupOf := map[string]int{}
	failedBy := map[string][]string{}
	for _, rec := range r.sorted() {
		if rec.Outcome != rules.Fail && rec.Outcome != rules.Error {
			continue
		}
		key := rec.Case + "/" + rec.Step
		if list := failedBy[rec.TraceID]; len(list) == 0 || list[len(list)-1] != key {
			failedBy[rec.TraceID] = append(list, key)
		}
		if listed == MaxFailureRows {
			continue
		}
		listed++
		gi, ok := groupOf[rec.Case]
		if !ok {
			gi = len(p.Groups)
			groupOf[rec.Case] = gi
			p.Groups = append(p.Groups, htmlGroup{Case: htmlName(rec.Case), Anchor: anchor(rec.Case)})
		}
		outcome := string(rec.Outcome)
		if rec.Gated && rec.Outcome == rules.Fail {
			outcome += " (gated)"
		}
		row := htmlRow{
			Assertion: htmlText(stepName(rec.Result)), TraceID: rec.TraceID, Outcome: string(rec.Outcome), OutcomeText: outcome,
			Expected: htmlText(rec.Expected), Actual: htmlText(rec.Actual), Message: htmlText(rec.Message),
		}
		if d := r.pictures[rec.TraceID]; d != nil {
			row.Drawn = true
			row.Where = strings.Join(traceTitle(d, htmlName), ", ")
		} else if src := r.sources[rec.TraceID]; src != "" {
			row.Where = "file " + htmlName(src)
		}
		p.Groups[gi].Rows = append(p.Groups[gi].Rows, row)
		p.Groups[gi].Count++
	}
	if all := t.Fail + t.Error; listed < all {
		p.Unlisted = all - listed
	}
	r.htmlClusters(&p)
	for _, id := range r.pictureIDs() {
		d := r.pictures[id]
		ht := htmlTrace{TraceID: id, Service: htmlName(d.service), Source: htmlName(d.source)}
		if graph, ok := drawable(d); ok {
			ht.Graph = graph
		} else {
			ht.TooLarge = tooLargeMessage(d)
		}
		for _, n := range d.notes {
			ht.Notes = append(ht.Notes, htmlText(n))
		}
		if f := failedBy[id]; len(f) > 0 {
			more := ""
			if len(f) > 10 {
				more = fmt.Sprintf(" and %d more", len(f)-10)
				f = f[:10]
			}
			ht.Failed = htmlText(strings.Join(f, ", ")) + more
		}
		for _, e := range d.edges {
			if len(e.content) == 0 && !e.failed() {
				continue
			}
			h := htmlHandoff{Failed: e.failed(), Title: fmt.Sprintf("%s → %s (%s)", htmlName(d.nodes[e.from].name),
				htmlName(d.nodes[e.to].name), htmlName(e.detection))}
			if e.failed() {
				h.Title += ": ✗ " + htmlText(strings.Join(e.failures, "; "))
			}
			for _, c := range e.content {
				h.Parts = append(h.Parts, htmlPart{Label: htmlName(c.label), Text: multiline(c.text)})
			}
			if len(h.Parts) == 0 {
				h.Parts = []htmlPart{{Label: "no content captured on this handoff", Text: ""}}
			}
			ht.Handoffs = append(ht.Handoffs, h)
		}
		p.Traces = append(p.Traces, ht)
	}
	return p
}

// pictureIDs are the drawn traces' ids in order.
func (r *Run) pictureIDs() []string {
	ids := make([]string, 0, len(r.pictures))
	for id := range r.pictures {
		ids = append(ids, id)
	}
	sort.Strings(ids)
	return ids
}

// htmlText is one line of span-derived text (a message, an expected or actual value), at
// most 4*maxCell characters (see line; the template escapes for HTML).
func htmlText(s string) string { return line(s, 4*maxCell) }

// htmlName is a name from span data (a service, a file, an agent, a case) as one line of
// at most maxCell characters, as the Markdown report writes it (see line; the template
// escapes for HTML).
func htmlName(s string) string { return line(s, maxCell) }

// multiline escapes each line of a text and keeps the line breaks.
func multiline(s string) string {
	lines := strings.Split(s, "\n")
	for i, l := range lines {
		lines[i] = textsafe.Escape(l)
	}
	return strings.Join(lines, "\n")
}

var nonAnchor = regexp.MustCompile(`[^A-Za-z0-9_-]+`)

// anchor is an id for a case's heading.
func anchor(s string) string { return nonAnchor.ReplaceAllString(s, "_") }
