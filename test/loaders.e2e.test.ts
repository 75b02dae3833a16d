import assert from 'node:assert/strict';
import { AsyncLocalStorage } from 'node:async_hooks';
import pg from 'pg';
import { SUBGRAPH_EXECUTION } from '../kernel/subgraph';
import type { Gql, V1 } from './support/answers';
import { startTestPlatform, type TestPlatform } from './support/platform';

/**
 * Per-parent field resolvers are batched per request (kernel/loaders.ts): a page of 100 parents takes
 * as many SQL statements as a page of 10, and the answers are the stored values. Statements are counted
 * by wrapping pg's `Client.prototype.query` inside an AsyncLocalStorage scope bound to the
 * SUBGRAPH_EXECUTION channel, only for the test caller's executions, so background work never counts.
 */

interface Scope {
  statements: string[];
}
const scopes = new AsyncLocalStorage<Scope>();
let recording: Scope[] | undefined;

function installCounters(): () => void {
  // A nested execution stays in its caller's scope; the service's own executions get none.
  SUBGRAPH_EXECUTION.start.bindStore(scopes, ({ context }) => {
    const current = scopes.getStore();
    if (current || !recording || context.principal.kind === 'service') return current;
    const scope: Scope = { statements: [] };
    recording.push(scope);
    return scope;
  });
  const query = pg.Client.prototype.query;
  // Wraps every overload of query alike: the statement is the first argument, a string or a config with `text`.
  pg.Client.prototype.query = function countedQuery(this: pg.Client, ...args: unknown[]) {
    const scope = scopes.getStore();
    if (scope) scope.statements.push(typeof args[0] === 'string' ? args[0] : String((args[0] as { text?: unknown } | undefined)?.text ?? ''));
    return (query as (...a: unknown[]) => unknown).apply(this, args);
  } as typeof query;
  return () => {
    SUBGRAPH_EXECUTION.start.unbindStore(scopes);
    pg.Client.prototype.query = query;
  };
}

let p: TestPlatform;
let seed: pg.Client;
let uninstall: (() => void) | undefined;

/** A workflow as the lists select it. */
interface ListedWorkflow {
  workflowId: string;
  statistics: { executions: number; successRate: number; averageDuration: number };
  lastExecuted: string | null;
  webhookUrl: string | null;
}

/** An execution as the list selects it. */
interface ListedExecution {
  executionId: string;
  nodeData: { nodeName: string; runIndex: number; output: unknown }[];
  logs: { message: string }[];
}

/** Runs one GraphQL operation and returns its data with the statements its execution issued. */
async function counted<D>(query: string, variables: Record<string, unknown>): Promise<{ data: D; statements: string[] }> {
  // Once uncounted: the edge's key look-up and the plan's first run are not what is measured.
  const warm = await p.graphql<Gql<D>>(query, variables);
  assert.equal(warm.body.errors, undefined, JSON.stringify(warm.body.errors));
  const seen: Scope[] = (recording = []);
  const res = await p.graphql<Gql<D>>(query, variables).finally(() => (recording = undefined));
  assert.equal(res.status, 200, JSON.stringify(res.body));
  assert.equal(res.body.errors, undefined, JSON.stringify(res.body.errors));
  const statements = seen.flatMap((s) => s.statements);
  return { data: res.body.data, statements };
}

/** The same operation for 10 and for 100 parents: the same number of statements. */
async function assertConstant<D>(name: string, query: string, check: (data: D, n: number) => void): Promise<number> {
  const few = await counted<D>(query, { limit: 10 });
  check(few.data, 10);
  const many = await counted<D>(query, { limit: 100 });
  check(many.data, 100);
  assert.ok(few.statements.length > 0, `${name}: no statement was counted (the counters are not installed)`);
  assert.equal(
    many.statements.length,
    few.statements.length,
    `${name}: ${few.statements.length} statements for 10, ${many.statements.length} for 100:\n${many.statements.join('\n---\n')}`,
  );
  console.log(`# ${name}: ${few.statements.length} statements for 10 parents, ${many.statements.length} for 100`);
  return many.statements.length;
}

const expected = {
  artifacts: new Map<string, { path: string; content: string }[]>(),
  stats: new Map<string, { executions: number; successRate: number; averageDuration: number; lastExecuted: string | null }>(),
  hooks: new Map<string, string | null>(),
  nodes: new Map<string, { nodeName: string; runIndex: number; output: unknown }[]>(),
  logs: new Map<string, string[]>(),
};

beforeAll(async () => {
  uninstall = installCounters();
  p = await startTestPlatform();
  seed = new pg.Client({ connectionString: p.db.url });
  await seed.connect();
  // Stored as given: no trigger stamps the executions' end and duration with the seeding clock.
  await seed.query(`SET session_replication_role = replica`);

  // 120 finished tasks, created a second apart; task i wrote i % 3 files.
  for (let i = 0; i < 120; i++) {
    const [{ id }] = (
      await seed.query(
        `INSERT INTO control_plane.tasks (id, agent_id, task_type, status, priority, mode, timeout_seconds, context, estimated_duration, created_at, cancelled_at)
         VALUES (gen_random_uuid(), 'loader-agent', 'loader-task', 'cancelled', 'normal', 'async', 300, '{}', 1, now() - make_interval(secs => $1), now()) RETURNING id`,
        [i],
      )
    ).rows;
    const files = Array.from({ length: i % 3 }, (_, j) => ({ path: `dir/file-${j}.txt`, content: `task ${i} file ${j}` }));
    for (const f of files) {
      await seed.query(`INSERT INTO control_plane.task_artifacts (task_id, path, kind, content, lines, bytes) VALUES ($1, $2, 'created', $3, 1, length($3))`, [
        id,
        f.path,
        f.content,
      ]);
    }
    expected.artifacts.set(id, files);
  }

  // 110 workflows; workflow i has i % 4 executions (alternately success and error) and, for
  // i % 3 == 0, an active webhook trigger (workflow 1 has an inactive one only).
  // Recent: the engine's maintenance prunes executions past EXECUTION_MAX_AGE_DAYS a few seconds after start.
  const start = Date.now() - 2 * 86_400_000;
  let executionNo = 0;
  for (let i = 0; i < 110; i++) {
    const res = await p.rest<V1<{ workflowId: string }>>('POST', '/v1/engine/workflows', {
      body: {
        name: `Loader ${i}`,
        nodes: [
          { name: 'Start', type: 'engine.manualTrigger' },
          { name: 'Noop', type: 'engine.noOp' },
        ],
        connections: { Start: { main: [[{ node: 'Noop', type: 'main', index: 0 }]] } },
      },
    });
    assert.equal(res.status, 201, JSON.stringify(res.body));
    const workflowId: string = res.body.data.workflowId;
    let succeeded = 0;
    let failed = 0;
    let durations = 0;
    let last: number | null = null;
    for (let k = 0; k < i % 4; k++) {
      const ok = k % 2 === 0;
      const startedAt = start + executionNo * 60_000;
      const duration = 100 + ((i * 7 + k * 13) % 50);
      const [{ id }] = (
        await seed.query(
          `INSERT INTO engine.executions (id, workflow_id, workflow_version, status, mode, started_at, finished_at, failed_at, duration_ms, error)
           VALUES (gen_random_uuid(), $1, 1, $2, 'manual', $3, $3::timestamptz + make_interval(secs => $4::int / 1000.0), $5, $4, $6) RETURNING id`,
          [
            workflowId,
            ok ? 'success' : 'error',
            new Date(startedAt),
            duration,
            ok ? null : new Date(startedAt + duration),
            ok ? null : JSON.stringify({ code: 'X', message: 'boom' }),
          ],
        )
      ).rows;
      executionNo++;
      if (ok) succeeded++;
      else failed++;
      durations += duration;
      last = Math.max(last ?? 0, startedAt);
      // Execution e ran (e % 3) + 1 nodes and logged e % 3 lines.
      const nodes = Array.from({ length: (executionNo % 3) + 1 }, (_, n) => ({ nodeName: `Node ${n}`, runIndex: 0, output: [[{ json: { n, executionNo } }]] }));
      for (const [seq, node] of nodes.entries()) {
        await seed.query(
          `INSERT INTO engine.execution_nodes (execution_id, node_name, run_index, seq, node_type, status, started_at, duration_ms, output)
           VALUES ($1, $2, 0, $3, 'engine.noOp', 'success', $4, 1, $5)`,
          [id, node.nodeName, seq, new Date(startedAt), JSON.stringify(node.output)],
        );
      }
      const logs = Array.from({ length: executionNo % 3 }, (_, l) => `execution ${executionNo} line ${l}`);
      for (const message of logs) await seed.query(`INSERT INTO engine.execution_logs (execution_id, level, message) VALUES ($1, 'info', $2)`, [id, message]);
      expected.nodes.set(
        id,
        nodes.map((n) => ({ ...n, output: { main: n.output } })),
      );
      expected.logs.set(id, logs);
    }
    const finished = succeeded + failed;
    expected.stats.set(workflowId, {
      executions: i % 4,
      successRate: finished ? Math.round((succeeded / finished) * 10_000) / 100 : 0,
      averageDuration: finished ? Math.round(durations / finished) : 0,
      lastExecuted: last === null ? null : new Date(last).toISOString(),
    });
    if (i % 3 === 0 || i === 1) {
      await seed.query(`INSERT INTO engine.webhook_triggers (workflow_id, path, method, active) VALUES ($1, $2, 'POST', $3)`, [
        workflowId,
        `loader-${i}`,
        i !== 1,
      ]);
    }
    expected.hooks.set(workflowId, i % 3 === 0 ? `/webhook/loader-${i}` : null);
  }
});

afterAll(async () => {
  uninstall?.();
  await seed?.end();
  await p?.stop();
});

describe('per-parent fields are loaded in one statement for the whole page', () => {
  test('tasks with their artifacts', async () => {
    await assertConstant(
      'tasks { artifacts }',
      `query Tasks($limit: Int) { tasks(limit: $limit) { tasks { taskId artifacts { path content } } } }`,
      (data: { tasks: { tasks: { taskId: string; artifacts: { path: string; content: string }[] }[] } }, n) => {
        const tasks = data.tasks.tasks;
        assert.equal(tasks.length, n);
        for (const t of tasks) assert.deepEqual(t.artifacts, expected.artifacts.get(t.taskId), `artifacts of ${t.taskId}`);
        assert.ok(tasks.some((t) => t.artifacts.length === 2) && tasks.some((t) => t.artifacts.length === 0));
      },
    );
  });

  test('workflows with statistics, lastExecuted and webhookUrl (engine and control-plane lists)', async () => {
    const check = (field: string) => (data: Record<string, { workflows: ListedWorkflow[] }>, n: number) => {
      const workflows = data[field].workflows;
      assert.equal(workflows.length, n);
      for (const w of workflows) {
        const stats = expected.stats.get(w.workflowId)!;
        assert.deepEqual(
          w.statistics,
          { executions: stats.executions, successRate: stats.successRate, averageDuration: stats.averageDuration },
          `statistics of ${w.workflowId}`,
        );
        assert.equal(w.lastExecuted, stats.lastExecuted);
        const hook = expected.hooks.get(w.workflowId);
        if (hook === null) assert.equal(w.webhookUrl, null);
        else assert.equal(w.webhookUrl, `${p.url}${hook}`);
      }
      assert.ok(workflows.some((w) => w.webhookUrl) && workflows.some((w) => w.statistics.executions === 3));
    };
    const selection = `workflows { workflowId statistics { executions successRate averageDuration } lastExecuted webhookUrl }`;
    await assertConstant(
      'workflows { statistics lastExecuted webhookUrl }',
      `query W($limit: Int!) { workflows(limit: $limit) { ${selection} } }`,
      check('workflows'),
    );
    await assertConstant(
      'controlPlaneWorkflows { statistics lastExecuted webhookUrl }',
      `query W($limit: Int!) { controlPlaneWorkflows(limit: $limit) { ${selection} } }`,
      check('controlPlaneWorkflows'),
    );
  });

  test('executions with their node data and logs', async () => {
    await assertConstant(
      'executions { nodeData logs }',
      `query E($limit: Int!) { executions(limit: $limit) { executions { executionId nodeData { nodeName runIndex output } logs { message } } } }`,
      (data: { executions: { executions: ListedExecution[] } }, n) => {
        const executions = data.executions.executions;
        assert.equal(executions.length, n);
        for (const e of executions) {
          assert.deepEqual(e.nodeData, expected.nodes.get(e.executionId), `node data of ${e.executionId}`);
          assert.deepEqual(
            e.logs.map((l) => l.message),
            expected.logs.get(e.executionId),
            `logs of ${e.executionId}`,
          );
        }
        assert.ok(executions.some((e) => e.logs.length === 2) && executions.some((e) => e.logs.length === 0));
      },
    );
  });

  test('webhook triggers with their statistics', async () => {
    const triggers = (await seed.query(`SELECT id FROM engine.webhook_triggers ORDER BY created_at DESC, id DESC`)).rows as { id: string }[];
    // Two requests on the newest trigger, one rejected, one test call (not counted in statistics).
    await seed.query(
      `INSERT INTO engine.webhook_logs (webhook_id, method, status, status_code, response_time_ms, test)
       VALUES ($1, 'POST', 'success', 200, 10, false), ($1, 'POST', 'rejected', 401, 3, false), ($1, 'POST', 'success', 200, 99, true)`,
      [triggers[0]!.id],
    );
    type Webhooks = { workflowWebhooks: { webhooks: { webhookId: string; statistics: unknown }[] } };
    const few = await counted<Webhooks>(
      `query T($limit: Int!) { workflowWebhooks(limit: $limit) { webhooks { webhookId statistics { totalRequests failedRequests rejectedRequests } } } }`,
      { limit: 10 },
    );
    const all = await counted<Webhooks>(
      `query T($limit: Int!) { workflowWebhooks(limit: $limit) { webhooks { webhookId statistics { totalRequests failedRequests rejectedRequests } } } }`,
      { limit: 100 },
    );
    assert.equal(all.data.workflowWebhooks.webhooks.length, triggers.length);
    assert.equal(all.statements.length, few.statements.length, all.statements.join('\n---\n'));
    console.log(`# workflowWebhooks { statistics }: ${few.statements.length} statements for 10 parents, ${all.statements.length} for ${triggers.length}`);
    for (const w of all.data.workflowWebhooks.webhooks) {
      const newest = w.webhookId === triggers[0]!.id;
      assert.deepEqual(
        w.statistics,
        newest ? { totalRequests: 2, failedRequests: 1, rejectedRequests: 1 } : { totalRequests: 0, failedRequests: 0, rejectedRequests: 0 },
      );
    }
  });

  test('a single parent still answers (the loader of one key)', async () => {
    const [taskId, files] = [...expected.artifacts].find(([, f]) => f.length === 2)!;
    const one = await counted<{ task: { artifacts: unknown } }>(`query T($id: ID!) { task(taskId: $id) { artifacts { path content } } }`, { id: taskId });
    assert.deepEqual(one.data.task.artifacts, files);
    assert.equal(one.statements.filter((s) => s.includes('task_artifacts')).length, 1);
  });
});
