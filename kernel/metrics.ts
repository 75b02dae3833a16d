import type { Principal } from './auth/principal';
import { AppError, errors, type FieldError } from './errors';
import type { RateLimiter } from './rate-limit';
import { one, rows, type Queryable } from './db/rows';
import { ownEntry } from './names';

/**
 * What the services that report metrics share: the period a request asks for,
 * run statistics over one of their own tables computed in SQL (percentiles with percentile_cont,
 * time buckets with every empty one filled), and the custom-query builder over a catalogue of
 * metrics each service declares for its own tables. Buckets are UTC; weeks start on Monday.
 */

export const GRANULARITIES = ['minute', 'hour', 'day', 'week', 'month'] as const;
export type Granularity = (typeof GRANULARITIES)[number];
export const AGGREGATIONS = ['avg', 'sum', 'count', 'min', 'max', 'p50', 'p95', 'p99'] as const;
export type Aggregation = (typeof AGGREGATIONS)[number];

const MAX_BUCKETS = 2000;

/** Requests per minute and key to each metrics endpoint. */
export const METRICS_PER_MINUTE = { agents: 10, workflows: 10, orchestrations: 10, health: 60, resources: 10, costs: 10, query: 5 } as const;

/** Counts one request of a key to a metrics endpoint: 429 RATE_LIMIT_EXCEEDED (with retryAfter) beyond its limit. */
export async function limitMetrics(limiter: RateLimiter, principal: Principal, endpoint: keyof typeof METRICS_PER_MINUTE): Promise<void> {
  if (principal.kind !== 'apiKey') return;
  await limiter.consumeNamed(`metrics.${endpoint}`, principal.keyId, METRICS_PER_MINUTE[endpoint], 60, principal.tier);
}
const BUCKET_MS: Record<Granularity, number> = { minute: 60_000, hour: 3_600_000, day: 86_400_000, week: 7 * 86_400_000, month: 28 * 86_400_000 };

export interface Period {
  start: Date;
  end: Date;
  granularity: Granularity;
}

/**
 * `startDate`/`endDate` as ISO 8601 dates or date-times; a date-only `endDate` includes its whole
 * day. 400 validation_error naming the field when one is missing, malformed, or not in order.
 */
export function parsePeriod(startDate: unknown, endDate: unknown, granularity: unknown, allowed: readonly Granularity[], fallback: Granularity): Period {
  const problems: FieldError[] = [];
  const start = parseInstant(startDate, false);
  const end = parseInstant(endDate, true);
  if (!start) problems.push({ field: 'startDate', message: 'is required: an ISO 8601 date or date-time' });
  if (!end) problems.push({ field: 'endDate', message: 'is required: an ISO 8601 date or date-time' });
  const g = (granularity ?? fallback) as Granularity;
  if (!allowed.includes(g)) problems.push({ field: 'granularity', message: `must be one of ${allowed.join(', ')}` });
  if (start && end && end <= start) problems.push({ field: 'endDate', message: 'must be after startDate' });
  if (!problems.length && (end!.getTime() - start!.getTime()) / BUCKET_MS[g] > MAX_BUCKETS) {
    problems.push({
      field: 'granularity',
      message: `the period holds more than ${MAX_BUCKETS} ${g} buckets: choose a coarser granularity or a shorter period`,
    });
  }
  if (problems.length) throw errors.validation(problems);
  return { start: start!, end: end!, granularity: g };
}

function parseInstant(v: unknown, endOfDay: boolean): Date | null {
  if (typeof v !== 'string' || !v) return null;
  if (/^\d{4}-\d{2}-\d{2}$/.test(v)) {
    const d = new Date(`${v}T00:00:00.000Z`);
    if (Number.isNaN(d.getTime())) return null;
    return endOfDay ? new Date(d.getTime() + 86_400_000) : d;
  }
  if (!/^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}(:\d{2}(\.\d{1,6})?)?(Z|[+-]\d{2}:?\d{2})$/.test(v)) return null;
  const d = new Date(v);
  return Number.isNaN(d.getTime()) ? null : d;
}

/** One service's table of runs (agent tasks, workflow executions), as SQL fragments over alias `t`. */
export interface RunSource {
  table: string;
  /** The instant a run belongs to a bucket by. */
  at: string;
  /** Runs that ended (counted in the figures). */
  finished: string;
  ok: string;
  failed: string;
  /** Milliseconds. */
  durationMs: string;
  /** The error code of a failed run. */
  errorCode: string;
}

export interface RunSummary {
  totalExecutions: number;
  successfulExecutions: number;
  failedExecutions: number;
  successRate: number;
  averageDuration: number;
  p50Duration: number;
  p95Duration: number;
  p99Duration: number;
  totalProcessingTime: number;
}

export interface RunBucket {
  timestamp: Date;
  executions: number;
  successful: number;
  failed: number;
  averageDuration: number;
  totalDuration: number;
}

interface SummaryRow {
  total: number;
  ok: number;
  failed: number;
  avg: number;
  sum: number;
  p50: number;
  p95: number;
  p99: number;
}
interface BucketRow {
  timestamp: Date;
  executions: number;
  successful: number;
  failed: number;
  avg: number;
  sum: number;
}

/**
 * Summary, buckets and error breakdown of the finished runs of `src` in the period, narrowed by
 * `where` (SQL over `t`, its parameters from $3 on in `params`). Durations in seconds.
 */
export async function runStatistics(db: Queryable, src: RunSource, period: Period, where: string, params: unknown[]) {
  const base = `FROM ${src.table} t WHERE ${src.at} >= $1 AND ${src.at} < $2 AND ${src.finished}${where ? ` AND ${where}` : ''}`;
  const args = [period.start, period.end, ...params];
  const s = (await one<SummaryRow>(
    db,
    `SELECT count(*)::int AS total, count(*) FILTER (WHERE ${src.ok})::int AS ok, count(*) FILTER (WHERE ${src.failed})::int AS failed,
            coalesce(avg(${src.durationMs}), 0)::float8 AS avg, coalesce(sum(${src.durationMs}), 0)::float8 AS sum,
            coalesce(percentile_cont(0.5) WITHIN GROUP (ORDER BY ${src.durationMs}), 0)::float8 AS p50,
            coalesce(percentile_cont(0.95) WITHIN GROUP (ORDER BY ${src.durationMs}), 0)::float8 AS p95,
            coalesce(percentile_cont(0.99) WITHIN GROUP (ORDER BY ${src.durationMs}), 0)::float8 AS p99
       ${base}`,
    args,
  ))!;
  const g = period.granularity;
  const buckets = await rows<BucketRow>(
    db,
    `WITH b AS (SELECT generate_series(date_trunc('${g}', $1::timestamptz AT TIME ZONE 'UTC'), ($2::timestamptz AT TIME ZONE 'UTC') - interval '1 microsecond', interval '1 ${g}') AS at),
          r AS (SELECT date_trunc('${g}', ${src.at} AT TIME ZONE 'UTC') AS at, (${src.ok}) AS ok, (${src.failed}) AS failed, ${src.durationMs} AS ms ${base})
     SELECT b.at AT TIME ZONE 'UTC' AS timestamp, count(r.at)::int AS executions, count(*) FILTER (WHERE r.ok)::int AS successful,
            count(*) FILTER (WHERE r.failed)::int AS failed, coalesce(avg(r.ms), 0)::float8 AS avg, coalesce(sum(r.ms), 0)::float8 AS sum
       FROM b LEFT JOIN r ON r.at = b.at GROUP BY b.at ORDER BY b.at`,
    args,
  );
  const errorRows = await rows<{ code: string; n: number }>(
    db,
    `SELECT coalesce(${src.errorCode}, 'UNKNOWN') AS code, count(*)::int AS n ${base} AND ${src.failed} GROUP BY 1 ORDER BY 2 DESC, 1`,
    args,
  );
  const summary: RunSummary = {
    totalExecutions: s.total,
    successfulExecutions: s.ok,
    failedExecutions: s.failed,
    successRate: percent(s.ok, s.total),
    averageDuration: seconds(s.avg),
    p50Duration: seconds(s.p50),
    p95Duration: seconds(s.p95),
    p99Duration: seconds(s.p99),
    totalProcessingTime: seconds(s.sum),
  };
  const timeseries: RunBucket[] = buckets.map((b) => ({
    timestamp: b.timestamp,
    executions: b.executions,
    successful: b.successful,
    failed: b.failed,
    averageDuration: seconds(b.avg),
    totalDuration: seconds(b.sum),
  }));
  const errorBreakdown = errorRows.map((e) => ({ errorCode: e.code, count: e.n, percentage: percent(e.n, s.failed) }));
  return { summary, timeseries, errorBreakdown, where: base, args };
}

export const percent = (part: number, whole: number) => (whole > 0 ? round((part / whole) * 100, 2) : 0);
export const seconds = (ms: number) => round(ms / 1000, 3);
export const round = (n: number, digits: number) => Math.round(n * 10 ** digits) / 10 ** digits;

// ---- custom queries ---------------------------------------------------------------------------

/** A metric of the custom query: a value per row of one table, the fields it may be filtered and grouped by. */
export interface MetricDef {
  description: string;
  table: string;
  /** The instant of a row (for timeRange). */
  at: string;
  /** SQL value per row (a rate is 100 or 0 per row, so avg gives the percentage). */
  value: string;
  /** Field name -> SQL expression (all over alias `t`). */
  fields: Record<string, string>;
}

export interface MetricsQuery {
  metric: string;
  filters?: Record<string, unknown> | null;
  aggregation: string;
  groupBy?: string[] | null;
  timeRange: { start: string; end: string };
}

const AGG_SQL: Record<Aggregation, (v: string) => string> = {
  avg: (v) => `avg(${v})`,
  sum: (v) => `sum(${v})`,
  count: (v) => `count(${v})`,
  min: (v) => `min(${v})`,
  max: (v) => `max(${v})`,
  p50: (v) => `percentile_cont(0.5) WITHIN GROUP (ORDER BY ${v})`,
  p95: (v) => `percentile_cont(0.95) WITHIN GROUP (ORDER BY ${v})`,
  p99: (v) => `percentile_cont(0.99) WITHIN GROUP (ORDER BY ${v})`,
};

/**
 * Checks a custom query against `catalog` (every problem at once, with the allowed values);
 * `elsewhere` names the metrics another service answers, listed among the allowed ones.
 */
export function checkMetricsQuery(
  q: MetricsQuery,
  catalog: Record<string, MetricDef>,
  elsewhere: readonly string[] = [],
): { def: MetricDef; start: Date; end: Date } {
  const problems: FieldError[] = [];
  const details: Record<string, unknown> = {};
  const def = ownEntry(catalog, q.metric);
  if (!def) {
    problems.push({ field: 'metric', message: `unknown metric "${q.metric}"` });
    details.allowedMetrics = [...Object.keys(catalog), ...elsewhere];
  }
  if (!AGGREGATIONS.includes(q.aggregation as Aggregation)) {
    problems.push({ field: 'aggregation', message: `must be one of ${AGGREGATIONS.join(', ')}` });
    details.allowedAggregations = AGGREGATIONS;
  }
  if (def) {
    const fields = Object.keys(def.fields);
    for (const f of Object.keys(q.filters ?? {})) if (!fields.includes(f)) problems.push({ field: `filters.${f}`, message: `unknown field for ${q.metric}` });
    for (const [f, v] of Object.entries(q.filters ?? {})) {
      if (
        fields.includes(f) &&
        !(typeof v === 'string' || typeof v === 'number' || typeof v === 'boolean' || (Array.isArray(v) && v.every((x) => typeof x === 'string')))
      ) {
        problems.push({ field: `filters.${f}`, message: 'must be a string, number, boolean or a list of strings' });
      }
    }
    for (const f of q.groupBy ?? []) if (!fields.includes(f)) problems.push({ field: 'groupBy', message: `unknown field "${f}" for ${q.metric}` });
    if (problems.some((p) => p.field.startsWith('filters.') || p.field === 'groupBy')) details.allowedFields = fields;
  }
  if ((q.groupBy ?? []).length > 5) problems.push({ field: 'groupBy', message: 'at most 5 fields' });
  let start: Date | null = null;
  let end: Date | null = null;
  try {
    ({ start, end } = parsePeriod(q.timeRange?.start, q.timeRange?.end, 'day', ['day'], 'day'));
  } catch (err) {
    for (const e of ((err as AppError).details.errors as FieldError[]) ?? []) {
      problems.push({ field: `timeRange.${e.field === 'startDate' ? 'start' : e.field === 'endDate' ? 'end' : e.field}`, message: e.message });
    }
  }
  if (problems.length) throw new AppError('validation_error', problems.map((p) => `${p.field}: ${p.message}`).join('; '), { errors: problems, ...details });
  return { def: def!, start: start!, end: end! };
}

/** Runs a checked custom query: one row per group with the group's fields and `value`. */
export async function runMetricsQuery(db: Queryable, q: MetricsQuery, catalog: Record<string, MetricDef>) {
  const { def, start, end } = checkMetricsQuery(q, catalog);
  const params: unknown[] = [start, end];
  const where = [`${def.at} >= $1`, `${def.at} < $2`];
  for (const [f, v] of Object.entries(q.filters ?? {})) {
    if (Array.isArray(v)) where.push(`(${def.fields[f]})::text = ANY($${params.push(v)}::text[])`);
    else where.push(`(${def.fields[f]})::text = $${params.push(String(v))}`);
  }
  const groups = q.groupBy ?? [];
  const select = groups.map((f, i) => `${def.fields[f]} AS g${i}`);
  const found = await rows<Record<string, unknown> & { value: number | null }>(
    db,
    `SELECT ${[...select, `${AGG_SQL[q.aggregation as Aggregation](def.value)}::float8 AS value`].join(', ')}
       FROM ${def.table} t WHERE ${where.join(' AND ')}
       ${groups.length ? `GROUP BY ${groups.map((_, i) => `g${i}`).join(', ')} ORDER BY ${groups.map((_, i) => `g${i}`).join(', ')}` : ''}`,
    params,
  );
  return {
    metric: q.metric,
    aggregation: q.aggregation,
    results: found.map((r) => ({
      ...Object.fromEntries(groups.map((f, i) => [f, r[`g${i}`]])),
      value: r.value === null ? 0 : round(r.value, 4),
    })),
    timeRange: { start, end },
  };
}
