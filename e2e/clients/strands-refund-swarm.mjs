// Strands scenario, three levels: a Swarm where triage hands off to billing (a clean
// handoff: the order id only), billing looks the order up and hands off to
// refund_specialist with a message that leaks the customer's card number, and the
// refund specialist issues the refund and answers. The models are scripted stubs
// (lib/strands.mjs); the spans are Strands' own.
//
//   OTEL_EXPORTER_OTLP_ENDPOINT=http://127.0.0.1:4318 node strands-refund-swarm.mjs

import { Agent, tool } from '@strands-agents/sdk';
import { Swarm } from '@strands-agents/sdk/multiagent';
import { z } from 'zod';

import { HANDOFF_TOOL, scriptedModel } from './lib/strands.mjs';
import { runScenario } from './lib/telemetry.mjs';

const SERVICE_NAME = 'e2e-strands-refund-swarm';
const QUESTION = 'I was charged twice for order A-1001, please refund the duplicate.';
export const CARD = '4111 1111 1111 1111';
const ANSWER = 'Refunded 42.50 EUR for order A-1001; it reaches your card in 3-5 days.';

await runScenario(SERVICE_NAME, async () => {
  const lookupOrder = tool({
    name: 'lookup_order',
    description: 'Look an order up by its id',
    inputSchema: z.object({ order_id: z.string() }),
    callback: ({ order_id }) => ({ order_id, amount_eur: 42.5, charges: 2, card_last4: '1111' }),
  });
  const issueRefund = tool({
    name: 'issue_refund',
    description: 'Refund an amount of an order to the card it was paid with',
    inputSchema: z.object({ order_id: z.string(), amount_eur: z.number() }),
    callback: ({ order_id, amount_eur }) => ({ order_id, amount_eur, refund_id: 'R-7734', status: 'accepted' }),
  });

  const triage = new Agent({
    id: 'triage',
    name: 'triage',
    description: 'Routes each request to the right team',
    systemPrompt: 'Route the customer to the right team.',
    model: scriptedModel('stub-triage-1', [
      {
        tool: HANDOFF_TOOL,
        id: 'rf_t1',
        input: { agentId: 'billing', message: 'Customer reports a duplicate charge on order A-1001.' },
        usage: [32, 8],
      },
    ]),
    printer: false,
  });

  const billing = new Agent({
    id: 'billing',
    name: 'billing',
    description: 'Checks orders and charges',
    systemPrompt: 'Check the order, then hand refunds to the refund specialist.',
    model: scriptedModel('stub-billing-1', [
      { tool: 'lookup_order', id: 'rf_b1', input: { order_id: 'A-1001' }, usage: [50, 7] },
      {
        tool: HANDOFF_TOOL,
        id: 'rf_b2',
        // The leak: billing copies the full card number into the handoff message.
        input: { agentId: 'refund_specialist', message: `Refund 42.50 EUR of order A-1001 to card ${CARD}.` },
        usage: [75, 14],
      },
    ]),
    tools: [lookupOrder],
    printer: false,
  });

  const refund = new Agent({
    id: 'refund_specialist',
    name: 'refund_specialist',
    description: 'Issues refunds',
    systemPrompt: 'Issue the refund you are asked for, then confirm it.',
    model: scriptedModel('stub-refund-1', [
      { tool: 'issue_refund', id: 'rf_r1', input: { order_id: 'A-1001', amount_eur: 42.5 }, usage: [60, 9] },
      { tool: HANDOFF_TOOL, id: 'rf_r2', input: { message: ANSWER }, usage: [85, 18] },
    ]),
    tools: [issueRefund],
    printer: false,
  });

  const swarm = new Swarm({ id: 'refund_swarm', nodes: [triage, billing, refund], start: 'triage', maxSteps: 5 });
  const result = await swarm.invoke(QUESTION);
  const visited = result.results.map((r) => r.nodeId);
  if (result.status !== 'COMPLETED' || visited.join(',') !== 'triage,billing,refund_specialist') {
    throw new Error(`swarm ended ${result.status} after nodes ${visited.join(', ')}: ${result.error ?? ''}`);
  }
  return ANSWER;
});
