package agentgraph

import (
	"regexp"
	"strings"

	"go.opentelemetry.io/collector/pdata/pcommon"
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
	// Orchestration wrappers group agents but never delegate: Strands' swarm and graph
	// (invoke_swarm / invoke_graph, and execute_node per node), OTel's invoke_workflow.
	"invoke_agent": RoleAgent, "invoke_swarm": RoleWorkflow, "invoke_graph": RoleWorkflow,
	"execute_node": RoleWorkflow, "create_agent": RoleOther, "invoke_workflow": RoleWorkflow,
	"execute_tool": RoleTool,
	"chat":         RoleLLM, "text_completion": RoleLLM, "generate_content": RoleLLM,
	"completion": RoleLLM, "generate": RoleLLM,
	"handoff": RoleHandoff, "agent_handoff": RoleHandoff,
}

var kindRoles = map[string]Role{
	"AGENT": RoleAgent, "TOOL": RoleTool, "LLM": RoleLLM, "CHAIN": RoleWorkflow, "HANDOFF": RoleHandoff,
}

// Framework-private span-type keys (DIALECTS.md 3.1 rules 5-8), checked in this order.
var typeKeys = []struct {
	key   string
	roles map[string]Role
}{
	{"traceloop.span.kind", map[string]Role{
		"agent": RoleAgent, "tool": RoleTool, "workflow": RoleWorkflow,
		"task": RoleOther, "handoff": RoleHandoff,
	}},
	{"mastra.span.type", map[string]Role{
		"agent_run": RoleAgent, "tool_call": RoleTool, "mcp_tool_call": RoleTool,
		"model_generation": RoleLLM, "model_step": RoleOther, "model_chunk": RoleOther, "workflow_run": RoleWorkflow,
	}},
	// OpenAI Agents SDK span types, as bridged to OTel (openai.agents.span.type = span_data.type).
	{"openai.agents.span.type", map[string]Role{
		"agent": RoleAgent, "function": RoleTool, "generation": RoleLLM,
		"response": RoleLLM, "handoff": RoleHandoff, "guardrail": RoleOther, "custom": RoleOther,
	}},
	{"ag2.span.type", map[string]Role{
		"agent": RoleAgent, "tool": RoleTool, "llm": RoleLLM, "handoff": RoleHandoff,
		"conversation": RoleWorkflow,
	}},
	{"autogen.span_kind", map[string]Role{"agent": RoleAgent, "tool": RoleTool, "llm": RoleLLM, "handoff": RoleHandoff}},
	{"langsmith.span.kind", map[string]Role{"llm": RoleLLM, "tool": RoleTool, "chain": RoleOther}},
	{"langfuse.observation.type", map[string]Role{"agent": RoleAgent, "tool": RoleTool, "generation": RoleLLM}},
}

// An OpenInference OpenAI-Agents handoff: a TOOL span named "handoff to <agent>".
var oiHandoff = regexp.MustCompile(`^handoff to (.+)$`)

// The attribute keys the role rules read, as indexes into roleKeyNames: Build's one walk
// over a span's attributes (attrIndex.add) records them in a roleAttrs instead of a scan
// per key, and the rules then test indexes, not keys.
const (
	rkHandoffTo = iota
	rkHandoffFrom
	rkAutogenTarget
	rkGotoNode
	rkTransferTarget
	rkAgentHandoffTarget
	rkOperation
	rkOpenInferenceKind
	rkGenAIKind
	rkFIKind
	rkAgentName
	rkToolName
	rkToolCallID
	rkOIToolName
	rkVercelToolName
	rkRequestModel
	rkResponseModel
	rkModelName
	rkTypeKeys // typeKeys[i] is at rkTypeKeys+i
)

var roleKeyNames = func() []string {
	names := []string{
		rkHandoffTo: "gen_ai.handoff.to_agent", rkHandoffFrom: "gen_ai.handoff.from_agent",
		rkAutogenTarget: "autogen.handoff.target", rkGotoNode: "langgraph.command.goto_node",
		rkTransferTarget: "gen_ai.transfer.target.name", rkAgentHandoffTarget: "gen_ai.agent.handoff.target.name",
		rkOperation:         "gen_ai.operation.name",
		rkOpenInferenceKind: "openinference.span.kind", rkGenAIKind: "gen_ai.span.kind", rkFIKind: "fi.span.kind",
		rkAgentName: "agent_name",
		rkToolName:  "gen_ai.tool.name", rkToolCallID: "gen_ai.tool.call.id", rkOIToolName: "tool.name",
		rkVercelToolName: "ai.toolCall.name",
		rkRequestModel:   "gen_ai.request.model", rkResponseModel: "gen_ai.response.model", rkModelName: "llm.model_name",
	}
	for _, t := range typeKeys {
		names = append(names, t.key)
	}
	if len(names) > len(roleAttrs{}.vals) {
		panic("agentgraph: more role keys than roleAttrs holds")
	}
	return names
}()

var _ = func() bool {
	seen := map[string]bool{}
	for _, k := range roleKeyNames {
		if seen[k] || k == "" {
			panic("agentgraph: role key " + k + " repeated or empty")
		}
		seen[k] = true
	}
	return true
}()

// roleAttrs are the values of the role keys a span holds (the last of duplicate keys),
// recorded by attrIndex.add in its walk over the span's attributes.
type roleAttrs struct {
	vals  [32]pcommon.Value
	found uint32
}

// set records the value of role key i.
func (ra *roleAttrs) set(i int, v pcommon.Value) { ra.vals[i], ra.found = v, ra.found|1<<i }

func (ra *roleAttrs) has(i int) bool { return ra.found&(1<<i) != 0 }

func (ra *roleAttrs) str(i int) string {
	if ra.found&(1<<i) != 0 {
		return asText(ra.vals[i])
	}
	return ""
}

// firstOf is the first of the keys (indexes) the span has, and false when it has none.
func (ra *roleAttrs) firstOf(keys ...int) (string, bool) {
	for _, i := range keys {
		if ra.has(i) {
			return roleKeyNames[i], true
		}
	}
	return "", false
}

// classifyRole decides a span's role and records which key decided it, given the values
// of the role keys it holds (ra). Span-type keys of one framework are trusted over generic
// hints; see DIALECTS.md section 3.1.
func classifyRole(s ptrace.Span, scopeName string, ra *roleAttrs) (Role, string) {
	if scopeName == ScopeName {
		return RoleHandoff, "scope"
	}
	if key, ok := ra.firstOf(rkHandoffTo, rkHandoffFrom, rkAutogenTarget, rkGotoNode); ok {
		return RoleHandoff, key
	}
	if ra.has(rkTransferTarget) {
		return RoleTool, roleKeyNames[rkTransferTarget]
	}
	op := ra.str(rkOperation)
	// The draft GenAI handoff attributes: on a span of their own (not an agent run nor a
	// tool call, which read them as evidence) they make it an explicit handoff span.
	if ra.has(rkAgentHandoffTarget) && op != "invoke_agent" && op != "execute_tool" {
		return RoleHandoff, roleKeyNames[rkAgentHandoffTarget]
	}
	if op != "" {
		if r, ok := operationRoles[op]; ok {
			return r, roleKeyNames[rkOperation]
		}
	}
	for i, t := range typeKeys {
		if v := ra.str(rkTypeKeys + i); v != "" {
			if r, ok := t.roles[v]; ok {
				return r, t.key
			}
		}
	}
	for _, i := range []int{rkOpenInferenceKind, rkGenAIKind, rkFIKind} {
		if k := ra.str(i); k != "" {
			if r, ok := kindRoles[strings.ToUpper(k)]; ok {
				if r == RoleTool && strings.HasPrefix(s.Name(), "handoff to ") {
					return RoleHandoff, "span.name"
				}
				return r, roleKeyNames[i]
			}
		}
	}
	if scopeName == "ai" { // Vercel AI SDK (R3: ai.* keys are trusted under its scope only)
		if r, ok := vercelRole(s); ok {
			return r, "ai.operationId"
		}
	}
	if ra.has(rkAgentName) && strings.HasSuffix(s.Name(), " run") {
		return RoleAgent, roleKeyNames[rkAgentName]
	}
	if key, ok := ra.firstOf(rkToolName, rkToolCallID, rkOIToolName, rkVercelToolName); ok {
		return RoleTool, key
	}
	if r, ok := roleFromName(s.Name()); ok {
		return r, "span.name"
	}
	if key, ok := ra.firstOf(rkRequestModel, rkResponseModel, rkModelName); ok {
		return RoleLLM, key
	}
	return RoleOther, ""
}

// roleFromName applies the span-name patterns (DIALECTS.md 3.1 rule 11) with plain string
// tests: they run on every span no attribute classified.
func roleFromName(name string) (Role, bool) {
	switch {
	case hasWordPrefix(name, "invoke_agent"), strings.HasPrefix(name, "agent_run ["),
		strings.HasPrefix(name, "Agent run: "), hasWordPrefix(name, "agents.agent"), strings.HasSuffix(name, ".agent"):
		return RoleAgent, true
	case hasWordPrefix(name, "execute_tool"), strings.HasPrefix(name, "running tool"),
		strings.HasPrefix(name, "Function: "), strings.HasSuffix(name, ".tool"):
		return RoleTool, true
	case name == "call_llm", hasWordPrefix(name, "chat"):
		return RoleLLM, true
	}
	return "", false
}

// hasWordPrefix is the regexp ^prefix\b: the prefix, then the end or a non-word byte.
func hasWordPrefix(name, prefix string) bool {
	if !strings.HasPrefix(name, prefix) {
		return false
	}
	if len(name) == len(prefix) {
		return true
	}
	c := name[len(prefix)]
	return !(c == '_' || c >= '0' && c <= '9' || c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z')
}

// configuredRole applies the role chain of the config, if any.
func configuredRole(s ptrace.Span, chain Chain) (Role, string) {
	for _, key := range chain {
		switch strings.ToLower(attrStr(s, key)) {
		case "agent":
			return RoleAgent, key
		case "tool":
			return RoleTool, key
		case "llm":
			return RoleLLM, key
		case "handoff":
			return RoleHandoff, key
		case "workflow", "chain":
			return RoleWorkflow, key
		case "other":
			return RoleOther, key
		}
	}
	return "", ""
}

// vercelRole maps the AI SDK's operation ids. The SDK has no agent concept: a top-level
// generate/stream call given a telemetry functionId is taken as an agent of that name
// (the convention our scenarios and most apps use); without one it is a workflow span.
func vercelRole(s ptrace.Span) (Role, bool) {
	op := attrStr(s, "ai.operationId")
	switch {
	case op == "ai.toolCall":
		return RoleTool, true
	case strings.HasSuffix(op, ".doGenerate") || strings.HasSuffix(op, ".doStream"):
		return RoleLLM, true
	case op == "ai.generateText" || op == "ai.streamText" || op == "ai.generateObject" || op == "ai.streamObject":
		if attrStr(s, "ai.telemetry.functionId") != "" {
			return RoleAgent, true
		}
		return RoleWorkflow, true
	case op == "ai.embed" || op == "ai.embedMany":
		return RoleOther, true
	}
	return "", false
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

// wrapperName names an orchestration wrapper. Strands names every swarm and graph "swarm"
// / "graph" in gen_ai.agent.name and puts the configured id in gen_ai.agent.id (a node's
// id is its agent's name): the id is what tells two apart, so it wins there.
func wrapperName(s ptrace.Span) Value {
	switch attrStr(s, "gen_ai.operation.name") {
	case "invoke_swarm", "invoke_graph", "execute_node":
		for _, key := range []string{"gen_ai.agent.id", "gen_ai.agent.name"} {
			if v := attrStr(s, key); v != "" {
				return Value{Text: v, Source: key}
			}
		}
	case "invoke_workflow":
		if v := attrStr(s, "gen_ai.workflow.name"); v != "" {
			return Value{Text: v, Source: "gen_ai.workflow.name"}
		}
	}
	return Value{Text: s.Name(), Source: "span.name.verbatim"}
}

// namedBy resolves an agent or tool name, given what its chain resolved to (v) and the
// span's name: the chain's value first, then span-name patterns, then the name verbatim.
func namedBy(v Value, name string, patterns []*regexp.Regexp) Value {
	if v.Found() {
		return v
	}
	for _, re := range patterns {
		if m := re.FindStringSubmatch(name); m != nil {
			return Value{Text: strings.TrimSpace(m[1]), Source: "span.name"}
		}
	}
	return Value{Text: name, Source: "span.name.verbatim"}
}
