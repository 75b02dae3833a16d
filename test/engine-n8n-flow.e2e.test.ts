import assert from 'node:assert/strict';
import { JOB } from '../kernel/topics';
import { testClock, untilDueJobsDone } from './support/clock';
import type { V1 } from './support/answers';
import { startTestPlatform, type TestPlatform } from './support/platform';
import { importN8n, n8nChain, type N8nNode } from './support/n8n-export';
import { until, untilValue } from './support/until';

/**
 * n8n's Wait, Respond to Webhook, Schedule Trigger and Interval, imported from n8n exports and
 * run natively: what a webhook caller receives, a wait resumed through its URL, and the
 * schedules their triggers get (moved on with the test clock).
 */

const clock = testClock();
let p: TestPlatform;

beforeAll(async () => {
  p = await startTestPlatform({}, { clock });
});
afterAll(async () => {
  await p?.stop();
});

/** An execution as its read answers it: the fields these tests look at. */
interface Execution {
  executionId: string;
  status: string;
  mode: string;
  startedAt: string;
  finishedAt: string;
  waitTill: string | null;
  resumeUrl: string | null;
  progress: { currentNode: string | null };
  result: { items: Record<string, unknown>[] };
  nodeData: { nodeName: string; nodeType: string }[];
}

/** A workflow's schedule as the control plane lists it. */
interface Schedule {
  scheduleId: string;
  nodeName: string;
  timezone: string;
  cron: string;
  nextRunAt: string;
}

async function importWorkflow(workflow: unknown): Promise<string> {
  const id = await importN8n(p, workflow);
  assert.equal((await p.rest('POST', `/v1/engine/workflows/${id}/activate`)).status, 200);
  return id;
}

/** The workflow's n8n Webhook registered as a trigger answering from the workflow (n8n's "Using 'Respond to Webhook' node"). */
async function registerHook(workflowId: string, path: string): Promise<void> {
  // Registrations are limited per key and minute: one key each.
  const { key } = await p.createKey({ service: 'engine', permissions: ['workflow:read', 'workflow:write'] });
  const res = await p.rest('POST', '/v1/engine/webhooks', { key, body: { workflowId, method: 'POST', path, responseMode: 'lastNode' } });
  assert.equal(res.status, 201, JSON.stringify(res.body));
}

async function call(path: string, body: unknown) {
  const res = await fetch(`${p.url}/webhook/${path}`, {
    method: 'POST',
    headers: { 'content-type': 'application/json' },
    body: JSON.stringify(body),
    redirect: 'manual',
  });
  const bytes = Buffer.from(await res.arrayBuffer());
  return { status: res.status, headers: res.headers, bytes, text: bytes.toString('utf8') };
}

const execution = async (id: string) => (await p.rest<V1<Execution>>('GET', `/v1/engine/executions/${id}?includeData=true`)).body.data;
const waitStatus = (id: string, status: string) =>
  untilValue(
    `execution ${id} to be ${status}`,
    () => execution(id),
    (e) => e.status === status,
    { timeoutMs: 20_000, everyMs: 100 },
  );
const executions = async (workflowId: string) =>
  (await p.rest<V1<{ executions: Execution[] }>>('GET', `/v1/engine/executions?workflowId=${workflowId}`)).body.data.executions;
const schedules = async (workflowId: string) =>
  (await p.rest<V1<{ schedules: Schedule[] }>>('GET', `/v1/control-plane/workflows/${workflowId}/schedules`)).body.data.schedules;

const webhookNode = (path: string): N8nNode => ({
  name: 'Webhook',
  type: 'n8n-nodes-base.webhook',
  typeVersion: 2,
  webhookId: '7d6c2f0e-0000-4000-8000-000000000000',
  parameters: { httpMethod: 'POST', path, responseMode: 'responseNode', options: {} },
});

describe('n8n Wait and Respond to Webhook', () => {
  test('Webhook → Wait 2 s → Respond to Webhook: the caller gets the answer after the wait', async () => {
    const id = await importWorkflow(
      n8nChain('Slow answer', [
        webhookNode('slow'),
        { name: 'Wait', type: 'n8n-nodes-base.wait', typeVersion: 1.1, webhookId: 'a', parameters: { amount: 2 } },
        {
          name: 'Respond to Webhook',
          type: 'n8n-nodes-base.respondToWebhook',
          typeVersion: 1.1,
          parameters: { respondWith: 'json', responseBody: '={{ { "order": $json.body.order, "waited": true } }}', options: { responseCode: 201 } },
        },
      ]),
    );
    await registerHook(id, 'slow');
    const answer = await call('slow', { order: 7 });
    assert.equal(answer.status, 201, answer.text);
    assert.deepEqual(JSON.parse(answer.text), { order: 7, waited: true });
    const run = await execution((await executions(id))[0].executionId);
    assert.equal(run.status, 'success');
    // The execution lasted at least the Wait's 2 seconds (a lower bound: load only makes it longer).
    assert.ok(Date.parse(run.finishedAt) - Date.parse(run.startedAt) >= 2000, `${run.startedAt} → ${run.finishedAt}`);
  });

  test('Wait on a webhook: the execution waits; its resumeUrl called with a body resumes it with the request', async () => {
    const id = await importWorkflow(
      n8nChain('Approval', [
        { name: 'When clicking ‘Test workflow’', type: 'n8n-nodes-base.manualTrigger', typeVersion: 1 },
        { name: 'Wait', type: 'n8n-nodes-base.wait', typeVersion: 1.1, webhookId: 'b', parameters: { resume: 'webhook', httpMethod: 'POST', options: {} } },
        {
          name: 'Edit Fields',
          type: 'n8n-nodes-base.set',
          typeVersion: 3.4,
          parameters: {
            assignments: {
              assignments: [
                { id: '1', name: 'approved', value: '={{ $json.body.approved }}', type: 'boolean' },
                { id: '2', name: 'by', value: '={{ $json.query.by }}', type: 'string' },
              ],
            },
            options: {},
          },
        },
      ]),
    );
    const started = await p.rest<V1<{ executionId: string }>>('POST', `/v1/engine/workflows/${id}/execute`, { body: { data: { order: 9 } } });
    assert.equal(started.status, 200, JSON.stringify(started.body));
    const waiting = await waitStatus(started.body.data.executionId, 'waiting');
    assert.equal(waiting.progress.currentNode, 'Wait');
    const resumed = await fetch(`${waiting.resumeUrl}?by=lee`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({ approved: true }),
    });
    assert.equal(resumed.status, 200);
    const done = await waitStatus(waiting.executionId, 'success');
    assert.deepEqual(
      done.result.items.map((i) => ({ approved: i.approved, by: i.by })),
      [{ approved: true, by: 'lee' }],
    );
    const waitRun = done.nodeData.find((n) => n.nodeName === 'Wait');
    assert.equal(waitRun?.nodeType, 'n8n-nodes-base.wait', 'the resumed run is recorded under the node’s own type');
  });

  test('Wait of 2 minutes: stored as waiting until then, resumed when the clock gets there', async () => {
    const id = await importWorkflow(
      n8nChain('Later', [
        { name: 'Start', type: 'n8n-nodes-base.manualTrigger', typeVersion: 1 },
        { name: 'Wait', type: 'n8n-nodes-base.wait', typeVersion: 1, webhookId: 'c', parameters: { amount: 2, unit: 'minutes' } },
      ]),
    );
    const started = await p.rest<V1<{ executionId: string }>>('POST', `/v1/engine/workflows/${id}/execute`, { body: { data: { n: 1 } } });
    const waiting = await waitStatus(started.body.data.executionId, 'waiting');
    assert.ok(waiting.waitTill, JSON.stringify(waiting));
    clock.advanceTo(waiting.waitTill);
    const done = await waitStatus(waiting.executionId, 'success');
    assert.deepEqual(done.result.items, [{ n: 1 }]);
  });

  /** A workflow answering with `respond` after a Code node makes two items. */
  async function answered(path: string, respond: Record<string, unknown>, body: unknown = { name: 'Ada' }) {
    const id = await importWorkflow(
      n8nChain(`Respond ${path}`, [
        webhookNode(path),
        {
          name: 'Code',
          type: 'n8n-nodes-base.code',
          typeVersion: 2,
          parameters: {
            jsCode: 'return [{ json: { n: 1, name: $input.first().json.body.name } }, { json: { n: 2 } }];',
          },
        },
        { name: 'Respond to Webhook', type: 'n8n-nodes-base.respondToWebhook', typeVersion: 1.1, parameters: respond },
      ]),
    );
    await registerHook(id, path);
    return call(path, body);
  }

  test('Respond to Webhook, each respondWith: the status, headers and body a client receives', async () => {
    const first = await answered('first', { options: { responseHeaders: { entries: [{ name: 'X-Trace', value: '=n{{ $json.n }}' }] } } });
    assert.equal(first.status, 200);
    assert.equal(first.headers.get('x-trace'), 'n1');
    assert.match(first.headers.get('content-type')!, /^application\/json/);
    assert.deepEqual(JSON.parse(first.text), { n: 1, name: 'Ada' });

    const all = await answered('all', { respondWith: 'allIncomingItems', options: { responseKey: 'data.items' } });
    assert.deepEqual(JSON.parse(all.text), { data: { items: [{ n: 1, name: 'Ada' }, { n: 2 }] } });

    const json = await answered('json', { respondWith: 'json', responseBody: '={"greeting": "Hello {{ $json.name }}"}', options: { responseCode: 202 } });
    assert.equal(json.status, 202);
    assert.deepEqual(JSON.parse(json.text), { greeting: 'Hello Ada' });

    const text = await answered('text', { respondWith: 'text', responseBody: '=<h1>Hello {{ $json.name }}</h1>', options: {} });
    assert.equal(text.status, 200);
    assert.equal(text.text, '<h1>Hello Ada</h1>');
    assert.equal(text.headers.get('content-type'), 'text/html; charset=utf-8');
    assert.equal(text.headers.get('content-security-policy'), 'sandbox');

    const none = await answered('none', { respondWith: 'noData', options: { responseCode: 204 } });
    assert.equal(none.status, 204);
    assert.equal(none.text, '');

    const redirect = await answered('redirect', { respondWith: 'redirect', redirectURL: '=https://example.com/people/{{ $json.n }}', options: {} });
    assert.equal(redirect.status, 307);
    assert.equal(redirect.headers.get('location'), 'https://example.com/people/1');

    const bad = await answered('bad', { respondWith: 'json', responseBody: '{not json' });
    assert.equal(bad.status, 500);
    assert.match(JSON.parse(bad.text).error.message, /Invalid JSON in 'Response Body' field/);
  });

  test('a JWT answer is refused at import, naming the node', async () => {
    const res = await p.rest<V1<never>>('POST', '/v1/engine/workflows/import', {
      body: {
        workflow: n8nChain('Jwt', [
          webhookNode('jwt'),
          { name: 'Respond', type: 'n8n-nodes-base.respondToWebhook', typeVersion: 1.1, parameters: { respondWith: 'jwt' } },
        ]),
      },
    });
    assert.equal(res.status, 400, JSON.stringify(res.body));
    assert.equal(res.body.error.code, 'WORKFLOW_INVALID');
    assert.equal(res.body.error.details.node, 'Respond');
  });
});

describe('n8n Schedule Trigger and Interval', () => {
  test('a Schedule Trigger with two rules fires at the first of them, in the workflow’s time zone, with n8n’s item', async () => {
    const id = await importWorkflow(
      n8nChain(
        'Two rules',
        [
          {
            name: 'Schedule Trigger',
            type: 'n8n-nodes-base.scheduleTrigger',
            typeVersion: 1.2,
            parameters: {
              rule: {
                interval: [
                  { field: 'days', triggerAtHour: 9 },
                  { field: 'weeks', triggerAtDay: [1, 3], triggerAtHour: 17, triggerAtMinute: 30 },
                ],
              },
            },
          },
          { name: 'No Operation, do nothing', type: 'n8n-nodes-base.noOp', typeVersion: 1 },
        ],
        { timezone: 'America/New_York' },
      ),
    );
    const [schedule] = await schedules(id);
    assert.equal(schedule.nodeName, 'Schedule Trigger');
    assert.equal(schedule.timezone, 'America/New_York');
    assert.equal(schedule.cron, '0 0 9 * * *\n0 30 17 * * 1,3');
    // The next runs as New York's clock reads them: every day at 09:00, Mondays and Wednesdays at 17:30 too.
    const local = (iso: string) =>
      new Intl.DateTimeFormat('en-US', { timeZone: 'America/New_York', weekday: 'short', hour: '2-digit', minute: '2-digit', hourCycle: 'h23' }).format(
        new Date(iso),
      );
    const seen: string[] = [];
    let next: string = schedule.nextRunAt;
    for (let i = 0; i < 3; i++) {
      seen.push(local(next));
      const fired = executions(id).then((l) => l.length);
      const before = await fired;
      clock.advanceTo(next);
      await until('a scheduled run', async () => (await executions(id)).length > before, 20_000, 100);
      next = await untilValue(
        'the next due time',
        async () => (await schedules(id))[0].nextRunAt,
        (n: string) => n !== next,
        { timeoutMs: 10_000, everyMs: 100 },
      );
    }
    for (const s of seen) assert.match(s, /^(\w{3}) (09:00|17:30)$/);
    for (const s of seen.filter((x) => x.endsWith('17:30'))) assert.match(s, /^(Mon|Wed) /);
    const [latest] = await executions(id);
    const run = await waitStatus(latest.executionId, 'success');
    const [item] = run.result.items;
    assert.deepEqual(
      Object.keys(item).sort(),
      ['timestamp', 'Readable date', 'Readable time', 'Day of week', 'Year', 'Month', 'Day of month', 'Hour', 'Minute', 'Second', 'Timezone'].sort(),
    );
    assert.match(String(item.timestamp), /^\d{4}-\d\d-\d\dT(09:00|17:30):\d\d\.\d{3}-0[45]:00$/);
    assert.match(String(item.Timezone), /^America\/New_York \(UTC-0[45]:00\)$/);
    assert.equal(run.mode, 'schedule');
  });

  test('Interval: every 45 seconds from the last due time; one empty item', async () => {
    const id = await importWorkflow(
      n8nChain('Every 45 s', [
        { name: 'Interval', type: 'n8n-nodes-base.interval', typeVersion: 1, parameters: { interval: 45 } },
        { name: 'No Operation, do nothing', type: 'n8n-nodes-base.noOp', typeVersion: 1 },
      ]),
    );
    const [schedule] = await schedules(id);
    assert.equal(schedule.cron, '@every 45000ms');
    const due = Date.parse(schedule.nextRunAt);
    assert.ok(Math.abs(due - (clock.now().getTime() + 45_000)) < 10_000, schedule.nextRunAt);
    clock.advanceTo(schedule.nextRunAt);
    const run = await untilValue(
      'the interval’s run',
      async () => (await executions(id))[0],
      (e) => e?.status === 'success',
      { timeoutMs: 20_000, everyMs: 100 },
    );
    assert.deepEqual((await execution(run.executionId)).result.items, [{}]);
    const [after] = await schedules(id);
    assert.equal(Date.parse(after.nextRunAt), due + 45_000);
    await p.rest('POST', `/v1/engine/workflows/${id}/deactivate`);
    assert.deepEqual(await schedules(id), []);
    clock.advance(60_000);
    await untilDueJobsDone(p, clock, JOB.scheduleFire, { scheduleId: after.scheduleId });
    assert.equal((await executions(id)).length, 1);
  });

  test('Schedule Trigger 1.4, a run missed past its grace: skipped by default, once per rule with coalesce, once with coalesce_owner; 1.3 catches up once', async () => {
    const rules = { interval: [{ field: 'hours' }, { field: 'minutes', minutesInterval: 5 }] };
    const trigger = (typeVersion: number, settings: Record<string, unknown>): N8nNode => ({
      name: 'Schedule Trigger',
      type: 'n8n-nodes-base.scheduleTrigger',
      typeVersion,
      parameters: { rule: rules, ...settings },
    });
    const cases: [string, N8nNode, number][] = [
      ['1.4 skip (default)', trigger(1.4, {}), 0],
      ['1.4 coalesce', trigger(1.4, { misfirePolicy: 'coalesce' }), 2],
      ['1.4 coalesce_owner', trigger(1.4, { misfirePolicy: 'coalesce_owner', misfireGraceSeconds: 0 }), 1],
      ['1.4 within a 4 h grace', trigger(1.4, { misfireGraceSeconds: 4 * 3600 }), 1],
      ['1.3', trigger(1.3, {}), 1],
    ];
    const made: { name: string; id: string; scheduleId: string; expected: number }[] = [];
    for (const [name, node, expected] of cases) {
      const id = await importWorkflow(n8nChain(`Missed ${name}`, [node, { name: 'No Operation, do nothing', type: 'n8n-nodes-base.noOp', typeVersion: 1 }]));
      const [schedule] = await schedules(id);
      made.push({ name, id, scheduleId: schedule.scheduleId, expected });
    }
    // The platform "was down" three hours: every schedule's due time is three hours behind when its job runs.
    clock.advance(3 * 3600_000);
    for (const m of made) await untilDueJobsDone(p, clock, JOB.scheduleFire, { scheduleId: m.scheduleId }, 20_000);
    for (const m of made) {
      const ran = await executions(m.id);
      assert.equal(ran.length, m.expected, `${m.name}: ${ran.length} run(s)`);
      const [after] = await schedules(m.id);
      assert.ok(Date.parse(after.nextRunAt) > clock.now().getTime(), `${m.name}: the next due time is after the missed window`);
    }
    const refused = await p.rest<V1<never>>('POST', '/v1/engine/workflows/import', {
      body: { workflow: n8nChain('Bad policy', [trigger(1.4, { misfirePolicy: 'all' })]) },
    });
    assert.equal(refused.status, 400, JSON.stringify(refused.body));
    assert.equal(refused.body.error.code, 'SCHEDULE_INVALID');
    assert.match(refused.body.error.message, /misfirePolicy must be one of skip, coalesce, coalesce_owner/);
  });

  test('an Interval under n8n’s minimum is refused at import', async () => {
    const res = await p.rest<V1<never>>('POST', '/v1/engine/workflows/import', {
      body: { workflow: n8nChain('Too fast', [{ name: 'Interval', type: 'n8n-nodes-base.interval', typeVersion: 1, parameters: { interval: 0.5 } }]) },
    });
    assert.equal(res.status, 400, JSON.stringify(res.body));
    assert.equal(res.body.error.code, 'SCHEDULE_INVALID');
    assert.match(res.body.error.message, /at least 1 or higher/);
  });
});
