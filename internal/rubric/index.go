package rubric

import (
	"encoding/json"
	"fmt"
	"regexp"
	"sort"
	"strings"

	"go.opentelemetry.io/collector/pdata/pcommon"

	"github.com/otelcol-handoff/otelcol-handoff/internal/agentgraph"
)

// Indexes the handoff rubrics build over the model of one trace (runs by name, steps in
// time order, ...), once per trace and on first use. Everything they index comes from the
// model's normalized fields: span ownership, each run's LLM calls, the input-side text of
// a span and recovery markers are the model's (internal/agentgraph).

// Index is built once per trace, when a rubric step needs it.
type Index struct {
	g *agentgraph.Graph
	// llms are each run's LLM calls (the model's Invocation.LLMCalls), in start order.
	llms   map[*agentgraph.Invocation][]*agentgraph.Span
	byName map[string][]*agentgraph.Invocation
	// position is each run's place in byName[its name] (start order).
	position map[*agentgraph.Invocation]int
	// transferVia maps the tool span of each transfer edge to its sender.
	transferVia map[*agentgraph.Span]*agentgraph.Invocation

	// Built on first use.
	facts      map[*agentgraph.Invocation]agentgraph.RunStatus
	canon      map[*agentgraph.ToolCall]string
	inputs     map[*agentgraph.Span]string
	steps      map[string][]stepItem
	others     map[string][]*agentgraph.Span
	outputs    map[string]*outputRuns
	upFailed   map[*agentgraph.Invocation]*agentgraph.Invocation
	names      []string
	marks      map[string][]mark
	byTool     map[runTool][]*agentgraph.ToolCall
	failed     map[string][]*agentgraph.Invocation
	scopes     map[*agentgraph.Edge]string
	outs       map[runKey][]*agentgraph.Edge
	keyedCalls map[string]map[string][]*agentgraph.ToolCall
	keyedOuts  map[string]map[string][]*agentgraph.Edge
	orderOf    map[*agentgraph.Span]int
	reactions  map[reactionKey]reaction
	first      map[firstRunsKey]map[string]*firstRuns
	next       map[*agentgraph.Edge][]senderStep
	rubric     rubricMemo

	// work counts the items the rubric checks visited; tests assert it stays linear.
	work int
}

// Work is the number of items the rubric checks visited on the trace so far: linear in its
// spans and edges (the rules' tests bound it per item).
func (x *Index) Work() int { return x.work }

func NewIndex(g *agentgraph.Graph) *Index {
	x := &Index{
		g:      g,
		llms:   make(map[*agentgraph.Invocation][]*agentgraph.Span, len(g.Invocations)),
		byName: map[string][]*agentgraph.Invocation{},

		position:    make(map[*agentgraph.Invocation]int, len(g.Invocations)),
		transferVia: map[*agentgraph.Span]*agentgraph.Invocation{},
		facts:       map[*agentgraph.Invocation]agentgraph.RunStatus{},
		canon:       map[*agentgraph.ToolCall]string{},
		inputs:      map[*agentgraph.Span]string{},
		steps:       map[string][]stepItem{},
		outputs:     map[string]*outputRuns{},
		upFailed:    map[*agentgraph.Invocation]*agentgraph.Invocation{},
		byTool:      map[runTool][]*agentgraph.ToolCall{},
	}
	for _, inv := range g.Invocations {
		if llms := inv.LLMCalls(); len(llms) > 0 {
			x.llms[inv] = llms
		}
		x.position[inv] = len(x.byName[inv.Name])
		x.byName[inv.Name] = append(x.byName[inv.Name], inv)
	}
	for _, e := range g.Edges {
		if e.Via != nil && e.Detection == agentgraph.DetectTransferTool {
			x.transferVia[e.Via] = e.From
		}
	}
	return x
}

// ownerOf is the agent run whose span is the nearest agent span above s (nil at top
// level): the model's ownership.
func (x *Index) ownerOf(s *agentgraph.Span) *agentgraph.Invocation { return s.Owner() }

// senderRun reports whether run acts for the sender of e after the receiver returns: a
// run of the sender's name outside the receiver's subtree (the sender itself, and a
// supervisor resumed as a new run, as LangGraph does), or the sender itself.
func (x *Index) senderRun(e *agentgraph.Edge, run *agentgraph.Invocation) bool {
	x.work++
	return e.From.Remote == nil && run.Name == e.From.Name && (run == e.From || !x.g.Reaches(e.To, run))
}

// statusOf is inv.Status(), once per run.
func (x *Index) statusOf(inv *agentgraph.Invocation) agentgraph.RunStatus {
	f, ok := x.facts[inv]
	if !ok {
		x.work += 1 + len(inv.ToolCalls)
		f = inv.Status()
		x.facts[inv] = f
	}
	return f
}

// canonical is canonicalArgs of a tool call's arguments, once per call.
func (x *Index) canonical(tc *agentgraph.ToolCall) string {
	c, ok := x.canon[tc]
	if !ok {
		x.work++
		c = canonicalArgs(tc.Args.Text)
		x.canon[tc] = c
	}
	return c
}

// inputOf is the model's input-side text of a span (Span.InputText), once per span.
func (x *Index) inputOf(s *agentgraph.Span) string {
	t, ok := x.inputs[s]
	if !ok {
		x.work++
		t = s.InputText()
		x.inputs[s] = t
	}
	return t
}

// callOf finds the tool call of a tool span: the call its owner made through it.
func (x *Index) callOf(s *agentgraph.Span) *agentgraph.ToolCall { return s.ToolCall() }

// runTool keys a run's calls of one tool.
type runTool struct {
	run  *agentgraph.Invocation
	tool string
}

// callsNamed lists a run's calls of one tool, in start order.
func (x *Index) callsNamed(run *agentgraph.Invocation, tool string) []*agentgraph.ToolCall {
	if _, ok := x.byTool[runTool{run, ""}]; !ok {
		x.byTool[runTool{run, ""}] = nil
		for _, tc := range run.OwnToolCalls() {
			x.work++
			k := runTool{run, tc.Name}
			x.byTool[k] = append(x.byTool[k], tc)
		}
	}
	return x.byTool[runTool{run, tool}]
}

// firstCallAfter is the first call in calls (start order) that starts at or after t and
// is not the not span.
func firstCallAfter(calls []*agentgraph.ToolCall, t pcommon.Timestamp, not *agentgraph.Span) *agentgraph.ToolCall {
	i := sort.Search(len(calls), func(i int) bool { return start(calls[i].Span) >= t })
	for ; i < len(calls); i++ {
		if calls[i].Span != not {
			return calls[i]
		}
	}
	return nil
}

// firstFailedAbove is the nearest run up inv's chain of senders (in this trace) whose run
// did not complete; a loop of senders ends the walk. Memoized along chains without loops.
func (x *Index) firstFailedAbove(inv *agentgraph.Invocation) *agentgraph.Invocation {
	var path []*agentgraph.Invocation
	var found *agentgraph.Invocation
	seen := map[*agentgraph.Invocation]bool{}
	loop := false
	for cur := inv; ; {
		x.work++
		if f, ok := x.upFailed[cur]; ok {
			found = f
			break
		}
		up := cur.In
		if up == nil || up.From.Remote != nil {
			break
		}
		p := up.From
		if seen[p] {
			loop = true
			break
		}
		seen[p] = true
		path = append(path, cur)
		if x.statusOf(p).State != agentgraph.StatusCompleted {
			found = p
			break
		}
		cur = p
	}
	if !loop {
		for _, c := range path {
			x.upFailed[c] = found
		}
	}
	return found
}

// unfinished lists the runs of a name that did not complete, in start order.
func (x *Index) unfinished(name string) []*agentgraph.Invocation {
	if x.failed == nil {
		x.failed = map[string][]*agentgraph.Invocation{}
	}
	list, ok := x.failed[name]
	if !ok {
		for _, inv := range x.byName[name] {
			if x.statusOf(inv).State != agentgraph.StatusCompleted {
				list = append(list, inv)
			}
		}
		x.failed[name] = list
	}
	return list
}

// scopeOf is scopeOf(e), once per edge.
func (x *Index) scopeOf(e *agentgraph.Edge) string {
	if x.scopes == nil {
		x.scopes = map[*agentgraph.Edge]string{}
	}
	s, ok := x.scopes[e]
	if !ok {
		x.work++
		s = scopeOf(e)
		x.scopes[e] = s
	}
	return s
}

// outsTo lists run's edges to agents of one name, in start order of the receivers.
func (x *Index) outsTo(run *agentgraph.Invocation, name string) []*agentgraph.Edge {
	return x.outsBy(run, "to\x00"+name, func(o *agentgraph.Edge) string { return "to\x00" + o.To.Name })
}

// outsScoped lists run's edges that dispatched one scope, in start order of the receivers.
func (x *Index) outsScoped(run *agentgraph.Invocation, scope string) []*agentgraph.Edge {
	return x.outsBy(run, "scope\x00"+scope, func(o *agentgraph.Edge) string { return "scope\x00" + x.scopeOf(o) })
}

type runKey struct {
	run *agentgraph.Invocation
	key string
}

func (x *Index) outsBy(run *agentgraph.Invocation, key string, keyOf func(*agentgraph.Edge) string) []*agentgraph.Edge {
	if x.outs == nil {
		x.outs = map[runKey][]*agentgraph.Edge{}
	}
	kind, _, _ := strings.Cut(key, "\x00")
	if _, ok := x.outs[runKey{run, kind}]; !ok {
		x.outs[runKey{run, kind}] = nil
		for _, o := range run.Out {
			x.work++
			k := runKey{run, keyOf(o)}
			x.outs[k] = append(x.outs[k], o)
		}
	}
	return x.outs[runKey{run, key}]
}

// firstEdgeAfter is the first edge of list (in start order of the receivers) whose
// receiver starts at or after t, other than not.
func firstEdgeAfter(list []*agentgraph.Edge, t pcommon.Timestamp, not *agentgraph.Edge) *agentgraph.Edge {
	i := sort.Search(len(list), func(i int) bool { return start(list[i].To.Span) >= t })
	for ; i < len(list); i++ {
		if list[i] != not {
			return list[i]
		}
	}
	return nil
}

// callsKeyed lists the tool calls with arguments of the runs of a name, keyed by tool
// name and canonical arguments, in start order.
func (x *Index) callsKeyed(name, key string) []*agentgraph.ToolCall {
	if x.keyedCalls == nil {
		x.keyedCalls = map[string]map[string][]*agentgraph.ToolCall{}
	}
	m, ok := x.keyedCalls[name]
	if !ok {
		m = map[string][]*agentgraph.ToolCall{}
		for _, run := range x.byName[name] {
			for _, tc := range run.OwnToolCalls() {
				if tc.Args.Found() {
					k := tc.Name + "\x00" + x.canonical(tc)
					m[k] = append(m[k], tc)
				}
			}
		}
		for _, list := range m {
			sort.SliceStable(list, func(i, j int) bool { return start(list[i].Span) < start(list[j].Span) })
		}
		x.keyedCalls[name] = m
	}
	return m[key]
}

// outsKeyed lists the edges out of the runs of a name, keyed by receiver name and scope,
// in start order of the receivers.
func (x *Index) outsKeyed(name, key string) []*agentgraph.Edge {
	if x.keyedOuts == nil {
		x.keyedOuts = map[string]map[string][]*agentgraph.Edge{}
	}
	m, ok := x.keyedOuts[name]
	if !ok {
		m = map[string][]*agentgraph.Edge{}
		for _, run := range x.byName[name] {
			for _, o := range run.Out {
				x.work++
				if sc := x.scopeOf(o); sc != "" {
					k := o.To.Name + "\x00" + sc
					m[k] = append(m[k], o)
				}
			}
		}
		for _, list := range m {
			sort.SliceStable(list, func(i, j int) bool { return start(list[i].To.Span) < start(list[j].To.Span) })
		}
		x.keyedOuts[name] = m
	}
	return m[key]
}

// spanOrder is a span's place in g.Spans (start order).
func (x *Index) spanOrder(s *agentgraph.Span) int {
	if x.orderOf == nil {
		x.orderOf = make(map[*agentgraph.Span]int, len(x.g.Spans))
		for i, sp := range x.g.Spans {
			x.orderOf[sp] = i
		}
	}
	return x.orderOf[s]
}

// catalog names the agents of the trace other than the sender: the first maxListed,
// sorted, and how many more.
func (x *Index) catalog(sender string) string {
	if x.names == nil {
		x.names = make([]string, 0, len(x.byName))
		for n := range x.byName {
			x.work++
			x.names = append(x.names, n)
		}
		sort.Strings(x.names)
	}
	var out []string
	for _, n := range x.names {
		if n != sender {
			if len(out) == maxListed {
				break
			}
			out = append(out, n)
		}
	}
	total := len(x.names)
	if _, ok := x.byName[sender]; ok {
		total--
	}
	return listed(out, total, ", ", "agents")
}

// ---- the sender's next steps ----

// stepItem is something a run of one agent name did: a candidate next step after a
// handoff of that sender.
type stepItem struct {
	at   pcommon.Timestamp
	kind int // stepResumed, stepLLM, stepTool, stepDispatch, stepOther
	run  *agentgraph.Invocation
	span *agentgraph.Span
	tc   *agentgraph.ToolCall
	edge *agentgraph.Edge
}

const (
	stepResumed = iota
	stepLLM
	stepTool
	stepDispatch
	stepOther
)

// maxNextSteps caps the next steps nextSteps returns, and maxStepScan what it looks at to
// find them: the work per handoff is bounded whatever the sender did afterwards.
const (
	maxNextSteps = 32
	maxStepScan  = 1024
)

// stepsOf lists, once per agent name, everything its runs did, in time order (ties in the
// order the runs started, then resumed run, LLM calls, tool calls, dispatches, then other
// spans in start order).
func (x *Index) stepsOf(name string) []stepItem {
	if items, ok := x.steps[name]; ok {
		return items
	}
	if x.others == nil {
		x.others = map[string][]*agentgraph.Span{}
		for _, sp := range x.g.Spans {
			x.work++
			if sp.Role == agentgraph.RoleOther || sp.Role == agentgraph.RoleWorkflow {
				if o := x.ownerOf(sp); o != nil {
					x.others[o.Name] = append(x.others[o.Name], sp)
				}
			}
		}
	}
	var items []stepItem
	for _, run := range x.byName[name] {
		items = append(items, stepItem{at: start(run.Span), kind: stepResumed, run: run, span: run.Span})
		for _, llm := range x.llms[run] {
			items = append(items, stepItem{at: start(llm), kind: stepLLM, run: run, span: llm})
		}
		for _, tc := range run.OwnToolCalls() {
			items = append(items, stepItem{at: start(tc.Span), kind: stepTool, run: run, span: tc.Span, tc: tc})
		}
		for _, o := range run.Out {
			items = append(items, stepItem{at: start(o.To.Span), kind: stepDispatch, run: run, span: o.To.Span, edge: o})
		}
	}
	for _, sp := range x.others[name] {
		items = append(items, stepItem{at: start(sp), kind: stepOther, run: x.ownerOf(sp), span: sp})
	}
	x.work += len(items)
	sort.SliceStable(items, func(i, j int) bool { return items[i].at < items[j].at })
	x.steps[name] = items
	return items
}

// nextSteps lists, in time order, what the sender's runs did after e's round trip ended:
// LLM calls (their input), tool calls (their arguments), dispatches (their arguments and
// the receiver's input), resumed runs (their input), and other spans of those runs (such
// as Mastra's model_step: control came back even without content). At most maxNextSteps.
func (x *Index) nextSteps(e *agentgraph.Edge) []senderStep {
	if x.next == nil {
		x.next = map[*agentgraph.Edge][]senderStep{}
	}
	if steps, ok := x.next[e]; ok {
		return steps
	}
	steps := x.findNextSteps(e)
	x.next[e] = steps
	return steps
}

func (x *Index) findNextSteps(e *agentgraph.Edge) []senderStep {
	t := x.roundReturnedAt(e)
	items := x.stepsOf(e.From.Name)
	var out []senderStep
	// Labels are made only where they are read: the first shownSteps steps (postTurn) and
	// the first step with content (integrationParts).
	withText := false
	add := func(st senderStep, label func() string) {
		if len(out) < shownSteps || (!withText && strings.TrimSpace(st.text) != "") {
			st.label = label()
		}
		withText = withText || strings.TrimSpace(st.text) != ""
		out = append(out, st)
	}
	i := sort.Search(len(items), func(i int) bool { return items[i].at >= t })
	for scanned := 0; i < len(items) && scanned < maxStepScan && len(out) < maxNextSteps; i, scanned = i+1, scanned+1 {
		it := &items[i]
		x.work++
		if it.kind == stepOther {
			if !x.g.Reaches(e.To, it.run) {
				add(senderStep{at: it.at, span: it.span}, func() string { return fmt.Sprintf("%s (span %s)", it.span.SpanName(), it.span.ID) })
			}
			continue
		}
		if !x.senderRun(e, it.run) {
			continue
		}
		switch it.kind {
		case stepResumed:
			if it.run != e.From {
				add(senderStep{at: it.at, text: it.run.Input.Text, span: it.span},
					func() string { return fmt.Sprintf("%s resumed (span %s)", it.run.Name, it.span.ID) })
			}
		case stepLLM:
			add(senderStep{at: it.at, text: x.inputOf(it.span), span: it.span},
				func() string { return fmt.Sprintf("LLM call %s (span %s)", it.span.SpanName(), it.span.ID) })
		case stepTool:
			if it.span != e.Via {
				add(senderStep{at: it.at, text: it.tc.Args.Text, span: it.span}, func() string { return "tool call " + toolLabel(it.tc) })
			}
		case stepDispatch:
			if o := it.edge; o != e && (o.Via == nil || start(o.Via) >= t) {
				add(senderStep{at: it.at, text: strings.TrimSpace(o.Reason.Text + "\n" + o.To.Input.Text), span: o.To.Span},
					func() string { return fmt.Sprintf("dispatch to %s (span %s)", o.To.Name, o.To.Span.ID) })
			}
		}
	}
	return out
}

// shownSteps is how many next steps the judge is shown (postTurn).
const shownSteps = 5

// ---- the sender's last output ----

// outputRuns are the runs of one name with an output: those on trees sorted by preorder
// number with the latest-starting run of every prefix and suffix, and those on cycles.
type outputRuns struct {
	tree         []*agentgraph.Invocation
	tin          []int
	prefix, suff []*agentgraph.Invocation
	cycle        []*agentgraph.Invocation
}

// later picks the run that comes later in start order (nil-safe).
func (x *Index) later(a, b *agentgraph.Invocation) *agentgraph.Invocation {
	switch {
	case a == nil:
		return b
	case b == nil:
		return a
	case x.position[b] > x.position[a]:
		return b
	}
	return a
}

// lastOutputRun is the latest-starting sender run of e with a captured output (nil: none):
// the runs of the sender's name outside the receiver's subtree, and the sender itself.
func (x *Index) lastOutputRun(e *agentgraph.Edge) *agentgraph.Invocation {
	if e.From.Remote != nil {
		return nil
	}
	runs, ok := x.outputs[e.From.Name]
	if !ok {
		runs = &outputRuns{}
		for _, inv := range x.byName[e.From.Name] {
			x.work++
			if !inv.Output.Found() {
				continue
			}
			if tin, _, tree := x.g.Preorder(inv); tree {
				runs.tree, runs.tin = append(runs.tree, inv), append(runs.tin, tin)
			} else {
				runs.cycle = append(runs.cycle, inv)
			}
		}
		sort.Sort(byTin{runs})
		n := len(runs.tree)
		runs.prefix, runs.suff = make([]*agentgraph.Invocation, n+1), make([]*agentgraph.Invocation, n+1)
		for i := 0; i < n; i++ {
			runs.prefix[i+1] = x.later(runs.prefix[i], runs.tree[i])
		}
		for i := n - 1; i >= 0; i-- {
			runs.suff[i] = x.later(runs.suff[i+1], runs.tree[i])
		}
		x.outputs[e.From.Name] = runs
	}
	var best *agentgraph.Invocation
	if e.From.Output.Found() {
		best = e.From
	}
	lo, hi, tree := x.g.Preorder(e.To)
	if !tree {
		// The receiver is on a cycle of runs: check each run (rare).
		for _, inv := range append(append([]*agentgraph.Invocation(nil), runs.tree...), runs.cycle...) {
			if x.senderRun(e, inv) {
				best = x.later(best, inv)
			}
		}
		return best
	}
	a := sort.SearchInts(runs.tin, lo)
	b := sort.SearchInts(runs.tin, hi)
	best = x.later(best, runs.prefix[a])
	best = x.later(best, runs.suff[b])
	for _, inv := range runs.cycle {
		x.work++
		best = x.later(best, inv)
	}
	return best
}

type byTin struct{ r *outputRuns }

func (b byTin) Len() int           { return len(b.r.tree) }
func (b byTin) Less(i, j int) bool { return b.r.tin[i] < b.r.tin[j] }
func (b byTin) Swap(i, j int) {
	b.r.tree[i], b.r.tree[j] = b.r.tree[j], b.r.tree[i]
	b.r.tin[i], b.r.tin[j] = b.r.tin[j], b.r.tin[i]
}

// ---- recorded recoveries ----

// mark is a span carrying handoff.recovery (on itself or an event), with the run it counts
// for: its own agent run, or the run that owns it.
type mark struct {
	order int // place in g.Spans
	span  *agentgraph.Span
	runs  [2]*agentgraph.Invocation
}

// marksOf lists the marks of the runs of one name, in span order.
func (x *Index) marksOf(name string) []mark {
	if x.marks == nil {
		x.marks = map[string][]mark{}
		for i, s := range x.g.Spans {
			x.work++
			if !s.HasRecovery() {
				continue
			}
			m := mark{order: i, span: s, runs: [2]*agentgraph.Invocation{x.g.InvocationOf(s), x.ownerOf(s)}}
			if r := m.runs[0]; r != nil {
				x.marks[r.Name] = append(x.marks[r.Name], m)
			}
			if r := m.runs[1]; r != nil && (m.runs[0] == nil || m.runs[0].Name != r.Name) {
				x.marks[r.Name] = append(x.marks[r.Name], m)
			}
		}
	}
	return x.marks[name]
}

func start(s *agentgraph.Span) pcommon.Timestamp { return s.Start() }
func end(s *agentgraph.Span) pcommon.Timestamp   { return s.End() }

// returnedAt is when the round trip of e ended: the receiver's end, or the dispatch call's
// end when that is later.
func returnedAt(e *agentgraph.Edge) pcommon.Timestamp {
	t := end(e.To.Span)
	if e.Via != nil && end(e.Via) > t {
		t = end(e.Via)
	}
	return t
}

// leafText is the text inside content: the string leaves of JSON (recursively, since
// frameworks nest JSON in strings), else the content as is.
func leafText(s string) string {
	var b strings.Builder
	var walk func(v any, depth int)
	walk = func(v any, depth int) {
		switch v := v.(type) {
		case string:
			if depth < 4 {
				t := strings.TrimSpace(v)
				if len(t) > 1 && (t[0] == '{' || t[0] == '[') {
					var inner any
					if json.Unmarshal([]byte(t), &inner) == nil {
						walk(inner, depth+1)
						return
					}
				}
			}
			b.WriteString(v)
			b.WriteByte('\n')
		case map[string]any:
			for _, k := range sortedKeys(v) {
				walk(v[k], depth)
			}
		case []any:
			for _, it := range v {
				walk(it, depth)
			}
		case nil, bool:
		default:
			b.WriteString(strings.TrimSpace(jsonString(v)))
			b.WriteByte('\n')
		}
	}
	t := strings.TrimSpace(s)
	if len(t) > 0 && (t[0] == '{' || t[0] == '[') {
		var v any
		if json.Unmarshal([]byte(t), &v) == nil {
			walk(v, 0)
			return b.String()
		}
	}
	return s
}

func jsonString(v any) string {
	b, err := json.Marshal(v)
	if err != nil {
		return ""
	}
	return string(b)
}

// plainOutput is the text of a return value: the last assistant message's text for a
// chat-messages array, else the string leaves of JSON, else the content as is.
func plainOutput(s string) string {
	if t, ok := agentgraph.MessageText(s, agentgraph.AssistantRoles); ok {
		return t
	}
	return leafText(s)
}

var wordRE = regexp.MustCompile(`[\p{L}\p{N}]{3,}`)

// normalize lowercases text and collapses whitespace (and the JSON escape of "/").
func normalize(s string) string {
	s = strings.ReplaceAll(s, `\/`, "/")
	return strings.Join(strings.Fields(strings.ToLower(s)), " ")
}

// carriedShare is the share of a value's words above which a text counts as carrying it
// (stepCarries).
const carriedShare = 0.8

// canonicalArgs renders arguments comparably: JSON re-encoded with sorted keys (without the
// given keys at the top level), else normalized text.
func canonicalArgs(s string, drop ...string) string {
	t := strings.TrimSpace(s)
	if v, ok := agentgraph.ParseJSON(t); ok {
		if m, ok := v.(map[string]any); ok && len(drop) > 0 {
			c := make(map[string]any, len(m))
			for k, x := range m {
				c[k] = x
			}
			for _, k := range drop {
				delete(c, k)
			}
			v = c
		}
		return jsonString(v)
	}
	return normalize(t)
}

// scopeOf is what an edge dispatched, comparably: the dispatch arguments without the
// target's name, else the receiver's input; "" when neither was captured.
func scopeOf(e *agentgraph.Edge) string {
	if e.Reason.Found() && !absentText(e.Reason.Text) {
		if s := canonicalArgs(e.Reason.Text, agentArgKeys...); s != "{}" && s != "" {
			return "args:" + s
		}
	}
	if e.To.Input.Found() {
		return "input:" + normalize(e.To.Input.Text)
	}
	return ""
}

func absentText(s string) bool {
	switch strings.TrimSpace(s) {
	case "", "{}", "[]", "null":
		return true
	}
	return false
}

// quote renders content for a message: one line, masked, at most n bytes (clip), in double
// quotes.
func quote(s string, n int) string { return `"` + clip(s, n) + `"` }

// code renders content (arguments) for a message: one line, at most n bytes, in backticks.
func code(s string, n int) string { return "`" + strings.ReplaceAll(clip(s, n), "`", "'") + "`" }

// toolLabel names a tool call in messages.
func toolLabel(tc *agentgraph.ToolCall) string {
	return tc.Name + " (span " + tc.Span.ID.String() + ")"
}

// errText is an error's type and message.
func errText(e *agentgraph.ErrorInfo) string {
	switch {
	case e == nil:
		return ""
	case e.Type == "" || strings.Contains(e.Message, e.Type):
		return strings.TrimSpace(e.Message)
	case e.Message == "":
		return e.Type
	}
	return e.Type + ": " + e.Message
}

// ---- the first sender run that did something after a time ----

// firstK is how many of the earliest-starting runs firstRuns keeps per suffix.
const firstK = 4

// firstRuns answers "the first run (in start order) of one name that dispatched to an agent
// (or called a tool, or dispatched a scope) at or after t and passes a check" without a
// loop over every run: the entries sorted by time, and for every suffix the positions of
// its firstK earliest-starting distinct runs.
type firstRuns struct {
	at  []pcommon.Timestamp
	pos []int
	top [][firstK]int
}

type firstRunsKey struct{ name, kind string }

// firstRunsBy indexes the runs of name by what they did: kind "to" (dispatches, keyed by
// receiver name), "call" (tool calls, keyed by tool) or "scope" (dispatches, keyed by
// scope).
func (x *Index) firstRunsBy(name, kind string) map[string]*firstRuns {
	if x.first == nil {
		x.first = map[firstRunsKey]map[string]*firstRuns{}
	}
	if m, ok := x.first[firstRunsKey{name, kind}]; ok {
		return m
	}
	m := map[string]*firstRuns{}
	add := func(key string, at pcommon.Timestamp, pos int) {
		x.work++
		fr := m[key]
		if fr == nil {
			fr = &firstRuns{}
			m[key] = fr
		}
		fr.at, fr.pos = append(fr.at, at), append(fr.pos, pos)
	}
	for pos, run := range x.byName[name] {
		switch kind {
		case "to":
			for _, o := range run.Out {
				add(o.To.Name, start(o.To.Span), pos)
			}
		case "call":
			for _, tc := range run.OwnToolCalls() {
				add(tc.Name, start(tc.Span), pos)
			}
		case "scope":
			for _, o := range run.Out {
				if sc := x.scopeOf(o); sc != "" {
					add(sc, start(o.To.Span), pos)
				}
			}
		}
	}
	for _, fr := range m {
		sort.Sort(byAt{fr})
		fr.top = make([][firstK]int, len(fr.at)+1)
		for k := range fr.top[len(fr.at)] {
			fr.top[len(fr.at)][k] = -1
		}
		for i := len(fr.at) - 1; i >= 0; i-- {
			fr.top[i] = insertRun(fr.top[i+1], fr.pos[i])
		}
	}
	x.first[firstRunsKey{name, kind}] = m
	return m
}

// insertRun adds a run position to an ascending list of distinct positions (-1: empty),
// keeping the firstK smallest.
func insertRun(top [firstK]int, p int) [firstK]int {
	for k, q := range top {
		if q == p {
			return top
		}
		if q < 0 || p < q {
			copy(top[k+1:], top[k:firstK-1])
			top[k] = p
			return top
		}
	}
	return top
}

type byAt struct{ fr *firstRuns }

func (b byAt) Len() int { return len(b.fr.at) }
func (b byAt) Less(i, j int) bool {
	if b.fr.at[i] != b.fr.at[j] {
		return b.fr.at[i] < b.fr.at[j]
	}
	return b.fr.pos[i] < b.fr.pos[j]
}

func (b byAt) Swap(i, j int) {
	b.fr.at[i], b.fr.at[j] = b.fr.at[j], b.fr.at[i]
	b.fr.pos[i], b.fr.pos[j] = b.fr.pos[j], b.fr.pos[i]
}

// firstRun is the earliest-starting run of name that has an entry under kind/key at or
// after t and passes ok (nil: none). When the firstK earliest all fail ok (runs below the
// receiver acting after it returned: broken timestamps), the rest are looked at one by one.
func (x *Index) firstRun(name, kind, key string, t pcommon.Timestamp, ok func(*agentgraph.Invocation) bool) *agentgraph.Invocation {
	fr := x.firstRunsBy(name, kind)[key]
	if fr == nil {
		return nil
	}
	runs := x.byName[name]
	i := sort.Search(len(fr.at), func(i int) bool { return fr.at[i] >= t })
	for _, p := range fr.top[i] {
		if p < 0 {
			return nil
		}
		x.work++
		if ok(runs[p]) {
			return runs[p]
		}
	}
	best := -1
	for j := i; j < len(fr.at); j++ {
		x.work++
		if p := fr.pos[j]; (best < 0 || p < best) && ok(runs[p]) {
			best = p
		}
	}
	if best < 0 {
		return nil
	}
	return runs[best]
}
