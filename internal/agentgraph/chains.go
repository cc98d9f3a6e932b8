package agentgraph

// A fallback chain is an ordered list of places to look for one normalized field; the first
// place that holds a usable value wins and is recorded as the value's source. A place is
//
//	KEY                   a span attribute
//	event:NAME:KEY        attribute KEY of the first span event called NAME
//	llm:PLACE             PLACE (attribute or event form) on the agent's first LLM child
//	                      (its last LLM child for output chains)
//
// Values may be strings, JSON strings, or structured OTLP values (maps and arrays are
// rendered as JSON). Empty placeholders ("", "{}", "[]", "null") count as absent.
type Chain []string

// Chains holds the fallback chain of every normalized field. DefaultChains covers the
// dialects documented in handoffprocessor/README.md; every chain can be overridden in config.
type Chains struct {
	AgentName    Chain `mapstructure:"agent_name"`
	ToolName     Chain `mapstructure:"tool_name"`
	ToolArgs     Chain `mapstructure:"tool_args"`
	ToolResult   Chain `mapstructure:"tool_result"`
	InputTokens  Chain `mapstructure:"input_tokens"`
	OutputTokens Chain `mapstructure:"output_tokens"`
	Input        Chain `mapstructure:"input"`
	Output       Chain `mapstructure:"output"`
	AllowedTools Chain `mapstructure:"allowed_tools"`
	HandoffFrom  Chain `mapstructure:"handoff_source"`
	HandoffTo    Chain `mapstructure:"handoff_target"`
	ErrorType    Chain `mapstructure:"error_type"`
}

// DefaultChains returns the default fallback chains (DIALECTS.md section 3).
func DefaultChains() Chains {
	return Chains{
		AgentName: Chain{
			"gen_ai.agent.name", "agent.name", "graph.node.name", "graph.node.id",
			"gen_ai.agent.graph.node_name", "agent_name", "gen_ai.agent.id",
		},
		ToolName: Chain{"gen_ai.tool.name", "tool.name", "ai.toolCall.name", "gen_ai.serialized.name"},
		ToolArgs: Chain{
			"gen_ai.tool.call.arguments", "input.value", "ai.toolCall.args",
			"ai.toolCall.input", "gcp.vertex.agent.tool_call_args", "traceloop.entity.input",
			"tool_arguments", "event:gen_ai.tool.message:content",
		},
		ToolResult: Chain{
			"gen_ai.tool.call.result", "output.value", "ai.toolCall.result",
			"gcp.vertex.agent.tool_response", "traceloop.entity.output", "tool_response",
			"event:gen_ai.choice:message",
		},
		InputTokens: Chain{
			"gen_ai.usage.input_tokens", "gen_ai.usage.prompt_tokens",
			"llm.token_count.prompt", "ai.usage.inputTokens", "ai.usage.promptTokens",
			"llm.usage.prompt_tokens",
		},
		OutputTokens: Chain{
			"gen_ai.usage.output_tokens", "gen_ai.usage.completion_tokens",
			"llm.token_count.completion", "ai.usage.outputTokens", "ai.usage.completionTokens",
			"llm.usage.completion_tokens",
		},
		Input: Chain{
			"gen_ai.input.messages",
			"event:gen_ai.client.inference.operation.details:gen_ai.input.messages",
			"input.value", "gen_ai.prompt", "traceloop.entity.input", "gen_ai.agent.input",
			"event:gen_ai.user.message:content",
			"llm:gen_ai.input.messages", "llm:event:gen_ai.user.message:content",
			"llm:gcp.vertex.agent.llm_request", "llm:input.value",
		},
		Output: Chain{
			"gen_ai.output.messages",
			"event:gen_ai.client.inference.operation.details:gen_ai.output.messages",
			"output.value", "gen_ai.completion", "traceloop.entity.output",
			"event:gen_ai.choice:message",
			"llm:gen_ai.output.messages", "llm:event:gen_ai.choice:message",
			"llm:gcp.vertex.agent.llm_response", "llm:output.value",
		},
		AllowedTools: Chain{
			"gen_ai.tool.definitions", "gen_ai.agent.tools",
			"llm:gen_ai.tool.definitions",
		},
		HandoffFrom: Chain{"handoff.source", "gen_ai.handoff.from_agent", "from_agent"},
		HandoffTo:   Chain{"handoff.target", "gen_ai.handoff.to_agent", "to_agent"},
		ErrorType:   Chain{"error.type", "event:exception:exception.type"},
	}
}

// withDefaults fills every empty chain from DefaultChains, so a config that overrides one
// chain keeps the defaults of the others.
func (c Chains) withDefaults() Chains {
	d := DefaultChains()
	fill := func(dst *Chain, def Chain) {
		if len(*dst) == 0 {
			*dst = def
		}
	}
	fill(&c.AgentName, d.AgentName)
	fill(&c.ToolName, d.ToolName)
	fill(&c.ToolArgs, d.ToolArgs)
	fill(&c.ToolResult, d.ToolResult)
	fill(&c.InputTokens, d.InputTokens)
	fill(&c.OutputTokens, d.OutputTokens)
	fill(&c.Input, d.Input)
	fill(&c.Output, d.Output)
	fill(&c.AllowedTools, d.AllowedTools)
	fill(&c.HandoffFrom, d.HandoffFrom)
	fill(&c.HandoffTo, d.HandoffTo)
	fill(&c.ErrorType, d.ErrorType)
	return c
}
