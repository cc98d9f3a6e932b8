package report

import (
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"
	"go.opentelemetry.io/collector/confmap"
	"go.yaml.in/yaml/v3"

	"github.com/otelcol-handoff/otelcol-handoff/internal/agentgraph"
	"github.com/otelcol-handoff/otelcol-handoff/internal/rules"
	tr "github.com/otelcol-handoff/otelcol-handoff/internal/rules/rulestest"
)

// captureGraph builds the DAG of a real capture in testdata/traces (one trace).
func captureGraph(t *testing.T, name string) *agentgraph.Graph {
	t.Helper()
	return fileGraph(t, filepath.Join("..", "..", "testdata", "traces", name+".json"))
}

// fileGraph builds the one trace of a span file.
func fileGraph(t *testing.T, path string) *agentgraph.Graph { return tr.FileGraph(t, path) }

// picture evaluates the cases of config over g, adds the results to a run and returns the
// Mermaid block the Markdown report draws for g's trace.
func picture(t *testing.T, config string, g *agentgraph.Graph) string {
	t.Helper()
	var raw map[string]any
	require.NoError(t, yaml.Unmarshal([]byte(config), &raw))
	var cfg struct {
		Cases []rules.CaseConfig `mapstructure:"cases"`
	}
	require.NoError(t, confmap.NewFromStringMap(raw).Unmarshal(&cfg))
	ev, err := rules.Compile(cfg.Cases, rules.Options{})
	require.NoError(t, err)
	run := NewRun(ev.CaseNames())
	run.Add(g, ev.Evaluate(g, true))
	md := string(run.Markdown())
	head := "### Trace `" + g.TraceID.String() + "`"
	i := strings.Index(md, head)
	require.GreaterOrEqual(t, i, 0, "the trace is drawn:\n%s", md)
	block := md[i:]
	start := strings.Index(block, "```mermaid\n")
	require.GreaterOrEqual(t, start, 0)
	block = block[start:]
	end := strings.Index(block, "\n```\n")
	require.GreaterOrEqual(t, end, 0)
	return block[:end+len("\n```\n")]
}

// TestMermaidStrandsSwarm: strands-ok.json (a real Strands capture) runs triage and
// weather_specialist in the swarm weather_swarm. The picture draws the swarm as a subgraph
// around both agents; the swarm's execute_node wrappers, each around the one agent of its
// name, are left out. weather_specialist makes two get_weather calls, over the budget.
func TestMermaidStrandsSwarm(t *testing.T) {
	got := picture(t, `
cases:
  - name: weather_budget
    steps:
      - action: ASSERT_AGENT_TOPOLOGY
      - action: EXPECT_AGENT_BUDGET
        agentName: weather_specialist
        maxToolCalls: 1
`, captureGraph(t, "strands-ok"))
	require.Equal(t, "```mermaid\n"+
		"graph TD\n"+
		"  subgraph w0[\"swarm: weather_swarm\"]\n"+
		"    n0[\"<b>triage</b><br/>62 tok · 0 tool calls · 14 ms\"]\n"+
		"    n1[\"<b>weather_specialist</b><br/>221 tok · 2 tool calls · 9 ms<br/>✗ budget: made 2 tool calls, over maxToolCalls 1\"]\n"+
		"  end\n"+
		"  n0 -->|\"transfer_tool\"| n1\n"+
		"  classDef failed fill:#fde2e2,stroke:#c0392b,stroke-width:2px,color:#000\n"+
		"  class n1 failed\n"+
		"```\n", got)
}

// TestMermaidStrandsRefundSwarm: three agents of one swarm (a real Strands capture), the
// last of them over its budget.
func TestMermaidStrandsRefundSwarm(t *testing.T) {
	got := picture(t, `
cases:
  - name: refund_budget
    steps:
      - action: ASSERT_AGENT_TOPOLOGY
      - action: EXPECT_AGENT_BUDGET
        agentName: refund_specialist
        maxToolCalls: 0
`, captureGraph(t, "scenario-strands-refund-swarm"))
	require.Equal(t, "```mermaid\n"+
		"graph TD\n"+
		"  subgraph w0[\"swarm: refund_swarm\"]\n"+
		"    n0[\"<b>triage</b><br/>40 tok · 0 tool calls · 11 ms\"]\n"+
		"    n1[\"<b>billing</b><br/>146 tok · 1 tool call · 9 ms\"]\n"+
		"    n2[\"<b>refund_specialist</b><br/>172 tok · 1 tool call · 7 ms<br/>✗ budget: made 1 tool calls, over maxToolCalls 0\"]\n"+
		"  end\n"+
		"  n0 -->|\"transfer_tool\"| n1\n"+
		"  n1 -->|\"transfer_tool\"| n2\n"+
		"  classDef failed fill:#fde2e2,stroke:#c0392b,stroke-width:2px,color:#000\n"+
		"  class n2 failed\n"+
		"```\n", got)
}

// TestMermaidLangGraphWorkflow: a LangGraph Command graph (a real capture) is a workflow
// wrapper named after the graph.
func TestMermaidLangGraphWorkflow(t *testing.T) {
	got := picture(t, `
cases:
  - name: shallow
    steps:
      - action: ASSERT_AGENT_TOPOLOGY
        maxDepth: 0
`, captureGraph(t, "scenario-langgraph-command"))
	require.Equal(t, "```mermaid\n"+
		"graph TD\n"+
		"  subgraph w0[\"workflow: weather_graph\"]\n"+
		"    n0[\"<b>triage</b><br/>36 tok · 0 tool calls · 23 ms\"]\n"+
		"    n1[\"<b>weather_specialist</b><br/>248 tok · 2 tool calls · 31 ms\"]\n"+
		"  end\n"+
		"  n0 ==>|\"✗ depth 1 #gt; maxDepth 0\"| n1\n"+
		"  linkStyle 0 stroke:#c0392b,stroke-width:3px,color:#c0392b\n"+
		"```\n", got)
}

// nestedWrappersMarkdown is the Markdown report of a trace with nested wrappers: no capture nests a swarm in a workflow or runs two agents in
// one swarm node, so this trace is built by hand: a workflow (its name quoting, breaking
// the line and carrying an email) holds planner and a Strands-shaped swarm, whose nodes
// are critic (one agent of the node's name: left out, critic drawn in the swarm), checks
// (two agents: drawn) and editor (an agent of another name: drawn). fact_checker, run by
// critic, is no member of a wrapper (an agent span is between them) and is drawn outside,
// as are intake and publisher, which run outside the workflow. (The model infers the
// sibling handoffs linter -> tester and intake -> publisher: arrows drawn after the groups.)
func nestedWrappersMarkdown(t *testing.T) string {
	t.Helper()
	b := tr.New(0x0e)
	runner := b.Other(nil, "runner", 0, 100)
	b.Agent(runner, "intake", 1, 5)
	wf := b.Other(runner, "workflow", 10, 90).Attr("gen_ai.operation.name", "invoke_workflow").
		Attr("gen_ai.workflow.name", "release \"v2\"\n<b>| for jane.doe@example.com")
	b.Agent(wf, "planner", 11, 20)
	swarm := b.Other(wf, "invoke_swarm", 21, 80).Attr("gen_ai.operation.name", "invoke_swarm").
		Attr("gen_ai.agent.name", "swarm").Attr("gen_ai.agent.id", "review_swarm")
	node := func(id string, start, end int) *tr.Span {
		return b.Other(swarm, "execute_node "+id, start, end).Attr("gen_ai.operation.name", "execute_node").
			Attr("gen_ai.agent.id", id)
	}
	critic := b.Agent(node("critic", 22, 40), "critic", 23, 39)
	checker := b.Agent(critic, "fact_checker", 24, 30)
	checks := node("checks", 41, 60)
	b.Agent(checks, "linter", 42, 50)
	b.Agent(checks, "tester", 51, 59)
	b.Agent(node("editor", 61, 79), "copy_editor", 62, 78)
	b.Agent(runner, "publisher", 91, 99)
	g := b.Graph()

	run := NewRun([]string{"c"})
	run.Add(g, []rules.Result{{
		TraceID: g.TraceID.String(), Case: "c", Step: "s", Outcome: rules.Fail,
		Spans: []string{checker.SpanID().String()}, Complete: true,
	}})
	return string(run.Markdown())
}

// TestMermaidNestedWrappers: see nestedWrappersMarkdown.
func TestMermaidNestedWrappers(t *testing.T) {
	md := nestedWrappersMarkdown(t)
	require.Contains(t, md, "```mermaid\n"+
		"graph TD\n"+
		"  n0[\"<b>intake</b><br/>0 tok · 0 tool calls · 4 ms\"]\n"+
		"  subgraph w0[\"workflow: release #quot;v2#quot;\\n#lt;b#gt;#124; for [REDACTED:email]\"]\n"+
		"    n1[\"<b>planner</b><br/>0 tok · 0 tool calls · 9 ms\"]\n"+
		"    subgraph w1[\"swarm: review_swarm\"]\n"+
		"      n2[\"<b>critic</b><br/>0 tok · 0 tool calls · 16 ms\"]\n"+
		"      subgraph w2[\"node: checks\"]\n"+
		"        n4[\"<b>linter</b><br/>0 tok · 0 tool calls · 8 ms\"]\n"+
		"        n5[\"<b>tester</b><br/>0 tok · 0 tool calls · 8 ms\"]\n"+
		"      end\n"+
		"      subgraph w3[\"node: editor\"]\n"+
		"        n6[\"<b>copy_editor</b><br/>0 tok · 0 tool calls · 16 ms\"]\n"+
		"      end\n"+
		"    end\n"+
		"  end\n"+
		"  n3[\"<b>fact_checker</b><br/>0 tok · 0 tool calls · 6 ms<br/>✗ s\"]\n"+
		"  n7[\"<b>publisher</b><br/>0 tok · 0 tool calls · 8 ms\"]\n"+
		"  n2 -->|\"nesting\"| n3\n"+
		"  n4 -->|\"inferred_sibling\"| n5\n"+
		"  n0 -->|\"inferred_sibling\"| n7\n"+
		"  classDef failed fill:#fde2e2,stroke:#c0392b,stroke-width:2px,color:#000\n"+
		"  class n3 failed\n"+
		"```\n", md)
	require.NotContains(t, md, "jane.doe@example.com", "wrapper names are redacted like agent names")
}
