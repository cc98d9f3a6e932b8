// Mastra helpers: a scripted stub model (an AI SDK LanguageModelV2 object, the model
// interface Mastra 0.24 drives) and the Mastra observability config that exports Mastra's
// own spans through the scenario's recording exporter.

import { OtelExporter } from '@mastra/otel-exporter';

import { turnPlayer } from './turns.mjs';

/**
 * A LanguageModelV2 playing turns in order. A turn is { calls: [{ id, tool, input }] } (tool
 * calls in one response) or { text }, with usage: [in, out]. Fails loudly when called more
 * often than scripted or when a turn calls a tool the agent did not offer.
 */
export function scriptedModel(modelId, turns) {
  const script = turnPlayer(modelId, turns);
  const next = (options) => script.next(options);
  const usage = (turn) => ({ inputTokens: turn.usage[0], outputTokens: turn.usage[1], totalTokens: turn.usage[0] + turn.usage[1] });
  const finishReason = (turn) => (turn.calls ? 'tool-calls' : 'stop');
  return {
    specificationVersion: 'v2',
    provider: 'e2e-stub',
    modelId,
    supportedUrls: {},
    async doGenerate(options) {
      const turn = next(options);
      const content = turn.calls
        ? turn.calls.map((c) => ({ type: 'tool-call', toolCallId: c.id, toolName: c.tool, input: JSON.stringify(c.input) }))
        : [{ type: 'text', text: turn.text }];
      return { content, finishReason: finishReason(turn), usage: usage(turn), warnings: [] };
    },
    async doStream(options) {
      const turn = next(options);
      const parts = [{ type: 'stream-start', warnings: [] }, { type: 'response-metadata', id: `${modelId}-${script.calls()}`, modelId, timestamp: new Date(0) }];
      if (turn.calls) {
        for (const c of turn.calls) {
          parts.push({ type: 'tool-call', toolCallId: c.id, toolName: c.tool, input: JSON.stringify(c.input) });
        }
      } else {
        parts.push({ type: 'text-start', id: 't0' }, { type: 'text-delta', id: 't0', delta: turn.text }, { type: 'text-end', id: 't0' });
      }
      parts.push({ type: 'finish', finishReason: finishReason(turn), usage: usage(turn) });
      return {
        stream: new ReadableStream({
          start(controller) {
            for (const p of parts) controller.enqueue(p);
            controller.close();
          },
        }),
      };
    },
  };
}

/**
 * Mastra's exporter, writing to the scenario's recording exporter. Mastra hands each span
 * to it when the span ends, asynchronously; rootExported resolves once the root span (the
 * last to end) was handed over, after which shutdown() flushes everything.
 */
export class RecordingOtelExporter extends OtelExporter {
  constructor(exporter) {
    super({ provider: { custom: { endpoint: 'http://127.0.0.1/unused', protocol: 'http/protobuf' } }, exporter });
    this.rootExported = new Promise((resolve) => {
      this.resolveRoot = resolve;
    });
  }

  async exportSpan(span) {
    await super.exportSpan(span);
    if (!span.parentSpanId) {
      this.resolveRoot();
    }
  }
}
