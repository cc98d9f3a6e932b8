// Google ADK helpers shared by the ADK scenarios: a BaseLlm that plays a fixed script, and
// one ephemeral run of an agent.

import { BaseLlm, InMemoryRunner } from '@google/adk';

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

/**
 * Runs agent once on question in an InMemoryRunner of appName (user e2e-user) and returns
 * the last text any event carried and the author of every event, in order. An ADK error
 * event fails the run.
 */
export async function runEphemeral(agent, appName, question) {
  const runner = new InMemoryRunner({ agent, appName });
  let answer = '';
  const authors = [];
  for await (const event of runner.runEphemeral({
    userId: 'e2e-user',
    newMessage: { role: 'user', parts: [{ text: question }] },
  })) {
    if (event.errorMessage) {
      throw new Error(`ADK event error ${event.errorCode}: ${event.errorMessage}`);
    }
    authors.push(event.author);
    const text = (event.content?.parts ?? []).map((p) => p.text ?? '').join('');
    if (text) {
      answer = text;
    }
  }
  return { answer, authors };
}
