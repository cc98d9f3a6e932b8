package e2e

// Real clients: the agent frameworks themselves (Google ADK, Strands) run a multi-agent
// scenario on a stub model under Node.js and export their own spans over OTLP/HTTP to the
// built collector. The scenarios live in clients/ (pinned npm packages, installed by
// `make e2e-clients`, which `make test` runs first).

import (
	"fmt"
	"regexp"
	"strings"
	"testing"
)

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
