// Tracing for the scenarios: the OpenTelemetry JS SDK (NodeTracerProvider, batch span
// processor, OTLP/HTTP protobuf exporter) registered as the global provider, so each
// framework's own instrumentation exports through it. The exporter is wrapped to record
// which spans the collector acknowledged; finish() flushes, shuts the provider down and
// prints them as one JSON line on stdout for the Go test (logs go to stderr).

import net from 'node:net';

import { OTLPTraceExporter } from '@opentelemetry/exporter-trace-otlp-proto';
import { resourceFromAttributes } from '@opentelemetry/resources';
import { BatchSpanProcessor } from '@opentelemetry/sdk-trace-base';
import { NodeTracerProvider } from '@opentelemetry/sdk-trace-node';

const LOOPBACK = new Set(['127.0.0.1', 'localhost', '::1']);
const WATCHDOG_MS = 30_000;

// The scenarios run offline: any connection off loopback is a bug (a real model client, a
// cloud metadata probe, ...), so refuse it before it reaches DNS.
const connect = net.Socket.prototype.connect;
net.Socket.prototype.connect = function guardedConnect(...args) {
  const opts = typeof args[0] === 'object' && args[0] !== null ? args[0] : { port: args[0], host: typeof args[1] === 'string' ? args[1] : undefined };
  if (opts.path === undefined && !LOOPBACK.has(opts.host ?? 'localhost')) {
    throw new Error(`scenario tried to connect to ${opts.host}:${opts.port}; only loopback is allowed`);
  }
  return connect.apply(this, args);
};

class RecordingExporter {
  constructor(inner) {
    this.inner = inner;
    this.sent = [];
    this.failures = [];
  }

  export(spans, done) {
    this.inner.export(spans, (result) => {
      if (result.code === 0) {
        for (const s of spans) {
          const ctx = s.spanContext();
          this.sent.push({
            trace_id: ctx.traceId,
            span_id: ctx.spanId,
            parent_span_id: s.parentSpanContext?.spanId ?? '',
            name: s.name,
            scope: s.instrumentationScope?.name ?? '',
          });
        }
      } else {
        this.failures.push(`${spans.length} spans: ${result.error?.message ?? result.error ?? 'export failed'}`);
      }
      done(result);
    });
  }

  forceFlush() {
    return this.inner.forceFlush ? this.inner.forceFlush() : Promise.resolve();
  }

  shutdown() {
    return this.inner.shutdown();
  }
}

/**
 * Registers the global tracer provider for a scenario. Call before the framework runs.
 * @param {string} serviceName the resource's service.name
 */
export function setupTracing(serviceName) {
  const endpoint = process.env.OTEL_EXPORTER_OTLP_ENDPOINT;
  if (!endpoint) {
    throw new Error('OTEL_EXPORTER_OTLP_ENDPOINT is not set (e.g. http://127.0.0.1:4318)');
  }
  const url = endpoint.replace(/\/+$/, '') + '/v1/traces';
  const host = new URL(url).hostname.replace(/^\[|\]$/g, '');
  if (!LOOPBACK.has(host)) {
    throw new Error(`OTEL_EXPORTER_OTLP_ENDPOINT ${endpoint}: the scenarios export to loopback only`);
  }
  const exporter = new RecordingExporter(new OTLPTraceExporter({ url, timeoutMillis: 10_000 }));
  const provider = new NodeTracerProvider({
    resource: resourceFromAttributes({ 'service.name': serviceName }),
    spanProcessors: [new BatchSpanProcessor(exporter, { maxExportBatchSize: 512, scheduledDelayMillis: 200 })],
  });
  provider.register(); // global tracer provider, AsyncLocalStorage context manager, W3C propagators
  const watchdog = setTimeout(() => {
    console.error(`scenario ${serviceName}: still running after ${WATCHDOG_MS} ms; exiting`);
    process.exit(3);
  }, WATCHDOG_MS);
  watchdog.unref();

  return {
    /**
     * Flushes and shuts the provider down, prints the summary line and exits: 0 when every
     * span was acknowledged by the collector and the scenario itself succeeded.
     */
    async finish(outcome) {
      let code = outcome.error ? 1 : 0;
      try {
        await provider.forceFlush();
        await provider.shutdown();
      } catch (err) {
        exporter.failures.push(`shutdown: ${err?.message ?? err}`);
      }
      if (exporter.failures.length > 0 || exporter.sent.length === 0) {
        code = 1;
      }
      const summary = {
        service_name: serviceName,
        endpoint: url,
        answer: outcome.answer ?? '',
        error: outcome.error ? String(outcome.error?.stack ?? outcome.error) : '',
        export_failures: exporter.failures,
        spans: exporter.sent,
      };
      process.stdout.write(JSON.stringify(summary) + '\n', () => process.exit(code));
    },
  };
}

/**
 * Runs a scenario body and finishes tracing whatever happens.
 * @param {string} serviceName
 * @param {() => Promise<string>} body returns the final answer
 */
export async function runScenario(serviceName, body) {
  const tracing = setupTracing(serviceName);
  let outcome;
  try {
    outcome = { answer: await body() };
  } catch (error) {
    console.error(error);
    outcome = { error };
  }
  await tracing.finish(outcome);
}
