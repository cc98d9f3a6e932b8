package expect

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"strconv"
	"strings"

	"github.com/otelcol-handoff/otelcol-handoff/internal/agentgraph"
	"github.com/otelcol-handoff/otelcol-handoff/internal/celexpr"
	"github.com/otelcol-handoff/otelcol-handoff/internal/rules/check"
	"github.com/otelcol-handoff/otelcol-handoff/internal/textsafe"
)

// TraceEval holds what the seed-001 assertions share on one trace.
type TraceEval struct {
	G *agentgraph.Graph
	// ctx is the test context (context), read from the spans on first use.
	ctx map[string]any
	// facts are the runs' facts by invocation index (factsOf), each made on first use.
	facts []*runFacts
	// vars binds expected_result (evalResult), one evaluation at a time.
	vars resultVars
	// root is the root agent over its runs (rootAgent), once per trace.
	root *logicalAgent
	// Deadline bounds the evaluation (eval_timeout): CEL is evaluated under it and each
	// agent's assertions check it first.
	Deadline context.Context
	// Quiet: only the outcomes and clusters are read (check.Trace.Quiet); the fields leave
	// Actual, Message and Spans empty except on an error.
	Quiet bool
}

func NewTraceEval(g *agentgraph.Graph) *TraceEval {
	return &TraceEval{G: g, Deadline: context.Background()}
}

// context is the trace's test context (Graph.TestContext), made on first use.
func (te *TraceEval) context() map[string]any {
	if te.ctx == nil {
		te.ctx = te.G.TestContext()
	}
	return te.ctx
}

// contextOf is what e's context variable is bound to: the test context when e reads it,
// else nil (never looked up, never made).
func (te *TraceEval) contextOf(e *celexpr.Expr) map[string]any {
	if !e.Uses("context") {
		return nil
	}
	return te.context()
}

// RootAgent is the trace's root agent as one logical agent (g.Root must be set).
func (te *TraceEval) RootAgent() *logicalAgent {
	if te.root == nil {
		te.root = rootAgent(te.G)
	}
	return te.root
}

func (te *TraceEval) factsOf(inv *agentgraph.Invocation) *runFacts {
	i := inv.Index
	if i < 0 || i >= len(te.G.Invocations) || te.G.Invocations[i] != inv {
		f := factsOf(inv) // not one of the trace's own runs: not kept
		return &f
	}
	if te.facts == nil {
		te.facts = make([]*runFacts, len(te.G.Invocations))
	}
	if te.facts[i] == nil {
		f := factsOf(inv)
		te.facts[i] = &f
	}
	return te.facts[i]
}

// shown is inv's run as expected_result's actual text quotes it (runFacts.shown), made on
// the first read and kept with the facts.
func (te *TraceEval) shown(inv *agentgraph.Invocation) string {
	f := te.factsOf(inv)
	if f.shown == "" {
		out := "not captured"
		if f.outputFound {
			// show keeps maxShown bytes of the output's encoding and reads one more to
			// know whether it cuts: the preview decodes no more than those bytes show.
			out = show(agentgraph.ContentPreview(f.outputText, assistantRoles, maxShown+1))
		}
		f.shown = fmt.Sprintf("status %q, error %s, output %s", f.status, show(f.err), out)
	}
	return f.shown
}

// output is the value of inv's output (contentValue of its facts' outputText), decoded
// on the first read and kept with the facts for the other cases on the trace.
func (te *TraceEval) output(inv *agentgraph.Invocation) any {
	f := te.factsOf(inv)
	if !f.outputDecoded {
		f.output, f.outputDecoded = contentValue(f.outputText, assistantRoles), true
	}
	return f.output
}

// contextHint lists the context keys when an expression that reads context failed on a
// missing key.
func (te *TraceEval) contextHint(err error, e *celexpr.Expr) string {
	if err == nil || !e.Uses("context") || !strings.Contains(err.Error(), "no such key") {
		return ""
	}
	keys := sortedKeys(te.context())
	if len(keys) == 0 {
		return " (context is empty: it is bound from " + ContextPrefix + "* attributes of the root span, the root agent span or the resource)"
	}
	return " (context holds: " + strings.Join(keys, ", ") + ")"
}

func setError(r *check.Result, format string, args ...any) {
	r.Outcome = check.Error
	if r.Actual == "" {
		r.Actual = "evaluation error"
	}
	r.Message = fmt.Sprintf(format, args...)
}

// maxShown bounds trace content quoted in results.
const maxShown = 200

// show renders a value for a message: strings quoted, other values as JSON, cut at
// maxShown bytes.
func show(v any) string {
	var s string
	switch v := v.(type) {
	case string:
		s = strconv.Quote(textsafe.Clip(v, maxShown))
		return s
	case nil:
		return "null"
	default:
		if s, ok := check.ShowJSON(v, maxShown); ok { // decoded JSON, encoded only up to the cut
			return s
		}
		b, err := json.Marshal(v)
		if err != nil {
			s = fmt.Sprint(v)
		} else {
			s = string(b)
		}
	}
	return textsafe.Clip(s, maxShown)
}

var ErrNoRoot = errors.New("no agent invocation in this trace")
