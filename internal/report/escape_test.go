package report

import (
	"bytes"
	"fmt"
	"html"
	"math/rand"
	"os/exec"
	"regexp"
	"strings"
	"testing"
	"unicode/utf8"

	"github.com/stretchr/testify/require"

	"github.com/otelcol-handoff/otelcol-handoff/internal/rules"
	tr "github.com/otelcol-handoff/otelcol-handoff/internal/rules/rulestest"
)

// hostileNames are agent names that would be live Markdown, HTML or GitHub autolinks if
// written as they are.
var hostileNames = []string{
	"[Approve](https://evil.example) ![t](https://evil.example/p.png) _x_",
	"*em* **strong** ~~del~~ <b>html</b> &amp; &#x3C;img&#x3E; <https://evil.example>",
	"bare https://evil.example/p and www.evil.example ftp://evil.example",
	"`[code](https://evil.example)```z``", // backticks that CommonMark would pair otherwise
	"[ref]: https://evil.example # heading | a | b | $x$ @octocat #1 \\[esc\\]",
	"tri\u200bage\ufeff",
	"#lt;a href=https://evil.example#gt;click#lt;/a#gt; &lt;i&gt;", // Mermaid's entity codes
}

// hostileRun is a run with one failing trace whose service, file, agents and message carry
// hostileNames.
func hostileRun(t *testing.T) *Run {
	t.Helper()
	b := tr.New(0x21)
	b.Resource().PutStr("service.name", hostileNames[0])
	root := b.Agent(nil, "triage", 0, 100)
	id := strings.Repeat("21", 16)
	var results []rules.Result
	for i, name := range hostileNames {
		b.Agent(root, name, 10+i, 90)
		results = append(results, rules.Result{
			TraceID: id, Case: "c", Step: fmt.Sprintf("s%d", i), Outcome: rules.Fail, Complete: true,
			From: "triage", To: name, Expected: "delegation to " + name, Actual: name,
			Message: "agent " + name + " was not expected",
		})
	}
	run := NewRun([]string{"c"})
	run.SetSource(id, hostileNames[2]+".json")
	run.Add(b.Graph(), results)
	return run
}

// withoutMermaid drops the ```mermaid fences (their text is Mermaid's, not Markdown).
func withoutMermaid(md string) string {
	return regexp.MustCompile("(?s)```mermaid\n.*?```\n").ReplaceAllString(md, "")
}

// TestMarkdownSpanTextStaysText: names and messages from spans open no link, image,
// emphasis, code, HTML, entity or autolink in the Markdown report: every character Markdown
// acts on is backslash-escaped (the literal checks), and GitHub's own parser, when it is
// installed (cmark-gfm), finds none of those in the rendered page.
func TestMarkdownSpanTextStaysText(t *testing.T) {
	md := string(hostileRun(t).Markdown())
	text := withoutMermaid(md)
	require.Contains(t, text, `agent \[Approve\]\(https\://evil.example\) \!\[t\]\(https\://evil.example/p.png\) \_x\_ was not expected`)
	require.Contains(t, text, `\*em\* \*\*strong\*\* \~\~del\~\~ \<b\>html\</b\> \&amp; \&\#x3C;img\&\#x3E; \<https\://evil.example\>`)
	require.Contains(t, text, `bare https\://evil.example/p and www\.evil.example ftp\://evil.example`)
	require.Contains(t, text, `\[ref\]: https\://evil.example \# heading \| a \| b \| \$x\$ \@octocat \#1 \\\[esc\\\]`)
	require.Contains(t, text, `tri\\u200bage\\ufeff`, "the zero width space and the BOM show as escapes")
	require.Contains(t, text, "(service \\[Approve\\]\\(https\\://evil.example\\)", "the trace's heading")
	// Without its escaped characters and its code spans, the text has none of the live
	// constructs left.
	bare := regexp.MustCompile("`[^`]+`").ReplaceAllString(regexp.MustCompile(`\\.`).ReplaceAllString(text, ""), "")
	for _, live := range []string{"](", "![", "<b>", "<https", "&amp;", "&#", "**strong", "~~", "_x_", "\u200b", "://", "www.", "$x$", "@octocat", "#1"} {
		require.NotContains(t, bare, live)
	}

	// A diagram's labels cannot decode to markup: "#" is an entity code too.
	require.Contains(t, md, "#lt;b#gt;html#lt;/b#gt; #38;amp; #38;#35;x3C;img#38;#35;x3E;")

	htm := cmarkGFM(t, md)
	htm = strings.NewReplacer("<strong>FAILED</strong>", "", "<strong>total</strong>", "").Replace(htm)
	for _, tag := range []string{"<a ", "<img", "<em>", "<strong>", "<del>", "<b>", "<h4", "<script", "\u200b"} {
		require.NotContains(t, htm, tag)
	}
	require.Equal(t, 1, strings.Count(htm, "<h1>"), "only the report's title")
	require.Contains(t, htm, "agent [Approve](https://evil.example) ![t](https://evil.example/p.png) _x_ was not expected",
		"the name is shown as it is")
	requireTableCells(t, htm)
}

// TestCellEscapesEveryActiveCharacter: random text made of Markdown's active characters,
// written as a cell, holds no unescaped active character outside its code spans, reads
// back (escapes removed) as the text itself, and, rendered by cmark-gfm when it is
// installed, opens nothing and stays in its cell.
func TestCellEscapesEveryActiveCharacter(t *testing.T) {
	const alphabet = "[]()!_*`~#<>|&\\$@:/w.aZ09 -+=^{}\"'\n\x1b\u200b"
	runes := []rune(alphabet)
	rng := rand.New(rand.NewSource(1))
	// Half the samples are random characters, half random tokens: runs of backticks around
	// links, which a wrong pairing of code spans would leave live.
	tokens := []string{"`", "``", "```", "[a](b)", "![i](b)", "*e*", "_e_", "x", " ", "https://x.example", "www.x.example", "<b>", "&lt;", "|"}
	var samples []string
	for i := range 4000 {
		var b strings.Builder
		if i%2 == 0 {
			for range rng.Intn(24) {
				b.WriteRune(runes[rng.Intn(len(runes))])
			}
		} else {
			for range 1 + rng.Intn(8) {
				b.WriteString(tokens[rng.Intn(len(tokens))])
			}
		}
		samples = append(samples, b.String())
	}
	var table strings.Builder
	table.WriteString("| cell | end |\n|---|---|\n")
	for _, s := range samples {
		out := cell(s)
		require.NotContains(t, out, "\n")
		if !strings.Contains(line(s, maxCell), "`") {
			require.Equal(t, line(s, maxCell), unescapeMarkdown(t, out), "%q", s)
		}
		table.WriteString("| " + out + " | end |\n")
	}
	htm := cmarkGFM(t, table.String())
	rows := regexp.MustCompile(`(?s)<tr>\n<td>(.*?)</td>\n<td>end</td>\n</tr>`).FindAllStringSubmatch(htm, -1)
	require.Len(t, rows, len(samples), "every sample in one cell of its own row")
	for i, row := range rows {
		// GitHub's email autolinks (user@host.tld, xmpp:, mailto:) are found in the text
		// after the escapes are gone: they are mailto: and xmpp: links only (the redaction
		// masks email addresses by default).
		mail := regexp.MustCompile(`<a href="(mailto|xmpp):[^"]*">([^<]*)</a>`)
		require.NotRegexp(t, `<a href="(mailto|xmpp):[^"]*[^\w.+@:/-][^"]*"`, row[1], "%q", samples[i])
		row[1] = mail.ReplaceAllString(row[1], "$2")
		for _, tag := range []string{"<a ", "<img", "<em>", "<strong>", "<del>"} {
			require.NotContains(t, row[1], tag, "%q", samples[i])
		}
		if !strings.Contains(line(samples[i], maxCell), "`") {
			require.Equal(t, line(samples[i], maxCell), html.UnescapeString(row[1]), "%q is shown as it is", samples[i])
		} else {
			require.NotContains(t, regexp.MustCompile(`(?s)<code>.*?</code>`).ReplaceAllString(row[1], ""), "<", "%q", samples[i])
		}
	}
}

// unescapeMarkdown removes the backslash escapes of a cell without code spans; every
// character Markdown acts on must have been escaped.
func unescapeMarkdown(t *testing.T, s string) string {
	t.Helper()
	var b strings.Builder
	for i := 0; i < len(s); i++ {
		c := s[i]
		if c == '\\' {
			require.Less(t, i+1, len(s), "%q ends in a lone backslash", s)
			require.Contains(t, "\\`*_~[]()!<>&|#$@:.", string(s[i+1]), "%q: \\%c is not an escape of ours", s, s[i+1])
			b.WriteByte(s[i+1])
			i++
			continue
		}
		require.NotContains(t, "\\`*_~[]()!<>&|#$@", string(c), "%q: %c unescaped", s, c)
		b.WriteByte(c)
	}
	require.NotRegexp(t, `(://|www\.)`, strings.NewReplacer(`\://`, "", `www\.`, "").Replace(s), "%q: an autolink", s)
	return b.String()
}

// cmarkGFM renders Markdown as GitHub does (cmark-gfm with its extensions). The test skips
// only where cmark-gfm is not installed, after its literal checks, and never in CI (`make
// test` installs Debian's package with make cmark-gfm).
func cmarkGFM(t *testing.T, md string) string {
	t.Helper()
	cmd := exec.Command(debianTool(t, "cmark-gfm"), "-e", "table", "-e", "autolink", "-e", "strikethrough", "-e", "tagfilter")
	cmd.Stdin = strings.NewReader(md)
	var out, stderr bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &stderr
	require.NoError(t, cmd.Run(), stderr.String())
	return out.String()
}

// requireTableCells: every row of every table has as many cells as its header.
func requireTableCells(t *testing.T, htm string) {
	t.Helper()
	for _, table := range regexp.MustCompile(`(?s)<table>.*?</table>`).FindAllString(htm, -1) {
		head := len(regexp.MustCompile(`<th[ >]`).FindAllString(regexp.MustCompile(`(?s)<thead>.*?</thead>`).FindString(table), -1))
		for _, row := range regexp.MustCompile(`(?s)<tr>.*?</tr>`).FindAllString(table, -1)[1:] {
			require.Equal(t, head, strings.Count(row, "<td"), row)
		}
	}
}

// TestHTMLSpanTextEscapedAndBounded: in the HTML report the failures' "where" (service and
// file), the trace headings, the handoff titles and the notes are escaped (control
// characters, invalid UTF-8, markup) and cut like every other name: a 10 MB service name
// is not written whole into every failure row.
func TestHTMLSpanTextEscapedAndBounded(t *testing.T) {
	huge := strings.Repeat("S", 10<<20)
	service := "svc\x1b[32m<script>x</script>\nPASS \xff" + huge
	b := tr.New(0x22)
	b.Resource().PutStr("service.name", service)
	root := b.Agent(nil, "triage", 0, 100)
	b.Agent(root, "esc\x1b[31mRED\u200b"+huge, 10, 90)
	id := strings.Repeat("22", 16)
	var results []rules.Result
	for i := range 3 {
		results = append(results, rules.Result{
			TraceID: id, Case: "c", Step: fmt.Sprintf("s%d", i), Outcome: rules.Fail, Complete: true,
			Message: "failed", From: "triage", To: "esc\x1b[31mRED\u200b" + huge,
		})
	}
	run := NewRun([]string{"c"})
	run.SetSource(id, "dir\n/file\x1b[2K.json")
	run.Add(b.Graph(), results)
	page := string(run.html(nil))

	require.Less(t, len(page), 64<<10, "no name is written whole")
	require.True(t, utf8.ValidString(page), "invalid UTF-8 is escaped")
	require.NotContains(t, page, "\x1b")
	require.NotContains(t, page, "\u200b")
	require.NotContains(t, page, "<script>x")
	where := `<span class="meta">service svc\x1b[32m&lt;script&gt;x&lt;/script&gt;\nPASS \xff` + strings.Repeat("S", maxCell-len(`svc\x1b[32m<script>x</script>\nPASS \xff`)) +
		`…, file dir\n/file\x1b[2K.json</span>`
	require.Equal(t, 3, strings.Count(page, where), "the where of each failure row, escaped and cut at maxCell")
	for _, row := range regexp.MustCompile(`<tr><td>s\d.*</tr>`).FindAllString(page, -1) {
		require.NotContains(t, row, "\n", "a failure row stays on one line")
	}
	require.Contains(t, page, `· service <code>svc\x1b[32m&lt;script&gt;x&lt;/script&gt;\nPASS \xffSSS`)
	require.Contains(t, page, `· file <code>dir\n/file\x1b[2K.json</code>`)

	md := string(run.Markdown())
	require.Less(t, len(md), 64<<10)
	require.NotContains(t, md, "\x1b")
	require.Contains(t, md, `(service svc\\x1b\[32m\<script\>x\</script\>\\nPASS \\xff`+strings.Repeat("S", maxCell-len(`svc\x1b[32m<script>x</script>\nPASS \xff`))+
		`…, file dir\\n/file\\x1b\[2K.json)`)
}

// TestLineBounded: a long text is read only as far as its cut, and a cut is marked even
// when white space collapsed before the bound.
func TestLineBounded(t *testing.T) {
	require.Equal(t, `abc \n`, line("  abc \n ", 10))
	require.Equal(t, "a b", line(" a \u00a0\u3000 b ", 10))
	require.Equal(t, strings.Repeat("x", 10)+"…", line(strings.Repeat("x", 1<<20), 10))
	require.Equal(t, "a…", line("a"+strings.Repeat(" ", 1000)+"b", 10), "cut inside the white space")
	require.Equal(t, `\x1b\xff`+strings.Repeat("é", 2)+"…", line("\x1b\xff"+strings.Repeat("é", 1000), 10))
	allocs := testing.AllocsPerRun(5, func() { _ = line(strings.Repeat("x", 1<<24)[:1<<24], maxCell) })
	require.Less(t, allocs, 10.0)
}

// TestDiagramTooLarge: a trace whose Mermaid source Mermaid would refuse (over
// maxDiagramText, or over maxDiagramEdges arrows) gets a note in place of its diagram in
// both reports; a smaller one is drawn.
func TestDiagramTooLarge(t *testing.T) {
	run, small, large := wideRun(t, 40, 1000)
	_, ok := drawable(run.pictures[large])
	require.False(t, ok)
	graph, ok := drawable(run.pictures[small])
	require.True(t, ok)
	require.Less(t, len(graph), maxDiagramText)
	note := "Diagram too large to draw: 1000 agents, 999 handoffs; see the failures table."

	md := string(run.Markdown())
	require.Equal(t, 1, strings.Count(md, "```mermaid\n"))
	require.Contains(t, md, "\n"+note+"\n")
	page := string(run.html(nil))
	require.Equal(t, 1, strings.Count(page, `<pre class="mermaid">`))
	require.Contains(t, page, `<p class="note diagram-too-large">`+note+`</p>`)

	// The bound is the length of the source: some hundreds of agents fit.
	_, ok = drawable(wideDag(250))
	require.True(t, ok)
	_, ok = drawable(wideDag(600))
	require.False(t, ok)
	// More arrows than Mermaid allows: a note too, however short the source.
	d := &dag{nodes: make([]dagNode, 2), edges: make([]dagEdge, maxDiagramEdges+1)}
	_, ok = drawable(d)
	require.False(t, ok)
	d.edges = d.edges[:maxDiagramEdges]
	_, ok = drawable(d)
	require.True(t, ok)
	// The page's script sets Mermaid's bounds to the same numbers.
	require.Contains(t, renderScript, fmt.Sprintf("maxTextSize = %d,", maxDiagramText))
	require.Contains(t, renderScript, fmt.Sprintf("maxEdges: %d,", maxDiagramEdges))
}

// wideRun is a run with two failing traces whose pictures are a root agent delegating to
// the others (wideDag), of small and large agents; it returns their trace ids.
func wideRun(t *testing.T, small, large int) (run *Run, smallID, largeID string) {
	t.Helper()
	run = NewRun([]string{"c"})
	var ids []string
	for i, n := range []int{small, large} {
		b := tr.New(byte(0x31 + i))
		b.Agent(nil, "triage", 0, 1000)
		g := b.Graph()
		id := g.TraceID.String()
		run.Add(g, []rules.Result{{TraceID: id, Case: "c", Step: "s", Outcome: rules.Fail, Message: "m", Complete: true}})
		d := wideDag(n)
		d.traceID = id
		run.pictures[id] = d
		ids = append(ids, id)
	}
	return run, ids[0], ids[1]
}

// wideDag is the picture of a root agent delegating to n-1 agents, the first of them over
// its budget.
func wideDag(n int) *dag {
	d := &dag{}
	for i := range n {
		node := dagNode{name: fmt.Sprintf("weather_specialist_%d", i), tokens: 1200, toolCalls: 2, durationMs: 998}
		if i == 1 {
			node.failures = []string{"budget: used 1,200 tokens, over maxTokens 1000"}
		}
		d.nodes = append(d.nodes, node)
		if i > 0 {
			d.edges = append(d.edges, dagEdge{from: 0, to: i, detection: "transfer_tool"})
		}
	}
	return d
}
