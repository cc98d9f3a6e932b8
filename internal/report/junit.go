package report

import (
	"bytes"
	"encoding/xml"
	"fmt"
	"strings"
	"unicode/utf8"

	"github.com/otelcol-handoff/otelcol-handoff/internal/rules"
	"github.com/otelcol-handoff/otelcol-handoff/internal/textsafe"
)

type junitSuites struct {
	XMLName  xml.Name     `xml:"testsuites"`
	Name     string       `xml:"name,attr"`
	Tests    int          `xml:"tests,attr"`
	Failures int          `xml:"failures,attr"`
	Errors   int          `xml:"errors,attr"`
	Skipped  int          `xml:"skipped,attr"`
	Suites   []junitSuite `xml:"testsuite"`
}

type junitSuite struct {
	Name     string      `xml:"name,attr"`
	Tests    int         `xml:"tests,attr"`
	Failures int         `xml:"failures,attr"`
	Errors   int         `xml:"errors,attr"`
	Skipped  int         `xml:"skipped,attr"`
	Props    *junitProps `xml:"properties,omitempty"`
	Cases    []junitCase `xml:"testcase"`
}

type junitProps struct {
	Props []junitProp `xml:"property"`
}

type junitProp struct {
	Name  string `xml:"name,attr"`
	Value string `xml:"value,attr"`
}

type junitCase struct {
	Name      string        `xml:"name,attr"`
	ClassName string        `xml:"classname,attr"`
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
// per assertion per trace (named "STEP [trace TRACE_ID]", classname the case; a rubric
// result names its handoff: "STEP FROM -> TO (span ID) [trace TRACE_ID]"), with a failure,
// error or skipped element carrying the message, and expected/actual/spans in the body.
// A rubric failure that a gate decides is a passing testcase with the failure in its
// system-out; the gates follow in a testsuite "gates", a testcase per pair and axis.
func (r *Run) JUnit() []byte {
	r.mu.Lock()
	defer r.mu.Unlock()
	suites := make([]junitSuite, len(r.cases))
	for i, c := range r.cases {
		suites[i].Name = text(c)
	}
	for _, rec := range r.sorted() {
		res := rec.Result
		s := &suites[r.caseIndex[res.Case]]
		tc := junitCase{Name: text(fmt.Sprintf("%s [trace %s]", stepName(res), res.TraceID)), ClassName: text(res.Case)}
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
		}
		s.Cases = append(s.Cases, tc)
	}
	out := junitSuites{Name: "otelcol-handoff assertions"}
	for i := range suites {
		s := &suites[i]
		counts := r.byCase[r.cases[i]]
		s.Tests = counts[rules.Pass] + counts[rules.Fail] + counts[rules.Error] + counts[rules.Skipped]
		s.Failures, s.Errors, s.Skipped = counts[rules.Fail]-r.gatedFails[r.cases[i]], counts[rules.Error], counts[rules.Skipped]
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
	}
	if gs := r.gateSuite(); gs != nil {
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
	if countGated(gates) == 0 {
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
		case rules.GateFail:
			s.Failures++
			tc.Failure = &junitProblem{
				Message: text(g.String()), Type: "gate",
				Body: clean(fmt.Sprintf("pair: %s\naxis: %s\nmean score: %.4f\nthreshold: %.2f\nhandoffs: %d", textsafe.Escape(g.Pair()), g.Axis, g.Score, *g.Threshold, g.Samples)),
			}
		case rules.GateInsufficient:
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
	fmt.Fprintf(&b, "expected: %s\nactual: %s\ntrace: %s", textsafe.Escape(res.Expected), textsafe.Escape(res.Actual), res.TraceID)
	if !res.Complete {
		b.WriteString(" (released incomplete)")
	}
	if len(res.Spans) > 0 {
		fmt.Fprintf(&b, "\nspans: %s", textsafe.Escape(strings.Join(res.Spans, ", ")))
	}
	return b.String()
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
