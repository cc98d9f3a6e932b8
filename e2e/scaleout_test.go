package e2e

// Scale-out: the handoff processor is stateful (all spans of a trace must reach one
// instance), so beyond one instance a first tier of collectors routes by trace id with the
// contrib load_balancing exporter. These tests run that two-tier layout with the built
// binary on loopback ports, restart a tier-2 instance under traffic, and validate the
// deployment example configs of examples/deploy/.

import (
	"bytes"
	"context"
	"fmt"
	"io"
	"math/rand/v2"
	"os"
	"os/exec"
	"path/filepath"
	"sort"
	"strings"
	"sync"
	"testing"
	"time"

	"go.opentelemetry.io/collector/pdata/ptrace"
	"go.opentelemetry.io/collector/pdata/ptrace/ptraceotlp"
	"go.yaml.in/yaml/v3"
	"google.golang.org/grpc"
	"google.golang.org/grpc/credentials/insecure"

	"github.com/otelcol-handoff/otelcol-handoff/internal/readmetest"
)

const (
	// scaleOutTimeout bounds each wait of the scale-out test (tier-2 quiet_period is 1.5s;
	// after a restart add the gRPC reconnect backoff of tier 1).
	scaleOutTimeout = 30 * time.Second
	// Traces per phase and concurrent clients.
	scaleOutTraces  = 32
	restartTraces   = 20
	scaleOutClients = 4
	// outage is how long backend b stays down in phase 2: longer than the tier-2
	// quiet_period (so a judges its share of the batch meanwhile) and long enough for
	// several retry rounds of tier 1 and a grown gRPC reconnect backoff.
	outage = 3 * time.Second
	// tier2Quiet is the tier-2 quiet_period.
	tier2Quiet = 1500 * time.Millisecond
)

// tier1Params fills testdata/tier1.yaml.tmpl.
type tier1Params struct {
	GRPCPort, HTTPPort, HealthPort, MetricsPort int
	Backends                                    []int // tier-2 OTLP/gRPC ports
}

// tier2Params fills testdata/tier2.yaml.tmpl.
type tier2Params struct {
	GRPCPort, HealthPort, MetricsPort int
	ReportPath, SpansPath             string
	QuietPeriod                       time.Duration
}

func startTier2(t *testing.T, bin, name, cfgPath string, p tier2Params) *instance {
	t.Helper()
	in := startInstance(t, bin, name, cfgPath, p.HealthPort, p.MetricsPort)
	in.reportPath, in.spansPath = p.ReportPath, p.SpansPath
	return in
}

func TestScaleOutTwoTier(t *testing.T) {
	began := time.Now()
	bin := collectorBinary(t)
	adk := loadCapture(t, "google-adk-ok.json")
	strands := loadCapture(t, "strands-ok.json")
	rng := newRNG(t)

	dir := t.TempDir()
	ports := freePorts(t, 10)
	tier2 := make([]tier2Params, 2)
	for i := range tier2 {
		tier2[i] = tier2Params{
			GRPCPort: ports[3*i], HealthPort: ports[3*i+1], MetricsPort: ports[3*i+2],
			ReportPath:  filepath.Join(dir, fmt.Sprintf("verdicts-%c.jsonl", 'a'+i)),
			SpansPath:   filepath.Join(dir, fmt.Sprintf("spans-%c.jsonl", 'a'+i)),
			QuietPeriod: tier2Quiet,
		}
	}
	t1 := tier1Params{
		GRPCPort: ports[6], HTTPPort: ports[7], HealthPort: ports[8], MetricsPort: ports[9],
		Backends: []int{tier2[0].GRPCPort, tier2[1].GRPCPort},
	}

	// Start all three, then wait for them together (each start takes about a second).
	backends := make([]*instance, 2)
	for i, p := range tier2 {
		d := filepath.Join(dir, fmt.Sprintf("tier2-%c", 'a'+i))
		if err := os.Mkdir(d, 0o755); err != nil {
			t.Fatal(err)
		}
		backends[i] = startTier2(t, bin, fmt.Sprintf("tier2-%c", 'a'+i), renderConfig(t, d, "tier2.yaml.tmpl", p), p)
	}
	d1 := filepath.Join(dir, "tier1")
	if err := os.Mkdir(d1, 0o755); err != nil {
		t.Fatal(err)
	}
	// The backends listen before tier 1 dials them (see startReleasePair).
	for _, in := range backends {
		in.col.waitReady(t, in.healthURL)
	}
	lb := startInstance(t, bin, "tier1", renderConfig(t, d1, "tier1.yaml.tmpl", t1), t1.HealthPort, t1.MetricsPort)
	lb.col.waitReady(t, lb.healthURL)
	t.Logf("three collectors ready after %s", time.Since(began).Round(time.Millisecond))

	senders := newSenders(t, t1, scaleOutClients)
	all := map[string]scaleTrace{}
	want := func() map[string]map[[2]string]wantResult {
		w := map[string]map[[2]string]wantResult{}
		for id, st := range all {
			w[id] = st.want
		}
		return w
	}

	// Phase 1: many traces, each split into several batches, spread in shuffled order over
	// concurrent clients (half OTLP/HTTP, half OTLP/gRPC).
	phase1 := makeScaleTraces(t, rng, adk, strands, scaleOutTraces)
	for id, st := range phase1 {
		all[id] = st
	}
	sent := time.Now()
	requests := senders.send(t, rng, phase1)
	t.Logf("phase 1: %d traces (%d spans) in %d requests from %d clients, sent in %s",
		len(phase1), spanTotal(phase1), requests, scaleOutClients, time.Since(sent).Round(time.Millisecond))

	got := waitJudged(t, backends, phase1)
	t.Logf("phase 1: every trace judged %s after the first request (tier 1 logged %d export retries, refused before it had connected to tier 2)",
		time.Since(sent).Round(time.Millisecond), countRetries(lb.col.output(), "127.0.0.1:"))
	checkResults(t, got.results, want())
	byBackend := checkOnce(t, got, phase1)
	spans := waitSpread(t, backends, phase1)
	checkSpreadSpans(t, spans, byBackend, phase1)
	for i, in := range backends {
		if len(byBackend[i]) == 0 {
			t.Errorf("%s judged no trace of %d: the load_balancing exporter sent everything to one backend", in.name, len(phase1))
		}
	}
	t.Logf("phase 1: %s judged %d traces, %s %d", backends[0].name, len(byBackend[0]), backends[1].name, len(byBackend[1]))
	for i, in := range backends {
		m := scrape(t, in.metricsURL)
		checkNoLoss(t, in.name, m, len(byBackend[i]))
	}
	if t.Failed() {
		t.FailNow()
	}

	// Phase 2: stop backend b, send more traces, restart b on the same port. The static
	// resolver keeps b in the ring, so b's traces wait in tier 1's per-backend queue and
	// are retried until b is back; nothing is re-routed to a.
	down := backends[1]
	stopAt := time.Now()
	down.col.stop(t)
	phase2 := makeScaleTraces(t, rng, adk, strands, restartTraces)
	for id, st := range phase2 {
		all[id] = st
	}
	senders.send(t, rng, phase2)
	sent2 := time.Now()
	endpoint := fmt.Sprintf("127.0.0.1:%d", tier2[1].GRPCPort)
	lb.col.eventually(t, scaleOutTimeout, "tier 1 to fail and retry an export to the stopped "+endpoint, func() (bool, string) {
		return countRetries(lb.col.output(), endpoint) > 0, "no retry logged yet"
	})
	// Keep b down for the outage (and at least two quiet periods after the batch was sent,
	// so a has judged its share), watching that tier 1 and a stay up.
	pollAll(t, []*instance{lb, backends[0]}, outage+scaleOutTimeout, "the end of the outage", func() (bool, string) {
		return time.Since(stopAt) >= outage && time.Since(sent2) >= 2*tier2Quiet, ""
	})
	judgedByA, err := readReport(backends[0].reportPath)
	if err != nil {
		t.Fatal(err)
	}
	duringOutage := map[string]bool{}
	for _, r := range judgedByA {
		if _, ok := phase2[r.TraceID]; ok {
			duringOutage[r.TraceID] = true
		}
	}
	backends[1] = startTier2(t, bin, "tier2-b (restarted)", down.cfgPath, tier2[1])
	backends[1].col.waitReady(t, backends[1].healthURL)
	readyAt := time.Now()
	got = waitJudged(t, backends, all)
	judgedAt := time.Now()
	retries := countRetries(lb.col.output(), endpoint)
	checkResults(t, got.results, want())
	byBackend = checkOnce(t, got, all)
	spans = waitSpread(t, backends, all)
	checkSpreadSpans(t, spans, byBackend, all)
	onB := 0
	for id := range phase2 {
		if byBackend[1][id] {
			onB++
		}
	}
	t.Logf("phase 2: b down for %s (stop to ready again); a judged %d of %d new traces during the outage; %d retries to b logged by tier 1; the other %d were held by tier 1 and judged by the restarted b, all once, %s after it was ready",
		readyAt.Sub(stopAt).Round(time.Millisecond), len(duringOutage), len(phase2), retries, onB, judgedAt.Sub(readyAt).Round(time.Millisecond))
	if len(duringOutage)+onB != len(phase2) {
		t.Errorf("phase 2: a judged %d traces during the outage and b %d after, want %d in all (nothing re-routed)", len(duringOutage), onB, len(phase2))
	}
	if onB == 0 {
		t.Errorf("no trace of phase 2 was routed to the restarted backend; the restart was not exercised")
	}
	// The restarted b holds only phase-2 traces; its late_spans must be 0 too (a trace
	// whose parts came back spread over more than quiet_period would show up here).
	checkNoLoss(t, backends[1].name, scrape(t, backends[1].metricsURL), onB)
	checkNoLoss(t, backends[0].name, scrape(t, backends[0].metricsURL), len(byBackend[0]))

	// Tier 1 accepted every span and its load_balancing exporter failed none (the retries
	// happened in the per-backend otlp exporters, whose queue held b's share).
	m := scrape(t, lb.metricsURL)
	total := spanTotal(phase1) + spanTotal(phase2)
	if got := m.sum("otelcol_receiver_accepted_spans", nil); got != float64(total) {
		t.Errorf("tier 1 accepted %v spans, want %d", got, total)
	}
	for _, name := range []string{"otelcol_receiver_refused_spans", "otelcol_exporter_send_failed_spans"} {
		if got := m.sum(name, nil); got != 0 {
			t.Errorf("tier 1 %s = %v, want 0", name, got)
		}
	}

	for _, in := range append([]*instance{lb}, backends...) {
		in.col.stop(t)
	}
	t.Logf("total %s", time.Since(began).Round(time.Millisecond))
}

// TestDeployExamplesValidate runs the built collector's `validate` on the deployment
// example configs of examples/deploy/, checks that the Kubernetes manifest embeds those same
// configs and hangs together (names, selectors, the resolver's Service, RBAC), and that the
// Containerfile runs the collector the way the manifest mounts its config. (No container
// engine or cluster is needed: nothing is built or applied.)
func TestDeployExamplesValidate(t *testing.T) {
	bin := collectorBinary(t)
	deploy := filepath.Join("..", "examples", "deploy")
	configs := map[string]string{}
	for _, name := range []string{"tier1.yaml", "tier2.yaml", "standalone.yaml"} {
		path := filepath.Join(deploy, name)
		raw, err := os.ReadFile(path)
		if err != nil {
			t.Fatal(err)
		}
		configs[name] = string(raw)
		ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
		cmd := exec.CommandContext(ctx, bin, "validate", "--config", path)
		// tier2.yaml writes its report to ${REPORTS_DIR}, which validate checks exists.
		cmd.Env = append(os.Environ(), "REPORTS_DIR="+t.TempDir())
		out, err := cmd.CombinedOutput()
		cancel()
		if err != nil {
			t.Errorf("validate %s: %v\n%s", path, err, out)
		}
	}

	// The processor README's two-tier snippet (the load_balancing and handoff sections) is a
	// config the distribution accepts.
	snippets := 0
	for _, sections := range readmetest.Maps(t, filepath.Join("..", "handoffprocessor", "README.md")) {
		if sections["load_balancing"] == nil {
			continue
		}
		snippets++
		cfg, err := yaml.Marshal(map[string]any{
			"receivers":  map[string]any{"otlp": map[string]any{"protocols": map[string]any{"grpc": map[string]any{"endpoint": "127.0.0.1:0"}}}},
			"processors": map[string]any{"handoff": sections["handoff"]},
			"exporters":  map[string]any{"load_balancing": sections["load_balancing"]},
			"service": map[string]any{"pipelines": map[string]any{"traces": map[string]any{
				"receivers": []string{"otlp"}, "processors": []string{"handoff"}, "exporters": []string{"load_balancing"},
			}}},
		})
		if err != nil {
			t.Fatal(err)
		}
		path := filepath.Join(t.TempDir(), "readme-two-tier.yaml")
		if err := os.WriteFile(path, cfg, 0o600); err != nil {
			t.Fatal(err)
		}
		if out, err := exec.Command(bin, "validate", "--config", path).CombinedOutput(); err != nil {
			t.Errorf("handoffprocessor/README.md two-tier snippet: %v\n%s\n%s", err, out, cfg)
		}
	}
	if snippets != 1 {
		t.Errorf("handoffprocessor/README.md: %d YAML blocks with a load_balancing section, want 1", snippets)
	}

	raw, err := os.ReadFile(filepath.Join(deploy, "k8s", "otelcol-handoff.yaml"))
	if err != nil {
		t.Fatal(err)
	}
	objs := map[string]map[string]any{} // kind/name -> object
	dec := yaml.NewDecoder(bytes.NewReader(raw))
	for {
		var obj map[string]any
		if err := dec.Decode(&obj); err == io.EOF {
			break
		} else if err != nil {
			t.Fatalf("k8s manifest: %v", err)
		}
		if obj == nil {
			continue
		}
		key := fmt.Sprint(obj["kind"], "/", dig(obj, "metadata", "name"))
		if _, dup := objs[key]; dup {
			t.Errorf("k8s manifest: %s twice", key)
		}
		objs[key] = obj
	}
	get := func(key string) map[string]any {
		t.Helper()
		o, ok := objs[key]
		if !ok {
			t.Fatalf("k8s manifest: no %s (has %v)", key, keys(objs))
		}
		return o
	}
	// The ConfigMaps carry tier1.yaml and tier2.yaml verbatim: what is validated above is
	// what gets deployed.
	for cm, file := range map[string]string{"otelcol-handoff-tier1": "tier1.yaml", "otelcol-handoff-tier2": "tier2.yaml"} {
		if got := dig(get("ConfigMap/"+cm), "data", "config.yaml"); got != configs[file] {
			t.Errorf("ConfigMap %s data config.yaml differs from examples/deploy/%s; copy the file into it (indented 4 spaces)", cm, file)
		}
	}
	// Tier 1 resolves the tier-2 pods through the headless Service the StatefulSet names,
	// by pod host name, with not-ready pods kept in the ring.
	var tier1 map[string]any
	if err := yaml.Unmarshal([]byte(configs["tier1.yaml"]), &tier1); err != nil {
		t.Fatal(err)
	}
	sts := get("StatefulSet/otelcol-handoff-tier2")
	headless := fmt.Sprint(dig(sts, "spec", "serviceName"))
	svc := get("Service/" + headless)
	ns := fmt.Sprint(dig(sts, "metadata", "namespace"))
	if got := dig(tier1, "exporters", "load_balancing", "resolver", "k8s", "service"); got != headless+"."+ns {
		t.Errorf("tier1.yaml resolver k8s.service = %v, want the StatefulSet's headless Service %s.%s", got, headless, ns)
	}
	if dig(tier1, "exporters", "load_balancing", "resolver", "k8s", "return_hostnames") != true {
		t.Errorf("tier1.yaml: return_hostnames must be true (ring keyed on stable pod names)")
	}
	if dig(svc, "spec", "clusterIP") != "None" || dig(svc, "spec", "publishNotReadyAddresses") != true {
		t.Errorf("Service %s: want clusterIP None and publishNotReadyAddresses true", headless)
	}
	for _, w := range []struct{ key, component string }{{"Deployment/otelcol-handoff-tier1", "tier1"}, {"StatefulSet/otelcol-handoff-tier2", "tier2"}} {
		o := get(w.key)
		if got := dig(o, "spec", "template", "metadata", "labels", "app.kubernetes.io/component"); got != w.component {
			t.Errorf("%s: pod label component = %v, want %s", w.key, got, w.component)
		}
		spec := dig(o, "spec", "template", "spec").(map[string]any)
		mounted := false
		for _, c := range spec["containers"].([]any) {
			for _, m := range c.(map[string]any)["volumeMounts"].([]any) {
				if m.(map[string]any)["mountPath"] == "/etc/otelcol-handoff" {
					mounted = true
				}
			}
		}
		if !mounted {
			t.Errorf("%s: no volume mounted at /etc/otelcol-handoff (the image's --config directory)", w.key)
		}
		for _, v := range spec["volumes"].([]any) {
			if cm := dig(v.(map[string]any), "configMap", "name"); cm != nil {
				get("ConfigMap/" + fmt.Sprint(cm))
			}
		}
	}
	if got := dig(svc, "spec", "selector", "app.kubernetes.io/component"); got != "tier2" {
		t.Errorf("Service %s selects component %v, want tier2", headless, got)
	}
	sa := dig(get("Deployment/otelcol-handoff-tier1"), "spec", "template", "spec", "serviceAccountName")
	rb := get("RoleBinding/otelcol-handoff-tier1")
	role := get("Role/" + fmt.Sprint(dig(rb, "roleRef", "name")))
	if subj := rb["subjects"].([]any)[0].(map[string]any); subj["name"] != sa {
		t.Errorf("RoleBinding binds %v, want the tier-1 ServiceAccount %v", subj["name"], sa)
	}
	if rules := fmt.Sprint(role["rules"]); !strings.Contains(rules, "endpointslices") || !strings.Contains(rules, "watch") {
		t.Errorf("Role %v: want get/list/watch on endpointslices, got %s", role["metadata"], rules)
	}

	// The Containerfile: the static binary on scratch, non-root, the ports, and the --config
	// path the manifest mounts (TestContainerImage builds it and runs the binary from it).
	df, err := os.ReadFile(filepath.Join("..", "Containerfile"))
	if err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{
		"FROM scratch", "COPY otelcol-handoff /usr/local/bin/otelcol-handoff", "USER 65532:65532",
		"EXPOSE 4317 4318 13133 8888",
		`ENTRYPOINT ["/usr/local/bin/otelcol-handoff", "--config", "/etc/otelcol-handoff/config.yaml"]`,
		"COPY ${CONTEXT_DIR}/config.yaml /etc/otelcol-handoff/config.yaml",
	} {
		if !strings.Contains(string(df), want) {
			t.Errorf("Containerfile lacks %q", want)
		}
	}
	// ...and the config it ships is standalone.yaml (make image stages it as config.yaml).
	mk, err := os.ReadFile(filepath.Join("..", "Makefile"))
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(string(mk), "IMAGE_CONFIG   := examples/deploy/standalone.yaml") {
		t.Error("the Makefile's image does not ship examples/deploy/standalone.yaml")
	}
}

// dig walks nested YAML maps.
func dig(v any, path ...string) any {
	for _, p := range path {
		m, ok := v.(map[string]any)
		if !ok {
			return nil
		}
		v = m[p]
	}
	return v
}

// ---- building the traffic ----

func spanTotal(traces map[string]scaleTrace) int {
	n := 0
	for _, st := range traces {
		n += len(st.c.spanIDs)
	}
	return n
}

// splitPieces splits td into n non-empty parts, each span in one part at random, resources
// and scopes kept.
func splitPieces(td ptrace.Traces, n int, rng *rand.Rand) []ptrace.Traces {
	total := td.SpanCount()
	n = max(1, min(n, total))
	part := make([]int, total)
	for i := range part {
		part[i] = i % n // every part gets at least one span
	}
	rng.Shuffle(total, func(i, j int) { part[i], part[j] = part[j], part[i] })
	out := make([]ptrace.Traces, n)
	for k := range out {
		out[k] = ptrace.NewTraces()
		td.CopyTo(out[k])
		i := 0
		for _, rs := range out[k].ResourceSpans().All() {
			for _, ss := range rs.ScopeSpans().All() {
				ss.Spans().RemoveIf(func(ptrace.Span) bool {
					keep := part[i] == k
					i++
					return !keep
				})
			}
		}
		pruneEmpty(out[k])
	}
	return out
}

// senders are the concurrent OTLP clients of tier 1: even ones post OTLP/HTTP protobuf,
// odd ones call OTLP/gRPC.
type senders struct {
	httpURL string
	grpc    []ptraceotlp.GRPCClient
	n       int
}

func newSenders(t *testing.T, p tier1Params, n int) *senders {
	t.Helper()
	s := &senders{httpURL: fmt.Sprintf("http://127.0.0.1:%d/v1/traces", p.HTTPPort), n: n}
	for range n {
		conn, err := grpc.NewClient(fmt.Sprintf("127.0.0.1:%d", p.GRPCPort), grpc.WithTransportCredentials(insecure.NewCredentials()))
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { conn.Close() })
		s.grpc = append(s.grpc, ptraceotlp.NewGRPCClient(conn))
	}
	return s
}

// send splits every trace into 2-4 batches, shuffles all batches, packs them 1-3 to a
// request (so a request mixes traces) and sends the requests round-robin from n concurrent
// clients. It returns the number of requests.
func (s *senders) send(t *testing.T, rng *rand.Rand, traces map[string]scaleTrace) int {
	t.Helper()
	ids := make([]string, 0, len(traces))
	for id := range traces {
		ids = append(ids, id)
	}
	sort.Strings(ids)
	var pieces []ptrace.Traces
	for _, id := range ids {
		pieces = append(pieces, splitPieces(traces[id].c.td, 2+rng.IntN(3), rng)...)
	}
	rng.Shuffle(len(pieces), func(i, j int) { pieces[i], pieces[j] = pieces[j], pieces[i] })
	var requests []ptrace.Traces
	for len(pieces) > 0 {
		k := min(len(pieces), 1+rng.IntN(3))
		req := ptrace.NewTraces()
		for _, p := range pieces[:k] {
			p.ResourceSpans().MoveAndAppendTo(req.ResourceSpans())
		}
		requests = append(requests, req)
		pieces = pieces[k:]
	}
	ctx, cancel := context.WithTimeout(context.Background(), scaleOutTimeout)
	defer cancel()
	errs := make(chan error, len(requests))
	var wg sync.WaitGroup
	for c := range s.n {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := c; i < len(requests); i += s.n {
				var err error
				if c%2 == 0 {
					err = postOTLP(ctx, s.httpURL, requests[i])
				} else {
					err = grpcExport(ctx, s.grpc[c], requests[i])
				}
				if err != nil {
					errs <- fmt.Errorf("client %d request %d: %w", c, i, err)
					return
				}
			}
		}()
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		t.Fatal(err)
	}
	return len(requests)
}

// countRetries counts the retry log lines of tier 1's per-backend otlp exporter for one
// endpoint.
func countRetries(logs, endpoint string) int {
	n := 0
	for _, line := range strings.Split(logs, "\n") {
		if strings.Contains(line, "Exporting failed. Will retry") && strings.Contains(line, endpoint) {
			n++
		}
	}
	return n
}

// ---- reading the tier-2 outputs ----

// spread is what the tier-2 reports hold: every result, and which backend wrote it.
type spread struct {
	results []result
	backend []int // per result
}

// waitJudged polls the tier-2 reports until every trace has its results somewhere.
func waitJudged(t *testing.T, backends []*instance, traces map[string]scaleTrace) spread {
	t.Helper()
	var got spread
	pollAll(t, backends, scaleOutTimeout, "every trace judged by tier 2", func() (bool, string) {
		got = spread{}
		perTrace := map[string]int{}
		for i, in := range backends {
			rs, err := readReport(in.reportPath)
			if err != nil {
				t.Fatal(err)
			}
			for _, r := range rs {
				got.results = append(got.results, r)
				got.backend = append(got.backend, i)
				perTrace[r.TraceID]++
			}
		}
		missing := 0
		for id, st := range traces {
			if perTrace[id] < len(st.want) {
				missing++
			}
		}
		return missing == 0, fmt.Sprintf("%d of %d traces not judged yet (%d results)", missing, len(traces), len(got.results))
	})
	return got
}

// checkOnce requires every trace's results to come from one backend, and returns the
// traces of each backend.
func checkOnce(t *testing.T, got spread, traces map[string]scaleTrace) []map[string]bool {
	t.Helper()
	byBackend := []map[string]bool{{}, {}}
	for i, r := range got.results {
		byBackend[got.backend[i]][r.TraceID] = true
	}
	for id := range traces {
		if byBackend[0][id] && byBackend[1][id] {
			t.Errorf("trace %s judged by both backends", id)
		}
	}
	return byBackend
}

// pollAll is collector.eventually over several processes: it fails as soon as one exits.
func pollAll(t *testing.T, ins []*instance, timeout time.Duration, what string, cond func() (bool, string)) {
	t.Helper()
	poll(t, timeout, what, func() string {
		for _, in := range ins {
			if in.col.exited() {
				return fmt.Sprintf("%s exited (%v)", in.name, in.col.waitErr)
			}
		}
		return ""
	}, cond)
}

// waitSpread polls the tier-2 file outputs until every trace has all its spans (input
// spans plus HANDOFF spans) somewhere; it returns the spans per backend.
func waitSpread(t *testing.T, backends []*instance, traces map[string]scaleTrace) []map[string][]forwardedSpan {
	t.Helper()
	var per []map[string][]forwardedSpan
	pollAll(t, backends, scaleOutTimeout, "every span forwarded by tier 2", func() (bool, string) {
		per = per[:0]
		count := map[string]int{}
		for _, in := range backends {
			spans, _, err := readSpans(in.spansPath)
			if err != nil {
				t.Fatal(err)
			}
			per = append(per, spans)
			for id, ss := range spans {
				count[id] += len(ss)
			}
		}
		missing := 0
		for id, st := range traces {
			if count[id] < len(st.c.spanIDs)+len(st.handoffs) {
				missing++
			}
		}
		return missing == 0, fmt.Sprintf("%d of %d traces not fully forwarded yet", missing, len(traces))
	})
	return per
}

// checkSpreadSpans requires each trace's spans in exactly one file output, the one of the
// backend that judged it, each input span once plus its HANDOFF spans.
func checkSpreadSpans(t *testing.T, per []map[string][]forwardedSpan, byBackend []map[string]bool, traces map[string]scaleTrace) {
	t.Helper()
	for id, st := range traces {
		holders := 0
		for i, spans := range per {
			if len(spans[id]) == 0 {
				continue
			}
			holders++
			if !byBackend[i][id] {
				t.Errorf("trace %s: spans forwarded by backend %d, which did not judge it", id, i)
			}
			checkForwarded(t, spans, st.c, st.handoffs)
		}
		if holders != 1 {
			t.Errorf("trace %s: spans in %d file outputs, want exactly 1", id, holders)
		}
	}
}

// checkNoLoss checks a tier-2 instance's metrics: every trace released on its root, no
// late span (no trace was cut in two by quiet_period), nothing failed downstream.
func checkNoLoss(t *testing.T, name string, m metrics, traces int) {
	t.Helper()
	for _, c := range []struct {
		name   string
		labels map[string]string
		want   float64
	}{
		{"otelcol_processor_handoff_traces_released", map[string]string{"trigger": "root"}, float64(traces)},
		{"otelcol_processor_handoff_traces_released", nil, float64(traces)},
		{"otelcol_processor_handoff_late_spans", nil, 0},
		{"otelcol_processor_handoff_release_failures", nil, 0},
		{"otelcol_exporter_assertion_traces_evaluated", map[string]string{"complete": "true"}, float64(traces)},
	} {
		if got := m.sum(c.name, c.labels); got != c.want {
			t.Errorf("%s: %s%s = %v, want %v", name, c.name, labelString(c.labels), got, c.want)
		}
	}
}
