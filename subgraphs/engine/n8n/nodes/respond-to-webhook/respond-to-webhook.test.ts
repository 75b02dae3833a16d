import assert from 'node:assert/strict';
import { disposeHarness, importRefusal, runWorkflow, type Json } from '../../../../../test/support/n8n-harness';
import { prepareBinary, type NodeContext, WebhookFile } from '../../../nodes';
import { respondToWebhook } from './respond-to-webhook';

/** n8n's Respond to Webhook: the answer it gives (status, headers, body), each respondWith. What a client receives is tested end to end (test/engine-n8n-flow.e2e.test.ts). */

afterAll(() => disposeHarness());

const ITEMS = [
  { id: 1, name: 'a' },
  { id: 2, name: 'b' },
];

/** The answer of a Respond to Webhook fed ITEMS, and the items it passes on. */
async function respond(parameters: Json, typeVersion = 1.1) {
  const run = await runWorkflow(
    {
      nodes: [
        { name: 'Webhook', type: 'n8n-nodes-base.webhook', typeVersion: 2, position: [0, 0], parameters: { path: 'p', responseMode: 'responseNode' } },
        { name: 'Respond', type: 'n8n-nodes-base.respondToWebhook', typeVersion, position: [200, 0], parameters },
        {
          name: 'Again',
          type: 'n8n-nodes-base.respondToWebhook',
          typeVersion,
          position: [400, 0],
          parameters: { respondWith: 'noData', options: { responseCode: 204 } },
        },
      ],
      connections: { Webhook: { main: [[{ node: 'Respond', type: 'main', index: 0 }]] }, Respond: { main: [[{ node: 'Again', type: 'main', index: 0 }]] } },
      settings: { executionOrder: 'v1' },
    },
    { mode: 'webhook', input: ITEMS },
  );
  if (run.error) throw new Error(run.error.message);
  return { replies: run.replies, passed: run.nodes.get('Respond')![0] };
}

test('firstIncomingItem (the default) and allIncomingItems, under a responseKey in dot notation; the second node to run is ignored', async () => {
  const first = await respond({});
  assert.deepEqual(first.replies, [{ status: 200, headers: {}, body: { id: 1, name: 'a' } }]);
  assert.deepEqual(first.passed, ITEMS);
  assert.deepEqual((await respond({ respondWith: 'allIncomingItems' })).replies[0]!.body, ITEMS);
  assert.deepEqual((await respond({ respondWith: 'allIncomingItems', options: { responseKey: 'data.items' } })).replies[0]!.body, { data: { items: ITEMS } });
  assert.deepEqual((await respond({ options: { responseKey: 'first' } }, 1)).replies[0]!.body, { first: { id: 1, name: 'a' } });
});

test('json, text (HTML in a sandbox unless told otherwise), noData, redirect; code and headers from the options', async () => {
  const json = await respond({ respondWith: 'json', responseBody: '={{ { "count": $input.all().length } }}', options: { responseCode: 201 } });
  assert.deepEqual(json.replies[0], { status: 201, headers: {}, body: { count: 2 } });
  assert.deepEqual((await respond({ respondWith: 'json', responseBody: '{"ok": true}' })).replies[0]!.body, { ok: true });
  const text = await respond({ respondWith: 'text', responseBody: '=<b>{{ $json.name }}</b>' });
  assert.deepEqual(text.replies[0], {
    status: 200,
    headers: { 'content-type': 'text/html; charset=utf-8', 'content-security-policy': 'sandbox' },
    body: '<b>a</b>',
  });
  const plain = await respond({
    respondWith: 'text',
    responseBody: 'hi',
    options: {
      responseHeaders: {
        entries: [
          { name: 'Content-Type', value: 'text/plain' },
          { name: 'X-Id', value: '=id-{{ $json.id }}' },
        ],
      },
    },
  });
  assert.deepEqual(plain.replies[0]!.headers, { 'content-type': 'text/plain', 'x-id': 'id-1', 'content-security-policy': 'sandbox' });
  assert.deepEqual((await respond({ respondWith: 'noData', options: { responseCode: 204 } })).replies[0], { status: 204, headers: {}, body: '' });
  assert.deepEqual((await respond({ respondWith: 'redirect', redirectURL: '=https://example.com/{{ $json.id }}' })).replies[0], {
    status: 307,
    headers: { location: 'https://example.com/1' },
    body: '',
  });
  assert.equal((await respond({ respondWith: 'redirect', redirectURL: 'https://example.com', options: { responseCode: 302 } })).replies[0]!.status, 302);
  await assert.rejects(respond({ respondWith: 'json', responseBody: '{nope' }), /Invalid JSON in 'Response Body' field/);
});

/** The node run directly on items that carry files (the harness pins json only). */
async function binaryReply(parameters: Json, binary?: Record<string, ReturnType<typeof prepareBinary>>) {
  const items = [{ json: {}, ...(binary ? { binary } : {}) }];
  const ctx = { items, inputs: [items], parameters: async () => [parameters] } as unknown as NodeContext;
  return (await respondToWebhook.execute(ctx)).reply!;
}

/** The bytes of a file answer, as the HTTP answer reads them. */
async function bytesOf(body: unknown): Promise<Buffer> {
  assert.ok(body instanceof WebhookFile, 'a file answer is read as it is sent');
  const chunks: Buffer[] = [];
  for await (const chunk of await body.open()) chunks.push(chunk as Buffer);
  assert.equal(Buffer.concat(chunks).length, body.bytes);
  return Buffer.concat(chunks);
}

test('binary: the first item’s file, its first field or the one named; none is n8n’s error', async () => {
  const report = prepareBinary(Buffer.from('%PDF-1.4 report'), { fileName: 'report.pdf' });
  const logo = prepareBinary(Buffer.from([0x89, 0x50, 0x4e, 0x47]), { fileName: 'logo.png' });
  const auto = await binaryReply({ respondWith: 'binary' }, { file: report, logo });
  assert.equal(auto.status, 200);
  assert.deepEqual(auto.headers, { 'content-type': 'application/pdf', 'content-disposition': 'attachment; filename="report.pdf"' });
  assert.deepEqual(await bytesOf(auto.body), Buffer.from('%PDF-1.4 report'));
  const named = await binaryReply({ respondWith: 'binary', responseDataSource: 'set', inputFieldName: 'logo' }, { file: report, logo });
  assert.equal(named.headers['content-type'], 'image/png');
  assert.deepEqual(await bytesOf(named.body), Buffer.from([0x89, 0x50, 0x4e, 0x47]));
  await assert.rejects(binaryReply({ respondWith: 'binary', responseDataSource: 'set', inputFieldName: 'data' }, { file: report }), /no binary field "data"/);
  await assert.rejects(binaryReply({ respondWith: 'binary' }), /No binary data exists on the first item!/);
});

test('jwt and unknown answers are refused at import; versions 1 to 1.4 are accepted', () => {
  const refused = (parameters: Json, typeVersion = 1.1) => importRefusal({ type: 'n8n-nodes-base.respondToWebhook', typeVersion, parameters });
  assert.match(refused({ respondWith: 'jwt' })!.message, /JWT credential/);
  assert.match(refused({ respondWith: 'xml' })!.message, /not one of/);
  for (const v of [1, 1.1, 1.2, 1.3, 1.4]) assert.equal(refused({ respondWith: 'noData' }, v), undefined);
});
