package report

import (
	"bytes"
	"fmt"
	"math"
	"sort"
	"strconv"
	"strings"

	"github.com/otelcol-handoff/otelcol-handoff/internal/gate"
	"github.com/otelcol-handoff/otelcol-handoff/internal/rules"
	"github.com/otelcol-handoff/otelcol-handoff/internal/textsafe"
	"github.com/otelcol-handoff/otelcol-handoff/internal/verdict"
)

// maxCell bounds one Markdown table cell.
const maxCell = 160

// Markdown renders the run as a Markdown summary: the verdict and totals, a table per case,
// a table of failures and errors (at most MaxFailureRows), the failures grouped by cluster
// and signature (clusterSection), and a Mermaid `graph TD` of each
// failing trace's delegation DAG (at most MaxPictures) headed by its service and span file,
// after a legend: each failure drawn where it happened with a short reason (see
// locateFailures), the agents' run figures in their boxes, orchestration wrappers drawn as
// subgraphs.
func (r *Run) Markdown() []byte {
	r.mu.Lock()
	defer r.mu.Unlock()
	var b bytes.Buffer
	v := r.verdict()
	t, gates, gc := v.Counts, v.Gates, verdict.CountGates(v.Gates)
	total := t.Total()
	status := "PASSED"
	if v.Failed(verdict.DefaultFailOn()) {
		status = "FAILED"
	}
	b.WriteString("# Assertion report\n\n")
	fmt.Fprintf(&b, "**%s**: %s over %s", status, textsafe.Plural(total, "assertion", "assertions"), textsafe.Plural(r.traces, "trace", "traces"))
	if r.incomplete > 0 {
		fmt.Fprintf(&b, " (%d released incomplete)", r.incomplete)
	}
	fmt.Fprintf(&b, ": %d passed, %d failed, %d errored, %d skipped.", t.Pass, t.Fail, t.Error, t.Skipped)
	if gated := t.Gated; gated > 0 {
		fmt.Fprintf(&b, " %s per-handoff rubric scores that the gates decide.", textsafe.Plural(gated, "failure is one of the", "failures are"))
	}
	if n := len(gates); n > 0 && r.gates.Enabled() {
		fmt.Fprintf(&b, " Gates: %d of %d failed.", gc.Failed, gc.Decided)
	}
	b.WriteString("\n\n")

	b.WriteString("| case | pass | fail | error | skipped |\n|---|---:|---:|---:|---:|\n")
	for _, c := range r.cases {
		n := r.byCase[c]
		fmt.Fprintf(&b, "| %s | %d | %d | %d | %d |\n", cell(c), n.Pass, n.Fail, n.Error, n.Skipped)
	}
	fmt.Fprintf(&b, "| **total** | %d | %d | %d | %d |\n", t.Pass, t.Fail, t.Error, t.Skipped)
	r.gateSection(&b, gates)

	var failures []record
	for _, rec := range r.sorted() {
		if rec.Outcome == rules.Fail || rec.Outcome == rules.Error {
			failures = append(failures, rec)
		}
	}
	if len(failures) == 0 && t.Fail+t.Error == 0 {
		return b.Bytes()
	}
	b.WriteString("\n## Failures\n\n")
	b.WriteString("| case | assertion | trace | outcome | expected | actual | message |\n|---|---|---|---|---|---|---|\n")
	for i, rec := range failures {
		if i == MaxFailureRows {
			break
		}
		outcome := string(rec.Outcome)
		if rec.Gated && rec.Outcome == rules.Fail {
			outcome += " (gated)"
		}
		fmt.Fprintf(&b, "| %s | %s | `%s` | %s | %s | %s | %s |\n", cell(rec.Case), cell(stepName(rec.Result)), rec.TraceID,
			outcome, cell(rec.Expected), cell(rec.Actual), cell(rec.Message))
	}
	if listed := min(len(failures), MaxFailureRows); listed < t.Fail+t.Error {
		fmt.Fprintf(&b, "\n%d more failures and errors are not listed here; see the JUnit or JSON-lines report.\n",
			t.Fail+t.Error-listed)
	}
	r.clusterSection(&b)

	ids := make([]string, 0, len(r.pictures))
	for id := range r.pictures {
		ids = append(ids, id)
	}
	sort.Strings(ids)
	if len(ids) == 0 {
		return b.Bytes()
	}
	b.WriteString("\n## Failing traces\n\n")
	b.WriteString(legendMessage + "\n")
	failedBy := map[string][]string{}
	for _, rec := range failures {
		key := rec.Case + "/" + rec.Step
		list := failedBy[rec.TraceID]
		if len(list) == 0 || list[len(list)-1] != key {
			failedBy[rec.TraceID] = append(list, key)
		}
	}
	for _, id := range ids {
		d := r.pictures[id]
		fmt.Fprintf(&b, "\n### Trace `%s`", id)
		if t := traceTitle(d, cell); len(t) > 0 {
			b.WriteString(" (" + strings.Join(t, ", ") + ")")
		}
		b.WriteString("\n\n")
		if f := failedBy[id]; len(f) > 0 {
			more := ""
			if len(f) > 10 {
				more = fmt.Sprintf(" and %d more", len(f)-10)
				f = f[:10]
			}
			for i := range f {
				f[i] = cellN(f[i], maxCell)
			}
			fmt.Fprintf(&b, "Failed: %s%s\n\n", strings.Join(f, ", "), more)
		}
		for _, n := range d.notes {
			fmt.Fprintf(&b, "- not drawn: %s\n", cellN(n, maxCell))
		}
		if len(d.notes) > 0 {
			b.WriteString("\n")
		}
		if graph, ok := drawable(d); ok {
			b.WriteString("```mermaid\n" + graph + "```\n")
		} else {
			b.WriteString(tooLargeMessage(d) + "\n")
		}
	}
	return b.Bytes()
}

// gateSection writes the gates: the judge, then one row per pair and axis with its mean
// score, threshold, number of scored handoffs and verdict.
func (r *Run) gateSection(b *bytes.Buffer, gates []gate.Result) {
	if len(gates) == 0 && !r.gates.Enabled() {
		return
	}
	b.WriteString("\n## Gates\n\n")
	if r.judge != nil {
		fmt.Fprintf(b, "Judge: %s, prompt template `%s`, temperature 0, %s per verdict (majority).\n\n",
			code(r.judge.Model, 80), r.judge.Template, textsafe.Plural(r.judge.Samples, "sample", "samples"))
	} else {
		b.WriteString("No judge is configured: scores come from the deterministic checks alone (0 or 1).\n\n")
	}
	if len(gates) == 0 {
		b.WriteString("No handoff was scored in this run.\n")
		return
	}
	b.WriteString("| pair | axis | mean score | threshold | handoffs | gate |\n|---|---|---:|---:|---:|---|\n")
	for _, g := range gates {
		threshold, verdict := "–", "no threshold"
		if g.Threshold != nil {
			threshold = fmt.Sprintf("%.2f", *g.Threshold)
		}
		switch g.Status {
		case gate.Pass:
			verdict = "pass"
		case gate.Fail:
			verdict = "**FAIL**"
		case gate.Insufficient:
			verdict = "too few handoffs (min_samples)"
		}
		fmt.Fprintf(b, "| %s | %s | %.2f | %s | %d | %s |\n", cell(g.Pair()), g.Axis, g.Score, threshold, g.Samples, verdict)
	}
}

// stepName names a result's assertion; a rubric result names its handoff too.
func stepName(res rules.Result) string {
	if res.From == "" {
		return res.Step
	}
	name := res.Step + " " + res.From + " -> " + res.To
	if len(res.Spans) > 0 {
		name += " (span " + res.Spans[0] + ")"
	}
	return name
}

// Mermaid's own bounds on one diagram, as the HTML report sets them (assets/report.html.tmpl)
// and as GitHub draws a Markdown summary's diagrams (Mermaid's defaults): a longer source is
// drawn as the one box "Maximum text size in diagram exceeded", more arrows are an error.
const (
	maxDiagramText  = 50_000
	maxDiagramEdges = 500
)

// drawable is the DAG's Mermaid source (see mermaidGraph), and false when Mermaid would not
// draw it (over maxDiagramText or maxDiagramEdges).
func drawable(d *dag) (string, bool) {
	if len(d.edges) > maxDiagramEdges {
		return "", false
	}
	graph := mermaidGraph(d)
	// The length Mermaid checks is in UTF-16 code units, never more than the bytes here.
	return graph, len(graph) <= maxDiagramText
}

// tooLargeMessage is written in place of a diagram that Mermaid would not draw.
func tooLargeMessage(d *dag) string {
	return fmt.Sprintf("Diagram too large to draw: %s, %s; see the failures table.",
		textsafe.Plural(len(d.nodes), "agent", "agents"), textsafe.Plural(len(d.edges), "handoff", "handoffs"))
}

// Colours of the drawing: a failure in red, passing parts neutral.
const (
	failedStyle   = "fill:#fde2e2,stroke:#c0392b,stroke-width:2px,color:#000"
	failedLink    = "stroke:#c0392b,stroke-width:3px,color:#c0392b"
	erroredStyle  = "stroke:#e67e22,stroke-width:2px,stroke-dasharray:4 3"
	failedColour  = "#c0392b"
	legendMessage = "Red box: an agent where an assertion failed, with the reason; thick red arrow: a handoff " +
		"where one failed (a leak, a cycle, a chain over maxDepth), with the reason; grey: passed or not asserted; " +
		"an arrow's label says how the handoff was detected; dashed orange border: the agent's span " +
		"recorded an error; a box around agents: an orchestration wrapper (swarm, graph, workflow). " +
		"Figures: the agent's own tokens, tool calls, duration and, when its calls are priced, cost (≥: a model had no price)."
)

// mermaidGraph draws a DAG as a Mermaid `graph TD`: one box per agent invocation with its
// run figures, grouped in one `subgraph` per orchestration wrapper (see writeNodes), one
// arrow per handoff labelled with how it was detected. Each failure is drawn where it
// happened (see locateFailures): the agent's box (class "failed") or the handoff's arrow
// (thick, red, labelled with the reason); everything else stays neutral.
func mermaidGraph(d *dag) string {
	var b strings.Builder
	b.WriteString("graph TD\n")
	if len(d.nodes) == 0 {
		b.WriteString("  none[\"no agent spans\"]\n")
	}
	var failedNodes, erroredNodes []string
	for i, n := range d.nodes {
		switch {
		case n.failed():
			failedNodes = append(failedNodes, fmt.Sprintf("n%d", i))
		case n.errored:
			erroredNodes = append(erroredNodes, fmt.Sprintf("n%d", i))
		}
	}
	writeNodes(&b, d)
	var failedLinks []string
	for i, e := range d.edges {
		if e.failed() {
			fmt.Fprintf(&b, "  n%d ==>|\"%s\"| n%d\n", e.from, reasonsText(e.failures), e.to)
			failedLinks = append(failedLinks, fmt.Sprint(i))
		} else {
			fmt.Fprintf(&b, "  n%d -->|\"%s\"| n%d\n", e.from, mermaidText(e.detection), e.to)
		}
	}
	if len(failedNodes) > 0 {
		b.WriteString("  classDef failed " + failedStyle + "\n")
		fmt.Fprintf(&b, "  class %s failed\n", strings.Join(failedNodes, ","))
	}
	if len(erroredNodes) > 0 {
		b.WriteString("  classDef errored " + erroredStyle + "\n")
		fmt.Fprintf(&b, "  class %s errored\n", strings.Join(erroredNodes, ","))
	}
	if len(failedLinks) > 0 {
		fmt.Fprintf(&b, "  linkStyle %s %s\n", strings.Join(failedLinks, ","), failedLink)
	}
	return b.String()
}

// maxReasons is the number of reasons drawn at one place; more are counted.
const maxReasons = 3

// reasonsText is the label of a failure's place: each reason on its line, marked ✗.
func reasonsText(reasons []string) string {
	var lines []string
	for i, r := range reasons {
		if i == maxReasons {
			lines = append(lines, fmt.Sprintf("and %d more", len(reasons)-maxReasons))
			break
		}
		lines = append(lines, "✗ "+mermaidText(r))
	}
	return strings.Join(lines, "<br/>")
}

// figures are a node's run figures: tokens, tool calls, duration, and the cost when some of
// its calls are priced ("≥ $x" when others are not; nothing when none is, so an absent cost
// is unknown, never $0).
func figures(n dagNode) string {
	if n.remote {
		return ""
	}
	duration := formatDuration(n.durationMs)
	if n.durationUnknown {
		duration = "duration unknown"
	}
	out := fmt.Sprintf("%s tok · %s · %s", formatCount(n.tokens), textsafe.Plural(int(n.toolCalls), "tool call", "tool calls"), duration)
	switch {
	case n.costUSD == 0:
	case n.unpriced > 0:
		out += " · ≥ $" + formatUSD(n.costUSD)
	default:
		out += " · $" + formatUSD(n.costUSD)
	}
	return out
}

// formatUSD writes an amount rounded to 4 significant digits, in plain decimals
// (0.0000314, not 3.14e-05).
func formatUSD(v float64) string {
	if v <= 0 {
		return "0"
	}
	unit := math.Pow(10, math.Floor(math.Log10(v))-3)
	return strconv.FormatFloat(math.Round(v/unit)*unit, 'f', -1, 64)
}

func formatCount(n int64) string {
	s := fmt.Sprint(n)
	if n < 10000 {
		return s
	}
	var out []byte
	for i := range s {
		if i > 0 && (len(s)-i)%3 == 0 {
			out = append(out, ',')
		}
		out = append(out, s[i])
	}
	return string(out)
}

func formatDuration(ms float64) string {
	switch {
	case ms < 1000:
		return fmt.Sprintf("%.0f ms", ms)
	case ms < 60000:
		return fmt.Sprintf("%.1f s", ms/1000)
	}
	return fmt.Sprintf("%.1f min", ms/60000)
}

// traceTitle names a trace with its service and source file, when known, each made safe
// by escape (cell, htmlName).
func traceTitle(d *dag, escape func(string) string) []string {
	var out []string
	if d.service != "" {
		out = append(out, "service "+escape(d.service))
	}
	if d.source != "" {
		out = append(out, "file "+escape(d.source))
	}
	return out
}

// writeNodes writes one box per agent invocation in index order; an invocation inside an
// orchestration wrapper is written, with every other agent of its outermost wrapper, in a
// `subgraph` per wrapper (nested wrappers nested), where the first of them comes. Arrows
// come after all the boxes, so they do not move a box into or out of a group.
func writeNodes(b *strings.Builder, d *dag) {
	groupOf := make([]int, len(d.nodes))
	for i := range groupOf {
		groupOf[i] = -1
	}
	for gi, g := range d.groups {
		for _, m := range g.members {
			groupOf[m] = gi
		}
	}
	// first is the smallest node index in each group, nested groups included (a group is
	// listed before the groups in it, so a backward pass sees the inner ones first).
	first := make([]int, len(d.groups))
	for gi := len(d.groups) - 1; gi >= 0; gi-- {
		first[gi] = len(d.nodes)
		for _, m := range d.groups[gi].members {
			first[gi] = min(first[gi], m)
		}
		for _, c := range d.groups[gi].children {
			first[gi] = min(first[gi], first[c])
		}
	}
	node := func(i int, indent string) {
		n := d.nodes[i]
		label := "<b>" + mermaidText(n.name) + "</b>"
		if n.errored {
			label += " (error)"
		}
		if f := figures(n); f != "" {
			label += "<br/>" + f
		}
		if n.failed() {
			label += "<br/>" + reasonsText(n.failures)
		}
		fmt.Fprintf(b, "%sn%d[\"%s\"]\n", indent, i, label)
	}
	var group func(gi int, indent string)
	group = func(gi int, indent string) {
		g := d.groups[gi]
		label := g.kind
		if g.name != "" {
			label += ": " + g.name
		}
		fmt.Fprintf(b, "%ssubgraph w%d[\"%s\"]\n", indent, gi, mermaidText(label))
		type item struct{ key, node, group int }
		var items []item
		for _, m := range g.members {
			items = append(items, item{key: m, node: m, group: -1})
		}
		for _, c := range g.children {
			items = append(items, item{key: first[c], node: -1, group: c})
		}
		sort.Slice(items, func(i, j int) bool { return items[i].key < items[j].key })
		for _, it := range items {
			if it.group >= 0 {
				group(it.group, indent+"  ")
			} else {
				node(it.node, indent+"  ")
			}
		}
		fmt.Fprintf(b, "%send\n", indent)
	}
	written := make([]bool, len(d.groups))
	for i := range d.nodes {
		gi := groupOf[i]
		if gi < 0 {
			node(i, "  ")
			continue
		}
		for d.groups[gi].parent >= 0 {
			gi = d.groups[gi].parent
		}
		if !written[gi] {
			written[gi] = true
			group(gi, "  ")
		}
	}
}

// mermaidText makes trace data safe inside a quoted Mermaid label and a Markdown fence: one
// line of at most 60 characters (see line) whose quotes, markup, backticks and pipes are
// Mermaid entity codes, and whose "#" and "&" are too, so that a name such as
// "#lt;b#gt;" or "&lt;b&gt;" is drawn as written, not decoded into "<b>".
func mermaidText(s string) string {
	return mermaidEscaper.Replace(line(s, 60))
}

var mermaidEscaper = strings.NewReplacer(`#`, "#35;", `&`, "#38;", `"`, "#quot;", "<", "#lt;", ">", "#gt;", "`", "#96;", "|", "#124;")

// cell makes span-derived text safe for one Markdown table cell: one line of at most maxCell
// characters (see line: control, bidi and invisible characters escaped, a newline shows as
// \n). `Code spans` are kept, with their pipes escaped; outside them every character that
// Markdown or GitHub's extensions would act on is backslash-escaped (markdownEscaper), so
// the text can open no link, image, emphasis, strikethrough, HTML, entity, autolink or new
// cell.
func cell(s string) string { return cellN(s, maxCell) }

func cellN(s string, n int) string {
	s = line(s, n)
	parts := strings.Split(s, "`")
	if len(parts)%2 == 0 { // an unpaired backtick (e.g. cut by the truncation) is text
		parts[len(parts)-2] += "`" + parts[len(parts)-1]
		parts = parts[:len(parts)-1]
	}
	var b strings.Builder
	for i, p := range parts {
		// An empty code span ("``") is text: written as a span, its two backticks would be
		// one run of two, which CommonMark pairs with the next run of two, and the kept
		// spans would no longer open and close where they are written here (the text of
		// one could end up outside any span, unescaped).
		if i%2 == 1 && p != "" {
			b.WriteString("`" + strings.ReplaceAll(p, "|", `\|`) + "`")
			continue
		}
		if i%2 == 1 {
			p = "``"
		}
		b.WriteString(markdownEscaper.Replace(p))
	}
	return b.String()
}

// code writes span-derived text as one Markdown code span outside a table (at most n
// characters, see line): its fence is longer than any run of backticks in it.
func code(s string, n int) string {
	s = line(s, n)
	longest, run := 0, 0
	for _, c := range s {
		if c == '`' {
			run++
			longest = max(longest, run)
		} else {
			run = 0
		}
	}
	fence := strings.Repeat("`", longest+1)
	if longest > 0 {
		return fence + " " + s + " " + fence
	}
	return fence + s + fence
}

// markdownEscaper backslash-escapes, in text outside code spans, every character that can
// start Markdown inline syntax: \ ` * _ ~ (emphasis, code, strikethrough), [ ] ( ) ! (links,
// images), < > & (HTML, autolinks, entities), | (a new cell), # $ @ (headings, math,
// mentions); and it breaks GitHub's extended autolinks of bare http://, https://, ftp://
// and www. addresses (their ":" or "." escaped).
var markdownEscaper = strings.NewReplacer(
	`\`, `\\`, "`", "\\`", "*", `\*`, "_", `\_`, "~", `\~`,
	"[", `\[`, "]", `\]`, "(", `\(`, ")", `\)`, "!", `\!`,
	"<", `\<`, ">", `\>`, "&", `\&`, "|", `\|`, "#", `\#`, "$", `\$`, "@", `\@`,
	"://", `\://`, "www.", `www\.`,
)

// line is span-derived text as one line of at most n characters: control, bidi and
// invisible characters escaped (textsafe.Escape), each run of white space one space, a cut
// marked "…". Only the first bytes of a long text are read, so a name of 10 MB costs no
// more than a short one (at 4 bytes a character and the white space collapsed, the cut
// may come sooner than n characters).
func line(s string, n int) string {
	cut := false
	if limit := 4*n + 64; len(s) > limit {
		s, cut = textsafe.Cut(s, limit), true
	}
	s = strings.Join(strings.Fields(textsafe.Escape(s)), " ")
	if t := truncateRunes(s, n); t != s || !cut {
		return t
	}
	return s + "…"
}

// truncateRunes cuts s after n characters and marks the cut with "…"; it reads only as far
// as the cut.
func truncateRunes(s string, n int) string {
	count := 0
	for i := range s {
		if count == n {
			return s[:i] + "…"
		}
		count++
	}
	return s
}
