// Tracing for the scenarios: the OpenTelemetry JS SDK (NodeTracerProvider, batch span
// processor, OTLP/HTTP protobuf exporter) registered as the global provider, so each
// framework's own instrumentation exports through it. The exporter is wrapped to record
// which spans the collector acknowledged; finish() flushes, shuts the provider down and
// prints them as one JSON line on stdout for the Go test (logs go to stderr). A scenario
// of two services adds a second provider; a framework with its own span processor (Mastra)
// exports through a recording exporter of the same kind.

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
            service: s.resource?.attributes?.['service.name'] ?? '',
            links: (s.links ?? []).map((l) => ({ trace_id: l.context.traceId, span_id: l.context.spanId })),
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

/** Reads and checks OTEL_EXPORTER_OTLP_ENDPOINT; returns the traces URL. */
function tracesURL() {
  const endpoint = process.env.OTEL_EXPORTER_OTLP_ENDPOINT;
  if (!endpoint) {
    throw new Error('OTEL_EXPORTER_OTLP_ENDPOINT is not set (e.g. http://127.0.0.1:4318)');
  }
  const url = endpoint.replace(/\/+$/, '') + '/v1/traces';
  const host = new URL(url).hostname.replace(/^\[|\]$/g, '');
  if (!LOOPBACK.has(host)) {
    throw new Error(`OTEL_EXPORTER_OTLP_ENDPOINT ${endpoint}: the scenarios export to loopback only`);
  }
  return url;
}

function newProvider(serviceName, exporter) {
  return new NodeTracerProvider({
    resource: resourceFromAttributes({ 'service.name': serviceName }),
    spanProcessors: [new BatchSpanProcessor(exporter, { maxExportBatchSize: 512, scheduledDelayMillis: 200 })],
  });
}

/**
 * Registers the global tracer provider for a scenario. Call before the framework runs.
 * @param {string} serviceName the resource's service.name
 * @param {{register?: boolean}} options register: false keeps the provider off the global
 *   API (for a framework whose unrelated internal tracing would otherwise export through it)
 */
export function setupTracing(serviceName, { register = true } = {}) {
  const url = tracesURL();
  const exporters = [];
  const recording = () => {
    const e = new RecordingExporter(new OTLPTraceExporter({ url, timeoutMillis: 10_000 }));
    exporters.push(e);
    return e;
  };
  const provider = newProvider(serviceName, recording());
  if (register) {
    provider.register(); // global tracer provider, AsyncLocalStorage context manager, W3C propagators
  }
  const providers = [provider];
  const watchdog = setTimeout(() => {
    console.error(`scenario ${serviceName}: still running after ${WATCHDOG_MS} ms; exiting`);
    process.exit(3);
  }, WATCHDOG_MS);
  watchdog.unref();

  return {
    /**
     * A second tracer provider, for another service of the same scenario (its own
     * service.name resource, exporting to the same endpoint). It is not registered: pass
     * provider.getTracer(...) to the code of that service. The context manager and the
     * propagators stay the global ones.
     */
    serviceProvider(name) {
      const p = newProvider(name, recording());
      providers.push(p);
      return p;
    },

    /**
     * A span exporter for a framework that runs its own span processor (Mastra): what it
     * exports reaches the endpoint and is listed in the summary like the rest. The
     * framework must have shut its processor down before finish().
     */
    recordingExporter: recording,

    /** Exports every ended span now (e.g. before a later job of the scenario starts). */
    async flush() {
      for (const p of providers) {
        await p.forceFlush();
      }
    },

    /**
     * Flushes and shuts the providers down, prints the summary line and exits: 0 when every
     * span was acknowledged by the collector and the scenario itself succeeded.
     */
    async finish(outcome) {
      let code = outcome.error ? 1 : 0;
      for (const p of providers) {
        try {
          await p.forceFlush();
          await p.shutdown();
        } catch (err) {
          exporters[0].failures.push(`shutdown: ${err?.message ?? err}`);
        }
      }
      const failures = exporters.flatMap((e) => e.failures);
      const sent = exporters.flatMap((e) => e.sent);
      if (failures.length > 0 || sent.length === 0) {
        code = 1;
      }
      const summary = {
        service_name: serviceName,
        endpoint: url,
        answer: outcome.answer ?? '',
        error: outcome.error ? String(outcome.error?.stack ?? outcome.error) : '',
        export_failures: failures,
        spans: sent,
      };
      process.stdout.write(JSON.stringify(summary) + '\n', () => process.exit(code));
    },
  };
}

/**
 * Runs a scenario body and finishes tracing whatever happens.
 * @param {string} serviceName
 * @param {(tracing: ReturnType<typeof setupTracing>) => Promise<string>} body returns the final answer
 * @param {{register?: boolean}} [options] see setupTracing
 */
export async function runScenario(serviceName, body, options) {
  const tracing = setupTracing(serviceName, options);
  let outcome;
  try {
    outcome = { answer: await body(tracing) };
  } catch (error) {
    console.error(error);
    outcome = { error };
  }
  await tracing.finish(outcome);
}
