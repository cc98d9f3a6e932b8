// Vercel AI SDK scenario of an asynchronous handoff: the intake agent queues a weather
// report job (its queue_weather_report tool puts the task and the tool span's context on
// an in-process queue) and answers at once. Afterwards a worker takes the job and runs
// the report_writer agent in a NEW trace: its first span ("weather_reports process", a
// CONSUMER span as the messaging conventions name it) has a span link to the intake's
// tool span and no parent. Two traces, joined only by the link.
//
//   OTEL_EXPORTER_OTLP_ENDPOINT=http://127.0.0.1:4318 node vercel-async-link.mjs

import { ROOT_CONTEXT, SpanKind, context, trace } from '@opentelemetry/api';
import { generateText, stepCountIs, tool } from 'ai';
import { z } from 'zod';

import { runScenario } from './lib/telemetry.mjs';
import { agentTelemetry, scriptedModel } from './lib/vercel.mjs';
import { getWeather } from './lib/weather.mjs';

const SERVICE_NAME = 'e2e-vercel-async-link';
const QUEUE = 'weather_reports';
const QUEUED = 'Your weather report for Paris is on its way (job J-1).';
const REPORT = 'Weather report for Paris: 18C and sunny.';

await runScenario(SERVICE_NAME, async (tracing) => {
  const queue = [];
  const aiTracer = trace.getTracer('ai');
  const queueTracer = trace.getTracer('e2e-job-queue');

  // The sender: answers after queueing the job; it never waits for the report.
  const intake = await generateText({
    model: scriptedModel('stub-intake-1', [
      {
        calls: [{ id: 'al_i1', tool: 'queue_weather_report', input: { city: 'Paris', task: 'Write a short weather report for Paris.' } }],
        usage: [35, 14],
      },
      { text: QUEUED, usage: [60, 15] },
    ]),
    system: 'You are the intake agent. Queue report jobs; never write reports yourself.',
    prompt: 'Please send me a weather report for Paris.',
    tools: {
      queue_weather_report: tool({
        description: 'Queue a job for the report_writer agent',
        inputSchema: z.object({ city: z.string(), task: z.string() }),
        execute: async (job) => {
          // The producer side of the queue: the job carries the active (tool) span's context.
          queue.push({ id: 'J-1', job, link: trace.getActiveSpan().spanContext() });
          return { queued: true, job_id: 'J-1' };
        },
      }),
    },
    stopWhen: stepCountIs(3),
    experimental_telemetry: agentTelemetry('intake', aiTracer),
  });
  if (intake.text !== QUEUED) {
    throw new Error(`unexpected intake answer ${JSON.stringify(intake.text)}`);
  }
  // The sender's trace is complete and exported before the job is taken, as with a real queue.
  await tracing.flush();

  const { id, job, link } = queue.shift();
  const report = await queueTracer.startActiveSpan(
    `${QUEUE} process`,
    {
      kind: SpanKind.CONSUMER,
      root: true,
      links: [{ context: link, attributes: { 'messaging.message.id': id } }],
      attributes: {
        'messaging.system': 'e2e-queue',
        'messaging.operation.type': 'process',
        'messaging.destination.name': QUEUE,
        'messaging.message.id': id,
      },
    },
    ROOT_CONTEXT,
    async (span) => {
      try {
        const result = await context.with(trace.setSpan(ROOT_CONTEXT, span), () =>
          generateText({
            model: scriptedModel('stub-writer-1', [
              { calls: [{ id: 'al_r1', tool: 'get_weather', input: { city: job.city } }], usage: [40, 8] },
              { text: REPORT, usage: [65, 12] },
            ]),
            system: 'You are the report writer. Call get_weather, then write the report.',
            prompt: job.task,
            tools: {
              get_weather: tool({
                description: 'Get the current weather for a city',
                inputSchema: z.object({ city: z.string() }),
                execute: async ({ city }) => getWeather(city),
              }),
            },
            stopWhen: stepCountIs(3),
            experimental_telemetry: agentTelemetry('report_writer', aiTracer),
          }),
        );
        return result.text;
      } finally {
        span.end();
      }
    },
  );
  if (report !== REPORT) {
    throw new Error(`unexpected report ${JSON.stringify(report)}`);
  }
  return report;
});
