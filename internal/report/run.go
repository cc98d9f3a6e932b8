package report

import (
	"fmt"
	"os"
	"path/filepath"
	"sort"
	"sync"

	"github.com/otelcol-handoff/otelcol-handoff/internal/agentgraph"
	"github.com/otelcol-handoff/otelcol-handoff/internal/cluster"
	"github.com/otelcol-handoff/otelcol-handoff/internal/gate"
	"github.com/otelcol-handoff/otelcol-handoff/internal/judge"
	"github.com/otelcol-handoff/otelcol-handoff/internal/redact"
	"github.com/otelcol-handoff/otelcol-handoff/internal/rules"
	"github.com/otelcol-handoff/otelcol-handoff/internal/verdict"
)

// Bounds of what a Run keeps for its reports. Totals are always exact; beyond the bounds
// results are counted but not listed, and the reports say so.
const (
	// MaxResults is the number of results kept for the JUnit report.
	MaxResults = 100_000
	// MaxFailureRows is the number of failures listed in the Markdown summary.
	MaxFailureRows = 200
	// MaxPictures is the number of failing traces whose DAG the Markdown summary draws (the
	// ones with the smallest trace ids, so the choice does not depend on arrival order).
	MaxPictures = 20
)

// Run collects the results of one run (a CI replay, or a collector's lifetime) for the
// JUnit and Markdown reports written at its end. It is safe for concurrent use. Its output
// is deterministic: suites follow the config's case order, results within a suite are
// ordered by trace id and then as the evaluator produced them (while under MaxResults).
type Run struct {
	mu         sync.Mutex
	caseIndex  map[string]int
	cases      []string
	records    []record
	dropped    int
	totals     verdict.Counts
	byCase     map[string]*verdict.Counts
	traces     int
	incomplete int
	pictures   map[string]*dag
	// traceInfos name and time the traces with a kept result in the JUnit report.
	traceInfos map[string]traceInfo
	// sources are the span files the traces were read from, by trace id (SetSource).
	sources map[string]string

	// Handoff rubrics: the gates (nil: none), the scores per pair and axis over the whole
	// run, and the judge (nil: none).
	gates *gate.Set
	tally *gate.Tally
	judge *judge.Info
	// policy masks the results' text before they are kept (nil: redact.Default()).
	policy *redact.Policy
	// clusters groups every failure (kept or not) by cluster and signature.
	clusters *cluster.Grouper
}

type record struct {
	rules.Result
	batch, seq int
}

// NewRun starts a run; cases are the case names in config order.
func NewRun(cases []string) *Run {
	r := &Run{
		caseIndex: map[string]int{},
		byCase:    map[string]*verdict.Counts{}, pictures: map[string]*dag{}, traceInfos: map[string]traceInfo{},
		sources: map[string]string{},
		tally:   gate.NewTally(), clusters: cluster.NewGrouper(),
	}
	for _, c := range cases {
		r.addCase(c)
	}
	return r
}

// SetGates makes the reports apply the gates to the run's mean rubric scores.
func (r *Run) SetGates(gs *gate.Set) {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.gates = gs
}

// SetRedaction sets the policy that masks every result's text (and the agent names of the
// pictures) before the run keeps it; without one the built-in detectors apply.
func (r *Run) SetRedaction(p *redact.Policy) {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.policy = p
}

// SetSource names the span file a trace was read from, shown beside its trace id in the
// reports; a trace read from several files is named by the first. It may be called before
// or after the trace's results are added.
func (r *Run) SetSource(traceID, file string) {
	r.mu.Lock()
	defer r.mu.Unlock()
	if _, ok := r.sources[traceID]; ok {
		return
	}
	r.sources[traceID] = file
	if d := r.pictures[traceID]; d != nil {
		d.source = file
	}
}

// SetJudge names the judge in the reports.
func (r *Run) SetJudge(info judge.Info) {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.judge = &info
}

// Gates is the verdict of every gate over the run so far (nil without gates or scores).
func (r *Run) Gates() []gate.Result {
	r.mu.Lock()
	defer r.mu.Unlock()
	return r.gateResults()
}

func (r *Run) gateResults() []gate.Result {
	if r.tally.Len() == 0 {
		return nil
	}
	return r.tally.Evaluate(r.gates)
}

// verdict is the run's verdict so far (r.mu held).
func (r *Run) verdict() verdict.Run {
	return verdict.Run{Counts: r.totals, Gates: r.gateResults()}
}

func (r *Run) addCase(c string) {
	if _, ok := r.caseIndex[c]; ok {
		return
	}
	r.caseIndex[c] = len(r.cases)
	r.cases = append(r.cases, c)
	r.byCase[c] = &verdict.Counts{}
}

// Add records the results of one trace; g (may be nil) is kept, in a compact form, when the
// trace has a failing or errored result and is among the MaxPictures smallest such ids.
func (r *Run) Add(g *agentgraph.Graph, results []rules.Result) {
	if len(results) == 0 {
		return
	}
	r.mu.Lock()
	defer r.mu.Unlock()
	r.traces++
	kept := len(r.records)
	batch := len(r.records) + r.dropped
	hasFailure := false
	complete := true
	masked := make([]rules.Result, len(results))
	for i, res := range results {
		masked[i] = rules.RedactResult(res, r.policy) // a copy: the caller's results stay as they are
	}
	r.tally.Add(rules.Scores(masked)) // gate pairs are agent names: masked too
	r.addClusters(g, masked)
	for i, res := range masked {
		r.addCase(res.Case)
		r.totals.Add(res)
		r.byCase[res.Case].Add(res)
		if !res.Complete {
			complete = false
		}
		if res.Outcome == rules.Fail || res.Outcome == rules.Error {
			hasFailure = true
		}
		if len(r.records) < MaxResults {
			r.records = append(r.records, record{Result: res, batch: batch, seq: i})
		} else {
			r.dropped++
		}
	}
	if !complete {
		r.incomplete++
	}
	if g != nil && len(r.records) > kept {
		r.traceInfos[g.TraceID.String()] = traceInfoOf(g, r.policy)
	}
	if g != nil && hasFailure && r.wouldKeep(g.TraceID.String()) {
		d := snapshot(g, results, masked, r.policy)
		d.source = r.sources[d.traceID]
		r.keepPicture(d)
	}
}

// wouldKeep reports whether keepPicture would keep a picture of the trace, so that one is
// only made when it is.
func (r *Run) wouldKeep(traceID string) bool {
	if _, ok := r.pictures[traceID]; ok || len(r.pictures) < MaxPictures {
		return true
	}
	for id := range r.pictures {
		if traceID < id {
			return true
		}
	}
	return false
}

func (r *Run) keepPicture(d *dag) {
	if _, ok := r.pictures[d.traceID]; ok || len(r.pictures) < MaxPictures {
		r.pictures[d.traceID] = d
		return
	}
	largest := ""
	for id := range r.pictures {
		if id > largest {
			largest = id
		}
	}
	if d.traceID < largest {
		delete(r.pictures, largest)
		r.pictures[d.traceID] = d
	}
}

// sorted returns the kept results in report order.
func (r *Run) sorted() []record {
	out := append([]record(nil), r.records...)
	sort.SliceStable(out, func(i, j int) bool {
		a, b := out[i], out[j]
		if ci, cj := r.caseIndex[a.Case], r.caseIndex[b.Case]; ci != cj {
			return ci < cj
		}
		if a.TraceID != b.TraceID {
			return a.TraceID < b.TraceID
		}
		if a.batch != b.batch {
			return a.batch < b.batch
		}
		return a.seq < b.seq
	})
	return out
}

// dag is the part of a delegation DAG a report draws.
type dag struct {
	traceID string
	// service is the root span's service.name; source the span file the trace was read
	// from (set by SetSource; empty when unknown, e.g. in the collector).
	service, source string
	nodes           []dagNode
	edges           []dagEdge
	// groups are the orchestration wrappers drawn around their agents, each after the group
	// it is drawn in (outermost first, then in start order).
	groups []dagGroup
	// notes are the failures that have no place in the drawing (a handoff that never
	// happened, a trace without agents), each as a short reason.
	notes []string
}

// dagGroup is one orchestration wrapper (swarm, graph, node, workflow) drawn as a group.
type dagGroup struct {
	kind, name string
	// parent is the index of the group this one is drawn in (-1: none).
	parent int
	// members are the nodes directly in this group; children the groups directly in it.
	members, children []int
}

type dagNode struct {
	name    string
	remote  bool
	errored bool
	// Run figures of the invocation itself (its children not included).
	tokens, toolCalls int64
	durationMs        float64
	durationUnknown   bool
	// costUSD is the invocation's own cost; unpriced counts its models without a price.
	costUSD  float64
	unpriced int
	// failures are the short reasons of the failures located at this agent.
	failures []string
}

type dagEdge struct {
	from, to  int
	detection string
	// failures are the short reasons of the failures located at this handoff.
	failures []string
	// content is what crossed the handoff (redacted, bounded), shown behind a click in
	// the HTML report.
	content []contentPart
}

// contentPart is one labelled piece of a handoff's content.
type contentPart struct{ label, text string }

// failed reports whether a failure was located at the node.
func (n dagNode) failed() bool { return len(n.failures) > 0 }

// failed reports whether a failure was located at the handoff.
func (e dagEdge) failed() bool { return len(e.failures) > 0 }

// snapshot copies what the picture needs, so the trace's spans can be released; results
// are the trace's results as evaluated (their span ids place each failure), masked the
// same results with their text redacted (the reasons are taken from them).
func snapshot(g *agentgraph.Graph, results, masked []rules.Result, policy *redact.Policy) *dag {
	d := &dag{traceID: g.TraceID.String(), service: policy.Redact(g.Selector().ServiceName)}
	index := map[*agentgraph.Invocation]int{}
	node := func(inv *agentgraph.Invocation) int {
		if i, ok := index[inv]; ok {
			return i
		}
		n := dagNode{name: policy.Redact(inv.Name)}
		if inv.Remote != nil || inv.Span == nil {
			n.name += " (other trace)"
			n.remote = true
		} else {
			n.errored = inv.Span.Error != nil
			n.tokens, n.toolCalls = inv.Self.TotalTokens, int64(inv.Self.ToolCalls)
			n.durationMs, n.durationUnknown = inv.Self.DurationMs, inv.Self.DurationUnknown > 0
			n.costUSD, n.unpriced = inv.Self.CostUSD, len(inv.Self.UnpricedModels)
		}
		index[inv] = len(d.nodes)
		d.nodes = append(d.nodes, n)
		return index[inv]
	}
	for _, inv := range g.Invocations {
		node(inv)
	}
	for _, e := range g.Edges {
		d.edges = append(d.edges, dagEdge{
			from: node(e.From), to: node(e.To), detection: e.Detection,
			content: handoffContent(e, policy),
		})
	}
	snapshotGroups(d, g.Wrappers, index, policy)
	locateFailures(d, g, index, results, masked)
	return d
}

// snapshotGroups copies the wrappers to draw, each after the one around it. A node wrapper
// that holds exactly one agent of its own name (a Strands swarm's execute_node around that
// agent) says nothing the agent's box does not: it is left out, and its agent drawn in the
// wrapper around it.
func snapshotGroups(d *dag, wrappers []*agentgraph.Wrapper, index map[*agentgraph.Invocation]int, policy *redact.Policy) {
	var add func(w *agentgraph.Wrapper, parent int)
	add = func(w *agentgraph.Wrapper, parent int) {
		if redundantNode(w) {
			if parent >= 0 {
				d.groups[parent].members = append(d.groups[parent].members, index[w.Members[0]])
			}
			return
		}
		gi := len(d.groups)
		d.groups = append(d.groups, dagGroup{kind: w.Kind, name: policy.Redact(w.Name.Text), parent: parent})
		for _, m := range w.Members {
			d.groups[gi].members = append(d.groups[gi].members, index[m])
		}
		if parent >= 0 {
			d.groups[parent].children = append(d.groups[parent].children, gi)
		}
		for _, c := range w.Children {
			add(c, gi)
		}
	}
	for _, w := range wrappers {
		if w.Parent == nil {
			add(w, -1)
		}
	}
}

// redundantNode reports whether w is a node wrapper around one agent of the same name.
func redundantNode(w *agentgraph.Wrapper) bool {
	return w.Kind == agentgraph.WrapperNode && len(w.Members) == 1 && len(w.Children) == 0 &&
		w.Members[0].Name == w.Name.Text
}

// WriteFileAtomic writes data to path through a temporary file in the same directory and a
// rename, so a reader never sees a partial report.
func WriteFileAtomic(path string, data []byte) error {
	f, err := os.CreateTemp(filepath.Dir(path), "."+filepath.Base(path)+".tmp-*")
	if err != nil {
		return fmt.Errorf("write report %s: %w", path, err)
	}
	tmp := f.Name()
	_, err = f.Write(data)
	if err == nil {
		err = f.Sync()
	}
	if cerr := f.Close(); err == nil {
		err = cerr
	}
	if err == nil {
		err = os.Chmod(tmp, 0o644)
	}
	if err == nil {
		err = os.Rename(tmp, path)
	}
	if err != nil {
		_ = os.Remove(tmp)
		return fmt.Errorf("write report %s: %w", path, err)
	}
	return nil
}

// CheckWritable fails when a report could not be written to path (its directory is missing
// or not writable), so a misconfigured path fails at start, not at the end of a run.
func CheckWritable(path string) error {
	f, err := os.CreateTemp(filepath.Dir(path), "."+filepath.Base(path)+".probe-*")
	if err != nil {
		return fmt.Errorf("report %s is not writable: %w", path, err)
	}
	name := f.Name()
	_ = f.Close()
	return os.Remove(name)
}
