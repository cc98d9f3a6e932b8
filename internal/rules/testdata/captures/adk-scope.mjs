// Google ADK scope: triage asks booking_specialist (an AgentTool) to book a table in Paris on
// Christmas Eve 2026 for two, for order A-1001. The specialist calls find_table with a date
// it worked out (2026-12-24), the year and the party size (a date, a year and a small number:
// none of them identifiers), then book_table with the order id and the table id find_table
// returned.
//
//   node adk-scope.mjs ok         OUT.json
//   node adk-scope.mjs fabricated OUT.json  book_table also carries a loyalty card number
//                                           (LC-88412) nobody supplied
//
// The models are scripted stubs (a BaseLlm subclass); the spans are ADK's own. Run from
// e2e/clients (its node_modules): see ../SOURCES.md.

import { AgentTool, BaseLlm, FunctionTool, InMemoryRunner, LlmAgent } from '@google/adk';
import { z } from 'zod';

import { capture } from './capture.mjs';

class ScriptedLlm extends BaseLlm {
  constructor(model, turns) {
    super({ model });
    this.turns = turns;
    this.calls = 0;
  }

  async *generateContentAsync() {
    const turn = this.turns[this.calls++];
    if (!turn) {
      throw new Error(`${this.model}: called ${this.calls} times, only ${this.turns.length} turns scripted`);
    }
    yield {
      content: { role: 'model', parts: turn.parts },
      usageMetadata: { promptTokenCount: turn.usage[0], candidatesTokenCount: turn.usage[1], totalTokenCount: turn.usage[0] + turn.usage[1] },
      finishReason: 'STOP',
      turnComplete: true,
    };
  }

  async connect() {
    throw new Error('live connections are not scripted');
  }
}

const call = (id, name, args) => ({ functionCall: { id, name, args } });

const [mode, out] = process.argv.slice(2);
if (!['ok', 'fabricated'].includes(mode) || !out) {
  console.error('usage: node adk-scope.mjs ok|fabricated OUT.json');
  process.exit(2);
}

const booking = mode === 'ok' ? { order: 'A-1001', table: 'T-17' } : { order: 'A-1001', table: 'T-17', loyaltyCard: 'LC-88412' };

await capture(`capture-google-adk-scope-${mode}`, out, async () => {
  const findTable = new FunctionTool({
    name: 'find_table',
    description: 'Find a free table',
    parameters: z.object({ city: z.string(), date: z.string(), year: z.string(), guests: z.string() }),
    execute: () => ({ table: 'T-17', time: '20:00' }),
  });
  const bookTable = new FunctionTool({
    name: 'book_table',
    description: 'Book a table for an order',
    parameters: z.object({ order: z.string(), table: z.string(), loyaltyCard: z.string().optional() }),
    execute: ({ order, table }) => ({ booked: true, order, table }),
  });
  const specialist = new LlmAgent({
    name: 'booking_specialist',
    description: 'Books restaurant tables',
    instruction: 'Find a table, then book it for the order.',
    model: new ScriptedLlm('stub-booking-1', [
      { parts: [call('bk_1', 'find_table', { city: 'Paris', date: '2026-12-24', year: '2026', guests: '2' })], usage: [60, 12] },
      { parts: [call('bk_2', 'book_table', booking)], usage: [80, 10] },
      { parts: [{ text: 'Booked table T-17 at 20:00 on 2026-12-24 for order A-1001.' }], usage: [100, 15] },
    ]),
    tools: [findTable, bookTable],
  });
  const triage = new LlmAgent({
    name: 'triage',
    description: 'Handles customer requests',
    instruction: 'Delegate bookings to the booking specialist.',
    model: new ScriptedLlm('stub-triage-1', [
      { parts: [call('tr_1', 'booking_specialist', { request: 'Book a table for 2 in Paris on Christmas Eve 2026 for order A-1001' })], usage: [50, 20] },
      { parts: [{ text: 'Your table T-17 is booked for 20:00 on Christmas Eve.' }], usage: [90, 12] },
    ]),
    tools: [new AgentTool({ agent: specialist })],
  });

  const runner = new InMemoryRunner({ agent: triage, appName: 'booking_app' });
  let answer = '';
  for await (const event of runner.runEphemeral({
    userId: 'capture-user',
    newMessage: { role: 'user', parts: [{ text: 'Book a table for two in Paris on Christmas Eve 2026, order A-1001.' }] },
  })) {
    if (event.errorMessage) {
      throw new Error(`ADK event error ${event.errorCode}: ${event.errorMessage}`);
    }
    const text = (event.content?.parts ?? []).map((p) => p.text ?? '').join('');
    if (text && event.author === 'triage') {
      answer = text;
    }
  }
  if (!answer.includes('T-17')) {
    throw new Error(`unexpected final answer ${JSON.stringify(answer)}`);
  }
  return answer;
});
