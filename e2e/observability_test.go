package e2e

import (
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"sort"
	"strings"
	"testing"
	"unicode"

	yaml "go.yaml.in/yaml/v3"
)

// observabilityDir holds the Grafana dashboard, the Prometheus alert rules and their promtool
// tests.
const observabilityDir = "../examples/observability"

// connectorBucketBounds are the explicit bucket boundaries of the connector's histograms that
// the promtool inputs model (connector/assertionconnector/metrics.go: 1, the limit, is a
// boundary).
var connectorBucketBounds = map[string][]string{
	"handoff_budget_utilization_bucket": {"0.1", "0.25", "0.5", "0.75", "0.9", "1", "1.25", "1.5", "2", "5", "+Inf"},
}

// selfTelemetryAttrs are the attributes of the assertion exporter's own metrics that the
// dashboard and alerts read (assertionexporter/telemetry.go).
var selfTelemetryAttrs = map[string][]string{
	"otelcol_exporter_assertion_judge_calls":      {"outcome"},
	"otelcol_exporter_assertion_judge_not_graded": {"reason"},
	"otelcol_exporter_assertion_evaluations":      {"case", "step", "outcome"},
}

// selfTelemetrySeries: the assertion exporter's own metrics as the collector's Prometheus
// endpoint (:8888) names them: the names of the generated documentation.md, histograms with
// _bucket, _sum and _count.
func selfTelemetrySeries(t *testing.T) seriesLabels {
	t.Helper()
	raw, err := os.ReadFile("../assertionexporter/documentation.md")
	if err != nil {
		t.Fatal(err)
	}
	out := seriesLabels{}
	heading := regexp.MustCompile(`(?m)^### (otelcol_exporter_assertion_\w+)\n\n[^\n]*\n\n\|[^\n]*\n\|[^\n]*\n\| [^|]+ \| (\w+) \|`)
	for _, m := range heading.FindAllStringSubmatch(string(raw), -1) {
		name, kind := m[1], m[2]
		labels := append(append([]string(nil), resourceLabels...), selfTelemetryAttrs[name]...)
		if kind == "Histogram" {
			out.add(name+"_bucket", append(labels, "le")...)
			out.add(name+"_sum", labels...)
			out.add(name+"_count", labels...)
			continue
		}
		out.add(name, labels...)
	}
	if _, ok := out["otelcol_exporter_assertion_judge_calls"]; !ok || len(out) < 10 {
		t.Fatalf("documentation.md: read %d self-telemetry series, judge_calls missing or too few: %v", len(out), out)
	}
	return out
}

// TestPrometheusNamesOfTheContract pins what the translator gives for the contract, so a
// rename in the connector's contract or in the translator shows here first.
func TestPrometheusNamesOfTheContract(t *testing.T) {
	want := []string{
		"gen_ai_invoke_agent_duration_seconds_bucket", "gen_ai_invoke_agent_duration_seconds_count", "gen_ai_invoke_agent_duration_seconds_sum",
		"gen_ai_invoke_agent_llm_calls_bucket", "gen_ai_invoke_agent_llm_calls_count", "gen_ai_invoke_agent_llm_calls_sum",
		"gen_ai_invoke_agent_tokens_bucket", "gen_ai_invoke_agent_tokens_count", "gen_ai_invoke_agent_tokens_sum",
		"gen_ai_invoke_agent_tool_calls_bucket", "gen_ai_invoke_agent_tool_calls_count", "gen_ai_invoke_agent_tool_calls_sum",
		"handoff_assertion_results_total",
		"handoff_budget_utilization_bucket", "handoff_budget_utilization_count", "handoff_budget_utilization_sum",
		"traces_service_graph_request_failed_total",
		"traces_service_graph_request_server_seconds_bucket", "traces_service_graph_request_server_seconds_count", "traces_service_graph_request_server_seconds_sum",
		"traces_service_graph_request_total",
	}
	if got := connectorSeriesNames(t); strings.Join(got, "\n") != strings.Join(want, "\n") {
		t.Errorf("Prometheus names of the connector's metrics:\n%s\nwant:\n%s", strings.Join(got, "\n"), strings.Join(want, "\n"))
	}
	if got := connectorSeries()["handoff_budget_utilization_bucket"]; !got["gen_ai_agent_name"] || !got["le"] || !got["job"] {
		t.Errorf("labels of handoff_budget_utilization_bucket: %v", got)
	}
}

// ---- PromQL: the series a query selects ----

// selector is one vector selector of a PromQL expression: a metric name and the label
// names its matchers use.
type selector struct {
	metric string
	labels []string
}

// promqlKeywords are the PromQL words that are neither metrics nor functions.
var promqlKeywords = map[string]bool{
	"and": true, "or": true, "unless": true, "bool": true, "offset": true, "atan2": true,
	"inf": true, "nan": true,
}

// aggregations may put their grouping before the parenthesis: `sum by (x) (...)`.
var aggregations = map[string]bool{
	"sum": true, "avg": true, "min": true, "max": true, "count": true, "group": true, "stddev": true, "stdvar": true,
	"topk": true, "bottomk": true, "quantile": true, "count_values": true, "limitk": true, "limit_ratio": true,
}

// groupingKeywords take a parenthesized list of label names.
var groupingKeywords = map[string]bool{
	"by": true, "without": true, "on": true, "ignoring": true, "group_left": true, "group_right": true,
}

// promqlSelectors extracts the vector selectors of a PromQL expression: every identifier
// that is not a function or aggregation (followed by "("), a keyword, a grouping list or
// inside a string, a range or a label matcher block. A selector without a metric name is an
// error (every query must name the series it reads).
func promqlSelectors(expr string) ([]selector, error) {
	sels, _, err := promqlParse(expr)
	return sels, err
}

// promqlParse returns the vector selectors of expr and the label names of its grouping
// lists (by, without, on, ignoring, group_left, group_right).
func promqlParse(expr string) ([]selector, []string, error) {
	var out []selector
	var grouping []string
	rs := []rune(expr)
	i := 0
	skipSpace := func() {
		for i < len(rs) && unicode.IsSpace(rs[i]) {
			i++
		}
	}
	skipString := func() error {
		q := rs[i]
		for i++; i < len(rs); i++ {
			if rs[i] == '\\' && q != '`' {
				i++
				continue
			}
			if rs[i] == q {
				i++
				return nil
			}
		}
		return errors.New("unterminated string")
	}
	ident := func() string {
		start := i
		for i < len(rs) && (rs[i] == '_' || rs[i] == ':' || unicode.IsLetter(rs[i]) || unicode.IsDigit(rs[i])) {
			i++
		}
		return string(rs[start:i])
	}
	// matchers parses `{name op "value", ...}` from i (at '{') and returns the label names.
	matchers := func() ([]string, error) {
		var names []string
		i++
		for {
			skipSpace()
			if i >= len(rs) {
				return nil, errors.New("unterminated label matchers")
			}
			if rs[i] == '}' {
				i++
				return names, nil
			}
			if rs[i] == ',' {
				i++
				continue
			}
			name := ident()
			if name == "" {
				return nil, fmt.Errorf("bad label matcher at %q", string(rs[i:]))
			}
			names = append(names, name)
			skipSpace()
			for i < len(rs) && strings.ContainsRune("=!~", rs[i]) {
				i++
			}
			skipSpace()
			if i >= len(rs) || (rs[i] != '"' && rs[i] != '\'' && rs[i] != '`') {
				return nil, fmt.Errorf("label %s: no quoted value", name)
			}
			if err := skipString(); err != nil {
				return nil, err
			}
		}
	}
	for i < len(rs) {
		c := rs[i]
		switch {
		case unicode.IsSpace(c):
			i++
		case c == '"' || c == '\'' || c == '`':
			if err := skipString(); err != nil {
				return nil, nil, err
			}
		case c == '[':
			for i < len(rs) && rs[i] != ']' {
				i++
			}
			i++
		case c == '{':
			return nil, nil, fmt.Errorf("a selector without a metric name at %q", string(rs[i:]))
		case unicode.IsDigit(c) || (c == '.' && i+1 < len(rs) && unicode.IsDigit(rs[i+1])):
			for i < len(rs) && (unicode.IsDigit(rs[i]) || unicode.IsLetter(rs[i]) || rs[i] == '.') {
				i++
			}
		case c == '_' || c == ':' || unicode.IsLetter(c):
			word := ident()
			skipSpace()
			next := rune(0)
			if i < len(rs) {
				next = rs[i]
			}
			switch {
			case groupingKeywords[strings.ToLower(word)]:
				if next == '(' {
					start := i + 1
					for i < len(rs) && rs[i] != ')' {
						i++
					}
					for _, l := range strings.Split(string(rs[start:min(i, len(rs))]), ",") {
						if l = strings.TrimSpace(l); l != "" {
							grouping = append(grouping, l)
						}
					}
					i++
				}
			case promqlKeywords[strings.ToLower(word)]:
			case next == '(' || aggregations[strings.ToLower(word)]:
				// A function or an aggregation.
			default:
				s := selector{metric: word}
				if next == '{' {
					names, err := matchers()
					if err != nil {
						return nil, nil, fmt.Errorf("%s: %w", word, err)
					}
					s.labels = names
				}
				out = append(out, s)
			}
		default:
			i++
		}
	}
	return out, grouping, nil
}

func TestPromqlSelectors(t *testing.T) {
	got, err := promqlSelectors(`histogram_quantile(0.95, sum by (le, gen_ai_agent_name) (rate(a_bucket{job=~"$job", x!="}{"}[5m]))) / on (x) group_left (y) sum without (z) (b) or label_replace(c_total offset 5m, "id", "$1", "server", "(.*)") > bool 0.2e1`)
	if err != nil {
		t.Fatal(err)
	}
	if fmt.Sprint(got) != "[{a_bucket [job x]} {b []} {c_total []}]" {
		t.Errorf("selectors: %v", got)
	}
	_, grouping, err := promqlParse(`sum by (a, b) (x) / on(c) group_left y`)
	if err != nil || fmt.Sprint(grouping) != "[a b c]" {
		t.Errorf("grouping %v, %v", grouping, err)
	}
	if _, err := promqlSelectors(`sum({__name__="x"})`); err == nil {
		t.Error("a selector without a metric name was accepted")
	}
}

// ---- the dashboard ----

type grafanaTarget struct {
	RefID      string            `json:"refId"`
	Expr       string            `json:"expr"`
	Format     string            `json:"format"`
	Instant    bool              `json:"instant"`
	Datasource map[string]string `json:"datasource"`
}

type grafanaPanel struct {
	ID         int               `json:"id"`
	Type       string            `json:"type"`
	Title      string            `json:"title"`
	Datasource map[string]string `json:"datasource"`
	GridPos    struct {
		X, Y, W, H *int
	} `json:"gridPos"`
	Targets         []grafanaTarget  `json:"targets"`
	Transformations []map[string]any `json:"transformations"`
}

type grafanaDashboard struct {
	Inputs []struct {
		Name     string `json:"name"`
		Type     string `json:"type"`
		PluginID string `json:"pluginId"`
	} `json:"__inputs"`
	UID           string         `json:"uid"`
	Title         string         `json:"title"`
	SchemaVersion int            `json:"schemaVersion"`
	Panels        []grafanaPanel `json:"panels"`
	Templating    struct {
		List []struct {
			Name       string            `json:"name"`
			Type       string            `json:"type"`
			Datasource map[string]string `json:"datasource"`
			Query      struct {
				Query string `json:"query"`
			} `json:"query"`
		} `json:"list"`
	} `json:"templating"`
}

func readDashboard(t *testing.T) (grafanaDashboard, []byte) {
	t.Helper()
	raw, err := os.ReadFile(filepath.Join(observabilityDir, "dashboard.json"))
	if err != nil {
		t.Fatal(err)
	}
	var d grafanaDashboard
	dec := json.NewDecoder(strings.NewReader(string(raw)))
	if err := dec.Decode(&d); err != nil {
		t.Fatalf("dashboard.json: %v", err)
	}
	return d, raw
}

// grafanaMacros are replaced by what Grafana substitutes before the query reaches Prometheus.
var grafanaMacros = strings.NewReplacer("$__rate_interval", "5m", "$__range", "6h", "$__interval", "1m")

// TestDashboardLoads: dashboard.json is what a Grafana import needs: an importable datasource
// input, a uid, title and schema version, panels with unique ids and a place on the 24-column
// grid that overlaps no other, a Prometheus datasource on every panel, target and variable,
// unique refIds, and the node graph's edge frame (id, source, target) and node frame (id).
func TestDashboardLoads(t *testing.T) {
	d, raw := readDashboard(t)
	var generic map[string]any
	if err := json.Unmarshal(raw, &generic); err != nil {
		t.Fatal(err)
	}
	if d.UID == "" || d.Title == "" || d.SchemaVersion < 36 {
		t.Errorf("uid %q, title %q, schemaVersion %d: want a uid, a title and schemaVersion ≥ 36", d.UID, d.Title, d.SchemaVersion)
	}
	inputs := map[string]bool{}
	for _, in := range d.Inputs {
		if in.Type == "datasource" && in.PluginID == "prometheus" {
			inputs["${"+in.Name+"}"] = true
		}
	}
	if len(inputs) == 0 {
		t.Fatal("no Prometheus datasource in __inputs: Grafana's import cannot map a datasource")
	}
	checkDS := func(where string, ds map[string]string) {
		if ds["type"] != "prometheus" || !inputs[ds["uid"]] {
			t.Errorf("%s: datasource %v, want type prometheus and a uid from __inputs", where, ds)
		}
	}
	for _, v := range d.Templating.List {
		checkDS("variable "+v.Name, v.Datasource)
		if v.Type != "query" || v.Query.Query == "" {
			t.Errorf("variable %s: type %q, query %q", v.Name, v.Type, v.Query.Query)
		}
	}
	if len(d.Panels) == 0 {
		t.Fatal("no panels")
	}
	ids := map[int]bool{}
	cells := map[[2]int]string{}
	types := map[string]int{}
	for _, p := range d.Panels {
		where := fmt.Sprintf("panel %d %q", p.ID, p.Title)
		if p.ID <= 0 || ids[p.ID] {
			t.Errorf("%s: id missing or repeated", where)
		}
		ids[p.ID] = true
		types[p.Type]++
		switch p.Type {
		case "timeseries", "table", "nodeGraph", "stat", "bargauge", "gauge":
		default:
			t.Errorf("%s: panel type %q is not a core Grafana panel", where, p.Type)
		}
		if p.Title == "" {
			t.Errorf("%s: no title", where)
		}
		g := p.GridPos
		if g.X == nil || g.Y == nil || g.W == nil || g.H == nil || *g.W <= 0 || *g.H <= 0 || *g.X < 0 || *g.Y < 0 || *g.X+*g.W > 24 {
			t.Errorf("%s: gridPos %+v is not on the 24-column grid", where, g)
			continue
		}
		for x := *g.X; x < *g.X+*g.W; x++ {
			for y := *g.Y; y < *g.Y+*g.H; y++ {
				if other, ok := cells[[2]int{x, y}]; ok {
					t.Errorf("%s overlaps %s at (%d, %d)", where, other, x, y)
				}
				cells[[2]int{x, y}] = where
			}
		}
		checkDS(where, p.Datasource)
		if len(p.Targets) == 0 {
			t.Errorf("%s: no targets", where)
		}
		refs := map[string]bool{}
		for _, tg := range p.Targets {
			if tg.RefID == "" || refs[tg.RefID] || strings.TrimSpace(tg.Expr) == "" {
				t.Errorf("%s: target %+v: refId missing or repeated, or no expr", where, tg)
			}
			refs[tg.RefID] = true
			checkDS(where+" target "+tg.RefID, tg.Datasource)
		}
		if p.Type == "nodeGraph" {
			checkNodeGraph(t, where, p)
		}
	}
	if types["nodeGraph"] != 1 {
		t.Errorf("%d node graph panels, want 1 (the agent graph)", types["nodeGraph"])
	}
}

// checkNodeGraph: Grafana's node graph takes a frame with a `source` field as the edges
// (id, source, target) and the other as the nodes (id): instant table queries whose labels
// become those fields after the panel's organize transformation.
func checkNodeGraph(t *testing.T, where string, p grafanaPanel) {
	t.Helper()
	renames := map[string]string{}
	for _, tr := range p.Transformations {
		if tr["id"] != "organize" {
			continue
		}
		opts, _ := tr["options"].(map[string]any)
		byName, _ := opts["renameByName"].(map[string]any)
		for from, to := range byName {
			renames[from], _ = to.(string)
		}
	}
	if renames["client"] != "source" || renames["server"] != "target" {
		t.Errorf("%s: renames %v; the edge frame needs client → source and server → target", where, renames)
	}
	var edges, nodes bool
	for _, tg := range p.Targets {
		if tg.Format != "table" || !tg.Instant {
			t.Errorf("%s target %s: format %q instant %v; the node graph needs instant table queries", where, tg.RefID, tg.Format, tg.Instant)
		}
		if strings.Contains(tg.Expr, `label_join(`) && strings.Contains(tg.Expr, `"id"`) && strings.Contains(tg.Expr, "by (client, server)") {
			edges = true
		}
		if strings.Contains(tg.Expr, "by (id, title)") {
			nodes = true
		}
	}
	if !edges || !nodes {
		t.Errorf("%s: edge query (id from client and server) %v, node query (id, title) %v", where, edges, nodes)
	}
}

// ---- the alert rules ----

type ruleFile struct {
	Groups []struct {
		Name  string `yaml:"name"`
		Rules []struct {
			Alert  string `yaml:"alert"`
			Record string `yaml:"record"`
			Expr   string `yaml:"expr"`
		} `yaml:"rules"`
	} `yaml:"groups"`
}

// observabilityQueries returns every PromQL expression of the dashboard (targets, with
// Grafana's macros substituted, and the label_values variables' metric) and of the alert
// rules, keyed by where it is.
func observabilityQueries(t *testing.T) map[string]string {
	t.Helper()
	out := map[string]string{}
	d, _ := readDashboard(t)
	for _, p := range d.Panels {
		for _, tg := range p.Targets {
			out[fmt.Sprintf("dashboard panel %q target %s", p.Title, tg.RefID)] = grafanaMacros.Replace(tg.Expr)
		}
	}
	labelValues := regexp.MustCompile(`^label_values\((.+),\s*(\w+)\)$`)
	for _, v := range d.Templating.List {
		m := labelValues.FindStringSubmatch(v.Query.Query)
		if m == nil {
			t.Errorf("variable %s: query %q is not label_values(<series>, <label>)", v.Name, v.Query.Query)
			continue
		}
		// The label must be one of the series': select it with a matcher on that label.
		out["dashboard variable "+v.Name] = fmt.Sprintf(`%s{%s=~".+"}`, m[1], m[2])
	}
	raw, err := os.ReadFile(filepath.Join(observabilityDir, "alerts.yaml"))
	if err != nil {
		t.Fatal(err)
	}
	var rf ruleFile
	if err := yaml.Unmarshal(raw, &rf); err != nil {
		t.Fatalf("alerts.yaml: %v", err)
	}
	for _, g := range rf.Groups {
		for _, r := range g.Rules {
			out["alert "+r.Alert] = r.Expr
		}
	}
	return out
}

// TestObservabilityQueries: every PromQL query of the dashboard and of the alert rules selects
// series the assertion connector (or the exporter's self-telemetry) emits, with label
// matchers on labels those series have; the dashboard reads every series of the connector's
// contract; and the promtool test inputs are shaped exactly like the connector's series (the
// same name and the same label names).
func TestObservabilityQueries(t *testing.T) {
	known := connectorSeries()
	for name, labels := range selfTelemetrySeries(t) {
		known[name] = labels
	}
	usedByDashboard := map[string]bool{}
	queries := observabilityQueries(t)
	allLabels := map[string]bool{}
	for _, labels := range known {
		for l := range labels {
			allLabels[l] = true
		}
	}
	// label_replace(v, "dst", ...) and label_join(v, "dst", ...) make the label dst: the
	// first string after the vector argument (which ends with ")" in these queries).
	created := regexp.MustCompile(`\)\s*,\s*"(\w+)"\s*,`)
	for where, expr := range queries {
		sels, grouping, err := promqlParse(expr)
		if err == nil {
			madeHere := map[string]bool{}
			for _, m := range created.FindAllStringSubmatch(expr, -1) {
				madeHere[m[1]] = true
			}
			for _, l := range grouping {
				if !allLabels[l] && !madeHere[l] {
					t.Errorf("%s groups by %q, a label no emitted series has", where, l)
				}
			}
		}
		if err != nil {
			t.Errorf("%s: %v\n%s", where, err, expr)
			continue
		}
		if len(sels) == 0 {
			t.Errorf("%s selects no series:\n%s", where, expr)
		}
		for _, s := range sels {
			labels, ok := known[s.metric]
			if !ok {
				t.Errorf("%s reads %s, which neither the connector nor the exporter emits", where, s.metric)
				continue
			}
			if strings.HasPrefix(where, "dashboard") {
				usedByDashboard[s.metric] = true
			}
			for _, l := range s.labels {
				if !labels[l] {
					t.Errorf("%s matches label %q of %s, which has only %v", where, l, s.metric, sortedKeys(labels))
				}
			}
		}
	}
	for _, c := range connectorContract {
		read := false
		for name := range promSeries(contractMetric(c), c.attrs) {
			read = read || usedByDashboard[name]
		}
		if !read {
			t.Errorf("the dashboard reads no series of %s", c.name)
		}
	}

	// promtool test inputs.
	raw, err := os.ReadFile(filepath.Join(observabilityDir, "alerts_test.yaml"))
	if err != nil {
		t.Fatal(err)
	}
	var tests struct {
		Tests []struct {
			InputSeries []struct {
				Series string `yaml:"series"`
			} `yaml:"input_series"`
		} `yaml:"tests"`
	}
	if err := yaml.Unmarshal(raw, &tests); err != nil {
		t.Fatalf("alerts_test.yaml: %v", err)
	}
	n := 0
	leLabel := regexp.MustCompile(`,?le="([^"]*)"`)
	buckets := map[string][]string{} // histogram series without le → its le values
	for _, tc := range tests.Tests {
		for _, in := range tc.InputSeries {
			n++
			if m := leLabel.FindStringSubmatch(in.Series); m != nil {
				name := in.Series[:strings.IndexByte(in.Series, '{')]
				if _, ok := connectorBucketBounds[name]; ok {
					key := leLabel.ReplaceAllString(in.Series, "")
					buckets[key] = append(buckets[key], m[1])
				}
			}
			sels, err := promqlSelectors(in.Series)
			if err != nil || len(sels) != 1 {
				t.Errorf("input series %s: %v %v", in.Series, sels, err)
				continue
			}
			want, ok := known[sels[0].metric]
			if !ok {
				t.Errorf("input series %s: %s is not a series the connector or the exporter emits", in.Series, sels[0].metric)
				continue
			}
			got := map[string]bool{}
			for _, l := range sels[0].labels {
				got[l] = true
			}
			if strings.Join(sortedKeys(got), ",") != strings.Join(sortedKeys(want), ",") {
				t.Errorf("input series %s: labels %v, want exactly %v", in.Series, sortedKeys(got), sortedKeys(want))
			}
		}
	}
	if n == 0 {
		t.Error("alerts_test.yaml has no input series")
	}
	for series, les := range buckets {
		name := series[:strings.IndexByte(series, '{')]
		if want := connectorBucketBounds[name]; strings.Join(les, " ") != strings.Join(want, " ") {
			t.Errorf("input histogram %s: buckets le=%v, want the connector's %v", series, les, want)
		}
	}
}

// promtoolBinary finds promtool (Debian's prometheus package, installed by `make promtool`,
// which `make test` runs). Missing, the test fails: it never skips.
func promtoolBinary(t *testing.T) string {
	t.Helper()
	bin, err := exec.LookPath("promtool")
	if err != nil {
		t.Fatalf("promtool not found (%v): run `make promtool` (installs Debian's prometheus package; `make test` does)", err)
	}
	return bin
}

func runPromtool(t *testing.T, dir string, args ...string) {
	t.Helper()
	cmd := exec.Command(promtoolBinary(t), args...)
	cmd.Dir = dir
	out, err := cmd.CombinedOutput()
	if err != nil {
		t.Errorf("promtool %s: %v\n%s", strings.Join(args, " "), err, out)
		return
	}
	t.Logf("promtool %s:\n%s", strings.Join(args, " "), out)
}

// TestAlertRules: promtool checks the shipped alert rules and runs their unit tests
// (alerts_test.yaml), and parses every dashboard query (as recording rules of a scratch file,
// Grafana's macros substituted) with Prometheus' own PromQL parser.
func TestAlertRules(t *testing.T) {
	runPromtool(t, observabilityDir, "check", "rules", "alerts.yaml")
	runPromtool(t, observabilityDir, "test", "rules", "alerts_test.yaml")

	type rule struct {
		Record string `yaml:"record"`
		Expr   string `yaml:"expr"`
	}
	var rules []rule
	var wheres []string
	for where := range observabilityQueries(t) {
		wheres = append(wheres, where)
	}
	sort.Strings(wheres)
	queries := observabilityQueries(t)
	for i, where := range wheres {
		if strings.HasPrefix(where, "dashboard") {
			rules = append(rules, rule{Record: fmt.Sprintf("dashboard:query_%d", i), Expr: queries[where]})
		}
	}
	raw, err := yaml.Marshal(map[string]any{"groups": []any{map[string]any{"name": "dashboard", "rules": rules}}})
	if err != nil {
		t.Fatal(err)
	}
	dir := t.TempDir()
	if err := os.WriteFile(filepath.Join(dir, "dashboard-queries.yaml"), raw, 0o600); err != nil {
		t.Fatal(err)
	}
	runPromtool(t, dir, "check", "rules", "dashboard-queries.yaml")
}
