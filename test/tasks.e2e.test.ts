import 'reflect-metadata';
import assert from 'node:assert/strict';
import { randomUUID } from 'node:crypto';
import type { Client } from 'graphql-ws';
import { Queue } from '../kernel/queue';
import { TOPIC } from '../kernel/topics';
import { verifySignature } from '../kernel/webhooks';
import type { ControlPlaneBuilt } from '../subgraphs/control-plane';
import { testClock } from './support/clock';
import { startFakeLlm, type FakeLlm } from './support/fake-llm';
import { fakeLlmEnv, guideTask } from './support/fixtures';
import type { Gql, V1 } from './support/answers';
import { startTestPlatform, type TestPlatform } from './support/platform';
import { subscribe as subscribeTo, wsClient, type Subscription } from './support/subscribe';
import { sleep, until, untilValue } from './support/until';
import { webhookReceiver, type ReceivedRequest } from './support/webhook-receiver';

/**
 * The task lifecycle: cancellation (queued and running), timeout, priority order, signed
 * webhooks checked by a local receiver, and taskUpdated over graphql-ws through the gateway.
 */

/** A task as GET …/agents/tasks/{id} and the execute answer show it, in the fields these tests read. */
interface Task {
  taskId: string;
  status: string;
  cancelReason?: string;
  startedAt: string;
  completedAt: string;
  failedAt?: string;
  cancelledAt?: string;
  duration: number;
  progress: { percentage: number; currentStep: string; stepsCompleted: number; stepsTotal: number };
  result: { filesCreated: string[]; output: unknown };
  error: { code: string; details: { timeout: number } };
}

/** A cancel's answer. */
interface Cancelled {
  taskId: string;
  status: string;
  cancelledAt: string;
}

/** A task.* webhook delivery's body. */
interface TaskEvent {
  event: string;
  taskId: string;
  agentId: string;
  timestamp: string;
  result: { status: string; filesCreated: string[]; output: unknown; error: { code: string }; duration: number };
}

/** What the subscription asks of a task (progress is null in the first event, the task as queued; the tests read it after). */
interface TaskUpdate {
  taskId: string;
  status: string;
  cancelledAt: string;
  progress: { percentage: number; currentStep: string; stepsCompleted: number; stepsTotal: number };
  result: { filesCreated: string[] };
}
type TaskUpdated = Gql<{ taskUpdated: TaskUpdate }>;
type GqlErrors = NonNullable<Gql<never>['errors']>;

const CP = '/v1/control-plane';
let p: TestPlatform;
let fake: FakeLlm;
/** A sync request's wait ends when a test moves it. */
const clock = testClock();
const clients: Client[] = [];

const answer = JSON.stringify({ summary: 'done', files: [{ path: 'docs/x.md', content: '# X\n\n## Overview\n' }] });
const task = (topic: string, extra: Record<string, unknown> = {}) => guideTask({ topic, audience: 'operators' }, extra);
const controlPlane = () => p.platform.services['control-plane'] as ControlPlaneBuilt;
const pool = () => controlPlane().agentQueue;

const getTask = async (id: string) => (await p.rest<V1<Task>>('GET', `${CP}/agents/tasks/${id}`)).body.data;

beforeAll(async () => {
  fake = await startFakeLlm({ models: ['model-default'] });
  p = await startTestPlatform(fakeLlmEnv(fake.url), { clock });
});
afterAll(async () => {
  for (const c of clients) await c.dispose();
  await p?.stop();
  await fake?.close();
});
beforeEach(() => {
  fake.reset();
  fake.reply(() => answer);
});

describe('POST /v1/control-plane/agents/tasks/{taskId}/cancel', () => {
  test('a queued task is cancelled at once and never runs', async () => {
    await pool().stop({ graceMs: 0 });
    try {
      const created = (await p.rest<V1<Task>>('POST', `${CP}/agents/execute`, { body: task('held') })).body.data;
      const res = await p.rest<V1<Cancelled>>('POST', `${CP}/agents/tasks/${created.taskId}/cancel`, {
        body: { reason: 'not needed' },
      });
      assert.equal(res.status, 200, JSON.stringify(res.body));
      assert.equal(res.body.data.taskId, created.taskId);
      assert.equal(res.body.data.status, 'cancelled');
      assert.ok(res.body.data.cancelledAt);
      const t = await getTask(created.taskId);
      assert.equal(t.status, 'cancelled');
      assert.equal(t.cancelReason, 'not needed');
      assert.equal(t.startedAt, undefined);
    } finally {
      await pool().start();
    }
    await sleep(300);
    assert.equal(fake.chatBodies().length, 0);
  });

  test('a running task is cancelled and its model call aborted', async () => {
    fake.delay(10_000);
    const created = (await p.rest<V1<Task>>('POST', `${CP}/agents/execute`, { body: task('slow') })).body.data;
    const running = await untilValue(
      'the task to be calling the model',
      () => getTask(created.taskId),
      (t) => t.status === 'running' && t.progress.currentStep.startsWith('calling the model') && fake.chatBodies().length === 1,
    );
    assert.equal(running.progress.stepsCompleted, 1);
    const t0 = Date.now();
    const res = await p.rest<V1<Cancelled>>('POST', `${CP}/agents/tasks/${created.taskId}/cancel`, {});
    assert.equal(res.status, 200);
    assert.equal(res.body.data.status, 'cancelled');
    const [row] = await p.platform.kernel.db.query(`SELECT job_id FROM control_plane.tasks WHERE id = $1`, [created.taskId]);
    const job = (await untilValue(
      'the job to be cancelled',
      () => p.platform.kernel.queue.get(row.job_id),
      (j) => j?.state === 'cancelled',
    ))!;
    assert.ok(job.finishedAt);
    assert.ok(Date.now() - t0 < 5_000, 'the handler stopped well before the model would have answered');
    const t = await getTask(created.taskId);
    assert.equal(t.status, 'cancelled');
    assert.equal(t.result, undefined);
    assert.ok(t.duration >= 0);
  });
});

describe('races between cancel, start, timeout and completion', () => {
  const TERMINAL = ['completed', 'failed', 'cancelled'];

  /** A task as GET …/agents/tasks/{id} shows it: the fields of its state and timing. */
  interface TaskTiming {
    status: string;
    startedAt?: string;
    completedAt?: string;
    failedAt?: string;
    cancelledAt?: string;
    duration: number;
  }

  /** What a client must always see of a finished task: one terminal state with the fields of that state. */
  function assertConsistent(t: TaskTiming): void {
    assert.ok(TERMINAL.includes(t.status), `terminal, not ${t.status}`);
    assert.equal(t.completedAt !== undefined, t.status === 'completed', 'completedAt iff completed');
    assert.equal(t.failedAt !== undefined, t.status === 'failed', 'failedAt iff failed');
    assert.equal(t.cancelledAt !== undefined, t.status === 'cancelled', 'cancelledAt iff cancelled');
    if (t.startedAt) {
      const end = Date.parse(t.completedAt ?? t.failedAt ?? t.cancelledAt ?? '');
      assert.ok(end >= Date.parse(t.startedAt), `ended ${t.completedAt ?? t.failedAt ?? t.cancelledAt} before it started ${t.startedAt}`);
      assert.ok(t.duration >= 0, `duration ${t.duration}`);
      assert.ok(Math.abs(t.duration * 1000 - (end - Date.parse(t.startedAt))) <= 1, 'the duration is the distance between start and end');
    } else {
      assert.equal(t.status, 'cancelled', 'only a task cancelled while queued has no start');
    }
  }

  test('a cancel whose transaction began before the start committed still ends after the start', async () => {
    await pool().stop({ graceMs: 0 }); // no worker takes the task meanwhile
    const id: string = (await p.rest<V1<Task>>('POST', `${CP}/agents/execute`, { body: task('interleaved') })).body.data.taskId;
    // Replay the interleaving by hand: the canceller's transaction (and its now()) begins first,
    // the start commits, then the cancel's UPDATE runs: the statements the services run.
    const { Client } = await import('pg');
    const canceller = new Client({ connectionString: p.db.url });
    await canceller.connect();
    try {
      await canceller.query('BEGIN');
      await canceller.query('SELECT now()');
      await sleep(30);
      await p.platform.kernel.db.query(
        `UPDATE control_plane.tasks SET status = 'running', started_at = now() WHERE id = $1 AND status IN ('queued','running')`,
        [id],
      );
      const { rows } = await canceller.query(
        `UPDATE control_plane.tasks SET status = 'cancelled', cancel_reason = 'race', updated_at = now()
          WHERE id = $1 AND status IN ('queued','running') RETURNING duration_ms, started_at, cancelled_at`,
        [id],
      );
      await canceller.query('COMMIT');
      assert.equal(rows.length, 1);
      assert.ok(rows[0].duration_ms >= 0 && rows[0].cancelled_at >= rows[0].started_at, JSON.stringify(rows[0]));
    } finally {
      await canceller.end();
      await pool().start();
    }
    assertConsistent(await getTask(id));
  });

  test('cancels landing before, at and after the start of many tasks: never a 500, always one consistent end', async () => {
    fake.delay(40);
    const rounds = 40;
    const outcomes = await Promise.all(
      Array.from({ length: rounds }, async (_, i) => {
        const created = await p.rest<V1<Task>>('POST', `${CP}/agents/execute`, { body: task(`race ${i}`, { execution: { timeout: 30 } }) });
        assert.equal(created.status, 202, JSON.stringify(created.body));
        await sleep((i % 10) * 8); // 0 to 72 ms: queued, starting, running, or already done
        const res = await p.rest<V1<Cancelled>>('POST', `${CP}/agents/tasks/${created.body.data.taskId}/cancel`, {
          body: { reason: 'race' },
        });
        assert.ok(res.status === 200 || res.status === 409, `cancel answered ${res.status}: ${JSON.stringify(res.body)}`);
        if (res.status === 409) assert.equal(res.body.error.code, 'conflict');
        return { id: created.body.data.taskId as string, cancelled: res.status === 200 };
      }),
    );
    for (const o of outcomes) {
      const t = await untilValue(
        `task ${o.id} to end`,
        () => getTask(o.id),
        (got) => TERMINAL.includes(got.status),
      );
      assertConsistent(t);
      assert.equal(t.status === 'cancelled', o.cancelled, `task ${o.id}: the cancel's answer and the final state agree`);
    }
  });
});

describe('many tasks at once', () => {
  test('a backlog started together: each task runs through its own steps and ends with its own result, files and job', async () => {
    await pool().stop({ graceMs: 0 });
    const topics = Array.from({ length: 24 }, (_, i) => `topic-${i}`);
    let ids: string[];
    try {
      fake.reply((body) => {
        const topic = /topic-\d+/.exec(body.messages[0].content)![0];
        return JSON.stringify({ summary: `about ${topic}`, files: [{ path: `docs/${topic}.md`, content: `# ${topic}\n\n## Overview\n` }] });
      });
      ids = await Promise.all(topics.map(async (t) => (await p.rest<V1<Task>>('POST', `${CP}/agents/execute`, { body: task(t) })).body.data.taskId as string));
    } finally {
      await pool().start();
    }
    const done = await untilValue(
      'every task to end',
      () => Promise.all(ids.map(getTask)),
      (all) => all.every((t) => t.status !== 'queued' && t.status !== 'running'),
    );
    for (const [i, t] of done.entries()) {
      assert.equal(t.status, 'completed', JSON.stringify(t.error));
      assert.deepEqual(t.result.filesCreated, [`docs/${topics[i]}.md`]);
      assert.deepEqual(t.progress, { percentage: 100, currentStep: 'completed', stepsCompleted: 3, stepsTotal: 3 });
      const files = (await p.rest<V1<{ artifacts: { path: string; content: string }[] }>>('GET', `${CP}/agents/tasks/${t.taskId}/artifacts`)).body.data
        .artifacts;

      assert.deepEqual(
        files.map((f: { path: unknown; content: unknown }) => [f.path, f.content]),
        [[`docs/${topics[i]}.md`, `# ${topics[i]}\n\n## Overview\n`]],
      );
    }
    const jobs = await p.platform.kernel.db.query(
      `SELECT j.state FROM control_plane.tasks t JOIN platform.jobs j ON j.id = t.job_id WHERE t.id = ANY($1::uuid[])`,
      [ids!],
    );
    assert.deepEqual(
      jobs.map((j: { state: unknown }) => j.state),
      ids!.map(() => 'completed'),
    );
  });
});

describe('execution.timeout', () => {
  test('past its timeout a task fails with TASK_TIMEOUT (the model call is aborted)', async () => {
    fake.delay(6_000);
    const t0 = Date.now();
    const res = await p.rest<V1<Task>>('POST', `${CP}/agents/execute`, { body: task('too slow', { execution: { mode: 'sync', timeout: 5 } }) });
    const elapsed = Date.now() - t0;
    assert.equal(res.status, 200, JSON.stringify(res.body));
    const t = res.body.data;
    assert.equal(t.status, 'failed');
    assert.equal(t.error.code, 'TASK_TIMEOUT');
    assert.equal(t.error.details.timeout, 5);
    assert.ok(elapsed >= 4_900 && elapsed < 6_000, `answered after ${elapsed} ms`);
    assert.ok(t.duration >= 4.9 && t.duration < 6, String(t.duration));
  });
});

describe('sync mode', () => {
  test('a task that has not finished when the wait ends is answered as it is, 202 with its id', async () => {
    await pool().stop({ graceMs: 0 });
    try {
      // The wait is min(timeout + 5 s, 300 s): 10 s here, with no worker to run the task.
      let answered = false;
      const request = p
        .rest<V1<Task>>('POST', `${CP}/agents/execute`, { body: task('unattended', { execution: { mode: 'sync', timeout: 5 } }) })
        .finally(() => {
          answered = true;
        });
      await until('the request to wait on the clock', () => clock.sleeping() === 1);
      clock.advance(9_000);
      await sleep(300);
      assert.equal(answered, false, 'still waiting after 9 s');
      clock.advance(1_000);
      await until('the answer after 10 s', () => answered, 3_000);
      const res = await request;
      assert.equal(res.status, 202, JSON.stringify(res.body));
      assert.equal(res.body.data.status, 'queued');
      assert.match(res.body.data.taskId, /^[0-9a-f-]{36}$/);
      await p.rest('POST', `${CP}/agents/tasks/${res.body.data.taskId}/cancel`, {});
    } finally {
      await pool().start();
    }
  });
});

describe('priority', () => {
  test('queued tasks start in priority order: critical, high, normal, low', async () => {
    await pool().stop({ graceMs: 0 });
    const one = new Queue({ db: p.platform.kernel.db, events: p.platform.kernel.events, logger: p.platform.kernel.logger, concurrency: 1 });
    try {
      const ids: string[] = [];
      for (const priority of ['low', 'normal', 'critical', 'high']) {
        const res = await p.rest<V1<Task>>('POST', `${CP}/agents/execute`, { body: task(`prio ${priority}`, { execution: { priority } }) });
        assert.equal(res.status, 202);
        ids.push(res.body.data.taskId);
      }
      // One worker slot, so start order is claim order.
      controlPlane().runtime.register(one);
      await one.start();
      await until('every task to complete', async () => (await Promise.all(ids.map(getTask))).every((t) => t.status === 'completed'));
      const order = fake.chatBodies().map((b) => /prio (\w+)/.exec(b.messages[0].content)![1]);
      assert.deepEqual(order, ['critical', 'high', 'normal', 'low']);
    } finally {
      await one.stop({ graceMs: 0 });
      await pool().start();
    }
  });
});

describe('webhooks task.started, task.completed, task.failed', () => {
  const receiver = webhookReceiver(() => 204);
  const received = receiver.requests as (ReceivedRequest & { body: TaskEvent })[];
  let url: string;

  beforeAll(async () => {
    url = `${(await receiver.start()).url}/hooks/tasks`;
  });
  afterAll(() => receiver.close());

  test('signed deliveries with {event, taskId, agentId, timestamp, result}', async () => {
    received.length = 0;
    const secret = 'whsec_test_1234';
    const t = (await p.rest<V1<Task>>('POST', `${CP}/agents/execute`, { body: task('hooked', { webhook: { url, secret }, execution: { mode: 'sync' } }) })).body
      .data;
    assert.equal(t.status, 'completed');
    await until('two deliveries', () => received.length >= 2);
    // Each delivery is its own job: arrival order is not guaranteed, the events' timestamps are.
    received.sort((a, b) => Date.parse(a.body.timestamp) - Date.parse(b.body.timestamp) || (a.event === 'task.started' ? -1 : 1));
    assert.deepEqual(
      received.map((r) => r.event),
      ['task.started', 'task.completed'],
    );
    for (const r of received) {
      assert.ok(r.signature && verifySignature(secret, r.raw, r.signature), 'signature verifies over the raw body');
      assert.ok(!verifySignature('another secret', r.raw, r.signature!));
      assert.deepEqual(Object.keys(r.body).sort(), ['agentId', 'event', 'result', 'taskId', 'timestamp']);
      assert.equal(r.body.event, r.event);
      assert.equal(r.body.taskId, t.taskId);
      assert.equal(r.body.agentId, 'docs-author');
      assert.match(r.body.timestamp, /^\d{4}-\d\d-\d\dT/);
    }
    assert.equal(received[0]!.body.result.status, 'running');
    assert.deepEqual(received[1]!.body.result.filesCreated, t.result.filesCreated);
    assert.deepEqual(received[1]!.body.result.output, t.result.output);
  });

  test('only the events asked for; task.failed carries the error; no secret, no signature', async () => {
    received.length = 0;
    fake.reply(() => ({ status: 500 }));
    const t = (
      await p.rest<V1<Task>>('POST', `${CP}/agents/execute`, {
        body: task('failing', { webhook: { url, events: ['task.failed'] }, execution: { mode: 'sync' } }),
      })
    ).body.data;
    assert.equal(t.status, 'failed');
    await until('a delivery', () => received.length >= 1);
    await sleep(200);
    assert.deepEqual(
      received.map((r) => r.event),
      ['task.failed'],
    );
    assert.equal(received[0]!.signature, undefined);
    assert.equal(received[0]!.body.result.error.code, 'upstream_error');
    // It failed before its start was written: the failure wrote it.
    assert.ok(t.startedAt && t.duration >= 0, JSON.stringify(t));
    assert.equal(typeof received[0]!.body.result.duration, 'number');
    // Every attempt is recorded by the kernel's delivery log.
    const deliveries = await p.platform.kernel.webhooks.list({ resourceType: 'task', resourceId: t.taskId });
    assert.equal(deliveries.length, 1);
    assert.equal(deliveries[0]!.state, 'delivered');
  });
});

describe('subscription taskUpdated(taskId) over graphql-ws', () => {
  function client(key: string): Client {
    const c = wsClient(p.url, `Bearer ${key}`);
    clients.push(c);
    return c;
  }
  const subscribe = (
    c: Client,
    taskId: string,
    selection = 'taskId status progress { percentage currentStep stepsCompleted stepsTotal } result { filesCreated }',
  ) => subscribeTo<TaskUpdated>(c, `subscription($id: ID!) { taskUpdated(taskId: $id) { ${selection} } }`, { id: taskId });

  test('emits the whole task as it is (queued), then on every state and progress change', async () => {
    await pool().stop({ graceMs: 0 });
    let created: { taskId: string };
    const sub: Pick<Subscription<TaskUpdated>, 'events' | 'errors'> = { events: [], errors: [] };
    try {
      created = (await p.rest<V1<Task>>('POST', `${CP}/agents/execute`, { body: task('watched') })).body.data;
      Object.assign(sub, subscribe(client(p.adminKey), created.taskId));
      await sleep(300);
    } finally {
      await pool().start();
    }
    await until('the completed event', () => sub.events.some((e) => e.data?.taskUpdated?.status === 'completed'));
    assert.deepEqual(sub.errors, []);
    const seen = sub.events.map((e) => e.data.taskUpdated);
    assert.ok(seen.length >= 3, JSON.stringify(seen));
    assert.ok(seen.every((t) => t.taskId === created.taskId));
    assert.deepEqual(seen[0], { taskId: created.taskId, status: 'queued', progress: null, result: null }, 'first, the task as it was');
    assert.ok(seen.some((t) => t.status === 'running'));
    const percentages = seen.slice(1).map((t) => t.progress.percentage);
    assert.deepEqual(
      percentages,
      [...percentages].sort((a, b) => a - b),
      'progress only moves forward',
    );
    const last = seen.at(-1)!;
    assert.equal(last.status, 'completed');
    assert.deepEqual(last.progress, { percentage: 100, currentStep: 'completed', stepsCompleted: 3, stepsTotal: 3 });
    assert.deepEqual(last.result.filesCreated, ['docs/x.md']);
  });

  const storedStep = async (id: string) =>
    (await p.platform.kernel.db.query(`SELECT progress->>'currentStep' AS step FROM control_plane.tasks WHERE id = $1`, [id]))[0].step as string | null;

  test('a short step reaches subscribers and readers from its event; a long one is stored in the row too', async () => {
    // Shorter than STEP_STORED_AFTER_MS: the model call's step is announced, never written.
    fake.delay(800);
    await pool().stop({ graceMs: 0 });
    let short: { taskId: string };
    let sub: ReturnType<typeof subscribe>;
    try {
      short = (await p.rest<V1<Task>>('POST', `${CP}/agents/execute`, { body: task('short step') })).body.data;
      sub = subscribe(client(p.adminKey), short.taskId, 'status progress { currentStep stepsCompleted }');
      await sleep(300);
    } finally {
      await pool().start();
    }
    const event = (await sub.until((e) => e.data?.taskUpdated?.progress?.currentStep.startsWith('calling the model')))!;
    assert.equal(event.data.taskUpdated.status, 'running');
    assert.equal(event.data.taskUpdated.progress.stepsCompleted, 1);
    const read = await getTask(short.taskId);
    assert.equal(read.status, 'running');
    assert.ok(read.progress.currentStep.startsWith('calling the model'), read.progress.currentStep);
    // The start is a step too: announced (the read shows it), written only with the end.
    assert.ok(read.startedAt, 'the read shows when it started');
    const [before] = await p.platform.kernel.db.query(`SELECT status, started_at FROM control_plane.tasks WHERE id = $1`, [short.taskId]);
    assert.deepEqual(before, { status: 'queued', started_at: null });
    await until('the short task to complete', async () => (await getTask(short.taskId)).status === 'completed');
    assert.equal(await storedStep(short.taskId), 'completed');
    const done = await getTask(short.taskId);
    assert.equal(done.startedAt, read.startedAt, 'the end wrote the start it announced');
    // The duration runs from that start (to the microsecond: the timestamps shown are cut to the millisecond).
    assert.ok(done.duration >= 0.8 && Math.abs(Date.parse(done.completedAt) - Date.parse(done.startedAt) - done.duration * 1000) <= 1, JSON.stringify(done));

    // Longer: the row gets the step once it has lasted, for readers that missed the event.
    fake.delay(3000);
    const long = (await p.rest<V1<Task>>('POST', `${CP}/agents/execute`, { body: task('long step') })).body.data;
    const announced = await untilValue(
      'the long task to start',
      () => getTask(long.taskId),
      (t) => t.status === 'running',
    );
    await until('the stored model call step', async () => !!(await storedStep(long.taskId))?.startsWith('calling the model'));
    const [row] = await p.platform.kernel.db.query(`SELECT status, started_at FROM control_plane.tasks WHERE id = $1`, [long.taskId]);
    assert.equal(row.status, 'running');
    assert.equal(row.started_at.toISOString(), announced.startedAt, 'the row holds the start the event announced');
    assert.equal((await getTask(long.taskId)).status, 'running');
  });

  test('an announced step never shows on an ended task, and only the latest 10,000 running tasks’ steps are kept', async () => {
    const announce = (taskId: string, currentStep: string) =>
      p.platform.kernel.events.publish(TOPIC.taskUpdated, {
        taskId,
        status: 'running',
        orchestrationId: null,
        progress: { percentage: 50, currentStep, stepsCompleted: 1, stepsTotal: 3 },
      });
    // A step event that arrives after the task has ended (or whose end event was lost).
    await pool().stop({ graceMs: 0 });
    let ended: { taskId: string };
    try {
      ended = (await p.rest<V1<Task>>('POST', `${CP}/agents/execute`, { body: task('ended') })).body.data;
      assert.equal((await p.rest('POST', `${CP}/agents/tasks/${ended.taskId}/cancel`, {})).status, 200);
    } finally {
      await pool().start();
    }
    await announce(ended.taskId, 'a late step');
    const cancelled = await getTask(ended.taskId);
    assert.equal(cancelled.status, 'cancelled');
    assert.equal(cancelled.progress, undefined, 'a cancelled task shows no step it never stored');

    fake.delay(5000);
    const slow = (await p.rest<V1<Task>>('POST', `${CP}/agents/execute`, { body: task('bounded') })).body.data;
    await until('the task to call the model', async () => (await getTask(slow.taskId)).progress?.currentStep.startsWith('calling the model') === true);
    // Once the step has lasted, the row holds it (and the start): what a reader without the event sees.
    await until('the stored model call step', async () => !!(await storedStep(slow.taskId))?.startsWith('calling the model'));
    await announce(slow.taskId, 'an announced step');
    assert.equal((await getTask(slow.taskId)).progress.currentStep, 'an announced step');
    for (let i = 0; i < 10_000; i++) await announce(randomUUID(), 'another task');
    const read = await getTask(slow.taskId);
    assert.equal(read.status, 'running');
    assert.notEqual(read.progress.currentStep, 'an announced step', 'the oldest announced step was let go');
    await p.rest('POST', `${CP}/agents/tasks/${slow.taskId}/cancel`, {});
  });

  test('a cancellation is emitted too', async () => {
    fake.delay(10_000);
    const created = (await p.rest<V1<Task>>('POST', `${CP}/agents/execute`, { body: task('to cancel') })).body.data;
    const sub = subscribe(client(p.adminKey), created.taskId, 'status cancelledAt');
    await until('the task to run', async () => (await getTask(created.taskId)).status === 'running');
    await sleep(200);
    await p.rest('POST', `${CP}/agents/tasks/${created.taskId}/cancel`, {});
    await until('the cancelled event', () => sub.events.some((e) => e.data.taskUpdated.status === 'cancelled'));
    assert.ok(sub.events.at(-1)!.data.taskUpdated.cancelledAt);
  });

  test('the same authorization as the task query', async () => {
    const created = (await p.rest<V1<Task>>('POST', `${CP}/agents/execute`, { body: task('secret') })).body.data;
    const executor = await p.createKey({ permissions: ['agent:execute'] });
    const denied = subscribe(client(executor.key), created.taskId);
    await denied.done;
    assert.equal((denied.errors[0] as GqlErrors)[0].extensions.code, 'insufficient_permissions');
    const missing = subscribe(client(p.adminKey), '00000000-0000-4000-8000-000000000000');
    await missing.done;
    assert.equal((missing.errors[0] as GqlErrors)[0].extensions.code, 'resource_not_found');
  });
});
