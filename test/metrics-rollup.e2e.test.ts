import assert from 'node:assert/strict';
import { randomUUID } from 'node:crypto';
import type { DataSource } from 'typeorm';
import { createDataSource } from '../kernel/db/data-source';
import { kernelMigrations } from '../kernel/db/migrations';
import { rows } from '../kernel/db/rows';
import { GRANULARITIES, runStatistics, type Granularity, type Period } from '../kernel/metrics';
import { controlPlane } from '../subgraphs/control-plane';
import { metricsStore, TASK_ROLLUP } from '../subgraphs/control-plane/metrics';
import { createTestDatabase, type TestDatabase } from './support/database';

/**
 * GET /metrics/agents reads hourly rollups and a duration histogram (kernel/metrics-rollup.ts);
 * its figures must be those of the raw SQL over every task of the period (kernel/metrics.ts
 * runStatistics and the task-type split), exactly: generated tasks of several agents, task types,
 * outcomes and error codes, periods whose edges are not on hours, every granularity, with and
 * without the agent filter, before and after the rollups are folded, after tasks move and go.
 */

let db: TestDatabase;
let ds: DataSource;
const AGENTS = ['docs-author', 'workflow-architect', 'forge-gatekeeper', 'api-documenter'];
const TYPES = ['changelog', 'review', 'design'];
const CODES = ['TASK_TIMEOUT', 'agent_execution_failed', 'MODEL_ERROR', null];
const T0 = Date.UTC(2026, 2, 2, 0, 0, 0); // a Monday

let seed = 7;
const rand = () => (seed = (seed * 1103515245 + 12345) % 2 ** 31) / 2 ** 31;
const pick = <T>(xs: readonly T[]) => xs[Math.floor(rand() * xs.length)]!;

/** `n` tasks over 40 days from T0, written as history (the run clock off for the session; the rollups' triggers are ALWAYS). */
async function insertTasks(n: number): Promise<void> {
  const values: unknown[][] = [];
  for (let i = 0; i < n; i++) {
    const status = pick(['completed', 'completed', 'completed', 'failed', 'cancelled', 'queued', 'running']);
    const at = new Date(T0 + Math.floor(rand() * 40 * 86_400_000) + Math.floor(rand() * 1000) / 1000);
    // Durations repeat (ties), span several histogram buckets, and are missing for some runs.
    const ms = status === 'queued' || (status === 'cancelled' && rand() < 0.3) ? null : rand() < 0.2 ? 1500 : Math.floor(rand() ** 3 * 200_000);
    const code = pick(CODES);
    values.push([
      randomUUID(),
      pick(AGENTS),
      pick(TYPES),
      status,
      ms,
      at,
      status === 'failed' ? (code ? { code, message: 'x' } : { message: 'no code' }) : null,
    ]);
  }
  await ds.transaction(async (tx) => {
    await tx.query(`SET LOCAL session_replication_role = replica`);
    await tx.query(
      `INSERT INTO control_plane.tasks (id, agent_id, task_type, status, priority, mode, timeout_seconds, context, estimated_duration, duration_ms,
                                        created_at, started_at, completed_at, failed_at, cancelled_at, result, error)
       SELECT v.id, v.agent, v.type, v.status, 'normal', 'async', 300, '{}', 10, v.ms, v.at,
              CASE WHEN v.status <> 'queued' THEN v.at END,
              CASE WHEN v.status = 'completed' THEN v.at END, CASE WHEN v.status = 'failed' THEN v.at END, CASE WHEN v.status = 'cancelled' THEN v.at END,
              CASE WHEN v.status = 'completed' THEN '{"output": {}}'::jsonb END, v.error
         FROM jsonb_to_recordset($1::jsonb) AS v(id uuid, agent text, type text, status text, ms int, at timestamptz, error jsonb)`,
      [JSON.stringify(values.map(([id, agent, type, status, ms, at, error]) => ({ id, agent, type, status, ms, at, error })))],
    );
  });
}

/** The raw answer: every task of the period (what the endpoint computed before the rollups). */
async function raw(period: Period, agentId: string | null) {
  const stats = await runStatistics(ds, TASK_ROLLUP.src, period, agentId ? 't.agent_id = $3' : '', agentId ? [agentId] : []);
  const types = await rows<{ type: string; n: number; ok: number; avg: number }>(
    ds,
    `SELECT t.task_type AS type, count(*)::int AS n, count(*) FILTER (WHERE t.status = 'completed')::int AS ok, coalesce(avg(t.duration_ms), 0)::float8 AS avg
     ${stats.where} GROUP BY t.task_type ORDER BY 2 DESC, 1`,
    stats.args,
  );
  return { summary: stats.summary, timeseries: stats.timeseries, errorBreakdown: stats.errorBreakdown, types };
}

async function rolled(period: Period, agentId: string | null) {
  const { stats, types } = await metricsStore.agentFigures(ds, period, agentId);
  return { summary: stats.summary, timeseries: stats.timeseries, errorBreakdown: stats.errorBreakdown, types };
}

const PERIODS: [string, number, number][] = [
  ['edges inside hours', T0 + 3 * 3_600_000 + 17 * 60_000 + 12_500, T0 + 38 * 86_400_000 + 5 * 3_600_000 + 41 * 60_000 + 3],
  ['on hour boundaries', T0 + 86_400_000, T0 + 20 * 86_400_000],
  ['within one hour', T0 + 5 * 86_400_000 + 10 * 60_000, T0 + 5 * 86_400_000 + 50 * 60_000],
  ['across one hour boundary', T0 + 7 * 86_400_000 + 30 * 60_000, T0 + 7 * 86_400_000 + 90 * 60_000 + 1],
  ['before any task', T0 - 10 * 86_400_000, T0 - 86_400_000 - 1],
];

/** Every period, granularity (that the period allows) and agent filter: rollup answer = raw answer. */
async function assertSame(): Promise<number> {
  let compared = 0;
  for (const [name, start, end] of PERIODS)
    for (const granularity of GRANULARITIES.filter((g) => g !== 'minute') as Granularity[]) {
      if (granularity === 'hour' && end - start > 2000 * 3_600_000) continue;
      for (const agentId of [null, AGENTS[1]!, 'nobody']) {
        const period: Period = { start: new Date(start), end: new Date(end), granularity };
        const expected = await raw(period, agentId);
        assert.deepEqual(await rolled(period, agentId), expected, `${name}, ${granularity}, agent ${agentId}`);
        compared++;
      }
    }
  return compared;
}

beforeAll(async () => {
  db = await createTestDatabase();
  ds = createDataSource({ url: db.url, migrations: [...kernelMigrations, ...controlPlane.migrations], applicationName: 'metrics-rollup-test', poolSize: 4 });
  await ds.initialize();
  await ds.runMigrations({ transaction: 'each' });
});

afterAll(async () => {
  await ds?.destroy();
  await db?.drop();
});

describe('GET /metrics/agents figures from the rollups', () => {
  test('equal the raw SQL over every task: every granularity, the agent filter, edges off the hour; before and after a fold', async () => {
    await insertTasks(4000);
    const sample = await raw({ start: new Date(PERIODS[0]![1]), end: new Date(PERIODS[0]![2]), granularity: 'day' }, null);
    assert.ok(
      sample.summary.totalExecutions > 2000 && sample.summary.failedExecutions > 100 && sample.errorBreakdown.length === 4,
      JSON.stringify(sample.summary),
    );
    assert.ok((await assertSame()) > 30);
    await TASK_ROLLUP.fold(ds);
    await assertSame();
  });

  test('tasks that finish, move and go are counted where they are now', async () => {
    // Running tasks finish through the run clock (their durations stamped now), some queued ones are cancelled, some tasks go.
    await ds.query(
      `UPDATE control_plane.tasks SET status = 'completed', result = '{"output": {}}', started_at = now() - interval '3 seconds' WHERE status = 'running' AND agent_id = $1`,
      [AGENTS[1]],
    );
    await ds.query(
      `UPDATE control_plane.tasks SET status = 'failed', error = '{"code": "LATE", "message": "x"}', started_at = now() - interval '2 seconds' WHERE status = 'running'`,
    );
    await ds.query(`UPDATE control_plane.tasks SET status = 'cancelled', cancel_reason = 'x' WHERE status = 'queued' AND task_type = 'review'`);
    await ds.query(`UPDATE control_plane.tasks SET progress = '{"percentage": 5}' WHERE status = 'queued'`);
    await ds.query(`DELETE FROM control_plane.tasks WHERE id IN (SELECT id FROM control_plane.tasks WHERE status = 'completed' ORDER BY id LIMIT 300)`);
    await insertTasks(500);
    await assertSame();
    await TASK_ROLLUP.fold(ds);
    await assertSame();
  });

  test('an upgraded database: rollups created over existing tasks count them', async () => {
    // As the migration finds a populated table: the rollups gone, then created again over every task.
    await TASK_ROLLUP.drop(ds);
    await insertTasks(300);
    await TASK_ROLLUP.create(ds);
    await assertSame();
  });
});
