import { randomBytes } from 'node:crypto';
import { performance } from 'node:perf_hooks';
import { Client } from 'pg';
import PgBoss from 'pg-boss';
import { createDataSource } from '../kernel/db/data-source';
import { kernelMigrations } from '../kernel/db/migrations';
import { createEventBus } from '../kernel/events';
import { createLogger } from '../kernel/logger';
import { Queue } from '../kernel/queue';
import type { AnyNames } from '../kernel/topics';

/**
 * kernel/queue.ts against pg-boss 10 on the same server, in one run: (a) enqueue-to-start latency
 * of no-op jobs enqueued one at a time, (b) throughput of 2,000 queued no-op jobs at concurrency 8.
 * Ours is measured across two "processes" (producer and worker on separate PostgreSQL event buses,
 * the split-mode path): the wake-up goes through NOTIFY. pg-boss 10 only polls (>= 0.5 s), so its
 * phases are cut off by a time budget to keep the run under a minute; `jobs` is how many jobs the
 * throughput phase completed.
 */

export interface QueueFigures {
  enqueueToStartP50Ms: number;
  enqueueToStartP99Ms: number;
  jobsPerSecond: number;
  jobs: number;
}

const LATENCY_JOBS = 200;
const THROUGHPUT_JOBS = 2000;
const CONCURRENCY = 8;
/** Per-phase budgets for pg-boss, whose polling makes the full counts take minutes. */
const PGBOSS_LATENCY_BUDGET_MS = 10_000;
const PGBOSS_THROUGHPUT_BUDGET_MS = 15_000;
/** Ours must finish well inside these; they only bound a broken run. */
const OURS_BUDGET_MS = 15_000;

function percentile(samples: number[], p: number): number {
  if (samples.length === 0) return NaN;
  const sorted = [...samples].sort((a, b) => a - b);
  const index = Math.min(sorted.length - 1, Math.ceil((p / 100) * sorted.length) - 1);
  return Math.round(sorted[Math.max(0, index)] * 100) / 100;
}

function figures(latencies: number[], jobs: number, elapsedMs: number): QueueFigures {
  return {
    enqueueToStartP50Ms: percentile(latencies, 50),
    enqueueToStartP99Ms: percentile(latencies, 99),
    jobsPerSecond: Math.round((jobs / (elapsedMs / 1000)) * 10) / 10,
    jobs,
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

/** Runs `fn` for 0..n-1 with at most `width` calls in flight. */
async function inParallel(n: number, width: number, fn: (i: number) => Promise<unknown>): Promise<void> {
  let next = 0;
  await Promise.all(
    Array.from({ length: width }, async () => {
      while (next < n) await fn(next++);
    }),
  );
}

async function benchOurs(url: string): Promise<QueueFigures> {
  const logger = createLogger('warn');
  const db = createDataSource({ url, migrations: kernelMigrations, applicationName: 'bench-queue' });
  await db.initialize();
  await db.runMigrations();
  const notify = (channel: string, payload: string) => db.query('SELECT pg_notify($1, $2)', [channel, payload]);
  const producerBus = await createEventBus({ kind: 'postgres', url, notify }, logger);
  const workerBus = await createEventBus({ kind: 'postgres', url, notify }, logger);
  const producer = new Queue<AnyNames>({ db, events: producerBus, logger });
  const worker = new Queue<AnyNames>({ db, events: workerBus, logger, concurrency: CONCURRENCY });
  try {
    let onStart: (() => void) | null = null;
    worker.register('bench.latency', async () => onStart?.());
    worker.register('bench.throughput', async () => undefined);
    await worker.start();

    const latencies: number[] = [];
    const deadline = performance.now() + OURS_BUDGET_MS;
    for (let i = 0; i < LATENCY_JOBS; i++) {
      let startedAt = 0;
      onStart = () => (startedAt = performance.now());
      const t0 = performance.now();
      await producer.enqueue('bench.latency', { i });
      if (!(await until(() => startedAt > 0, deadline))) break;
      latencies.push(startedAt - t0);
    }
    await worker.stop({ graceMs: 1000 });

    await inParallel(THROUGHPUT_JOBS, 16, (i) => producer.enqueue('bench.throughput', { i }));
    const base = worker.stats().completed;
    const t0 = performance.now();
    await worker.start();
    await until(() => worker.stats().completed - base >= THROUGHPUT_JOBS, t0 + OURS_BUDGET_MS);
    const elapsed = performance.now() - t0;
    return figures(latencies, worker.stats().completed - base, elapsed);
  } finally {
    await worker.stop({ graceMs: 0 });
    await producerBus.close();
    await workerBus.close();
    await db.destroy();
  }
}

async function benchPgBoss(url: string): Promise<QueueFigures> {
  const boss = new PgBoss({ connectionString: url, schema: 'pgboss', max: 10, supervise: false, schedule: false });
  boss.on('error', () => undefined);
  await boss.start();
  try {
    await boss.createQueue('bench.latency');
    await boss.createQueue('bench.throughput');

    let onStart: (() => void) | null = null;
    await boss.work('bench.latency', { pollingIntervalSeconds: 0.5, batchSize: 1 }, async () => onStart?.());
    const latencies: number[] = [];
    const deadline = performance.now() + PGBOSS_LATENCY_BUDGET_MS;
    for (let i = 0; i < LATENCY_JOBS; i++) {
      let startedAt = 0;
      onStart = () => (startedAt = performance.now());
      const t0 = performance.now();
      await boss.send('bench.latency', { i });
      if (!(await until(() => startedAt > 0, deadline))) break;
      latencies.push(startedAt - t0);
    }
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
    const elapsed = performance.now() - t0;
    return figures(latencies, completed, elapsed);
  } finally {
    await boss.stop({ graceful: false, wait: true });
  }
}

export async function benchQueue(url: string): Promise<{ ours: QueueFigures; pgBoss: QueueFigures }> {
  const ours = await benchOurs(url);
  const pgBoss = await benchPgBoss(url);
  return { ours, pgBoss };
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
