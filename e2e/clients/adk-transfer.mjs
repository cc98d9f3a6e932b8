// Google ADK scenario: triage transfers to weather_specialist with ADK's transfer_to_agent
// tool; the specialist calls get_weather for Paris, then Berlin, and answers. The models are
// scripted stubs (a BaseLlm subclass), so nothing leaves the machine; the spans are ADK's own
// (tracer gcp.vertex.agent), exported over OTLP/HTTP to OTEL_EXPORTER_OTLP_ENDPOINT.
//
//   OTEL_EXPORTER_OTLP_ENDPOINT=http://127.0.0.1:4318 node adk-transfer.mjs

import { FunctionTool, LlmAgent } from '@google/adk';
import { z } from 'zod';

import { ScriptedLlm, call, runEphemeral } from './lib/adk.mjs';
import { runScenario } from './lib/telemetry.mjs';
import { QUESTION, getWeather } from './lib/weather.mjs';

const SERVICE_NAME = 'e2e-google-adk-transfer';

await runScenario(SERVICE_NAME, async () => {
  const weatherTool = new FunctionTool({
    name: 'get_weather',
    description: 'Get the current weather for a city',
    parameters: z.object({ city: z.string().describe('City name') }),
    execute: ({ city }) => getWeather(city),
  });

  const specialist = new LlmAgent({
    name: 'weather_specialist',
    description: 'Answers weather questions',
    instruction: 'You are the weather specialist. Call get_weather once per city, then answer briefly.',
    model: new ScriptedLlm('stub-weather-1', [
      { parts: [call('adk_w1', 'get_weather', { city: 'Paris' })], usage: [45, 9] },
      { after: 'adk_w1', parts: [call('adk_w2', 'get_weather', { city: 'Berlin' })], usage: [70, 9] },
      { after: 'adk_w2', parts: [{ text: 'Paris: 18C, sunny. Berlin: 12C, rain.' }], usage: [95, 20] },
    ]),
    tools: [weatherTool],
  });

  const triage = new LlmAgent({
    name: 'triage',
    description: 'Routes each request to the right specialist',
    instruction: 'Route the user to the right specialist agent.',
    model: new ScriptedLlm('stub-triage-1', [
      { parts: [call('adk_t1', 'transfer_to_agent', { agentName: 'weather_specialist' })], usage: [30, 6] },
    ]),
    subAgents: [specialist],
  });

  const { answer, authors } = await runEphemeral(triage, 'weather_app', QUESTION);
  if (!authors.includes('weather_specialist')) {
    throw new Error(`the specialist never ran; event authors: ${authors.join(', ')}`);
  }
  if (!answer.includes('Berlin')) {
    throw new Error(`unexpected final answer ${JSON.stringify(answer)}`);
  }
  return answer;
});
