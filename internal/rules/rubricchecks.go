package rules

import (
	"encoding/json"
	"fmt"
	"regexp"
	"sort"
	"strings"

	"go.opentelemetry.io/collector/pdata/pcommon"
	"go.opentelemetry.io/collector/pdata/ptrace"

	"github.com/otelcol-handoff/otelcol-handoff/internal/agentgraph"
)

// The deterministic parts of the handoff rubrics. Each part reads the delegation DAG and
// the spans under it, and says pass, fail, or n/a (it cannot decide on this trace); see
// assertionexporter/README.md, "Handoff rubrics".

type partState int

const (
	partNA partState = iota
	partPass
	partFail
)

// part is one deterministic check of a rubric on one handoff.
type part struct {
	name   string
	state  partState
	detail string
}

func (p part) String() string {
	return p.name + " " + [...]string{"n/a", "pass", "fail"}[p.state]
}

// DefaultTransient matches errors taken as transient (a retry of the same scope is then
// fine): timeouts, rate limits, 502/503/504, unavailable or overloaded services, reset
// connections.
var DefaultTransient = []string{
	`(?i)time[ds]?[ _-]?out|deadline exceeded|temporar|try again|overloaded|unavailable|rate[ _-]?limit|too many requests|\b(?:429|502|503|504)\b|connection (?:reset|refused|closed)|econnreset|etimedout`,
}

// builtinPlumbing are framework tools that carry output or control, never work: they are
// not held against handoff.allowed_tools.
var builtinPlumbing = map[string]bool{
	"strands_structured_output": true, "transfer_to_agent": true, "handoff_to_agent": true,
	"final_result": true, "final_answer": true,
}

// AttrRecovery, set by an application on a span (or a span event) after an error, records
// the recovery it chose: retry, fallback or escalation.
const AttrRecovery = "handoff.recovery"

// rubricStep is an EXPECT_HANDOFF_RUBRICS step, compiled.
type rubricStep struct {
	axes      []string
	ignored   map[string]bool
	transient []*regexp.Regexp
}

func compileRubricStep(s StepConfig) *rubricStep {
	rs := &rubricStep{axes: stepAxes(s), ignored: map[string]bool{}}
	for _, t := range s.IgnoredTools {
		rs.ignored[t] = true
	}
	patterns := s.TransientErrors
	if len(patterns) == 0 {
		patterns = DefaultTransient
	}
	for _, p := range patterns {
		if re, err := regexp.Compile(p); err == nil { // errors are reported by validation
			rs.transient = append(rs.transient, re)
		}
	}
	return rs
}

func (rs *rubricStep) isTransient(e *agentgraph.ErrorInfo) bool {
	t := errText(e)
	for _, re := range rs.transient {
		if t != "" && re.MatchString(t) {
			return true
		}
	}
	return false
}

// plumbing reports tool calls that are framework plumbing of inv: the built-in list, the
// step's ignoredTools, transfer calls (transfer_to_X, handoff_to_X) and the calls that
// carried inv's own transfers.
func (rs *rubricStep) plumbing(tc *agentgraph.ToolCall, inv *agentgraph.Invocation) bool {
	if rs.ignored[tc.Name] || builtinPlumbing[tc.Name] || transferByName.MatchString(tc.Name) {
		return true
	}
	for _, out := range inv.Out {
		if out.Via == tc.Span && out.Detection == agentgraph.DetectTransferTool {
			return true
		}
	}
	return false
}

// allowedNames reads tool names from handoff.allowed_tools entries, which may be names or
// JSON tool definitions ({"name"} or {"function": {"name"}}).
func allowedNames(list []string) []string {
	var out []string
	for _, item := range list {
		var def map[string]any
		if strings.HasPrefix(strings.TrimSpace(item), "{") && json.Unmarshal([]byte(item), &def) == nil {
			if n, ok := def["name"].(string); ok {
				out = append(out, n)
				continue
			}
			if f, ok := def["function"].(map[string]any); ok {
				if n, ok := f["name"].(string); ok {
					out = append(out, n)
					continue
				}
			}
		}
		out = append(out, item)
	}
	return out
}

// ---- ScopeFidelity ----

// identRE finds identifier-like tokens: order ids, account numbers, dates, URLs, emails.
var identRE = regexp.MustCompile(`[\p{L}\p{N}][\p{L}\p{N}_.:/@#+-]*[\p{L}\p{N}]`)

// identifiers lists the identifier-like tokens (4+ characters with a digit) in the string
// values of JSON arguments; nil when the arguments are not JSON.
func identifiers(args string) []string {
	v, ok := parseJSON(args)
	if !ok {
		return nil
	}
	var out []string
	seen := map[string]bool{}
	var walk func(any)
	walk = func(v any) {
		switch v := v.(type) {
		case string:
			for _, tok := range identRE.FindAllString(v, -1) {
				if len([]rune(tok)) >= 4 && strings.ContainsAny(tok, "0123456789") && !seen[tok] {
					seen[tok] = true
					out = append(out, tok)
				}
			}
		case map[string]any:
			for _, k := range sortedKeys(v) {
				walk(v[k])
			}
		case []any:
			for _, it := range v {
				walk(it)
			}
		}
	}
	walk(v)
	return out
}

// scopeParts: the receiver called only tools in handoff.allowed_tools, and used no
// identifier the sender never supplied.
func (rs *rubricStep) scopeParts(x *dagIndex, e *agentgraph.Edge) []part {
	r := e.To
	var parts []part
	tools := part{name: "allowed tools"}
	if r.AllowedTools == nil {
		tools.detail = fmt.Sprintf("no handoff.allowed_tools captured for %s", r.Name)
	} else {
		names := allowedNames(r.AllowedTools)
		allowed := map[string]bool{}
		for _, n := range names {
			allowed[n] = true
		}
		var outside []string
		checked := 0
		for _, tc := range r.ToolCalls {
			if rs.plumbing(tc, r) {
				continue
			}
			checked++
			if !allowed[tc.Name] {
				outside = append(outside, toolLabel(tc))
			}
		}
		sort.Strings(names)
		if len(outside) > 0 {
			tools.state = partFail
			tools.detail = fmt.Sprintf("%s called %s, outside handoff.allowed_tools [%s]", r.Name, strings.Join(outside, ", "), strings.Join(names, ", "))
		} else {
			tools.state = partPass
			tools.detail = fmt.Sprintf("%s made %s, all in handoff.allowed_tools", r.Name, plural(checked, "tool call", "tool calls"))
		}
	}
	parts = append(parts, tools)

	ctx := part{name: "context supplied"}
	if !r.Input.Found() && !e.Reason.Found() {
		ctx.detail = fmt.Sprintf("what %s received was not captured (content capture disabled on the exporter)", r.Name)
		return append(parts, ctx)
	}
	supplied := []string{r.Input.Text, e.Reason.Text, e.Context.Text, inputText(r.Span.Span)}
	if llms := x.llms[r]; len(llms) > 0 {
		supplied = append(supplied, inputText(llms[0].Span)) // the first prompt, before any model output
	}
	var invented []string
	checked := 0
	for _, tc := range r.ToolCalls {
		if rs.plumbing(tc, r) || !tc.Args.Found() {
			continue
		}
		// What the receiver had learned by the time of this call: earlier tool results and
		// the returns of agents it dispatched.
		known := append([]string(nil), supplied...)
		for _, prev := range r.ToolCalls {
			if prev != tc && end(prev.Span) <= start(tc.Span) {
				known = append(known, prev.Result.Text)
			}
		}
		for _, out := range r.Out {
			if end(out.To.Span) <= start(tc.Span) {
				known = append(known, out.To.Output.Text)
			}
		}
		corpus := normalize(strings.Join(known, "\n"))
		checked++
		for _, id := range identifiers(tc.Args.Text) {
			if !strings.Contains(corpus, strings.ToLower(id)) {
				invented = append(invented, fmt.Sprintf("%s in %s", quote(id, 40), toolLabel(tc)))
			}
		}
	}
	switch {
	case len(invented) > 0:
		ctx.state = partFail
		ctx.detail = fmt.Sprintf("%s used context %s never supplied: %s (not in its input, the dispatch, or an earlier result)",
			r.Name, e.From.Name, strings.Join(invented, ", "))
	case checked == 0:
		ctx.state = partPass
		ctx.detail = fmt.Sprintf("%s made no tool call with arguments", r.Name)
	default:
		ctx.state = partPass
		ctx.detail = fmt.Sprintf("every identifier in %s's tool arguments was supplied", r.Name)
	}
	return append(parts, ctx)
}

// ---- ResultIntegration ----

// senderStep is something the sender did after the receiver returned.
type senderStep struct {
	at    pcommon.Timestamp
	label string
	text  string
	span  *agentgraph.Span
}

// nextSteps lists, in time order, what the sender's runs did after e's round trip ended:
// LLM calls (their input), tool calls (their arguments), dispatches (their arguments and
// the receiver's input), and resumed runs (their input).
func (x *dagIndex) nextSteps(e *agentgraph.Edge) []senderStep {
	t := returnedAt(e)
	below := subtree(e.To)
	var out []senderStep
	for _, run := range x.senderRuns(e) {
		if run != e.From && start(run.Span) >= t {
			out = append(out, senderStep{at: start(run.Span), label: fmt.Sprintf("%s resumed (span %s)", run.Name, run.Span.ID), text: run.Input.Text, span: run.Span})
		}
		for _, llm := range x.llms[run] {
			if start(llm) >= t {
				out = append(out, senderStep{at: start(llm), label: fmt.Sprintf("LLM call %s (span %s)", llm.Span.Name(), llm.ID), text: inputText(llm.Span), span: llm})
			}
		}
		for _, tc := range run.ToolCalls {
			if tc.Span != e.Via && start(tc.Span) >= t {
				out = append(out, senderStep{at: start(tc.Span), label: "tool call " + toolLabel(tc), text: tc.Args.Text, span: tc.Span})
			}
		}
		for _, o := range run.Out {
			if o != e && start(o.To.Span) >= t && (o.Via == nil || start(o.Via) >= t) {
				out = append(out, senderStep{
					at: start(o.To.Span), label: fmt.Sprintf("dispatch to %s (span %s)", o.To.Name, o.To.Span.ID),
					text: strings.TrimSpace(o.Reason.Text + "\n" + o.To.Input.Text), span: o.To.Span,
				})
			}
		}
	}
	// Other spans of the sender's runs after the return (framework steps, such as Mastra's
	// model_step) show control came back even when they carry no content.
	for _, sp := range x.g.Spans {
		if (sp.Role == agentgraph.RoleOther || sp.Role == agentgraph.RoleWorkflow) && start(sp) >= t {
			if o := x.ownerOf(sp); o != nil && o.Name == e.From.Name && !below[o] {
				out = append(out, senderStep{at: start(sp), label: fmt.Sprintf("%s (span %s)", sp.Span.Name(), sp.ID), span: sp})
			}
		}
	}
	sort.SliceStable(out, func(i, j int) bool { return out[i].at < out[j].at })
	return out
}

// returnValue is the receiver's return value: its output, else the result of the call
// that dispatched it.
func (x *dagIndex) returnValue(e *agentgraph.Edge) agentgraph.Value {
	if e.To.Output.Found() {
		return e.To.Output
	}
	if e.Via != nil {
		if o := x.ownerOf(e.Via); o != nil {
			for _, tc := range o.ToolCalls {
				if tc.Span == e.Via && tc.Result.Found() {
					return tc.Result
				}
			}
		}
	}
	return e.To.Output
}

// integrationParts: the sender's next step carries the receiver's return value, and the
// sender does not redo the receiver's work. ok is false when control never came back to
// the sender (a one-way transfer): the rubric does not apply.
func (rs *rubricStep) integrationParts(x *dagIndex, e *agentgraph.Edge) (parts []part, steps []senderStep, ok bool) {
	steps = x.nextSteps(e)
	if len(steps) == 0 {
		return nil, nil, false
	}
	read := part{name: "return value read"}
	rv := x.returnValue(e)
	var next *senderStep
	for i := range steps {
		if strings.TrimSpace(steps[i].text) != "" {
			next = &steps[i]
			break
		}
	}
	switch {
	case !rv.Found():
		read.detail = fmt.Sprintf("the return value of %s was not captured (content capture disabled on the exporter)", e.To.Name)
	case next == nil:
		read.detail = fmt.Sprintf("the content of %s's next step was not captured (content capture disabled on the exporter)", e.From.Name)
	default:
		value := plainOutput(rv.Text)
		if carried, share := carries(next.text, value); carried {
			read.state = partPass
			read.detail = fmt.Sprintf("%s's next step (%s) carries %s's return value", e.From.Name, next.label, e.To.Name)
		} else {
			read.state = partFail
			read.detail = fmt.Sprintf("%s's next step (%s) does not carry %s's return value (%.0f%% of its words)",
				e.From.Name, next.label, e.To.Name, 100*share)
		}
	}
	parts = append(parts, read)

	redo := part{
		name: "work not repeated", state: partPass,
		detail: fmt.Sprintf("%s did not redo %s's work", e.From.Name, e.To.Name),
	}
	done := map[string]*agentgraph.ToolCall{}
	for _, tc := range e.To.ToolCalls {
		if !rs.plumbing(tc, e.To) && tc.Args.Found() {
			done[tc.Name+"\x00"+canonicalArgs(tc.Args.Text)] = tc
		}
	}
	var repeats []string
	t := returnedAt(e)
	scope := scopeOf(e)
	for _, run := range x.senderRuns(e) {
		for _, tc := range run.ToolCalls {
			if start(tc.Span) < t || !tc.Args.Found() {
				continue
			}
			if _, ok := done[tc.Name+"\x00"+canonicalArgs(tc.Args.Text)]; ok {
				repeats = append(repeats, fmt.Sprintf("%s %s", toolLabel(tc), code(tc.Args.Text, 80)))
			}
		}
		if roundTripFailed(e) {
			continue // a new dispatch after a failure is a retry (RecoveryOnError)
		}
		for _, o := range run.Out {
			if o != e && o.To.Name == e.To.Name && start(o.To.Span) >= t && scope != "" && scopeOf(o) == scope && !roundTripFailed(o) {
				repeats = append(repeats, fmt.Sprintf("the same dispatch to %s again (span %s)", o.To.Name, o.To.Span.ID))
			}
		}
	}
	if len(repeats) > 0 {
		redo.state = partFail
		redo.detail = fmt.Sprintf("%s repeated %s's work after it returned: %s", e.From.Name, e.To.Name, strings.Join(repeats, ", "))
	}
	return append(parts, redo), steps, true
}

// roundTripFailed: the receiver's span, or the call that dispatched it, failed.
func roundTripFailed(e *agentgraph.Edge) bool {
	return e.To.Span.Error != nil || (e.Via != nil && e.Via.Error != nil)
}

// ---- RecoveryOnError ----

// episode is one error on a handoff's round trip.
type episode struct {
	span  *agentgraph.Span
	kind  string // receiver | dispatch | tool | llm
	label string
	err   *agentgraph.ErrorInfo
	tool  *agentgraph.ToolCall
}

// episodes lists the errors of e's round trip: the receiver's own span (or the dispatch
// call), and the receiver's own tool and LLM calls. Errors of agents the receiver
// dispatched belong to those handoffs.
func (x *dagIndex) episodes(e *agentgraph.Edge) []episode {
	r := e.To
	var out []episode
	switch {
	case r.Span.Error != nil:
		out = append(out, episode{span: r.Span, kind: "receiver", label: fmt.Sprintf("%s (span %s)", r.Name, r.Span.ID), err: r.Span.Error})
	case e.Via != nil && e.Via.Error != nil:
		out = append(out, episode{span: e.Via, kind: "dispatch", label: fmt.Sprintf("the dispatch call %s (span %s)", e.Via.Name.Text, e.Via.ID), err: e.Via.Error})
	}
	for _, tc := range r.ToolCalls {
		if tc.Span.Error != nil {
			out = append(out, episode{span: tc.Span, kind: "tool", label: toolLabel(tc), err: tc.Span.Error, tool: tc})
		}
	}
	for _, llm := range x.llms[r] {
		if llm.Error != nil {
			out = append(out, episode{span: llm, kind: "llm", label: fmt.Sprintf("LLM call %s (span %s)", llm.Span.Name(), llm.ID), err: llm.Error})
		}
	}
	sort.SliceStable(out, func(i, j int) bool { return start(out[i].span) < start(out[j].span) })
	return out
}

// recoveryParts judges each error of e's round trip: recovered (retried, fallen back,
// surfaced) or not (swallowed, or a retry loop on the same scope after a non-transient
// error). ok is false when the round trip had no error.
func (rs *rubricStep) recoveryParts(x *dagIndex, e *agentgraph.Edge) (parts []part, eps []episode, ok bool) {
	eps = x.episodes(e)
	if len(eps) == 0 {
		return nil, nil, false
	}
	for _, ep := range eps {
		state, detail := rs.recovered(x, e, ep)
		parts = append(parts, part{name: "error handled", state: state, detail: detail})
	}
	return parts, eps, true
}

func (rs *rubricStep) recovered(x *dagIndex, e *agentgraph.Edge, ep episode) (partState, string) {
	r := e.To
	failed := fmt.Sprintf("%s failed (%s)", ep.label, quote(errText(ep.err), 80))
	transient := rs.isTransient(ep.err)
	kind := "a non-transient"
	if transient {
		kind = "a transient"
	}
	if ep.kind == "tool" || ep.kind == "llm" {
		t := end(ep.span)
		// Retried by the receiver.
		if ep.kind == "tool" {
			for _, tc := range r.ToolCalls {
				if tc == ep.tool || tc.Name != ep.tool.Name || start(tc.Span) < t {
					continue
				}
				same := tc.Args.Found() && ep.tool.Args.Found() && canonicalArgs(tc.Args.Text) == canonicalArgs(ep.tool.Args.Text)
				if same && !transient {
					return partFail, fmt.Sprintf("%s; %s retried it with the same arguments (%s) after %s error: a retry loop on the same scope",
						failed, r.Name, toolLabel(tc), kind)
				}
				return partPass, fmt.Sprintf("%s; %s retried it (%s)", failed, r.Name, toolLabel(tc))
			}
		} else {
			for _, llm := range x.llms[r] {
				if llm == ep.span || start(llm) < t {
					continue
				}
				if inputText(llm.Span) == inputText(ep.span.Span) && !transient {
					return partFail, fmt.Sprintf("%s; %s sent the same request again (span %s) after %s error: a retry loop on the same scope",
						failed, r.Name, llm.ID, kind)
				}
				return partPass, fmt.Sprintf("%s; %s retried it (span %s)", failed, r.Name, llm.ID)
			}
		}
		// Fell back to another agent.
		for _, o := range r.Out {
			if start(o.To.Span) >= t {
				return partPass, fmt.Sprintf("%s; %s fell back to %s (span %s)", failed, r.Name, o.To.Name, o.To.Span.ID)
			}
		}
		// Surfaced by the receiver.
		if f := factsOf(r); f.status != StatusCompleted {
			return partPass, fmt.Sprintf("%s; %s surfaced it (%s)", failed, r.Name, f.status)
		}
		if v, ok := x.marker([]*agentgraph.Invocation{r}, ep.span); ok {
			return partPass, fmt.Sprintf("%s; %s recorded the recovery %s=%s", failed, r.Name, AttrRecovery, quote(v, 30))
		}
	}
	// The sender's reaction after the round trip.
	state, how := rs.senderReaction(x, e, transient, kind)
	if state != partNA {
		return state, failed + "; " + how
	}
	who := e.From.Name
	if ep.kind == "tool" || ep.kind == "llm" {
		return partFail, fmt.Sprintf("%s; %s did not retry it, fall back or fail, and %s did not retry, fall back, escalate or fail: the error was swallowed",
			failed, r.Name, who)
	}
	return partFail, fmt.Sprintf("%s; %s did not retry, fall back, escalate or fail: the error was swallowed", failed, who)
}

// senderReaction looks for the sender's recovery after e's round trip: a new dispatch to
// the receiver (a retry; a loop when the scope is the same and the error not transient),
// the same call again, the same scope given to another agent (a fallback), its own failure
// or a pending approval (escalation), or a recorded handoff.recovery.
func (rs *rubricStep) senderReaction(x *dagIndex, e *agentgraph.Edge, transient bool, kind string) (partState, string) {
	t := returnedAt(e)
	scope := scopeOf(e)
	runs := x.senderRuns(e)
	for _, run := range runs {
		for _, o := range run.Out {
			if o == e || start(o.To.Span) < t || o.To.Name != e.To.Name {
				continue
			}
			if scope != "" && scopeOf(o) == scope && !transient {
				return partFail, fmt.Sprintf("%s dispatched %s again with the same scope (span %s) after %s error: a retry loop on the same scope",
					e.From.Name, o.To.Name, o.To.Span.ID, kind)
			}
			return partPass, fmt.Sprintf("%s retried: dispatched %s again (span %s)", e.From.Name, o.To.Name, o.To.Span.ID)
		}
		if e.Via != nil && e.Via.Role == agentgraph.RoleTool {
			for _, tc := range run.ToolCalls {
				if tc.Span == e.Via || tc.Name != e.Via.Name.Text || start(tc.Span) < t {
					continue
				}
				if via := x.callOf(e.Via); via != nil && via.Args.Found() && tc.Args.Found() &&
					canonicalArgs(via.Args.Text) == canonicalArgs(tc.Args.Text) && !transient {
					return partFail, fmt.Sprintf("%s called %s again with the same arguments after %s error: a retry loop on the same scope",
						e.From.Name, toolLabel(tc), kind)
				}
				return partPass, fmt.Sprintf("%s retried: called %s again", e.From.Name, toolLabel(tc))
			}
		}
	}
	if scope != "" {
		for _, run := range runs {
			for _, o := range run.Out {
				if o != e && o.To.Name != e.To.Name && start(o.To.Span) >= t && scopeOf(o) == scope {
					return partPass, fmt.Sprintf("%s fell back: gave the same scope to %s (span %s)", e.From.Name, o.To.Name, o.To.Span.ID)
				}
			}
		}
	}
	for _, run := range runs {
		if f := factsOf(run); f.status != StatusCompleted {
			return partPass, fmt.Sprintf("%s escalated: its run ended %s (%s)", run.Name, f.status, f.statusWhy)
		}
	}
	seen := map[*agentgraph.Invocation]bool{}
	for up := e.From.In; up != nil && up.From.Remote == nil && !seen[up.From]; up = up.From.In {
		seen[up.From] = true
		if f := factsOf(up.From); f.status != StatusCompleted {
			return partPass, fmt.Sprintf("escalated: %s, up the chain, ended %s", up.From.Name, f.status)
		}
	}
	if root := x.g.RootSpan; root != nil && root.Span.Status().Code() == ptrace.StatusCodeError {
		return partPass, "escalated: the trace's root span failed"
	}
	if v, ok := x.marker(append(runs, e.To), e.To.Span); ok {
		return partPass, fmt.Sprintf("%s recorded the recovery %s=%s", e.From.Name, AttrRecovery, quote(v, 30))
	}
	return partNA, ""
}

// callOf finds the tool call of a tool span.
func (x *dagIndex) callOf(s *agentgraph.Span) *agentgraph.ToolCall {
	if o := x.ownerOf(s); o != nil {
		for _, tc := range o.ToolCalls {
			if tc.Span == s {
				return tc
			}
		}
	}
	return nil
}

// marker finds a handoff.recovery attribute on a span of the runs (their agent spans and
// the spans they own) that ends after the error began, or on an event of one after it.
func (x *dagIndex) marker(runs []*agentgraph.Invocation, after *agentgraph.Span) (string, bool) {
	in := map[*agentgraph.Invocation]bool{}
	for _, r := range runs {
		in[r] = true
	}
	t := start(after)
	for _, s := range x.g.Spans {
		inv := x.invOf[s]
		if inv == nil || !in[inv] {
			inv = x.ownerOf(s)
		}
		if inv == nil || !in[inv] || end(s) < t {
			continue
		}
		if v, ok := s.Span.Attributes().Get(AttrRecovery); ok && v.AsString() != "" {
			return v.AsString(), true
		}
		events := s.Span.Events()
		for i := 0; i < events.Len(); i++ {
			ev := events.At(i)
			if ev.Timestamp() < t {
				continue
			}
			if v, ok := ev.Attributes().Get(AttrRecovery); ok && v.AsString() != "" {
				return v.AsString(), true
			}
		}
	}
	return "", false
}

// receiverTurn renders what the receiver did, for the judge.
func receiverTurn(r *agentgraph.Invocation) string {
	var b strings.Builder
	for _, tc := range r.ToolCalls {
		fmt.Fprintf(&b, "tool %s args %s", tc.Name, strings.TrimSpace(tc.Args.Text))
		if tc.Span.Error != nil {
			fmt.Fprintf(&b, " -> error %s", errText(tc.Span.Error))
		} else if tc.Result.Found() {
			fmt.Fprintf(&b, " -> %s", strings.TrimSpace(tc.Result.Text))
		}
		b.WriteByte('\n')
	}
	for _, o := range r.Out {
		fmt.Fprintf(&b, "dispatched %s\n", o.To.Name)
	}
	if r.Span.Error != nil {
		fmt.Fprintf(&b, "the run failed: %s\n", errText(r.Span.Error))
	}
	if r.Output.Found() {
		fmt.Fprintf(&b, "output: %s\n", plainOutput(r.Output.Text))
	}
	return strings.TrimSpace(b.String())
}

func plural(n int, one, many string) string {
	if n == 1 {
		return fmt.Sprintf("%d %s", n, one)
	}
	return fmt.Sprintf("%d %s", n, many)
}
