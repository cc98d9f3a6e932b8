package e2e

import (
	"fmt"
	"os"
	"path/filepath"
	"reflect"
	"testing"

	"github.com/open-telemetry/opentelemetry-collector-contrib/processor/tailsamplingprocessor"
	"go.opentelemetry.io/collector/confmap"
	"go.opentelemetry.io/collector/pdata/pcommon"
	yaml "go.yaml.in/yaml/v3"

	"github.com/otelcol-handoff/otelcol-handoff/internal/readmetest"
)

// TestKeepFailuresSampling runs the shipped tail_sampling policies (taken verbatim from
// config/keep-failures.yaml) behind the handoff processor, on traces that already carry
// their verdict as the assertion connector stamps it: every copy of every real capture,
// with a fixed pattern of verdicts (pass, fail, error, none). Every trace whose verdict is
// not `pass` must arrive whole, and of the others exactly those the probabilistic policy's
// hash selects: a count computed here and pinned below. tail_sampling's own counters agree,
// and late spans follow their trace's decision.
func TestKeepFailuresSampling(t *testing.T) {
	bin := collectorBinary(t)
	cfg := shippedConfig(t)
	tailSampling := section(t, cfg, "processors", "tail_sampling")
	prob := shippedProbabilistic(t, tailSampling)

	traces := keepFailuresFixture(t)
	verdicts := map[pcommon.TraceID]string{}
	counts := map[string]int{}
	sampledPassing := 0
	for i, f := range traces {
		v := [...]string{"pass", "fail", "pass", "error", "pass", "pass", ""}[i%7]
		f.stampVerdict(v)
		verdicts[f.traceID] = v
		counts[v]++
		if !keptVerdict(v) && prob.sampled(f.traceID) {
			sampledPassing++
		}
	}
	// Pinned for the fixture (16 single-trace captures × 6 copies: 28 non-passing, 68
	// passing or unjudged) and the shipped salt and 10 %: a change to either, or to the
	// hash, shows here first.
	const wantSampledPassing, wantTraces = 6, 96
	if sampledPassing != wantSampledPassing || len(traces) != wantTraces {
		t.Fatalf("of %d traces (%v), %d passing or unjudged traces are sampled at %v %% with salt %q; the test pins %d of 96",
			len(traces), counts, sampledPassing, prob.percentage, prob.salt, wantSampledPassing)
	}
	t.Logf("%d traces: verdicts %v; kept: %d non-passing + %d of %d passing/unjudged",
		len(traces), counts, counts["fail"]+counts["error"], sampledPassing, counts["pass"]+counts[""])

	dir := t.TempDir()
	httpPort, healthPort, metricsPort := freePort(t), freePort(t), freePort(t)
	out := filepath.Join(dir, "sampled.jsonl")
	testCfg := map[string]any{
		"receivers": map[string]any{"otlp": map[string]any{"protocols": map[string]any{
			"http": map[string]any{"endpoint": fmt.Sprintf("127.0.0.1:%d", httpPort)},
		}}},
		"processors": map[string]any{
			"handoff":       map[string]any{"quiet_period": "200ms", "max_wait": "2s"},
			"tail_sampling": tailSampling,
		},
		"exporters":  map[string]any{"file": map[string]any{"path": out}},
		"extensions": map[string]any{"health_check": map[string]any{"endpoint": fmt.Sprintf("127.0.0.1:%d", healthPort)}},
		"service": map[string]any{
			"extensions": []any{"health_check"},
			"pipelines": map[string]any{"traces": map[string]any{
				"receivers": []any{"otlp"}, "processors": []any{"handoff", "tail_sampling"}, "exporters": []any{"file"},
			}},
			"telemetry": map[string]any{"metrics": map[string]any{"readers": []any{map[string]any{"pull": map[string]any{
				"exporter": map[string]any{"prometheus": map[string]any{"host": "127.0.0.1", "port": metricsPort}},
			}}}}},
		},
	}
	raw, err := yaml.Marshal(testCfg)
	if err != nil {
		t.Fatal(err)
	}
	cfgPath := filepath.Join(dir, "config.yaml")
	if err := os.WriteFile(cfgPath, raw, 0o600); err != nil {
		t.Fatal(err)
	}

	col := startCollector(t, bin, cfgPath)
	col.waitReady(t, fmt.Sprintf("http://127.0.0.1:%d/", healthPort))
	url := fmt.Sprintf("http://127.0.0.1:%d/v1/traces", httpPort)
	for _, f := range traces {
		postTraces(t, url, f.td)
	}
	want := keptTraces(traces, verdicts, prob)
	waitKept(t, col, out, want, verdicts)

	// tail_sampling's own counters: every trace decided once, each policy's share.
	metricsURL := fmt.Sprintf("http://127.0.0.1:%d/metrics", metricsPort)
	byPolicy := map[string]int{}
	for _, f := range traces {
		if keptVerdict(verdicts[f.traceID]) {
			byPolicy["keep-non-passing"]++
		}
		if prob.sampled(f.traceID) {
			byPolicy["sample-passing"]++
		}
	}
	col.eventually(t, resultTimeout, "tail_sampling's decision counters", func() (bool, string) {
		m := scrape(t, metricsURL)
		state := ""
		ok := true
		for _, c := range []struct {
			name   string
			labels map[string]string
			want   int
		}{
			{"otelcol_processor_tail_sampling_global_count_traces_sampled", map[string]string{"sampled": "true"}, len(want)},
			{"otelcol_processor_tail_sampling_global_count_traces_sampled", map[string]string{"sampled": "false"}, len(traces) - len(want)},
			{"otelcol_processor_tail_sampling_count_traces_sampled", map[string]string{"policy": "keep-non-passing", "sampled": "true"}, byPolicy["keep-non-passing"]},
			{"otelcol_processor_tail_sampling_count_traces_sampled", map[string]string{"policy": "sample-passing", "sampled": "true"}, byPolicy["sample-passing"]},
			{"otelcol_processor_tail_sampling_sampling_policy_evaluation_error", nil, 0},
		} {
			got := m.sum(c.name, c.labels)
			state += fmt.Sprintf("%s%s = %v (want %d); ", c.name, labelString(c.labels), got, c.want)
			ok = ok && got == float64(c.want)
		}
		return ok, state
	})

	// Late spans follow their trace's decision (the decision caches): one for a kept failing
	// trace arrives although it carries no verdict and the hash does not select its trace, one
	// for a passing trace the hash did not select does not.
	var keptFail, dropped fixtureTrace
	for _, f := range traces {
		switch {
		case verdicts[f.traceID] == "fail" && !prob.sampled(f.traceID) && keptFail.spanIDs == nil:
			keptFail = f
		case verdicts[f.traceID] == "pass" && !prob.sampled(f.traceID) && dropped.spanIDs == nil:
			dropped = f
		}
	}
	if keptFail.spanIDs == nil || dropped.spanIDs == nil {
		t.Fatal("the fixture has no failing trace outside the hash's share, or no dropped passing trace")
	}
	late, lateID := keptFail.lateSpan(t)
	postTraces(t, url, late)
	droppedLate, _ := dropped.lateSpan(t)
	postTraces(t, url, droppedLate)
	keptFail.spanIDs[lateID] = true
	waitKept(t, col, out, map[pcommon.TraceID]fixtureTrace{keptFail.traceID: keptFail}, verdicts)

	col.stop(t)
	checkExactlyKept(t, out, want, verdicts)
}

// TestKeepFailuresREADME: the tail_sampling block of README.md's "Keep the failures" is the
// shipped one, and contrib's tail_sampling factory accepts it.
func TestKeepFailuresREADME(t *testing.T) {
	shipped := section(t, shippedConfig(t), "processors", "tail_sampling")
	found := 0
	for _, block := range readmetest.Maps(t, filepath.Join("..", "README.md")) {
		procs, _ := block["processors"].(map[string]any)
		ts, ok := procs["tail_sampling"].(map[string]any)
		if !ok {
			continue
		}
		found++
		if !reflect.DeepEqual(ts, shipped) {
			t.Errorf("README.md's tail_sampling block differs from %s:\nREADME: %v\nshipped: %v", keepFailuresConfig, ts, shipped)
		}
		cfg := tailsamplingprocessor.NewFactory().CreateDefaultConfig()
		if err := confmap.NewFromStringMap(ts).Unmarshal(cfg); err != nil {
			t.Fatalf("README.md's tail_sampling block: %v", err)
		}
		if err := confmap.Validate(cfg); err != nil {
			t.Errorf("README.md's tail_sampling block: %v", err)
		}
	}
	if found != 1 {
		t.Errorf("README.md: %d YAML blocks with processors.tail_sampling, want 1", found)
	}
}
