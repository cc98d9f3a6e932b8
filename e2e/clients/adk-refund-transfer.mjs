// Google ADK scenario of a transfer whose payload is the sender's text: triage's model
// answers with text (the customer's request, card number included) and a
// transfer_to_agent call in the same response; refund_specialist issues the refund and
// answers. ADK records the text only in the LLM response, so the dispatch payload is the
// transfer's arguments plus that text (issue 11 item 3). Stub models (a BaseLlm subclass);
// the spans are ADK's own.
//
//   OTEL_EXPORTER_OTLP_ENDPOINT=http://127.0.0.1:4318 node adk-refund-transfer.mjs

import { FunctionTool, LlmAgent } from '@google/adk';
import { z } from 'zod';

import { ScriptedLlm, call, runEphemeral } from './lib/adk.mjs';
import { runScenario } from './lib/telemetry.mjs';

const SERVICE_NAME = 'e2e-google-adk-refund-transfer';
const QUESTION = 'Please refund the duplicate charge on order A-1001.';
const HANDOFF_TEXT = 'Refund 42.50 EUR of order A-1001 to card 4111 1111 1111 1111.';
const ANSWER = 'Refunded 42.50 EUR for order A-1001 (refund R-7734).';

await runScenario(SERVICE_NAME, async () => {
  const issueRefund = new FunctionTool({
    name: 'issue_refund',
    description: 'Refund an amount of an order to the card it was paid with',
    parameters: z.object({ order_id: z.string(), amount_eur: z.number() }),
    execute: ({ order_id, amount_eur }) => ({ order_id, amount_eur, refund_id: 'R-7734', status: 'accepted' }),
  });

  const refund = new LlmAgent({
    name: 'refund_specialist',
    description: 'Issues refunds',
    instruction: 'Issue the refund you are asked for, then confirm it.',
    model: new ScriptedLlm('stub-refund-1', [
      { parts: [call('adk_r1', 'issue_refund', { order_id: 'A-1001', amount_eur: 42.5 })], usage: [60, 9] },
      { after: 'adk_r1', parts: [{ text: ANSWER }], usage: [85, 14] },
    ]),
    tools: [issueRefund],
  });

  const triage = new LlmAgent({
    name: 'triage',
    description: 'Routes each request to the right specialist',
    instruction: 'Route the customer to the right specialist agent.',
    model: new ScriptedLlm('stub-triage-1', [
      // Text and the transfer in one response: the text is what triage hands over.
      { parts: [{ text: HANDOFF_TEXT }, call('adk_t1', 'transfer_to_agent', { agentName: 'refund_specialist' })], usage: [32, 22] },
    ]),
    subAgents: [refund],
  });

  const { answer, authors } = await runEphemeral(triage, 'refund_app', QUESTION);
  if (!authors.includes('refund_specialist') || answer !== ANSWER) {
    throw new Error(`unexpected run: authors ${authors.join(', ')}, answer ${JSON.stringify(answer)}`);
  }
  return answer;
});
