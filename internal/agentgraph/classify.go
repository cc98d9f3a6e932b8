package agentgraph

import (
	"regexp"
	"strings"

	"go.opentelemetry.io/collector/pdata/ptrace"
)

// Role is what a span is in the agent model.
type Role string

const (
	RoleAgent    Role = "agent"
	RoleTool     Role = "tool"
	RoleLLM      Role = "llm"
	RoleHandoff  Role = "handoff"
	RoleWorkflow Role = "workflow"
	RoleOther    Role = "other"
)

// ScopeName is the instrumentation scope of the HANDOFF spans this project synthesizes.
const ScopeName = "github.com/otelcol-handoff/otelcol-handoff/handoffprocessor"

var operationRoles = map[string]Role{
	"invoke_agent": RoleAgent, "invoke_swarm": RoleAgent, "invoke_graph": RoleAgent,
	"create_agent": RoleOther, "invoke_workflow": RoleWorkflow,
	"execute_tool": RoleTool,
	"chat":         RoleLLM, "text_completion": RoleLLM, "generate_content": RoleLLM,
	"completion": RoleLLM, "generate": RoleLLM,
	"handoff": RoleHandoff, "agent_handoff": RoleHandoff,
}

var kindRoles = map[string]Role{
	"AGENT": RoleAgent, "TOOL": RoleTool, "LLM": RoleLLM, "CHAIN": RoleWorkflow, "HANDOFF": RoleHandoff,
}

var traceloopRoles = map[string]Role{
	"agent": RoleAgent, "tool": RoleTool, "workflow": RoleWorkflow, "task": RoleOther, "handoff": RoleHandoff,
}

type namePattern struct {
	re   *regexp.Regexp
	role Role
}

// Span-name patterns, the last resort before model attributes (DIALECTS.md 3.1 rule 11).
var namePatterns = []namePattern{
	{regexp.MustCompile(`^invoke_agent\b`), RoleAgent},
	{regexp.MustCompile(`^agent_run \[`), RoleAgent},
	{regexp.MustCompile(`^execute_tool\b`), RoleTool},
	{regexp.MustCompile(`^running tool`), RoleTool},
	{regexp.MustCompile(`^call_llm$`), RoleLLM},
	{regexp.MustCompile(`^chat\b`), RoleLLM},
}

// classifyRole decides a span's role and records which key decided it.
func classifyRole(s ptrace.Span, scopeName string) (Role, string) {
	if scopeName == ScopeName {
		return RoleHandoff, "scope"
	}
	attrs := s.Attributes()
	for _, key := range []string{"gen_ai.handoff.to_agent", "gen_ai.handoff.from_agent"} {
		if _, ok := attrs.Get(key); ok {
			return RoleHandoff, key
		}
	}
	if op := attrStr(s, "gen_ai.operation.name"); op != "" {
		if r, ok := operationRoles[op]; ok {
			return r, "gen_ai.operation.name"
		}
	}
	for _, key := range []string{"openinference.span.kind", "gen_ai.span.kind", "fi.span.kind"} {
		if k := attrStr(s, key); k != "" {
			if r, ok := kindRoles[strings.ToUpper(k)]; ok {
				return r, key
			}
		}
	}
	if k := attrStr(s, "traceloop.span.kind"); k != "" {
		if r, ok := traceloopRoles[k]; ok {
			return r, "traceloop.span.kind"
		}
	}
	for _, key := range []string{"gen_ai.tool.name", "gen_ai.tool.call.id", "tool.name", "ai.toolCall.name"} {
		if _, ok := attrs.Get(key); ok {
			return RoleTool, key
		}
	}
	for _, p := range namePatterns {
		if p.re.MatchString(s.Name()) {
			return p.role, "span.name"
		}
	}
	for _, key := range []string{"gen_ai.request.model", "gen_ai.response.model", "llm.model_name"} {
		if _, ok := attrs.Get(key); ok {
			return RoleLLM, key
		}
	}
	return RoleOther, ""
}

var (
	agentNameFromSpan = []*regexp.Regexp{
		regexp.MustCompile(`^invoke_agent (.+)$`),
		regexp.MustCompile(`^agent_run \[(.+)\]$`),
	}
	toolNameFromSpan = []*regexp.Regexp{
		regexp.MustCompile(`^execute_tool (\S+)`),
		regexp.MustCompile(`^running tool: (.+)$`),
	}
)

// nameFrom resolves an agent or tool name: the chain first, then span-name patterns, then
// the span name verbatim.
func nameFrom(s ptrace.Span, chain Chain, patterns []*regexp.Regexp) Value {
	if v := resolve(s, chain, nil); v.Found() {
		return v
	}
	for _, re := range patterns {
		if m := re.FindStringSubmatch(s.Name()); m != nil {
			return Value{Text: strings.TrimSpace(m[1]), Source: "span.name"}
		}
	}
	return Value{Text: s.Name(), Source: "span.name.verbatim"}
}
