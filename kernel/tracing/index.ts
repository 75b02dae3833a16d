import { context, propagation, ROOT_CONTEXT, SpanStatusCode, trace, type Context, type Span, type SpanOptions } from '@opentelemetry/api';

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
