package report

import (
	"bytes"
	"encoding/xml"
	"fmt"
	"sort"
	"strings"
	"time"
	"unicode/utf8"

	"github.com/otelcol-handoff/otelcol-handoff/internal/agentgraph"
	"github.com/otelcol-handoff/otelcol-handoff/internal/gate"
	"github.com/otelcol-handoff/otelcol-handoff/internal/redact"
	"github.com/otelcol-handoff/otelcol-handoff/internal/rules"
	"github.com/otelcol-handoff/otelcol-handoff/internal/textsafe"
	"github.com/otelcol-handoff/otelcol-handoff/internal/verdict"
)

type junitSuites struct {
	XMLName  xml.Name `xml:"testsuites"`
	Name     string   `xml:"name,attr"`
	Tests    int      `xml:"tests,attr"`
	Failures int      `xml:"failures,attr"`
	Errors   int      `xml:"errors,attr"`
	Skipped  int      `xml:"skipped,attr"`
	// Time (seconds) and Timestamp span the traces of the run; see junitTimes.
	Time      string       `xml:"time,attr,omitempty"`
	Timestamp string       `xml:"timestamp,attr,omitempty"`
	Suites    []junitSuite `xml:"testsuite"`
}

type junitSuite struct {
	Name     string `xml:"name,attr"`
	Tests    int    `xml:"tests,attr"`
	Failures int    `xml:"failures,attr"`
	Errors   int    `xml:"errors,attr"`
	Skipped  int    `xml:"skipped,attr"`
	// Time and Timestamp span the traces of the suite's testcases.
	Time      string      `xml:"time,attr,omitempty"`
	Timestamp string      `xml:"timestamp,attr,omitempty"`
	Props     *junitProps `xml:"properties,omitempty"`
	Cases     []junitCase `xml:"testcase"`
}

type junitProps struct {
	Props []junitProp `xml:"property"`
}

type junitProp struct {
	Name  string `xml:"name,attr"`
	Value string `xml:"value,attr"`
}

type junitCase struct {
	Name      string `xml:"name,attr"`
	ClassName string `xml:"classname,attr"`
	// Time is the trace's duration in seconds, Timestamp its first span's start (UTC).
	Time      string        `xml:"time,attr,omitempty"`
	Timestamp string        `xml:"timestamp,attr,omitempty"`
	Failure   *junitProblem `xml:"failure,omitempty"`
	Error     *junitProblem `xml:"error,omitempty"`
	Skipped   *junitSkipped `xml:"skipped,omitempty"`
	SystemOut string        `xml:"system-out,omitempty"`
}

type junitProblem struct {
	Message string `xml:"message,attr"`
	Type    string `xml:"type,attr"`
	Body    string `xml:",cdata"`
}

type junitSkipped struct {
	Message string `xml:"message,attr"`
}

// JUnit renders the run as JUnit XML: a testsuite per case (in config order), a testcase
// per assertion per trace, with a failure, error or skipped element carrying the message
// and expected/actual/trace/spans in the body (a passing or skipped testcase names its
// trace in system-out). A rubric failure that a gate decides is a passing testcase with the
// failure in its system-out; the gates follow in a testsuite "gates", a testcase per pair
// and axis.
//
// Testcase names hold no trace or span id, so two runs of the same scenario give the same
// names and a CI's test history follows each assertion: "STEP [root AGENT]", AGENT the
// trace's root agent; when several traces of the run have the same root agent, ", trace N"
// numbers them in the order they started ("EXPECT_AGENT_BUDGET#2 [root triage, trace 2]").
// A rubric result names its handoff ("STEP FROM -> TO [root AGENT]"), and a name repeated
// within one trace (two handoffs between the same agents) takes " (2)", " (3)" in the order
// the evaluator produced them. A trace without agents is named by its root span ("[root
// span NAME]"). Testcases follow the order their traces started. time and timestamp come
// from the trace's spans, never from the clock: a testcase's are its trace's duration and
// first span's start, a suite's (and the report's) span its traces.
func (r *Run) JUnit() []byte {
	r.mu.Lock()
	defer r.mu.Unlock()
	labels := r.traceLabels()
	suites := make([]junitSuite, len(r.cases))
	spans := make([]timeSpan, len(r.cases))
	var all timeSpan
	for i, c := range r.cases {
		suites[i].Name = text(c)
	}
	records := r.sorted()
	sort.SliceStable(records, func(i, j int) bool {
		a, b := records[i], records[j]
		if ci, cj := r.caseIndex[a.Case], r.caseIndex[b.Case]; ci != cj {
			return ci < cj
		}
		return r.traceInfos[a.TraceID].start.Before(r.traceInfos[b.TraceID].start)
	})
	seen := map[string]int{} // case, trace and step name -> results so named
	for _, rec := range records {
		res := rec.Result
		ci := r.caseIndex[res.Case]
		s := &suites[ci]
		step := junitStep(res)
		key := res.Case + "\x00" + res.TraceID + "\x00" + step
		if seen[key]++; seen[key] > 1 {
			step += fmt.Sprintf(" (%d)", seen[key])
		}
		label, ok := labels[res.TraceID]
		if !ok { // a result recorded without its graph
			label = "trace " + res.TraceID
		}
		info := r.traceInfos[res.TraceID]
		tc := junitCase{Name: text(step + " [" + label + "]"), ClassName: text(res.Case)}
		tc.Time, tc.Timestamp = info.span().attrs()
		spans[ci].add(info.span())
		all.add(info.span())
		body := clean(problemBody(res))
		switch {
		case res.Outcome == rules.Fail && res.Gated:
			tc.SystemOut = clean(text("fail, decided by the gate of "+res.Axis+" "+res.From+" -> "+res.To+": "+res.Message) + "\n" + problemBody(res))
		case res.Outcome == rules.Fail:
			tc.Failure = &junitProblem{Message: text(res.Message), Type: text(res.Action), Body: body}
		case res.Outcome == rules.Error:
			tc.Error = &junitProblem{Message: text(res.Message), Type: text(res.Action), Body: body}
		case res.Outcome == rules.Skipped:
			tc.Skipped = &junitSkipped{Message: text(res.Message)}
			tc.SystemOut = clean(traceLine(res))
		default:
			tc.SystemOut = clean(traceLine(res))
		}
		s.Cases = append(s.Cases, tc)
	}
	out := junitSuites{Name: "otelcol-handoff assertions"}
	for i := range suites {
		s := &suites[i]
		counts := r.byCase[r.cases[i]]
		s.Tests = counts.Total()
		s.Failures, s.Errors, s.Skipped = counts.Fail-counts.Gated, counts.Error, counts.Skipped
		if listed := len(s.Cases); listed < s.Tests {
			s.Props = &junitProps{Props: []junitProp{{
				Name:  "unlisted_results",
				Value: fmt.Sprintf("%d results beyond the first %d of the run are counted but not listed", s.Tests-listed, MaxResults),
			}}}
		}
		out.Tests += s.Tests
		out.Failures += s.Failures
		out.Errors += s.Errors
		out.Skipped += s.Skipped
		s.Time, s.Timestamp = spans[i].attrs()
	}
	out.Time, out.Timestamp = all.attrs()
	if gs := r.gateSuite(); gs != nil {
		gs.Time, gs.Timestamp = out.Time, out.Timestamp
		suites = append(suites, *gs)
		out.Tests += gs.Tests
		out.Failures += gs.Failures
		out.Skipped += gs.Skipped
	}
	out.Suites = suites
	var buf bytes.Buffer
	buf.WriteString(xml.Header)
	enc := xml.NewEncoder(&buf)
	enc.Indent("", "  ")
	if err := enc.Encode(out); err != nil {
		// Every string is cleaned, so encoding cannot fail; keep the report well-formed.
		return []byte(xml.Header + "<testsuites/>\n")
	}
	buf.WriteByte('\n')
	return buf.Bytes()
}

// gateSuite is the testsuite "gates": a testcase per gated pair and axis, failed when the
// mean score is under the threshold, skipped with too few handoffs.
func (r *Run) gateSuite() *junitSuite {
	gates := r.gateResults()
	if verdict.CountGates(gates).Decided == 0 {
		return nil
	}
	s := &junitSuite{Name: "gates"}
	if r.judge != nil {
		s.Props = &junitProps{Props: []junitProp{
			{Name: "judge.model", Value: text(r.judge.Model)},
			{Name: "judge.template", Value: r.judge.Template},
			{Name: "judge.samples", Value: fmt.Sprint(r.judge.Samples)},
		}}
	}
	for _, g := range gates {
		if g.Threshold == nil {
			continue
		}
		tc := junitCase{Name: text(g.Axis + " " + g.Pair()), ClassName: "gates"}
		s.Tests++
		switch g.Status {
		case gate.Fail:
			s.Failures++
			tc.Failure = &junitProblem{
				Message: text(g.String()), Type: "gate",
				Body: clean(fmt.Sprintf("pair: %s\naxis: %s\nmean score: %.4f\nthreshold: %.2f\nhandoffs: %d", textsafe.Escape(g.Pair()), g.Axis, g.Score, *g.Threshold, g.Samples)),
			}
		case gate.Insufficient:
			s.Skipped++
			tc.Skipped = &junitSkipped{Message: text(g.String())}
		default:
			tc.SystemOut = text(g.String())
		}
		s.Cases = append(s.Cases, tc)
	}
	return s
}

func problemBody(res rules.Result) string {
	var b strings.Builder
	fmt.Fprintf(&b, "expected: %s\nactual: %s\n%s", textsafe.Escape(res.Expected), textsafe.Escape(res.Actual), traceLine(res))
	if len(res.Spans) > 0 {
		fmt.Fprintf(&b, "\nspans: %s", textsafe.Escape(strings.Join(res.Spans, ", ")))
	}
	return b.String()
}

// traceLine names the result's trace: "trace: ID", and " (released incomplete)".
func traceLine(res rules.Result) string {
	if !res.Complete {
		return "trace: " + res.TraceID + " (released incomplete)"
	}
	return "trace: " + res.TraceID
}

// junitStep is the step part of a testcase name: the step, and a rubric result's handoff
// (its span id stays in the body: it differs between two runs).
func junitStep(res rules.Result) string {
	if res.From == "" {
		return res.Step
	}
	return res.Step + " " + res.From + " -> " + res.To
}

// traceInfo is what the JUnit report names and times a trace by.
type traceInfo struct {
	// root is "root AGENT" (the root agent, masked by the redaction policy), or "root span
	// NAME" for a trace without agents.
	root       string
	start, end time.Time
}

// traceInfoOf reads the trace's root agent and the time its spans cover.
func traceInfoOf(g *agentgraph.Graph, policy *redact.Policy) traceInfo {
	var info traceInfo
	switch {
	case g.Root != nil:
		info.root = "root " + policy.Redact(g.Root.Name)
	case g.RootSpan != nil:
		info.root = "root span " + policy.Redact(g.RootSpan.SpanName())
	default:
		info.root = "root none"
	}
	info.start = TraceStart(g)
	for _, s := range g.Spans {
		if en := s.End(); en != 0 && en.AsTime().After(info.end) {
			info.end = en.AsTime()
		}
	}
	if info.end.Before(info.start) {
		info.end = info.start
	}
	return info
}

// TraceStart is when the trace started: its earliest span start (zero: no span has one).
func TraceStart(g *agentgraph.Graph) time.Time {
	var start time.Time
	for _, s := range g.Spans {
		if st := s.Start(); st != 0 && (start.IsZero() || st.AsTime().Before(start)) {
			start = st.AsTime()
		}
	}
	return start
}

func (t traceInfo) span() timeSpan { return timeSpan{start: t.start, end: t.end} }

// traceLabels names each trace with a graph by its root agent, numbered in start order
// (then by trace id) among the traces of the same root agent when there are several.
func (r *Run) traceLabels() map[string]string {
	byRoot := map[string][]string{}
	for id, info := range r.traceInfos {
		byRoot[info.root] = append(byRoot[info.root], id)
	}
	labels := make(map[string]string, len(r.traceInfos))
	for root, ids := range byRoot {
		sort.Slice(ids, func(i, j int) bool {
			a, b := r.traceInfos[ids[i]].start, r.traceInfos[ids[j]].start
			if !a.Equal(b) {
				return a.Before(b)
			}
			return ids[i] < ids[j]
		})
		for n, id := range ids {
			labels[id] = root
			if len(ids) > 1 {
				labels[id] = fmt.Sprintf("%s, trace %d", root, n+1)
			}
		}
	}
	return labels
}

// timeSpan is the time from the earliest start to the latest end of some traces (zero:
// none known).
type timeSpan struct{ start, end time.Time }

func (t *timeSpan) add(o timeSpan) {
	if o.start.IsZero() {
		return
	}
	if t.start.IsZero() || o.start.Before(t.start) {
		t.start = o.start
	}
	if o.end.After(t.end) {
		t.end = o.end
	}
}

// attrs are the JUnit time (seconds) and timestamp (ISO 8601, UTC, milliseconds) of the
// span; both empty when no time is known.
func (t timeSpan) attrs() (seconds, timestamp string) {
	if t.start.IsZero() {
		return "", ""
	}
	return fmt.Sprintf("%.3f", t.end.Sub(t.start).Seconds()), t.start.UTC().Format("2006-01-02T15:04:05.000Z")
}

// text is one line of trace text for the report: control characters escaped
// (textsafe.Escape), then made valid XML.
func text(s string) string { return clean(textsafe.Escape(s)) }

// clean makes s valid XML character data: invalid UTF-8 and characters XML forbids become
// U+FFFD.
func clean(s string) string {
	ok := true
	for _, c := range s {
		if !xmlChar(c) {
			ok = false
			break
		}
	}
	if ok && utf8.ValidString(s) {
		return s
	}
	var b strings.Builder
	for _, c := range s {
		if !xmlChar(c) {
			c = utf8.RuneError
		}
		b.WriteRune(c)
	}
	return b.String()
}

func xmlChar(c rune) bool {
	return c == 0x9 || c == 0xA || c == 0xD || (c >= 0x20 && c <= 0xD7FF) ||
		(c >= 0xE000 && c <= 0xFFFD && c != utf8.RuneError) || (c >= 0x10000 && c <= 0x10FFFF)
}
