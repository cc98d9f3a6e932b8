package agentgraph

import (
	"strings"

	"go.opentelemetry.io/collector/pdata/pcommon"
)

// What a trace offers to case conditions and to the test-case fields, as plain values.

// ContextPrefix marks the attributes bound to the test context (context.* in the
// test-case fields): test.context.KEY.
const ContextPrefix = "test.context."

// TestContext is the trace's test context: the attributes named test.context.KEY, keyed by
// KEY, from the resource of the trace's root span (or, without one, of the root agent's
// span), then the root agent span, then the root span itself (a later place wins). A test
// harness stashes fixture ids there. Each call returns a new map.
func (g *Graph) TestContext() map[string]any {
	ctx := map[string]any{}
	add := func(attrs pcommon.Map) {
		attrs.Range(func(k string, v pcommon.Value) bool {
			if key, ok := strings.CutPrefix(k, ContextPrefix); ok && key != "" {
				ctx[key] = v.AsRaw()
			}
			return true
		})
	}
	if g.RootSpan != nil {
		add(g.RootSpan.Resource.Attributes())
	} else if g.Root != nil {
		add(g.Root.Span.Resource.Attributes())
	}
	if g.Root != nil {
		add(g.Root.Span.Pdata.Attributes())
	}
	if g.RootSpan != nil {
		add(g.RootSpan.Pdata.Attributes())
	}
	return ctx
}

// Selector is the view of a trace that case conditions (`when`) select on.
type Selector struct {
	// RootAgent is the root invocation's agent name ("" without agents).
	RootAgent string
	// Agents are the names of every invocation, in start order (duplicates kept).
	Agents []string
	// ServiceName is the root span's resource service.name.
	ServiceName string
	// RootSpanName is the root span's own name.
	RootSpanName string
	// Resource and Attributes are the root span's resource and span attributes.
	Resource, Attributes map[string]any
}

// Selector computes the trace's selector view; each call computes it anew (callers keep
// it). A graph without spans gives empty values, never nil maps or lists.
func (g *Graph) Selector() Selector {
	sel := Selector{Agents: make([]string, 0, len(g.Invocations)), Resource: map[string]any{}, Attributes: map[string]any{}}
	if g.Root != nil {
		sel.RootAgent = g.Root.Name
	}
	for _, inv := range g.Invocations {
		sel.Agents = append(sel.Agents, inv.Name)
	}
	if g.RootSpan != nil {
		sel.RootSpanName = g.RootSpan.Pdata.Name()
		res := g.RootSpan.Resource.Attributes()
		sel.Resource = res.AsRaw()
		if v, ok := res.Get("service.name"); ok {
			sel.ServiceName = v.AsString()
		}
		sel.Attributes = g.RootSpan.Pdata.Attributes().AsRaw()
	}
	return sel
}
