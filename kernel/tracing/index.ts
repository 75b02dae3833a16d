import {
  context,
  isSpanContextValid,
  propagation,
  ROOT_CONTEXT,
  SpanStatusCode,
  trace,
  TraceFlags,
  type Context,
  type Span,
  type SpanOptions,
  type TimeInput,
} from '@opentelemetry/api';

/**
 * Spans of our own (jobs, LLM calls, webhook attempts) through @opentelemetry/api alone. Without
 * the SDK (no OTLP endpoint; see ./sdk.ts) the API is a no-op and `inSpan` runs its function bare,
 * so tracing costs nothing when it is off.
 */

const tracer = trace.getTracer('automation-platform');
let shutdown: (() => Promise<void>) | undefined;

/** Called once by ./register.ts when the SDK has started. */
export function setTracingShutdown(fn: () => Promise<void>): void {
  shutdown = fn;
}

/** Exports the spans still buffered and stops the SDK (a draining process); nothing when tracing is off. */
export async function stopTracing(): Promise<void> {
  const fn = shutdown;
  shutdown = undefined;
  await fn?.().catch((err: unknown) => process.stderr.write(`trace export on shutdown failed: ${String(err)}\n`));
}

/** The W3C `traceparent` of the active span, to carry the trace across a process boundary; null when none. */
export function currentTraceparent(): string | null {
  if (!trace.getActiveSpan()) return null;
  const carrier: Record<string, string> = {};
  propagation.inject(context.active(), carrier);
  return carrier.traceparent ?? null;
}

/** Whether the SDK runs in this process (an OTLP endpoint is set): spans are made and exported. */
export function tracingOn(): boolean {
  return shutdown !== undefined;
}

/**
 * The trace id of the active span when that trace is recorded (tracing on and the trace sampled),
 * so that an answer or a row can name a trace one can open; undefined otherwise.
 */
export function currentTraceId(): string | undefined {
  if (!shutdown) return undefined;
  const span = trace.getActiveSpan()?.spanContext();
  return span && isSpanContextValid(span) && span.traceFlags & TraceFlags.SAMPLED ? span.traceId : undefined;
}

/**
 * A span for something that already happened (an orchestration stage from its start to now, a
 * rollout step): started at `startTime`, ended at once, under the active context or `parent`.
 */
export function recordSpan(name: string, options: SpanOptions & { startTime: TimeInput; failed?: string }, parent?: Context): void {
  if (!shutdown) return;
  const { failed, ...spanOptions } = options;
  const span = tracer.startSpan(name, spanOptions, parent ?? context.active());
  if (failed) span.setStatus({ code: SpanStatusCode.ERROR, message: failed });
  span.end();
}

/** The trace id a stored `traceparent` names when that trace was recorded (its sampled flag set); null otherwise. */
export function traceIdOf(traceparent: string | null | undefined): string | null {
  const match = traceparent ? /^[\da-f]{2}-([\da-f]{32})-[\da-f]{16}-([\da-f]{2})$/.exec(traceparent) : null;
  return match && parseInt(match[2]!, 16) & 1 ? match[1]! : null;
}

/** The context a stored `traceparent` continues (the root context when there is none). */
export function contextOf(traceparent: string | null | undefined): Context {
  return traceparent ? propagation.extract(ROOT_CONTEXT, { traceparent }) : ROOT_CONTEXT;
}

/**
 * Runs `fn` inside a new active span (a child of `parent`, by default the active context) and ends
 * it with fn's outcome: a thrown error is recorded on the span and rethrown.
 */
export function inSpan<T>(name: string, options: SpanOptions, fn: (span: Span | undefined) => Promise<T>, parent?: Context): Promise<T> {
  if (!shutdown) return fn(undefined);
  return tracer.startActiveSpan(name, options, parent ?? context.active(), async (span) => {
    try {
      return await fn(span);
    } catch (err) {
      span.recordException(err instanceof Error ? err : String(err));
      span.setStatus({ code: SpanStatusCode.ERROR, message: err instanceof Error ? err.message : String(err) });
      throw err;
    } finally {
      span.end();
    }
  });
}
