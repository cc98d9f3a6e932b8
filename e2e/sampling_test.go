package e2e

import (
	"crypto/sha256"
	"fmt"
	"hash/fnv"
	"math"
	"math/big"
	"os"
	"path/filepath"
	"reflect"
	"sort"
	"testing"

	"github.com/open-telemetry/opentelemetry-collector-contrib/processor/tailsamplingprocessor"
	"go.opentelemetry.io/collector/confmap"
	"go.opentelemetry.io/collector/pdata/pcommon"
	"go.opentelemetry.io/collector/pdata/ptrace"
	yaml "go.yaml.in/yaml/v3"

	"github.com/otelcol-handoff/otelcol-handoff/internal/agentgraph"
	"github.com/otelcol-handoff/otelcol-handoff/internal/readmetest"
)

// keepFailuresConfig is the shipped keep-the-failures pipeline.
const keepFailuresConfig = "../config/keep-failures.yaml"

// verdictAttr is the attribute the assertion connector stamps on the root agent span.
const verdictAttr = "handoff.verdict"

// copiesPerCapture: every capture of testdata/traces is sent this many times, each copy
// under its own trace id.
const copiesPerCapture = 6

// shippedConfig reads config/keep-failures.yaml as a generic map.
func shippedConfig(t *testing.T) map[string]any {
	t.Helper()
	raw, err := os.ReadFile(keepFailuresConfig)
	if err != nil {
		t.Fatal(err)
	}
	var cfg map[string]any
	if err := yaml.Unmarshal(raw, &cfg); err != nil {
		t.Fatalf("%s: %v", keepFailuresConfig, err)
	}
	return cfg
}

// section returns cfg[path[0]][path[1]]..., failing the test when a level is missing.
func section(t *testing.T, cfg map[string]any, path ...string) map[string]any {
	t.Helper()
	cur := cfg
	for _, p := range path {
		next, ok := cur[p].(map[string]any)
		if !ok {
			t.Fatalf("%s: no map at %v (stopped at %q)", keepFailuresConfig, path, p)
		}
		cur = next
	}
	return cur
}

// probabilisticPolicy is the shipped sample-passing policy's salt and percentage.
type probabilisticPolicy struct {
	salt       string
	percentage float64
}

func shippedProbabilistic(t *testing.T, tailSampling map[string]any) probabilisticPolicy {
	t.Helper()
	policies, _ := tailSampling["policies"].([]any)
	var found []probabilisticPolicy
	for _, p := range policies {
		pm, _ := p.(map[string]any)
		if pm["type"] != "probabilistic" {
			continue
		}
		prob, _ := pm["probabilistic"].(map[string]any)
		salt, _ := prob["hash_salt"].(string)
		var pct float64
		switch v := prob["sampling_percentage"].(type) {
		case int:
			pct = float64(v)
		case float64:
			pct = v
		default:
			t.Fatalf("%s: sampling_percentage %v (%T) is not a number", keepFailuresConfig, v, v)
		}
		found = append(found, probabilisticPolicy{salt: salt, percentage: pct})
	}
	if len(found) != 1 {
		t.Fatalf("%s: %d probabilistic policies in tail_sampling, want 1", keepFailuresConfig, len(found))
	}
	if found[0].salt == "" {
		t.Fatalf("%s: the probabilistic policy needs an explicit hash_salt", keepFailuresConfig)
	}
	return found[0]
}

// sampledByProbabilistic mirrors contrib tail_sampling v0.161.0's probabilistic policy
// (internal/sampling/probabilistic.go, without the usetracestate gate, which is alpha and
// off): FNV-1a over the salt then the 16 trace id bytes, kept when the hash is at most
// MaxUint64 × percentage/100 (computed with big.Float as upstream does).
func (p probabilisticPolicy) sampled(id pcommon.TraceID) bool {
	boundary := new(big.Float).SetInt(new(big.Int).SetUint64(math.MaxUint64))
	threshold, _ := boundary.Mul(boundary, big.NewFloat(p.percentage/100)).Uint64()
	h := fnv.New64a()
	_, _ = h.Write([]byte(p.salt))
	_, _ = h.Write(id[:])
	return h.Sum64() <= threshold
}

// fixtureTrace is one copy of a real capture under a fresh trace id.
type fixtureTrace struct {
	capture string
	td      ptrace.Traces
	traceID pcommon.TraceID
	spanIDs map[string]bool
	// rootAgent is the span id of the root agent span (the trace's root span when there is
	// no agent).
	rootAgent string
}

// keepFailuresCaptures are the real-framework captures of the weather scenario (one per
// framework and outcome), named so that new fixtures in testdata/traces do not move the
// pinned counts below.
var keepFailuresCaptures = []string{
	"google-adk-agent-tool.json", "google-adk-ok.json", "google-adk-tool-error.json",
	"langgraph-ok.json", "langgraph-tool-error.json", "mastra-ok.json", "mastra-tool-error.json",
	"openai-agents-ok.json", "openai-agents-tool-error.json", "strands-agent-tool.json",
	"strands-ok-latest-semconv.json", "strands-ok.json", "strands-tool-error.json",
	"traceloop-langgraph-ok.json", "traceloop-langgraph-withworkflow.json",
	"vercel-ai-ok.json", "vercel-ai-tool-error.json",
}

// keepFailuresFixture copies every capture of keepFailuresCaptures copiesPerCapture times,
// each copy with a trace id derived from the capture's name and the copy's index (so the
// probabilistic policy's decisions are fixed).
func keepFailuresFixture(t *testing.T) []fixtureTrace {
	t.Helper()
	var out []fixtureTrace
	for _, name := range keepFailuresCaptures {
		f := filepath.Join(tracesDir, name)
		if !singleTraceCapture(t, f) {
			continue // the flat OpenLLMetry captures: one trace per span, nothing to keep whole
		}
		c := loadCapture(t, filepath.Base(f))
		for k := range copiesPerCapture {
			sum := sha256.Sum256(fmt.Appendf(nil, "keep-failures/%s/%d", c.file, k))
			var id pcommon.TraceID
			copy(id[:], sum[:16])
			td := ptrace.NewTraces()
			c.td.CopyTo(td)
			ft := fixtureTrace{capture: c.file, td: td, traceID: id, spanIDs: map[string]bool{}}
			eachSpan(td, func(_ string, s ptrace.Span) {
				s.SetTraceID(id)
				ft.spanIDs[s.SpanID().String()] = true
			})
			ft.rootAgent = rootAgentSpanID(t, td).String()
			out = append(out, ft)
		}
	}
	return out
}

// singleTraceCapture reports whether the OTLP/JSON capture at path holds one trace.
func singleTraceCapture(t *testing.T, path string) bool {
	t.Helper()
	td := readOTLPFile(t, path)
	ids := map[pcommon.TraceID]bool{}
	eachSpan(td, func(_ string, s ptrace.Span) { ids[s.TraceID()] = true })
	return len(ids) == 1
}

// rootAgentSpanID is the span the assertion connector stamps with the verdict: the root
// agent run as the model finds it (a swarm or workflow wrapper is not an agent), else the
// trace's root span.
func rootAgentSpanID(t *testing.T, td ptrace.Traces) pcommon.SpanID {
	t.Helper()
	graphs := agentgraph.BuildAll(td, agentgraph.Options{})
	if len(graphs) != 1 {
		t.Fatalf("%d traces in a single-trace capture", len(graphs))
	}
	g := graphs[0]
	switch {
	case g.Root != nil:
		return g.Root.Span.ID
	case g.RootSpan != nil:
		return g.RootSpan.ID
	}
	t.Fatal("trace without a root span")
	return pcommon.SpanID{}
}

// stampVerdict sets handoff.verdict on the fixture's root agent span ("" leaves it unset).
func (f fixtureTrace) stampVerdict(verdict string) {
	if verdict == "" {
		return
	}
	eachSpan(f.td, func(_ string, s ptrace.Span) {
		if s.SpanID().String() == f.rootAgent {
			s.Attributes().PutStr(verdictAttr, verdict)
		}
	})
}

// sampledOutput reads the file exporter's JSON lines: spans per trace id.
func sampledOutput(t *testing.T, path string) map[pcommon.TraceID][]forwardedSpan {
	t.Helper()
	lines, err := completeLines(path)
	if err != nil && !os.IsNotExist(err) {
		t.Fatal(err)
	}
	out := map[pcommon.TraceID][]forwardedSpan{}
	for _, td := range fileTraces(t, lines) {
		eachSpan(td, func(scope string, s ptrace.Span) {
			out[s.TraceID()] = append(out[s.TraceID()], forwardedSpan{
				scope: scope, name: s.Name(),
				spanID: s.SpanID().String(), parentID: s.ParentSpanID().String(),
				attrs: s.Attributes().AsRaw(),
			})
		})
	}
	return out
}

// wholeTrace reports whether got holds every span of f exactly once, plus only HANDOFF
// spans of the processor's scope; why not, otherwise.
func (f fixtureTrace) wholeTrace(got []forwardedSpan) (bool, string) {
	seen := map[string]int{}
	for _, s := range got {
		seen[s.spanID]++
		if !f.spanIDs[s.spanID] && s.scope != handoffScope {
			return false, fmt.Sprintf("span %s (scope %q) is neither in the capture nor a HANDOFF span", s, s.scope)
		}
		if seen[s.spanID] > 1 {
			return false, fmt.Sprintf("span %s arrived %d times", s, seen[s.spanID])
		}
	}
	for id := range f.spanIDs {
		if seen[id] == 0 {
			return false, fmt.Sprintf("%d of %d spans, %s missing", len(got), len(f.spanIDs), id)
		}
	}
	return true, ""
}

// keptVerdicts are the verdicts the keep-non-passing policy keeps.
func keptVerdict(v string) bool { return v != "" && v != "pass" }

// keptTraces are the fixture traces the shipped policies keep: every non-passing one and
// the others the probabilistic policy's hash selects.
func keptTraces(traces []fixtureTrace, verdicts map[pcommon.TraceID]string, prob probabilisticPolicy) map[pcommon.TraceID]fixtureTrace {
	want := map[pcommon.TraceID]fixtureTrace{}
	for _, f := range traces {
		if keptVerdict(verdicts[f.traceID]) || prob.sampled(f.traceID) {
			want[f.traceID] = f
		}
	}
	return want
}

// waitKept waits until every trace of want has arrived whole in path.
func waitKept(t *testing.T, col *collector, path string, want map[pcommon.TraceID]fixtureTrace, verdicts map[pcommon.TraceID]string) {
	t.Helper()
	// Traces without a single root (the flat OpenLLMetry workflow capture) leave the handoff
	// processor at max_wait and then wait tail_sampling's full decision_wait (10 s).
	col.eventually(t, 3*resultTimeout, "the kept traces in "+path, func() (bool, string) {
		got := sampledOutput(t, path)
		whole := 0
		var notYet []string
		for id, f := range want {
			if ok, why := f.wholeTrace(got[id]); ok {
				whole++
			} else {
				notYet = append(notYet, fmt.Sprintf("%s (%s, verdict %q): %s", id, f.capture, verdicts[id], why))
			}
		}
		sort.Strings(notYet)
		return whole == len(want), fmt.Sprintf("%d of %d kept traces whole, %d traces in the output; not yet: %v", whole, len(want), len(got), notYet)
	})
}

// checkExactlyKept requires the output (read after the collector stopped) to hold exactly
// the traces of want, each whole, with the verdict on each one's root agent span.
func checkExactlyKept(t *testing.T, path string, want map[pcommon.TraceID]fixtureTrace, verdicts map[pcommon.TraceID]string) {
	t.Helper()
	got := sampledOutput(t, path)
	for id, spans := range got {
		f, ok := want[id]
		if !ok {
			t.Errorf("trace %s (verdict %q) arrived with %d spans; it should have been sampled away", id, verdicts[id], len(spans))
			continue
		}
		if ok, why := f.wholeTrace(spans); !ok {
			t.Errorf("trace %s (%s, verdict %q): %s", id, f.capture, verdicts[id], why)
		}
		for _, s := range spans {
			if s.spanID != f.rootAgent {
				continue
			}
			if v, _ := s.attrs[verdictAttr].(string); v != verdicts[id] {
				t.Errorf("trace %s: %s on the root agent span %s = %q, want %q", id, verdictAttr, s, v, verdicts[id])
			}
		}
	}
	for id, f := range want {
		if _, ok := got[id]; !ok {
			t.Errorf("trace %s (%s, verdict %q) did not arrive", id, f.capture, verdicts[id])
		}
	}
}

// checkSampled waits until every trace that must be kept has arrived whole, stops the
// collector, then requires the output to hold exactly those traces, each whole, and the
// verdict on each kept trace's root agent span.
func checkSampled(t *testing.T, col *collector, path string, traces []fixtureTrace, verdicts map[pcommon.TraceID]string, prob probabilisticPolicy) {
	t.Helper()
	want := keptTraces(traces, verdicts, prob)
	waitKept(t, col, path, want, verdicts)
	col.stop(t)
	checkExactlyKept(t, path, want, verdicts)
}

// lateSpan is one more span of f (a child of its root agent span, a new span id), sent after
// f was released and decided.
func (f fixtureTrace) lateSpan(t *testing.T) (ptrace.Traces, string) {
	t.Helper()
	td := ptrace.NewTraces()
	rs := td.ResourceSpans().AppendEmpty()
	rs.Resource().Attributes().PutStr("service.name", "late-tool")
	s := rs.ScopeSpans().AppendEmpty().Spans().AppendEmpty()
	s.SetTraceID(f.traceID)
	sum := sha256.Sum256(append([]byte("late/"), f.traceID[:]...))
	var sid pcommon.SpanID
	copy(sid[:], sum[:8])
	s.SetSpanID(sid)
	s.SetParentSpanID(spanIDOf(t, f.rootAgent))
	s.SetName("execute_tool late_lookup")
	s.SetKind(ptrace.SpanKindInternal)
	var start pcommon.Timestamp
	eachSpan(f.td, func(_ string, sp ptrace.Span) {
		if sp.EndTimestamp() > start {
			start = sp.EndTimestamp()
		}
	})
	s.SetStartTimestamp(start)
	s.SetEndTimestamp(start + 1_000_000)
	return td, sid.String()
}

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
