package e2e

import (
	"encoding/binary"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"go.opentelemetry.io/collector/pdata/ptrace"
)

// TestFileExporterProtoReplays: what the distribution's own file exporter writes with
// `format: proto` (a 4-byte length before each request) and by default (JSON lines)
// replays through handoffcheck request by request, with the verdicts of the capture
// itself.
func TestFileExporterProtoReplays(t *testing.T) {
	bin := collectorBinary(t)
	dir := t.TempDir()
	httpPort, healthPort, metricsPort := freePort(t), freePort(t), freePort(t)
	pb, jsonl := filepath.Join(dir, "spans.pb"), filepath.Join(dir, "spans.jsonl")
	collectorCfg := filepath.Join(dir, "record.yaml")
	if err := os.WriteFile(collectorCfg, []byte(fmt.Sprintf(`
receivers: {otlp: {protocols: {http: {endpoint: 127.0.0.1:%d}}}}
extensions: {health_check: {endpoint: 127.0.0.1:%d}}
exporters:
  file/proto: {path: %s, format: proto}
  file/json: {path: %s}
service:
  extensions: [health_check]
  pipelines: {traces: {receivers: [otlp], exporters: [file/proto, file/json]}}
  telemetry: {metrics: {readers: [{pull: {exporter: {prometheus: {host: 127.0.0.1, port: %d}}}}]}}
`, httpPort, healthPort, pb, jsonl, metricsPort)), 0o644); err != nil {
		t.Fatal(err)
	}
	col := startCollector(t, bin, collectorCfg)
	col.waitReady(t, fmt.Sprintf("http://127.0.0.1:%d/", healthPort))
	const capture = "strands-ok.json"
	c := loadCapture(t, capture)
	// One request per span: one length-prefixed message each.
	posts := 0
	eachSpan(c.td, func(string, ptrace.Span) { posts++ })
	for i := range posts {
		one := ptrace.NewTraces()
		k := 0
		for r := 0; r < c.td.ResourceSpans().Len(); r++ {
			rs := c.td.ResourceSpans().At(r)
			for s := 0; s < rs.ScopeSpans().Len(); s++ {
				ss := rs.ScopeSpans().At(s)
				for j := 0; j < ss.Spans().Len(); j++ {
					if k == i {
						ors := one.ResourceSpans().AppendEmpty()
						rs.Resource().CopyTo(ors.Resource())
						oss := ors.ScopeSpans().AppendEmpty()
						ss.Scope().CopyTo(oss.Scope())
						ss.Spans().At(j).CopyTo(oss.Spans().AppendEmpty())
					}
					k++
				}
			}
		}
		postTraces(t, fmt.Sprintf("http://127.0.0.1:%d/v1/traces", httpPort), one)
	}
	col.stop(t)

	raw, err := os.ReadFile(pb)
	if err != nil {
		t.Fatal(err)
	}
	frames := 0
	for off := 0; off < len(raw); frames++ {
		if len(raw)-off < 4 {
			t.Fatalf("%s: %d stray bytes at the end", pb, len(raw)-off)
		}
		off += 4 + int(binary.BigEndian.Uint32(raw[off:]))
	}
	if frames != posts {
		t.Fatalf("%s: %d length-prefixed messages, want %d (one per request)", pb, frames, posts)
	}

	checkCfg := filepath.Join(dir, "check.yaml")
	if err := os.WriteFile(checkCfg, []byte(`
receivers: {otlp: {protocols: {http: {endpoint: 127.0.0.1:0}}}}
processors: {handoff: {quiet_period: 2s, max_wait: 30s}}
exporters:
  assertion:
    cases:
      - name: weather_delegation
        steps:
          - action: ASSERT_AGENT_TOPOLOGY
            maxDepth: 3
          - action: EXPECT_DELEGATION_TO
            agentName: weather_specialist
            fromAgent: triage
      - name: tight_budget
        steps:
          - action: ASSERT_AGENT_TOPOLOGY
          - action: EXPECT_AGENT_BUDGET
            agentName: weather_specialist
            maxToolCalls: 1
service: {pipelines: {traces: {receivers: [otlp], processors: [handoff], exporters: [assertion]}}}
`), 0o644); err != nil {
		t.Fatal(err)
	}
	captured := filepath.Join(tracesDir, capture)
	code, want, stderr := runCheck(t, os.Environ(), "replay", "--config", checkCfg, captured)
	if code != 1 || !strings.Contains(want, "FAIL tight_budget EXPECT_AGENT_BUDGET#2") {
		t.Fatalf("replay of the capture: exit %d, want 1 with a failing budget\n%s%s", code, want, stderr)
	}
	for _, file := range []string{pb, jsonl} {
		code, got, stderr := runCheck(t, os.Environ(), "replay", "--config", checkCfg, file)
		// The same output, each FAIL line naming the file replayed.
		if want := strings.ReplaceAll(want, "("+captured+", ", "("+file+", "); code != 1 || got != want || !strings.Contains(got, "("+file+", service ") {
			t.Errorf("replay of %s: exit %d, want 1 and the capture's output\n%s\nwant:\n%s\n%s", file, code, got, want, stderr)
		}
	}

	// Cut inside the last message: exit 2, naming the file and the request.
	cut := filepath.Join(dir, "cut.pb")
	if err := os.WriteFile(cut, raw[:len(raw)-3], 0o644); err != nil {
		t.Fatal(err)
	}
	code, _, stderr = runCheck(t, os.Environ(), "replay", "--config", checkCfg, cut)
	if wantErr := fmt.Sprintf("%s: request %d: truncated", cut, posts); code != 2 || !strings.Contains(stderr, wantErr) {
		t.Errorf("truncated file: exit %d, want 2 and %q\n%s", code, wantErr, stderr)
	}
	code, _, stderr = runCheck(t, os.Environ(), "replay", "--config", checkCfg, "/dev/zero")
	if code != 2 || !strings.Contains(stderr, "/dev/zero: not a regular file") {
		t.Errorf("/dev/zero: exit %d, want 2\n%s", code, stderr)
	}
}
