// Strands scenarios: a Swarm of triage and weather_specialist. Triage hands off to the
// specialist through the swarm's structured-output routing; the specialist calls get_weather
// per city and answers. The models are the AI SDK's MockLanguageModelV3 behind Strands'
// VercelModel adapter, playing a fixed script; the spans are Strands' own, exported over
// OTLP/HTTP to OTEL_EXPORTER_OTLP_ENDPOINT.
//
//   OTEL_EXPORTER_OTLP_ENDPOINT=http://127.0.0.1:4318 node strands-swarm.mjs ok
//   OTEL_EXPORTER_OTLP_ENDPOINT=http://127.0.0.1:4318 node strands-swarm.mjs tool-error
//
// ok: Paris and Berlin, both calls succeed. tool-error: the second city is Atlantis, the tool
// throws, the specialist retries once (it throws again) and answers with what it has.

import { Agent, tool } from '@strands-agents/sdk';
import { Swarm } from '@strands-agents/sdk/multiagent';
import { z } from 'zod';

import { HANDOFF_TOOL, scriptedModel } from './lib/strands.mjs';
import { runScenario } from './lib/telemetry.mjs';
import { QUESTION, getWeather } from './lib/weather.mjs';

const SCENARIOS = {
  ok: {
    serviceName: 'e2e-strands-swarm',
    question: QUESTION,
    specialist: [
      { tool: 'get_weather', id: 'sw_w1', input: { city: 'Paris' }, usage: [45, 9] },
      { tool: 'get_weather', id: 'sw_w2', input: { city: 'Berlin' }, usage: [70, 9] },
      { tool: HANDOFF_TOOL, id: 'sw_w3', input: { message: 'Paris: 18C, sunny. Berlin: 12C, rain.' }, usage: [95, 20] },
    ],
  },
  'tool-error': {
    serviceName: 'e2e-strands-swarm-tool-error',
    question: "What's the weather in Paris and Atlantis?",
    specialist: [
      { tool: 'get_weather', id: 'sw_w1', input: { city: 'Paris' }, usage: [45, 9] },
      { tool: 'get_weather', id: 'sw_w2', input: { city: 'Atlantis' }, usage: [70, 9] },
      { tool: 'get_weather', id: 'sw_w3', input: { city: 'Atlantis' }, usage: [80, 9] },
      { tool: HANDOFF_TOOL, id: 'sw_w4', input: { message: 'Paris: 18C, sunny. Atlantis: no data.' }, usage: [110, 20] },
    ],
  },
};

const name = process.argv[2] ?? 'ok';
const scenario = SCENARIOS[name];
if (!scenario) {
  console.error(`usage: node strands-swarm.mjs ${Object.keys(SCENARIOS).join('|')}`);
  process.exit(2);
}

await runScenario(scenario.serviceName, async () => {
  const weatherTool = tool({
    name: 'get_weather',
    description: 'Get the current weather for a city',
    inputSchema: z.object({ city: z.string().describe('City name') }),
    callback: ({ city }) => getWeather(city),
  });

  const triage = new Agent({
    id: 'triage',
    name: 'triage',
    description: 'Routes each request to the right specialist',
    systemPrompt: 'Route the user to the right specialist agent.',
    model: scriptedModel('stub-triage-1', [
      {
        tool: HANDOFF_TOOL,
        id: 'sw_t1',
        input: { agentId: 'weather_specialist', message: `Get the weather: ${scenario.question}` },
        usage: [30, 6],
      },
    ]),
    printer: false,
  });

  const specialist = new Agent({
    id: 'weather_specialist',
    name: 'weather_specialist',
    description: 'Answers weather questions',
    systemPrompt: 'You are the weather specialist. Call get_weather once per city, then answer briefly.',
    model: scriptedModel('stub-weather-1', scenario.specialist),
    tools: [weatherTool],
    printer: false,
  });

  const swarm = new Swarm({ id: 'weather_swarm', nodes: [triage, specialist], start: 'triage', maxSteps: 4 });
  const result = await swarm.invoke(scenario.question);
  const visited = result.results.map((r) => r.nodeId);
  if (result.status !== 'COMPLETED' || visited.join(',') !== 'triage,weather_specialist') {
    throw new Error(`swarm ended ${result.status} after nodes ${visited.join(', ')}: ${result.error ?? ''}`);
  }
  const answer = scenario.specialist.at(-1).input.message;
  return answer;
});
