import { realClock, sqlNow, type Clock } from './clock';
import { grouped } from './db/grouped';
import { prepared, rowsOf, run } from './db/rows';
import { randomUUID } from 'node:crypto';
import type { DataSource } from 'typeorm';
import type { Tx } from './db/transaction';
import { errors } from './errors';
import type { EventBus } from './events';
import type { Logger } from './logger';
import { UUID } from './ids';
import { TOPIC, type Jobs, type Registry } from './topics';
import { contextOf, currentTraceparent, inSpan } from './tracing';
import { context, ROOT_CONTEXT, SpanKind } from '@opentelemetry/api';

/**
 * Durable jobs in PostgreSQL (platform.jobs), claimed with `FOR UPDATE SKIP LOCKED`, woken through the
 * event bus and by polling. A job enqueued in a kernel `Tx` wakes workers after its COMMIT; services never
 * publish the wake-up themselves. Workers heartbeat, and jobs of a worker that stopped are swept back.
 * Due times read the kernel's clock (kernel/clock.ts); heartbeats and running timers the wall clock.
 *
 * Over a backlog a worker claims more jobs than it has free slots and holds the rest (state running,
 * started_at NULL, attempt not yet counted): a slot that frees starts the next held job in the same
 * grouped statement that ends the previous one, so a job costs well under one statement. Starts run
 * ahead of the slots by up to `concurrency` jobs (started in the database, waiting in memory), so a
 * slot that frees runs its next job without waiting a round trip; a cancel that reaches such a job
 * (its event, or the check every CHECK_MS) ends it without running it. A held job
 * counts as queued for cancel (cancelled at once, its start then finds nothing), for depth, for a
 * hand-back and for a sweep (given back without consuming an attempt); one held for more than HOLD_MS
 * is handed back, so slow jobs never keep a backlog from other workers.
 */

export type Priority = 'low' | 'normal' | 'high' | 'critical';
export type JobState = 'queued' | 'running' | 'completed' | 'failed' | 'cancelled';

export interface EnqueueOptions {
  priority?: Priority;
  /** Run timeout of one attempt; default 5 min. */
  timeoutMs?: number;
  /** Default 1 (no retry). */
  maxAttempts?: number;
  /** Base of the exponential backoff with full jitter; default 1000. */
  backoffMs?: number;
  runAt?: Date;
  /** Enqueueing with the key of an unfinished job returns that job's id. */
  key?: string;
}

export interface JobContext<T = unknown> {
  id: string;
  name: string;
  data: T;
  attempt: number;
  maxAttempts: number;
  signal: AbortSignal;
  /**
   * Completing the job inside the handler's own statement: the statement runs
   * `jobsCompletedSql(<held jobs>)` as one of its WITH items (over a relation of the jobs' and
   * workers' ids: one row, or several when one grouped statement ends several jobs), which
   * answers each job's state once it has run. The handler calls `done()` once that statement has
   * committed; the queue then writes nothing more for this attempt. Without `done()` the queue
   * finishes the attempt itself, as always.
   */
  completion(): JobCompletion;
}
export interface JobCompletion {
  jobId: string;
  workerId: string;
  done(): void;
}
/** A job to add (Queue.jobSpec), as a statement reads it from JSON (addJobFrom). */
export interface JobSpec {
  name: string;
  data: unknown;
  priority: number;
  run_at: string | null;
  max_attempts: number;
  backoff_ms: number;
  timeout_ms: number;
  key: string | null;
  /** The enqueuer's W3C traceparent: the job's span continues that trace. */
  trace_parent: string | null;
}
/** The SQL expression that adds the job of `spec` (the SQL expression of a Queue.jobSpec as jsonb) and whose value is its id (as `enqueue`'s). */
export function addJobFrom(spec: string): string {
  const f = (k: keyof JobSpec, type: string) => `(${spec}->>'${k}')::${type}`;
  return `platform.add_job(${f('name', 'text')}, ${spec}->'data', ${f('priority', 'smallint')}, ${f('run_at', 'timestamptz')}, ${f('max_attempts', 'int')}, ${f('backoff_ms', 'int')}, ${f('timeout_ms', 'int')}, ${f('key', 'text')}, ${f('trace_parent', 'text')})`;
}
/**
 * The UPDATE that ends the attempts of `attempts` (a FROM item: id, worker_id, next_state, delay_ms,
 * error) held by those workers, returning each ended job's id and state; a cancel request wins over
 * the next state. The holder is compared with IS NOT DISTINCT FROM, not `=`, which lets a generic plan
 * pick the locked_by index and read every job the worker holds.
 */
export function jobsEndedSql(attempts: string): string {
  return `UPDATE platform.jobs j SET
      state = CASE WHEN j.cancel_requested THEN 'cancelled' ELSE e.next_state END,
      last_error = CASE WHEN j.cancel_requested THEN j.last_error ELSE coalesce(e.error, j.last_error) END,
      run_at = CASE WHEN e.next_state = 'queued' THEN now() + e.delay_ms * interval '1 millisecond' ELSE j.run_at END,
      finished_at = CASE WHEN j.cancel_requested OR e.next_state <> 'queued' THEN now() END,
      locked_by = NULL, locked_at = NULL, updated_at = now()
    FROM ${attempts} e
    WHERE j.id = e.id AND j.locked_by IS NOT DISTINCT FROM e.worker_id AND j.state = 'running'
    RETURNING j.id, j.state`;
}

/** jobsEndedSql completing the held jobs of `held` (JobContext.completion): a FROM item with columns id and worker_id. */
export function jobsCompletedSql(held: string): string {
  return jobsEndedSql(`(SELECT h.id, h.worker_id, 'completed'::text AS next_state, NULL::text AS error, 0 AS delay_ms FROM ${held} h)`);
}
/** A job's attempt as failure hooks see it. */
export type JobAttempt = Omit<JobContext, 'signal' | 'completion'>;
export type JobHandler<T = unknown> = (ctx: JobContext<T>) => Promise<unknown>;
export interface HandlerOptions {
  onFinalFailure?: (ctx: JobAttempt, error: { code: string; message: string }) => Promise<void>;
}

export interface JobInfo {
  id: string;
  name: string;
  state: JobState;
  priority: Priority;
  attempt: number;
  maxAttempts: number;
  lastError: string | null;
  createdAt: Date;
  startedAt: Date | null;
  finishedAt: Date | null;
}

/** The reason a job's signal is aborted with. */
export class JobAbortedError extends Error {
  constructor(
    readonly code: 'cancelled' | 'timeout' | 'shutdown' | 'worker_lost',
    message: string,
  ) {
    super(message);
    this.name = 'JobAbortedError';
  }
}

const PRIORITY: Record<Priority, number> = { low: 0, normal: 1, high: 2, critical: 3 };
const PRIORITY_NAME = Object.keys(PRIORITY) as Priority[];
/** The priority levels, highest first (the claim's order). */
const PRIORITY_LEVELS = Object.values(PRIORITY).sort((a, b) => b - a);
/** How long a handler may take to settle after its signal is aborted before it is abandoned. */
const ABORT_GRACE_MS = 1000;
/** Running jobs re-read their rows this often, in case a `queue.cancel` event was lost. */
const CHECK_MS = 500;
const MAX_TIMER_MS = 2 ** 31 - 1;
/** Held jobs not started within this are handed back for other workers (this one's slots are all busy). */
const HOLD_MS = 1000;
const WORKER_LOST = 'worker_lost: the worker running this job stopped';

interface ClaimedRow {
  id: string;
  /** Started by the claim itself; otherwise held until a slot frees (the start counts the attempt). */
  started: boolean;
  name: string;
  data: unknown;
  priority: number;
  run_at: Date;
  attempt: number;
  max_attempts: number;
  backoff_ms: number;
  timeout_ms: number;
  trace_parent: string | null;
}

interface RunningJob {
  abortedBy: JobAbortedError['code'] | null;
  /** The handler finished the job in its own committed statement (JobContext.completion). */
  completedInline?: boolean;
  abort(error: JobAbortedError): void;
  done: Promise<void>;
}

type Outcome = { ok: true } | { ok: false; error: unknown };

/**
 * Claims due jobs; `due` is the clock's now (sqlNow), the parameters are worker, names, limit and how
 * many of them start now (the first in claim order; the others are held). It walks jobs_claim_idx one
 * priority level at a time, in (run_at, id) order, so the plan stays an index range scan whatever the
 * statistics say (a single three-column ORDER BY can degrade to a full sort of the backlog); the rows
 * are numbered in the order that walk yields them. Its commit need not wait for the WAL flush: a lost
 * claim just leaves the job queued. Exported for its plan's test.
 */
export const claimSql = (due: string) => `
  WITH relaxed AS (SELECT set_config('synchronous_commit', 'off', true)),
  picked AS (
    SELECT c.id, row_number() OVER () <= $4 AS started FROM (
      SELECT j.id FROM unnest('{${PRIORITY_LEVELS.join(',')}}'::smallint[]) AS p(level),
        LATERAL (SELECT id FROM platform.jobs
                  WHERE state = 'queued' AND priority = p.level AND run_at <= ${due} AND name = ANY($2::text[])
                  ORDER BY run_at, id
                  LIMIT $3
                  FOR UPDATE SKIP LOCKED) j
      LIMIT $3) c)
  UPDATE platform.jobs SET state = 'running', attempt = attempt + CASE WHEN picked.started THEN 1 ELSE 0 END, locked_by = $1,
         locked_at = now(), started_at = CASE WHEN picked.started THEN now() END, updated_at = now()
  FROM relaxed, picked
  WHERE platform.jobs.id = picked.id
  RETURNING platform.jobs.id, picked.started, name, data, priority, run_at, attempt, max_attempts, backoff_ms, timeout_ms, trace_parent`;

/** Adds one job (Queue.jobSpec as JSON): the same add_job call as a caller's own statement makes (addJobFrom). */
const ENQUEUE = prepared(`SELECT ${addJobFrom('$1::jsonb')} AS id`);

/** A write of a worker's slot: an attempt's end, or the start of a held job. */
type Step = { id: string; end: { next_state: JobState; error: string | null; delay_ms: number } | null };
/**
 * The ends and starts of one worker's slots made together, in one statement ($1: JSON of
 * {id, kind, next_state, error, delay_ms}; $2 the worker). An end answers the job's state (none when
 * the worker no longer holds it; a cancel request wins); a start answers 'running' and the attempt,
 * or nothing when the held job was cancelled or taken back meanwhile.
 */
const STEPS = prepared(
  `WITH steps AS (
     SELECT * FROM jsonb_to_recordset($1::jsonb) AS s(id uuid, kind text, next_state text, error text, delay_ms int)
   ), ended AS (${jobsEndedSql(`(SELECT id, $2::uuid AS worker_id, next_state, error, delay_ms FROM steps WHERE kind = 'end')`)}
   ), started AS (
     UPDATE platform.jobs j SET attempt = j.attempt + 1, started_at = now(), updated_at = now()
     FROM steps s
     WHERE s.kind = 'start' AND j.id = s.id AND j.locked_by IS NOT DISTINCT FROM $2::uuid AND j.state = 'running' AND j.started_at IS NULL
     RETURNING j.id, j.attempt
   )
   SELECT id, state, NULL::int AS attempt FROM ended UNION ALL SELECT id, 'running', attempt FROM started`,
);

/** Gives jobs back without consuming their attempt (this worker is stopping; a held one never started). */
const HAND_BACK = `
  UPDATE platform.jobs SET
    state = CASE WHEN cancel_requested THEN 'cancelled' ELSE 'queued' END,
    finished_at = CASE WHEN cancel_requested THEN now() END,
    attempt = attempt - CASE WHEN started_at IS NULL THEN 0 ELSE 1 END,
    run_at = CASE WHEN started_at IS NULL THEN run_at ELSE now() END,
    locked_by = NULL, locked_at = NULL, updated_at = now()
  WHERE id = ANY($1::uuid[]) AND locked_by = $2 AND state = 'running'`;

/**
 * Reclaims jobs of workers whose heartbeat is stale or whose row is gone. The CTE's DELETE is not
 * visible to the rest of the statement, hence both conditions. A missing row only counts for an old
 * lock: a worker registered after this statement's snapshot may hold a fresh one.
 */
const SWEEP = `
  WITH dead AS (
    DELETE FROM platform.workers WHERE heartbeat_at < now() - $1::int * interval '1 millisecond' RETURNING id
  ), lost AS (
    SELECT j.id FROM platform.jobs j
    WHERE j.state = 'running'
      AND (j.locked_by IN (SELECT id FROM dead)
           OR (j.locked_at < now() - $1::int * interval '1 millisecond'
               AND NOT EXISTS (SELECT 1 FROM platform.workers w WHERE w.id = j.locked_by)))
    FOR UPDATE OF j SKIP LOCKED
  )
  UPDATE platform.jobs j SET
    state = CASE WHEN j.cancel_requested THEN 'cancelled' WHEN j.started_at IS NULL OR j.attempt < j.max_attempts THEN 'queued' ELSE 'failed' END,
    last_error = CASE WHEN j.cancel_requested OR j.started_at IS NULL THEN j.last_error ELSE $2 END,
    finished_at = CASE WHEN j.cancel_requested OR (j.started_at IS NOT NULL AND j.attempt >= j.max_attempts) THEN now() END,
    run_at = CASE WHEN j.started_at IS NULL THEN j.run_at ELSE now() END, locked_by = NULL, locked_at = NULL, updated_at = now()
  FROM lost WHERE j.id = lost.id
  RETURNING j.id, j.name, j.data, j.state, j.attempt, j.max_attempts`;

/** The span a job's attempt runs in: the consumer of the message its enqueuer sent (messaging conventions). */
function jobSpanOptions(row: ClaimedRow) {
  return {
    kind: SpanKind.CONSUMER,
    attributes: {
      'messaging.system': 'platform.jobs',
      'messaging.operation.type': 'process',
      'messaging.destination.name': row.name,
      'messaging.message.id': row.id,
      'job.attempt': row.attempt,
      'job.max_attempts': row.max_attempts,
    },
  };
}

function describeError(err: unknown): { code: string; message: string } {
  const e = err as { code?: unknown; message?: unknown } | null;
  const code = typeof e?.code === 'string' && e.code ? e.code : 'job_failed';
  const message = typeof e?.message === 'string' ? e.message : String(err);
  return { code, message };
}

function positiveInt(field: string, value: number | undefined, fallback: number, min = 1): number {
  if (value === undefined) return fallback;
  if (!Number.isInteger(value) || value < min || value > MAX_TIMER_MS) {
    throw errors.field(field, `must be an integer between ${min} and ${MAX_TIMER_MS}`);
  }
  return value;
}

/**
 * Typed by a registry of job names and their data (kernel/topics.ts, the default): a name not in it,
 * or data of another shape, does not compile. Every queue claims from one table, so the registry is
 * the platform's; only kernel tests and benches give one of their own.
 */
export class Queue<J extends Registry = Jobs> {
  private readonly db: DataSource;
  private readonly events: EventBus;
  private readonly logger: Logger;
  private readonly concurrency: number;
  private readonly heartbeatMs: number;
  private readonly staleAfterMs: number;
  private readonly pollMs: number;
  private readonly clock: Clock;
  private readonly workerId = randomUUID();
  private readonly handlers = new Map<string, { handler: JobHandler; options: HandlerOptions }>();
  private readonly running = new Map<string, RunningJob>();
  private readonly counts = { claimed: 0, completed: 0, failed: 0 };
  /** Jobs claimed and held for the next free slot, in claim order, with when they were claimed. */
  private held: { row: ClaimedRow; at: number }[] = [];
  /** How many jobs a claim may hold beyond the free slots. */
  private readonly prefetch: number;
  /**
   * Held jobs already started in the database (attempt counted), waiting for the next free slot: a
   * slot that frees runs one at once instead of waiting a round trip. At most `concurrency` of them.
   */
  private ready: { row: ClaimedRow; at: number }[] = [];
  /** Slots taken: jobs running whose handler has not settled. */
  private busy = 0;
  /** Starts of held jobs in flight (stop waits for them). */
  private readonly starting = new Set<Promise<void>>();
  /** The last claim found fewer due jobs than it asked for: no claim until a wake-up or the poll. */
  private drained = false;
  private started = false;
  private stopping = false;
  private claiming: Promise<void> | null = null;
  private claimAgain = false;
  /** Set when held jobs were handed back because no slot freed: none are held again until one does, so other workers get them. */
  private holdPaused = false;
  /** The ends and starts of this worker's slots, grouped into one statement when they come together. */
  private readonly step = grouped<Step, { id: string; state: JobState; attempt: number | null } | null>(async (steps) => {
    const json = JSON.stringify(steps.map((s) => (s.end ? { id: s.id, kind: 'end', ...s.end } : { id: s.id, kind: 'start' })));
    const rows = rowsOf<{ id: string; state: JobState; attempt: number | null }>(await run(this.db, STEPS, [json, this.workerId]));
    const byId = new Map(rows.map((r) => [r.id, r]));
    return steps.map((s) => byId.get(s.id) ?? null);
  });
  private timers: NodeJS.Timeout[] = [];
  private offWakeup?: () => void;
  private offCancel?: () => void;

  private readonly pools: Queue<J>[] = [];
  private readonly lifecycle: { started: (() => void)[]; stopping: (() => void)[] } = { started: [], stopping: [] };

  constructor(opts: {
    db: DataSource;
    events: EventBus;
    logger: Logger;
    concurrency?: number;
    /** Jobs a claim may hold beyond the free slots, over a backlog; default 4 × concurrency, 0 for none. */
    prefetch?: number;
    heartbeatMs?: number;
    staleAfterMs?: number;
    pollMs?: number;
    /** Decides when jobs are due; the wall clock by default. */
    clock?: Clock;
  }) {
    this.db = opts.db;
    this.events = opts.events;
    this.concurrency = opts.concurrency ?? 4;
    this.prefetch = opts.prefetch ?? 4 * this.concurrency;
    this.heartbeatMs = opts.heartbeatMs ?? 5000;
    this.staleAfterMs = opts.staleAfterMs ?? 30_000;
    this.pollMs = opts.pollMs ?? 250;
    this.clock = opts.clock ?? realClock;
    this.logger = opts.logger.child({ component: 'queue', worker: this.workerId });
  }

  register<N extends keyof J & string>(name: N, handler: JobHandler<J[N]>, options: HandlerOptions = {}): void {
    this.handlers.set(name, { handler: handler as JobHandler, options });
    if (this.started) void this.claim();
  }

  /** Given `tx`, the job is written in that transaction and the workers are woken after its COMMIT. */
  async enqueue<N extends keyof J & string>(name: N, data: J[N], options: EnqueueOptions = {}, tx?: Tx): Promise<string> {
    const [row] = rowsOf<{ id: string | null }>(await run(tx ? tx.manager : this.db, ENQUEUE, [JSON.stringify(this.jobSpec(name, data, options))]));
    if (!row?.id) throw errors.conflict(`Could not enqueue job with key ${options.key}`);
    if (tx) tx.afterCommit(() => this.added(name));
    else await this.added(name);
    return row.id;
  }

  /**
   * A job as one JSON value, for a statement that adds the jobs of several rows of its own:
   * `addJobFrom(<the SQL expression of that value>)` per row, in the caller's statement. The caller
   * wakes the workers (`added`) once that statement has committed.
   */
  jobSpec<N extends keyof J & string>(name: N, data: J[N], options: EnqueueOptions = {}): JobSpec {
    const priority = options.priority ?? 'normal';
    if (!Object.hasOwn(PRIORITY, priority)) throw errors.field('priority', `must be one of ${PRIORITY_NAME.join(', ')}`);
    return {
      name,
      data: data ?? null,
      priority: PRIORITY[priority],
      run_at: options.runAt?.toISOString() ?? null,
      max_attempts: positiveInt('maxAttempts', options.maxAttempts, 1),
      backoff_ms: positiveInt('backoffMs', options.backoffMs, 1000, 0),
      timeout_ms: positiveInt('timeoutMs', options.timeoutMs, 5 * 60_000),
      key: options.key ?? null,
      trace_parent: currentTraceparent(),
    };
  }

  /** Idle workers of `name` claim at once instead of at their next poll. */
  async added(name: string): Promise<void> {
    await this.events.publish(TOPIC.queueWakeup, { name }).catch((err) => this.logger.warn('queue wake-up not published', { err }));
  }

  async cancel(id: string, reason?: string): Promise<JobState | null> {
    if (!UUID.test(id)) return null;
    const message = reason ?? 'The job was cancelled';
    const [row] = rowsOf<{ state: JobState }>(
      await this.db.query(
        // A held job (claimed, not started) is cancelled at once: its holder's start then finds nothing.
        `UPDATE platform.jobs SET cancel_requested = true, last_error = $2, updated_at = now(),
                state = CASE WHEN state = 'queued' OR started_at IS NULL THEN 'cancelled' ELSE state END,
                finished_at = CASE WHEN state = 'queued' OR started_at IS NULL THEN now() ELSE finished_at END,
                locked_by = CASE WHEN state = 'queued' OR started_at IS NULL THEN NULL ELSE locked_by END
         WHERE id = $1 AND state IN ('queued','running')
         RETURNING state`,
        [id, `cancelled: ${message}`],
      ),
    );
    if (!row) return (await this.get(id))?.state ?? null;
    if (row.state !== 'running') return row.state;
    await this.events.publish(TOPIC.queueCancel, { id, reason: message }).catch((err) => this.logger.warn('queue cancel not published', { err }));
    // The holder aborts within CHECK_MS even without the event, and abandons the handler after the grace.
    const deadline = Date.now() + CHECK_MS + ABORT_GRACE_MS + 1000;
    while (Date.now() < deadline) {
      await new Promise((resolve) => setTimeout(resolve, 25));
      const state = (await this.get(id))?.state ?? null;
      if (state !== 'running') return state;
    }
    return 'running';
  }

  /** Jobs due and waiting for a worker, jobs running, and jobs scheduled for later (every pool: one table). */
  async depth(): Promise<{ queued: number; running: number; scheduled: number }> {
    const params: unknown[] = [];
    const now = sqlNow(this.clock, params);
    const [r] = await this.db.query(
      `SELECT count(*) FILTER (WHERE (state = 'queued' AND run_at <= ${now}) OR (state = 'running' AND started_at IS NULL))::int AS queued,
              count(*) FILTER (WHERE state = 'running' AND started_at IS NOT NULL)::int AS running,
              count(*) FILTER (WHERE state = 'queued' AND run_at > ${now})::int AS scheduled
         FROM platform.jobs WHERE state IN ('queued','running')`,
      params,
    );
    return r;
  }

  async get(id: string): Promise<JobInfo | null> {
    if (!UUID.test(id)) return null;
    const [row] = await this.db.query(
      `SELECT id, name, state, priority, attempt, max_attempts, last_error, created_at, started_at, finished_at
       FROM platform.jobs WHERE id = $1`,
      [id],
    );
    if (!row) return null;
    return {
      id: row.id,
      name: row.name,
      state: row.state,
      priority: PRIORITY_NAME[row.priority],
      attempt: row.attempt,
      maxAttempts: row.max_attempts,
      lastError: row.last_error,
      createdAt: row.created_at,
      startedAt: row.started_at,
      finishedAt: row.finished_at,
    };
  }

  async start(): Promise<void> {
    await this.startSelf();
    for (const pool of this.pools) await pool.start();
    for (const hook of this.lifecycle.started) hook();
  }

  private async startSelf(): Promise<void> {
    if (this.started) return;
    await this.heartbeat();
    this.started = true;
    this.offWakeup = this.events.subscribe(TOPIC.queueWakeup, (p: { name?: string } | undefined) => {
      if (!p?.name || this.handlers.has(p.name)) void this.claim(true);
    });
    this.offCancel = this.events.subscribe(TOPIC.queueCancel, (p: { id?: string; reason?: string } | undefined) => {
      if (!p?.id) return;
      // A started job still waiting for a slot never runs: its end records the cancel.
      if (this.dropReady(p.id)) void this.step({ id: p.id, end: { next_state: 'cancelled', error: null, delay_ms: 0 } }).catch(() => undefined);
      else this.running.get(p.id)?.abort(new JobAbortedError('cancelled', p.reason ?? 'The job was cancelled'));
    });
    this.drained = false;
    const every = (ms: number, fn: () => Promise<void>) => {
      const timer = setInterval(() => void fn().catch((err) => this.logger.warn('queue maintenance failed', { err })), ms);
      timer.unref();
      this.timers.push(timer);
    };
    every(this.pollMs, () => this.claim(true));
    every(CHECK_MS, () => this.checkRunning());
    every(this.heartbeatMs, async () => {
      await this.heartbeat();
      await this.sweep();
    });
    await this.sweep();
    void this.claim();
  }

  async stop(opts: { graceMs?: number } = {}): Promise<void> {
    if (this.started && !this.stopping) for (const hook of this.lifecycle.stopping) hook();
    await Promise.all([this.stopSelf(opts), ...this.pools.map((pool) => pool.stop(opts))]);
  }

  /**
   * A worker pool of its own concurrency over the same table, started and drained with this
   * queue: one kind of long job (agent tasks waiting on a model) never holds the slots of the
   * others. Register the pool's handlers on the pool.
   */
  pool(opts: { name: string; concurrency: number }): Queue<J> {
    const pool = new Queue<J>({
      db: this.db,
      events: this.events,
      logger: this.logger.child({ pool: opts.name }),
      concurrency: opts.concurrency,
      heartbeatMs: this.heartbeatMs,
      staleAfterMs: this.staleAfterMs,
      clock: this.clock,
    });
    this.pools.push(pool);
    return pool;
  }

  /** Runs `started` after this queue (and its pools) start claiming, `stopping` when it begins to drain. */
  onLifecycle(started: () => void, stopping: () => void): void {
    this.lifecycle.started.push(started);
    this.lifecycle.stopping.push(stopping);
  }

  private async stopSelf(opts: { graceMs?: number }): Promise<void> {
    if (!this.started || this.stopping) return;
    this.stopping = true;
    this.offWakeup?.();
    await this.claiming;
    await Promise.all(this.starting);
    await this.handBack([...this.held.splice(0), ...this.ready.splice(0)].map((h) => h.row.id));
    const drained = Promise.all([...this.running.values()].map((job) => job.done));
    const grace = new AbortController();
    await Promise.race([drained, this.clock.sleep(opts.graceMs ?? 10_000, grace.signal)]);
    grace.abort();
    for (const job of this.running.values()) job.abort(new JobAbortedError('shutdown', 'The worker is stopping'));
    await Promise.all([...this.running.values()].map((job) => job.done));
    for (const timer of this.timers.splice(0)) clearInterval(timer);
    this.offCancel?.();
    await this.db.query(`DELETE FROM platform.workers WHERE id = $1`, [this.workerId]).catch((err) => this.logger.warn('worker row not removed', { err }));
    this.started = false;
    this.stopping = false;
  }

  stats(): { running: number; claimed: number; completed: number; failed: number } {
    return { running: this.running.size, ...this.counts };
  }

  private async handBack(ids: string[]): Promise<void> {
    if (ids.length) await this.db.query(HAND_BACK, [ids, this.workerId]);
  }

  /**
   * Starts held jobs in the free slots; claims again when few are held, unless the last claim found
   * the backlog empty (then a wake-up or the poll claims).
   */
  private fill(): void {
    if (this.stopping) return;
    while (this.busy < this.concurrency && this.ready.length) this.run(this.ready.shift()!.row);
    // Starts run ahead of the slots by up to `concurrency` jobs.
    while (this.busy + this.ready.length + this.starting.size < 2 * this.concurrency && this.held.length) this.begin(this.held.shift()!.row);
    if (!this.drained && this.held.length < this.concurrency) void this.claim();
  }

  private run(row: ClaimedRow): void {
    this.counts.claimed++;
    this.busy++;
    this.execute(row);
  }

  /** Starts a held job: its start goes with the slot writes made together (often the end of the job before it). */
  private begin(row: ClaimedRow): void {
    const start = this.step({ id: row.id, end: null })
      .then((r) => {
        this.starting.delete(start);
        if (r?.attempt == null) return this.fill(); // cancelled or taken back while held: it never runs
        if (this.stopping) return this.handBack([row.id]);
        this.ready.push({ row: { ...row, started: true, attempt: r.attempt }, at: Date.now() });
        this.fill();
      })
      .catch((err) => {
        this.starting.delete(start);
        this.logger.warn('held job not started', { err, job: row.id });
        return this.handBack([row.id]).catch(() => undefined);
      });
    this.starting.add(start);
  }

  /** A started job that waited for a slot and will not run (cancelled, or this worker is stopping). */
  private dropReady(id: string): boolean {
    const i = this.ready.findIndex((r) => r.row.id === id);
    if (i < 0) return false;
    this.ready.splice(i, 1);
    return true;
  }

  /**
   * Claims jobs for the free slots, and over a backlog up to `prefetch` more to hold; concurrent calls
   * coalesce into one more round. `woken` (a wake-up, the poll): new jobs may be due.
   */
  private claim(woken = false): Promise<void> {
    if (woken) this.drained = false;
    if (!this.started || this.stopping) return Promise.resolve();
    if (this.claiming) {
      this.claimAgain = true;
      return this.claiming;
    }
    // Outside any request's or job's trace: a claim woken by one belongs to none of them.
    this.claiming = context
      .with(ROOT_CONTEXT, async () => {
        do {
          this.claimAgain = false;
          const free = Math.max(0, this.concurrency - this.busy - this.ready.length - this.starting.size - this.held.length);
          // Held jobs are topped up only while the slots would otherwise soon run dry.
          const hold = !this.holdPaused && this.held.length < this.concurrency ? Math.max(0, this.prefetch - this.held.length) : 0;
          if (free + hold <= 0 || this.handlers.size === 0) break;
          // Over a backlog the claim also starts the jobs that run ahead of the slots, sparing them a start of their own.
          const ahead = hold > 0 ? Math.max(0, this.concurrency - this.ready.length - this.starting.size) : 0;
          const params: unknown[] = [this.workerId, [...this.handlers.keys()], free + hold, free + ahead];
          const rows = rowsOf<ClaimedRow>(await run(this.db, prepared(claimSql(sqlNow(this.clock, params))), params));
          this.drained = rows.length < free + hold;
          if (this.stopping) {
            await this.handBack(rows.map((r) => r.id));
            break;
          }
          rows.sort((a, b) => b.priority - a.priority || a.run_at.getTime() - b.run_at.getTime() || a.id.localeCompare(b.id));
          const now = Date.now();
          for (const row of rows) {
            if (row.started && this.busy < this.concurrency) this.run(row);
            else if (row.started) this.ready.push({ row, at: now });
            else this.held.push({ row, at: now });
          }
          this.fill();
        } while (this.claimAgain);
      })
      .catch((err) => this.logger.warn('queue claim failed', { err }))
      .finally(() => {
        this.claiming = null;
      });
    return this.claiming;
  }

  private execute(row: ClaimedRow): void {
    const { handler, options } = this.handlers.get(row.name)!;
    const controller = new AbortController();
    let isSettled = false;
    let settle!: (outcome: Outcome) => void;
    const settled = new Promise<Outcome>((resolve) => {
      settle = (outcome) => {
        isSettled = true;
        resolve(outcome);
      };
    });
    let graceTimer: NodeJS.Timeout | undefined;
    const job: RunningJob = {
      abortedBy: null,
      abort(error) {
        if (job.abortedBy || isSettled) return;
        job.abortedBy = error.code;
        controller.abort(error);
        graceTimer = setTimeout(() => settle({ ok: false, error }), ABORT_GRACE_MS);
      },
      done: Promise.resolve(),
    };
    // The error is made when the time is up (an Error captures its stack, on every job's path else).
    const timer = setTimeout(
      () => job.abort(new JobAbortedError('timeout', `Job exceeded its timeout of ${row.timeout_ms} ms`)),
      Math.min(row.timeout_ms, MAX_TIMER_MS),
    );
    const ctx = { id: row.id, name: row.name, data: row.data, attempt: row.attempt, maxAttempts: row.max_attempts };
    const completion = (): JobCompletion => ({ jobId: row.id, workerId: this.workerId, done: () => (job.completedInline = true) });
    Promise.resolve()
      .then(() =>
        inSpan(`${row.name} process`, jobSpanOptions(row), () => handler({ ...ctx, signal: controller.signal, completion }), contextOf(row.trace_parent)),
      )
      .then(
        () => settle({ ok: true }),
        (error) => settle({ ok: false, error }),
      );
    job.done = settled
      .then(async (outcome) => {
        clearTimeout(timer);
        clearTimeout(graceTimer);
        // The end is asked for before the slot's next start, so both go in one statement.
        const finished = this.finish(row, job, outcome, ctx, options);
        this.busy--;
        this.holdPaused = false;
        this.fill();
        await finished;
      })
      .catch((err) => this.logger.error('job result not recorded', { err, job: row.id }))
      .finally(() => this.running.delete(row.id));
    this.running.set(row.id, job);
  }

  private async finish(row: ClaimedRow, job: RunningJob, outcome: Outcome, ctx: JobAttempt, options: HandlerOptions): Promise<void> {
    // A handler that still returned normally did its work, whatever aborted it.
    if (outcome.ok && job.completedInline) {
      this.counts.completed++;
      return;
    }
    if (outcome.ok) {
      const r = await this.step({ id: row.id, end: { next_state: 'completed', error: null, delay_ms: 0 } });
      if (r?.state === 'completed') this.counts.completed++;
      return;
    }
    if (job.abortedBy === 'worker_lost') return; // the row is someone else's now
    if (job.abortedBy === 'shutdown') {
      await this.handBack([row.id]);
      return;
    }
    const error = job.abortedBy === 'timeout' ? { code: 'timeout', message: `Job exceeded its timeout of ${row.timeout_ms} ms` } : describeError(outcome.error);
    const retryable = (outcome.error as { retryable?: unknown } | null)?.retryable !== false;
    const retry = retryable && row.attempt < row.max_attempts;
    const delay = retry ? Math.round(Math.random() * row.backoff_ms * 2 ** (row.attempt - 1)) : 0;
    const lastError = `${error.code}: ${error.message}`;
    // The end counts the delay from the database's now(): the clock's skip is added so the retry is due `delay` after the clock's now.
    const r = await this.step({
      id: row.id,
      end: { next_state: retry ? 'queued' : 'failed', error: lastError, delay_ms: retry ? Math.min(delay + this.clock.aheadMs(), MAX_TIMER_MS) : 0 },
    });
    if (r?.state === 'failed') {
      this.counts.failed++;
      await this.finalFailure(ctx, error, options);
    } else if (r?.state === 'queued') {
      this.logger.info('job attempt failed; retrying', { job: row.id, name: row.name, attempt: row.attempt, delayMs: delay, error });
    }
  }

  private async finalFailure(ctx: JobAttempt, error: { code: string; message: string }, options?: HandlerOptions): Promise<void> {
    this.logger.warn('job failed', { job: ctx.id, name: ctx.name, attempt: ctx.attempt, error });
    try {
      await options?.onFinalFailure?.(ctx, error);
    } catch (err) {
      this.logger.error('onFinalFailure failed', { err, job: ctx.id });
    }
  }

  private async heartbeat(): Promise<void> {
    // An upsert: a worker swept while paused (GC, suspended VM) registers again.
    await this.db.query(`INSERT INTO platform.workers (id) VALUES ($1) ON CONFLICT (id) DO UPDATE SET heartbeat_at = now()`, [this.workerId]);
  }

  private async sweep(): Promise<void> {
    const rows = rowsOf<{ id: string; name: string; data: unknown; state: JobState; attempt: number; max_attempts: number }>(
      await this.db.query(SWEEP, [this.staleAfterMs, WORKER_LOST]),
    );
    for (const row of rows) {
      this.logger.warn('reclaimed a job of a lost worker', { job: row.id, name: row.name, state: row.state });
      if (row.state !== 'failed') continue;
      const ctx = { id: row.id, name: row.name, data: row.data, attempt: row.attempt, maxAttempts: row.max_attempts };
      await this.finalFailure(ctx, { code: 'worker_lost', message: 'the worker running this job stopped' }, this.handlers.get(row.name)?.options);
    }
  }

  /** Aborts running jobs that were cancelled (the event may have been lost) or taken from this worker. */
  private async checkRunning(): Promise<void> {
    const stale = Date.now() - HOLD_MS;
    const old = [...this.held.filter((h) => h.at < stale), ...this.ready.filter((h) => h.at < stale)];
    if (old.length) {
      this.held = this.held.filter((h) => h.at >= stale);
      this.ready = this.ready.filter((h) => h.at >= stale);
      this.holdPaused = true;
      await this.handBack(old.map((h) => h.row.id));
    }
    if (this.running.size === 0 && this.ready.length === 0) return;
    // Only the jobs asked about: one claimed while the query ran has no row here and is not lost.
    const waiting = this.ready.map((r) => r.row.id);
    const ids = [...this.running.keys(), ...waiting];
    const rows = await this.db.query(
      `SELECT id, cancel_requested, last_error, (state = 'running' AND locked_by = $2) AS mine
       FROM platform.jobs WHERE id = ANY($1::uuid[])`,
      [ids, this.workerId],
    );
    const byId = new Map<string, { cancel_requested: boolean; last_error: string | null; mine: boolean }>();
    for (const row of rows) byId.set(row.id, row);
    for (const id of waiting) {
      const row = byId.get(id);
      if (row?.mine && !row.cancel_requested) continue;
      if (!this.dropReady(id) || !row?.mine) continue;
      await this.step({ id, end: { next_state: 'cancelled', error: null, delay_ms: 0 } });
    }
    for (const id of ids) {
      const job = this.running.get(id);
      if (!job) continue;
      const row = byId.get(id);
      if (!row || !row.mine) job.abort(new JobAbortedError('worker_lost', 'This worker no longer holds the job'));
      else if (row.cancel_requested) {
        job.abort(new JobAbortedError('cancelled', row.last_error?.replace(/^cancelled: /, '') ?? 'The job was cancelled'));
      }
    }
  }
}
