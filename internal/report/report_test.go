package report

import (
	"flag"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/otelcol-handoff/otelcol-handoff/internal/agentgraph"
	"github.com/otelcol-handoff/otelcol-handoff/internal/rules"
	tr "github.com/otelcol-handoff/otelcol-handoff/internal/rules/rulestest"
)

var update = flag.Bool("update", false, "rewrite the golden files from the current output")

func checkGolden(t *testing.T, name string, got []byte) {
	t.Helper()
	path := filepath.Join("testdata", "golden", name)
	if *update {
		require.NoError(t, os.WriteFile(path, got, 0o644))
		return
	}
	want, err := os.ReadFile(path)
	require.NoError(t, err, "golden file missing; run go test ./internal/report -update and review the diff")
	require.Equal(t, string(want), string(got))
}

// A mixed run: seed-001 assertions and a seed-000 step over three traces, some passing,
// some failing, one erroring, one skipped.
const runConfig = `
cases:
  - name: dispatches_to_summarizer
    expected_result: status == "completed"
    expected_child_agents:
      summarizer:
        expected_payload: payload.text != ""
        expected_result: output.summary != ""
        expected_no_tool_calls: [email.send]
  - name: calls_add_for_each_pair
    expected_tool_calls:
      - math.calculator.add: invocations == 1 and params.a == 4
      - math.calculator.add: invocations == 1 and params.a == 7
  - name: topology
    steps:
      - action: ASSERT_AGENT_TOPOLOGY
        maxDepth: 1
      - action: EXPECT_AGENT_BUDGET
        agentName: archiver
        maxToolCalls: 1
  - name: pinned_context
    expected_result: output.id == context.fixture_id
`

func evaluator(t *testing.T) *rules.Evaluator {
	return compileCases(t, []byte(runConfig))
}

// traces: 0x0a passes everything it can; 0x0b sends email from the summarizer, adds 4
// twice, and has a | and a <tag> in its agent names' content; 0x0c nests three deep and
// is released incomplete, its archiver in the workflow archive_pipeline.
func runTraces() []*agentgraph.Graph {
	ok := tr.New(0x0a)
	root := ok.Agent(nil, "dispatcher", 0, 100).Reply(`{"id": "f-1"}`).Attr("test.context.fixture_id", "f-1")
	call := ok.Tool(root, "trigger_agent", `{"agent_name": "summarizer", "payload": {"text": "long"}}`, 10, 90)
	ok.Agent(call, "summarizer", 11, 89).Reply(`{"summary": "short"}`)
	ok.Tool(root, "math.calculator.add", `{"a": 4, "b": 6}`, 91, 92)
	ok.Tool(root, "math.calculator.add", `{"a": 7, "b": 8}`, 93, 94)

	bad := tr.New(0x0b)
	root = bad.Agent(nil, "dispatcher", 0, 100).Reply("plain | text <b>").Attr("test.context.fixture_id", "f-2")
	call = bad.Tool(root, "trigger_agent", `{"agent_name": "summarizer", "payload": {"text": ""}}`, 10, 90)
	sum := bad.Agent(call, "summarizer", 11, 89).Reply(`{"summary": "s"}`)
	bad.Tool(sum, "email.send", `{"to": "ceo"}`, 20, 30)
	bad.Tool(root, "math.calculator.add", `{"a": 4, "b": 6}`, 91, 92)
	bad.Tool(root, "math.calculator.add", `{"a": 4, "b": 1}`, 93, 94)

	deep := tr.New(0x0c)
	root = deep.Agent(nil, "dispatcher", 0, 100).Reply(`{"summary": "x"}`).Fail("upstream \x00 timeout")
	root.Attr(agentgraph.AttrTraceComplete, "false")
	root.Attributes().PutBool(agentgraph.AttrTraceComplete, false)
	sum = deep.Agent(root, "summarizer", 10, 90).Reply(`{"summary": "x"}`)
	arch := deep.Agent(sum, "archiver", 20, 80)
	deep.Tool(arch, "store", `{}`, 21, 22)
	deep.Tool(arch, "store", `{}`, 23, 24)
	// summarizer runs archiver in a workflow (an orchestration wrapper, drawn as a group). It
	// is added last and archiver moved into it, so the span ids stay as they were.
	pipeline := deep.Other(sum, "invoke_workflow archive_pipeline", 15, 85).
		Attr("gen_ai.operation.name", "invoke_workflow").Attr("gen_ai.workflow.name", "archive_pipeline")
	arch.SetParentSpanID(pipeline.SpanID())
	return []*agentgraph.Graph{bad.Graph(), deep.Graph(), ok.Graph()}
}

func newRun(t *testing.T, graphs []*agentgraph.Graph) *Run {
	ev := evaluator(t)
	run := NewRun(ev.CaseNames())
	for _, g := range graphs {
		complete := g.TraceID.String() != strings.Repeat("0c", 16)
		run.Add(g, ev.Evaluate(g, complete))
	}
	return run
}

func TestGoldenReports(t *testing.T) {
	run := newRun(t, runTraces())
	junit, md := run.JUnit(), run.Markdown()
	checkGolden(t, "run.junit.xml", junit)
	checkGolden(t, "run.md", md)

	// The JSON lines of the same run, as the exporter writes them.
	path := filepath.Join(t.TempDir(), "run.jsonl")
	w, err := OpenJSONLines(path)
	require.NoError(t, err)
	ev := evaluator(t)
	for _, g := range runTraces() {
		// Each line is stamped with its trace's start (the spans' time, so a replay writes the
		// same bytes), in UTC.
		starts := map[string]time.Time{g.TraceID.String(): TraceStart(g).In(time.FixedZone("CET", 3600))}
		require.NoError(t, w.Write(ev.Evaluate(g, g.TraceID.String() != strings.Repeat("0c", 16)), starts))
	}
	require.NoError(t, w.Close())
	jsonl, err := os.ReadFile(path)
	require.NoError(t, err)
	checkGolden(t, "run.jsonl", jsonl)

	// Deterministic: the same results in another arrival order give the same bytes.
	g := runTraces()
	again := newRun(t, []*agentgraph.Graph{g[2], g[0], g[1]})
	require.Equal(t, string(junit), string(again.JUnit()))
	require.Equal(t, string(md), string(again.Markdown()))
}

// TestJSONLinesWithoutStart: a result whose trace start is not given is stamped with the
// time it was written.
func TestJSONLinesWithoutStart(t *testing.T) {
	path := filepath.Join(t.TempDir(), "r.jsonl")
	w, err := OpenJSONLines(path)
	require.NoError(t, err)
	w.now = func() time.Time { return time.Date(2026, 3, 4, 5, 6, 7, 890_000_000, time.FixedZone("CET", 3600)) }
	res := rules.Result{TraceID: "0a", Case: "c", Step: "s", Outcome: rules.Fail, Expected: "tokens <= 100 && a > 0", Complete: true}
	require.NoError(t, w.Write([]rules.Result{res}, nil))
	require.NoError(t, w.Write([]rules.Result{res}, map[string]time.Time{"0a": time.Unix(1700000000, 5).UTC()}))
	require.NoError(t, w.Close())
	b, err := os.ReadFile(path)
	require.NoError(t, err)
	require.Equal(t, `{"timestamp":"2026-03-04T04:06:07.89Z","trace_id":"0a","case":"c","step":"s","action":"","outcome":"fail","expected":"tokens <= 100 && a > 0","actual":"","message":"","trace_complete":true}`+"\n"+
		`{"timestamp":"2023-11-14T22:13:20.000000005Z","trace_id":"0a","case":"c","step":"s","action":"","outcome":"fail","expected":"tokens <= 100 && a > 0","actual":"","message":"","trace_complete":true}`+"\n", string(b))
}

func TestAllPassing(t *testing.T) {
	g := runTraces()[2]
	ev := evaluator(t)
	run := NewRun(ev.CaseNames())
	var results []rules.Result
	for _, r := range ev.Evaluate(g, true) {
		if r.Outcome == rules.Pass {
			results = append(results, r)
		}
	}
	run.Add(g, results)
	md := string(run.Markdown())
	require.Contains(t, md, "**PASSED**: 8 assertions over 1 trace: 8 passed, 0 failed, 0 errored, 0 skipped.")
	require.NotContains(t, md, "## Failures")
	require.NotContains(t, md, "mermaid")
	page := string(run.html(nil))
	require.Contains(t, page, `<span class="verdict-PASSED">PASSED</span>`)
	require.NotContains(t, page, "Failing traces")
	require.NotContains(t, page, "Failures by case")
	empty := NewRun([]string{"a"})
	require.Contains(t, string(empty.Markdown()), "**PASSED**: 0 assertions over 0 traces")
	require.Contains(t, string(empty.JUnit()), `<testsuite name="a" tests="0" failures="0" errors="0" skipped="0"></testsuite>`)
}

// TestPictureBound keeps the failing traces with the smallest ids, whatever the order.
func TestPictureBound(t *testing.T) {
	run := NewRun([]string{"c"})
	for i := MaxPictures + 5; i > 0; i-- {
		trace := tr.New(byte(i))
		trace.Agent(nil, "a", 0, 1)
		g := trace.Graph()
		run.Add(g, []rules.Result{{TraceID: g.TraceID.String(), Case: "c", Step: "s", Outcome: rules.Fail, Complete: true}})
	}
	require.Len(t, run.pictures, MaxPictures)
	for id := range run.pictures {
		require.LessOrEqual(t, id, strings.Repeat("14", 16))
	}
}

func TestCell(t *testing.T) {
	require.Equal(t, "a \\| b \\<script\\> `x \\| y` \\*bold\\*", cell("a | b <script> `x | y` *bold*"))
	require.Equal(t, `one\\n line`, cell("one\n  line"), "a newline shows as \\n (its backslash escaped for Markdown)")
	require.Equal(t, `esc\\x1b\[2J bidi\\u202e zw\\u200b`, cell("esc\x1b[2J bidi\u202e zw\u200b"))
	require.Equal(t, `evil\nagent`, mermaidText("evil\nagent"))
	require.Equal(t, "unpaired \\` tick", cell("unpaired ` tick"))
	require.Equal(t, "`a` \\`\\` b", cell("`a` `` b"), "an empty code span is text")
	require.Equal(t, "`gpt-4o_mini`", code("gpt-4o_mini", 80))
	require.Equal(t, "`` a`b\\n ``", code("a`b\n", 80), "a fence longer than the backticks inside")
	require.Equal(t, strings.Repeat("x", maxCell)+"…", cell(strings.Repeat("x", maxCell+10)))
	require.Equal(t, "#quot;a#quot; #lt;b#gt; #96; #124;", mermaidText("\"a\" <b> ` |"))
	require.Equal(t, "#35;lt;a href=x#35;gt; #35;quot;", mermaidText("#lt;a href=x#gt; #quot;"), "Mermaid's entity codes stay text")
	require.Equal(t, "ok \uFFFD", clean("ok \x01"))
	require.Equal(t, "bad \uFFFD", clean("bad \xff"))
}

func TestWriteFileAtomic(t *testing.T) {
	dir := t.TempDir()
	path := filepath.Join(dir, "report.xml")
	require.NoError(t, CheckWritable(path))
	require.NoError(t, WriteFileAtomic(path, []byte("one")))
	require.NoError(t, WriteFileAtomic(path, []byte("two")))
	b, err := os.ReadFile(path)
	require.NoError(t, err)
	require.Equal(t, "two", string(b))
	entries, err := os.ReadDir(dir)
	require.NoError(t, err)
	require.Len(t, entries, 1, "no temporary files left behind")

	missing := filepath.Join(dir, "no", "such", "dir", "r.md")
	require.ErrorContains(t, CheckWritable(missing), "report "+missing+" is not writable")
	require.ErrorContains(t, WriteFileAtomic(missing, nil), "write report "+missing)
}
