package e2e

import (
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"sort"
	"strings"
	"testing"
	"time"

	"go.opentelemetry.io/collector/pdata/ptrace"
	"go.yaml.in/yaml/v3"
)

// consoleLine is one line of the collector's console (zap's console encoding:
// time, level, message, then the fields as JSON, tab-separated).
type consoleLine struct {
	raw, level, msg string
	fields          map[string]any
}

func parseConsole(t *testing.T, out string) []consoleLine {
	t.Helper()
	var lines []consoleLine
	for _, raw := range strings.Split(out, "\n") {
		parts := strings.SplitN(raw, "\t", 4)
		if len(parts) < 3 {
			continue
		}
		l := consoleLine{raw: raw, level: parts[1], msg: parts[2]}
		if len(parts) == 4 {
			if err := json.Unmarshal([]byte(parts[3]), &l.fields); err != nil {
				t.Fatalf("console line with fields that are not JSON: %v\n%s", err, raw)
			}
		}
		lines = append(lines, l)
	}
	return lines
}

var summaryLine = regexp.MustCompile(`^trace ([0-9a-f]{32}) root (\S+)( \(released incomplete\))?: (.+)$`)

// TestMakeRunConsole runs the collector on config/default.yaml (only its ports moved to free
// ones) with every capture of testdata/traces, as `make run` does, and checks what the
// console shows: the shipped logger settings leave no resource block, a verdict line logs
// its message once with a short set of fields, every judged trace has one summary line
// whose failure count matches its verdict lines, and the excerpt in the README's "What
// `make run` shows" is what the console prints (timestamps aside).
func TestMakeRunConsole(t *testing.T) {
	bin := collectorBinary(t)
	dir := t.TempDir()
	raw, err := os.ReadFile(filepath.Join("..", "config", "default.yaml"))
	if err != nil {
		t.Fatal(err)
	}
	var cfg map[string]any
	if err := yaml.Unmarshal(raw, &cfg); err != nil {
		t.Fatal(err)
	}
	httpPort, healthPort := freePort(t), freePort(t)
	set := func(value any, path ...string) {
		m := cfg
		for _, k := range path[:len(path)-1] {
			next, ok := m[k].(map[string]any)
			if !ok {
				t.Fatalf("config/default.yaml has no %s", strings.Join(path, "."))
			}
			m = next
		}
		if _, ok := m[path[len(path)-1]]; !ok {
			t.Fatalf("config/default.yaml has no %s", strings.Join(path, "."))
		}
		m[path[len(path)-1]] = value
	}
	set(fmt.Sprintf("127.0.0.1:%d", freePort(t)), "receivers", "otlp", "protocols", "grpc", "endpoint")
	set(fmt.Sprintf("127.0.0.1:%d", httpPort), "receivers", "otlp", "protocols", "http", "endpoint")
	set(fmt.Sprintf("127.0.0.1:%d", healthPort), "extensions", "health_check", "endpoint")
	reader := cfg["service"].(map[string]any)["telemetry"].(map[string]any)["metrics"].(map[string]any)["readers"].([]any)[0]
	reader.(map[string]any)["pull"].(map[string]any)["exporter"].(map[string]any)["prometheus"].(map[string]any)["port"] = freePort(t)
	out, err := yaml.Marshal(cfg)
	if err != nil {
		t.Fatal(err)
	}
	cfgPath := filepath.Join(dir, "default.yaml")
	if err := os.WriteFile(cfgPath, out, 0o644); err != nil {
		t.Fatal(err)
	}

	col := startCollector(t, bin, cfgPath)
	col.waitReady(t, fmt.Sprintf("http://127.0.0.1:%d/", healthPort))
	files, err := filepath.Glob(filepath.Join(tracesDir, "*.json"))
	if err != nil || len(files) == 0 {
		t.Fatalf("no captures in %s: %v", tracesDir, err)
	}
	sent := map[string]bool{}
	for _, f := range files {
		b, err := os.ReadFile(f)
		if err != nil {
			t.Fatal(err)
		}
		td, err := (&ptrace.JSONUnmarshaler{}).UnmarshalTraces(b)
		if err != nil {
			t.Fatalf("%s: %v", f, err)
		}
		eachSpan(td, func(_ string, s ptrace.Span) { sent[s.TraceID().String()] = true })
		postTraces(t, fmt.Sprintf("http://127.0.0.1:%d/v1/traces", httpPort), td)
	}
	// As in `make run`, the traces are released after their quiet period (2 s), not flushed
	// incomplete at shutdown: wait until the console has not grown for longer than that.
	// (A few spans without agents wait for max_wait; they are never judged.)
	last, since := -1, time.Now()
	col.eventually(t, 60*time.Second, "every trace released and judged", func() (bool, string) {
		n := strings.Count(col.output(), "\n")
		if n != last {
			last, since = n, time.Now()
		}
		return time.Since(since) > 3*time.Second && strings.Contains(col.output(), "\tinfo\ttrace "), fmt.Sprintf("%d console lines", n)
	})
	col.stop(t)
	console := col.output()
	lines := parseConsole(t, console)

	failures := map[string]int{} // trace id -> verdict lines
	summaries := map[string][]string{}
	for _, l := range lines {
		if _, ok := l.fields["resource"]; ok || strings.Contains(l.raw, "service.instance.id") {
			t.Errorf("a console line carries the collector's resource block:\n%s", l.raw)
		}
		if strings.HasPrefix(l.msg, "assertion fail: ") || strings.HasPrefix(l.msg, "assertion error: ") {
			if l.level != "warn" {
				t.Errorf("log_verdicts: failures logs failures and errors only, at warn:\n%s", l.raw)
			}
			message := strings.SplitN(l.msg, ": ", 2)[1]
			if n := strings.Count(l.raw, message); n != 1 {
				t.Errorf("the verdict message is on its line %d times, want once:\n%s", n, l.raw)
			}
			var keys []string
			for k := range l.fields {
				keys = append(keys, k)
			}
			sort.Strings(keys)
			want := "actual case expected otelcol.component.id otelcol.component.kind otelcol.signal outcome step trace_id"
			if strings.HasPrefix(l.msg, "assertion fail: ") {
				want = "actual case cluster expected otelcol.component.id otelcol.component.kind otelcol.signal outcome signature step trace_id"
			}
			if got := strings.Join(keys, " "); got != want {
				t.Errorf("verdict line fields %q, want %q:\n%s", got, want, l.raw)
			}
			failures[fmt.Sprint(l.fields["trace_id"])]++
		}
		if m := summaryLine.FindStringSubmatch(l.msg); m != nil {
			if l.level != "info" {
				t.Errorf("a trace's summary line is at info:\n%s", l.raw)
			}
			summaries[m[1]] = append(summaries[m[1]], m[4])
		}
	}
	if len(summaries) == 0 || len(failures) == 0 {
		t.Fatalf("no summary or verdict lines on the console:\n%s", console)
	}
	for id, counts := range summaries {
		if !sent[id] {
			t.Errorf("summary of trace %s, which no capture holds", id)
		}
		if len(counts) != 1 {
			t.Errorf("trace %s has %d summary lines, want 1: %q", id, len(counts), counts)
			continue
		}
		fails := 0
		for _, part := range strings.Split(counts[0], ", ") {
			var n int
			var outcome string
			if _, err := fmt.Sscanf(part, "%d %s", &n, &outcome); err != nil {
				t.Errorf("trace %s: summary %q: %v", id, counts[0], err)
			}
			if outcome == "fail" || outcome == "error" {
				fails += n
			}
		}
		if fails != failures[id] {
			t.Errorf("trace %s: summary %q counts %d failures and errors, the console has %d verdict lines", id, counts[0], fails, failures[id])
		}
	}
	for id := range failures {
		if len(summaries[id]) == 0 {
			t.Errorf("trace %s has verdict lines but no summary line", id)
		}
	}

	// The README's excerpt: every line of it (but the debug exporter's, whose batch sizes
	// vary) is on the console, timestamps aside.
	readme, err := os.ReadFile(filepath.Join("..", "README.md"))
	if err != nil {
		t.Fatal(err)
	}
	section := string(readme)
	if i := strings.Index(section, "## What `make run` shows"); i >= 0 {
		section = section[i:]
	} else {
		t.Fatal("README.md has no \"What `make run` shows\" section")
	}
	start := strings.Index(section, "```\n")
	end := strings.Index(section[start+4:], "```")
	if start < 0 || end < 0 {
		t.Fatal("the README's \"What `make run` shows\" has no console excerpt")
	}
	untimed := map[string]bool{}
	for _, l := range lines {
		untimed[strings.SplitN(l.raw, "\t", 2)[1]] = true
	}
	checked := 0
	for _, want := range strings.Split(strings.TrimSpace(section[start+4:start+4+end]), "\n") {
		parts := strings.SplitN(want, "\t", 2)
		if len(parts) != 2 {
			t.Errorf("README excerpt line is not a console line (time TAB level TAB message ...): %q", want)
			continue
		}
		if strings.HasPrefix(parts[1], "info\tTraces\t") {
			continue
		}
		checked++
		if !untimed[parts[1]] {
			t.Errorf("the README shows a line the console does not:\n%s", want)
		}
	}
	if checked == 0 {
		t.Error("the README excerpt has no verdict line")
	}
}

// TestShippedConfigsReadableConsole: every shipped config with an assertion exporter or
// connector sets the logger for a readable console: console encoding, no caller, no
// stacktraces, no resource block, no initial fields.
func TestShippedConfigsReadableConsole(t *testing.T) {
	configs, err := filepath.Glob(filepath.Join("..", "config", "*.yaml"))
	if err != nil || len(configs) == 0 {
		t.Fatalf("no configs: %v", err)
	}
	for _, path := range configs {
		raw, err := os.ReadFile(path)
		if err != nil {
			t.Fatal(err)
		}
		var cfg struct {
			Exporters  map[string]any `yaml:"exporters"`
			Connectors map[string]any `yaml:"connectors"`
			Service    struct {
				Telemetry struct {
					Logs struct {
						Encoding           string         `yaml:"encoding"`
						DisableCaller      bool           `yaml:"disable_caller"`
						DisableStacktrace  bool           `yaml:"disable_stacktrace"`
						DisableZapResource bool           `yaml:"disable_zap_resource"`
						InitialFields      map[string]any `yaml:"initial_fields"`
					} `yaml:"logs"`
				} `yaml:"telemetry"`
			} `yaml:"service"`
		}
		if err := yaml.Unmarshal(raw, &cfg); err != nil {
			t.Fatalf("%s: %v", path, err)
		}
		uses := false
		for id := range cfg.Exporters {
			uses = uses || id == "assertion" || strings.HasPrefix(id, "assertion/")
		}
		for id := range cfg.Connectors {
			uses = uses || id == "assertion" || strings.HasPrefix(id, "assertion/")
		}
		if !uses {
			continue
		}
		l := cfg.Service.Telemetry.Logs
		if l.Encoding != "console" || !l.DisableCaller || !l.DisableStacktrace || !l.DisableZapResource || len(l.InitialFields) > 0 {
			t.Errorf("%s: service.telemetry.logs must set encoding: console, disable_caller, disable_stacktrace and disable_zap_resource, and no initial_fields; got %+v", path, l)
		}
	}
}
