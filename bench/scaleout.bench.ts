import { spawn, type ChildProcess } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { performance } from 'node:perf_hooks';
import { createDataSource } from '../kernel/db/data-source';
import { callJson } from '../test/support/platform';
import { freePort, waitHealthy } from '../test/support/net';
import type { Platform } from '../test/support/answers';
import { platformNodeFlags } from './child';
import { postgresCpuMs, postgresSpentMs } from './cpu';
import { jsonClient } from './load';
import { benchMain, createScratchDatabase } from './scratch-db';

/**
 * Scale-out on one machine: the split deployment — a gateway process and SCALEOUT_WORKERS worker
 * processes (`node dist/main.js gateway|worker`) on one PostgreSQL and Redis — beside the all-in-one
 * process (`npm start`'s role), each on a scratch database of its own, one after the other in the
 * same run. Per topology:
 *
 *   agent tasks      SCALEOUT_N async `POST /v1/control-plane/agents/execute` (offline model) from 64
 *                    clients while the workers run, until every task has ended: tasks/s from the
 *                    first POST to the last completion (the tasks' own timestamps)
 *   webhook runs     SCALEOUT_N `POST /webhook/<path>` of a Webhook -> Set workflow answering on
 *                    receipt, so every execution is a queued job a worker runs: executions/s from the
 *                    first request to the last execution's end
 *
 * with PostgreSQL's CPU per task and per execution (every process named `postgres`, bench/cpu.ts),
 * from which a larger database server's ceiling can be projected. Every process shares the
 * machine's cores: on 2 cores more processes cannot add CPU, so the figure shows what the split
 * costs and where PostgreSQL's share goes, not the growth more machines would give.
 */

export interface TopologyFigures {
  topology: 'all-in-one' | 'split';
  processes: string[];
  tasksPerSecond: number;
  tasksFailed: number;
  executionsPerSecond: number;
  executionsFailed: number;
  /** PostgreSQL's CPU (ms) per task and per execution over those phases; absent off Linux. */
  postgresCpuMsPerTask?: number;
  postgresCpuMsPerExecution?: number;
}

export interface ScaleOutFigures {
  n: number;
  workers: number;
  topologies: TopologyFigures[];
}

const N = Number(process.env.SCALEOUT_N ?? 2000);
const WORKERS = Number(process.env.SCALEOUT_WORKERS ?? 2);
const WARMUP_N = Number(process.env.SCALEOUT_WARMUP ?? 500);
const CLIENTS = 64;
const KEYS = 40;
const BUDGET_MS = 120_000;
const POLL_MS = 250;
const HOOK_PATH = 'bench/scale-out';
const MAIN = path.join(__dirname, '..', 'main.js');

const round1 = (n: number) => Math.round(n * 10) / 10;
const round3 = (n: number) => Math.round(n * 1000) / 1000;

async function inParallel(n: number, width: number, fn: (i: number) => Promise<unknown>): Promise<void> {
  let next = 0;
  await Promise.all(
    Array.from({ length: width }, async () => {
      while (next < n) await fn(next++);
    }),
  );
}

interface Topology {
  url: string;
  /** The platform admin key (`*`), ensured through BOOTSTRAP_API_KEY. */
  adminKey: string;
  dbUrl: string;
  processes: string[];
  stop(): Promise<void>;
}

/** Starts `roles` (the first serves HTTP on `port`) on `dbUrl`, as `npm start` runs node, and waits for /health. */
async function startTopology(name: TopologyFigures['topology'], serverUrl: string, redisUrl: string | undefined): Promise<Topology> {
  const db = await createScratchDatabase(serverUrl, name === 'split' ? 'scaleout_split' : 'scaleout_all');
  const dataDir = mkdtempSync(path.join(tmpdir(), 'bench-scaleout-'));
  const port = await freePort();
  const adminKey = `cp_live_sk_${randomBytes(24).toString('base64url')}`;
  const env = {
    ...process.env,
    DATABASE_URL: db.url,
    DATA_DIR: dataDir,
    HOST: '127.0.0.1',
    LOG_LEVEL: 'error',
    BOOTSTRAP_API_KEY: adminKey,
    ...(name === 'split' && redisUrl ? { REDIS_URL: redisUrl } : {}),
  };
  const children: ChildProcess[] = [];
  const run = (role: string, extra: Record<string, string> = {}) => {
    const child = spawn(process.execPath, [...platformNodeFlags(), MAIN, role], { env: { ...env, ...extra }, stdio: ['ignore', 'ignore', 'inherit'] });
    children.push(child);
    process.on('exit', () => child.kill('SIGKILL'));
  };
  const stop = async () => {
    await Promise.all(
      children.map(
        (c) =>
          new Promise<void>((resolve) => {
            if (c.exitCode !== null || c.signalCode !== null) return resolve();
            c.once('exit', () => resolve());
            c.kill('SIGTERM');
            setTimeout(() => c.kill('SIGKILL'), 15_000).unref();
          }),
      ),
    );
    await db.drop();
    rmSync(dataDir, { recursive: true, force: true });
  };
  const url = `http://127.0.0.1:${port}`;
  try {
    run(name === 'split' ? 'gateway' : 'all', { PORT: String(port) });
    await waitHealthy(url, 120_000);
    if (name === 'split') for (let i = 0; i < WORKERS; i++) run('worker');
  } catch (err) {
    await stop();
    throw err;
  }
  const processes = name === 'split' ? ['gateway', ...Array.from({ length: WORKERS }, () => 'worker')] : ['all'];
  return { url, adminKey, dbUrl: db.url, processes, stop };
}

async function measure(topology: Topology, label: TopologyFigures['topology']): Promise<TopologyFigures> {
  const admin = topology.adminKey;
  const keys: string[] = [];
  for (let i = 0; i < KEYS; i++) {
    const created = await callJson<Platform<{ api_key: string }>>(topology.url, 'POST', '/control-plane/api/v1/auth/api-keys', admin, {
      name: `scale-out ${i}`,
      tier: 'enterprise',
      permissions: ['agent:execute', 'agent:read'],
    });
    keys.push(created.data.api_key);
  }
  const wf = await callJson<{ data: { workflowId: string } }>(topology.url, 'POST', '/v1/engine/workflows', admin, {
    name: 'Scale-out orders',
    active: true,
    nodes: [
      { name: 'Hook', type: 'engine.webhook' },
      { name: 'Set', type: 'engine.set', parameters: { values: { orderId: '{{ $json.body.id }}', status: 'accepted' }, keepOnlySet: true } },
    ],
    connections: { Hook: { main: [[{ node: 'Set', type: 'main', index: 0 }]] } },
  });
  await callJson(topology.url, 'POST', '/v1/engine/webhooks', admin, {
    workflowId: wf.data.workflowId,
    path: `/${HOOK_PATH}`,
    method: 'POST',
    responseMode: 'onReceived',
  });

  const db = createDataSource({ url: topology.dbUrl, migrations: [], applicationName: 'bench-scaleout-driver', poolSize: 2 });
  await db.initialize();
  const client = jsonClient(topology.url, CLIENTS);
  try {
    let k = 0;
    const postTask = async (topic: string): Promise<void> => {
      const res = await client('POST', '/v1/control-plane/agents/execute', keys[k++ % keys.length]!, {
        agentId: 'docs-author',
        taskType: 'write-guide',
        context: { topic, audience: 'operators' },
      });
      if (res.status !== 202) throw new Error(`execute answered ${res.status}: ${JSON.stringify(res.body)}`);
    };
    const postHook = async (i: number): Promise<void> => {
      const res = await client('POST', `/webhook/${HOOK_PATH}`, '', { id: `o-${i}` });
      if (res.status !== 200) throw new Error(`the webhook answered ${res.status}: ${JSON.stringify(res.body)}`);
    };
    const ended = async (sql: string, since: Date, n: number): Promise<{ done: number; failed: number; seconds: number }> => {
      const deadline = performance.now() + BUDGET_MS;
      for (;;) {
        const [r] = await db.query(sql, [since]);
        if (r.ended >= n || performance.now() > deadline) return { done: r.done, failed: r.ended - r.done, seconds: Number(r.seconds) };
        await new Promise((resolve) => setTimeout(resolve, POLL_MS));
      }
    };
    const TASKS_ENDED = `SELECT count(*) FILTER (WHERE status NOT IN ('queued','running'))::int AS ended, count(*) FILTER (WHERE status = 'completed')::int AS done,
                                extract(epoch FROM max(coalesce(completed_at, failed_at)) - $1::timestamptz) AS seconds
                           FROM control_plane.tasks WHERE created_at >= $1`;
    const RUNS_ENDED = `SELECT count(*) FILTER (WHERE status NOT IN ('new','running','waiting'))::int AS ended, count(*) FILTER (WHERE status = 'success')::int AS done,
                               extract(epoch FROM max(finished_at) - $1::timestamptz) AS seconds
                          FROM engine.executions WHERE started_at >= $1`;
    const phase = async (n: number, post: (i: number) => Promise<void>, sql: string) => {
      const since = new Date((await db.query(`SELECT now() AS t`))[0].t);
      const linux = process.platform === 'linux';
      const before = linux ? postgresCpuMs() : undefined;
      await inParallel(n, CLIENTS, post);
      const r = await ended(sql, since, n);
      return { ...r, postgresMs: before ? postgresSpentMs(before, postgresCpuMs()) : undefined };
    };
    // Warm-up of each (JIT, plans, pools), discarded.
    await phase(WARMUP_N, (i) => postTask(`warm-up ${i}`), TASKS_ENDED);
    await phase(WARMUP_N, postHook, RUNS_ENDED);
    const tasks = await phase(N, (i) => postTask(`scale-out ${i}`), TASKS_ENDED);
    const runs = await phase(N, postHook, RUNS_ENDED);
    return {
      topology: label,
      processes: topology.processes,
      tasksPerSecond: round1(tasks.done / tasks.seconds),
      tasksFailed: N - tasks.done,
      executionsPerSecond: round1(runs.done / runs.seconds),
      executionsFailed: N - runs.done,
      ...(tasks.postgresMs !== undefined && { postgresCpuMsPerTask: round3(tasks.postgresMs / N) }),
      ...(runs.postgresMs !== undefined && { postgresCpuMsPerExecution: round3(runs.postgresMs / N) }),
    };
  } finally {
    await db.destroy();
  }
}

/** The all-in-one process, then the split deployment (skipped without Redis: SCALEOUT_REDIS_URL, REDIS_URL or TEST_REDIS_URL). */
export async function benchScaleOut(serverUrl: string): Promise<ScaleOutFigures> {
  const redisUrl = process.env.SCALEOUT_REDIS_URL ?? process.env.REDIS_URL ?? process.env.TEST_REDIS_URL;
  const topologies: TopologyFigures[] = [];
  for (const name of ['all-in-one', 'split'] as const) {
    if (name === 'split' && !redisUrl) break;
    const topology = await startTopology(name, serverUrl, redisUrl);
    try {
      topologies.push(await measure(topology, name));
    } finally {
      await topology.stop();
    }
  }
  return { n: N, workers: WORKERS, topologies };
}

if (require.main === module) benchMain(benchScaleOut, () => undefined);
