package report

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"
	"go.opentelemetry.io/collector/confmap"
	"go.yaml.in/yaml/v3"

	"github.com/otelcol-handoff/otelcol-handoff/internal/rules"
	tr "github.com/otelcol-handoff/otelcol-handoff/internal/rules/rulestest"
)

// casesEvaluator compiles the cases of a file under testdata.
func casesEvaluator(t *testing.T, name string) *rules.Evaluator {
	t.Helper()
	b, err := os.ReadFile(filepath.Join("testdata", name))
	require.NoError(t, err)
	return compileCases(t, b)
}

// compileCases compiles the cases: list of a YAML config.
func compileCases(t *testing.T, config []byte) *rules.Evaluator {
	t.Helper()
	var raw map[string]any
	require.NoError(t, yaml.Unmarshal(config, &raw))
	var cfg struct {
		Cases []rules.CaseConfig `mapstructure:"cases"`
	}
	require.NoError(t, confmap.NewFromStringMap(raw).Unmarshal(&cfg))
	ev, err := rules.Compile(cfg.Cases, rules.Options{})
	require.NoError(t, err)
	return ev
}

// htmlCaptures are the real captures of the HTML report's golden run, in the order they
// are added.
var htmlCaptures = []string{"scenario-strands-refund-swarm", "scenario-strands-error-swallowed", "strands-ok", "langgraph-ok"}

// htmlRun evaluates testdata/html-cases.yaml over the captures, each named by its file as
// handoffcheck names it.
func htmlRun(t *testing.T) *Run {
	t.Helper()
	ev := casesEvaluator(t, "html-cases.yaml")
	run := NewRun(ev.CaseNames())
	for i, name := range htmlCaptures {
		g := captureGraph(t, name)
		file := "testdata/traces/" + name + ".json"
		if i%2 == 0 {
			run.SetSource(g.TraceID.String(), file) // before the results, as a replay does
		}
		run.Add(g, ev.Evaluate(g, true))
		if i%2 == 1 {
			run.SetSource(g.TraceID.String(), file) // or after them
		}
	}
	return run
}

// TestGoldenHTML: the page of the golden run, without the renderer (the golden would
// otherwise hold its 5 MB): the diagrams' Mermaid source, the failures by case, the
// handoff content redacted.
func TestGoldenHTML(t *testing.T) {
	run := htmlRun(t)
	page := string(run.html(nil))
	checkGolden(t, "run.html", []byte(page))
	require.Equal(t, page, string(htmlRun(t).html(nil)), "deterministic")

	// Where each failure happened: the leaking handoff (not the clean one before it), the
	// agent over budget, the cycle's edges; the passing trace is not drawn.
	require.Contains(t, page, `n1 ==&gt;|&#34;✗ context: contains forbidden /\b(?:\d[ -]?){13,16}\b/&#34;| n2`)
	require.Contains(t, page, `n0 --&gt;|&#34;transfer_tool&#34;| n1`, "the clean handoff stays neutral")
	require.Contains(t, page, `✗ budget: used 318 tokens, over maxTokens 200`)
	require.Contains(t, page, `✗ cycle triage, weather_specialist`)
	require.Contains(t, page, `✗ budget: made 2 tool calls, over maxToolCalls 1`)
	require.NotContains(t, page, captureGraph(t, "langgraph-ok").TraceID.String(), "a passing trace is neither listed nor drawn")
	// Beside each trace id: the service and the file.
	require.Contains(t, page, `· service <code>e2e-strands-refund-swarm</code> · file <code>testdata/traces/scenario-strands-refund-swarm.json</code>`)
	require.Contains(t, page, `· service <code>e2e-strands-error-swallowed</code> · file <code>testdata/traces/scenario-strands-error-swallowed.json</code>`)
	// Failures grouped by case, in config order.
	require.Less(t, strings.Index(page, `id="case-refund_swarm"`), strings.Index(page, `id="case-no_cycles"`))
	require.Less(t, strings.Index(page, `id="case-no_cycles"`), strings.Index(page, `id="case-weather_budget"`))
	// The handoff content is behind a click, redacted as the logs are.
	require.Contains(t, page, `<details class="handoff handoff-failed"><summary>billing → refund_specialist (transfer_tool)`)
	require.Contains(t, page, "[REDACTED:card]")
	require.NotContains(t, page, "4111 1111 1111 1111")
	require.NotContains(t, page, "4111111111111111")
	// No network: a policy that forbids it, no URL to load.
	require.Contains(t, page, `default-src 'none'`)
	require.NotContains(t, page, "<script src")
	require.NotContains(t, page, "<link")
	require.Contains(t, page, `id="no-renderer"`, "without the renderer the page says so")
}

// TestHTMLRedactsAndEscapes: the page masks what the policy finds and escapes markup and
// control characters from span data.
func TestHTMLRedactsAndEscapes(t *testing.T) {
	results, b := secretResults()
	run := NewRun([]string{"payments"})
	run.Add(b.Graph(), results)
	page := string(run.html(nil))
	for _, s := range []string{secretCard, secretEmail, secretKey, "4111111111111111", "\x1b"} {
		require.NotContains(t, page, s)
	}
	require.Contains(t, page, "[REDACTED:card]")
	require.Contains(t, page, `evil\nFAIL fake \x1b[31m [REDACTED:email]`)
}

func TestInlineScript(t *testing.T) {
	require.Equal(t, `a="\x3C/script>";b=/\x3C!--/;c="\x3C/SCRIPT"`, string(inlineScript([]byte(`a="</script>";b=/<!--/;c="</SCRIPT"`))))
}

// TestHandoffContentBounded: each part of a handoff's content is cut to maxContent, and a
// secret across the cut is masked, not shown in part.
func TestHandoffContentBounded(t *testing.T) {
	b := tr.New(0x0f)
	root := b.Agent(nil, "dispatcher", 0, 100)
	input := strings.Repeat("x", maxContent-8) + " card 4111 1111 1111 1111 " + strings.Repeat("y", 5000)
	recv := b.Agent(root, "receiver", 10, 90).Input(input)
	g := b.Graph()
	run := NewRun([]string{"c"})
	run.Add(g, []rules.Result{{
		TraceID: g.TraceID.String(), Case: "c", Step: "s", Action: rules.ActionContext,
		Outcome: rules.Fail, Message: "leak", Spans: []string{recv.SpanID().String()}, Complete: true,
	}})
	page := string(run.html(nil))
	require.NotContains(t, page, "4111")
	require.NotContains(t, page, "yyyy", "cut at maxContent")
	require.Contains(t, page, strings.Repeat("x", maxContent-8)+" card [R…</pre>", "masked, then cut")
	require.Contains(t, page, `<details class="handoff handoff-failed"><summary>dispatcher → receiver (nesting): ✗ context: leak</summary>`)
}
