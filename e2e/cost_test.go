package e2e

import (
	"fmt"
	"math"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
)

// costConfig prices the Strands captures' stub model mock-weather-1 (not mock-triage-1) in
// both components, and budgets three runs.
const costConfig = `
receivers:
  otlp:
    protocols:
      http: {endpoint: 127.0.0.1:0}
processors:
  handoff:
    pricing:
      models:
        - {model: mock-weather-1, input_usd_per_mtok: 1, output_usd_per_mtok: 4}
exporters:
  assertion:
    pricing:
      models:
        - {model: mock-weather-1, input_usd_per_mtok: 1, output_usd_per_mtok: 4}
    cases:
      - name: jokes
        when: '"joke_agent" in agents'
        steps:
          - action: ASSERT_AGENT_TOPOLOGY
          - action: EXPECT_AGENT_BUDGET
            agentName: joke_agent
            maxCostUsd: 0.00015
      - name: weather
        when: '"weather_specialist" in agents'
        steps:
          - action: ASSERT_AGENT_TOPOLOGY
          - action: EXPECT_AGENT_BUDGET
            agentName: weather_specialist
            maxCostUsd: 0.0003
          - action: EXPECT_AGENT_BUDGET
            agentName: triage
            maxCostUsd: 1
service:
  pipelines:
    traces:
      receivers: [otlp]
      processors: [handoff]
      exporters: [assertion]
`

// TestCostBudgetsThroughHandoffcheck replays a Pydantic AI capture that reports its costs
// (operation.cost, testdata/corpus) and the Strands capture on stub models through the
// built handoffcheck: the reported costs are summed (joke_agent's first run: 0.00009435 +
// 0.00008355), the override prices weather_specialist's calls (190 input, 31 output tokens
// at $1 and $4 per million: $0.000314), and triage's subtree, whose own call's model has no
// price, is incomplete: an error, which the default --fail-on counts and --fail-on fail
// does not.
func TestCostBudgetsThroughHandoffcheck(t *testing.T) {
	dir := t.TempDir()
	cfg := filepath.Join(dir, "cost.yaml")
	if err := os.WriteFile(cfg, []byte(costConfig), 0o644); err != nil {
		t.Fatal(err)
	}
	files := []string{
		filepath.Join("..", "testdata", "corpus", "lf-pydantic-ai-multiagent.otlp.json"),
		filepath.Join("..", "testdata", "traces", "strands-ok.json"),
	}
	out := filepath.Join(dir, "results.jsonl")
	code, stdout, stderr := runCheck(t, os.Environ(), append([]string{"replay", "--config", cfg, "--json", out}, files...)...)
	if code != 1 {
		t.Fatalf("handoffcheck exit %d, want 1\n%s%s", code, stdout, stderr)
	}
	got := map[string]string{}
	for _, r := range readResults(t, out) {
		if r.Action == "EXPECT_AGENT_BUDGET" {
			got[r.Case+"/"+r.Step] = r.Outcome + ": " + r.Message
		}
	}
	want := map[string]string{
		"jokes/EXPECT_AGENT_BUDGET#2":   "fail: joke_agent (span 5b5c52d029f28206) cost $0.0001779, over maxCostUsd 0.00015",
		"weather/EXPECT_AGENT_BUDGET#2": "fail: weather_specialist (span 6bcab0b4c887d392) cost $0.000314, over maxCostUsd 0.0003",
		"weather/EXPECT_AGENT_BUDGET#3": "error: incomplete: no price for model mock-triage-1 (triage (span fa02bab16782b0b7)): " +
			"the cost is unknown, so maxCostUsd 1 cannot be checked; price the model under pricing.models",
	}
	for k, w := range want {
		if got[k] != w {
			t.Errorf("%s:\n got %q\nwant %q", k, got[k], w)
		}
	}
	if len(got) != len(want) {
		t.Errorf("budget results %v, want %d", got, len(want))
	}

	// Only the incomplete budget: an error fails the run by default, not under --fail-on fail.
	only := strings.Replace(costConfig, "maxCostUsd: 0.0003", "maxCostUsd: 0.001", 1)
	only = strings.Replace(only, "maxCostUsd: 0.00015", "maxCostUsd: 0.001", 1)
	if err := os.WriteFile(cfg, []byte(only), 0o644); err != nil {
		t.Fatal(err)
	}
	if code, stdout, stderr := runCheck(t, os.Environ(), append([]string{"replay", "--config", cfg}, files...)...); code != 1 {
		t.Errorf("default --fail-on: exit %d, want 1 (the incomplete budget is an error)\n%s%s", code, stdout, stderr)
	}
	if code, stdout, stderr := runCheck(t, os.Environ(), append([]string{"replay", "--config", cfg, "--fail-on", "fail"}, files...)...); code != 0 {
		t.Errorf("--fail-on fail: exit %d, want 0\n%s%s", code, stdout, stderr)
	}
}

// TestCostOnForwardedSpans: the built collector forwards the Pydantic AI capture with each
// chat span's reported cost (operation.cost) copied to handoff.usage.cost_usd, source
// reported, and the HANDOFF span of joke_agent → evaluator_agent (an inferred handoff)
// carrying evaluator_agent's one call, $0.00006105; the Strands capture's chat spans, on a
// stub model with no price, say so instead of a cost, and its HANDOFF span names the model.
func TestCostOnForwardedSpans(t *testing.T) {
	bin := collectorBinary(t)
	dir := t.TempDir()
	params := configParams{GRPCPort: freePort(t), HTTPPort: freePort(t), HealthPort: freePort(t), MetricsPort: freePort(t),
		ReportPath: filepath.Join(dir, "verdicts.jsonl"), SpansPath: filepath.Join(dir, "spans.jsonl")}
	col := startCollector(t, bin, writeConfig(t, dir, params))
	col.waitReady(t, fmt.Sprintf("http://127.0.0.1:%d/", params.HealthPort))
	pyd := loadCapture(t, filepath.Join("..", "corpus", "lf-pydantic-ai-multiagent.otlp.json"))
	strands := loadCapture(t, "strands-ok.json")
	for _, c := range []capture{pyd, strands} {
		postTraces(t, fmt.Sprintf("http://127.0.0.1:%d/v1/traces", params.HTTPPort), c.td)
	}
	spans := col.waitForSpans(t, params.SpansPath, map[string]int{pyd.traceID: len(pyd.spanIDs) + 1, strands.traceID: len(strands.spanIDs) + 1})
	col.stop(t)

	chats := 0
	for _, s := range spans[pyd.traceID] {
		switch {
		case strings.HasPrefix(s.name, "chat "):
			chats++
			reported, _ := s.attrs["operation.cost"].(string)
			want, err := strconv.ParseFloat(reported, 64)
			if err != nil {
				t.Fatalf("%s: operation.cost %q: %v", s, reported, err)
			}
			if got, _ := s.attrs["handoff.usage.cost_usd"].(float64); s.attrs["handoff.usage.cost_source"] != "reported" ||
				s.attrs["handoff.usage.cost_basis"] != "operation.cost" || got != want {
				t.Errorf("%s: cost attributes %v, want source reported from operation.cost %s", s, costAttrs(s), reported)
			}
		case s.name == "handoff joke_agent -> evaluator_agent":
			if v, _ := s.attrs["handoff.usage.cost_usd"].(float64); math.Abs(v-0.00006105) > 1e-12 || s.attrs["handoff.usage.cost_complete"] != true {
				t.Errorf("HANDOFF span cost %v, want 6.105e-05, complete", costAttrs(s))
			}
		}
	}
	if chats != 4 {
		t.Errorf("%d chat spans, want 4", chats)
	}
	for _, s := range spans[strands.traceID] {
		if s.name == "handoff triage -> weather_specialist" {
			if models, _ := s.attrs["handoff.usage.unpriced_models"].([]any); s.attrs["handoff.usage.cost_complete"] != false ||
				len(models) != 1 || models[0] != "mock-weather-1" {
				t.Errorf("HANDOFF span cost %v, want incomplete, unpriced mock-weather-1", costAttrs(s))
			}
		}
		if _, tokens := s.attrs["gen_ai.usage.input_tokens"]; s.name != "chat" || !tokens {
			continue
		}
		if _, has := s.attrs["handoff.usage.cost_usd"]; has || s.attrs["handoff.usage.cost_source"] != "unpriced" {
			t.Errorf("%s: cost attributes %v, want unpriced", s, costAttrs(s))
		}
	}
}

func costAttrs(s forwardedSpan) map[string]any {
	out := map[string]any{}
	for k, v := range s.attrs {
		if strings.HasPrefix(k, "handoff.usage.") {
			out[k] = v
		}
	}
	return out
}
