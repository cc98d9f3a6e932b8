// Mastra scenario, a fan-out: trip_planner has three sub-agents (Mastra's agents-as-tools,
// offered to its model as agent-<name> tools); its model calls all three in one response,
// then answers with the three results. weather_agent calls get_weather itself. The models
// are scripted stubs (lib/mastra.mjs); the spans are Mastra's own (@mastra/otel-exporter).
//
//   OTEL_EXPORTER_OTLP_ENDPOINT=http://127.0.0.1:4318 node mastra-fanout.mjs

import { Agent } from '@mastra/core/agent';
import { Mastra } from '@mastra/core/mastra';
import { createTool } from '@mastra/core/tools';
import { z } from 'zod';

import { RecordingOtelExporter, scriptedModel } from './lib/mastra.mjs';
import { runScenario } from './lib/telemetry.mjs';

const SERVICE_NAME = 'e2e-mastra-fanout';
const QUESTION = 'Plan a weekend in Lisbon: weather, a hotel and a flight from Berlin.';
const ANSWER = 'Lisbon this weekend: 24C and sunny; Hotel Alfama at 120 EUR a night; flight TP 541 from Berlin at 09:40.';

await runScenario(SERVICE_NAME, async (tracing) => {
  const getWeather = createTool({
    id: 'get_weather',
    description: 'Get the current weather for a city',
    inputSchema: z.object({ city: z.string() }),
    execute: async ({ context }) => ({ city: context.city, tempC: 24, conditions: 'sunny' }),
  });

  const weatherAgent = new Agent({
    name: 'weather_agent',
    description: 'Answers weather questions',
    instructions: 'Call get_weather, then answer in one sentence.',
    model: scriptedModel('stub-weather-1', [
      { calls: [{ id: 'mf_w1', tool: 'get_weather', input: { city: 'Lisbon' } }], usage: [40, 8] },
      { text: 'Lisbon: 24C and sunny.', usage: [60, 7] },
    ]),
    tools: { get_weather: getWeather },
  });
  const hotelAgent = new Agent({
    name: 'hotel_agent',
    description: 'Finds hotels',
    instructions: 'Suggest one hotel.',
    model: scriptedModel('stub-hotel-1', [{ text: 'Hotel Alfama, 120 EUR a night.', usage: [35, 9] }]),
  });
  const flightAgent = new Agent({
    name: 'flight_agent',
    description: 'Finds flights',
    instructions: 'Suggest one flight.',
    model: scriptedModel('stub-flight-1', [{ text: 'TP 541 from Berlin, Saturday 09:40.', usage: [38, 10] }]),
  });

  const planner = new Agent({
    name: 'trip_planner',
    description: 'Plans trips with its specialists',
    instructions: 'Ask all three specialists at once, then combine their answers.',
    model: scriptedModel('stub-planner-1', [
      {
        calls: [
          { id: 'mf_p1', tool: 'agent-weather_agent', input: { prompt: 'Weather in Lisbon this weekend?' } },
          { id: 'mf_p2', tool: 'agent-hotel_agent', input: { prompt: 'One hotel in Lisbon for two nights.' } },
          { id: 'mf_p3', tool: 'agent-flight_agent', input: { prompt: 'One flight from Berlin to Lisbon on Saturday.' } },
        ],
        usage: [120, 45],
      },
      { text: ANSWER, usage: [210, 30] },
    ]),
    agents: { weather_agent: weatherAgent, hotel_agent: hotelAgent, flight_agent: flightAgent },
  });

  const exporter = new RecordingOtelExporter(tracing.recordingExporter());
  const mastra = new Mastra({
    agents: { trip_planner: planner },
    observability: { configs: { otel: { serviceName: SERVICE_NAME, exporters: [exporter] } } },
    logger: false,
  });

  const result = await mastra.getAgent('trip_planner').generate(QUESTION);
  if (result.text !== ANSWER) {
    throw new Error(`unexpected answer ${JSON.stringify(result.text)}`);
  }
  await exporter.rootExported;
  await exporter.shutdown();
  return result.text;
},
// Not registered globally: Mastra 0.24's legacy telemetry traces its own internals
// (agent.getMemoryTools, mastra.getStorage, ...) through the global provider even when
// disabled; the agent telemetry is its AI tracing, exported through the recording exporter.
{ register: false });
