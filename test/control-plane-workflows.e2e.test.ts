import assert from 'node:assert/strict';
import { randomBytes } from 'node:crypto';
import { verifySignature } from '../kernel/webhooks';
import { testClock, untilDueJobsDone } from './support/clock';
import type { TestDatabase } from './support/database';
import { chain, localWebhooksEnv, start, type WorkflowNode } from './support/fixtures';
import type { ErrorBody, Platform, V1 } from './support/answers';
import { startTestPlatform, type TestPlatform, type JsonAnswer } from './support/platform';
import { until, untilValue } from './support/until';
import { webhookReceiver } from './support/webhook-receiver';
import { JOB } from '../kernel/topics';

/**
 * The control plane's workflow surface served by the engine: list, trigger
 * (sync, async, slug, errors, limit), executions in the control plane's spelling, cancel, signed
 * execution.* webhooks, webhook registration, schedules (validation, offsets, firing, exactly
 * once with two platforms on one database, catch-up after downtime). Schedules fire on a test
 * clock moved to their due times (support/clock.ts), not on seconds slept through.
 */

/** A workflow in the control plane's list. */
interface CpWorkflow {
  workflowId: string;
  name: string;
  description: string;
  tags: string[];
  active: boolean;
  version: number;
  nodes: number;
  executionCount: number;
  successRate: number;
  averageDuration: number;
  lastExecutedAt: string;
}

/** An execution in the control plane's spelling, as triggered and as read back. */
interface CpExecution {
  executionId: string;
  workflowId: string;
  status: string;
  engineExecutionUrl: string;
  startedAt: string;
  completedAt?: string;
  failedAt?: string;
  cancelledAt?: string;
  duration: number;
  result: { outputs: { lastNode: string; items: unknown[] }; success: boolean; nodesExecuted: number };
  error: { code: string; nodeName: string };
  nodeData: { nodeName: string; status: string }[];
}

/** The body of an execution.* webhook delivery. */
interface ExecutionEvent {
  event: string;
  executionId: string;
  status: string;
  engineExecutionUrl: string;
  result: { outputs: { items: unknown[] } };
  error: { code: string; nodeName: string };
}

interface Schedule {
  scheduleId: string;
  workflowId: string;
  cron: string;
  timezone: string;
  enabled: boolean;
  nextRunAt: string;
}

/** What a scheduled run receives as its item. */
interface ScheduledItem {
  [key: string]: unknown;
  scheduledFor: string;
}

interface FieldErrors {
  errors: { field: string }[];
}

const CP = '/v1/control-plane/workflows';
const INTERNAL_SECRET = randomBytes(32).toString('hex');
const ENV = { ...localWebhooksEnv, INTERNAL_SECRET };
/** Every platform of this file runs on it (the restarted one and the second one too). */
const clock = testClock();
let p: TestPlatform;
/** Set once the platform was restarted on its database (which `stop` then leaves to us). */
let restartedOn: TestDatabase | undefined;
const receiver = webhookReceiver(() => ({ status: 200, body: 'ok' }));
let receiverUrl = '';
const deliveries = receiver.requests;
let operator: string; // control-plane key: workflow:read, workflow:write, workflow:execute
let reader: string; // control-plane key: workflow:read
const ids: Record<string, string> = {};

/** Executions and schedules: a longer deadline than `until`'s own, asked less often. */
const waitFor = <T>(what: string, probe: () => Promise<T | undefined | false | null>, timeoutMs = 15_000) => until(what, probe, timeoutMs, 100);

/** The error of a refused request; `D` is the shape of the details the test reads beyond the common ones. */
function assertError<D = ErrorBody['details']>(res: JsonAnswer<V1<unknown>>, status: number, code: string): ErrorBody & { details: D } {
  assert.equal(res.status, status, JSON.stringify(res.body));
  assert.equal(res.body.success, false);
  assert.equal(res.body.error.code, code, JSON.stringify(res.body));
  return res.body.error as ErrorBody & { details: D };
}

type N = WorkflowNode;

async function createWorkflow(name: string, nodes: N[], extra: Record<string, unknown> = {}): Promise<string> {
  const res = await p.rest<V1<{ workflowId: string }>>('POST', '/v1/engine/workflows', { body: { name, ...chain(nodes), ...extra } });
  assert.equal(res.status, 201, JSON.stringify(res.body));
  return res.body.data.workflowId;
}

const trigger = (body: unknown, key = operator) => p.rest<V1<CpExecution>>('POST', `${CP}/trigger`, { key, body });
const getExecution = async (id: string, query = '') => {
  const res = await p.rest<V1<CpExecution>>('GET', `${CP}/executions/${id}${query}`, { key: reader });
  assert.equal(res.status, 200, JSON.stringify(res.body));
  return res.body.data;
};
const waitStatus = (id: string, status: string) =>
  untilValue(
    `execution ${id} ${status}`,
    () => getExecution(id),
    (e) => e.status === status,
    { timeoutMs: 15_000, everyMs: 100 },
  );

beforeAll(async () => {
  receiverUrl = (await receiver.start()).url;
  p = await startTestPlatform(ENV, { clock });
  operator = (await p.createKey({ name: 'operator', permissions: ['workflow:read', 'workflow:write', 'workflow:execute'] })).key;
  reader = (await p.createKey({ name: 'reader', permissions: ['workflow:read'] })).key;
  ids.intake = await createWorkflow(
    'Order Intake',
    [start, { name: 'Tag', type: 'engine.set', parameters: { values: { order: '{{ $json.orderId }}', seen: true } } }],
    {
      active: true,
      tags: ['sales'],
      description: 'Takes orders in',
    },
  );
  ids.dormant = await createWorkflow('Dormant', [start, { name: 'Noop', type: 'engine.noOp' }], { tags: ['sales'] });
  ids.failing = await createWorkflow('Failing', [start, { name: 'Boom', type: 'engine.code', parameters: { code: 'throw new Error("boom")' } }], {
    active: true,
  });
  ids.waiter = await createWorkflow('Waiter', [start, { name: 'Hold', type: 'engine.wait', parameters: { resume: 'webhook' } }], { active: true });
});

afterAll(async () => {
  await p?.stop();
  await restartedOn?.drop();
  await receiver.close();
});

const deliveriesFor = (executionId: string) =>
  deliveries.map((d) => ({ ...d, body: d.body as ExecutionEvent })).filter((d) => d.body.executionId === executionId);

// ---------------------------------------------------------------------------------------------

describe('workflows and triggers', () => {
  test('GET /workflows: the documented fields, tag and active filters; control-plane keys accepted, engine surface keeps refusing them', async () => {
    await trigger({ workflowId: ids.intake, payload: { orderId: 'A-0' }, execution: { mode: 'sync' } });
    const res = await p.rest<V1<{ workflows: CpWorkflow[] }>>('GET', `${CP}?tag=sales&active=true`, { key: reader });
    assert.equal(res.status, 200, JSON.stringify(res.body));
    const list = res.body.data.workflows;
    assert.deepEqual(
      list.map((w: { name: unknown }) => w.name),
      ['Order Intake'],
    );
    const w = list[0];
    assert.deepEqual(
      {
        workflowId: w.workflowId,
        description: w.description,
        tags: w.tags,
        active: w.active,
        version: w.version,
        nodes: w.nodes,
        executionCount: w.executionCount,
        successRate: w.successRate,
      },
      { workflowId: ids.intake, description: 'Takes orders in', tags: ['sales'], active: true, version: 1, nodes: 2, executionCount: 1, successRate: 100 },
    );
    assert.equal(typeof w.averageDuration, 'number');
    assert.ok(w.averageDuration < 5, 'seconds, not milliseconds');
    assert.ok(Date.parse(w.lastExecutedAt) > 0);
    const inactive = (await p.rest<V1<{ workflows: CpWorkflow[] }>>('GET', `${CP}?tag=sales&active=false`, { key: reader })).body.data.workflows;
    assert.deepEqual(
      inactive.map((x: { name: unknown }) => x.name),
      ['Dormant'],
    );
    // The engine's own surface still takes engine keys only (a control-plane key needs `*` there).
    const otherService = await p.rest<V1<never>>('GET', '/v1/engine/workflows', { key: reader });
    assertError(otherService, 403, 'insufficient_permissions');
    // The key holds workflow:read: the 403 names what it lacks, its service.
    assert.deepEqual(otherService.body.error.details, { required: ['engine key'], has: 'control-plane key', permission: 'workflow:read' });
    assert.match(otherService.body.error.message, /takes an engine key .*this is a control-plane key/);
    const engineKey = (await p.createKey({ service: 'engine', permissions: ['workflow:read'] })).key;
    assert.equal((await p.rest('GET', CP, { key: engineKey })).status, 200);
    assertError(await p.rest<V1<never>>('GET', CP, { key: null }), 401, 'missing_authorization');
  });

  test("GET {control_plane_url}/api/v1/workflows (platform overview): the same list in that layout's envelope and snake_case", async () => {
    const res = await p.rest<
      Platform<{
        workflows: { workflow_id: string; name: string; execution_count: number; success_rate: number; average_duration: number; workflowId?: unknown }[];
        pagination: Record<string, unknown>;
      }> & { meta?: unknown }
    >('GET', '/control-plane/api/v1/workflows?tag=sales&active=true', { key: reader });
    assert.equal(res.status, 200, JSON.stringify(res.body));
    assert.equal(res.body.success, true);
    assert.match(res.body.metadata.request_id, /^req_/);
    assert.ok(Date.parse(res.body.metadata.timestamp) > 0);
    assert.equal(res.body.meta, undefined, 'the alternate layout has metadata, not meta');
    const [w] = res.body.data.workflows;
    assert.equal(res.body.data.workflows.length, 1);
    assert.equal(w.workflow_id, ids.intake);
    assert.equal(w.name, 'Order Intake');
    assert.equal(typeof w.execution_count, 'number');
    assert.equal(typeof w.success_rate, 'number');
    assert.equal(typeof w.average_duration, 'number');
    assert.equal(w.workflowId, undefined);
    assert.deepEqual(Object.keys(res.body.data.pagination).sort(), ['has_more', 'limit', 'offset', 'total']);
    const bad = await p.rest<Platform<never>>('GET', '/control-plane/api/v1/workflows?limit=x', { key: reader });
    assert.equal(bad.status, 400);
    assert.equal(bad.body.error.code, 'validation_error');
    assert.equal((await p.rest('GET', '/control-plane/api/v1/workflows', { key: null })).status, 401);
  });

  test('trigger async by slug: 202 running with engineExecutionUrl; the execution reads completed, durations in seconds, nodeData', async () => {
    const res = await trigger({ workflowId: 'order-intake', payload: { orderId: 'A-1' }, execution: { priority: 'high' } });
    assert.equal(res.status, 202, JSON.stringify(res.body));
    const d = res.body.data;
    assert.deepEqual(Object.keys(d).sort(), ['engineExecutionUrl', 'executionId', 'startedAt', 'status', 'workflowId']);
    assert.equal(d.status, 'running');
    assert.equal(d.workflowId, ids.intake);
    assert.equal(d.engineExecutionUrl, `${p.url}/v1/engine/executions/${d.executionId}`, 'absolute: usable from another machine');
    const done = await waitStatus(d.executionId, 'completed');
    assert.deepEqual(done.result.outputs, { lastNode: 'Tag', items: [{ orderId: 'A-1', order: 'A-1', seen: true }] });
    assert.equal(done.result.success, true);
    assert.equal(done.result.nodesExecuted, 2);
    assert.ok(done.completedAt && !done.failedAt && !done.cancelledAt);
    assert.ok(done.duration < 5);
    const withData = await getExecution(d.executionId, '?includeData=true');
    assert.deepEqual(
      withData.nodeData.map((n: { nodeName: unknown; status: unknown }) => [n.nodeName, n.status]),
      [
        ['Start', 'completed'],
        ['Tag', 'completed'],
      ],
    );
    // The engine's view of the same execution, through the URL given.
    const engine = await p.rest<V1<{ status: string }>>('GET', d.engineExecutionUrl.slice(p.url.length));
    assert.equal(engine.body.data.status, 'success');
  });

  test('trigger sync: 200 completed with result; a failing workflow is 200 failed with error.nodeName; waiting is 202', async () => {
    const ok = await trigger({ workflowId: ids.intake, payload: { orderId: 'B-1' }, execution: { mode: 'sync', timeout: 30 } });
    assert.equal(ok.status, 200, JSON.stringify(ok.body));
    assert.equal(ok.body.data.status, 'completed');
    assert.deepEqual(ok.body.data.result.outputs.items, [{ orderId: 'B-1', order: 'B-1', seen: true }]);
    assert.ok(ok.body.data.completedAt && ok.body.data.startedAt);
    const failed = await trigger({ workflowId: 'failing', payload: {}, execution: { mode: 'sync' } });
    assert.equal(failed.status, 200, JSON.stringify(failed.body));
    assert.equal(failed.body.data.status, 'failed');
    assert.equal(failed.body.data.error.code, 'NODE_EXECUTION_FAILED');
    assert.equal(failed.body.data.error.nodeName, 'Boom');
    assert.ok(failed.body.data.failedAt);
    const waiting = await trigger({ workflowId: ids.waiter, payload: {}, execution: { mode: 'sync' } });
    assert.equal(waiting.status, 202, JSON.stringify(waiting.body));
    assert.equal(waiting.body.data.status, 'waiting');
  });

  test('trigger errors: WORKFLOW_NOT_FOUND, WORKFLOW_INACTIVE, PAYLOAD_TOO_LARGE, validation_error, WEBHOOK_INVALID, permissions', async () => {
    assertError(await trigger({ workflowId: '00000000-0000-4000-8000-000000000000', payload: {} }), 404, 'WORKFLOW_NOT_FOUND');
    assert.equal(assertError(await trigger({ workflowId: 'no-such-flow', payload: {} }), 404, 'WORKFLOW_NOT_FOUND').details.workflowId, 'no-such-flow');
    assert.equal(assertError(await trigger({ workflowId: 'dormant', payload: {} }), 409, 'WORKFLOW_INACTIVE').details.workflowId, ids.dormant);
    const big = assertError<{ size_bytes: number; limit_bytes: number }>(
      await trigger({ workflowId: ids.intake, payload: { blob: 'x'.repeat(5 * 1024 * 1024 + 10) } }),
      413,
      'PAYLOAD_TOO_LARGE',
    );
    assert.ok(big.details.size_bytes > big.details.limit_bytes);
    const fields = (res: JsonAnswer<V1<unknown>>) =>
      assertError<FieldErrors>(res, 400, 'validation_error')
        .details.errors.map((e: { field: unknown }) => e.field)
        .sort();
    assert.deepEqual(fields(await trigger({ payload: {} })), ['workflowId']);
    assert.deepEqual(fields(await trigger({ workflowId: ids.intake })), ['payload']);
    assert.deepEqual(fields(await trigger({ workflowId: ids.intake, payload: {}, execution: { mode: 'later', timeout: 301, priority: 'urgent' } })), [
      'execution.mode',
      'execution.priority',
      'execution.timeout',
    ]);
    assert.deepEqual(fields(await trigger({ workflowId: ids.intake, payload: {}, surprise: 1 })), ['surprise']);
    assert.deepEqual(fields(await trigger({ workflowId: ids.intake, payload: {}, webhook: { url: `${receiverUrl}/x`, events: ['execution.exploded'] } })), [
      'webhook.events',
    ]);
    assertError(await trigger({ workflowId: ids.intake, payload: {}, webhook: { url: 'ftp://example.com/hook' } }), 400, 'WEBHOOK_INVALID');
    const denied = assertError(await trigger({ workflowId: ids.intake, payload: {} }, reader), 403, 'insufficient_permissions');
    assert.equal(denied.details.required, 'workflow:execute');
  });

  test('100 triggers a minute per key: the 101st is 429 RATE_LIMIT_EXCEEDED with Retry-After', async () => {
    const key = (await p.createKey({ name: 'burst', permissions: ['workflow:execute'], tier: 'enterprise' })).key;
    for (let i = 0; i < 100; i++) assert.equal((await trigger({ workflowId: 'no-such-flow', payload: {} }, key)).status, 404);
    const limited = await trigger({ workflowId: ids.intake, payload: {} }, key);
    const error = assertError(limited, 429, 'RATE_LIMIT_EXCEEDED');
    assert.equal(error.details.limit, 100);
    assert.ok(Number(limited.headers.get('retry-after')) >= 1);
  });
});

describe('executions', () => {
  test('list with workflowId (id or slug), status in the control plane spelling, dates, paging', async () => {
    const list = async (q: string) => {
      const res = await p.rest<V1<{ executions: CpExecution[]; pagination: { total: number; hasMore: boolean } }>>('GET', `${CP}/executions${q}`, {
        key: reader,
      });
      assert.equal(res.status, 200, JSON.stringify(res.body));
      return res.body.data;
    };
    const completed = await list(`?workflowId=order-intake&status=completed&limit=2`);
    assert.equal(completed.executions.length, 2);
    assert.ok(completed.pagination.total >= 3 && completed.pagination.hasMore);
    for (const e of completed.executions) {
      assert.deepEqual(Object.keys(e).sort(), ['completedAt', 'duration', 'executionId', 'startedAt', 'status', 'workflowId', 'workflowName']);
      assert.equal(e.status, 'completed');
    }
    const failed = await list(`?workflowId=${ids.failing}&status=failed`);
    assert.equal(failed.executions.length, 1);
    assert.ok(failed.executions[0].failedAt);
    assert.equal((await list(`?startDate=2999-01-01T00:00:00Z`)).executions.length, 0);
    assert.equal((await list(`?workflowId=no-such-flow`)).executions.length, 0);
    assertError(await p.rest<V1<never>>('GET', `${CP}/executions?status=success`, { key: reader }), 400, 'validation_error');
    assertError(await p.rest<V1<never>>('GET', `${CP}/executions/00000000-0000-4000-8000-000000000000`, { key: reader }), 404, 'resource_not_found');
  });

  test('cancel: cancelled with cancelledAt (reason logged); a finished execution is 409', async () => {
    const started = await trigger({ workflowId: 'waiter', payload: {} });
    const id = started.body.data.executionId;
    await waitStatus(id, 'waiting');
    const res = await p.rest<V1<{ status: string }>>('POST', `${CP}/executions/${id}/cancel`, { key: operator, body: { reason: 'no longer needed' } });
    assert.equal(res.status, 200, JSON.stringify(res.body));
    assert.deepEqual(Object.keys(res.body.data).sort(), ['cancelledAt', 'executionId', 'status']);
    assert.equal(res.body.data.status, 'cancelled');
    const after = await getExecution(id);
    assert.equal(after.status, 'cancelled');
    assert.ok(after.cancelledAt);
    const logs = (await p.rest<V1<{ logs: { message: string }[] }>>('GET', `/v1/engine/executions/${id}/logs`)).body.data.logs;
    assert.ok(logs.some((l: { message: unknown }) => l.message === 'Execution canceled: no longer needed'));
    assertError(await p.rest<V1<never>>('POST', `${CP}/executions/${id}/cancel`, { key: operator, body: {} }), 409, 'conflict');
    assertError(await p.rest<V1<never>>('POST', `${CP}/executions/${id}/cancel`, { key: reader, body: {} }), 403, 'insufficient_permissions');
  });
});

describe('execution webhooks', () => {
  test('signed execution.started and execution.completed (sync and async), execution.failed, execution.waiting; events filter', async () => {
    const secret = 'whsec-test-123';
    const url = `${receiverUrl}/hooks`;
    const a = (await trigger({ workflowId: ids.intake, payload: { orderId: 'W-1' }, webhook: { url, secret } })).body.data.executionId;
    const s = (await trigger({ workflowId: ids.intake, payload: { orderId: 'W-2' }, execution: { mode: 'sync' }, webhook: { url, secret } })).body.data
      .executionId;
    const f = (await trigger({ workflowId: ids.failing, payload: {}, webhook: { url, secret } })).body.data.executionId;
    const w = (await trigger({ workflowId: ids.waiter, payload: {}, webhook: { url, secret, events: ['execution.waiting'] } })).body.data.executionId;
    const only = (await trigger({ workflowId: ids.intake, payload: { orderId: 'W-3' }, webhook: { url, events: ['execution.completed'] } })).body.data
      .executionId;
    const events = (id: string) =>
      deliveriesFor(id)
        .map((d) => d.event)
        .sort();
    await waitFor('deliveries', async () =>
      events(a).length === 2 && events(s).length === 2 && events(f).length === 2 && events(w).length === 1 && events(only).length === 1 ? true : undefined,
    );
    assert.deepEqual(events(a), ['execution.completed', 'execution.started']);
    assert.deepEqual(events(s), ['execution.completed', 'execution.started']);
    assert.deepEqual(events(f), ['execution.failed', 'execution.started']);
    assert.deepEqual(events(w), ['execution.waiting']);
    assert.deepEqual(events(only), ['execution.completed']);
    for (const d of [...deliveriesFor(a), ...deliveriesFor(s), ...deliveriesFor(f), ...deliveriesFor(w)]) {
      assert.ok(d.signature && verifySignature(secret, d.raw, d.signature), `signed: ${d.event}`);
      assert.equal(d.body.event, d.event);
    }
    assert.equal(deliveriesFor(only)[0]!.signature, undefined, 'no secret: unsigned');
    const completed = deliveriesFor(a).find((d) => d.event === 'execution.completed')!.body;
    assert.equal(completed.status, 'completed');
    assert.deepEqual(completed.result.outputs.items, [{ orderId: 'W-1', order: 'W-1', seen: true }]);
    assert.equal(completed.engineExecutionUrl, `${p.url}/v1/engine/executions/${a}`, 'the payload links where the trigger came from');
    const failed = deliveriesFor(f).find((d) => d.event === 'execution.failed')!.body;
    assert.deepEqual([failed.status, failed.error.code, failed.error.nodeName], ['failed', 'NODE_EXECUTION_FAILED', 'Boom']);
    assert.equal(deliveriesFor(a).find((d) => d.event === 'execution.started')!.body.status, 'running');
  });
});

describe('webhook registration', () => {
  test('POST /workflows/{id}/webhooks registers a trigger that starts the workflow; WEBHOOK_INVALID, WORKFLOW_NOT_FOUND', async () => {
    const res = await p.rest<
      V1<{ webhookId: string; workflowId: string; url: string; method: string; active: boolean; createdAt: string; authentication: { apiKeyValue?: unknown } }>
    >('POST', `${CP}/order-intake/webhooks`, {
      key: operator,
      body: { path: '/cp/orders', method: 'POST', authentication: { type: 'apiKey', apiKeyHeader: 'X-Shop-Key', apiKeyValue: 'shop-secret-1' } },
    });
    assert.equal(res.status, 201, JSON.stringify(res.body));
    const w = res.body.data;
    assert.match(w.webhookId, /^[0-9a-f-]{36}$/);
    assert.deepEqual(
      { workflowId: w.workflowId, url: w.url, method: w.method, active: w.active },
      { workflowId: ids.intake, url: `${p.url}/webhook/cp/orders`, method: 'POST', active: true },
    );
    assert.ok(w.createdAt);
    assert.equal(w.authentication.apiKeyValue, undefined);
    const hit = await fetch(`${p.url}/webhook/cp/orders`, {
      method: 'POST',
      headers: { 'content-type': 'application/json', 'x-shop-key': 'shop-secret-1' },
      body: '{"orderId":"H-1"}',
    });
    assert.equal(hit.status, 200);
    const bad = assertError(
      await p.rest<V1<never>>('POST', `${CP}/${ids.intake}/webhooks`, { key: operator, body: { path: '/cp/x', method: 'TRACE' } }),
      400,
      'WEBHOOK_INVALID',
    );
    assert.equal(bad.details.field, 'method');
    assertError(
      await p.rest<V1<never>>('POST', `${CP}/no-such-flow/webhooks`, { key: operator, body: { path: '/cp/y', method: 'POST' } }),
      404,
      'WORKFLOW_NOT_FOUND',
    );
    assertError(await p.rest<V1<never>>('POST', `${CP}/${ids.intake}/webhooks`, { key: operator, body: { method: 'POST' } }), 400, 'validation_error');
  });
});

describe('schedules', () => {
  test('create: nextRunAt with the time zone offset, defaults; SCHEDULE_INVALID, validation_error; list, update, delete', async () => {
    const res = await p.rest<V1<Schedule>>('POST', `${CP}/${ids.intake}/schedule`, {
      key: operator,
      body: { cron: '0 9 * * 1-5', timezone: 'Europe/Paris', payload: { report: 'daily' } },
    });
    assert.equal(res.status, 201, JSON.stringify(res.body));
    const s = res.body.data;
    assert.deepEqual(
      { workflowId: s.workflowId, cron: s.cron, timezone: s.timezone, enabled: s.enabled },
      { workflowId: ids.intake, cron: '0 9 * * 1-5', timezone: 'Europe/Paris', enabled: true },
    );
    assert.match(s.nextRunAt, /^\d{4}-\d\d-\d\dT09:00:00\+0[12]:00$/);
    const next = new Date(s.nextRunAt);
    assert.ok(next.getTime() > Date.now() && [1, 2, 3, 4, 5].includes(next.getUTCDay()));
    const utc = (await p.rest<V1<Schedule>>('POST', `${CP}/${ids.intake}/schedule`, { key: operator, body: { cron: '30 6 * * *' } })).body.data;
    assert.equal(utc.timezone, 'UTC');
    assert.match(utc.nextRunAt, /T06:30:00\+00:00$/);
    const kathmandu = (
      await p.rest<V1<Schedule>>('POST', `${CP}/${ids.intake}/schedule`, {
        key: operator,
        body: { cron: '0 0 12 * * *', timezone: 'Asia/Kathmandu', enabled: false },
      })
    ).body.data;
    assert.equal(kathmandu.enabled, false);
    assert.equal(kathmandu.nextRunAt, undefined, 'disabled: no next run');

    const invalid = assertError(
      await p.rest<V1<never>>('POST', `${CP}/${ids.intake}/schedule`, { key: operator, body: { cron: '61 * * * *' } }),
      400,
      'SCHEDULE_INVALID',
    );
    assert.deepEqual([invalid.details.field, invalid.details.cron], ['cron', '61 * * * *']);
    assert.match(
      assertError<{ reason: string }>(
        await p.rest<V1<never>>('POST', `${CP}/${ids.intake}/schedule`, { key: operator, body: { cron: '* * *' } }),
        400,
        'SCHEDULE_INVALID',
      ).details.reason,
      /5 fields/,
    );
    const tz = assertError<FieldErrors>(
      await p.rest<V1<never>>('POST', `${CP}/${ids.intake}/schedule`, { key: operator, body: { cron: '* * * * *', timezone: 'Mars/Olympus' } }),
      400,
      'validation_error',
    );
    assert.deepEqual(
      tz.details.errors.map((e: { field: unknown }) => e.field),
      ['timezone'],
    );
    assert.deepEqual(
      assertError<FieldErrors>(
        await p.rest<V1<never>>('POST', `${CP}/${ids.intake}/schedule`, { key: operator, body: {} }),
        400,
        'validation_error',
      ).details.errors.map((e: { field: unknown }) => e.field),
      ['cron'],
    );
    assertError(await p.rest<V1<never>>('POST', `${CP}/no-such-flow/schedule`, { key: operator, body: { cron: '* * * * *' } }), 404, 'WORKFLOW_NOT_FOUND');
    assertError(await p.rest<V1<never>>('POST', `${CP}/${ids.intake}/schedule`, { key: reader, body: { cron: '* * * * *' } }), 403, 'insufficient_permissions');

    const listed = (await p.rest<V1<{ schedules: Schedule[] }>>('GET', `${CP}/${ids.intake}/schedules`, { key: reader })).body.data.schedules;
    assert.deepEqual(
      listed.map((x: { scheduleId: unknown }) => x.scheduleId),
      [s.scheduleId, utc.scheduleId, kathmandu.scheduleId],
    );
    const updated = await p.rest<V1<Schedule>>('PUT', `${CP}/schedules/${s.scheduleId}`, {
      key: operator,
      body: { cron: '15 10 * * *', timezone: 'America/New_York' },
    });
    assert.equal(updated.status, 200, JSON.stringify(updated.body));
    assert.match(updated.body.data.nextRunAt, /T10:15:00-0[45]:00$/);
    assertError(await p.rest<V1<never>>('PUT', `${CP}/schedules/${s.scheduleId}`, { key: operator, body: { cron: 'nope' } }), 400, 'SCHEDULE_INVALID');
    for (const x of [s, utc, kathmandu]) assert.equal((await p.rest('DELETE', `${CP}/schedules/${x.scheduleId}`, { key: operator })).status, 200);
    assertError(await p.rest<V1<never>>('DELETE', `${CP}/schedules/${s.scheduleId}`, { key: operator }), 404, 'resource_not_found');
  });

  /** Runs of a schedule every 30 s are far apart in real time: only moving the clock to its due times makes them come in a test. */
  const HALF_MINUTE = '*/30 * * * * *';
  const scheduleOf = async (workflowId: string, scheduleId: string) =>
    (await p.rest<V1<{ schedules: Schedule[] }>>('GET', `${CP}/${workflowId}/schedules`, { key: reader })).body.data.schedules.find(
      (x: { scheduleId: unknown }) => x.scheduleId === scheduleId,
    )!;
  const fireJobsDone = (scheduleId: string) => untilDueJobsDone(p, clock, JOB.scheduleFire, { scheduleId });

  test('a seconds cron fires with the payload while enabled and the workflow active; disabling stops it', async () => {
    const id = await createWorkflow(
      'Ticker',
      [
        { name: 'Start', type: 'engine.manualTrigger' },
        { name: 'Stamp', type: 'engine.set', parameters: { values: { ticked: true } } },
      ],
      { active: true },
    );
    const s = (await p.rest<V1<Schedule>>('POST', `${CP}/${id}/schedule`, { key: operator, body: { cron: HALF_MINUTE, payload: { report: 'tick' } } })).body
      .data;
    const runs = async () =>
      (await p.rest<V1<{ executions: { executionId: string; mode: string }[] }>>('GET', `/v1/engine/executions?workflowId=${id}&limit=100`)).body.data
        .executions;
    clock.advanceTo(s.nextRunAt);
    await waitFor('a scheduled run', async () => ((await runs()).length >= 1 ? true : undefined), 10_000);
    clock.advanceTo((await scheduleOf(id, s.scheduleId)).nextRunAt);
    await waitFor('two scheduled runs', async () => ((await runs()).length >= 2 ? true : undefined), 10_000);
    const [latest] = await runs();
    assert.equal(latest.mode, 'schedule');
    const done = await waitFor('a finished run', async () => {
      const e = (await p.rest<V1<{ status: string; result: { items: ScheduledItem[] } }>>('GET', `/v1/engine/executions/${latest.executionId}`)).body.data;
      return e.status === 'success' ? e : undefined;
    });
    const item = done.result.items[0];
    assert.deepEqual(
      [item.report, item.ticked, item.scheduleId, item.cron, item.timezone, item.missedRuns],
      ['tick', true, s.scheduleId, HALF_MINUTE, 'UTC', 0],
    );
    assert.ok(Date.parse(item.scheduledFor) > 0);
    // Disabled: the due times the clock passes find the schedule off (the fire jobs end without a run).
    await p.rest('PUT', `${CP}/schedules/${s.scheduleId}`, { key: operator, body: { enabled: false } });
    const count = (await runs()).length;
    clock.advance(60_000);
    await fireJobsDone(s.scheduleId);
    assert.equal((await runs()).length, count, 'disabled: no more runs');
    // An inactive workflow's due times pass without an execution.
    const enabled = (await p.rest<V1<Schedule>>('PUT', `${CP}/schedules/${s.scheduleId}`, { key: operator, body: { enabled: true } })).body.data;
    await p.rest('POST', `/v1/engine/workflows/${id}/deactivate`);
    clock.advanceTo(enabled.nextRunAt);
    // The due time is passed in the transaction that would have started the run.
    await waitFor('the due times to move on', async () => Date.parse((await scheduleOf(id, s.scheduleId)).nextRunAt) > Date.parse(enabled.nextRunAt));
    assert.equal((await runs()).length, count, 'inactive workflow: no runs');
  });

  test('exactly once per due time with two platforms on one database; catch-up once after downtime', async () => {
    const id = await createWorkflow(
      'Once',
      [
        { name: 'Start', type: 'engine.manualTrigger' },
        { name: 'Noop', type: 'engine.noOp' },
      ],
      { active: true },
    );
    const p2 = await startTestPlatform(ENV, { database: p.db, clock });
    try {
      const s = (await p.rest<V1<Schedule>>('POST', `${CP}/${id}/schedule`, { key: operator, body: { cron: HALF_MINUTE } })).body.data;
      const fired = async () =>
        (await p.platform.kernel.db.query(`SELECT input->0->'json'->>'scheduledFor' AS due FROM engine.executions WHERE workflow_id = $1`, [id])) as {
          due: string;
        }[];
      // Three due times, each one a job both platforms' workers may claim.
      for (let n = 1; n <= 3; n++) {
        clock.advanceTo((await scheduleOf(id, s.scheduleId)).nextRunAt);
        await waitFor(`run ${n}`, async () => (await fired()).length >= n);
      }
      await p.rest('PUT', `${CP}/schedules/${s.scheduleId}`, { key: operator, body: { enabled: false } });
      await fireJobsDone(s.scheduleId);
      const runs = await fired();
      assert.ok(runs.length >= 3, `fired ${runs.length} times for three due times`);
      assert.equal(new Set(runs.map((f) => f.due)).size, runs.length, 'no due time fired twice');

      // The claim itself: four jobs for one due time, on two platforms' workers at once.
      const minute = (await p.rest<V1<Schedule>>('POST', `${CP}/${id}/schedule`, { key: operator, body: { cron: '*/5 * * * *' } })).body.data;
      const due = new Date(Math.floor(clock.now().getTime() / 1000) * 1000 - 60_000);
      await p.platform.kernel.db.query(`UPDATE engine.schedules SET next_run_at = $2 WHERE id = $1`, [minute.scheduleId, due]);
      await Promise.all(
        [p, p2, p, p2].map((x, i) =>
          x.platform.kernel.queue.enqueue(JOB.scheduleFire, { scheduleId: minute.scheduleId, due: due.toISOString() }, { key: `test-claim-${i}` }),
        ),
      );
      const claimed = await waitFor('the forced due time to fire', async () => {
        const rows = await p.platform.kernel.db.query(`SELECT id FROM engine.executions WHERE input->0->'json'->>'scheduleId' = $1`, [minute.scheduleId]);
        return rows.length ? rows : undefined;
      });
      const jobs = await waitFor('the four jobs to finish', async () => {
        const rows = await p.platform.kernel.db.query(`SELECT state, locked_by FROM platform.jobs WHERE key LIKE 'test-claim-%'`);
        return rows.length === 4 && rows.every((r: { state: unknown }) => r.state === 'completed') ? rows : undefined;
      });
      assert.equal(jobs.length, 4, 'every job ran; one fired, three found the due time taken');
      assert.equal(claimed.length, 1);
      assert.equal(
        (
          await p.platform.kernel.db.query(`SELECT count(*)::int AS n FROM engine.executions WHERE input->0->'json'->>'scheduleId' = $1`, [minute.scheduleId])
        )[0].n,
        1,
      );
    } finally {
      await p2.stop();
    }

    // Downtime: the platform is stopped for "an hour" (the due time is moved back), then started again.
    const down = (await p.rest<V1<Schedule>>('POST', `${CP}/${id}/schedule`, { key: operator, body: { cron: '*/5 * * * *' } })).body.data;
    await p.stop({ keepDatabase: true });
    const db = p.db;
    const { Client } = await import('pg');
    const client = new Client({ connectionString: db.url });
    await client.connect();
    await client.query(`UPDATE engine.schedules SET next_run_at = date_trunc('minute', now()) - interval '61 minutes' WHERE id = $1`, [down.scheduleId]);
    await client.end();
    p = await startTestPlatform(ENV, { database: db, clock });
    restartedOn = db;
    const ran = await waitFor('the catch-up run', async () => {
      const rows = await p.platform.kernel.db.query(`SELECT input->0->'json' AS json FROM engine.executions WHERE input->0->'json'->>'scheduleId' = $1`, [
        down.scheduleId,
      ]);
      return rows.length ? rows : undefined;
    });
    await fireJobsDone(down.scheduleId);
    const all = await p.platform.kernel.db.query(`SELECT count(*)::int AS n FROM engine.executions WHERE input->0->'json'->>'scheduleId' = $1`, [
      down.scheduleId,
    ]);
    assert.equal(all[0].n, 1, 'one run for the whole missed window');
    assert.ok(ran[0].json.missedRuns >= 11, `missedRuns ${ran[0].json.missedRuns}`);
    const [row] = await p.platform.kernel.db.query(`SELECT next_run_at FROM engine.schedules WHERE id = $1`, [down.scheduleId]);
    assert.ok(row.next_run_at.getTime() > clock.now().getTime(), 'the next due time is after the restart');
  });
});
