import assert from 'node:assert/strict';
import { randomBytes } from 'node:crypto';
import { createServer, type IncomingMessage, type Server } from 'node:http';
import type { Client } from 'graphql-ws';
import { JOB } from '../kernel/topics';
import { testClock, untilDueJobsDone } from './support/clock';
import { chain, start, type WorkflowNode } from './support/fixtures';
import type { Gql, Platform, V1 } from './support/answers';
import type { Execution, ExecutionList, ExecutionLogs, Workflow, WorkflowList, WorkflowSummary } from './support/engine-answers';
import { answerOf, jsonOf } from './support/json';
import { N8N_EXPORT } from './support/n8n-export';
import { readBody } from './support/net';
import { startTestPlatform, type TestPlatform, type JsonAnswer } from './support/platform';
import { subscribe, wsClient } from './support/subscribe';
import { sleep, until, untilValue } from './support/until';

/** The workflow engine end to end: REST (/v1/engine and /engine/api/v1), GraphQL, subscriptions, a restart. */

const INTERNAL_SECRET = randomBytes(32).toString('hex');
const ENV = { OUTBOUND_ALLOW_PRIVATE_NETWORKS: 'true', INTERNAL_SECRET };
/** Schedules and Wait timers end when a test moves it (the restarted platform runs on it too). */
const clock = testClock();
let p: TestPlatform;
let upstream: Server;
let upstreamUrl = '';
const upstreamState = { flakyFailures: 0, slowAborted: 0, slowStarted: 0 };
const clients: Client[] = [];

beforeAll(async () => {
  upstream = createServer((req, res) => void handleUpstream(req, res));
  await new Promise<void>((resolve) => upstream.listen(0, '127.0.0.1', resolve));
  upstreamUrl = `http://127.0.0.1:${(upstream.address() as { port: number }).port}`;
  p = await startTestPlatform(ENV, { clock });
});
afterAll(async () => {
  for (const c of clients) await c.dispose();
  await p?.stop();
  upstream?.closeAllConnections();
  await new Promise((resolve) => upstream?.close(resolve));
});

async function handleUpstream(req: IncomingMessage, res: import('node:http').ServerResponse) {
  const body = await readBody(req);
  const json = (status: number, value: unknown) => {
    res.writeHead(status, { 'content-type': 'application/json' });
    res.end(JSON.stringify(value));
  };
  const url = new URL(req.url!, 'http://x');
  if (url.pathname === '/orders')
    return json(200, [
      { id: 1, total: 40 },
      { id: 2, total: 400 },
    ]);
  if (url.pathname === '/echo')
    return json(200, {
      method: req.method,
      query: Object.fromEntries(url.searchParams),
      body: body ? JSON.parse(body) : null,
      trace: req.headers['x-trace'] ?? null,
    });
  if (url.pathname === '/flaky') {
    if (upstreamState.flakyFailures > 0) {
      upstreamState.flakyFailures--;
      return json(503, { error: 'try later' });
    }
    return json(200, { ok: true });
  }
  if (url.pathname === '/slow') {
    upstreamState.slowStarted++;
    req.socket.on('close', () => upstreamState.slowAborted++);
    return; // never answers
  }
  json(404, { error: 'nope' });
}

// ---------------------------------------------------------------------------------------------
// helpers

type N = WorkflowNode;

async function createWorkflow(name: string, def: { nodes: N[]; connections: unknown }, extra: Record<string, unknown> = {}): Promise<string> {
  const res = await p.rest<V1<Workflow>>('POST', '/v1/engine/workflows', { body: { name, ...def, ...extra } });
  assert.equal(res.status, 201, JSON.stringify(res.body));
  return res.body.data.workflowId;
}

async function execute(workflowId: string, body: Record<string, unknown> = {}) {
  const res = await p.rest<V1<Execution>>('POST', `/v1/engine/workflows/${workflowId}/execute`, { body });
  assert.equal(res.status, 200, JSON.stringify(res.body));
  return res.body.data;
}

async function execution(id: string, includeData = false) {
  const res = await p.rest<V1<Execution>>('GET', `/v1/engine/executions/${id}${includeData ? '?includeData=true' : ''}`);
  assert.equal(res.status, 200, JSON.stringify(res.body));
  return res.body.data;
}

/** Executions run whole workflows: a longer deadline than `until`'s own, asked less often. */
const waitFor = <T>(what: string, probe: () => Promise<T | undefined | false>, timeoutMs = 15_000) => until(what, probe, timeoutMs, 100);

const waitStatus = (id: string, status: string, timeoutMs = 15_000) =>
  untilValue(
    `execution ${id} to be ${status}`,
    () => execution(id, true),
    (e) => e.status === status,
    { timeoutMs, everyMs: 100 },
  );

function assertError(res: JsonAnswer<V1<unknown>>, status: number, code: string) {
  assert.equal(res.status, status, JSON.stringify(res.body));
  assert.equal(res.body.success, false);
  assert.equal(res.body.error.code, code, JSON.stringify(res.body));
  return res.body.error;
}

// ---------------------------------------------------------------------------------------------

describe('workflow definitions (/v1/engine/workflows)', () => {
  test('create, get, update (version on every change), activate, duplicate, export, list, delete', async () => {
    const def = chain([start, { name: 'Greet', type: 'engine.set', parameters: { values: { greeting: 'Hello {{ $json.name }}' } }, position: [200, 0] }]);
    const created = await p.rest<V1<Workflow>>('POST', '/v1/engine/workflows', {
      body: { name: 'Greeter', ...def, settings: { timezone: 'Europe/Oslo' }, tags: ['crm', 'demo'] },
    });
    assert.equal(created.status, 201);
    const d = created.body.data;
    assert.match(d.workflowId, /^[0-9a-f-]{36}$/);
    assert.deepEqual(
      { name: d.name, active: d.active, version: d.version, webhookUrl: d.webhookUrl },
      { name: 'Greeter', active: false, version: 1, webhookUrl: null },
    );
    assert.match(created.body.meta.requestId, /^req_/);
    const id = d.workflowId;

    const got = (await p.rest<V1<Workflow>>('GET', `/v1/engine/workflows/${id}`)).body.data;
    assert.deepEqual(got.nodes, [
      { name: 'Start', type: 'engine.manualTrigger', position: [0, 0], parameters: {} },
      { name: 'Greet', type: 'engine.set', position: [200, 0], parameters: { values: { greeting: 'Hello {{ $json.name }}' } } },
    ]);
    assert.deepEqual(got.connections, def.connections);
    assert.deepEqual(got.settings, { timezone: 'Europe/Oslo' });
    assert.deepEqual(got.statistics, { executions: 0, successRate: 0, averageDuration: 0 });
    assert.equal(got.lastExecuted, null);

    const renamed = await p.rest<V1<Workflow>>('PUT', `/v1/engine/workflows/${id}`, { body: { name: 'Greeter 2' } });
    assert.equal(renamed.status, 200);
    assert.equal(renamed.body.data.version, 2);
    assert.ok(renamed.body.data.updatedAt);
    assert.equal(
      (await p.rest<V1<Workflow>>('PUT', `/v1/engine/workflows/${id}`, { body: { name: 'Greeter 2' } })).body.data.version,
      2,
      'no change, same version',
    );
    const nodes = [...def.nodes, { name: 'Done', type: 'engine.noOp' }];
    const changed = await p.rest<V1<Workflow>>('PUT', `/v1/engine/workflows/${id}`, {
      body: { nodes, connections: { ...def.connections, Greet: { main: [[{ node: 'Done', type: 'main', index: 0 }]] } } },
    });
    assert.equal(changed.body.data.version, 3);

    const on = await p.rest<V1<Workflow>>('POST', `/v1/engine/workflows/${id}/activate`);
    assert.deepEqual([on.status, on.body.data.active, on.body.data.version], [200, true, 4]);
    const off = await p.rest<V1<Workflow>>('POST', `/v1/engine/workflows/${id}/deactivate`);
    assert.deepEqual([off.body.data.active, off.body.data.version], [false, 5]);
    await p.rest('PUT', `/v1/engine/workflows/${id}`, { body: { active: true } });

    const dup = await p.rest<V1<Workflow>>('POST', `/v1/engine/workflows/${id}/duplicate`, { body: { name: 'Greeter copy' } });
    assert.equal(dup.status, 201);
    assert.equal(dup.body.data.sourceWorkflowId, id);
    assert.equal(dup.body.data.name, 'Greeter copy');
    const copy = (await p.rest<V1<Workflow>>('GET', `/v1/engine/workflows/${dup.body.data.workflowId}`)).body.data;
    assert.equal(copy.nodes.length, 3);
    assert.equal(copy.active, false);

    const json = (await p.rest<V1<{ format: string; workflow: Workflow }>>('GET', `/v1/engine/workflows/${id}/export`)).body.data;
    assert.equal(json.format, 'json');
    assert.equal(json.workflow.name, 'Greeter 2');
    assert.equal(json.workflow.nodes.length, 3);
    const yaml = (await p.rest<V1<{ format: string; workflow: string }>>('GET', `/v1/engine/workflows/${id}/export?format=yaml`)).body.data;
    assert.equal(yaml.format, 'yaml');
    assert.match(yaml.workflow, /^name: Greeter 2\nnodes:\n {2}- name: Start\n/);
    const reimported = await p.rest<V1<WorkflowSummary>>('POST', '/v1/engine/workflows/import', { body: { workflow: yaml.workflow, name: 'From YAML' } });
    assert.equal(reimported.status, 201, JSON.stringify(reimported.body));
    assert.deepEqual([reimported.body.data.name, reimported.body.data.nodes], ['From YAML', 3]);
    assertError(await p.rest('GET', `/v1/engine/workflows/${id}/export?format=xml`), 400, 'validation_error');

    const listed = await p.rest<V1<WorkflowList>>('GET', '/v1/engine/workflows?active=true&tag=crm&limit=1');
    assert.equal(listed.status, 200);
    const item = listed.body.data.workflows[0];
    assert.deepEqual(
      { workflowId: item.workflowId, name: item.name, active: item.active, nodes: item.nodes, executions: item.executions },
      { workflowId: id, name: 'Greeter 2', active: true, nodes: 3, executions: 0 },
    );
    assert.deepEqual(listed.body.data.pagination, { total: 1, limit: 1, offset: 0, hasMore: false });
    const all = (await p.rest<V1<WorkflowList>>('GET', '/v1/engine/workflows?limit=2')).body.data.pagination;
    assert.equal(all.limit, 2);
    assert.ok(all.total >= 3 && all.hasMore);
    assertError(await p.rest('GET', '/v1/engine/workflows?limit=101'), 400, 'validation_error');

    const deleted = await p.rest<V1<Workflow>>('DELETE', `/v1/engine/workflows/${dup.body.data.workflowId}`);
    assert.equal(deleted.status, 200);
    assert.equal(deleted.body.data.workflowId, dup.body.data.workflowId);
    assert.ok(deleted.body.data.deletedAt);
    const gone = assertError(await p.rest('GET', `/v1/engine/workflows/${dup.body.data.workflowId}`), 404, 'WORKFLOW_NOT_FOUND');
    assert.equal(gone.details.workflowId, dup.body.data.workflowId);
  });

  test('WORKFLOW_INVALID before anything is stored: missing parameter, unknown type, duplicate name, dangling connection', async () => {
    const count = async () => ((await p.platform.kernel.db.query(`SELECT count(*)::int AS n FROM engine.workflows`)) as { n: number }[])[0].n;
    const before = await count();
    const post = (nodes: N[], connections: unknown = {}) => p.rest<V1<Workflow>>('POST', '/v1/engine/workflows', { body: { name: 'bad', nodes, connections } });

    const missing = assertError(await post([start, { name: 'Fetch', type: 'engine.httpRequest', parameters: { method: 'GET' } }]), 400, 'WORKFLOW_INVALID');
    assert.deepEqual(missing.details, { node: 'Fetch', nodeType: 'engine.httpRequest', missingParameters: ['url'] });
    const unknown = assertError(await post([start, { name: 'AI', type: 'engine.teleport', parameters: { agentId: 'x' } }]), 400, 'WORKFLOW_INVALID');
    assert.deepEqual([unknown.details.reason, unknown.details.node, unknown.details.type], ['unknown_node_type', 'AI', 'engine.teleport']);
    assert.equal(assertError(await post([start, { ...start }]), 400, 'WORKFLOW_INVALID').details.reason, 'duplicate_node_name');
    const dangling = assertError(await post([start], { Start: { main: [[{ node: 'Nowhere', type: 'main', index: 0 }]] } }), 400, 'WORKFLOW_INVALID');
    assert.deepEqual([dangling.details.reason, dangling.details.target], ['unknown_connection_target', 'Nowhere']);
    const output = assertError(
      await post([start, { name: 'N', type: 'engine.noOp' }], { Start: { main: [[], [{ node: 'N', type: 'main', index: 0 }]] } }),
      400,
      'WORKFLOW_INVALID',
    );
    assert.equal(output.details.reason, 'invalid_output');
    const cron = assertError(await post([{ name: 'Every', type: 'engine.scheduleTrigger', parameters: { cron: '61 * * * *' } }]), 400, 'SCHEDULE_INVALID');
    assert.equal(cron.details.node, 'Every');
    const shape = assertError(
      await p.rest('POST', '/v1/engine/workflows', { body: { name: 'x', nodes: [{ type: 'engine.noOp' }], connections: {} } }),
      400,
      'validation_error',
    );
    assert.ok(
      shape.details.errors?.some((e) => e.field === 'nodes.0.name' || (e.field === 'nodes.0' && /name/.test(e.message ?? ''))),
      JSON.stringify(shape),
    );
    assert.equal(await count(), before, 'nothing was stored');
  });
});

describe('executions', () => {
  test('sync and async, get with includeData, logs, list filters, statistics and lastExecuted', async () => {
    const id = await createWorkflow(
      'Orders',
      chain([
        start,
        { name: 'Fetch', type: 'engine.httpRequest', parameters: { url: `${upstreamUrl}/orders` } },
        { name: 'Big?', type: 'engine.if', parameters: { condition: '{{ $json.total > 100 }}' } },
        { name: 'Flag', type: 'engine.set', parameters: { values: { flagged: true, by: '{{ $node["Start"].json.user }}' } } },
      ]),
    );
    const sync = await execute(id, { data: { user: 'ann' }, mode: 'sync' });
    assert.equal(sync.status, 'success');
    assert.deepEqual(sync.result.items, [{ id: 2, total: 400, flagged: true, by: 'ann' }]);
    assert.equal(sync.result.lastNode, 'Flag');
    assert.ok(sync.finishedAt && typeof sync.duration === 'number');
    assert.deepEqual(sync.progress, { nodesCompleted: 4, nodesTotal: 4, currentNode: null });

    const async = await execute(id, { data: { user: 'bob' } });
    assert.deepEqual(Object.keys(async).sort(), ['executionId', 'progress', 'startedAt', 'status', 'workflowId', 'workflowName']);
    assert.equal(async.status, 'running');
    const done = await waitStatus(async.executionId, 'success');
    assert.deepEqual(
      done.nodeData.map((n) => [n.nodeName, n.nodeType, n.status]),
      [
        ['Start', 'engine.manualTrigger', 'success'],
        ['Fetch', 'engine.httpRequest', 'success'],
        ['Big?', 'engine.if', 'success'],
        ['Flag', 'engine.set', 'success'],
      ],
    );
    assert.deepEqual(done.nodeData[2].output, { main: [[{ json: { id: 2, total: 400 } }], [{ json: { id: 1, total: 40 } }]] });
    assert.equal(typeof done.nodeData[1].duration, 'number');
    assert.equal((await execution(async.executionId)).nodeData, undefined, 'run data only with includeData');

    const logs = (await p.rest<V1<ExecutionLogs>>('GET', `/v1/engine/executions/${async.executionId}/logs`)).body.data;
    assert.equal(logs.executionId, async.executionId);
    assert.deepEqual(
      logs.logs.map((l) => l.message),
      ['Execution started (manual)', 'Execution succeeded (4 nodes run)'],
    );
    assert.equal(logs.logs[0].level, 'info');

    const failing = await createWorkflow('Broken', chain([start, { name: 'Boom', type: 'engine.code', parameters: { code: 'throw new Error("no stock")' } }]));
    const failed = await execute(failing, { mode: 'sync' });
    assert.equal(failed.status, 'error');
    assert.deepEqual(
      { code: failed.error.code, node: failed.error.node, nodeType: failed.error.nodeType },
      { code: 'NODE_EXECUTION_FAILED', node: 'Boom', nodeType: 'engine.code' },
    );
    assert.match(failed.error.message, /no stock/);
    assert.ok(failed.failedAt);

    const byWorkflow = (await p.rest<V1<ExecutionList>>('GET', `/v1/engine/executions?workflowId=${id}`)).body.data;
    assert.equal(byWorkflow.executions.length, 2);
    assert.deepEqual(Object.keys(byWorkflow.executions[0]).sort(), [
      'duration',
      'executionId',
      'finishedAt',
      'mode',
      'startedAt',
      'status',
      'workflowId',
      'workflowName',
    ]);
    const errors = (await p.rest<V1<ExecutionList>>('GET', `/v1/engine/executions?status=error&workflowId=${failing}`)).body.data;
    assert.deepEqual(
      errors.executions.map((e) => e.executionId),
      [failed.executionId],
    );
    const future = (await p.rest<V1<ExecutionList>>('GET', `/v1/engine/executions?workflowId=${id}&startDate=2999-01-01T00:00:00Z`)).body.data;
    assert.equal(future.executions.length, 0);
    const window = (
      await p.rest<V1<ExecutionList>>('GET', `/v1/engine/executions?workflowId=${id}&startDate=2000-01-01T00:00:00Z&endDate=2999-01-01T00:00:00Z&limit=1`)
    ).body.data;
    assert.deepEqual(window.pagination, { total: 2, limit: 1, offset: 0, hasMore: true });
    assertError(await p.rest('GET', '/v1/engine/executions?status=completed'), 400, 'validation_error');

    const wf = (await p.rest<V1<Workflow>>('GET', `/v1/engine/workflows/${id}`)).body.data;
    assert.equal(wf.statistics.executions, 2);
    assert.equal(wf.statistics.successRate, 100);
    assert.ok(wf.lastExecuted);
    const broken = (await p.rest<V1<Workflow>>('GET', `/v1/engine/workflows/${failing}`)).body.data.statistics;
    assert.deepEqual([broken.executions, broken.successRate], [1, 0]);
  });

  test('retry from the failed node reuses the stored outputs before it; fromNode picks another; originalExecutionId', async () => {
    upstreamState.flakyFailures = 1;
    const id = await createWorkflow(
      'Flaky',
      chain([
        start,
        { name: 'Stamp', type: 'engine.code', parameters: { code: 'return [{ stamp: Math.random() }]' } },
        { name: 'Call', type: 'engine.httpRequest', parameters: { url: `${upstreamUrl}/flaky` } },
        { name: 'After', type: 'engine.set', parameters: { values: { stamp: '{{ $node["Stamp"].json.stamp }}' } } },
      ]),
    );
    const first = await execute(id, { mode: 'sync' });
    assert.equal(first.status, 'error');
    assert.equal(first.error.node, 'Call');
    assert.equal(first.error.details.statusCode, 503);
    const firstData = await execution(first.executionId, true);
    const stamp = firstData.nodeData.find((n) => n.nodeName === 'Stamp')!.output.main[0][0].json.stamp;

    const retried = await p.rest<V1<Execution>>('POST', `/v1/engine/executions/${first.executionId}/retry`, { body: {} });
    assert.equal(retried.status, 201, JSON.stringify(retried.body));
    assert.equal(retried.body.data.originalExecutionId, first.executionId);
    assert.notEqual(retried.body.data.executionId, first.executionId);
    assert.equal(retried.body.data.status, 'running');
    const second = await waitStatus(retried.body.data.executionId, 'success');
    assert.deepEqual(
      second.nodeData.map((n) => [n.nodeName, n.reused]),
      [
        ['Start', true],
        ['Stamp', true],
        ['Call', false],
        ['After', false],
      ],
    );
    assert.deepEqual(second.result.items, [{ ok: true, stamp }], 'Stamp was not run again');
    assert.equal(second.originalExecutionId, first.executionId);

    upstreamState.flakyFailures = 1;
    const again = await execute(id, { mode: 'sync' });
    const fromStamp = await p.rest<V1<Execution>>('POST', `/v1/engine/executions/${again.executionId}/retry`, { body: { fromNode: 'Stamp' } });
    const third = await waitStatus(fromStamp.body.data.executionId, 'success');
    assert.deepEqual(
      third.nodeData.map((n) => [n.nodeName, n.reused]),
      [
        ['Start', true],
        ['Stamp', false],
        ['Call', false],
        ['After', false],
      ],
    );
    assertError(await p.rest('POST', `/v1/engine/executions/${again.executionId}/retry`, { body: { fromNode: 'Nope' } }), 400, 'validation_error');
    assertError(await p.rest('POST', `/v1/engine/executions/${third.executionId}/retry`, { body: {} }), 409, 'conflict');
  });

  test('cancel aborts the running node (its HTTP call included): canceled, canceledAt', async () => {
    const id = await createWorkflow(
      'Slow',
      chain([
        start,
        { name: 'Slow call', type: 'engine.httpRequest', parameters: { url: `${upstreamUrl}/slow`, timeout: 60_000 } },
        { name: 'Never', type: 'engine.noOp' },
      ]),
    );
    const started = await execute(id);
    await waitFor('the slow call to be running', async () => (await execution(started.executionId)).progress.currentNode === 'Slow call');
    const abortedBefore = upstreamState.slowAborted;
    const res = await p.rest<V1<Execution>>('POST', `/v1/engine/executions/${started.executionId}/cancel`);
    assert.equal(res.status, 200, JSON.stringify(res.body));
    assert.deepEqual([res.body.data.executionId, res.body.data.status], [started.executionId, 'canceled']);
    assert.ok(res.body.data.canceledAt);
    await waitFor('the upstream request to be aborted', async () => upstreamState.slowAborted > abortedBefore, 5000);
    const after = await execution(started.executionId, true);
    assert.equal(after.status, 'canceled');
    assert.deepEqual(
      after.nodeData.map((n) => n.nodeName),
      ['Start'],
      'nothing after the canceled node ran',
    );
    assertError(await p.rest('POST', `/v1/engine/executions/${started.executionId}/cancel`), 409, 'conflict');
    const logs = (await p.rest<V1<ExecutionLogs>>('GET', `/v1/engine/executions/${started.executionId}/logs`)).body.data.logs;
    assert.ok(logs.some((l) => l.message === 'Execution canceled'));

    const del = await p.rest<V1<Execution>>('DELETE', `/v1/engine/executions/${started.executionId}`);
    assert.equal(del.status, 200);
    assert.ok(del.body.data.deletedAt);
    assertError(await p.rest('GET', `/v1/engine/executions/${started.executionId}`), 404, 'resource_not_found');
  });

  test('the workflow-level execution timeout fails the execution with EXECUTION_FAILED', async () => {
    const id = await createWorkflow('Too slow', chain([start, { name: 'Slow call', type: 'engine.httpRequest', parameters: { url: `${upstreamUrl}/slow` } }]), {
      settings: { executionTimeout: 1 },
    });
    const e = await execute(id, { mode: 'sync' });
    assert.equal(e.status, 'error');
    assert.equal(e.error.code, 'EXECUTION_FAILED');
    assert.equal(e.error.details.reason, 'timeout');
    assert.match(e.error.message, /time limit of 1 s/);
  });

  test('a sync request answers within its timeout with the execution still running', async () => {
    const id = await createWorkflow(
      'Waits a bit',
      chain([start, { name: 'Pause', type: 'engine.code', parameters: { code: 'const end = Date.now() + 2500; while (Date.now() < end) {} return items;' } }]),
    );
    const t = Date.now();
    const e = await execute(id, { mode: 'sync', timeout: 1 });
    assert.ok(Date.now() - t < 2300);
    assert.equal(e.status, 'running');
    await waitStatus(e.executionId, 'success');
  });

  test('sandbox limits: an endless loop, a memory bomb and a reach for `process` fail their node; the platform stays up', async () => {
    const run = async (code: string, extra: Record<string, unknown> = {}) => {
      const id = await createWorkflow('Sandbox', chain([start, { name: 'Code', type: 'engine.code', parameters: { code }, ...extra }]));
      return execute(id, { mode: 'sync' });
    };
    const loop = await run('while (true) {}', { timeout: 1 });
    assert.equal(loop.status, 'error');
    assert.match(loop.error.message, /time limit/);
    const bomb = await run('const a = []; for (;;) a.push(new Array(1e5).fill(7));');
    assert.equal(bomb.status, 'error');
    assert.match(bomb.error.message, /memory limit of 64 MB/);
    const escape = await run('return [{ env: process.env }]');
    assert.match(escape.error.message, /process is not defined/);
    const fs = await run('return [{ fs: typeof require }]');
    assert.deepEqual(fs.result.items, [{ fs: 'undefined' }]);
    const expression = await createWorkflow(
      'Expression',
      chain([start, { name: 'Set', type: 'engine.set', parameters: { values: { p: '{{ this.constructor.constructor("return process")() }}' } } }]),
    );
    const viaExpression = await execute(expression, { mode: 'sync' });
    assert.equal(viaExpression.status, 'error');
    assert.match(viaExpression.error.message, /process is not defined/);
    assert.equal((await fetch(`${p.url}/health`)).status, 200);
  });

  test('httpRequest sends method, query, headers and JSON body; code and expressions shape the items', async () => {
    const id = await createWorkflow(
      'Echo',
      chain([
        start,
        {
          name: 'Post',
          type: 'engine.httpRequest',
          parameters: {
            method: 'POST',
            url: `${upstreamUrl}/echo`,
            query: { page: '{{ $json.page }}' },
            headers: { 'X-Trace': 't-{{ $json.page }}' },
            body: { items: '{{ $json.items }}' },
          },
        },
        {
          name: 'Count',
          type: 'engine.code',
          parameters: { code: 'return [{ method: $json.method, page: $json.query.page, trace: $json.trace, count: $json.body.items.length }]' },
        },
      ]),
    );
    const e = await execute(id, { mode: 'sync', data: { page: 3, items: [1, 2, 3] } });
    assert.deepEqual(e.result.items, [{ method: 'POST', page: '3', trace: 't-3', count: 3 }]);
  });

  test('executeWorkflow runs another workflow with the items and passes on its result', async () => {
    const child = await createWorkflow(
      'Child',
      chain([start, { name: 'Double', type: 'engine.set', parameters: { values: { doubled: '{{ $json.n * 2 }}' } } }]),
    );
    const parent = await createWorkflow(
      'Parent',
      chain([
        start,
        { name: 'Split', type: 'engine.code', parameters: { code: 'return [{ n: 1 }, { n: 2 }]' } },
        { name: 'Call child', type: 'engine.executeWorkflow', parameters: { workflowId: child } },
      ]),
    );
    const e = await execute(parent, { mode: 'sync' });
    assert.equal(e.status, 'success', JSON.stringify(e));
    assert.deepEqual(e.result.items, [
      { n: 1, doubled: 2 },
      { n: 2, doubled: 4 },
    ]);
    const children = (await p.rest<V1<ExecutionList>>('GET', `/v1/engine/executions?workflowId=${child}`)).body.data.executions;
    assert.equal(children.length, 1);
    assert.equal(children[0].mode, 'subworkflow');
  });

  test('wait with resume "webhook": waiting, resumeUrl, the request becomes the item, then success', async () => {
    const id = await createWorkflow(
      'Approval',
      chain([
        start,
        { name: 'Wait for approval', type: 'engine.wait', parameters: { resume: 'webhook' } },
        {
          name: 'Decide',
          type: 'engine.set',
          parameters: { values: { approved: '{{ $json.body.approved }}', by: '{{ $json.query.by }}' }, keepOnlySet: true },
        },
      ]),
    );
    const started = await execute(id, { data: { order: 9 } });
    const waiting = await waitStatus(started.executionId, 'waiting');
    assert.match(waiting.resumeUrl, new RegExp(`^${p.url}/webhook/resume/${started.executionId}/[0-9a-f]{40}$`));
    assert.equal(waiting.progress.currentNode, 'Wait for approval');
    const wrong = await fetch(`${p.url}/webhook/resume/${started.executionId}/${'0'.repeat(40)}`, { method: 'POST' });
    assert.equal(wrong.status, 404);
    const resumed = await fetch(`${waiting.resumeUrl}?by=lee`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({ approved: true }),
    });
    assert.equal(resumed.status, 200);
    assert.deepEqual(await resumed.json(), { success: true, executionId: started.executionId, status: 'resumed' });
    const done = await waitStatus(started.executionId, 'success');
    assert.deepEqual(done.result.items, [{ approved: true, by: 'lee' }]);
    assert.equal((await fetch(`${waiting.resumeUrl}`, { method: 'POST' })).status, 409, 'only once');
  });

  test('schedule triggers start only active workflows', async () => {
    // Every 30 s: only moving the clock to its due times makes two runs come within the test.
    const id = await createWorkflow(
      'Every half minute',
      chain([
        { name: 'Tick', type: 'engine.scheduleTrigger', parameters: { cron: '*/30 * * * * *' } },
        { name: 'Note', type: 'engine.set', parameters: { values: { ran: true } } },
      ]),
    );
    const count = async () => (await p.rest<V1<ExecutionList>>('GET', `/v1/engine/executions?workflowId=${id}`)).body.data.pagination.total;
    const schedules = async () =>
      (await p.rest<V1<{ schedules: { scheduleId: string; nodeName: string; nextRunAt: string }[] }>>('GET', `/v1/control-plane/workflows/${id}/schedules`))
        .body.data.schedules;
    // Inactive: its trigger has no schedule, so no due time can start it.
    assert.deepEqual(await schedules(), [], 'inactive: no schedule for its trigger');
    assert.equal(await count(), 0, 'inactive: never started');
    await p.rest('POST', `/v1/engine/workflows/${id}/activate`);
    const [tick] = await schedules();
    assert.equal(tick.nodeName, 'Tick');
    clock.advanceTo(tick.nextRunAt);
    await waitFor('a scheduled run', async () => ((await count()) >= 1 ? true : undefined), 8000);
    clock.advanceTo((await schedules())[0].nextRunAt);
    await waitFor('two scheduled runs', async () => ((await count()) >= 2 ? true : undefined), 8000);
    const list = (await p.rest<V1<ExecutionList>>('GET', `/v1/engine/executions?workflowId=${id}`)).body.data.executions;
    assert.ok(list.every((e) => e.mode === 'schedule'));
    await p.rest('POST', `/v1/engine/workflows/${id}/deactivate`);
    assert.deepEqual(await schedules(), [], 'deactivated: the trigger has no schedule');
    const after = await count();
    // The due time already planned passes too: its job finds no schedule and starts nothing.
    clock.advance(60_000);
    await untilDueJobsDone(p, clock, JOB.scheduleFire, { scheduleId: tick.scheduleId });
    assert.equal(await count(), after, 'deactivated: no more runs');
  });

  test('errors: WORKFLOW_NOT_FOUND, resource_not_found, PAYLOAD_TOO_LARGE, validation_error, permissions', async () => {
    const missing = '00000000-0000-4000-8000-000000000000';
    assertError(await p.rest('POST', `/v1/engine/workflows/${missing}/execute`, { body: {} }), 404, 'WORKFLOW_NOT_FOUND');
    assertError(await p.rest('POST', '/v1/engine/workflows/not-a-uuid/execute', { body: {} }), 404, 'WORKFLOW_NOT_FOUND');
    assertError(await p.rest('GET', `/v1/engine/executions/${missing}`), 404, 'resource_not_found');
    const id = await createWorkflow('Big payload', chain([start]));
    const big = await p.rest<V1<Execution>>('POST', `/v1/engine/workflows/${id}/execute`, { body: { data: { blob: 'x'.repeat(5 * 1024 * 1024 + 10) } } });
    const tooLarge = assertError(big, 413, 'PAYLOAD_TOO_LARGE');
    assert.equal(tooLarge.details.limit_bytes, 5 * 1024 * 1024);
    assertError(
      await p.rest('POST', `/v1/engine/workflows/${id}/execute`, { raw: JSON.stringify({ data: { blob: 'y'.repeat(7 * 1024 * 1024) } }) }),
      413,
      'PAYLOAD_TOO_LARGE',
    );
    assertError(await p.rest('POST', `/v1/engine/workflows/${id}/execute`, { body: { mode: 'later' } }), 400, 'validation_error');

    assertError(await p.rest('GET', '/v1/engine/workflows', { key: null }), 401, 'missing_authorization');
    const reader = await p.createKey({ service: 'engine', permissions: ['workflow:read'] });
    assert.match(reader.key, /^eng_live_/);
    assert.equal((await p.rest('GET', '/v1/engine/workflows', { key: reader.key })).status, 200);
    const denied = assertError(await p.rest('POST', `/v1/engine/workflows/${id}/execute`, { key: reader.key, body: {} }), 403, 'insufficient_permissions');
    assert.equal(denied.details.required, 'workflow:execute');
    const cpKey = await p.createKey({ permissions: ['workflow:read'] });
    assertError(await p.rest('GET', '/v1/engine/workflows', { key: cpKey.key }), 403, 'insufficient_permissions');
  });
});

describe('n8n import and the native interface (/engine/api/v1, X-ENGINE-API-KEY)', () => {
  test('an n8n export imported through /v1 and run through its webhook', async () => {
    const imported = await p.rest<V1<WorkflowSummary>>('POST', '/v1/engine/workflows/import', { body: { workflow: N8N_EXPORT } });
    assert.equal(imported.status, 201, JSON.stringify(imported.body));
    assert.deepEqual([imported.body.data.name, imported.body.data.nodes, imported.body.data.active], ['Order intake', 7, false]);
    const id = imported.body.data.workflowId;
    const hook = await p.rest('POST', '/v1/engine/webhooks', { body: { workflowId: id, path: '/orders', method: 'POST', responseMode: 'lastNode' } });
    assert.equal(hook.status, 201, JSON.stringify(hook.body));
    await p.rest('POST', `/v1/engine/workflows/${id}/activate`);
    const res = await fetch(`${p.url}/webhook/orders`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({ total: 150 }),
    });
    assert.equal(res.status, 202);
    assert.deepEqual(await res.json(), { label: 'HIGH', total: 150 });
    assert.equal((await p.rest<V1<Workflow>>('GET', `/v1/engine/workflows/${id}`)).body.data.webhookUrl, `${p.url}/webhook/orders`);
  });

  test('POST /workflows imports, PATCH {active}, GET, PUT, executions, DELETE with an engine key', async () => {
    const key = (await p.createKey({ service: 'engine', permissions: ['workflow:read', 'workflow:write', 'workflow:execute'] })).key;
    const native = <T>(method: string, path: string, body?: unknown) =>
      fetch(`${p.url}/engine/api/v1${path}`, {
        method,
        headers: { 'x-engine-api-key': key, ...(body !== undefined ? { 'content-type': 'application/json' } : {}) },
        body: body !== undefined ? JSON.stringify(body) : undefined,
      }).then((res) => answerOf<Platform<T>>(res));

    const created = await native<Workflow>('POST', '/workflows', { ...N8N_EXPORT, name: 'Native import' });
    assert.equal(created.status, 201, JSON.stringify(created.body));
    assert.match(created.body.metadata.request_id, /^req_/);
    const w = created.body.data;
    assert.equal(w.name, 'Native import');
    assert.equal(w.nodes[0].type, 'engine.webhook');
    const patched = await native<Workflow>('PATCH', `/workflows/${w.workflowId}`, { active: true });
    assert.equal(patched.status, 200);
    assert.deepEqual([patched.body.data.active, patched.body.data.version], [true, 2]);
    const put = await native<Workflow>('PUT', `/workflows/${w.workflowId}`, {
      id: w.workflowId,
      name: 'Renamed',
      versionId: 'ignored',
      nodes: [{ name: 'Start', type: 'engine.manualTrigger' }],
      connections: {},
    });
    assert.equal(put.status, 200, JSON.stringify(put.body));
    assert.deepEqual([put.body.data.name, put.body.data.nodes.length], ['Renamed', 1]);
    const got = await native<Workflow>('GET', `/workflows/${w.workflowId}`);
    assert.equal(got.body.data.name, 'Renamed');
    assert.ok((await native<WorkflowList>('GET', '/workflows')).body.data.workflows.some((x) => x.workflowId === w.workflowId));
    const ran = await native<Execution>('POST', `/workflows/${w.workflowId}/execute`, { mode: 'sync', data: { a: 1 } });
    assert.equal(ran.body.data.status, 'success');
    const execs = await native<ExecutionList>('GET', `/executions?workflowId=${w.workflowId}`);
    assert.equal(execs.body.data.executions.length, 1);
    assert.equal((await native('DELETE', `/workflows/${w.workflowId}`)).status, 200);

    const anonymous = await fetch(`${p.url}/engine/api/v1/workflows`);
    assert.equal(anonymous.status, 401);
    assert.equal((await jsonOf<{ error: { code: string } }>(anonymous)).error.code, 'missing_authorization');
  });
});

describe('subscription executionUpdated', () => {
  test('emits the whole execution on every status and progress change', async () => {
    const id = await createWorkflow(
      'Watched',
      chain([
        start,
        { name: 'Hold', type: 'engine.wait', parameters: { resume: 'webhook' } },
        { name: 'Slow call', type: 'engine.httpRequest', parameters: { url: `${upstreamUrl}/slow` }, timeout: 0.5, continueOnFail: true },
        { name: 'Done', type: 'engine.noOp' },
      ]),
    );
    const started = await execute(id);
    const waiting = await waitStatus(started.executionId, 'waiting');
    const client = wsClient(p.url, `Bearer ${p.adminKey}`);
    clients.push(client);
    const sub = subscribe<Gql<{ executionUpdated?: Execution }>>(
      client,
      'subscription($id: ID!) { executionUpdated(executionId: $id) { executionId workflowName status progress { nodesCompleted nodesTotal currentNode } } }',
      { id: started.executionId },
    );
    await sleep(300); // the subscription is set up
    await fetch(`${waiting.resumeUrl}`, { method: 'POST' });
    await sub.until((e) => e.data?.executionUpdated?.status === 'success', 10_000);
    const events = sub.events.map((e) => {
      assert.ok(e.data?.executionUpdated, JSON.stringify(e));
      return e.data.executionUpdated;
    });
    assert.ok(events.every((e) => e.executionId === started.executionId && e.workflowName === 'Watched'));
    assert.ok(
      events.some((e) => e.status === 'running' && e.progress.currentNode === 'Slow call'),
      JSON.stringify(events),
    );
    assert.deepEqual(events[events.length - 1].progress, { nodesCompleted: 4, nodesTotal: 4, currentNode: null });
    const nodes = events.map((e) => e.progress.nodesCompleted);
    assert.deepEqual(
      nodes,
      [...nodes].sort((a, b) => a - b),
      'progress only moves forward',
    );
  });
});

describe('restart', () => {
  test('a waiting execution resumes after the platform restarts; old executions are pruned', async () => {
    const id = await createWorkflow(
      'Patient',
      chain([
        start,
        { name: 'Before', type: 'engine.set', parameters: { values: { step: 'before' } } },
        { name: 'Nap', type: 'engine.wait', parameters: { seconds: 2 } },
        { name: 'After', type: 'engine.set', parameters: { values: { step: 'after', was: '{{ $node["Before"].json.step }}' } } },
      ]),
    );
    const started = await execute(id, { data: { n: 1 } });
    const waiting = await waitStatus(started.executionId, 'waiting');
    assert.ok(waiting.waitTill);
    for (let i = 0; i < 3; i++) await execute(id, { mode: 'sync', data: { filler: i } }); // these wait too
    const database = p.db;
    await p.stop({ keepDatabase: true });

    p = await startTestPlatform({ ...ENV, ENGINE_EXECUTION_MAX_COUNT: '2' }, { database, clock });
    try {
      clock.advance(2_000); // every Nap has ended
      const resumed = await waitStatus(started.executionId, 'success', 20_000);
      assert.deepEqual(resumed.result.items, [{ n: 1, step: 'after', was: 'before' }]);
      assert.deepEqual(
        resumed.nodeData.map((n) => n.nodeName),
        ['Start', 'Before', 'Nap', 'After'],
      );
      const logs = (await p.rest<V1<ExecutionLogs>>('GET', `/v1/engine/executions/${started.executionId}/logs`)).body.data.logs.map((l) => l.message);
      assert.ok(logs.includes('Resumed'), JSON.stringify(logs));

      // Pruning: keep at most ENGINE_EXECUTION_MAX_COUNT finished executions per workflow, none older than the max age.
      await waitFor(
        'the fillers to resume',
        async () => {
          const list = (await p.rest<V1<ExecutionList>>('GET', `/v1/engine/executions?workflowId=${id}&status=waiting`)).body.data;
          return list.pagination.total === 0 ? true : undefined;
        },
        20_000,
      );
      const other = await createWorkflow('Old one', chain([start]));
      const old = await execute(other, { mode: 'sync' });
      await p.platform.kernel.db.query(`UPDATE engine.executions SET finished_at = now() - interval '30 days' WHERE id = $1`, [old.executionId]);
      await p.platform.kernel.queue.enqueue('engine.maintenance', {});
      await waitFor('pruning', async () => {
        const list = (await p.rest<V1<ExecutionList>>('GET', `/v1/engine/executions?workflowId=${id}`)).body.data;
        const gone = (await p.rest('GET', `/v1/engine/executions/${old.executionId}`)).status === 404;
        return list.pagination.total === 2 && gone ? true : undefined;
      });
      const kept = (await p.rest<V1<ExecutionList>>('GET', `/v1/engine/executions?workflowId=${id}`)).body.data.executions.map((e) => e.executionId);
      assert.ok(!kept.includes(started.executionId), 'the oldest went first');
    } finally {
      await p.stop({ keepDatabase: true });
      await database.drop();
      p = undefined as unknown as TestPlatform;
    }
  });
});
