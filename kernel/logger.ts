import { trace } from '@opentelemetry/api';

/**
 * A small structured logger: one JSON line per event on stderr, level from LOG_LEVEL. A line
 * written inside a span carries its trace_id and span_id, so logs and traces join.
 */
export type LogLevel = 'debug' | 'info' | 'warn' | 'error' | 'silent';
const ORDER: Record<LogLevel, number> = { debug: 10, info: 20, warn: 30, error: 40, silent: 100 };

export interface Logger {
  debug(msg: string, fields?: Record<string, unknown>): void;
  info(msg: string, fields?: Record<string, unknown>): void;
  warn(msg: string, fields?: Record<string, unknown>): void;
  error(msg: string, fields?: Record<string, unknown>): void;
  child(fields: Record<string, unknown>): Logger;
}

export function createLogger(level: LogLevel = 'info', base: Record<string, unknown> = {}): Logger {
  const min = ORDER[level];
  const write = (lvl: LogLevel, msg: string, fields?: Record<string, unknown>) => {
    if (ORDER[lvl] < min) return;
    const extra = fields ? normalize(fields) : undefined;
    // Without the tracing SDK there is never an active span: one context lookup, nothing added.
    const span = trace.getActiveSpan()?.spanContext();
    const ids = span ? { trace_id: span.traceId, span_id: span.spanId } : undefined;
    process.stderr.write(JSON.stringify({ time: new Date().toISOString(), level: lvl, msg, ...ids, ...base, ...extra }) + '\n');
  };
  return {
    debug: (m, f) => write('debug', m, f),
    info: (m, f) => write('info', m, f),
    warn: (m, f) => write('warn', m, f),
    error: (m, f) => write('error', m, f),
    child: (fields) => createLogger(level, { ...base, ...fields }),
  };
}

function normalize(fields: Record<string, unknown>): Record<string, unknown> {
  const out: Record<string, unknown> = {};
  for (const [k, v] of Object.entries(fields)) {
    out[k] = v instanceof Error ? { name: v.name, message: v.message, stack: v.stack } : v;
  }
  return out;
}
