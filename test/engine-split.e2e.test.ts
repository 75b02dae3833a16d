import assert from 'node:assert/strict';
import type { V1 } from './support/answers';
import { randomBytes } from 'node:crypto';
import { jsonOf } from './support/json';
import { n8nChain } from './support/n8n-export';
import { startSplitTopology, type SplitTopology } from './support/split';
import { readUntil } from './support/until';

/**
 * The engine in its own process, the gateway (REST and the /webhook/<path> surface) in another:
 * without the engine in the gateway's process, an inbound webhook reaches the trigger as the
 * engine's public `receiveWebhook` operation over the signed subgraph hand-off, with the same
 * answers, authentication and request log as when the engine answers it in-process.
 */
let split: SplitTopology;

const call = <T>(method: string, p: string, body?: unknown) => split.call<T>(method, p, body);

beforeAll(async () => {
  split = await startSplitTopology({}, 'engine');
});

afterAll(async () => {
  await split?.stop();
});

describe('inbound webhooks with the engine in another process', () => {
  test('lastNode answers with the workflow’s result; a wrong secret is 403 and logged as rejected', async () => {
    const wf = await call<V1<{ workflowId: string }>>('POST', '/v1/engine/workflows', {
      name: 'Remote intake',
      active: true,
      nodes: [
        { name: 'Hook', type: 'engine.webhook' },
        { name: 'Shape', type: 'engine.set', parameters: { values: { order: '{{ $json.body.order }}', via: 'remote engine' } } },
      ],
      connections: { Hook: { main: [[{ node: 'Shape', type: 'main', index: 0 }]] } },
    });
    assert.equal(wf.status, 201, JSON.stringify(wf.body));
    const hook = await call<V1<{ webhookId: string; id?: string }>>('POST', '/v1/engine/webhooks', {
      workflowId: wf.body.data.workflowId,
      method: 'POST',
      path: '/remote/orders',
      responseMode: 'lastNode',
      authentication: { type: 'apiKey', apiKeyHeader: 'X-Hook-Key', apiKeyValue: 'right-key' },
    });
    assert.equal(hook.status, 201, JSON.stringify(hook.body));
    const send = (key: string) =>
      fetch(`${split.gatewayUrl}/webhook/remote/orders`, {
        method: 'POST',
        headers: { 'content-type': 'application/json', 'x-hook-key': key },
        body: JSON.stringify({ order: 7 }),
      });
    const ok = await send('right-key');
    assert.equal(ok.status, 200);
    const answer = await jsonOf<{ order: number; via: string; body: unknown; headers: Record<string, string> }>(ok);
    assert.deepEqual([answer.order, answer.via, answer.body, answer.headers['x-hook-key']], [7, 'remote engine', { order: 7 }, '[redacted]']);
    const wrong = await send('wrong-key');
    assert.equal(wrong.status, 403);
    assert.equal((await jsonOf<{ success: boolean }>(wrong)).success, false);
    const logs = await call<V1<{ logs: { status: string }[] }>>('GET', `/v1/engine/webhooks/${hook.body.data.webhookId ?? hook.body.data.id}/logs`);
    assert.equal(logs.status, 200, JSON.stringify(logs.body));
    const statuses = logs.body.data.logs.map((l) => l.status).sort();
    assert.deepEqual(statuses, ['rejected', 'success']);
  });

  test('a file answered by the remote engine reaches the caller byte for byte, with its type and length', async () => {
    const workflow = n8nChain('Remote file', [
      {
        name: 'Webhook',
        type: 'n8n-nodes-base.webhook',
        typeVersion: 1,
        webhookId: '7d6c2f0e-0000-4000-8000-0000000000bb',
        parameters: { httpMethod: 'POST', path: 'remote-file', binaryData: true, responseMode: 'responseNode' },
      },
      { name: 'Respond to Webhook', type: 'n8n-nodes-base.respondToWebhook', typeVersion: 1.1, parameters: { respondWith: 'binary', options: {} } },
    ]);
    const imported = await call<V1<{ workflowId: string }>>('POST', '/v1/engine/workflows/import', { workflow });
    assert.equal(imported.status, 201, JSON.stringify(imported.body));
    assert.equal((await call('POST', `/v1/engine/workflows/${imported.body.data.workflowId}/activate`)).status, 200);
    const hook = await call('POST', '/v1/engine/webhooks', {
      workflowId: imported.body.data.workflowId,
      method: 'POST',
      path: 'remote-file',
      responseMode: 'lastNode',
    });
    assert.equal(hook.status, 201, JSON.stringify(hook.body));
    const file = randomBytes(700_000);
    const res = await fetch(`${split.gatewayUrl}/webhook/remote-file`, { method: 'POST', headers: { 'content-type': 'image/png' }, body: file });
    const bytes = Buffer.from(await res.arrayBuffer());
    assert.equal(res.status, 200, bytes.toString('utf8', 0, 300));
    assert.equal(res.headers.get('content-type'), 'image/png');
    assert.equal(res.headers.get('content-length'), String(file.length));
    assert.ok(bytes.equals(file), 'the bytes arrive as they were sent');
  });

  test('a body over 5 MB is 413 PAYLOAD_TOO_LARGE from the gateway, and the remote engine logs the request as rejected', async () => {
    const wf = await call<V1<{ workflowId: string }>>('POST', '/v1/engine/workflows', {
      name: 'Remote limit',
      active: true,
      nodes: [{ name: 'Hook', type: 'engine.webhook' }],
      connections: {},
    });
    const hook = await call<V1<{ webhookId: string; id?: string }>>('POST', '/v1/engine/webhooks', {
      workflowId: wf.body.data.workflowId,
      method: 'POST',
      path: '/remote/limit',
    });
    assert.equal(hook.status, 201, JSON.stringify(hook.body));
    const res = await fetch(`${split.gatewayUrl}/webhook/remote/limit`, {
      method: 'POST',
      headers: { 'content-type': 'application/octet-stream' },
      body: Buffer.alloc(5 * 1024 * 1024 + 1),
    });
    assert.equal(res.status, 413);
    assert.equal((await jsonOf<{ error: { code: string } }>(res)).error.code, 'PAYLOAD_TOO_LARGE');
    const logs = await call<V1<{ logs: { status: string; reason?: string | null }[] }>>(
      'GET',
      `/v1/engine/webhooks/${hook.body.data.webhookId ?? hook.body.data.id}/logs`,
    );
    assert.deepEqual(
      logs.body.data.logs.map((l) => l.status),
      ['rejected'],
    );
  });

  test('the engine’s server answers handed-over requests only from a gateway: unsigned or forged ones are 401', async () => {
    const description = Buffer.from(
      JSON.stringify({ path: 'remote-file', method: 'POST', headers: {}, query: {}, sourceIp: '10.0.0.1', requestId: 'r', iat: Date.now() }),
    );
    const handOver = (signature?: string) =>
      fetch(`${split.subgraphUrl}/doors/webhook`, {
        method: 'POST',
        headers: {
          'content-type': 'application/octet-stream',
          'x-door-meta-length': String(description.length),
          ...(signature ? { 'x-platform-signature': signature } : {}),
        },
        body: Buffer.concat([description, Buffer.from('{}')]),
      });
    for (const res of [await handOver(), await handOver('ab'.repeat(32))]) {
      assert.equal(res.status, 401);
      const body = await jsonOf<{ success: boolean; error: { code: string } }>(res);
      assert.deepEqual([body.success, body.error.code], [false, 'unauthorized']);
    }
  });

  test('a trigger removed through one gateway stops answering at once in another that cached it', async () => {
    const second = await split.addGateway(); // the engine in its own process here: its trigger cache
    const wf = await call<V1<{ workflowId: string }>>('POST', '/v1/engine/workflows', {
      name: 'Cached intake',
      active: true,
      nodes: [
        { name: 'Hook', type: 'engine.webhook' },
        { name: 'Done', type: 'engine.set', parameters: { values: { ok: true } } },
      ],
      connections: { Hook: { main: [[{ node: 'Done', type: 'main', index: 0 }]] } },
    });
    const hook = await call<V1<{ webhookId: string; id?: string }>>('POST', '/v1/engine/webhooks', {
      workflowId: wf.body.data.workflowId,
      method: 'POST',
      path: '/cached/path',
      responseMode: 'lastNode',
    });
    assert.equal(hook.status, 201, JSON.stringify(hook.body));
    const send = () => fetch(`${second}/webhook/cached/path`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: '{}' });
    assert.equal((await send()).status, 200);
    assert.equal((await send()).status, 200, 'served from the second gateway’s cache');
    const removed = await call('DELETE', `/v1/engine/webhooks/${hook.body.data.webhookId ?? hook.body.data.id}`);
    assert.equal(removed.status, 200, JSON.stringify(removed.body));
    // The change travels as a PostgreSQL notification; the cache would otherwise keep the trigger for 10 s.
    // A request in the few milliseconds between the commit and the notification's arrival may still
    // start from the cached trigger and fail (its execution row refers to a deleted trigger): the
    // path must answer 404 well within the deadline, not merely stop answering 200.
    const status = await readUntil(
      async () => (await send()).status,
      (s) => s === 404,
      { timeoutMs: 2_000, everyMs: 50 },
    );
    assert.equal(status, 404);
  });
});
