package e2e

// Real clients: the agent frameworks themselves (Google ADK, Strands) run a multi-agent
// scenario on a stub model under Node.js and export their own spans over OTLP/HTTP to the
// built collector. The scenarios live in clients/ (pinned npm packages, installed by
// `make e2e-clients`, which `make test` runs first).

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"sort"
	"strconv"
	"strings"
	"testing"
	"time"
)

const (
	clientsDir = "clients"
	// clientTimeout bounds one scenario process (Node start and module loading included;
	// a scenario takes about a second).
	clientTimeout = 60 * time.Second
	// Case names of testdata/clients.yaml.tmpl.
	handoffCase = "weather_handoff"
	capCase     = "specialist_token_cap"
	swarmCase   = "strands_swarm_routing"
)

// clientScenario is one scenario script and what the collector must make of its trace.
type clientScenario struct {
	name        string
	script      string
	args        []string
	serviceName string
	spans       int // spans the framework emits for the scenario
	handoffs    []clientHandoff
	// results maps (case, step) to the verdict; expected, actual and message are exact but
	// for two placeholders: {ms} (a duration, e.g. 4.21ms) and {span:AGENT} (the span id of
	// that agent's invocation).
	results map[[2]string]clientVerdict
}

type clientHandoff struct {
	source, target, detection string
	promptSource              string // handoff.scope_prompt.source: where the receiver's input came from
	receiverErrors            int64  // handoff.receiver.errors
}

type clientVerdict struct {
	outcome, expected, actual, message string
}

// clientReport is the JSON line a scenario prints on stdout when it is done.
type clientReport struct {
	ServiceName    string       `json:"service_name"`
	Endpoint       string       `json:"endpoint"`
	Answer         string       `json:"answer"`
	Error          string       `json:"error"`
	ExportFailures []string     `json:"export_failures"`
	Spans          []clientSpan `json:"spans"`
}

// clientSpan is a span the scenario's exporter had acknowledged by the collector.
type clientSpan struct {
	TraceID      string `json:"trace_id"`
	SpanID       string `json:"span_id"`
	ParentSpanID string `json:"parent_span_id"`
	Name         string `json:"name"`
	Service      string `json:"service"` // the span's resource service.name
	Links        []struct {
		TraceID string `json:"trace_id"`
		SpanID  string `json:"span_id"`
	} `json:"links"`
	Scope string `json:"scope"`
}

func clientScenarios() []clientScenario {
	const topo2 = "2 agent invocations, 1 handoffs, depth 1, cycles none"
	common := func(topology string, tokens, toolCalls int, budgetOutcome, budgetMessage string) map[[2]string]clientVerdict {
		usage := fmt.Sprintf("tokens %d, duration {ms}, tool calls %d", tokens, toolCalls)
		return map[[2]string]clientVerdict{
			{handoffCase, "ASSERT_AGENT_TOPOLOGY#1"}: {
				"pass", "depth <= 2, no delegation cycles, at least one agent", topology, "topology ok: " + topology,
			},
			{handoffCase, "EXPECT_DELEGATION_TO#2"}: {
				"pass", "triage delegates to weather_specialist between 1 and 1 times", "1 times",
				"triage delegated to weather_specialist 1 times",
			},
			{handoffCase, "EXPECT_AGENT_BUDGET#3"}: {
				budgetOutcome, "weather_specialist subtree: tokens <= 8000, tool calls <= 2", usage, budgetMessage,
			},
			{handoffCase, "EXPECT_HANDOFF_CONTEXT#4"}: {
				"pass", "handoff triage -> weather_specialist whose content satisfies contains /Paris/",
				"1 handoffs with captured input",
				"1 handoffs triage -> weather_specialist carry the expected content; the GROUNDEDNESS rubric was not graded: the step is deterministicOnly",
			},
			{capCase, "ASSERT_AGENT_TOPOLOGY#1"}: {
				"pass", "no delegation cycles, at least one agent", topology, "topology ok: " + topology,
			},
			{capCase, "EXPECT_AGENT_BUDGET#2"}: {
				"fail", "weather_specialist subtree: tokens <= 100", usage,
				fmt.Sprintf("weather_specialist (span {span:weather_specialist}) used %d tokens, over maxTokens 100", tokens),
			},
		}
	}
	withSwarm := func(m map[[2]string]clientVerdict) map[[2]string]clientVerdict {
		m[[2]string{swarmCase, "ASSERT_AGENT_TOPOLOGY#1"}] = clientVerdict{
			"pass", "depth <= 2, no delegation cycles, at least one agent", topo2, "topology ok: " + topo2,
		}
		m[[2]string{swarmCase, "EXPECT_DELEGATION_TO#2"}] = clientVerdict{
			"pass", "triage delegates to weather_specialist between 1 and 1 times", "1 times", "triage delegated to weather_specialist 1 times",
		}
		m[[2]string{swarmCase, "EXPECT_DELEGATION_TO#3"}] = clientVerdict{
			"fail", "weather_specialist delegates to triage at least 1 times", "0 times",
			"expected weather_specialist delegating to triage at least 1 times, saw 0 times",
		}
		return m
	}
	strandsHandoffs := func(errs int64) []clientHandoff {
		return []clientHandoff{
			// The swarm span and its nodes are wrappers, not agents: no handoff into triage.
			// triage's structured output names the next agent: {"agentId":"weather_specialist",...}.
			{"triage", "weather_specialist", "transfer_tool", "event:gen_ai.user.message:content", errs},
		}
	}
	// Tokens are the stub models' fixed usage: specialist 45+9, 70+9, 95+20 = 248; with the
	// retried call of tool-error 45+9, 70+9, 80+9, 110+20 = 352. The structured-output call
	// that ends a Strands swarm node is a routing (delegation) call, not a tool call.
	return []clientScenario{
		{
			name: "google-adk-transfer", script: "adk-transfer.mjs", serviceName: "e2e-google-adk-transfer",
			spans: 10,
			handoffs: []clientHandoff{
				{"triage", "weather_specialist", "transfer_tool", "llm:gcp.vertex.agent.llm_request", 0},
			},
			results: common(topo2, 248, 2, "pass", "weather_specialist within budget: tokens 248, duration {ms}, tool calls 2"),
		},
		{
			name: "strands-swarm", script: "strands-swarm.mjs", args: []string{"ok"}, serviceName: "e2e-strands-swarm",
			spans:    17,
			handoffs: strandsHandoffs(0),
			results:  withSwarm(common(topo2, 248, 2, "pass", "weather_specialist within budget: tokens 248, duration {ms}, tool calls 2")),
		},
		{
			name: "strands-swarm-tool-error", script: "strands-swarm.mjs", args: []string{"tool-error"},
			serviceName: "e2e-strands-swarm-tool-error",
			spans:       20,
			handoffs:    strandsHandoffs(2),
			results: withSwarm(common(topo2, 352, 3, "fail",
				"weather_specialist (span {span:weather_specialist}) made 3 tool calls, over maxToolCalls 2")),
		},
	}
}

func TestRealClients(t *testing.T) {
	node, col, params := startForClients(t, "clients.yaml.tmpl")
	endpoint, metricsURL := params.otlpEndpoint(), params.metricsURL()

	var sent, handoffs, traces int
	for _, sc := range clientScenarios() {
		t.Run(sc.name, func(t *testing.T) {
			rep := runClient(t, node, sc, endpoint)
			traceID := rep.Spans[0].TraceID
			sent += len(rep.Spans)
			handoffs += len(sc.handoffs)
			traces++

			// The spans forwarded to the file exporter: every span the client sent, once,
			// plus the HANDOFF spans.
			spans := col.waitForSpans(t, params.SpansPath, map[string]int{traceID: len(rep.Spans) + len(sc.handoffs)})[traceID]
			agents := checkClientSpans(t, sc, rep, spans)

			// The verdicts.
			results := col.waitForResults(t, params.ReportPath, map[string]int{traceID: len(sc.results)})
			checkClientVerdicts(t, sc, traceID, agents, results)
		})
	}
	if t.Failed() {
		return
	}

	// Nothing lost, nothing held back, nothing late: the processor released exactly the
	// spans the clients had acknowledged, each trace on its root.
	checkNothingLost(t, scrape(t, metricsURL), sent, handoffs, traces)

	col.stop(t)
	if lines, err := completeLines(params.SpansPath); err != nil {
		t.Errorf("after shutdown: %v", err)
	} else if n := countSpans(t, lines); n != sent+handoffs {
		t.Errorf("after shutdown the file exporter holds %d spans, want %d sent + %d HANDOFF", n, sent, handoffs)
	}
}

// requireClients checks that Node.js and the pinned packages of clients/ are installed, and
// returns the node executable. A missing install fails the test: it is part of `make test`.
func requireClients(t *testing.T) string {
	t.Helper()
	node, err := exec.LookPath("node")
	if err != nil {
		t.Fatalf("node not found in PATH (%v): the real-client scenarios need Node.js 20 or later", err)
	}
	out, err := exec.Command(node, "--version").Output()
	if err != nil {
		t.Fatalf("%s --version: %v", node, err)
	}
	version := strings.TrimSpace(string(out))
	major, _ := strconv.Atoi(strings.SplitN(strings.TrimPrefix(version, "v"), ".", 2)[0])
	if major < 20 {
		t.Fatalf("node %s at %s: the real-client scenarios need Node.js 20 or later", version, node)
	}

	raw, err := os.ReadFile(filepath.Join(clientsDir, "package.json"))
	if err != nil {
		t.Fatal(err)
	}
	var pkg struct {
		Dependencies map[string]string `json:"dependencies"`
	}
	if err := json.Unmarshal(raw, &pkg); err != nil {
		t.Fatalf("%s/package.json: %v", clientsDir, err)
	}
	var problems []string
	for name, pin := range pkg.Dependencies {
		raw, err := os.ReadFile(filepath.Join(clientsDir, "node_modules", name, "package.json"))
		if err != nil {
			problems = append(problems, name+" is not installed")
			continue
		}
		var installed struct {
			Version string `json:"version"`
		}
		if err := json.Unmarshal(raw, &installed); err != nil || installed.Version != pin {
			problems = append(problems, fmt.Sprintf("%s is %s, package.json pins %s", name, installed.Version, pin))
		}
	}
	if len(problems) > 0 {
		sort.Strings(problems)
		t.Fatalf("e2e/%s/node_modules is missing or stale (%s): run `make e2e-clients` (`make test` runs it)",
			clientsDir, strings.Join(problems, "; "))
	}
	return node
}

// runClient runs one scenario script against the collector and returns its report: the
// spans of one trace, as many as the scenario emits.
func runClient(t *testing.T, node string, sc clientScenario, endpoint string) clientReport {
	t.Helper()
	rep := runClientReport(t, node, sc, endpoint)
	if len(rep.Spans) != sc.spans {
		t.Errorf("%s sent %d spans, want %d (pinned framework versions emit a fixed shape): %v", sc.script, len(rep.Spans), sc.spans, rep.Spans)
	}
	for _, s := range rep.Spans {
		if s.TraceID != rep.Spans[0].TraceID {
			t.Fatalf("%s sent spans of two traces (%s, %s); the scenario is one trace", sc.script, rep.Spans[0].TraceID, s.TraceID)
		}
	}
	return rep
}

// runClientReport runs a scenario script against the collector and returns its report,
// checking that the script succeeded and the collector acknowledged at least one span.
func runClientReport(t *testing.T, node string, sc clientScenario, endpoint string) clientReport {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), clientTimeout)
	defer cancel()
	argv := append([]string{sc.script}, sc.args...)
	cmd := exec.CommandContext(ctx, node, argv...)
	cmd.Dir = clientsDir
	cmd.WaitDelay = 5 * time.Second
	// The developer's own OTel settings must not leak into the scenario.
	cmd.Env = append(clientEnv(), "OTEL_EXPORTER_OTLP_ENDPOINT="+endpoint)
	var stdout, stderr bytes.Buffer
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	start := time.Now()
	err := cmd.Run()
	elapsed := time.Since(start)
	if err != nil {
		if errors.Is(ctx.Err(), context.DeadlineExceeded) {
			err = fmt.Errorf("killed after %s: %w", clientTimeout, err)
		}
		t.Fatalf("node %s: %v\nstdout:\n%s\nstderr:\n%s", strings.Join(argv, " "), err, stdout.String(), stderr.String())
	}
	t.Logf("node %s: exited 0 in %s", strings.Join(argv, " "), elapsed.Round(time.Millisecond))

	lines := strings.Split(strings.TrimSpace(stdout.String()), "\n")
	var rep clientReport
	dec := json.NewDecoder(strings.NewReader(lines[len(lines)-1]))
	dec.DisallowUnknownFields()
	if err := dec.Decode(&rep); err != nil {
		t.Fatalf("%s: report line %q: %v\nstderr:\n%s", sc.script, lines[len(lines)-1], err, stderr.String())
	}
	if rep.ServiceName != sc.serviceName || rep.Error != "" || len(rep.ExportFailures) > 0 {
		t.Fatalf("%s: service %q (want %q), error %q, export failures %q", sc.script, rep.ServiceName, sc.serviceName, rep.Error, rep.ExportFailures)
	}
	if len(rep.Spans) == 0 {
		t.Fatalf("%s: no span was acknowledged", sc.script)
	}
	return rep
}

// checkClientSpans checks the forwarded spans of one scenario's trace: every span the client
// sent exactly once, unmarked, and exactly the expected HANDOFF spans. It returns the agent
// invocations by name (span ids), for the verdict placeholders.
func checkClientSpans(t *testing.T, sc clientScenario, rep clientReport, got []forwardedSpan) map[string]string {
	t.Helper()
	sent := map[string]bool{}
	for _, s := range rep.Spans {
		sent[s.SpanID] = true
	}
	count := map[string]int{}
	agents := map[string]string{}
	var handoffs []forwardedSpan
	for _, s := range got {
		count[s.spanID]++
		if s.scope == handoffScope {
			handoffs = append(handoffs, s)
			continue
		}
		if !sent[s.spanID] {
			t.Errorf("%s: forwarded span %s %q that the client never sent", sc.name, s.spanID, s.name)
		}
		for _, key := range []string{"handoff.late_span", "handoff.trace.complete", "handoff.trace.release_reason"} {
			if v, ok := s.attrs[key]; ok {
				t.Errorf("%s: span %s %q carries %s=%v; the trace was complete and on time", sc.name, s.spanID, s.name, key, v)
			}
		}
		op, _ := s.attrs["gen_ai.operation.name"].(string)
		name, _ := s.attrs["gen_ai.agent.name"].(string)
		if op == "invoke_swarm" {
			name, _ = s.attrs["gen_ai.agent.id"].(string) // a swarm is named by its id
		}
		if (op == "invoke_agent" || op == "invoke_swarm") && name != "" {
			if prev, dup := agents[name]; dup {
				t.Errorf("%s: agent %s runs twice (spans %s, %s); the scenario runs each agent once", sc.name, name, prev, s.spanID)
			}
			agents[name] = s.spanID
		}
	}
	for _, s := range rep.Spans {
		if count[s.SpanID] != 1 {
			t.Errorf("%s: span %s %q sent by the client was forwarded %d times, want once", sc.name, s.SpanID, s.Name, count[s.SpanID])
		}
	}
	if len(got) != len(rep.Spans)+len(sc.handoffs) {
		t.Errorf("%s: %d spans forwarded, want %d sent + %d HANDOFF", sc.name, len(got), len(rep.Spans), len(sc.handoffs))
	}

	if len(handoffs) != len(sc.handoffs) {
		t.Errorf("%s: HANDOFF spans %v, want %d: %+v", sc.name, handoffs, len(sc.handoffs), sc.handoffs)
	}
	byTarget := map[string]forwardedSpan{}
	for _, h := range handoffs {
		byTarget[fmt.Sprint(h.attrs["handoff.target"])] = h
	}
	for _, w := range sc.handoffs {
		h, ok := byTarget[w.target]
		if !ok {
			t.Errorf("%s: no HANDOFF span to %s; got %v", sc.name, w.target, handoffs)
			continue
		}
		at := fmt.Sprintf("%s: HANDOFF span %s %q", sc.name, h.spanID, h.name)
		if want := "handoff " + w.source + " -> " + w.target; h.name != want {
			t.Errorf("%s: name, want %q", at, want)
		}
		for key, want := range map[string]any{
			"fi.span.kind":                "HANDOFF",
			"handoff.source":              w.source,
			"handoff.target":              w.target,
			"handoff.detection":           w.detection,
			"handoff.inferred":            false,
			"handoff.source.span_id":      agents[w.source],
			"handoff.target.span_id":      agents[w.target],
			"handoff.scope_prompt.source": w.promptSource,
			"handoff.receiver.errors":     w.receiverErrors,
		} {
			if got := h.attrs[key]; got != want {
				t.Errorf("%s: %s = %#v, want %#v", at, key, got, want)
			}
		}
		if h.parentID != agents[w.source] {
			t.Errorf("%s: parent %s, want the sender's agent span %s", at, h.parentID, agents[w.source])
		}
		// The receiver's input was captured: it names the cities the user asked about.
		if prompt, _ := h.attrs["handoff.scope_prompt"].(string); !strings.Contains(prompt, "Paris") {
			t.Errorf("%s: handoff.scope_prompt %.300q does not carry the user's question", at, prompt)
		}
	}
	return agents
}

// checkClientVerdicts checks that the trace got exactly the expected results, each once.
func checkClientVerdicts(t *testing.T, sc clientScenario, traceID string, agents map[string]string, all []result) {
	t.Helper()
	seen := map[[2]string]int{}
	for _, r := range all {
		if r.TraceID != traceID {
			continue
		}
		key := [2]string{r.Case, r.Step}
		seen[key]++
		w, ok := sc.results[key]
		if !ok {
			t.Errorf("%s: unexpected result %+v", sc.name, r)
			continue
		}
		at := fmt.Sprintf("%s %s/%s", sc.name, r.Case, r.Step)
		if r.Outcome != w.outcome {
			t.Errorf("%s: outcome %q, want %q (actual %q, message %q)", at, r.Outcome, w.outcome, r.Actual, r.Message)
		}
		if !r.Complete {
			t.Errorf("%s: trace_complete false; the trace was released on its root", at)
		}
		for _, f := range []struct{ field, got, want string }{
			{"expected", r.Expected, w.expected},
			{"actual", r.Actual, w.actual},
			{"message", r.Message, w.message},
		} {
			if !verdictPattern(f.want, agents).MatchString(f.got) {
				t.Errorf("%s: %s %q, want %q", at, f.field, f.got, f.want)
			}
		}
	}
	for key := range sc.results {
		if seen[key] != 1 {
			t.Errorf("%s: %d results for %s/%s, want 1", sc.name, seen[key], key[0], key[1])
		}
	}
}

var placeholder = regexp.MustCompile(`\\\{(ms|span:[a-z_]+)\\\}`)

// verdictPattern turns an expected verdict text into an anchored regexp: {ms} matches a
// duration, {span:AGENT} the agent's span id.
func verdictPattern(text string, agents map[string]string) *regexp.Regexp {
	quoted := regexp.QuoteMeta(text)
	return regexp.MustCompile("^" + placeholder.ReplaceAllStringFunc(quoted, func(m string) string {
		name := strings.TrimSuffix(strings.TrimPrefix(m, `\{`), `\}`)
		if name == "ms" {
			return `[0-9]+(\.[0-9]+)?ms`
		}
		id, ok := agents[strings.TrimPrefix(name, "span:")]
		if !ok {
			return `<no such agent>`
		}
		return id
	}) + "$")
}
