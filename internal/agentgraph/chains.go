package agentgraph

import (
	"errors"
	"fmt"
	"strings"
)

// A fallback chain is an ordered list of places to look for one normalized field; the first
// place that holds a usable value wins and is recorded as the value's source. A place is
//
//	KEY                   a span attribute
//	event:NAME:KEY        attribute KEY of the first span event called NAME
//	llm:PLACE             PLACE (attribute or event form) on the agent's first LLM child
//	                      (its last LLM child for output chains)
//
// Token chains also take KEY#FIELD, a number inside a JSON object attribute. KEY.* gathers
// flattened indexed keys (KEY.0.message.content, ...) into one JSON object.
// Values may be strings, JSON strings, or structured OTLP values (maps and arrays are
// rendered as JSON). Empty placeholders ("", "{}", "[]", "null") count as absent.
type Chain []string

// Chains holds the fallback chain of every normalized field. DefaultChains covers the
// dialects documented in handoffprocessor/README.md; every chain can be overridden in config.
type Chains struct {
	// Role lists keys checked before the built-in role rules; a value of agent, tool, llm,
	// handoff, workflow (or chain) or other decides the role. Empty by default.
	Role         Chain `mapstructure:"role"`
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
	// HandoffReason is read on explicit handoff spans; a transfer call's reason is its
	// arguments (tool_args).
	HandoffReason Chain `mapstructure:"handoff_reason"`
	ErrorType     Chain `mapstructure:"error_type"`
	// The cost chains (see cost.go): the cost a span reports (USD), the response and request
	// model, the provider, and the cached input tokens read and written.
	Cost             Chain `mapstructure:"cost"`
	ResponseModel    Chain `mapstructure:"response_model"`
	RequestModel     Chain `mapstructure:"request_model"`
	Provider         Chain `mapstructure:"provider"`
	CacheReadTokens  Chain `mapstructure:"cache_read_tokens"`
	CacheWriteTokens Chain `mapstructure:"cache_write_tokens"`
}

// DefaultChains returns the default fallback chains (DIALECTS.md section 3).
func DefaultChains() Chains {
	return defaultChains.clone()
}

// defaultChains is built once: Build fills empty chains from it on every trace, so it must
// not allocate there. Never modified; DefaultChains hands out copies.
var defaultChains = Chains{
	AgentName: Chain{
		"gen_ai.agent.name", "agent.name", "graph.node.name", "graph.node.id",
		"gen_ai.agent.graph.node_name", "traceloop.entity.name", "agent_name",
		"openai.agents.span_data.name", "ai.telemetry.functionId", "agent.id", "gen_ai.agent.id",
	},
	ToolName: Chain{
		"gen_ai.tool.name", "tool.name", "ai.toolCall.name", "gen_ai.serialized.name",
		"traceloop.entity.name", "openai.agents.span_data.name",
	},
	ToolArgs: Chain{
		"gen_ai.tool.call.arguments", "input.value", "ai.toolCall.args",
		"ai.toolCall.input", "gcp.vertex.agent.tool_call_args", "traceloop.entity.input",
		"tool_arguments", "gen_ai.tool.input", "openai.agents.span_data.input",
		"event:gen_ai.tool.message:content", "gen_ai.prompt", "langfuse.observation.input",
	},
	ToolResult: Chain{
		"gen_ai.tool.call.result", "output.value", "ai.toolCall.result",
		"gcp.vertex.agent.tool_response", "traceloop.entity.output", "tool_response",
		"gen_ai.tool.output", "openai.agents.span_data.output",
		"event:gen_ai.choice:message", "gen_ai.completion", "langfuse.observation.output",
	},
	InputTokens: Chain{
		"gen_ai.usage.input_tokens", "gen_ai.usage.prompt_tokens",
		"llm.token_count.prompt", "ai.usage.inputTokens", "ai.usage.promptTokens",
		"llm.usage.prompt_tokens", "langfuse.observation.usage_details#input",
	},
	OutputTokens: Chain{
		"gen_ai.usage.output_tokens", "gen_ai.usage.completion_tokens",
		"llm.token_count.completion", "ai.usage.outputTokens", "ai.usage.completionTokens",
		"llm.usage.completion_tokens", "langfuse.observation.usage_details#output",
	},
	Input: Chain{
		"gen_ai.input.messages",
		"event:gen_ai.client.inference.operation.details:gen_ai.input.messages",
		"input.value", "gen_ai.prompt", "traceloop.entity.input", "gen_ai.agent.input",
		"mastra.agent_run.input", "ai.prompt", "pydantic_ai.all_messages", "event:gen_ai.user.message:content",
		"event:gen_ai.content.prompt:gen_ai.prompt",
		"llm:gen_ai.input.messages", "llm:event:gen_ai.user.message:content",
		"llm:gcp.vertex.agent.llm_request", "llm:input.value", "llm:llm.input_messages.*",
		"llm:openai.agents.span_data.input", "llm:ai.prompt.messages", "llm:gen_ai.prompt", "llm:gen_ai.prompt.*",
		"langfuse.observation.input",
	},
	Output: Chain{
		"gen_ai.output.messages",
		"event:gen_ai.client.inference.operation.details:gen_ai.output.messages",
		"output.value", "gen_ai.completion", "traceloop.entity.output",
		"mastra.agent_run.output", "final_result", "ai.response.text", "ai.response.object",
		"event:gen_ai.choice:message", "event:gen_ai.content.completion:gen_ai.completion",
		"llm:gen_ai.output.messages", "llm:event:gen_ai.choice:message",
		"llm:gcp.vertex.agent.llm_response", "llm:output.value", "llm:llm.output_messages.*",
		"llm:openai.agents.span_data.output", "llm:ai.response.text", "llm:gen_ai.completion", "llm:gen_ai.completion.*",
		"langfuse.observation.output",
	},
	AllowedTools: Chain{
		"gen_ai.tool.definitions", "gen_ai.agent.tools",
		"openai.agents.span_data.tools", "agent.tools",
		"llm:gen_ai.tool.definitions", "llm:ai.prompt.tools", "llm:gcp.vertex.agent.llm_request#config.tools",
		"llm:llm.tools.*",
	},
	HandoffFrom: Chain{
		"handoff.source", "gen_ai.handoff.from_agent",
		"openai.agents.span_data.from_agent", "autogen.handoff.source",
		"langgraph.command.source_node", "gen_ai.agent.handoff.source.name", "from_agent",
	},
	HandoffTo: Chain{
		"handoff.target", "gen_ai.handoff.to_agent",
		"openai.agents.span_data.to_agent", "autogen.handoff.target",
		"langgraph.command.goto_node", "gen_ai.agent.handoff.target.name", "to_agent",
	},
	HandoffReason: Chain{"handoff.reason", "gen_ai.handoff.reason", "autogen.handoff.content"},
	ErrorType:     Chain{"error.type", "event:exception:exception.type"},
	// A reported cost: the draft GenAI / Langfuse key, OpenInference, Pydantic AI (Logfire),
	// Langfuse's own cost details.
	Cost: Chain{
		"gen_ai.usage.cost", "llm.cost.total", "operation.cost",
		"langfuse.observation.cost_details#total",
	},
	ResponseModel: Chain{"gen_ai.response.model", "ai.response.model"},
	RequestModel:  Chain{"gen_ai.request.model", "llm.model_name", "ai.model.id", "model_name"},
	Provider: Chain{
		"gen_ai.provider.name", "gen_ai.system", "llm.provider", "llm.system",
		"ai.model.provider",
	},
	CacheReadTokens: Chain{
		"gen_ai.usage.cache_read.input_tokens", "gen_ai.usage.cache_read_input_tokens",
		"llm.token_count.prompt_details.cache_read", "ai.usage.cachedInputTokens",
	},
	CacheWriteTokens: Chain{
		"gen_ai.usage.cache_creation.input_tokens", "gen_ai.usage.cache_creation_input_tokens",
		"llm.token_count.prompt_details.cache_write",
	},
}

// clone copies every chain, so the copy can be changed freely.
func (c Chains) clone() Chains {
	cp := func(ch Chain) Chain { return append(Chain(nil), ch...) }
	return Chains{
		Role: cp(c.Role), AgentName: cp(c.AgentName), ToolName: cp(c.ToolName),
		ToolArgs: cp(c.ToolArgs), ToolResult: cp(c.ToolResult), InputTokens: cp(c.InputTokens),
		OutputTokens: cp(c.OutputTokens), Input: cp(c.Input), Output: cp(c.Output),
		AllowedTools: cp(c.AllowedTools), HandoffFrom: cp(c.HandoffFrom), HandoffTo: cp(c.HandoffTo),
		HandoffReason: cp(c.HandoffReason), ErrorType: cp(c.ErrorType), Cost: cp(c.Cost),
		ResponseModel: cp(c.ResponseModel), RequestModel: cp(c.RequestModel), Provider: cp(c.Provider),
		CacheReadTokens: cp(c.CacheReadTokens), CacheWriteTokens: cp(c.CacheWriteTokens),
	}
}

// withDefaults fills every empty chain from DefaultChains, so a config that overrides one
// chain keeps the defaults of the others.
func (c Chains) withDefaults() Chains {
	d := defaultChains
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
	fill(&c.HandoffReason, d.HandoffReason)
	fill(&c.ErrorType, d.ErrorType)
	fill(&c.Cost, d.Cost)
	fill(&c.ResponseModel, d.ResponseModel)
	fill(&c.RequestModel, d.RequestModel)
	fill(&c.Provider, d.Provider)
	fill(&c.CacheReadTokens, d.CacheReadTokens)
	fill(&c.CacheWriteTokens, d.CacheWriteTokens)
	return c
}

// Validate checks every place of every configured chain, naming the chain and the place
// (input[2]): a place that can never hold a value is a config mistake that would otherwise
// read as "not found" on every span. The collector's config validation calls it for the
// chains of the processor, the exporter and the connector.
func (c Chains) Validate() error {
	var errs []error
	for _, f := range c.fields() {
		kind := textPlaces
		switch f.key {
		case "role":
			kind = keyPlaces
		case "input_tokens", "output_tokens", "cache_read_tokens", "cache_write_tokens", "cost":
			kind = numberPlaces
		}
		for i, place := range f.chain {
			if err := checkPlace(place, kind); err != nil {
				errs = append(errs, fmt.Errorf("%s[%d]: %w", f.key, i, err))
			}
		}
	}
	return errors.Join(errs...)
}

// The place forms a chain reads (see Chain).
const (
	textPlaces   = iota // KEY, event:NAME:KEY, llm:PLACE, KEY#a.b, PREFIX.*
	numberPlaces        // KEY, KEY#FIELD (token and cost chains)
	keyPlaces           // KEY (role)
)

// forms says which forms a chain of a kind other than textPlaces takes.
var forms = [...]string{
	numberPlaces: "token and cost chains take KEY and KEY#FIELD only",
	keyPlaces:    "role takes attribute keys only",
}

func checkPlace(place string, kind int) error {
	if strings.TrimSpace(place) == "" {
		return errors.New("an empty place: name an attribute key")
	}
	rest := place
	if r, ok := strings.CutPrefix(place, "llm:"); ok {
		if kind != textPlaces {
			return fmt.Errorf("%q: %s", place, forms[kind])
		}
		if strings.TrimSpace(r) == "" {
			return fmt.Errorf("%q: llm: needs the place to read on the LLM child, e.g. llm:gen_ai.input.messages", place)
		}
		rest = r
	}
	if ev, ok := strings.CutPrefix(rest, "event:"); ok {
		if kind != textPlaces {
			return fmt.Errorf("%q: %s", place, forms[kind])
		}
		if name, key, ok := strings.Cut(ev, ":"); !ok || name == "" || key == "" {
			return fmt.Errorf("%q: an event place is event:NAME:KEY (attribute KEY of the first event NAME)", place)
		}
		return nil
	}
	if strings.HasSuffix(rest, ".*") && kind == textPlaces {
		if rest == ".*" {
			return fmt.Errorf("%q: a flattened place is PREFIX.* (keys PREFIX.0..., PREFIX.1...)", place)
		}
		return nil
	}
	if key, path, ok := strings.Cut(rest, "#"); ok {
		switch {
		case kind == keyPlaces:
			return fmt.Errorf("%q: %s", place, forms[kind])
		case key == "" || path == "":
			return fmt.Errorf("%q: a JSON place is KEY#FIELD (KEY#a.b in text chains): the attribute key, then the field", place)
		}
	}
	return nil
}
