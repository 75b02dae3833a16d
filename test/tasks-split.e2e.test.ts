import assert from 'node:assert/strict';
import { Client as PgClient } from 'pg';
import type { Gql, V1 } from './support/answers';
import type { JsonAnswer } from './support/platform';
import { startSplitTopology, type SplitTopology } from './support/split';
import { startFakeLlm, type FakeLlm } from './support/fake-llm';
import { subscribe as subscribeTo, wsClient } from './support/subscribe';
import { until } from './support/until';

/**
 * Agent tasks across processes: the control-plane subgraph alone (it creates tasks and answers
 * sync calls), a worker (it runs them, offline model) and the gateway (REST and the graphql-ws
 * subscription). State changes cross processes as PostgreSQL notifications. The model is a local
 * fake that answers slowly, so a task is still running when the subscription starts.
 */
let split: SplitTopology;
let fake: FakeLlm;

/** The task fields the execute and cancel answers are read for. */
interface Task {
  taskId: string;
  status: string;
  result: { promptVersion: number };
}

/** `split.call`, its answer read as the shape the test expects (`T`, e.g. `V1<Task>`). */
const call = <T>(method: string, p: string, body?: unknown) => split.call(method, p, body) as Promise<JsonAnswer<T>>;

beforeAll(async () => {
  fake = await startFakeLlm({ models: ['default'] });
  split = await startSplitTopology({ LLM_BASE_URL: fake.url });
});

afterAll(async () => {
  await split?.stop();
  await fake?.close();
});

const body = (mode: 'async' | 'sync') => ({
  agentId: 'postmortem-analyst',
  taskType: 'write-postmortem',
  context: { incident: 'API outage 2026-11-20', timeline: ['09:00 alert', '09:20 rollback'], severity: 'sev2' },
  execution: { mode },
});

/** The task fields the subscription below selects. */
interface TaskEvent {
  taskId: string;
  status: string;
  progress: { percentage: number; currentStep: string } | null;
  result: { output: Record<string, unknown>; filesCreated: string[] } | null;
}

/** taskUpdated at the gateway, read as the tasks it carries; an event the server refused counts as an error. */
function subscribe(taskId: string, selection: string) {
  const client = wsClient(split.gatewayUrl, `Bearer ${split.adminKey}`);
  const sub = subscribeTo<Gql<{ taskUpdated: TaskEvent }>>(client, `subscription($id: ID!) { taskUpdated(taskId: $id) { ${selection} } }`, { id: taskId });
  return {
    get events(): TaskEvent[] {
      return sub.events.filter((v) => !v.errors).map((v) => v.data.taskUpdated);
    },
    get errors(): unknown[] {
      return [...sub.events.filter((v) => v.errors).map((v) => v.errors), ...sub.errors];
    },
    dispose: () => client.dispose(),
  };
}

describe('agent tasks in split mode', () => {
  test('created in the subgraph process, run by the worker, watched at the gateway over graphql-ws', async () => {
    fake.delay(1500);
    const created = await call<V1<Task>>('POST', '/v1/control-plane/agents/execute', body('async'));
    assert.equal(created.status, 202, JSON.stringify(created.body));
    const sub = subscribe(created.body.data.taskId, 'taskId status progress { percentage currentStep } result { output filesCreated }');
    try {
      await until('the completed task or an error', () => sub.events.some((t) => t.status === 'completed') || sub.errors.length > 0);
      assert.deepEqual(sub.errors, []);
      // Each event is resolved by refetching the task, so the order is monotonic: running (while
      // the model answers), then completed — an event sent during the last step may already
      // show the completed task.
      const statuses = sub.events.map((t) => t.status);
      const done = statuses.indexOf('completed');
      // (the subscription may open after the first steps' events: the model call holds the task
      // running for 1.5 s, so what it sees is zero or more `running`, then `completed`)
      assert.ok(done >= 0, JSON.stringify(statuses));
      assert.ok(
        statuses.slice(0, done).every((s) => s === 'running'),
        JSON.stringify(statuses),
      );
      assert.ok(
        statuses.slice(done).every((s) => s === 'completed'),
        JSON.stringify(statuses),
      );
      const last = sub.events.at(-1);
      assert.ok(last?.result, JSON.stringify(last));
      assert.equal(last.progress?.percentage, 100);
      assert.equal(last.result.output.severity, 'SEV2');
      assert.ok(last.result.filesCreated[0].startsWith('postmortems/'));
    } finally {
      await sub.dispose();
    }
  });

  test('sync mode: the subgraph process waits on the worker’s events', async () => {
    fake.delay(1000);
    const t0 = Date.now();
    const res = await call<V1<Task>>('POST', '/v1/control-plane/agents/execute', body('sync'));
    assert.equal(res.status, 200, JSON.stringify(res.body));
    assert.equal(res.body.data.status, 'completed');
    assert.ok(Date.now() - t0 >= 1000 && Date.now() - t0 < 5_000);
  });

  test('a prompt edited at the gateway reaches the worker’s next task (its cached version is dropped across processes)', async () => {
    fake.delay(0);
    const id = 'postmortem-analyst-write-postmortem';
    const before = await call<V1<Task>>('POST', '/v1/control-plane/agents/execute', body('sync'));
    assert.equal(before.body.data.status, 'completed', JSON.stringify(before.body));
    const version = before.body.data.result.promptVersion as number;
    const edited = await call('PUT', `/v1/promptlib/prompts/${id}`, {
      template: 'Postmortem of {{incident}} at {{severity}}, edited.',
      createNewVersion: true,
    });
    assert.equal(edited.status, 200, JSON.stringify(edited.body));
    const seen = fake.chatBodies().length;
    const after = await call<V1<Task>>('POST', '/v1/control-plane/agents/execute', body('sync'));
    assert.equal(after.body.data.status, 'completed', JSON.stringify(after.body));
    assert.equal(after.body.data.result.promptVersion, version + 1);
    assert.equal(fake.chatBodies()[seen].messages[0].content, 'Postmortem of API outage 2026-11-20 at sev2, edited.');
  });

  test('cancel in the subgraph process aborts the model call in the worker', async () => {
    fake.delay(8000);
    const created = await call<V1<Task>>('POST', '/v1/control-plane/agents/execute', body('async'));
    const taskId = created.body.data.taskId;
    await until('the model call', () => fake.chatBodies().length > 0);
    const res = await call<V1<Task>>('POST', `/v1/control-plane/agents/tasks/${taskId}/cancel`, { reason: 'split' });
    assert.equal(res.body.data.status, 'cancelled');
    const pg = new PgClient({ connectionString: split.databaseUrl });
    await pg.connect();
    try {
      await until(
        'the job to be cancelled',
        async () =>
          (await pg.query(`SELECT j.state FROM platform.jobs j JOIN control_plane.tasks t ON t.job_id = j.id WHERE t.id = $1`, [taskId])).rows[0]?.state ===
          'cancelled',
        5000,
      );
    } finally {
      await pg.end();
    }
  });
});
