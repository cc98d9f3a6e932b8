package e2e

import (
	"bufio"
	"context"
	"errors"
	"flag"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"
)

// The pages whose commands TestDocCommands runs.
var docPages = []string{
	"../docs/first-rule.md",
	"../docs/troubleshooting.md",
}

// docPorts are the loopback ports the pages name (OTLP gRPC and HTTP, health check, internal
// metrics), as whole numbers. Each page's run gets free ports in their place, so the test runs
// beside a local collector or other tests.
var docPorts = regexp.MustCompile(`\b(4317|4318|13133|8888)\b`)

// docRepoEntries are the checkout's entries a page's commands read, by the paths a user
// types at the root of a checkout; the commands run in a temporary directory holding
// links to them, so whatever a command writes stays there.
var docRepoEntries = []string{"_build", "testdata", "config", "examples", "e2e"}

// docTimestamp matches the collector's log timestamps, replaced on both sides before
// comparing.
var docTimestamp = regexp.MustCompile(`\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d(\.\d+)?Z`)

// docBlock is one fenced block of a page.
type docBlock struct {
	info string // the info string: sh, text, yaml...
	text string
	line int // the line of the opening fence, from 1
	end  int // the line of the closing fence
}

// docBlocks returns the fenced blocks of a Markdown page, in order.
func docBlocks(t *testing.T, path string) []docBlock {
	t.Helper()
	f, err := os.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	var (
		blocks []docBlock
		cur    *docBlock
		body   strings.Builder
		n      int
	)
	sc := bufio.NewScanner(f)
	sc.Buffer(make([]byte, 1<<20), 1<<20)
	for sc.Scan() {
		n++
		line := sc.Text()
		switch {
		case cur == nil && strings.HasPrefix(line, "```"):
			cur = &docBlock{info: strings.TrimSpace(strings.TrimPrefix(line, "```")), line: n}
			body.Reset()
		case cur != nil && strings.TrimSpace(line) == "```":
			cur.text, cur.end = body.String(), n
			blocks = append(blocks, *cur)
			cur = nil
		case cur != nil:
			body.WriteString(line)
			body.WriteByte('\n')
		}
	}
	if err := sc.Err(); err != nil {
		t.Fatal(err)
	}
	if cur != nil {
		t.Fatalf("%s:%d: fenced block not closed", path, cur.line)
	}
	return blocks
}

// docCommand is an sh block of a page and the text block that follows it, if any: what the
// commands print.
type docCommand struct {
	script, output string
	line           int
	// outputLines are the first and last line of the output block's text (0 when there is
	// none): what -update-docs rewrites.
	outputFirst, outputLast int
}

// docCommands pairs each sh block with the fenced block right after it when that is a text
// block.
func docCommands(blocks []docBlock) []docCommand {
	var out []docCommand
	for i, b := range blocks {
		if b.info != "sh" {
			continue
		}
		c := docCommand{script: b.text, line: b.line}
		if i+1 < len(blocks) && blocks[i+1].info == "text" {
			c.output = blocks[i+1].text
			c.outputFirst, c.outputLast = blocks[i+1].line+1, blocks[i+1].end-1
		}
		out = append(out, c)
	}
	return out
}

// docLinePattern turns a line of a page's output block into a whole-line pattern: "…"
// stands for any text (the page elides a long part), the rest is literal.
func docLinePattern(line string) *regexp.Regexp {
	parts := strings.Split(line, "…")
	for i, p := range parts {
		parts[i] = regexp.QuoteMeta(p)
	}
	return regexp.MustCompile("^" + strings.Join(parts, ".*") + "$")
}

// docNormalize replaces timestamps and trims trailing blanks, line by line.
func docNormalize(s string) []string {
	var out []string
	for _, l := range strings.Split(strings.TrimRight(s, "\n"), "\n") {
		out = append(out, strings.TrimRight(docTimestamp.ReplaceAllString(l, "<time>"), " \t"))
	}
	return out
}

// docMissing returns the first line of want (in order) that got does not have after the
// lines matched before it, or "" when every line of want appears in got in order.
func docMissing(want, got string) string {
	gl := docNormalize(got)
	j := 0
	for _, w := range docNormalize(want) {
		if w == "" {
			continue
		}
		p := docLinePattern(w)
		for j < len(gl) && !p.MatchString(gl[j]) {
			j++
		}
		if j == len(gl) {
			return w
		}
		j++
	}
	return ""
}

// TestDocCommands runs every command of the user guides (docs/first-rule.md,
// docs/troubleshooting.md) as a user would at the root of a checkout after `make build`:
// each ```sh block in turn, with bash, in one temporary directory per page (links to the
// built binaries, testdata, config, examples and e2e; the page's files are written there),
// the page's loopback ports swapped for free ones. Each block must exit 0, and every line of
// the ```text block right after it — what the page says the commands print — must appear in
// what they printed (stdout and stderr), in order, timestamps aside; "…" in a line stands for
// text the page leaves out. When an output changes on purpose, -update-docs rewrites the
// blocks that elide nothing from what the commands print.
func TestDocCommands(t *testing.T) {
	bin := collectorBinary(t)
	repo := filepath.Dir(filepath.Dir(bin))
	for _, entry := range docRepoEntries {
		if _, err := os.Stat(filepath.Join(repo, entry)); err != nil {
			t.Fatalf("%s: %v", entry, err)
		}
	}
	if _, err := os.Stat(filepath.Join(repo, "_build", "handoffcheck")); err != nil {
		t.Fatalf("handoffcheck not built (%v): run `make build` first", err)
	}
	// The pages' commands use bash, curl (to send spans and read metrics), sed and grep, and
	// node for the real client (whose packages `make e2e-clients` installs).
	bash, err := exec.LookPath("bash")
	if err != nil {
		t.Fatal(err)
	}
	for _, tool := range []string{"curl", "sed", "grep", "node"} {
		if _, err := exec.LookPath(tool); err != nil {
			t.Fatalf("the pages' commands need %s: %v", tool, err)
		}
	}
	if _, err := os.Stat(filepath.Join(repo, "e2e", "clients", "node_modules")); err != nil {
		t.Fatalf("e2e/clients/node_modules missing (%v): run `make e2e-clients` (`make test` does)", err)
	}
	for _, page := range docPages {
		t.Run(filepath.Base(page), func(t *testing.T) {
			cmds := docCommands(docBlocks(t, page))
			if len(cmds) == 0 {
				t.Fatalf("%s has no sh block", page)
			}
			dir := t.TempDir()
			for _, entry := range docRepoEntries {
				if err := os.Symlink(filepath.Join(repo, entry), filepath.Join(dir, entry)); err != nil {
					t.Fatal(err)
				}
			}
			ports := map[string]string{}
			swap := func(s string) string {
				return docPorts.ReplaceAllStringFunc(s, func(p string) string {
					if ports[p] == "" {
						ports[p] = strconv.Itoa(freePort(t))
					}
					return ports[p]
				})
			}
			// unswap puts the page's ports back into what the commands printed.
			unswap := func(s string) string {
				for page, free := range ports {
					s = regexp.MustCompile(`\b`+free+`\b`).ReplaceAllString(s, page)
				}
				return s
			}
			updates := map[int]docCommand{} // by output block, for -update-docs
			for _, c := range cmds {
				out, err := runDocScript(t, bash, dir, swap(c.script))
				where := fmt.Sprintf("%s:%d", page, c.line)
				if err != nil {
					t.Fatalf("%s: the commands failed (%v):\n%s\noutput:\n%s%s", where, err, c.script, out, docLogs(dir))
				}
				miss := docMissing(swap(c.output), out)
				if *updateDocs && miss != "" && c.outputFirst > 0 && c.outputLast >= c.outputFirst && !strings.Contains(c.output, "…") {
					c.output = unswap(out)
					updates[c.outputFirst] = c
					continue
				}
				if miss != "" {
					t.Errorf("%s: the page says the commands print\n  %s\nbut they printed:\n%s", where, miss, out)
				}
			}
			if len(updates) > 0 {
				rewriteOutputs(t, page, updates)
			}
		})
	}
}

// updateDocs rewrites the output blocks that differ from what their commands printed, when
// the block elides nothing ("…"): `go test ./e2e -run TestDocCommands -update-docs`, then
// read the diff.
var updateDocs = flag.Bool("update-docs", false, "rewrite the pages' output blocks from what their commands print")

// rewriteOutputs replaces the text of the page's output blocks that start at the given lines.
func rewriteOutputs(t *testing.T, page string, updates map[int]docCommand) {
	t.Helper()
	b, err := os.ReadFile(page)
	if err != nil {
		t.Fatal(err)
	}
	lines := strings.Split(string(b), "\n")
	var out []string
	for i := 0; i < len(lines); i++ {
		c, ok := updates[i+1]
		if !ok {
			out = append(out, lines[i])
			continue
		}
		for _, l := range strings.Split(strings.TrimRight(c.output, "\n"), "\n") {
			out = append(out, strings.TrimRight(l, " \t"))
		}
		i = c.outputLast - 1
	}
	if err := os.WriteFile(page, []byte(strings.Join(out, "\n")), 0o644); err != nil {
		t.Fatal(err)
	}
	t.Logf("%s: %d output blocks rewritten", page, len(updates))
}

// runDocScript runs one sh block with bash in dir, within a minute; it returns stdout and
// stderr together. Background processes the block leaves running are ended with it.
func runDocScript(t *testing.T, bash, dir, script string) (string, error) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	cmd := exec.CommandContext(ctx, bash, "-c", script)
	cmd.Dir = dir
	cmd.Env = append(os.Environ(), "LC_ALL=C")
	var out lockedBuffer
	cmd.Stdout, cmd.Stderr = &out, &out
	// Its own process group, so a timeout ends a collector it started in the background too,
	// and nothing it started outlives it.
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
	cmd.Cancel = func() error { return syscall.Kill(-cmd.Process.Pid, syscall.SIGKILL) }
	cmd.WaitDelay = 5 * time.Second
	err := cmd.Run()
	if cmd.Process != nil {
		_ = syscall.Kill(-cmd.Process.Pid, syscall.SIGKILL)
	}
	if errors.Is(ctx.Err(), context.DeadlineExceeded) {
		err = fmt.Errorf("timed out after a minute: %w", err)
	}
	return out.String(), err
}

// TestDocOutputMatching: how TestDocCommands compares a page's output block with what the
// commands printed.
func TestDocOutputMatching(t *testing.T) {
	got := "2026-12-01T09:33:26.278Z\tinfo\tassertion pass: one\nnoise\nsecond line: a, b, c\nexit code: 0\n"
	for _, tc := range []struct {
		want, missing string
	}{
		{want: "<time>\tinfo\tassertion pass: one\nexit code: 0\n"},
		{want: "2026-01-02T03:04:05Z\tinfo\tassertion pass: one\n"},                     // another time: the same line
		{want: "second line: a, …\n\nexit code: 0\n"},                                   // "…" elides, blank lines do not count
		{want: "exit code: 0\nsecond line: a, b, c\n", missing: "second line: a, b, c"}, // order counts
		{want: "second line: a\n", missing: "second line: a"},                           // whole lines only
		{want: "exit code: 1\n", missing: "exit code: 1"},
	} {
		if m := docMissing(tc.want, got); m != tc.missing {
			t.Errorf("docMissing(%q) = %q, want %q", tc.want, m, tc.missing)
		}
	}
	blocks := []docBlock{{info: "sh", text: "a"}, {info: "text", text: "A"}, {info: "sh", text: "b"}, {info: "yaml"}, {info: "text", text: "not b's"}}
	cmds := docCommands(blocks)
	if len(cmds) != 2 || cmds[0].output != "A" || cmds[1].output != "" {
		t.Errorf("docCommands = %+v, want a's output A and none for b", cmds)
	}
}

// docLogs returns the *.log files the page's commands wrote (a collector's output), for a
// failure's message.
func docLogs(dir string) string {
	paths, _ := filepath.Glob(filepath.Join(dir, "*.log"))
	var b strings.Builder
	for _, p := range paths {
		data, err := os.ReadFile(p)
		if err != nil {
			continue
		}
		fmt.Fprintf(&b, "\n%s:\n%s", filepath.Base(p), data)
	}
	return b.String()
}

var (
	docFence   = regexp.MustCompile("(?ms)^```.*?^```")
	docHeading = regexp.MustCompile(`(?m)^#{1,6} (.*)$`)
	docLink    = regexp.MustCompile(`\]\(([^)\s]+)\)`)
	docScheme  = regexp.MustCompile(`^[a-z]+:`)
	docSlugOut = regexp.MustCompile(`[^\p{L}\p{N}_\- ]`)
)

// docAnchors returns the anchors GitHub gives the headings of a Markdown text: lower case,
// punctuation dropped, spaces as hyphens, a repeated heading numbered from -1.
func docAnchors(text string) map[string]bool {
	out := map[string]bool{}
	seen := map[string]int{}
	for _, m := range docHeading.FindAllStringSubmatch(docFence.ReplaceAllString(text, ""), -1) {
		slug := strings.ReplaceAll(docSlugOut.ReplaceAllString(strings.ToLower(strings.TrimSpace(m[1])), ""), " ", "-")
		if n := seen[slug]; n > 0 {
			out[fmt.Sprintf("%s-%d", slug, n)] = true
		} else {
			out[slug] = true
		}
		seen[slug]++
	}
	return out
}

// TestDocLinks: every relative link of the repository's Markdown files (READMEs, docs/,
// SOURCES.md) names a file that exists and, with a #fragment into a Markdown file, a heading
// it has, so renaming a section cannot break a link to it unnoticed.
func TestDocLinks(t *testing.T) {
	root, err := filepath.Abs("..")
	if err != nil {
		t.Fatal(err)
	}
	texts := map[string]string{}
	err = filepath.WalkDir(root, func(path string, d os.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if d.IsDir() && (d.Name() == ".git" || d.Name() == "_build" || d.Name() == "node_modules") {
			return filepath.SkipDir
		}
		if !d.IsDir() && strings.HasSuffix(path, ".md") {
			b, err := os.ReadFile(path)
			if err != nil {
				return err
			}
			texts[path] = string(b)
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	links := 0
	for path, text := range texts {
		rel, _ := filepath.Rel(root, path)
		for _, m := range docLink.FindAllStringSubmatch(docFence.ReplaceAllString(text, ""), -1) {
			target := m[1]
			if docScheme.MatchString(target) {
				continue
			}
			links++
			file, frag, _ := strings.Cut(target, "#")
			dest := path
			if file != "" {
				dest = filepath.Join(filepath.Dir(path), filepath.FromSlash(file))
				if _, err := os.Stat(dest); err != nil {
					t.Errorf("%s: link %s: %v", rel, target, err)
					continue
				}
			}
			if frag == "" || !strings.HasSuffix(dest, ".md") {
				continue
			}
			destText, ok := texts[dest]
			if !ok {
				t.Errorf("%s: link %s: not a Markdown file of the repository", rel, target)
				continue
			}
			if !docAnchors(destText)[frag] {
				t.Errorf("%s: link %s: %s has no heading with the anchor #%s", rel, target, filepath.Base(dest), frag)
			}
		}
	}
	if links == 0 {
		t.Fatal("no relative link found in the repository's Markdown files")
	}
}
