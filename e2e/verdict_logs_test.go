package e2e

import (
	"fmt"
	"strings"
	"testing"

	"go.opentelemetry.io/collector/pdata/pcommon"
	"go.opentelemetry.io/collector/pdata/ptrace"
	"go.yaml.in/yaml/v3"
)

// identicalFailures is how many traces fail the same assertion the same way.
const identicalFailures = 200

// TestVerdictLogsNotSampled: 200 traces failing one assertion identically give 200 verdict
// log lines with log sampling off, as the shipped configs set it; with the collector's
// default sampling on, most of them are dropped (the reason the shipped configs turn it
// off).
func TestVerdictLogsNotSampled(t *testing.T) {
	bin := collectorBinary(t)
	adk := loadCapture(t, "google-adk-ok.json")
	for _, tc := range []struct {
		sampling bool
		check    func(n int) bool
		want     string
	}{
		{false, func(n int) bool { return n == identicalFailures }, fmt.Sprintf("exactly %d", identicalFailures)},
		{true, func(n int) bool { return n < identicalFailures }, fmt.Sprintf("fewer than %d", identicalFailures)},
	} {
		t.Run(fmt.Sprintf("sampling=%v", tc.sampling), func(t *testing.T) {
			dir := t.TempDir()
			p := struct {
				HTTPPort, HealthPort int
				Sampling             bool
			}{freePort(t), freePort(t), tc.sampling}
			col := startCollector(t, bin, renderConfig(t, dir, "verdict_logs.yaml.tmpl", p))
			col.waitReady(t, fmt.Sprintf("http://127.0.0.1:%d/", p.HealthPort))
			url := fmt.Sprintf("http://127.0.0.1:%d/v1/traces", p.HTTPPort)
			for batch := 0; batch < identicalFailures/20; batch++ {
				td := ptrace.NewTraces()
				for i := 0; i < 20; i++ {
					copyWithTraceID(adk.td, td, byte(batch), byte(i+1))
				}
				postTraces(t, url, td)
			}
			// Stopping flushes whatever the processor still holds: every trace is judged
			// before the collector exits.
			col.stop(t)
			n := strings.Count(col.output(), "assertion fail: expected weather_specialist delegating to triage")
			t.Logf("sampling %v: %d verdict log lines for %d identical failures", tc.sampling, n, identicalFailures)
			if !tc.check(n) {
				t.Errorf("%d verdict log lines for %d identical failures, want %s", n, identicalFailures, tc.want)
			}
		})
	}
}

// copyWithTraceID appends src to dst with every span moved to a trace id made of a and b.
func copyWithTraceID(src, dst ptrace.Traces, a, b byte) {
	tmp := ptrace.NewTraces()
	src.CopyTo(tmp)
	id := pcommon.TraceID{0xab, a, b, 1}
	eachSpan(tmp, func(_ string, s ptrace.Span) { s.SetTraceID(id) })
	tmp.ResourceSpans().MoveAndAppendTo(dst.ResourceSpans())
}

// TestShippedConfigsLogEveryVerdict: every shipped config with an assertion exporter or
// connector turns the collector's log sampling off.
func TestShippedConfigsLogEveryVerdict(t *testing.T) {
	forEachAssertionConfigLogs(t, func(path string, logs *yaml.Node) {
		var l struct {
			Sampling struct {
				Enabled *bool `yaml:"enabled"`
			} `yaml:"sampling"`
		}
		if err := logs.Decode(&l); err != nil {
			t.Fatalf("%s: %v", path, err)
		}
		if s := l.Sampling.Enabled; s == nil || *s {
			t.Errorf("%s: service.telemetry.logs.sampling.enabled must be false (verdict logs are identical lines)", path)
		}
	})
}
