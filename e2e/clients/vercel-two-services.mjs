// Vercel AI SDK scenario across two services: the frontdesk agent (service
// e2e-vercel-frontdesk) asks the weather service over HTTP (a real loopback request,
// W3C traceparent injected by the client and extracted by the server); the weather
// service (service e2e-vercel-weather-service, its own tracer provider) runs the
// weather_specialist agent, which calls get_weather for Paris and Berlin. The HTTP client
// and server spans are written here the way the OTel HTTP instrumentation names them
// ("POST", "POST /agents/weather_specialist"). One trace, two service.name resources.
//
//   OTEL_EXPORTER_OTLP_ENDPOINT=http://127.0.0.1:4318 node vercel-two-services.mjs

import http from 'node:http';

import { SpanKind, SpanStatusCode, context, propagation, trace } from '@opentelemetry/api';
import { generateText, stepCountIs, tool } from 'ai';
import { z } from 'zod';

import { runScenario } from './lib/telemetry.mjs';
import { agentTelemetry, scriptedModel, stepsInLaterMilliseconds } from './lib/vercel.mjs';
import { QUESTION, getWeather } from './lib/weather.mjs';

const SERVICE_NAME = 'e2e-vercel-frontdesk';
const WEATHER_SERVICE = 'e2e-vercel-weather-service';
const ROUTE = '/agents/weather_specialist';
const REPORT = 'Paris: 18C, sunny. Berlin: 12C, rain.';
const ANSWER = `Here is the forecast: ${REPORT}`;

// The AI SDK's own tracer name is 'ai'; the HTTP spans carry the OTel HTTP instrumentation's.
const AI_SCOPE = 'ai';
const HTTP_SCOPE = '@opentelemetry/instrumentation-http';

/** The weather service: one POST route running the specialist agent. */
function startWeatherService(provider) {
  const tracer = provider.getTracer(HTTP_SCOPE);
  const aiTracer = provider.getTracer(AI_SCOPE);
  const specialistModel = scriptedModel('stub-weather-1', [
    { calls: [{ id: 'ts_w1', tool: 'get_weather', input: { city: 'Paris' } }], usage: [45, 9] },
    { calls: [{ id: 'ts_w2', tool: 'get_weather', input: { city: 'Berlin' } }], usage: [70, 9] },
    { text: REPORT, usage: [95, 20] },
  ]);
  const server = http.createServer((req, res) => {
    const parent = propagation.extract(context.active(), req.headers);
    const span = tracer.startSpan(
      `${req.method} ${ROUTE}`,
      {
        kind: SpanKind.SERVER,
        attributes: {
          'http.request.method': req.method,
          'http.route': ROUTE,
          'url.path': req.url,
          'url.scheme': 'http',
          'server.address': '127.0.0.1',
          'server.port': server.address().port,
          'network.protocol.version': '1.1',
        },
      },
      parent,
    );
    let body = '';
    req.on('data', (chunk) => (body += chunk));
    req.on('end', () =>
      context.with(trace.setSpan(parent, span), async () => {
        try {
          const { task } = JSON.parse(body);
          const result = await generateText({
            model: specialistModel,
            system: 'You are the weather specialist. Call get_weather once per city, then answer briefly.',
            prompt: task,
            tools: {
              get_weather: tool({
                description: 'Get the current weather for a city',
                inputSchema: z.object({ city: z.string().describe('City name') }),
                execute: async ({ city }) => getWeather(city),
              }),
            },
            stopWhen: stepCountIs(5),
            experimental_telemetry: agentTelemetry('weather_specialist', aiTracer),
          });
          res.writeHead(200, { 'content-type': 'application/json' });
          res.end(JSON.stringify({ report: result.text }));
          span.setAttribute('http.response.status_code', 200);
        } catch (err) {
          res.writeHead(500);
          res.end(String(err));
          span.setAttribute('http.response.status_code', 500);
          span.setStatus({ code: SpanStatusCode.ERROR, message: String(err) });
        } finally {
          span.end();
        }
      }),
    );
  });
  return new Promise((resolve) => server.listen(0, '127.0.0.1', () => resolve(server)));
}

/** The client side: a POST with the W3C context injected, as the HTTP instrumentation does. */
async function post(tracer, url, payload) {
  const u = new URL(url);
  return tracer.startActiveSpan(
    'POST',
    {
      kind: SpanKind.CLIENT,
      attributes: {
        'http.request.method': 'POST',
        'url.full': url,
        'server.address': u.hostname,
        'server.port': Number(u.port),
        'network.protocol.version': '1.1',
      },
    },
    async (span) => {
      try {
        const headers = { 'content-type': 'application/json' };
        propagation.inject(context.active(), headers);
        const res = await fetch(url, { method: 'POST', headers, body: JSON.stringify(payload) });
        span.setAttribute('http.response.status_code', res.status);
        if (!res.ok) {
          span.setStatus({ code: SpanStatusCode.ERROR });
          throw new Error(`${url}: HTTP ${res.status}: ${await res.text()}`);
        }
        return await res.json();
      } finally {
        span.end();
      }
    },
  );
}

await runScenario(SERVICE_NAME, async (tracing) => {
  const httpTracer = trace.getTracer(HTTP_SCOPE);
  const server = await startWeatherService(tracing.serviceProvider(WEATHER_SERVICE));
  const url = `http://127.0.0.1:${server.address().port}${ROUTE}`;
  try {
    const result = await generateText({
      model: scriptedModel('stub-frontdesk-1', [
        { calls: [{ id: 'ts_f1', tool: 'ask_weather_service', input: { task: `Get the weather: ${QUESTION}` } }], usage: [40, 12] },
        { text: ANSWER, usage: [90, 18] },
      ]),
      system: 'You are the front desk. Ask the weather service for weather questions.',
      prompt: QUESTION,
      tools: {
        ask_weather_service: tool({
          description: 'Ask the weather service (the weather_specialist agent) a weather question',
          inputSchema: z.object({ task: z.string() }),
          execute: async ({ task }) => post(httpTracer, url, { task }),
        }),
      },
      stopWhen: stepCountIs(4),
      prepareStep: stepsInLaterMilliseconds, // its next model call is ordered after the tool call's end
      experimental_telemetry: agentTelemetry('frontdesk', trace.getTracer(AI_SCOPE)),
    });
    if (result.text !== ANSWER) {
      throw new Error(`unexpected answer ${JSON.stringify(result.text)}`);
    }
    return result.text;
  } finally {
    await new Promise((resolve) => server.close(resolve));
  }
});
