// Google ADK fan-out: triage's model calls three agents-as-tools (AgentTool) in one response
// (weather, local time and currency of Paris); ADK runs them one after the other, each
// specialist answers, and triage's next model call answers from the three results. The
// models are scripted stubs (a BaseLlm subclass); the spans are ADK's own.
//
//   node adk-fanout.mjs ok      OUT.json   triage's next request carries all three results
//   node adk-fanout.mjs dropped OUT.json   a before-model callback of triage drops the
//                                          currency result from that request (a context
//                                          filter that loses a return value)
//
// Run from e2e/clients (its node_modules): see ../SOURCES.md.

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
if (!['ok', 'dropped'].includes(mode) || !out) {
  console.error('usage: node adk-fanout.mjs ok|dropped OUT.json');
  process.exit(2);
}

function specialist(name, description, toolName, toolDescription, result, answer) {
  const t = new FunctionTool({
    name: toolName,
    description: toolDescription,
    parameters: z.object({ city: z.string() }),
    execute: () => result,
  });
  return new LlmAgent({
    name,
    description,
    instruction: `You are the ${name}. Call ${toolName} for the city, then answer briefly.`,
    model: new ScriptedLlm(`stub-${name}`, [
      { parts: [call(`${name}_1`, toolName, { city: 'Paris' })], usage: [40, 8] },
      { parts: [{ text: answer }], usage: [60, 12] },
    ]),
    tools: [t],
  });
}

await capture(`capture-google-adk-fanout-${mode}`, out, async () => {
  const weather = specialist('weather_specialist', 'Answers weather questions', 'get_weather', 'Get the current weather for a city',
    { city: 'Paris', tempC: 18, conditions: 'sunny' }, 'Paris: 18C and sunny.');
  const clock = specialist('time_specialist', 'Tells the local time of a city', 'get_local_time', 'Get the local time of a city',
    { city: 'Paris', time: '14:05', zone: 'CET' }, 'It is 14:05 CET in Paris.');
  const currency = specialist('currency_specialist', 'Knows the currency of a city', 'get_currency', 'Get the currency used in a city',
    { city: 'Paris', currency: 'EUR', rateToUSD: 1.08 }, 'Paris pays in euros (EUR), 1.08 USD each.');

  const dropCurrency = ({ request }) => {
    for (const content of request.contents ?? []) {
      content.parts = (content.parts ?? []).filter((p) => p.functionResponse?.name !== 'currency_specialist');
    }
    request.contents = (request.contents ?? []).filter((c) => c.parts.length > 0);
    return undefined;
  };

  const triage = new LlmAgent({
    name: 'triage',
    description: 'Answers travel questions with the help of specialists',
    instruction: 'Ask the specialists, then answer the user.',
    model: new ScriptedLlm('stub-triage-1', [
      {
        parts: [
          call('fan_1', 'weather_specialist', { request: 'Get the weather in Paris' }),
          call('fan_2', 'time_specialist', { request: 'Get the local time in Paris' }),
          call('fan_3', 'currency_specialist', { request: 'Get the currency of Paris' }),
        ],
        usage: [50, 30],
      },
      mode === 'ok'
        ? { parts: [{ text: 'Paris: 18C and sunny; it is 14:05 CET; they pay in euros (EUR), 1.08 USD each.' }], usage: [140, 25] }
        : { parts: [{ text: 'Paris: 18C and sunny; it is 14:05 CET.' }], usage: [110, 15] },
    ]),
    tools: [new AgentTool({ agent: weather }), new AgentTool({ agent: clock }), new AgentTool({ agent: currency })],
    beforeModelCallback: mode === 'dropped' ? dropCurrency : undefined,
  });

  const runner = new InMemoryRunner({ agent: triage, appName: 'travel_app' });
  let answer = '';
  for await (const event of runner.runEphemeral({
    userId: 'capture-user',
    newMessage: { role: 'user', parts: [{ text: "What's the weather, the local time and the currency in Paris?" }] },
  })) {
    if (event.errorMessage) {
      throw new Error(`ADK event error ${event.errorCode}: ${event.errorMessage}`);
    }
    const text = (event.content?.parts ?? []).map((p) => p.text ?? '').join('');
    if (text && event.author === 'triage') {
      answer = text;
    }
  }
  if (!answer.includes('14:05')) {
    throw new Error(`unexpected final answer ${JSON.stringify(answer)}`);
  }
  return answer;
});
