package report

import (
	"bytes"
	"context"
	"encoding/json"
	"html/template"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
)

// clientsDir holds the pinned npm packages, mermaid among them (make e2e-clients).
const clientsDir = "../../e2e/clients"

// chromium finds headless Chromium (Debian's package: make chromium installs it).
func chromium(t *testing.T) string { return debianTool(t, "chromium") }

// debianTool is the path of a tool `make test` installs from Debian's package of the same
// name (make NAME). A test that needs it skips only where it is not installed, and never in
// CI.
func debianTool(t *testing.T, name string) string {
	t.Helper()
	path, err := exec.LookPath(name)
	if err != nil {
		if os.Getenv("CI") == "true" {
			t.Fatalf("%s is not installed: `make test` installs Debian's %s (make %s) before the tests", name, name, name)
		}
		t.Skipf("%s is not installed: `make %s` installs Debian's %s (pinned); this test never skips in CI", name, name, name)
	}
	return path
}

// pinnedRenderer is the Mermaid renderer of the pinned npm package, checked against the
// pin in e2e/clients/package.json and against the copy embedded in the build, if any.
func pinnedRenderer(t *testing.T) []byte {
	t.Helper()
	var pkg struct {
		Version      string            `json:"version"`
		Dependencies map[string]string `json:"dependencies"`
	}
	b, err := os.ReadFile(filepath.Join(clientsDir, "package.json"))
	require.NoError(t, err)
	require.NoError(t, json.Unmarshal(b, &pkg))
	pin := pkg.Dependencies["mermaid"]
	require.Regexp(t, `^\d+\.\d+\.\d+$`, pin, "mermaid is pinned to an exact version")
	b, err = os.ReadFile(filepath.Join(clientsDir, "node_modules", "mermaid", "package.json"))
	require.NoError(t, err, "e2e/clients/node_modules is missing: run `make e2e-clients` (`make test` runs it)")
	require.NoError(t, json.Unmarshal(b, &pkg))
	require.Equal(t, pin, pkg.Version, "e2e/clients/node_modules is stale: run `make e2e-clients`")
	dist, err := os.ReadFile(filepath.Join(clientsDir, "node_modules", "mermaid", "dist", "mermaid.min.js"))
	require.NoError(t, err)
	if bundled := mermaidJS(); bundled != nil {
		require.True(t, bytes.Equal(inlineScript(dist), bundled),
			"internal/report/assets/mermaid.min.js is not the pinned package's: run `make report-assets`")
	}
	return inlineScript(dist)
}

// render loads a page in headless Chromium, offline (a fresh profile, no background
// traffic), lets its scripts run and returns the DOM they leave.
func render(t *testing.T, browser, page string, extra ...string) string {
	t.Helper()
	dir := t.TempDir()
	file := filepath.Join(dir, "report.html")
	require.NoError(t, os.WriteFile(file, []byte(page), 0o644))
	args := append([]string{
		"--headless", "--no-sandbox", "--disable-gpu", "--disable-background-networking",
		"--disable-component-update", "--disable-sync", "--no-first-run", "--disable-extensions",
		"--user-data-dir=" + filepath.Join(dir, "profile"), "--virtual-time-budget=30000",
	}, extra...)
	args = append(args, "file://"+file)
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	var stdout, stderr bytes.Buffer
	cmd := exec.CommandContext(ctx, browser, args...)
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	require.NoError(t, cmd.Run(), "chromium: %s", stderr.String())
	return stdout.String()
}

// TestHTMLRendersInChromium: every diagram of the golden run's page renders with the pinned
// Mermaid, without errors, and the SVG holds the reasons, the figures and the failure
// styles where the failures happened (and only there). With -update it also rewrites the
// screenshot in docs/.
func TestHTMLRendersInChromium(t *testing.T) {
	browser := chromium(t)
	page := string(htmlRun(t).html(pinnedRenderer(t)))
	dom := render(t, browser, page, "--dump-dom")

	// The page's own script marks the body when every diagram is drawn, or the error.
	body := regexp.MustCompile(`<body[^>]*>`).FindString(dom)
	require.Equal(t, `<body class="rendered" data-rendered="3">`, body, "every diagram rendered, no error")
	require.Equal(t, 3, strings.Count(page, `<pre class="mermaid">`), "the three failing traces are drawn")
	require.Equal(t, 3, strings.Count(dom, `aria-roledescription="flowchart-v2"`), "three flowcharts")
	require.NotContains(t, dom, `aria-roledescription="error"`, "no Mermaid error diagram")

	for _, label := range []string{
		"✗ budget: used 318 tokens, over maxTokens 200",
		"✗ budget: made 2 tool calls, over maxToolCalls 1",
		"✗ cycle triage, weather_specialist",
		`✗ context: contains forbidden /\b(?:\d[ -]?){13,16}\b/`,
		"146 tok · 1 tool call · 9 ms",
		"swarm: refund_swarm",
		"transfer_tool",
	} {
		require.Contains(t, dom, label)
	}
	// Per trace: the boxes with the class "failed" (the agents where a failure happened)
	// and the arrows drawn red (the handoffs where one happened); the rest stays neutral.
	for _, want := range []struct {
		trace        string
		failedBoxes  int
		boxes        int
		red, neutral []string
	}{
		// refund swarm: billing over budget, the leaking billing -> refund_specialist.
		{"fc813ae4039f2cb8291877ac9a93ab60", 1, 3, []string{"L_n1_n2_0"}, []string{"L_n0_n1_0"}},
		// the hand-back cycle triage -> weather_specialist -> triage: both edges.
		{"7e4d2042aa8ce9373baccfde74e275cb", 0, 3, []string{"L_n0_n1_0", "L_n1_n2_0"}, nil},
		// strands-ok: weather_specialist over its tool-call budget; the handoff is fine.
		{"ee43d96bfb5cdaf53f26aa5435c557e3", 1, 2, nil, []string{"L_n0_n1_0"}},
	} {
		section := regexp.MustCompile(`(?s)<section class="trace" id="trace-` + want.trace + `">.*?</section>`).FindString(dom)
		require.NotEmpty(t, section, want.trace)
		require.Equal(t, want.failedBoxes, strings.Count(section, `class="node default failed"`), want.trace)
		require.Equal(t, want.boxes, strings.Count(section, `class="node default`), want.trace)
		var red, neutral []string
		for _, e := range regexp.MustCompile(`<path [^>]*data-id="(L_n\d+_n\d+_\d+)"[^>]*>`).FindAllStringSubmatch(section, -1) {
			if strings.Contains(e[0], "stroke:#c0392b") {
				red = append(red, e[1])
			} else {
				neutral = append(neutral, e[1])
			}
		}
		require.Equal(t, want.red, red, "red arrows of %s", want.trace)
		require.Equal(t, want.neutral, neutral, "neutral arrows of %s", want.trace)
	}

	if *update {
		shot := filepath.Join("..", "..", "docs", "html-report.png")
		abs, err := filepath.Abs(shot)
		require.NoError(t, err)
		render(t, browser, page, "--screenshot="+abs, "--window-size=1280,3000", "--hide-scrollbars")
	}
}

// TestMarkdownDiagramsRenderInChromium: the Mermaid blocks of the Markdown reports (the
// golden run's, and the nested wrappers' with a quoted, multi-line, redacted group name)
// render with the pinned Mermaid without errors, as GitHub's step summary would draw them.
func TestMarkdownDiagramsRenderInChromium(t *testing.T) {
	browser := chromium(t)
	golden, err := os.ReadFile(filepath.Join("testdata", "golden", "run.md"))
	require.NoError(t, err)
	var blocks []string
	for _, md := range []string{string(golden), nestedWrappersMarkdown(t)} {
		for _, part := range strings.Split(md, "```mermaid\n")[1:] {
			blocks = append(blocks, part[:strings.Index(part, "```\n")])
		}
	}
	require.Len(t, blocks, 3)
	var page strings.Builder
	page.WriteString("<!DOCTYPE html><html><head><meta charset=\"utf-8\"></head><body>\n")
	for _, b := range blocks {
		page.WriteString("<pre class=\"mermaid\">" + template.HTMLEscapeString(b) + "</pre>\n")
	}
	page.WriteString("<script>" + string(pinnedRenderer(t)) + "</script>\n<script>" + renderScript + "</script></body></html>\n")
	dom := render(t, browser, page.String(), "--dump-dom")
	require.Equal(t, `<body class="rendered" data-rendered="3">`, regexp.MustCompile(`<body[^>]*>`).FindString(dom))
	require.Equal(t, 3, strings.Count(dom, `aria-roledescription="flowchart-v2"`))
	require.NotContains(t, dom, `aria-roledescription="error"`)
	// The group name's markup stays text (&lt;b&gt;); its escaped newline is drawn as a break.
	for _, label := range []string{
		"✗ budget: made 2 tool calls, over maxToolCalls 1", "✗ depth 2 &gt; maxDepth 1",
		"workflow: archive_pipeline", `workflow: release "v2"<br>&lt;b&gt;| for [REDACTED:email]`, "swarm: review_swarm",
	} {
		require.Contains(t, dom, label)
	}
}

// renderScript is the HTML report's own rendering script (assets/report.html.tmpl).
var renderScript = func() string {
	b, err := assets.ReadFile("assets/report.html.tmpl")
	if err != nil {
		panic(err)
	}
	s := string(b)
	start := strings.Index(s, "<script>\n(function () {")
	end := strings.Index(s[start:], "</script>")
	return s[start+len("<script>") : start+end]
}()

// TestHTMLLargeDiagramInChromium: a trace of some hundreds of agents (under Mermaid's
// bounds) is drawn, one over them has the page's note instead of a diagram, and the page
// says it rendered the one diagram it has. A diagram over the bounds that reached the page
// anyway is drawn by Mermaid as its "Maximum text size in diagram exceeded" box: the page
// marks that as a failed render, never as rendered.
func TestHTMLLargeDiagramInChromium(t *testing.T) {
	browser := chromium(t)
	renderer := pinnedRenderer(t)
	run, small, _ := wideRun(t, 250, 1000)
	graph, ok := drawable(run.pictures[small])
	require.True(t, ok)
	require.Greater(t, len(graph), maxDiagramText/2, "a large diagram, over half the bound")
	page := string(run.html(renderer))
	dom := render(t, browser, page, "--dump-dom")
	require.Equal(t, `<body class="rendered" data-rendered="1">`, regexp.MustCompile(`<body[^>]*>`).FindString(dom))
	require.Equal(t, 1, strings.Count(dom, `aria-roledescription="flowchart-v2"`))
	sections := strings.Join(regexp.MustCompile(`(?s)<section class="trace".*?</section>`).FindAllString(dom, -1), "\n")
	require.Contains(t, sections, "weather_specialist_249")
	require.Contains(t, sections, `<p class="note diagram-too-large">Diagram too large to draw: 1000 agents, 999 handoffs; see the failures table.</p>`)
	require.NotContains(t, sections, "Maximum text size")

	over := mermaidGraph(wideDag(1000))
	require.Greater(t, len(over), maxDiagramText)
	var b bytes.Buffer
	require.NoError(t, pageTemplate.Execute(&b, htmlPage{
		Verdict: "FAILED", Traces: []htmlTrace{{TraceID: "t1", Graph: over}}, Mermaid: template.JS(renderer), //nolint:gosec // the pinned renderer
	}))
	dom = render(t, browser, b.String(), "--dump-dom")
	body := regexp.MustCompile(`<body[^>]*>`).FindString(dom)
	require.Contains(t, body, `class="render-failed"`)
	require.Contains(t, body, `data-render-error="diagram 1 of 1 was not drawn: Maximum text size in diagram exceeded"`)
	require.NotContains(t, body, "data-rendered")
}

// TestHTMLHostileNamesInChromium: names from spans are drawn as the text they are: no link
// or markup of theirs is drawn, and Mermaid entity codes and HTML entities in a name are
// shown as written (not decoded into the characters they stand for).
func TestHTMLHostileNamesInChromium(t *testing.T) {
	browser := chromium(t)
	dom := render(t, browser, string(hostileRun(t).html(pinnedRenderer(t))), "--dump-dom")
	require.Equal(t, `<body class="rendered" data-rendered="1">`, regexp.MustCompile(`<body[^>]*>`).FindString(dom))
	svg := regexp.MustCompile(`(?s)<pre class="mermaid"[^>]*>.*?</pre>`).FindString(dom)
	require.Contains(t, svg, `aria-roledescription="flowchart-v2"`)
	require.NotContains(t, svg, "<a ")
	require.NotContains(t, svg, "<i>")
	require.NotContains(t, svg, "<img")
	require.Contains(t, svg, "#lt;a href=https://evil.example#gt;click#lt;/a#gt; &amp;lt;i&amp;gt;")
	require.Contains(t, svg, "[Approve](https://evil.example) ![t](https://evil.example/p.…")
	require.Contains(t, svg, `tri\u200bage\ufeff`)
}
