// Strands Swarm hand-back: triage hands off to weather_specialist; get_weather fails on
// Atlantis; the specialist hands control back to triage with what it has (its message names
// the failure). Then triage:
//
//   node strands-handback.mjs swallowed OUT.json  answers with Paris only, not a word of Atlantis
//   node strands-handback.mjs surfaced  OUT.json  answers that Atlantis could not be looked up
//   node strands-handback.mjs retried   OUT.json  hands off to the specialist again, asking for
//                                                 Paris and for Atlantis spelt as a real place
//                                                 (a changed scope), and the specialist answers
//
// The models are the AI SDK's MockLanguageModelV3 behind Strands' VercelModel adapter, playing
// a fixed script; the spans are Strands' own. Run from e2e/clients (its node_modules): see
// ../SOURCES.md.

import { Agent, tool } from '@strands-agents/sdk';
import { VercelModel } from '@strands-agents/sdk/models/vercel';
import { Swarm } from '@strands-agents/sdk/multiagent';
import { MockLanguageModelV3, convertArrayToReadableStream } from 'ai/test';
import { z } from 'zod';

import { capture } from './capture.mjs';

const ROUTE = 'strands_structured_output'; // how a Strands swarm node answers or hands off
const QUESTION = "What's the weather in Paris and Atlantis?";
const TABLE = {
  Paris: { city: 'Paris', tempC: 18, conditions: 'sunny' },
  'Atlantis, Georgia': { city: 'Atlantis, Georgia', tempC: 24, conditions: 'clear' },
};

const handBack = {
  tool: ROUTE,
  input: { agentId: 'triage', message: 'Paris: 18C, sunny. Atlantis: get_weather failed (weather service: unknown city Atlantis).' },
};

const SCRIPTS = {
  swallowed: {
    triage: [
      { tool: ROUTE, input: { agentId: 'weather_specialist', message: 'Get the weather for Paris and Atlantis' } },
      { tool: ROUTE, input: { message: 'Paris: 18C, sunny.' } },
    ],
    specialist: [
      { tool: 'get_weather', input: { city: 'Paris' } },
      { tool: 'get_weather', input: { city: 'Atlantis' } },
      handBack,
    ],
    visits: 'triage,weather_specialist,triage',
  },
  surfaced: {
    triage: [
      { tool: ROUTE, input: { agentId: 'weather_specialist', message: 'Get the weather for Paris and Atlantis' } },
      { tool: ROUTE, input: { message: 'Paris: 18C, sunny. I could not get the weather for Atlantis: the weather service does not know that city.' } },
    ],
    specialist: [
      { tool: 'get_weather', input: { city: 'Paris' } },
      { tool: 'get_weather', input: { city: 'Atlantis' } },
      handBack,
    ],
    visits: 'triage,weather_specialist,triage',
  },
  retried: {
    triage: [
      { tool: ROUTE, input: { agentId: 'weather_specialist', message: 'Get the weather for Paris and Atlantis' } },
      { tool: ROUTE, input: { agentId: 'weather_specialist', message: 'Atlantis is not a city the service knows: get the weather for Atlantis, Georgia' } },
    ],
    specialist: [
      { tool: 'get_weather', input: { city: 'Paris' } },
      { tool: 'get_weather', input: { city: 'Atlantis' } },
      handBack,
      { tool: 'get_weather', input: { city: 'Atlantis, Georgia' } },
      { tool: ROUTE, input: { message: 'Paris: 18C, sunny. Atlantis, Georgia: 24C, clear.' } },
    ],
    visits: 'triage,weather_specialist,triage,weather_specialist',
  },
};

function scriptedModel(modelId, turns) {
  let calls = 0;
  const mock = new MockLanguageModelV3({
    provider: 'capture-stub',
    modelId,
    doStream: async (options) => {
      const turn = turns[calls++];
      if (!turn) {
        throw new Error(`${modelId}: called ${calls} times, only ${turns.length} turns scripted`);
      }
      const offered = (options.tools ?? []).map((t) => t.name);
      if (!offered.includes(turn.tool)) {
        throw new Error(`${modelId}: turn ${calls} calls ${turn.tool}, but the agent offered only ${offered.join(', ')}`);
      }
      return {
        stream: convertArrayToReadableStream([
          { type: 'stream-start', warnings: [] },
          { type: 'tool-call', toolCallId: `${modelId}-${calls}`, toolName: turn.tool, input: JSON.stringify(turn.input) },
          {
            type: 'finish',
            finishReason: { unified: 'tool-calls', raw: 'tool_use' },
            usage: {
              inputTokens: { total: 40 + 10 * calls, noCache: 40 + 10 * calls, cacheRead: undefined, cacheWrite: undefined },
              outputTokens: { total: 9, text: 9, reasoning: undefined },
            },
          },
        ]),
      };
    },
  });
  return new VercelModel({ provider: mock });
}

const [mode, out] = process.argv.slice(2);
const script = SCRIPTS[mode];
if (!script || !out) {
  console.error(`usage: node strands-handback.mjs ${Object.keys(SCRIPTS).join('|')} OUT.json`);
  process.exit(2);
}

await capture(`capture-strands-handback-${mode}`, out, async () => {
  const weatherTool = tool({
    name: 'get_weather',
    description: 'Get the current weather for a city',
    inputSchema: z.object({ city: z.string().describe('City name') }),
    callback: ({ city }) => {
      const row = TABLE[city];
      if (!row) {
        throw new Error(`weather service: unknown city ${city}`);
      }
      return { ...row };
    },
  });
  const triage = new Agent({
    id: 'triage',
    name: 'triage',
    description: 'Routes each request to the right specialist and answers the user',
    systemPrompt: 'Route the user to the right specialist agent, then answer.',
    model: scriptedModel('stub-triage-1', script.triage),
    printer: false,
  });
  const specialist = new Agent({
    id: 'weather_specialist',
    name: 'weather_specialist',
    description: 'Answers weather questions',
    systemPrompt: 'You are the weather specialist. Call get_weather once per city, then hand back to triage.',
    model: scriptedModel('stub-weather-1', script.specialist),
    tools: [weatherTool],
    printer: false,
  });
  const swarm = new Swarm({ id: 'weather_swarm', nodes: [triage, specialist], start: 'triage', maxSteps: 6 });
  const result = await swarm.invoke(QUESTION);
  const visited = result.results.map((r) => r.nodeId).join(',');
  if (result.status !== 'COMPLETED' || visited !== script.visits) {
    throw new Error(`swarm ended ${result.status} after nodes ${visited}: ${result.error ?? ''}`);
  }
  return script.triage.at(-1).input.message;
});
