import 'reflect-metadata';
import { performance } from 'node:perf_hooks';
import { createDataSource } from '../kernel/db/data-source';
import { createEventBus } from '../kernel/events';
import { createLogger } from '../kernel/logger';
import { Queue } from '../kernel/queue';
import type { AnyNames } from '../kernel/topics';
import type { ControlPlaneBuilt } from '../subgraphs/control-plane';
import { AGENT_CONCURRENCY } from '../subgraphs/control-plane/tasks';
import type { V1 } from '../test/support/answers';
import { startLocalPlatform } from '../test/support/platform';
import { spawnServer, stopOnSignals } from './child';
import { CpuMeter } from './cpu';
import { jsonClient } from './load';
import { createScratchDatabase, resolveBenchServer } from './scratch-db';

/**
 * Agent tasks end to end with the offline model, beside the raw queue
 * (kernel/queue.ts, no-op jobs, the agent pool's concurrency) measured in the same run on the
 * same scratch database.
 *
 *   latency      TASKS_LATENCY async `POST /v1/control-plane/agents/execute`, one after another:
 *                enqueue-to-start (the task's started_at - created_at, both the database's clock)
 *   end to end   TASKS_N tasks posted by 64 concurrent clients while the workers run: from the first
 *                POST to the last completion (tasks/s), and enqueue-to-start under that load
 *   drain        the agent pool paused, TASKS_N tasks posted (ingest/s), the pool resumed: tasks
 *                completed per second by the runtime alone
 *   baseline     the same three on the raw queue: sequential enqueue-to-start, TASKS_N no-op jobs
 *                enqueued by 64 concurrent producers while a worker runs, and a drain of TASKS_N
 *
 * The machine's speed drifts by tens of percent between one second and the next (bench/README.md),
 * so the end-to-end phases, the figure compared with the raw queue, are not run once each back to
 * back: after a discarded warm-up round of each (TASKS_WARMUP, three rounds' worth), TASKS_ROUNDS
 * rounds each run the platform's and the raw queue's, the order alternating, and each side's figure
 * is over all its rounds (completed / seconds summed); `rounds` keeps each round's pair, to show the
 * drift, and `warmUp` the warm-up round's. The warm-up is that long because the platform reaches its
 * steady state late: its CPU per task (and the HTTP clients') kept falling over its first ~7,000
 * tasks, V8 optimizing a large code base. With a warm-up of 1,000 the platform's rounds rose from
 * one to the next (890, 1,022, 1,209 tasks/s in one run) and its CPU per task was 0.73-0.81 ms; with
 * 6,000 they were level and it was 0.59-0.61 ms (three alternated pairs of runs on one host: 0.55,
 * 0.58, 0.66 of the raw queue against 0.74, 0.66, 0.70).
 * Those rounds keep both cores busy, so `cpu` gives what a task and a raw job cost each process
 * (the platform's, this one, PostgreSQL's): where the end-to-end figure's gap is.
 *
 * The platform (`all` role, offline model) runs in a child process (this file with `--serve`), the
 * HTTP clients and the raw queue in the calling process. Every task is docs-author/write-guide:
 * render through the prompt library, offline completion, result and artifact stored, events.
 *
 * Use: `const figures = await benchTasks()` (DATABASE_URL's server, else the embedded one), or
 * `node dist/bench/tasks.bench.js` to print them as JSON.
 */

export interface TaskBenchFigures {
  tasks: number;
  concurrency: { clients: number; agentPool: number };
  latency: { samples: number; enqueueToStartP50Ms: number; enqueueToStartP99Ms: number };
  endToEnd: {
    tasksPerSecond: number;
    seconds: number;
    completed: number;
    failed: number;
    /** error.code -> count, for the tasks that did not complete. */
    errors: Record<string, number>;
    enqueueToStartP50Ms: number;
    enqueueToStartP99Ms: number;
  };
  drain: { tasksPerSecond: number; seconds: number; ingestPerSecond: number };
  /** Each round's end-to-end figures, in order: the platform's tasks/s and the raw queue's jobs/s. */
  rounds: { tasksPerSecond: number; jobsPerSecond: number }[];
  /** The discarded warm-up round's: `tasks` tasks and as many raw jobs, from a cold start. */
  warmUp: { tasks: number; tasksPerSecond: number; jobsPerSecond: number };
  /**
   * CPU (ms) per task of the end-to-end rounds, and per no-op job of the raw queue's rounds:
   * the platform's process, the driver (HTTP clients, or the raw producers and worker) and
   * PostgreSQL (bench/cpu.ts; absent off Linux).
   */
  cpu?: { task: CpuPerItem; rawJob: CpuPerItem };
  baseline: {
    enqueueToStartP50Ms: number;
    enqueueToStartP99Ms: number;
    endToEndJobsPerSecond: number;
    drainJobsPerSecond: number;
  };
}

type CpuPerItem = NonNullable<ReturnType<CpuMeter['perItem']>>;

const N = Number(process.env.TASKS_N ?? 2000);
const ROUNDS = Number(process.env.TASKS_ROUNDS ?? 3);
/** Tasks (and raw jobs) of the discarded end-to-end round before the measured ones (see above). */
const E2E_WARMUP_N = Number(process.env.TASKS_WARMUP ?? 3 * N);
const LATENCY_N = Number(process.env.TASKS_LATENCY ?? 200);
const CLIENTS = 64;
const KEYS = 50;
const BUDGET_MS = 60_000;
/**
 * How often the driver asks whether all tasks have ended. The figures come from the tasks' own
 * timestamps, not from when the poll noticed; a count over thousands of ids every 10 ms would load
 * the database the platform is measured on (the raw queue's baseline counts in its own process).
 */
const POLL_MS = 250;

interface ServeInfo {
  url: string;
  dbUrl: string;
  keys: string[];
}

function percentile(samples: number[], p: number): number {
  if (!samples.length) return NaN;
  const sorted = [...samples].sort((a, b) => a - b);
  return Math.round(sorted[Math.min(sorted.length - 1, Math.max(0, Math.ceil((p / 100) * sorted.length) - 1))]! * 100) / 100;
}

const round1 = (n: number) => Math.round(n * 10) / 10;

async function inParallel(n: number, width: number, fn: (i: number) => Promise<unknown>): Promise<void> {
  let next = 0;
  await Promise.all(
    Array.from({ length: width }, async () => {
      while (next < n) await fn(next++);
    }),
  );
}

async function waitUntil(done: () => boolean | Promise<boolean>, deadline: number, every = 20): Promise<boolean> {
  while (!(await done())) {
    if (performance.now() > deadline) return false;
    await new Promise((r) => setTimeout(r, every));
  }
  return true;
}

// ---------------------------------------------------------------------------------------------
// The driver

export async function benchTasks(): Promise<TaskBenchFigures> {
  const server = await spawnServer<ServeInfo>('task bench server', __filename, ['--serve'], { ...process.env, LOG_LEVEL: 'error' });
  const { child, info } = server;
  try {
    const ask = (cmd: 'pause' | 'resume') =>
      new Promise<void>((resolve) => {
        child.once('message', () => resolve());
        child.send({ cmd });
      });
    const db = createDataSource({ url: info.dbUrl, migrations: [], applicationName: 'bench-tasks-driver', poolSize: 4 });
    await db.initialize();
    try {
      let k = 0;
      // A lean HTTP client (jsonClient), not fetch: the driver shares the cores with the platform.
      const client = jsonClient(info.url, CLIENTS);
      const post = async (topic: string): Promise<string> => {
        const res = await client<V1<{ taskId: string }>>('POST', '/v1/control-plane/agents/execute', info.keys[k++ % info.keys.length]!, {
          agentId: 'docs-author',
          taskType: 'write-guide',
          context: { topic, audience: 'operators' },
        });
        if (res.status !== 202) throw new Error(`execute answered ${res.status}: ${JSON.stringify(res.body)}`);
        return res.body.data.taskId;
      };
      // Whether every task has ended. Each look reads only the tasks not seen ended yet: reading
      // all of a round's 2,000 at every look cost PostgreSQL about 10 ms, CPU taken from the round
      // it measures (the raw queue's driver counts its jobs in memory).
      const allEnded = (ids: string[]) => {
        let left = ids;
        return async () => {
          if (left.length)
            left = (await db.query(`SELECT id FROM control_plane.tasks WHERE id = ANY($1::uuid[]) AND status IN ('queued','running')`, [left])).map(
              (r: { id: string }) => r.id,
            );
          return left.length === 0;
        };
      };
      const startLatencies = async (ids: string[]) =>
        (
          await db.query(
            `SELECT extract(epoch FROM started_at - created_at) * 1000 AS ms FROM control_plane.tasks WHERE id = ANY($1::uuid[]) AND started_at IS NOT NULL`,
            [ids],
          )
        ).map((r: { ms: string }) => Number(r.ms));

      // Warm-up: plans, prompt cache of the database, JIT.
      await inParallel(100, 8, (i) => post(`warm-up ${i}`));

      const latencyIds: string[] = [];
      for (let i = 0; i < LATENCY_N; i++) latencyIds.push(await post(`latency ${i}`));
      await waitUntil(allEnded(latencyIds), performance.now() + BUDGET_MS);
      const unloaded = await startLatencies(latencyIds);

      // End to end: posted while the workers run, in rounds interleaved with the raw queue's.
      const endToEnd = async (round: string, n = N) => {
        const ids: string[] = [];
        const t0 = new Date();
        await inParallel(n, CLIENTS, async (i) => ids.push(await post(`e2e ${round}.${i}`)));
        await waitUntil(allEnded(ids), performance.now() + BUDGET_MS, POLL_MS);
        const [r] = await db.query(
          `SELECT count(*) FILTER (WHERE status = 'completed')::int AS completed, count(*) FILTER (WHERE status <> 'completed')::int AS failed,
                  extract(epoch FROM max(coalesce(completed_at, failed_at)) - $2::timestamptz) AS seconds
             FROM control_plane.tasks WHERE id = ANY($1::uuid[])`,
          [ids, t0],
        );
        return { ids, completed: r.completed as number, failed: r.failed as number, seconds: Number(r.seconds) };
      };
      const raw = await openRawQueue(info.dbUrl);
      try {
        const ours: Awaited<ReturnType<typeof endToEnd>>[] = [];
        const theirs: { jobs: number; seconds: number }[] = [];
        const cpu = { ours: new CpuMeter(child.pid!), theirs: new CpuMeter(child.pid!) };
        // A warm-up round of each, discarded: the first rounds under this load ran slower on both
        // sides (JIT, and each pooled connection planning its statements), the platform's most.
        const warmUp = { ours: await endToEnd('warm-up', E2E_WARMUP_N), theirs: await raw.endToEnd(E2E_WARMUP_N) };
        for (let round = 0; round < ROUNDS; round++) {
          if (round % 2) theirs.push(await cpu.theirs.measure(N, () => raw.endToEnd()));
          ours.push(await cpu.ours.measure(N, () => endToEnd(String(round))));
          if (!(round % 2)) theirs.push(await cpu.theirs.measure(N, () => raw.endToEnd()));
        }
        const e2eIds = ours.flatMap((r) => r.ids);
        const loaded = await startLatencies(e2eIds);
        const errors: Record<string, number> = {};
        for (const r of await db.query(
          `SELECT coalesce(error->>'code', status) AS code, error->>'message' AS message, count(*)::int AS n FROM control_plane.tasks
            WHERE id = ANY($1::uuid[]) AND status <> 'completed' GROUP BY 1, 2`,
          [e2eIds],
        )) {
          errors[r.code] = (errors[r.code] ?? 0) + r.n;
          if (process.env.BENCH_VERBOSE) process.stderr.write(`task failure: ${r.code} ${r.message} x${r.n}\n`);
        }

        // Drain: a backlog, then the runtime alone.
        await ask('pause');
        const drainIds: string[] = [];
        const i0 = performance.now();
        await inParallel(N, CLIENTS, async (i) => drainIds.push(await post(`drain ${i}`)));
        const ingestSeconds = (performance.now() - i0) / 1000;
        const d0 = new Date();
        await ask('resume');
        await waitUntil(allEnded(drainIds), performance.now() + BUDGET_MS, POLL_MS);
        const [drain] = await db.query(
          `SELECT extract(epoch FROM max(completed_at) - $2::timestamptz) AS seconds FROM control_plane.tasks WHERE id = ANY($1::uuid[])`,
          [drainIds, d0],
        );

        const rawLatencies = await raw.latency();
        const baseline: TaskBenchFigures['baseline'] = {
          enqueueToStartP50Ms: percentile(rawLatencies, 50),
          enqueueToStartP99Ms: percentile(rawLatencies, 99),
          endToEndJobsPerSecond: round1(theirs.reduce((a, r) => a + r.jobs, 0) / theirs.reduce((a, r) => a + r.seconds, 0)),
          drainJobsPerSecond: round1(await raw.drain()),
        };
        const completed = ours.reduce((a, r) => a + r.completed, 0);
        const seconds = ours.reduce((a, r) => a + r.seconds, 0);
        const [taskCpu, rawJobCpu] = [cpu.ours.perItem(), cpu.theirs.perItem()];
        return {
          tasks: N,
          concurrency: { clients: CLIENTS, agentPool: AGENT_CONCURRENCY },
          latency: { samples: unloaded.length, enqueueToStartP50Ms: percentile(unloaded, 50), enqueueToStartP99Ms: percentile(unloaded, 99) },
          endToEnd: {
            tasksPerSecond: round1(completed / seconds),
            seconds: Math.round(seconds * 100) / 100,
            completed,
            failed: ours.reduce((a, r) => a + r.failed, 0),
            errors,
            enqueueToStartP50Ms: percentile(loaded, 50),
            enqueueToStartP99Ms: percentile(loaded, 99),
          },
          drain: {
            tasksPerSecond: round1(N / Number(drain.seconds)),
            seconds: Math.round(Number(drain.seconds) * 100) / 100,
            ingestPerSecond: round1(N / ingestSeconds),
          },
          rounds: ours.map((r, i) => ({ tasksPerSecond: round1(r.completed / r.seconds), jobsPerSecond: round1(theirs[i]!.jobs / theirs[i]!.seconds) })),
          warmUp: {
            tasks: E2E_WARMUP_N,
            tasksPerSecond: round1(warmUp.ours.completed / warmUp.ours.seconds),
            jobsPerSecond: round1(warmUp.theirs.jobs / warmUp.theirs.seconds),
          },
          ...(taskCpu && rawJobCpu && { cpu: { task: taskCpu, rawJob: rawJobCpu } }),
          baseline,
        };
      } finally {
        await raw.close();
      }
    } finally {
      await db.destroy();
    }
  } finally {
    await server.stop();
  }
}

/**
 * The raw queue on the same database: no-op jobs, the agent pool's concurrency, producers and
 * worker in this process. Its worker runs only during its own phases.
 */
async function openRawQueue(url: string) {
  const logger = createLogger('error');
  const db = createDataSource({ url, migrations: [], applicationName: 'bench-tasks-queue' });
  await db.initialize();
  const events = await createEventBus({ kind: 'memory' }, logger);
  const producer = new Queue<AnyNames>({ db, events, logger });
  const worker = new Queue<AnyNames>({ db, events, logger, concurrency: AGENT_CONCURRENCY });
  let onStart: (() => void) | null = null;
  worker.register('bench.tasks.latency', async () => onStart?.());
  worker.register('bench.tasks.noop', async () => undefined);
  /** Waits until the worker has completed `n` more jobs than `base`; false past the budget. */
  const completedSince = (base: number, n: number) => waitUntil(() => worker.stats().completed - base >= n, performance.now() + BUDGET_MS, 2);
  return {
    /** Enqueue-to-start of LATENCY_N jobs enqueued one at a time (ms). */
    async latency(): Promise<number[]> {
      await worker.start();
      const deadline = performance.now() + BUDGET_MS;
      const latencies: number[] = [];
      for (let i = 0; i < LATENCY_N; i++) {
        let startedAt = 0;
        onStart = () => (startedAt = performance.now());
        const t0 = performance.now();
        await producer.enqueue('bench.tasks.latency', { i });
        if (!(await waitUntil(() => startedAt > 0, deadline, 1))) break;
        latencies.push(startedAt - t0);
      }
      await worker.stop({ graceMs: 1000 });
      return latencies;
    },
    /** `n` no-op jobs enqueued by CLIENTS concurrent producers while the worker runs, until all are done. */
    async endToEnd(n = N): Promise<{ jobs: number; seconds: number }> {
      await worker.start();
      const base = worker.stats().completed;
      const t0 = performance.now();
      await inParallel(n, CLIENTS, (i) => producer.enqueue('bench.tasks.noop', { i }));
      if (!(await completedSince(base, n))) throw new Error('the raw queue did not complete its jobs within the budget');
      const seconds = (performance.now() - t0) / 1000;
      await worker.stop({ graceMs: 1000 });
      return { jobs: n, seconds };
    },
    /** Jobs/s of a worker started on a backlog of N. */
    async drain(): Promise<number> {
      await inParallel(N, CLIENTS, (i) => producer.enqueue('bench.tasks.noop', { i }));
      const base = worker.stats().completed;
      const t0 = performance.now();
      await worker.start();
      if (!(await completedSince(base, N))) throw new Error('the raw queue did not drain its backlog within the budget');
      const seconds = (performance.now() - t0) / 1000;
      await worker.stop({ graceMs: 1000 });
      return N / seconds;
    },
    async close(): Promise<void> {
      await worker.stop({ graceMs: 0 });
      await events.close();
      await db.destroy();
    },
  };
}

// ---------------------------------------------------------------------------------------------
// The server child

async function serve(): Promise<void> {
  const server = await resolveBenchServer();
  const scratch = await createScratchDatabase(server.url, 'tasks');
  let local: Awaited<ReturnType<typeof startLocalPlatform>> | undefined;
  const stop = stopOnSignals('tasks bench server', async () => {
    await local?.stop().catch((err) => process.stderr.write(`tasks bench server: unclean stop: ${String(err)}\n`));
    await scratch.drop().catch(() => undefined);
    if (server.embedded) await server.stop();
  });
  try {
    // LLM_BASE_URL unset: the offline model.
    local = await startLocalPlatform({ DATABASE_URL: scratch.url, LLM_BASE_URL: undefined, LOG_LEVEL: 'error' }, { label: 'platform-bench-tasks' });
    const running = local.platform;
    const kernel = running.kernel;
    const admin = await kernel.keys.authenticate(local.adminKey);
    const keys: string[] = [];
    for (let i = 0; i < KEYS; i++) {
      keys.push((await kernel.keys.create(admin, { name: `bench tasks ${i}`, tier: 'enterprise', permissions: ['agent:execute', 'agent:read'] })).plain);
    }
    const pool = (running.services['control-plane'] as ControlPlaneBuilt).agentQueue;
    process.on('message', (m: { cmd?: string }) => {
      const done = () => process.send?.({ ok: m.cmd });
      if (m.cmd === 'pause') void pool.stop({ graceMs: 5000 }).then(done);
      else if (m.cmd === 'resume') void pool.start().then(done);
    });
    process.stdout.write(JSON.stringify({ url: running.url, dbUrl: scratch.url, keys } satisfies ServeInfo) + '\n');
  } catch (err) {
    process.stderr.write(`tasks bench server: ${err instanceof Error ? err.stack : String(err)}\n`);
    await stop(1);
  }
}

if (require.main === module) {
  if (process.argv.includes('--serve')) {
    serve().catch((err) => {
      process.stderr.write(`tasks bench server: ${err instanceof Error ? err.stack : String(err)}\n`);
      process.exit(1);
    });
  } else {
    benchTasks()
      .then((f) => console.log(JSON.stringify(f, null, 2)))
      .catch((err) => {
        console.error(err);
        process.exitCode = 1;
      });
  }
}
