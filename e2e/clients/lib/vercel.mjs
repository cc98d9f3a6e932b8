// Vercel AI SDK helpers: a scripted stub model (ai/test's MockLanguageModelV3) and the
// telemetry settings that make generateText emit its ai.* spans, named by functionId.

import { MockLanguageModelV3 } from 'ai/test';

import { turnPlayer } from './turns.mjs';

/**
 * A model playing turns in order. A turn is { calls: [{ id, tool, input }] } (tool calls of
 * one response) or { text }, with usage: [in, out]. Fails loudly when called more often
 * than scripted or when a turn calls a tool that was not offered.
 */
export function scriptedModel(modelId, turns) {
  const script = turnPlayer(modelId, turns);
  return new MockLanguageModelV3({
    provider: 'e2e-stub',
    modelId,
    doGenerate: async (options) => {
      const turn = script.next(options);
      const content = turn.calls
        ? turn.calls.map((c) => ({ type: 'tool-call', toolCallId: c.id, toolName: c.tool, input: JSON.stringify(c.input) }))
        : [{ type: 'text', text: turn.text }];
      return {
        content,
        finishReason: turn.calls ? { unified: 'tool-calls', raw: 'tool_use' } : { unified: 'stop', raw: 'stop' },
        usage: {
          inputTokens: { total: turn.usage[0], noCache: turn.usage[0], cacheRead: 0, cacheWrite: 0 },
          outputTokens: { total: turn.usage[1], text: turn.usage[1], reasoning: 0 },
        },
        warnings: [],
      };
    },
  });
}

/** experimental_telemetry for one agent: its name is the functionId. */
export function agentTelemetry(agentName, tracer) {
  return { isEnabled: true, functionId: agentName, recordInputs: true, recordOutputs: true, ...(tracer ? { tracer } : {}) };
}

/**
 * A prepareStep hook that starts each step after the first at least 2 ms (wall clock)
 * after the previous one returned. OTel JS records span start times from Date.now()
 * (millisecond resolution) but end times with sub-millisecond precision, so a model call
 * that starts in the same millisecond its tool call ended would appear to start before
 * that call ended, and "what the agent did after the tool returned" would depend on timing.
 */
export async function stepsInLaterMilliseconds({ stepNumber }) {
  if (stepNumber > 0) {
    const until = Date.now() + 2;
    while (Date.now() < until) {
      await new Promise((resolve) => setImmediate(resolve));
    }
  }
  return undefined;
}
