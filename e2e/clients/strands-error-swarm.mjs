// Strands scenarios of an error handed back through a Swarm: triage hands off to
// weather_specialist, whose get_weather throws for Atlantis; the specialist hands back to
// triage saying so. Then
//   swallowed: triage answers the user as if nothing had happened (no retry, no other
//              agent, nothing about the failure in its answer);
//   retried:   triage hands off to backup_weather, whose archive tool has the city, and
//              that agent answers.
// The models are scripted stubs (lib/strands.mjs); the spans are Strands' own.
//
//   OTEL_EXPORTER_OTLP_ENDPOINT=http://127.0.0.1:4318 node strands-error-swarm.mjs swallowed|retried

import { Agent, tool } from '@strands-agents/sdk';
import { Swarm } from '@strands-agents/sdk/multiagent';
import { z } from 'zod';

import { HANDOFF_TOOL, scriptedModel } from './lib/strands.mjs';
import { runScenario } from './lib/telemetry.mjs';
import { getWeather } from './lib/weather.mjs';

const QUESTION = "What's the weather in Atlantis?";
const HAND_BACK = 'get_weather failed for Atlantis: weather service: unknown city Atlantis';

const SCENARIOS = {
  swallowed: {
    serviceName: 'e2e-strands-error-swallowed',
    triageAfter: { tool: HANDOFF_TOOL, id: 'er_t2', input: { message: 'Atlantis: 22C and sunny today.' }, usage: [64, 12] },
    visited: 'triage,weather_specialist,triage',
  },
  retried: {
    serviceName: 'e2e-strands-error-retried',
    triageAfter: {
      tool: HANDOFF_TOOL,
      id: 'er_t2',
      input: { agentId: 'backup_weather', message: 'The live weather service failed for Atlantis; use the archive.' },
      usage: [64, 15],
    },
    visited: 'triage,weather_specialist,triage,backup_weather',
  },
};

const name = process.argv[2];
const scenario = SCENARIOS[name];
if (!scenario) {
  console.error(`usage: node strands-error-swarm.mjs ${Object.keys(SCENARIOS).join('|')}`);
  process.exit(2);
}

await runScenario(scenario.serviceName, async () => {
  const weatherTool = tool({
    name: 'get_weather',
    description: 'Get the current weather for a city',
    inputSchema: z.object({ city: z.string() }),
    callback: ({ city }) => getWeather(city),
  });
  const archiveTool = tool({
    name: 'get_weather_archive',
    description: 'Get the last recorded weather for a city from the archive',
    inputSchema: z.object({ city: z.string() }),
    callback: ({ city }) => ({ city, tempC: 22, conditions: 'sunny', recorded: 'yesterday' }),
  });

  const triage = new Agent({
    id: 'triage',
    name: 'triage',
    description: 'Routes each request to the right specialist and answers the user',
    systemPrompt: 'Route the user to the right specialist agent.',
    model: scriptedModel('stub-triage-1', [
      {
        tool: HANDOFF_TOOL,
        id: 'er_t1',
        input: { agentId: 'weather_specialist', message: 'Get the current weather in Atlantis.' },
        usage: [30, 8],
      },
      scenario.triageAfter,
    ]),
    printer: false,
  });

  const specialist = new Agent({
    id: 'weather_specialist',
    name: 'weather_specialist',
    description: 'Answers weather questions with the live weather service',
    systemPrompt: 'Call get_weather; if it fails, hand back to triage.',
    model: scriptedModel('stub-weather-1', [
      { tool: 'get_weather', id: 'er_w1', input: { city: 'Atlantis' }, usage: [45, 9] },
      { tool: HANDOFF_TOOL, id: 'er_w2', input: { agentId: 'triage', message: HAND_BACK }, usage: [70, 16] },
    ]),
    tools: [weatherTool],
    printer: false,
  });

  const nodes = [triage, specialist];
  if (name === 'retried') {
    nodes.push(
      new Agent({
        id: 'backup_weather',
        name: 'backup_weather',
        description: 'Answers weather questions from the weather archive',
        systemPrompt: 'Call get_weather_archive, then answer briefly.',
        model: scriptedModel('stub-backup-1', [
          { tool: 'get_weather_archive', id: 'er_b1', input: { city: 'Atlantis' }, usage: [40, 9] },
          { tool: HANDOFF_TOOL, id: 'er_b2', input: { message: 'Atlantis (archive, yesterday): 22C and sunny.' }, usage: [62, 14] },
        ]),
        tools: [archiveTool],
        printer: false,
      }),
    );
  }

  const swarm = new Swarm({ id: 'weather_swarm', nodes, start: 'triage', maxSteps: 6 });
  const result = await swarm.invoke(QUESTION);
  const visited = result.results.map((r) => r.nodeId).join(',');
  if (result.status !== 'COMPLETED' || visited !== scenario.visited) {
    throw new Error(`swarm ended ${result.status} after nodes ${visited} (want ${scenario.visited}): ${result.error ?? ''}`);
  }
  const last = name === 'retried' ? 'Atlantis (archive, yesterday): 22C and sunny.' : scenario.triageAfter.input.message;
  return last;
});
