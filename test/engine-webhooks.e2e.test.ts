import assert from 'node:assert/strict';
import { createHmac, randomUUID } from 'node:crypto';
import { grouped } from '../kernel/db/grouped';
import { insertFinished, type FinishedRun } from '../subgraphs/engine/executions/writes.store';
import type { WorkflowVersion } from '../subgraphs/engine/workflows/service';
import type { Gql, V1 } from './support/answers';
import type { Execution, ExecutionLogs, Item, Page, Workflow } from './support/engine-answers';
import { startTestPlatform, type TestPlatform } from './support/platform';
import { untilValue } from './support/until';

/** Webhook triggers: registration, every authentication mode, inbound requests on /webhook/<path>, logs, statistics. */

let p: TestPlatform;
let workflowId: string;
let failingWorkflowId: string;
let replyWorkflowId: string;

beforeAll(async () => {
  p = await startTestPlatform();
  workflowId = await workflow('Intake', [
    { name: 'Hook', type: 'engine.webhook' },
    { name: 'Note', type: 'engine.set', parameters: { values: { seen: '{{ $json.body.order }}' } } },
  ]);
  failingWorkflowId = await workflow('Fails', [
    { name: 'Hook', type: 'engine.webhook' },
    { name: 'Boom', type: 'engine.code', parameters: { code: 'throw new Error("out of stock")' } },
  ]);
  replyWorkflowId = await workflow('Replies', [
    { name: 'Hook', type: 'engine.webhook' },
    {
      name: 'Reply',
      type: 'engine.respondToWebhook',
      parameters: { statusCode: 201, headers: { 'Content-Type': 'text/plain', 'X-Order': '{{ $json.body.order }}' }, body: 'accepted {{ $json.body.order }}' },
    },
    { name: 'Later', type: 'engine.noOp' },
  ]);
});
afterAll(async () => {
  await p?.stop();
});

async function workflow(name: string, nodes: Record<string, unknown>[], active = true): Promise<string> {
  const connections: Record<string, unknown> = {};
  for (let i = 0; i < nodes.length - 1; i++) connections[nodes[i]!.name as string] = { main: [[{ node: nodes[i + 1]!.name, type: 'main', index: 0 }]] };
  const res = await p.rest<V1<Workflow>>('POST', '/v1/engine/workflows', { body: { name, nodes, connections, active } });
  assert.equal(res.status, 201, JSON.stringify(res.body));
  return res.body.data.workflowId;
}

/** A webhook trigger as /v1/engine/webhooks answers it, in the fields the tests read. */
interface Webhook {
  webhookId: string;
  workflowId: string;
  workflowName: string;
  path: string;
  url: string;
  method: string;
  responseMode: string;
  active: boolean;
  authentication: Record<string, unknown>;
  rateLimit: unknown;
  updatedAt: string;
  deletedAt: string;
  totalRequests: number;
  statistics: {
    totalRequests: number;
    successfulRequests: number;
    failedRequests: number;
    rejectedRequests: number;
    lastTriggered: string | null;
    averageResponseTime: number;
  };
}

/** What /v1/engine/webhooks/{id}/test answers. */
interface TestAnswer {
  webhookResponse: { status: number };
  testExecutionId: string | null;
  workflowResult: { status: string; duration: number } | null;
}

/** One request in a webhook's log. */
interface RequestLog {
  status: string;
  reason: string | null;
  statusCode: number;
  method: string;
  sourceIp: string;
  responseTime: number;
  executionId: string | null;
  timestamp: string;
}

/** Registrations are limited to 10 a minute per key: each registration here uses a fresh engine key. */
async function register(body: Record<string, unknown>) {
  const { key } = await p.createKey({ service: 'engine', permissions: ['workflow:read', 'workflow:write'] });
  return p.rest<V1<Webhook>>('POST', '/v1/engine/webhooks', { key, body: { workflowId, method: 'POST', ...body } });
}

async function registered(body: Record<string, unknown>) {
  const res = await register(body);
  assert.equal(res.status, 201, JSON.stringify(res.body));
  return res.body.data;
}

/** A webhook answer's JSON body in the fields the tests read: the workflow's answer or the error envelope. */
interface HookAnswer {
  success?: boolean;
  message?: string;
  executionId: string;
  seen?: unknown;
  body?: unknown;
  bodyEncoding?: string;
  error: { code: string; message: string; details: { node?: string; executionId?: string; reason?: string } };
}

/** Sends to the webhook; `body` is the answer's JSON object (empty when the answer is not one) and `text` the raw answer. */
async function send(path: string, opts: { method?: string; headers?: Record<string, string>; body?: string | Buffer; json?: unknown } = {}) {
  const headers: Record<string, string> = { ...opts.headers };
  let body = opts.body;
  if (opts.json !== undefined) {
    body = JSON.stringify(opts.json);
    headers['content-type'] ??= 'application/json';
  }
  const res = await fetch(`${p.url}/webhook/${path.replace(/^\//, '')}`, { method: opts.method ?? 'POST', headers, body });
  const text = await res.text();
  let parsed: unknown;
  try {
    parsed = JSON.parse(text);
  } catch {
    // not JSON
  }
  const answer = (typeof parsed === 'object' && parsed !== null ? parsed : {}) as HookAnswer;
  return { status: res.status, headers: res.headers, text, body: answer };
}

async function logs(webhookId: string, query = '') {
  const res = await p.rest<V1<{ webhookId: string; logs: RequestLog[]; pagination: Page }>>('GET', `/v1/engine/webhooks/${webhookId}/logs${query}`);
  assert.equal(res.status, 200, JSON.stringify(res.body));
  return res.body.data;
}

/** A node's item in these workflows: the webhook's request (the trigger) or what the nodes after it made. */
type HookItem = Item & { headers: Record<string, string> };

const executionOf = (executionId: string) =>
  untilValue(
    `execution ${executionId} to finish`,
    async () => (await p.rest<V1<Execution<Item, HookItem>>>('GET', `/v1/engine/executions/${executionId}?includeData=true`)).body.data,
    (e) => e.status !== 'running',
    { timeoutMs: 15_000, everyMs: 100 },
  );

const secretColumns = async (id: string) =>
  (await p.platform.kernel.db.query(`SELECT auth_config, secret_hash, secret_enc FROM engine.webhook_triggers WHERE id = $1`, [id]))[0];

describe('inbound webhooks by authentication mode', () => {
  test('none: onReceived answers 200 {success, executionId, message}; the request is the start item', async () => {
    const hook = await registered({ path: '/orders/new' });
    assert.deepEqual(
      {
        path: hook.path,
        url: hook.url,
        method: hook.method,
        responseMode: hook.responseMode,
        active: hook.active,
        authentication: hook.authentication,
        workflowName: hook.workflowName,
      },
      {
        path: '/orders/new',
        url: `${p.url}/webhook/orders/new`,
        method: 'POST',
        responseMode: 'onReceived',
        active: true,
        authentication: { type: 'none' },
        workflowName: 'Intake',
      },
    );
    const res = await send('orders/new?source=shop', { json: { order: 42 } });
    assert.equal(res.status, 200, JSON.stringify(res.body));
    assert.equal(res.body.success, true);
    assert.equal(res.body.message, 'Workflow was started');
    const e = await executionOf(res.body.executionId);
    assert.equal(e.status, 'success');
    const item = e.nodeData[0].output.main[0][0].json;
    assert.deepEqual(
      { body: item.body, query: item.query, method: item.method, path: item.path },
      { body: { order: 42 }, query: { source: 'shop' }, method: 'POST', path: '/orders/new' },
    );
    assert.equal(item.headers['content-type'], 'application/json');
    assert.equal(e.result.items[0].seen, 42);
  });

  test('path parameters: /webhook/orders/:orderId gives the workflow $json.params; an exact path wins; a same-shape pattern is refused', async () => {
    const hook = await registered({ path: '/shop/:shopId/orders/:orderId' });
    assert.equal(hook.path, '/shop/:shopId/orders/:orderId');
    const res = await send('shop/s%201/orders/A-7?x=1', { json: { total: 3 } });
    assert.equal(res.status, 200, JSON.stringify(res.body));
    const item = (await executionOf(res.body.executionId)).nodeData[0].output.main[0][0].json;
    assert.deepEqual(item.params, { shopId: 's 1', orderId: 'A-7' });
    assert.equal(item.path, '/shop/:shopId/orders/:orderId');
    assert.deepEqual(item.query, { x: '1' });

    // An exact path of the same length is matched before the pattern, and its item has no params.
    await registered({ path: '/shop/main/orders/latest' });
    const exact = await send('shop/main/orders/latest', { json: {} });
    const exactItem = (await executionOf(exact.body.executionId)).nodeData[0].output.main[0][0].json;
    assert.deepEqual(exactItem.params, {});
    assert.equal(exactItem.path, '/shop/main/orders/latest');
    // Another method on the exact path falls back to a pattern of that method.
    await registered({ path: '/shop/:shop/orders/:id', method: 'PUT' });
    const put = await send('shop/main/orders/latest', { method: 'PUT', json: {} });
    assert.equal(put.status, 200, JSON.stringify(put.body));
    assert.deepEqual((await executionOf(put.body.executionId)).nodeData[0].output.main[0][0].json.params, { shop: 'main', id: 'latest' });

    const sameShape = await register({ path: '/shop/:s/orders/:o' });
    assert.equal(sameShape.status, 409, JSON.stringify(sameShape.body));
    assert.equal(sameShape.body.error.code, 'resource_already_exists');
    const badName = await register({ path: '/shop/:1st' });
    assert.equal(badName.status, 400);
    assert.equal(badName.body.error.details.reason, 'invalid_parameter');
    for (const escaping of ['/a/../b', '/../outside', '/a/./b']) {
      const res = await register({ path: escaping });
      assert.equal(res.status, 400, escaping);
      assert.equal(res.body.error.details.reason, 'path_escapes_prefix');
    }
    assert.equal((await register({ path: '/a/%2e%2e/b' })).body.error.details.reason, 'invalid_path', 'encoded dots are not path characters');
    const twice = await register({ path: '/a/:id/b/:id' });
    assert.equal(twice.body.error.details.reason, 'duplicate_parameter');
    assert.equal((await send('shop/s1/orders', { json: {} })).status, 404, 'a path of another length matches no pattern');
  });

  test('apiKey: missing 401, wrong 403, right 200; the key is stored as a digest, never returned, redacted from run data', async () => {
    const hook = await registered({ path: 'keyed', authentication: { type: 'apiKey', apiKeyHeader: 'X-Shop-Key', apiKeyValue: 'shop-secret-123' } });
    assert.deepEqual(hook.authentication, { type: 'apiKey', apiKeyHeader: 'X-Shop-Key' });
    const missing = await send('keyed', { json: {} });
    assert.equal(missing.status, 401);
    assert.equal(missing.body.error.code, 'unauthorized');
    const wrong = await send('keyed', { json: {}, headers: { 'x-shop-key': 'shop-secret-124' } });
    assert.equal(wrong.status, 403);
    assert.equal(wrong.body.error.code, 'forbidden');
    const right = await send('keyed', { json: { order: 1 }, headers: { 'X-Shop-Key': 'shop-secret-123' } });
    assert.equal(right.status, 200, JSON.stringify(right.body));
    const e = await executionOf(right.body.executionId);
    assert.equal(e.nodeData[0].output.main[0][0].json.headers['x-shop-key'], '[redacted]');
    const stored = await secretColumns(hook.webhookId);
    assert.equal(stored.secret_hash.length, 32);
    assert.ok(!JSON.stringify(stored).includes('shop-secret-123'));
    const again = (await p.rest<V1<Webhook>>('GET', `/v1/engine/webhooks/${hook.webhookId}`)).body;
    assert.ok(!JSON.stringify(again).includes('shop-secret-123'));
  });

  test('hmac: hex HMAC-SHA256 of the raw body, with or without sha256=; missing 401; wrong or tampered 403; secret encrypted', async () => {
    const secret = 'whsec_0123456789abcdef';
    const hook = await registered({ path: 'signed', authentication: { type: 'hmac', hmacSecret: secret, hmacHeader: 'X-Hub-Signature-256' } });
    assert.deepEqual(hook.authentication, { type: 'hmac', hmacHeader: 'X-Hub-Signature-256', hmacAlgorithm: 'sha256' });
    const raw = '{"order":7,  "note":"spacing matters"}';
    const sig = createHmac('sha256', secret).update(raw).digest('hex');
    const ct = { 'content-type': 'application/json' };
    assert.equal((await send('signed', { body: raw, headers: { ...ct, 'x-hub-signature-256': `sha256=${sig}` } })).status, 200);
    assert.equal((await send('signed', { body: raw, headers: { ...ct, 'x-hub-signature-256': sig.toUpperCase() } })).status, 200);
    const missing = await send('signed', { body: raw, headers: ct });
    assert.equal(missing.status, 401);
    const tampered = await send('signed', { body: raw.replace('7', '8'), headers: { ...ct, 'x-hub-signature-256': `sha256=${sig}` } });
    assert.equal(tampered.status, 403);
    assert.equal((await send('signed', { body: raw, headers: { ...ct, 'x-hub-signature-256': 'sha256=abc' } })).status, 403);
    const stored = await secretColumns(hook.webhookId);
    assert.equal(stored.secret_hash, null);
    assert.ok(stored.secret_enc.length > 28);
    assert.ok(!stored.secret_enc.toString('utf8').includes(secret));
    const rejected = (await logs(hook.webhookId, '?status=rejected')).logs.map((l) => [l.reason, l.statusCode]);
    assert.deepEqual(rejected, [
      ['invalid_signature', 403],
      ['invalid_signature', 403],
      ['missing_signature', 401],
    ]);

    const sha512 = await registered({ path: 'signed-512', authentication: { type: 'hmac', hmacSecret: secret, hmacAlgorithm: 'sha512' } });
    const sig512 = createHmac('sha512', secret).update(raw).digest('hex');
    assert.equal((await send('signed-512', { body: raw, headers: { ...ct, 'x-signature': `sha512=${sig512}` } })).status, 200);
    assert.equal((await send('signed-512', { body: raw, headers: { ...ct, 'x-signature': sig } })).status, 403);
    void sha512;
  });

  test('basic: 401 with WWW-Authenticate, wrong user or password 403, right 200', async () => {
    const hook = await registered({ path: 'basic', authentication: { type: 'basic', username: 'shop', password: 'correct horse' } });
    assert.deepEqual(hook.authentication, { type: 'basic', username: 'shop' });
    const basic = (u: string, pw: string) => ({ authorization: `Basic ${Buffer.from(`${u}:${pw}`).toString('base64')}` });
    const missing = await send('basic', { json: {} });
    assert.equal(missing.status, 401);
    assert.equal(missing.headers.get('www-authenticate'), 'Basic realm="webhook"');
    assert.equal((await send('basic', { json: {}, headers: basic('shop', 'wrong horse') })).status, 403);
    assert.equal((await send('basic', { json: {}, headers: basic('shopx', 'correct horse') })).status, 403);
    const ok = await send('basic', { json: { order: 3 }, headers: basic('shop', 'correct horse') });
    assert.equal(ok.status, 200);
    const e = await executionOf(ok.body.executionId);
    assert.equal(e.nodeData[0].output.main[0][0].json.headers.authorization, '[redacted]');
  });

  test('oauth (bearer token): 401, 403, 200', async () => {
    await registered({ path: 'bearer', method: 'PUT', authentication: { type: 'oauth', token: 'tok_0123456789abcdef' } });
    const missing = await send('bearer', { method: 'PUT', json: {} });
    assert.equal(missing.status, 401);
    assert.equal(missing.headers.get('www-authenticate'), 'Bearer realm="webhook"');
    assert.equal((await send('bearer', { method: 'PUT', json: {}, headers: { authorization: 'Bearer tok_0123456789abcdeX' } })).status, 403);
    assert.equal((await send('bearer', { method: 'PUT', json: {}, headers: { authorization: 'Bearer tok_0123456789abcdef' } })).status, 200);
  });
});

describe('answers, limits and logs', () => {
  test('lastNode: respondToWebhook shapes the answer; without it the last node’s first item; a failed run is 500 EXECUTION_FAILED', async () => {
    await registered({ workflowId: replyWorkflowId, path: 'reply', responseMode: 'lastNode' });
    const res = await send('reply', { json: { order: 'A-1' } });
    assert.equal(res.status, 201);
    assert.equal(res.headers.get('x-order'), 'A-1');
    assert.match(res.headers.get('content-type')!, /^text\/plain/);
    assert.equal(res.text, 'accepted A-1');

    await registered({ path: 'last', responseMode: 'lastNode' });
    const last = await send('last', { json: { order: 5 } });
    assert.equal(last.status, 200);
    assert.equal(last.body.seen, 5);
    assert.deepEqual(last.body.body, { order: 5 });

    const failing = await registered({ workflowId: failingWorkflowId, path: 'fails', responseMode: 'lastNode' });
    const failed = await send('fails', { json: {} });
    assert.equal(failed.status, 500);
    assert.equal(failed.body.error.code, 'EXECUTION_FAILED');
    assert.match(failed.body.error.message, /out of stock/);
    assert.equal(failed.body.error.details.node, 'Boom');
    const [entry] = (await logs(failing.webhookId)).logs;
    assert.deepEqual(
      [entry.status, entry.reason, entry.statusCode, entry.executionId],
      ['failed', 'execution_failed', 500, failed.body.error.details.executionId],
    );
  });

  test('a burst of requests finishing together: each answer is its own run, stored with its own node data, logs and request log', async () => {
    const hook = await registered({ path: 'burst', responseMode: 'lastNode' });
    const orders = Array.from({ length: 30 }, (_, i) => `B-${i}`);
    const answers = await Promise.all(orders.map((order) => send('burst', { json: { order } })));
    assert.deepEqual(
      answers.map((a) => [a.status, a.body.seen]),
      orders.map((order) => [200, order]),
    );
    const entries = (await logs(hook.webhookId, '?limit=100')).logs;
    assert.equal(entries.length, orders.length);
    assert.ok(entries.every((e) => e.status === 'success' && e.statusCode === 200));
    const executionIds = new Set(entries.map((e) => e.executionId));
    assert.equal(executionIds.size, orders.length);
    const seen: string[] = [];
    for (const id of executionIds) {
      const run = (await p.rest<V1<Execution>>('GET', `/v1/engine/executions/${id}?includeData=true`)).body.data;
      assert.equal(run.status, 'success');
      const [hookNode, note] = run.nodeData;
      assert.deepEqual([hookNode.nodeName, note.nodeName], ['Hook', 'Note']);
      const order = (hookNode.output.main[0][0].json.body as { order: string }).order;
      assert.equal(note.output.main[0][0].json.seen, order, 'the node rows of one run');
      const lines = (await p.rest<V1<ExecutionLogs>>('GET', `/v1/engine/executions/${id}/logs`)).body.data.logs.map((l) => l.message);
      assert.equal(lines.at(-1), 'Execution succeeded (2 nodes run)');
      seen.push(order);
    }
    assert.deepEqual(seen.sort(), [...orders].sort());
  });

  test('a group of finished runs with one whose workflow is gone: the others are stored whole, that one answers null', async () => {
    const write = grouped((runs: readonly FinishedRun[]) => insertFinished(p.platform.kernel.db, runs));
    const run = (workflow: string, n: number): FinishedRun => ({
      ctx: {
        id: randomUUID(),
        version: { workflowId: workflow, version: 1, definition: { nodes: [{}, {}] } } as unknown as WorkflowVersion,
        mode: 'webhook',
        input: [{ json: { n } }],
        startNode: null,
        runAs: null,
        startedAt: new Date(),
        stored: false,
        meta: { originalExecutionId: null, parentExecutionId: null, webhookId: null },
      },
      pending: {
        rows: [
          {
            node: 'Hook',
            type: 'engine.webhook',
            runIndex: 0,
            json: JSON.stringify({
              node_name: 'Hook',
              seq: 0,
              node_type: 'engine.webhook',
              status: 'success',
              started_at: new Date().toISOString(),
              duration_ms: 1,
              tries: 1,
              output: { n },
            }),
          },
        ],
        logs: [{ at: new Date(), level: 'info', message: `run ${n}` }],
        since: 0,
        clear: [],
      },
      set: { nodes_completed: 2, current_node: null, status: 'success', result: { n } },
    });
    const runs = [run(workflowId, 1), run(randomUUID(), 2), run(workflowId, 3)];
    const rows = await Promise.all(runs.map(write));
    assert.deepEqual(
      rows.map((r) => r && [r.id, r.status]),
      [[runs[0]!.ctx.id, 'success'], null, [runs[2]!.ctx.id, 'success']],
    );
    for (const [i, r] of runs.entries()) {
      const stored = await p.rest<V1<Execution>>('GET', `/v1/engine/executions/${r.ctx.id}?includeData=true`);
      if (i === 1) {
        assert.equal(stored.status, 404);
        continue;
      }
      assert.deepEqual(
        stored.body.data.nodeData.map((n) => n.output),
        [{ main: { n: i + 1 } }],
      );
      const lines = (await p.rest<V1<ExecutionLogs>>('GET', `/v1/engine/executions/${r.ctx.id}/logs`)).body.data.logs.map((l) => l.message);
      assert.deepEqual(lines, [`run ${i + 1}`]);
    }
  });

  test('logs: success, failed, rejected with reason, sourceIp and responseTime; statistics; status filter and limit', async () => {
    const hook = await registered({ path: 'counted', authentication: { type: 'apiKey', apiKeyValue: 'counted-key-1' } });
    await send('counted', { json: {}, headers: { 'x-api-key': 'counted-key-1' } });
    await send('counted', { json: {}, headers: { 'x-api-key': 'counted-key-1' } });
    await send('counted', { json: {} });
    const page = await logs(hook.webhookId);
    assert.equal(page.webhookId, hook.webhookId);
    assert.deepEqual(
      page.logs.map((l) => l.status),
      ['rejected', 'success', 'success'],
    );
    const [rejected, success] = page.logs;
    assert.deepEqual([rejected.reason, rejected.statusCode, rejected.method], ['missing_credentials', 401, 'POST']);
    assert.ok(rejected.sourceIp);
    assert.ok(typeof success.responseTime === 'number' && success.executionId);
    assert.ok(success.timestamp);
    assert.deepEqual((await logs(hook.webhookId, '?status=success&limit=1')).pagination, { total: 2, limit: 1, offset: 0, hasMore: true });
    assert.equal((await p.rest('GET', `/v1/engine/webhooks/${hook.webhookId}/logs?limit=501`)).status, 400);
    const stats = (await p.rest<V1<Webhook>>('GET', `/v1/engine/webhooks/${hook.webhookId}`)).body.data.statistics;
    assert.deepEqual([stats.totalRequests, stats.successfulRequests, stats.failedRequests, stats.rejectedRequests], [3, 2, 1, 1]);
    assert.ok(stats.lastTriggered && stats.averageResponseTime >= 0);
    const listed = (await p.rest<V1<{ webhooks: Webhook[]; pagination: Page }>>('GET', `/v1/engine/webhooks?workflowId=${workflowId}&limit=100`)).body.data;
    const item = listed.webhooks.find((w) => w.webhookId === hook.webhookId)!;
    assert.deepEqual(Object.keys(item).sort(), [
      'active',
      'lastTriggered',
      'method',
      'path',
      'responseMode',
      'totalRequests',
      'url',
      'webhookId',
      'workflowId',
    ]);
    assert.equal(item.totalRequests, 3);
  });

  test('the trigger’s rate limit: 429 with Retry-After past maxRequests, logged as rejected', async () => {
    const hook = await registered({ path: 'limited', rateLimit: { windowMs: 60_000, maxRequests: 2, keyBy: 'ip' } });
    assert.deepEqual(hook.rateLimit, { windowMs: 60_000, maxRequests: 2, keyBy: 'ip' });
    assert.equal((await send('limited', { json: {} })).status, 200);
    assert.equal((await send('limited', { json: {} })).status, 200);
    const limited = await send('limited', { json: {} });
    assert.equal(limited.status, 429);
    assert.equal(limited.body.error.code, 'RATE_LIMIT_EXCEEDED');
    assert.ok(Number(limited.headers.get('retry-after')) >= 1);
    assert.equal((await logs(hook.webhookId)).logs[0].reason, 'rate_limited');
  });

  test('only active workflows start: 409 WORKFLOW_INACTIVE; inactive trigger or unknown path 404; wrong method 405', async () => {
    const sleepy = await workflow('Sleepy', [{ name: 'Hook', type: 'engine.webhook' }], false);
    const hook = await registered({ workflowId: sleepy, path: 'sleepy' });
    const inactive = await send('sleepy', { json: {} });
    assert.equal(inactive.status, 409);
    assert.equal(inactive.body.error.code, 'WORKFLOW_INACTIVE');
    assert.equal((await logs(hook.webhookId)).logs[0].reason, 'workflow_inactive');
    await p.rest('POST', `/v1/engine/workflows/${sleepy}/activate`);
    assert.equal((await send('sleepy', { json: {} })).status, 200);

    const off = await p.rest<V1<Webhook>>('PUT', `/v1/engine/webhooks/${hook.webhookId}`, { body: { active: false } });
    assert.equal(off.status, 200);
    assert.equal(off.body.data.active, false);
    assert.equal((await send('sleepy', { json: {} })).status, 404);
    const unknown = await send('nothing/here', { json: {} });
    assert.equal(unknown.status, 404);
    assert.equal(unknown.body.error.code, 'resource_not_found');
    const wrongMethod = await send('sleepy', { method: 'GET' });
    assert.equal(wrongMethod.status, 405);
    assert.equal(wrongMethod.headers.get('allow'), 'POST');
  });

  test('any content type; PAYLOAD_TOO_LARGE past 5 MB', async () => {
    await registered({ path: 'anything', responseMode: 'lastNode' });
    const form = await send('anything', { body: 'order=9&tag=a&tag=b', headers: { 'content-type': 'application/x-www-form-urlencoded' } });
    assert.deepEqual(form.body.body, { order: '9', tag: ['a', 'b'] });
    const text = await send('anything', { body: 'plain words', headers: { 'content-type': 'text/plain' } });
    assert.equal(text.body.body, 'plain words');
    const binary = await send('anything', { body: Buffer.from([0, 1, 2, 255]), headers: { 'content-type': 'application/octet-stream' } });
    assert.deepEqual([binary.body.body, binary.body.bodyEncoding], [Buffer.from([0, 1, 2, 255]).toString('base64'), 'base64']);
    const none = await send('anything', {});
    assert.deepEqual(none.body.body, {});
    const badJson = await send('anything', { body: '{nope', headers: { 'content-type': 'application/json' } });
    assert.equal(badJson.status, 400);
    assert.equal(badJson.body.error.code, 'invalid_json');

    const hook = await registered({ path: 'big' });
    const big = await send('big', { body: Buffer.alloc(5 * 1024 * 1024 + 1, 97), headers: { 'content-type': 'text/plain' } });
    assert.equal(big.status, 413);
    assert.equal(big.body.error.code, 'PAYLOAD_TOO_LARGE');
    assert.equal((await logs(hook.webhookId)).logs[0].reason, 'payload_too_large');
    const justUnder = await send('big', { body: Buffer.alloc(5 * 1024 * 1024, 97), headers: { 'content-type': 'text/plain' } });
    assert.equal(justUnder.status, 200);
  });
});

describe('webhook trigger management (/v1/engine/webhooks)', () => {
  test('get, list, update, delete; secrets never returned', async () => {
    const hook = await registered({ path: 'managed', authentication: { type: 'apiKey', apiKeyValue: 'managed-key-1' } });
    const got = await p.rest<V1<Webhook>>('GET', `/v1/engine/webhooks/${hook.webhookId}`);
    assert.equal(got.status, 200);
    assert.deepEqual(got.body.data.authentication, { type: 'apiKey', apiKeyHeader: 'X-API-Key' });
    assert.ok(!JSON.stringify(got.body).includes('managed-key-1'));

    const updated = await p.rest<V1<Webhook>>('PUT', `/v1/engine/webhooks/${hook.webhookId}`, {
      body: { authentication: { type: 'apiKey', apiKeyHeader: 'X-Other' } },
    });
    assert.equal(updated.status, 200, JSON.stringify(updated.body));
    assert.equal(updated.body.data.webhookId, hook.webhookId);
    assert.ok(updated.body.data.updatedAt);
    assert.equal((await send('managed', { json: {}, headers: { 'x-other': 'managed-key-1' } })).status, 200, 'same type without a secret keeps the secret');
    await p.rest<V1<Webhook>>('PUT', `/v1/engine/webhooks/${hook.webhookId}`, { body: { authentication: { type: 'none' } } });
    assert.equal((await send('managed', { json: {} })).status, 200);
    assert.equal((await secretColumns(hook.webhookId)).secret_hash, null);

    const listed = await p.rest<V1<{ webhooks: Webhook[]; pagination: Page }>>('GET', '/v1/engine/webhooks?active=true&limit=2');
    assert.equal(listed.body.data.webhooks.length, 2);
    assert.equal(listed.body.data.pagination.limit, 2);

    const deleted = await p.rest<V1<Webhook>>('DELETE', `/v1/engine/webhooks/${hook.webhookId}`);
    assert.deepEqual([deleted.status, deleted.body.data.webhookId], [200, hook.webhookId]);
    assert.ok(deleted.body.data.deletedAt);
    assert.equal((await p.rest<V1<Webhook>>('GET', `/v1/engine/webhooks/${hook.webhookId}`)).status, 404);
    assert.equal((await send('managed', { json: {} })).status, 404);
  });

  test('WEBHOOK_INVALID, duplicates, WORKFLOW_NOT_FOUND, and at most 10 registrations a minute per key', async () => {
    const invalid = async (body: Record<string, unknown>, field: string) => {
      const res = await register(body);
      assert.equal(res.status, 400, JSON.stringify(res.body));
      assert.equal(res.body.error.code, 'WEBHOOK_INVALID');
      assert.equal(res.body.error.details.field, field);
    };
    await invalid({ path: 'a b' }, 'path');
    await invalid({ path: '/resume/x' }, 'path');
    await invalid({ path: 'x1', method: 'TRACE' }, 'method');
    await invalid({ path: 'x2', authentication: { type: 'hmac' } }, 'authentication.hmacSecret');
    await invalid({ path: 'x3', authentication: { type: 'magic' } }, 'authentication.type');
    await invalid({ path: 'x4', authentication: { type: 'apiKey', apiKeyValue: 'short' } }, 'authentication.apiKeyValue');
    await invalid({ path: 'x5', rateLimit: { windowMs: 10, maxRequests: 1 } }, 'rateLimit.windowMs');
    await invalid({ path: 'x6', responseMode: 'whenever' }, 'responseMode');
    await registered({ path: 'twice' });
    const dup = await register({ path: '/twice/' });
    assert.equal(dup.status, 409);
    assert.equal(dup.body.error.code, 'resource_already_exists');
    assert.equal((await register({ path: 'other-method', method: 'PUT' })).status, 201);
    const missing = await register({ workflowId: '00000000-0000-4000-8000-000000000000', path: 'orphan' });
    assert.equal(missing.status, 404);
    assert.equal(missing.body.error.code, 'WORKFLOW_NOT_FOUND');

    const { key } = await p.createKey({ service: 'engine', permissions: ['workflow:write'] });
    for (let i = 0; i < 10; i++) {
      const res = await p.rest<V1<Webhook>>('POST', '/v1/engine/webhooks', { key, body: { workflowId, method: 'POST', path: `burst/${i}` } });
      assert.equal(res.status, 201, JSON.stringify(res.body));
    }
    const eleventh = await p.rest<V1<Webhook>>('POST', '/v1/engine/webhooks', { key, body: { workflowId, method: 'POST', path: 'burst/10' } });
    assert.equal(eleventh.status, 429);
    assert.equal(eleventh.body.error.code, 'RATE_LIMIT_EXCEEDED');
  });

  test('test: runs the trigger’s path with made-up data and headers, even for an inactive workflow', async () => {
    const sleepy = await workflow(
      'Dormant',
      [
        { name: 'Hook', type: 'engine.webhook' },
        { name: 'Echo', type: 'engine.set', parameters: { values: { got: '{{ $json.body.x }}' } } },
      ],
      false,
    );
    const hook = await registered({ workflowId: sleepy, path: 'tested', authentication: { type: 'apiKey', apiKeyValue: 'tested-key-1' } });
    const ok = await p.rest<V1<TestAnswer>>('POST', `/v1/engine/webhooks/${hook.webhookId}/test`, {
      body: { data: { x: 1 }, headers: { 'X-API-Key': 'tested-key-1' } },
    });
    assert.equal(ok.status, 200, JSON.stringify(ok.body));
    assert.equal(ok.body.data.webhookResponse.status, 200);
    assert.equal(ok.body.data.workflowResult?.status, 'success');
    assert.equal(typeof ok.body.data.workflowResult?.duration, 'number');
    const e = (await p.rest<V1<Execution>>('GET', `/v1/engine/executions/${ok.body.data.testExecutionId}`)).body.data;
    assert.deepEqual([e.mode, e.result.items[0].got], ['test', 1]);
    const denied = await p.rest<V1<TestAnswer>>('POST', `/v1/engine/webhooks/${hook.webhookId}/test`, { body: { data: {} } });
    assert.equal(denied.body.data.webhookResponse.status, 401);
    assert.equal(denied.body.data.testExecutionId, null);
    assert.equal(denied.body.data.workflowResult, null);
    const stats = (await p.rest<V1<Webhook>>('GET', `/v1/engine/webhooks/${hook.webhookId}`)).body.data.statistics;
    assert.equal(stats.totalRequests, 0, 'tests are not counted');
    assert.equal((await logs(hook.webhookId)).logs.length, 2, 'but they are logged');
  });

  test('receiveWebhook is the only thing callable without a key, and only does what a trigger allows', async () => {
    await registered({ path: 'graphql-way', responseMode: 'lastNode' });
    const res = await p.graphql<Gql<{ receiveWebhook: { status: number; body: { seen: unknown } } }>>(
      'mutation($r: WorkflowWebhookRequestInput!) { receiveWebhook(request: $r) { status body } }',
      { r: { path: 'graphql-way', method: 'POST', headers: { 'content-type': 'application/json' }, body: Buffer.from('{"order":77}').toString('base64') } },
      null,
    );
    assert.equal(res.status, 200, JSON.stringify(res.body));
    assert.equal(res.body.data.receiveWebhook.status, 200);
    assert.equal(res.body.data.receiveWebhook.body.seen, 77);
    const refused = await p.graphql<Gql<unknown>>('{ workflows { pagination { total } } }', {}, null);
    assert.equal(refused.body.errors?.[0].extensions.code, 'missing_authorization');
  });
});
