import type { NodeSDK } from '@opentelemetry/sdk-node';

/**
 * The OpenTelemetry Node SDK, configured by the standard OTEL_* variables. Loaded only when an
 * OTLP endpoint is set (tracingWanted): without one the process never loads the SDK nor patches a
 * module, and the @opentelemetry/api calls elsewhere stay no-ops.
 */

/** An endpoint is set and the SDK is not disabled: the only case in which traces are exported. */
export function tracingWanted(env: NodeJS.ProcessEnv): boolean {
  const endpoint = env.OTEL_EXPORTER_OTLP_TRACES_ENDPOINT?.trim() || env.OTEL_EXPORTER_OTLP_ENDPOINT?.trim();
  const disabled = env.OTEL_SDK_DISABLED?.trim().toLowerCase() === 'true';
  return Boolean(endpoint) && !disabled && env.OTEL_TRACES_EXPORTER?.trim() !== 'none';
}

/**
 * OTLP over HTTP in JSON or protobuf (OTEL_EXPORTER_OTLP_[TRACES_]PROTOCOL, protobuf by default as
 * the specification says). The exporters read the endpoint, headers and timeout variables themselves.
 */
function traceExporter(env: NodeJS.ProcessEnv) {
  const protocol = (env.OTEL_EXPORTER_OTLP_TRACES_PROTOCOL ?? env.OTEL_EXPORTER_OTLP_PROTOCOL ?? '').trim() || 'http/protobuf';
  if (protocol === 'http/json') {
    const { OTLPTraceExporter } = require('@opentelemetry/exporter-trace-otlp-http') as typeof import('@opentelemetry/exporter-trace-otlp-http');
    return new OTLPTraceExporter();
  }
  if (protocol !== 'http/protobuf') process.stderr.write(`OTEL_EXPORTER_OTLP_PROTOCOL=${protocol} is not supported; using http/protobuf\n`);
  const { OTLPTraceExporter } = require('@opentelemetry/exporter-trace-otlp-proto') as typeof import('@opentelemetry/exporter-trace-otlp-proto');
  return new OTLPTraceExporter();
}

/**
 * Starts the SDK: spans for inbound and outbound HTTP (node:http and fetch), PostgreSQL and Redis,
 * W3C trace context propagated (the SDK's default propagators). Database and Redis spans only
 * inside a request or a job: the queue's polls and the event bus would otherwise each make a trace.
 * Statements are recorded with their placeholders, never their values.
 */
export function startTracing(env: NodeJS.ProcessEnv): NodeSDK {
  const { NodeSDK } = require('@opentelemetry/sdk-node') as typeof import('@opentelemetry/sdk-node');
  const { HttpInstrumentation } = require('@opentelemetry/instrumentation-http') as typeof import('@opentelemetry/instrumentation-http');
  const { UndiciInstrumentation } = require('@opentelemetry/instrumentation-undici') as typeof import('@opentelemetry/instrumentation-undici');
  const { PgInstrumentation } = require('@opentelemetry/instrumentation-pg') as typeof import('@opentelemetry/instrumentation-pg');
  const { IORedisInstrumentation } = require('@opentelemetry/instrumentation-ioredis') as typeof import('@opentelemetry/instrumentation-ioredis');
  const sdk = new NodeSDK({
    // OTEL_SERVICE_NAME (read by the SDK's environment detector) wins over this default.
    serviceName: env.OTEL_SERVICE_NAME?.trim() ? undefined : 'automation-platform',
    traceExporter: traceExporter(env),
    // Traces only: no metric readers or log processors are set up from the OTEL_* defaults.
    metricReaders: [],
    logRecordProcessors: [],
    instrumentations: [
      new HttpInstrumentation(),
      new UndiciInstrumentation(),
      new PgInstrumentation({ enhancedDatabaseReporting: false, requireParentSpan: true, ignoreConnectSpans: true }),
      new IORedisInstrumentation({ requireParentSpan: true }),
    ],
  });
  sdk.start();
  return sdk;
}
