import { randomBytes } from 'node:crypto';
import { performance } from 'node:perf_hooks';
import { Client, Pool } from 'pg';
import { Logger as GraphileLogger, makeWorkerUtils, run as runGraphile, runMigrations as migrateGraphile, type Runner } from 'graphile-worker';
import PgBoss from 'pg-boss';
import { createDataSource } from '../kernel/db/data-source';
import { kernelMigrations } from '../kernel/db/migrations';
import { createEventBus } from '../kernel/events';
import { createLogger } from '../kernel/logger';
import { Queue } from '../kernel/queue';
import type { AnyNames } from '../kernel/topics';

/**
 * kernel/queue.ts against graphile-worker 0.17 on the same server, in one run, in two modes: its
 * defaults (each of its workers fetches one job per statement) and its batched local queue
 * (`localQueue.size` 50: the pool locks up to 50 jobs per statement and hands them out). Figures:
 * (a) enqueue-to-start latency of no-op jobs enqueued one at a time, (b) throughput of 2,000
 * pre-queued no-op jobs at concurrency 8, from starting the worker until every job is recorded
 * complete in the database (graphile-worker completes in the background, so its end is read from its
 * table). The throughput rounds run back to back, the order rotating each round, and each side's
 * figure is over all its rounds, so a drift of the machine's speed lands on every side alike.
 * Ours runs across two "processes" (producer and worker on separate PostgreSQL event buses, the
 * split-mode path): the wake-up goes through NOTIFY, as graphile-worker's does. pg-boss 10 (it only
 * polls, >= 0.5 s) is measured only with QUEUE_PGBOSS=1.
 */

export interface QueueFigures {
  enqueueToStartP50Ms: number;
  enqueueToStartP99Ms: number;
  jobsPerSecond: number;
  jobs: number;
  /** Jobs/s of each throughput round, in round order. */
  rounds?: number[];
}

export interface QueueBench {
  ours: QueueFigures;
  graphile: QueueFigures;
  graphileBatched: QueueFigures;
  pgBoss?: QueueFigures;
  /** The sides' order in each round. */
  order: string[][];
}

const LATENCY_JOBS = 200;
const THROUGHPUT_JOBS = 2000;
const CONCURRENCY = 8;
const ROUNDS = Number(process.env.QUEUE_ROUNDS ?? 3);
/** Per-phase budgets for pg-boss, whose polling makes the full counts take minutes. */
const PGBOSS_LATENCY_BUDGET_MS = 10_000;
const PGBOSS_THROUGHPUT_BUDGET_MS = 15_000;
/** Ours and graphile-worker must finish well inside this; it only bounds a broken run. */
const BUDGET_MS = 30_000;

function percentile(samples: number[], p: number): number {
  if (samples.length === 0) return NaN;
  const sorted = [...samples].sort((a, b) => a - b);
  const index = Math.min(sorted.length - 1, Math.ceil((p / 100) * sorted.length) - 1);
  return Math.round(sorted[Math.max(0, index)] * 100) / 100;
}

const perSecond = (jobs: number, ms: number) => Math.round((jobs / (ms / 1000)) * 10) / 10;

function figures(latencies: number[], rounds: { jobs: number; ms: number }[]): QueueFigures {
  const jobs = rounds.reduce((n, r) => n + r.jobs, 0);
  const ms = rounds.reduce((n, r) => n + r.ms, 0);
  return {
    enqueueToStartP50Ms: percentile(latencies, 50),
    enqueueToStartP99Ms: percentile(latencies, 99),
    jobsPerSecond: perSecond(jobs, ms),
    jobs,
    rounds: rounds.map((r) => perSecond(r.jobs, r.ms)),
  };
}

/** Waits until `done()` (true) or the deadline (false). */
async function until(done: () => boolean, deadline: number): Promise<boolean> {
  while (!done()) {
    if (performance.now() > deadline) return false;
    await new Promise((r) => setTimeout(r, 2));
  }
  return true;
}

/**
 * Enqueue → start latency, one job at a time: `enqueue(i)` adds a job whose handler calls
 * `probe.started`. Stops early at the deadline.
 */
async function measureLatencies(enqueue: (i: number) => Promise<unknown>, probe: { started: (() => void) | null }, budgetMs: number): Promise<number[]> {
  const out: number[] = [];
  const deadline = performance.now() + budgetMs;
  for (let i = 0; i < LATENCY_JOBS; i++) {
    let startedAt = 0;
    probe.started = () => (startedAt = performance.now());
    const t0 = performance.now();
    await enqueue(i);
    if (!(await until(() => startedAt > 0, deadline))) break;
    out.push(startedAt - t0);
  }
  return out;
}

/** Runs `fn` for 0..n-1 with at most `width` calls in flight. */
async function inParallel(n: number, width: number, fn: (i: number) => Promise<unknown>): Promise<void> {
  let next = 0;
  await Promise.all(
    Array.from({ length: width }, async () => {
      while (next < n) await fn(next++);
    }),
  );
}

/** One side of the bench: its latency phase, then throughput rounds; `close` frees it. */
interface Side {
  latency(): Promise<number[]>;
  /** Queues THROUGHPUT_JOBS jobs with no worker running, then times their run: jobs done and ms. */
  throughput(): Promise<{ jobs: number; ms: number }>;
  close(): Promise<void>;
}

async function ours(url: string): Promise<Side> {
  const logger = createLogger('warn');
  const db = createDataSource({ url, migrations: kernelMigrations, applicationName: 'bench-queue' });
  await db.initialize();
  await db.runMigrations();
  const notify = (channel: string, payload: string) => db.query('SELECT pg_notify($1, $2)', [channel, payload]);
  const producerBus = await createEventBus({ kind: 'postgres', url, notify }, logger);
  const workerBus = await createEventBus({ kind: 'postgres', url, notify }, logger);
  const producer = new Queue<AnyNames>({ db, events: producerBus, logger });
  const worker = new Queue<AnyNames>({ db, events: workerBus, logger, concurrency: CONCURRENCY });
  const probe: { started: (() => void) | null } = { started: null };
  worker.register('bench.latency', async () => probe.started?.());
  worker.register('bench.throughput', async () => undefined);
  return {
    async latency() {
      await worker.start();
      const measured = await measureLatencies((i) => producer.enqueue('bench.latency', { i }), probe, BUDGET_MS);
      await worker.stop({ graceMs: 1000 });
      return measured;
    },
    async throughput() {
      await inParallel(THROUGHPUT_JOBS, 16, (i) => producer.enqueue('bench.throughput', { i }));
      const base = worker.stats().completed;
      const t0 = performance.now();
      await worker.start();
      await until(() => worker.stats().completed - base >= THROUGHPUT_JOBS, t0 + BUDGET_MS);
      const ms = performance.now() - t0;
      const jobs = worker.stats().completed - base;
      await worker.stop({ graceMs: 1000 });
      return { jobs, ms };
    },
    async close() {
      await worker.stop({ graceMs: 0 });
      await producerBus.close();
      await workerBus.close();
      await db.destroy();
    },
  };
}

/**
 * graphile-worker in schema `schema` of the scratch database; `localQueueSize` > 1 turns on its
 * batched local queue. Producer and worker have pools of their own (two "processes"), each warmed
 * before it is timed, as ours reuse a connected pool.
 */
async function graphile(url: string, schema: string, localQueueSize: number): Promise<Side> {
  const logger = new GraphileLogger(() => () => undefined);
  const preset = {
    worker: {
      connectionString: url,
      schema,
      concurrentJobs: CONCURRENCY,
      ...(localQueueSize > 1 && { localQueue: { size: localQueueSize } }),
    },
  };
  const connect = async (name: string) => {
    const p = new Pool({ connectionString: url, max: 10, application_name: name });
    // graphile-worker asks for handlers: an idle client dropped by the server must not end the run.
    p.on('error', () => undefined);
    p.on('connect', (client) => client.on('error', () => undefined));
    await Promise.all(Array.from({ length: 10 }, () => p.query('SELECT 1')));
    return p;
  };
  const pool = await connect('bench-graphile');
  const producerPool = await connect('bench-graphile-producer');
  await migrateGraphile({ preset, logger, pgPool: pool });
  const utils = await makeWorkerUtils({ preset, logger, pgPool: producerPool });
  const probe: { started: (() => void) | null } = { started: null };
  let completed = 0;
  const taskList = {
    'bench.latency': async () => probe.started?.(),
    'bench.throughput': async () => {
      completed++;
    },
  };
  const start = () => runGraphile({ preset, logger, pgPool: pool, noHandleSignals: true, taskList });
  // Its completions are written in the background: the round ends when its table holds no job.
  const remaining = async () => Number((await pool.query(`SELECT count(*) AS n FROM ${schema}._private_jobs`)).rows[0].n);
  let runner: Runner | null = null;
  return {
    async latency() {
      runner = await start();
      const measured = await measureLatencies((i) => utils.addJob('bench.latency', { i }), probe, BUDGET_MS);
      await runner.stop();
      runner = null;
      return measured;
    },
    async throughput() {
      await inParallel(THROUGHPUT_JOBS / 100, 4, (b) =>
        utils.addJobs(Array.from({ length: 100 }, (_, i) => ({ identifier: 'bench.throughput', payload: { i: b * 100 + i } }))),
      );
      completed = 0;
      const t0 = performance.now();
      runner = await start();
      const deadline = t0 + BUDGET_MS;
      await until(() => completed >= THROUGHPUT_JOBS, deadline);
      while ((await remaining()) > 0 && performance.now() < deadline) await new Promise((r) => setTimeout(r, 2));
      const ms = performance.now() - t0;
      const jobs = THROUGHPUT_JOBS - (await remaining());
      await runner.stop();
      runner = null;
      return { jobs, ms };
    },
    async close() {
      await (runner as Runner | null)?.stop();
      await utils.release();
      await producerPool.end();
      await pool.end();
    },
  };
}

async function benchPgBoss(url: string): Promise<QueueFigures> {
  const boss = new PgBoss({ connectionString: url, schema: 'pgboss', max: 10, supervise: false, schedule: false });
  boss.on('error', () => undefined);
  await boss.start();
  try {
    await boss.createQueue('bench.latency');
    await boss.createQueue('bench.throughput');

    const probe: { started: (() => void) | null } = { started: null };
    await boss.work('bench.latency', { pollingIntervalSeconds: 0.5, batchSize: 1 }, async () => probe.started?.());
    const measured = await measureLatencies((i) => boss.send('bench.latency', { i }), probe, PGBOSS_LATENCY_BUDGET_MS);
    await boss.offWork('bench.latency');

    await boss.insert(Array.from({ length: THROUGHPUT_JOBS }, (_, i) => ({ name: 'bench.throughput', data: { i } })));
    let completed = 0;
    const t0 = performance.now();
    // batchSize = concurrency: pg-boss 10 has no per-worker concurrency, a batch is the unit of work
    await boss.work('bench.throughput', { pollingIntervalSeconds: 0.5, batchSize: CONCURRENCY }, async (jobs) => {
      await Promise.all(jobs.map(async () => undefined));
      completed += jobs.length;
    });
    await until(() => completed >= THROUGHPUT_JOBS, t0 + PGBOSS_THROUGHPUT_BUDGET_MS);
    return figures(measured, [{ jobs: completed, ms: performance.now() - t0 }]);
  } finally {
    await boss.stop({ graceful: false, wait: true });
  }
}

export async function benchQueue(url: string): Promise<QueueBench> {
  const names = ['ours', 'graphile', 'graphileBatched'] as const;
  const sides: Record<(typeof names)[number], Side> = {
    ours: await ours(url),
    graphile: await graphile(url, 'graphile_worker', 1),
    graphileBatched: await graphile(url, 'graphile_worker_batched', 50),
  };
  try {
    const latencies = {} as Record<(typeof names)[number], number[]>;
    for (const name of names) latencies[name] = await sides[name].latency();
    const rounds = { ours: [], graphile: [], graphileBatched: [] } as Record<(typeof names)[number], { jobs: number; ms: number }[]>;
    const order: string[][] = [];
    for (let r = 0; r < ROUNDS; r++) {
      const turn = names.map((_, i) => names[(i + r) % names.length]);
      order.push(turn);
      for (const name of turn) rounds[name].push(await sides[name].throughput());
    }
    const result: QueueBench = {
      ours: figures(latencies.ours, rounds.ours),
      graphile: figures(latencies.graphile, rounds.graphile),
      graphileBatched: figures(latencies.graphileBatched, rounds.graphileBatched),
      order,
    };
    if (process.env.QUEUE_PGBOSS === '1') result.pgBoss = await benchPgBoss(url);
    return result;
  } finally {
    for (const name of names) await sides[name].close();
  }
}

if (require.main === module) {
  // Runs in a scratch database on DATABASE_URL's server, dropped afterwards.
  void (async () => {
    const server = process.env.DATABASE_URL;
    if (!server) throw new Error('DATABASE_URL is required');
    const name = `bench_queue_${randomBytes(4).toString('hex')}`;
    const admin = new Client({ connectionString: server });
    await admin.connect();
    await admin.query(`CREATE DATABASE ${name}`);
    const url = new URL(server);
    url.pathname = `/${name}`;
    try {
      console.log(JSON.stringify(await benchQueue(url.toString()), null, 2));
    } finally {
      await admin.query(`DROP DATABASE IF EXISTS ${name} WITH (FORCE)`);
      await admin.end();
    }
  })().catch((err) => {
    console.error(err);
    process.exitCode = 1;
  });
}
