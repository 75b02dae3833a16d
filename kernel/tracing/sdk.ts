/**
 * OpenTelemetry tracing, configured by the standard OTEL_* variables. Loaded only when an
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
 * Starts the tracer provider: spans for inbound and outbound HTTP (node:http and fetch),
 * PostgreSQL and Redis, batched to the OTLP exporter, W3C trace context propagated. The Node tracer
 * provider alone, not @opentelemetry/sdk-node, which loads every exporter it might use (gRPC,
 * metrics, logs) and so delays each process's start several-fold for nothing used here. Database
 * and Redis spans only inside a request or a job: the queue's polls and the event bus would
 * otherwise each make a trace. Statements are recorded with their placeholders, never their values.
 */
export function startTracing(env: NodeJS.ProcessEnv): { shutdown(): Promise<void> } {
  const logLevel = env.OTEL_LOG_LEVEL?.trim();
  if (logLevel) {
    // The SDK's own diagnostics (export failures, bad settings), silent unless asked for.
    const { diag, DiagConsoleLogger } = require('@opentelemetry/api') as typeof import('@opentelemetry/api');
    const { diagLogLevelFromString } = require('@opentelemetry/core') as typeof import('@opentelemetry/core');
    diag.setLogger(new DiagConsoleLogger(), { logLevel: diagLogLevelFromString(logLevel) });
  }
  const { NodeTracerProvider, BatchSpanProcessor } = require('@opentelemetry/sdk-trace-node') as typeof import('@opentelemetry/sdk-trace-node');
  const resources = require('@opentelemetry/resources') as typeof import('@opentelemetry/resources');
  const { HttpInstrumentation } = require('@opentelemetry/instrumentation-http') as typeof import('@opentelemetry/instrumentation-http');
  const { UndiciInstrumentation } = require('@opentelemetry/instrumentation-undici') as typeof import('@opentelemetry/instrumentation-undici');
  const { PgInstrumentation } = require('@opentelemetry/instrumentation-pg') as typeof import('@opentelemetry/instrumentation-pg');
  const { IORedisInstrumentation } = require('@opentelemetry/instrumentation-ioredis') as typeof import('@opentelemetry/instrumentation-ioredis');
  // OTEL_SERVICE_NAME and OTEL_RESOURCE_ATTRIBUTES (the environment detector) win over the default name.
  const resource = resources
    .defaultResource()
    .merge(resources.resourceFromAttributes({ 'service.name': 'automation-platform' }))
    .merge(resources.detectResources({ detectors: [resources.processDetector, resources.hostDetector, resources.envDetector] }));
  // The sampler (OTEL_TRACES_SAMPLER[_ARG]) and the batch's delays and sizes (OTEL_BSP_*) come from the environment.
  const provider = new NodeTracerProvider({ resource, spanProcessors: [new BatchSpanProcessor(traceExporter(env))] });
  provider.register(); // the async-hooks context manager, and W3C trace context and baggage propagators
  // Each instrumentation patches its module when it is constructed (enabled by default).
  for (const instrumentation of [
    new HttpInstrumentation({
      startIncomingSpanHook: (req) => queryAttributes(`http://${req.headers.host ?? 'localhost'}`, req.url ?? '/'),
      startOutgoingSpanHook: (o) =>
        queryAttributes(`${o.protocol ?? 'http:'}//${o.hostname ?? o.host ?? 'localhost'}${o.port ? `:${o.port}` : ''}`, o.path ?? '/'),
    }),
    new UndiciInstrumentation({ startSpanHook: (request) => queryAttributes(request.origin, request.path) }),
    new PgInstrumentation({ enhancedDatabaseReporting: false, requireParentSpan: true, ignoreConnectSpans: true }),
    new IORedisInstrumentation({ requireParentSpan: true }),
  ]) {
    instrumentation.setTracerProvider(provider);
  }
  return provider;
}

/**
 * A URL with every query value replaced by `REDACTED`: a workflow's query authentication, a
 * signed link or a webhook's token travels in the query, and spans leave the platform.
 */
export function redactQuery(url: string): string {
  const q = url.indexOf('?');
  if (q < 0) return url;
  const hash = url.indexOf('#', q);
  const query = url.slice(q + 1, hash < 0 ? undefined : hash);
  const redacted = query
    .split('&')
    .map((pair) => (pair.includes('=') ? `${pair.slice(0, pair.indexOf('='))}=REDACTED` : pair))
    .join('&');
  return `${url.slice(0, q)}?${redacted}${hash < 0 ? '' : url.slice(hash)}`;
}

/** Every attribute (older and current HTTP conventions) that holds a request's query, redacted; none without a query. */
function queryAttributes(origin: string, target: string): Record<string, string> {
  if (!target.includes('?')) return {};
  const redacted = redactQuery(target);
  return {
    'http.target': redacted,
    'http.url': origin + redacted,
    'url.full': origin + redacted,
    'url.query': redacted.slice(redacted.indexOf('?') + 1),
  };
}
