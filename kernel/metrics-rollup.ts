import { exec, one, rows, type Queryable } from './db/rows';
import { Tally } from './db/tally';
import { percent, seconds, type Period, type RunBucket, type RunSource, type RunSummary } from './metrics';

/**
 * Run statistics (kernel/metrics.ts `runStatistics`) from hourly rollups, with the same exact answer
 * as reading every run: whole hours come from trigger-kept tallies (kernel/db/tally.ts), the partial
 * hours at a period's edges from the raw runs.
 *
 * A percentile is located in the duration histogram (BOUNDS buckets, daily and hourly); only the runs
 * of the bucket holding its rank are read, in index order, to take the exact value.
 */

/**
 * Duration bucket bounds (ms), HDR-style: every millisecond below 16, then 16 equal steps per
 * power of two up to 2^30. Bucket i (width_bucket) holds BOUNDS[i-1] <= d < BOUNDS[i]; 0 holds
 * durations below 0 (none).
 */
export const BOUNDS: readonly number[] = (() => {
  const out: number[] = [];
  for (let d = 0; d < 16; d++) out.push(d);
  for (let e = 4; e < 30; e++) for (let i = 0; i < 16; i++) out.push(2 ** e + i * 2 ** (e - 4));
  out.push(2 ** 30);
  return out;
})();
const BOUNDS_SQL = `'{${BOUNDS.join(',')}}'::int[]`;

/** What a rollup of a run table adds to its RunSource. */
export interface RollupSource extends RunSource {
  /** The tables' base name (`control_plane.tasks_runs` gives `…_runs_tally` and `…_runs_hist_tally`). */
  name: string;
  /** The column the statistics may be narrowed to one value of (`agent_id`). */
  filter: string;
  /** The column of the breakdown (`task_type`). */
  breakdown: string;
  /** The index (partial on `finished`) of the durations in order with `at` and the filter column, for the percentile reads. */
  durationIndex: string;
}

export interface RolledStatistics {
  summary: RunSummary;
  timeseries: RunBucket[];
  errorBreakdown: { errorCode: string; count: number; percentage: number }[];
  breakdown: { value: string; n: number; ok: number; avg: number }[];
}

const HOUR_MS = 3_600_000;
const DAY_MS = 24 * HOUR_MS;

/** A run's rollup keys as SQL over the run `t`: what the tallies' triggers store and the raw edge reads compute alike. */
function runKeys(src: RollupSource) {
  return {
    outcome: `CASE WHEN ${src.ok} THEN 'ok' WHEN ${src.failed} THEN 'failed' ELSE 'other' END`,
    errorCode: `CASE WHEN ${src.failed} THEN coalesce(${src.errorCode}, 'UNKNOWN') ELSE '' END`,
    bucket: `width_bucket(${src.durationMs}, ${BOUNDS_SQL})`,
  };
}

export class RunRollup {
  readonly runs: Tally;
  readonly hourly: Tally;
  readonly daily: Tally;
  private readonly keys: ReturnType<typeof runKeys>;

  constructor(readonly src: RollupSource) {
    this.keys = runKeys(src);
    const hour = `date_trunc('hour', ${src.at} AT TIME ZONE 'UTC')`;
    this.runs = new Tally(src.table, ['hour', 'filter_value', 'breakdown_value', 'outcome', 'error_code'], {
      name: `${src.name}_runs`,
      keyExpressions: {
        filter_value: `t.${src.filter}`,
        breakdown_value: `t.${src.breakdown}`,
        hour,
        outcome: this.keys.outcome,
        error_code: this.keys.errorCode,
      },
      sums: { timed: `(${src.durationMs} IS NOT NULL)::int`, duration_sum: `coalesce(${src.durationMs}, 0)` },
      where: src.finished,
    });
    const histogram = (name: string, time: string) =>
      new Tally(src.table, [time, 'filter_value', 'bucket'], {
        name: `${src.name}_${name}`,
        keyExpressions: {
          filter_value: `t.${src.filter}`,
          [time]: `date_trunc('${time}', ${src.at} AT TIME ZONE 'UTC')`,
          bucket: this.keys.bucket,
        },
        where: `${src.finished} AND ${src.durationMs} IS NOT NULL`,
      });
    this.hourly = histogram('durations', 'hour');
    this.daily = histogram('durations_daily', 'day');
  }

  /** Every tally of the rollup (to fold). */
  get tallies(): Tally[] {
    return [this.runs, this.hourly, this.daily];
  }

  /** The migration: the tallies (the runs already there counted) and the duration index. */
  async create(q: Queryable): Promise<void> {
    for (const tally of this.tallies) await tally.create(q);
    const s = this.src;
    await exec(
      q,
      `CREATE INDEX ${this.src.durationIndex} ON ${s.table} (${bare(s.durationMs)}) INCLUDE (${bare(s.at)}, ${s.filter}) WHERE ${s.finished.replace(/\bt\./g, '')}`,
    );
  }

  async drop(q: Queryable): Promise<void> {
    await exec(q, `DROP INDEX IF EXISTS ${this.src.table.slice(0, this.src.table.indexOf('.'))}.${this.src.durationIndex}`);
    for (const tally of this.tallies) await tally.drop(q);
  }

  /** Folds its tallies. */
  async fold(q: Queryable): Promise<void> {
    for (const tally of this.tallies) await tally.fold(q);
  }

  /** Summary, time buckets, error breakdown and the breakdown by `src.breakdown` of the period's finished runs (of one filter value, when given). */
  async statistics(db: Queryable, period: Period, filterValue: string | null): Promise<RolledStatistics> {
    const s = this.src;
    const g = period.granularity;
    // The whole hours [hs, he) come from the rollups; [start, hs) and [he, end) from the runs.
    let hs = Math.ceil(period.start.getTime() / HOUR_MS) * HOUR_MS;
    let he = Math.floor(period.end.getTime() / HOUR_MS) * HOUR_MS;
    if (hs >= he) hs = he = period.end.getTime();
    // Of those, the whole days [ds, de) come from the daily histogram.
    let ds = Math.ceil(hs / DAY_MS) * DAY_MS;
    let de = Math.floor(he / DAY_MS) * DAY_MS;
    if (ds >= de) ds = de = he;
    const args: unknown[] = [period.start, period.end, new Date(hs), new Date(he), new Date(ds), new Date(de)];
    const filterParam = filterValue === null ? '' : `$${args.push(filterValue)}`;
    const utc = (n: number) => `($${n}::timestamptz AT TIME ZONE 'UTC')`;
    const filtered = filterParam ? ` AND filter_value = ${filterParam}` : '';
    const rolled = `WHERE hour >= ${utc(3)} AND hour < ${utc(4)}${filtered}`;
    const days = `WHERE day >= ${utc(5)} AND day < ${utc(6)}${filtered}`;
    const hoursAround = `WHERE ((hour >= ${utc(3)} AND hour < ${utc(5)}) OR (hour >= ${utc(6)} AND hour < ${utc(4)}))${filtered}`;
    const raw = `FROM ${s.table} t WHERE ((${s.at} >= $1 AND ${s.at} < $3) OR (${s.at} >= $4 AND ${s.at} < $2)) AND ${s.finished}${filterParam ? ` AND t.${s.filter} = ${filterParam}` : ''}`;
    const avg = `coalesce(sum(duration_sum)::numeric / nullif(sum(timed), 0), 0)::float8`;
    const found = (await one<{
      summary: SummaryJson;
      buckets: BucketJson[];
      breakdown: BreakdownJson[];
      errors: ErrorJson[];
      histogram: [number, number][] | null;
    }>(
      db,
      `WITH parts AS MATERIALIZED (
         SELECT breakdown_value, hour AS at, outcome, error_code, n, timed, duration_sum FROM ${this.runs.rows(rolled)} r
         UNION ALL
         SELECT t.${s.breakdown}, ${s.at} AT TIME ZONE 'UTC', ${this.keys.outcome}, ${this.keys.errorCode}, 1, (${s.durationMs} IS NOT NULL)::int,
                coalesce(${s.durationMs}, 0)
           ${raw}
       ),
       b AS (SELECT generate_series(date_trunc('${g}', $1::timestamptz AT TIME ZONE 'UTC'), ($2::timestamptz AT TIME ZONE 'UTC') - interval '1 microsecond', interval '1 ${g}') AS at),
       buckets AS (
         SELECT (extract(epoch FROM b.at AT TIME ZONE 'UTC') * 1000)::float8 AS timestamp, coalesce(sum(p.n), 0)::int AS executions,
                coalesce(sum(p.n) FILTER (WHERE p.outcome = 'ok'), 0)::int AS successful, coalesce(sum(p.n) FILTER (WHERE p.outcome = 'failed'), 0)::int AS failed,
                ${avg} AS avg, coalesce(sum(p.duration_sum), 0)::float8 AS sum
           FROM b LEFT JOIN parts p ON date_trunc('${g}', p.at) = b.at GROUP BY b.at),
       breakdown AS (
         SELECT breakdown_value AS value, sum(n)::int AS n, coalesce(sum(n) FILTER (WHERE outcome = 'ok'), 0)::int AS ok, ${avg} AS avg
           FROM parts GROUP BY breakdown_value),
       errors AS (SELECT error_code AS code, sum(n)::int AS n FROM parts WHERE outcome = 'failed' GROUP BY error_code),
       histogram AS (
         SELECT bucket, sum(n)::bigint AS n FROM (
           SELECT bucket, n FROM ${this.daily.rows(days)} d
           UNION ALL
           SELECT bucket, n FROM ${this.hourly.rows(hoursAround)} h
           UNION ALL
           SELECT ${this.keys.bucket}, 1 ${raw} AND ${s.durationMs} IS NOT NULL) x
         GROUP BY bucket)
       SELECT (SELECT row_to_json(x) FROM (
                 SELECT coalesce(sum(n), 0)::int AS total, coalesce(sum(n) FILTER (WHERE outcome = 'ok'), 0)::int AS ok,
                        coalesce(sum(n) FILTER (WHERE outcome = 'failed'), 0)::int AS failed, ${avg} AS avg, coalesce(sum(duration_sum), 0)::float8 AS sum
                   FROM parts) x) AS summary,
              (SELECT json_agg(x ORDER BY x.timestamp) FROM buckets x) AS buckets,
              (SELECT coalesce(json_agg(x ORDER BY x.n DESC, x.value), '[]') FROM breakdown x) AS breakdown,
              (SELECT coalesce(json_agg(x ORDER BY x.n DESC, x.code), '[]') FROM errors x) AS errors,
              (SELECT json_agg(json_build_array(bucket, n) ORDER BY bucket) FROM histogram WHERE n <> 0) AS histogram`,
      args,
    ))!;
    const [p50, p95, p99] = await this.percentiles(db, period, filterValue, found.histogram ?? [], [0.5, 0.95, 0.99]);
    const sm = found.summary;
    return {
      summary: {
        totalExecutions: sm.total,
        successfulExecutions: sm.ok,
        failedExecutions: sm.failed,
        successRate: percent(sm.ok, sm.total),
        averageDuration: seconds(sm.avg),
        p50Duration: seconds(p50!),
        p95Duration: seconds(p95!),
        p99Duration: seconds(p99!),
        totalProcessingTime: seconds(sm.sum),
      },
      timeseries: (found.buckets ?? []).map((b) => ({
        timestamp: new Date(b.timestamp),
        executions: b.executions,
        successful: b.successful,
        failed: b.failed,
        averageDuration: seconds(b.avg),
        totalDuration: seconds(b.sum),
      })),
      errorBreakdown: found.errors.map((e) => ({ errorCode: e.code, count: e.n, percentage: percent(e.n, sm.failed) })),
      breakdown: found.breakdown,
    };
  }

  /**
   * percentile_cont(p) of the durations of the period's finished runs, exactly as PostgreSQL
   * computes it: the values at ranks floor and ceil of p·(n−1), interpolated. Each rank's value is
   * read from its histogram bucket only (OFFSET within the bucket, in duration order).
   */
  private async percentiles(db: Queryable, period: Period, filterValue: string | null, histogram: [number, number][], ps: number[]): Promise<number[]> {
    const counts = histogram.map(([bucket, n]) => [Number(bucket), Number(n)] as const);
    const total = counts.reduce((a, [, n]) => a + n, 0);
    if (total === 0) return ps.map(() => 0);
    const ranks = new Set<number>();
    for (const p of ps) {
      const at = p * (total - 1);
      ranks.add(Math.floor(at));
      ranks.add(Math.ceil(at));
    }
    const wanted: { rank: number; lo: number; hi: number; offset: number; desc: boolean }[] = [];
    for (const rank of ranks) {
      let before = 0;
      for (const [bucket, n] of counts) {
        if (rank < before + n) {
          // From the nearer end of the bucket: half the bucket at most is read.
          const k = rank - before;
          const desc = k > (n - 1) / 2;
          wanted.push({
            rank,
            lo: bucket === 0 ? -2147483648 : BOUNDS[bucket - 1]!,
            hi: bucket >= BOUNDS.length ? 2147483647 : BOUNDS[bucket]! - 1,
            offset: desc ? n - 1 - k : k,
            desc,
          });
          break;
        }
        before += n;
      }
    }
    const s = this.src;
    const args: unknown[] = [
      period.start,
      period.end,
      wanted.map((w) => w.rank),
      wanted.map((w) => w.lo),
      wanted.map((w) => w.hi),
      wanted.map((w) => w.offset),
      wanted.map((w) => w.desc),
    ];
    const filter = filterValue === null ? '' : ` AND t.${s.filter} = $${args.push(filterValue)}`;
    const read = (dir: string) => `(SELECT ${s.durationMs} FROM ${s.table} t
        WHERE ${s.finished} AND ${s.durationMs} BETWEEN v.lo AND v.hi AND ${s.at} >= $1 AND ${s.at} < $2${filter}
        ORDER BY ${s.durationMs} ${dir} OFFSET v.k LIMIT 1)`;
    const values = await rows<{ rank: number; ms: number }>(
      db,
      `SELECT v.rank, (CASE WHEN v.descending THEN ${read('DESC')} ELSE ${read('ASC')} END)::float8 AS ms
         FROM unnest($3::int[], $4::int[], $5::int[], $6::int[], $7::boolean[]) AS v(rank, lo, hi, k, descending)`,
      args,
    );
    const at = new Map(values.map((v) => [Number(v.rank), Number(v.ms)]));
    return ps.map((p) => {
      const pos = p * (total - 1);
      const first = Math.floor(pos);
      const second = Math.ceil(pos);
      const lo = at.get(first)!;
      const hi = at.get(second)!;
      // PostgreSQL's float8_lerp.
      return lo + (hi - lo) * (pos - first);
    });
  }
}

interface SummaryJson {
  total: number;
  ok: number;
  failed: number;
  avg: number;
  sum: number;
}
interface BucketJson {
  /** Epoch milliseconds. */
  timestamp: number;
  executions: number;
  successful: number;
  failed: number;
  avg: number;
  sum: number;
}
interface BreakdownJson {
  value: string;
  n: number;
  ok: number;
  avg: number;
}
interface ErrorJson {
  code: string;
  n: number;
}

/** `t.col` -> `col`. */
const bare = (sql: string) => sql.replace(/^t\./, '');
