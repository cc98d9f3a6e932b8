// Tracing for the capture scripts: the OpenTelemetry JS SDK with an in-memory exporter, so
// the framework's own spans are written as one OTLP/JSON ExportTraceServiceRequest (the
// shape of testdata/traces/*.json) to the path given, without any network.

import { writeFileSync } from 'node:fs';

import { JsonTraceSerializer } from '@opentelemetry/otlp-transformer';
import { resourceFromAttributes } from '@opentelemetry/resources';
import { InMemorySpanExporter, SimpleSpanProcessor } from '@opentelemetry/sdk-trace-base';
import { NodeTracerProvider } from '@opentelemetry/sdk-trace-node';

/**
 * Runs body under a registered tracer provider and writes every span it produced to out.
 * @param {string} serviceName the resource's service.name
 * @param {string} out the OTLP/JSON file to write
 * @param {() => Promise<string>} body returns the final answer
 */
export async function capture(serviceName, out, body) {
  const exporter = new InMemorySpanExporter();
  const provider = new NodeTracerProvider({
    resource: resourceFromAttributes({ 'service.name': serviceName }),
    spanProcessors: [new SimpleSpanProcessor(exporter)],
  });
  provider.register();
  const answer = await body();
  await provider.forceFlush();
  const spans = exporter.getFinishedSpans();
  const json = new TextDecoder().decode(JsonTraceSerializer.serializeRequest(spans));
  writeFileSync(out, JSON.stringify(JSON.parse(json), null, 1) + '\n');
  await provider.shutdown();
  console.error(`${serviceName}: ${spans.length} spans to ${out}; answer: ${answer}`);
}
