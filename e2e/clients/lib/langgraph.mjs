// LangChain stub chat model shared by the LangGraph scenarios (instrumented by
// OpenInference): a BaseChatModel that plays a fixed script.

import { BaseChatModel } from '@langchain/core/language_models/chat_models';
import { AIMessage } from '@langchain/core/messages';
import { convertToOpenAITool } from '@langchain/core/utils/function_calling';

/**
 * A chat model playing a fixed script: each call returns the next AIMessage (tool calls or
 * text) with fixed token usage; bindTools records the offered tools as call options, so
 * the instrumentation sees them like a real provider's.
 */
export class ScriptedChatModel extends BaseChatModel {
  constructor(name, turns) {
    super({});
    this.modelName = name;
    this.turns = turns;
    this.calls = 0;
  }

  _llmType() {
    return 'e2e-stub';
  }

  invocationParams(options) {
    return { model: this.modelName, tools: options?.tools };
  }

  bindTools(tools) {
    return this.withConfig({ tools: tools.map((t) => convertToOpenAITool(t)) });
  }

  async _generate(_messages, options) {
    const turn = this.turns[this.calls];
    this.calls++;
    if (!turn) {
      throw new Error(`${this.modelName}: called ${this.calls} times, only ${this.turns.length} turns scripted`);
    }
    const offered = (options?.tools ?? []).map((t) => t.function?.name);
    for (const c of turn.calls ?? []) {
      if (!offered.includes(c.name)) {
        throw new Error(`${this.modelName}: turn ${this.calls} calls ${c.name}, but only ${offered.join(', ')} were offered`);
      }
    }
    const usage = { input_tokens: turn.usage[0], output_tokens: turn.usage[1], total_tokens: turn.usage[0] + turn.usage[1] };
    const message = new AIMessage({
      content: turn.text ?? '',
      tool_calls: (turn.calls ?? []).map((c) => ({ id: c.id, name: c.name, args: c.args, type: 'tool_call' })),
      usage_metadata: usage,
      response_metadata: { model_name: this.modelName },
    });
    return {
      generations: [{ text: turn.text ?? '', message }],
      llmOutput: { tokenUsage: { promptTokens: usage.input_tokens, completionTokens: usage.output_tokens, totalTokens: usage.total_tokens } },
    };
  }
}
