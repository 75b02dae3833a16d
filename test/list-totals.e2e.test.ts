import assert from 'node:assert/strict';
import { randomUUID } from 'node:crypto';
import pg from 'pg';
import { EXECUTION_TALLY } from '../subgraphs/engine/executions/reads.store';
import { pruneBeyond, pruneOlderThan } from '../subgraphs/engine/executions/state.store';
import { TASK_TALLY } from '../subgraphs/control-plane/tasks';
import type { V1 } from './support/answers';
import type { ExecutionList } from './support/engine-answers';
import { startTestPlatform, type TestPlatform } from './support/platform';

/** A page of tasks, in the fields the test reads. */
interface TaskPage {
  tasks: { taskId: string }[];
  pagination: { total: number; hasMore: boolean };
}

/**
 * The `total` of GET /agents/tasks and GET /executions (pagination) is the number of matching
 * rows, whichever way they were written — one by one, in bulk, moved between statuses, pruned,
 * deleted with their workflow — whether the tallies behind it were folded or not, and in a
 * database that had rows before the tallies existed.
 */

const CP = '/v1/control-plane';
const AGENTS = ['docs-author', 'workflow-architect', 'forge-gatekeeper'];
const TYPES = ['changelog', 'review'];
const TASK_STATUSES = ['queued', 'running', 'completed', 'failed', 'cancelled'];

let p: TestPlatform;
let sql: pg.Client;
const workflows: string[] = [];
const orchestration = randomUUID();

const realCount = async (from: string, where: Record<string, unknown>) => {
  const params: unknown[] = [];
  const conditions = Object.entries(where)
    .filter(([, v]) => v !== undefined)
    .map(([c, v]) => `${c} = $${params.push(v)}`);
  return Number((await sql.query(`SELECT count(*) AS n FROM ${from} ${conditions.length ? `WHERE ${conditions.join(' AND ')}` : ''}`, params)).rows[0].n);
};

/** Every task filter combination (and the orchestration filter, which the tally does not cover): REST total = count(*). */
async function assertTaskTotals(): Promise<void> {
  for (const agentId of [undefined, ...AGENTS])
    for (const taskType of [undefined, ...TYPES])
      for (const status of [undefined, ...TASK_STATUSES]) {
        const query = new URLSearchParams({ limit: '5', ...(agentId && { agentId }), ...(taskType && { taskType }), ...(status && { status }) });
        const res = await p.rest<V1<TaskPage>>('GET', `${CP}/agents/tasks?${query}`);
        assert.equal(res.status, 200, JSON.stringify(res.body));
        const real = await realCount('control_plane.tasks', { agent_id: agentId, task_type: taskType, status });
        assert.equal(res.body.data.pagination.total, real, `${query}`);
        assert.equal(res.body.data.pagination.hasMore, real > 5);
      }
  const byOrchestration = await p.rest<V1<TaskPage>>('GET', `${CP}/agents/tasks?orchestrationId=${orchestration}&status=completed`);
  assert.equal(byOrchestration.body.data.pagination.total, await realCount('control_plane.tasks', { orchestration_id: orchestration, status: 'completed' }));
}

/** Every execution filter combination (and a date range, which the tally does not cover): REST total = count(*). */
async function assertExecutionTotals(): Promise<void> {
  for (const workflowId of [undefined, ...workflows])
    for (const status of [undefined, 'running', 'success', 'error', 'canceled']) {
      const query = new URLSearchParams({ limit: '5', ...(workflowId && { workflowId }), ...(status && { status }) });
      const res = await p.rest<V1<ExecutionList>>('GET', `/v1/engine/executions?${query}`);
      assert.equal(res.status, 200, JSON.stringify(res.body));
      assert.equal(res.body.data.pagination.total, await realCount('engine.executions', { workflow_id: workflowId, status }), `${query}`);
    }
  const since = new Date(Date.now() - 3 * 86_400_000).toISOString();
  const ranged = await p.rest<V1<ExecutionList>>('GET', `/v1/engine/executions?startDate=${encodeURIComponent(since)}`);
  const real = Number((await sql.query(`SELECT count(*) AS n FROM engine.executions WHERE started_at >= $1`, [since])).rows[0].n);
  assert.equal(ranged.body.data.pagination.total, real);
}

const insertTasks = (n: number, status: string, extra = '') =>
  sql.query(
    `INSERT INTO control_plane.tasks (id, agent_id, task_type, status, priority, mode, timeout_seconds, context, estimated_duration,
                                      started_at, completed_at, result, failed_at, error, cancelled_at, orchestration_id)
     SELECT gen_random_uuid(), ($2::text[])[1 + i % 3], ($3::text[])[1 + i % 2], $1, 'normal', 'async', 300, '{}', 10,
            CASE WHEN $1 <> 'queued' THEN now() END,
            CASE WHEN $1 = 'completed' THEN now() END, CASE WHEN $1 = 'completed' THEN '{"output": {}}'::jsonb END,
            CASE WHEN $1 = 'failed' THEN now() END, CASE WHEN $1 = 'failed' THEN '{"code": "x", "message": "x"}'::jsonb END,
            CASE WHEN $1 = 'cancelled' THEN now() END, CASE WHEN i % 4 = 0 THEN $5::uuid END
       FROM generate_series(1, $4::int) i ${extra}`,
    [status, AGENTS, TYPES, n, orchestration],
  );

/** History, written as the growth bench does: the run-clock triggers off for the session (the tallies' are ALWAYS). */
const insertExecutions = async (n: number, daysAgo: number) => {
  await sql.query(`SET session_replication_role = replica`);
  await sql.query(
    `INSERT INTO engine.executions (id, workflow_id, workflow_version, status, mode, started_at, finished_at, failed_at, duration_ms, error)
     SELECT gen_random_uuid(), ($1::uuid[])[1 + i % cardinality($1::uuid[])], 1, s, 'manual', at, at + interval '1 second',
            CASE WHEN s = 'error' THEN at + interval '1 second' END, 1000, CASE WHEN s = 'error' THEN '{"code": "X", "message": "x"}'::jsonb END
       FROM (SELECT i, now() - make_interval(days => $3::int, secs => i) AS at, CASE WHEN i % 5 = 0 THEN 'error' ELSE 'success' END AS s
               FROM generate_series(1, $2::int) i) g`,
    [workflows, n, daysAgo],
  );
  await sql.query(`SET session_replication_role = DEFAULT`);
};

beforeAll(async () => {
  p = await startTestPlatform({ ENGINE_EXECUTION_MAX_AGE_DAYS: '36500', ENGINE_EXECUTION_MAX_COUNT: '100000000' });
  sql = new pg.Client({ connectionString: p.db.url });
  await sql.connect();
  for (let i = 0; i < 3; i++) {
    const wf = await p.rest<V1<{ workflowId: string; id?: string }>>('POST', '/v1/engine/workflows', {
      body: { name: `counted ${i}`, nodes: [{ name: 'Start', type: 'engine.manualTrigger' }], connections: {} },
    });
    assert.equal(wf.status, 201, JSON.stringify(wf.body));
    workflows.push(wf.body.data.workflowId ?? wf.body.data.id);
  }
});

afterAll(async () => {
  await sql?.end();
  const db = p?.db;
  await p?.stop();
  await db?.drop();
});

describe('GET /v1/control-plane/agents/tasks: pagination.total', () => {
  test('after single and bulk inserts, before and after the tally is folded', async () => {
    await insertTasks(1, 'queued');
    await insertTasks(300, 'queued');
    await insertTasks(120, 'completed');
    await insertTasks(40, 'failed');
    await assertTaskTotals();
    await TASK_TALLY.fold(p.platform.kernel.db);
    await assertTaskTotals();
  });

  test('a deep page (read from the end) holds the rows a forward read gives, in order', async () => {
    for (const [query, order] of [
      ['', 'created_at DESC, id DESC'],
      ['agentId=docs-author&sortBy=duration&sortOrder=desc', 'duration_ms DESC NULLS LAST, id DESC'],
      ['status=queued&sortBy=createdAt&sortOrder=asc', 'created_at ASC, id ASC'],
    ]) {
      const filter = new URLSearchParams(query);
      const where = Object.entries({ agent_id: filter.get('agentId') ?? undefined, status: filter.get('status') ?? undefined }).filter(([, v]) => v);
      const ids = (
        await sql.query(
          `SELECT id FROM control_plane.tasks ${where.length ? `WHERE ${where.map(([c], i) => `${c} = $${i + 1}`).join(' AND ')}` : ''} ORDER BY ${order}`,
          where.map(([, v]) => v),
        )
      ).rows.map((r) => r.id as string);
      for (const offset of [ids.length - 3, ids.length - 10, Math.floor(ids.length / 2) + 1]) {
        const res = await p.rest<V1<TaskPage>>('GET', `${CP}/agents/tasks?${query}&limit=7&offset=${offset}`);
        assert.equal(res.status, 200, JSON.stringify(res.body));
        assert.deepEqual(
          res.body.data.tasks.map((t) => t.taskId),
          ids.slice(offset, offset + 7),
          `${query} offset ${offset}`,
        );
      }
    }
  });

  test('after status changes: queued → running → completed, failed, cancelled (also through POST …/cancel)', async () => {
    await sql.query(`UPDATE control_plane.tasks SET status = 'running', started_at = now() WHERE status = 'queued' AND agent_id = 'docs-author'`);
    await assertTaskTotals();
    await sql.query(`UPDATE control_plane.tasks SET status = 'completed', result = '{"output": {}}' WHERE status = 'running' AND task_type = 'review'`);
    await sql.query(`UPDATE control_plane.tasks SET status = 'failed', error = '{"code": "x", "message": "x"}' WHERE status = 'running'`);
    await sql.query(`UPDATE control_plane.tasks SET progress = '{"percentage": 50}' WHERE status = 'queued'`);
    const queued = (await sql.query(`SELECT id FROM control_plane.tasks WHERE status = 'queued' LIMIT 3`)).rows.map((r) => r.id as string);
    for (const id of queued) {
      const res = await p.rest('POST', `${CP}/agents/tasks/${id}/cancel`, { body: { reason: 'counted' } });
      assert.equal(res.status, 200, JSON.stringify(res.body));
    }
    await assertTaskTotals();
    await TASK_TALLY.fold(p.platform.kernel.db);
    await assertTaskTotals();
  });
});

describe('GET /v1/engine/executions: pagination.total', () => {
  test('after runs, bulk inserts, prunes by age and by count, and a deleted workflow', async () => {
    for (const id of workflows.slice(0, 2)) {
      const run = await p.rest('POST', `/v1/engine/workflows/${id}/execute`, { body: { data: {} } });
      assert.ok(run.status < 300, JSON.stringify(run.body));
    }
    await insertExecutions(200, 1);
    await insertExecutions(150, 40);
    await assertExecutionTotals();
    await EXECUTION_TALLY.fold(p.platform.kernel.db);
    assert.ok((await pruneOlderThan(p.platform.kernel.db, 30)) >= 150);
    await assertExecutionTotals();
    assert.ok((await pruneBeyond(p.platform.kernel.db, workflows[0]!, 10)) > 0);
    await assertExecutionTotals();
    assert.equal((await p.rest('DELETE', `/v1/engine/workflows/${workflows[2]}`)).status < 300, true);
    await assertExecutionTotals();
    await EXECUTION_TALLY.fold(p.platform.kernel.db);
    await assertExecutionTotals();
  });
});

describe('an upgraded database', () => {
  test('rows written before the tallies existed are counted once their migrations run', async () => {
    const db = p.db;
    await p.stop({ keepDatabase: true });
    // The database as it was before the tallies: their tables and triggers gone, their migrations not run.
    const q = { query: async (text: string, params?: unknown[]) => (await sql.query(text, params)).rows };
    await TASK_TALLY.drop(q);
    await EXECUTION_TALLY.drop(q);
    await sql.query(`DELETE FROM platform_migrations WHERE name IN ('TaskTally1763769601740', 'ExecutionTally1763769601750')`);
    await insertTasks(50, 'completed');
    await insertExecutions(60, 2);
    p = await startTestPlatform({ ENGINE_EXECUTION_MAX_AGE_DAYS: '36500', ENGINE_EXECUTION_MAX_COUNT: '100000000' }, { database: db });
    await assertTaskTotals();
    await assertExecutionTotals();
  });
});
