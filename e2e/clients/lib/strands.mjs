// Strands helpers shared by the swarm scenarios: a scripted stub model (the AI SDK's
// MockLanguageModelV3 behind Strands' VercelModel adapter) that streams one scripted turn per
// call and fails loudly when the agent asks for more turns than scripted or did not offer
// the tool a turn calls.

import { VercelModel } from '@strands-agents/sdk/models/vercel';
import { MockLanguageModelV3, convertArrayToReadableStream } from 'ai/test';

import { turnPlayer } from './turns.mjs';

/** How a Strands swarm node answers or hands off: its structured-output tool. */
export const HANDOFF_TOOL = 'strands_structured_output';

/**
 * A stub model playing turns in order. A turn is { tool, id, input, usage: [in, out] }: one
 * tool call per model response, with fixed token usage.
 */
export function scriptedModel(modelId, turns) {
  const script = turnPlayer(modelId, turns);
  const mock = new MockLanguageModelV3({
    provider: 'e2e-stub',
    modelId,
    doStream: async (options) => {
      const turn = script.next(options);
      return {
        stream: convertArrayToReadableStream([
          { type: 'stream-start', warnings: [] },
          { type: 'tool-call', toolCallId: turn.id, toolName: turn.tool, input: JSON.stringify(turn.input) },
          {
            type: 'finish',
            finishReason: { unified: 'tool-calls', raw: 'tool_use' },
            usage: {
              inputTokens: { total: turn.usage[0], noCache: turn.usage[0], cacheRead: undefined, cacheWrite: undefined },
              outputTokens: { total: turn.usage[1], text: turn.usage[1], reasoning: undefined },
            },
          },
        ]),
      };
    },
  });
  return new VercelModel({ provider: mock });
}
