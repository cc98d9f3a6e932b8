// Google ADK stub model shared by the ADK scenarios: a BaseLlm that plays a fixed script.

import { BaseLlm } from '@google/adk';

/**
 * A model that plays a fixed script: each call returns the next turn (function calls or
 * text) with fixed token usage. It fails loudly when the agent asks for more turns than
 * scripted, or when a turn's expected function response is missing from the request.
 */
export class ScriptedLlm extends BaseLlm {
  constructor(model, turns) {
    super({ model });
    this.turns = turns;
    this.calls = 0;
  }

  async *generateContentAsync(llmRequest) {
    const turn = this.turns[this.calls];
    this.calls++;
    if (!turn) {
      throw new Error(`${this.model}: called ${this.calls} times, only ${this.turns.length} turns scripted`);
    }
    if (turn.after) {
      const seen = (llmRequest.contents ?? []).some((c) => (c.parts ?? []).some((p) => p.functionResponse?.id === turn.after));
      if (!seen) {
        throw new Error(`${this.model}: turn ${this.calls} expects the response to call ${turn.after} in the request`);
      }
    }
    yield {
      content: { role: 'model', parts: turn.parts },
      usageMetadata: {
        promptTokenCount: turn.usage[0],
        candidatesTokenCount: turn.usage[1],
        totalTokenCount: turn.usage[0] + turn.usage[1],
      },
      finishReason: 'STOP',
      turnComplete: true,
    };
  }

  async connect() {
    throw new Error(`${this.model}: live connections are not scripted`);
  }
}

export const call = (id, name, args) => ({ functionCall: { id, name, args } });
