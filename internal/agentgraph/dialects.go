package agentgraph

import (
	"encoding/json"
	"regexp"
	"strings"
	"unicode/utf8"
)

// Structural dialect rules: the ones that need a span's place in the tree, applied after
// every span has its attribute-based role (DIALECTS.md 3.1a and the LangGraph node rule).

// BeeAI emits one span per emitter event: AGENT-kind ones for every agent step
// (agent.react.update-12, ...) and three per tool call (start, finish, success or error).
var (
	beeaiAgentEvent = regexp.MustCompile(`^agent\.[a-z_]+\.[a-z_]+-\d+$`)
	beeaiToolEvent  = regexp.MustCompile(`^tool\.[a-z_.]+\.(start|finish)-\d+$`)
)

// LangGraph's own graph nodes, never agents.
var langgraphInternal = map[string]bool{
	"__start__": true, "__end__": true, "agent": true, "tools": true, "model": true,
	"call_model": true, "should_continue": true,
}

// refineRoles promotes and demotes agent roles with tree context. Spans are in start
// order, so a parent is seen before its children.
func (g *Graph) refineRoles() {
	g.markLLMBelow()
	for _, s := range g.Spans {
		switch {
		case s.Role == RoleAgent && strings.HasPrefix(s.Pdata.Name(), "agent.") && beeaiAgentEvent.MatchString(s.Pdata.Name()),
			s.Role == RoleTool && strings.HasPrefix(s.Pdata.Name(), "tool.") && beeaiToolEvent.MatchString(s.Pdata.Name()):
			s.Role, s.RoleSource = RoleOther, "beeai.event"
		case s.Role == RoleAgent && isWorkflowPseudoAgent(s):
			s.Role, s.RoleSource = RoleWorkflow, "openai_agents.workflow"
		case s.Role != RoleAgent && s.Role != RoleLLM && s.Role != RoleTool && s.llmBelow && isLangGraphAgentNode(g.ix, s):
			s.Role, s.RoleSource = RoleAgent, "metadata.langgraph_node"
		}
	}
	// Double instrumentation: an agent span whose only child is an agent span of the same
	// name is a wrapper; the inner span is the run.
	for _, s := range g.Spans {
		if kids := g.children(s); s.Role == RoleAgent && len(kids) == 1 {
			c := kids[0]
			if c.Role == RoleAgent && c.Name.Text == s.Name.Text {
				s.Role, s.RoleSource = RoleWorkflow, "double_instrumentation"
			}
		}
	}
}

// markLLMBelow flags spans with an LLM span anywhere below them: one pass over the
// preorder backwards visits children before their parents, whatever the timestamps say.
func (g *Graph) markLLMBelow() {
	for i := len(g.preorder) - 1; i >= 0; i-- {
		s := g.preorder[i]
		g.work++
		if s.parent != nil && (s.Role == RoleLLM || s.llmBelow) {
			s.parent.llmBelow = true
		}
	}
}

// isWorkflowPseudoAgent: the root AGENT span an OpenAI-Agents bridge makes from the SDK's
// trace ("Agent workflow"), which names no agent. It is the topmost span of its scope: the
// trace's root, or a child of another instrumentation's span (the HTTP server span of a
// service the trace crossed into).
func isWorkflowPseudoAgent(s *Span) bool {
	if (s.parent != nil && s.parent.Scope.Name() == s.Scope.Name()) || s.Name.Source != "span.name.verbatim" {
		return false
	}
	scope := s.Scope.Name()
	return strings.Contains(scope, "openai_agents") || strings.Contains(scope, "openai-agents") ||
		s.Pdata.Name() == "Agent workflow"
}

// isLangGraphAgentNode: an OpenInference or LangSmith LangGraph node span named after its
// node (metadata langgraph_node), outside LangGraph's own nodes, with an LLM call below it.
// A subgraph span nested directly in its node span of the same name is the same agent.
func isLangGraphAgentNode(ix *attrIndex, s *Span) bool {
	name := s.Pdata.Name()
	if langgraphInternal[name] || (s.parent != nil && s.parent.Pdata.Name() == name) {
		return false
	}
	node := ix.attr(s, fkLangGraphNode)
	if node == "" {
		if raw := ix.attr(s, fkMetadata); raw != "" && mayDecodeTo(raw, name) {
			node = metadataNode(raw)
		}
	}
	return node == name
}

// metadataNode is the langgraph_node of a span's metadata ("" when it does not decode).
// (Its own function: the decoded struct escapes, and is allocated only when decoding.)
func metadataNode(raw string) string {
	var meta struct {
		Node string `json:"langgraph_node"`
	}
	if json.Unmarshal(bytesOf(raw), &meta) != nil {
		return ""
	}
	return meta.Node
}

// mayDecodeTo is false when no string of the JSON text raw can decode to name (a non-empty
// name): raw has no escapes and does not contain it, and name has no U+FFFD (what decoding
// makes of invalid UTF-8). It saves decoding the metadata of every other span.
func mayDecodeTo(raw, name string) bool {
	return name == "" || strings.Contains(raw, name) || strings.IndexByte(raw, '\\') >= 0 ||
		strings.ContainsRune(name, utf8.RuneError)
}
