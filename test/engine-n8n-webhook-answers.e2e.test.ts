import assert from 'node:assert/strict';
import { randomBytes } from 'node:crypto';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import type { Gql, V1 } from './support/answers';
import type { Execution } from './support/engine-answers';
import { importN8n, n8nChain, type N8nNode } from './support/n8n-export';
import { startTestPlatform, type TestPlatform } from './support/platform';
import { s3BinaryEnv, startS3Server, type S3Server } from './support/s3-server';
import { untilValue } from './support/until';

/**
 * What a caller of an imported n8n workflow's webhook receives, as n8n answers it: the Webhook
 * trigger's own answer options (status, headers, text, no body; the last node's first item, one
 * of its fields, its file, every item, or nothing), files answered as they are read from the
 * binary store (here the filesystem), and a Wait resumed through its URL that answers with the
 * workflow's last node or its Respond to Webhook.
 */

let p: TestPlatform;
let dir: string;

beforeAll(async () => {
  dir = mkdtempSync(path.join(tmpdir(), 'webhook-answers-'));
  p = await startTestPlatform({ BINARY_DATA_MODE: 'filesystem', BINARY_DATA_DIR: dir });
});
afterAll(async () => {
  await p?.stop();
  rmSync(dir, { recursive: true, force: true });
});

/** A Code node that makes `items` (json only). */
const codeNode = (items: unknown[]): N8nNode => ({
  name: 'Code',
  type: 'n8n-nodes-base.code',
  typeVersion: 2,
  parameters: { jsCode: `return ${JSON.stringify(items)}.map((json) => ({ json }));` },
});

const webhookNode = (typeVersion: number, parameters: Record<string, unknown>): N8nNode => ({
  name: 'Webhook',
  type: 'n8n-nodes-base.webhook',
  typeVersion,
  webhookId: '7d6c2f0e-0000-4000-8000-0000000000aa',
  parameters: { httpMethod: 'POST', ...parameters },
});

/** Imports and activates the export, and registers its Webhook's path as a trigger answering `responseMode`. */
async function hooked(
  workflow: ReturnType<typeof n8nChain>,
  hookPath: string,
  responseMode: 'onReceived' | 'lastNode',
  platform: TestPlatform = p,
): Promise<string> {
  const id = await importN8n(platform, workflow);
  assert.equal((await platform.rest('POST', `/v1/engine/workflows/${id}/activate`)).status, 200);
  // Registrations are limited per key and minute: one key each.
  const { key } = await platform.createKey({ service: 'engine', permissions: ['workflow:read', 'workflow:write'] });
  const res = await platform.rest('POST', '/v1/engine/webhooks', { key, body: { workflowId: id, method: 'POST', path: hookPath, responseMode } });
  assert.equal(res.status, 201, JSON.stringify(res.body));
  return id;
}

async function call(url: string, body: Buffer | string, type = 'application/json') {
  const res = await fetch(url, { method: 'POST', headers: { 'content-type': type }, body });
  const bytes = Buffer.from(await res.arrayBuffer());
  return { status: res.status, headers: res.headers, bytes, text: bytes.toString('utf8') };
}

const hook = (hookPath: string, body: Buffer | string = '{"order":{"id":42}}', type?: string) => call(`${p.url}/webhook/${hookPath}`, body, type);

/** The answer is `file`, byte for byte, as `type`, with its length. */
function assertFileAnswer(answer: Awaited<ReturnType<typeof call>>, file: Buffer, type: string) {
  assert.equal(answer.status, 200, answer.text.slice(0, 300));
  assert.equal(answer.headers.get('content-type'), type);
  assert.equal(answer.headers.get('content-length'), String(file.length));
  assert.ok(answer.bytes.equals(file), 'the bytes arrive as they were sent');
}

describe('the Webhook trigger’s own answer', () => {
  test('onReceived, version 1: responseCode, options.responseData and options.responseHeaders.entries', async () => {
    await hooked(
      n8nChain('Answer v1', [
        webhookNode(1, {
          path: 'answers-v1',
          responseCode: 202,
          options: { responseData: 'thanks, received', responseHeaders: { entries: [{ name: 'X-Receipt', value: 'r-1' }] } },
        }),
        codeNode([{ ok: true }]),
      ]),
      'answers-v1',
      'onReceived',
    );
    const answer = await hook('answers-v1');
    assert.equal(answer.status, 202, answer.text);
    assert.equal(answer.text, 'thanks, received');
    assert.equal(answer.headers.get('x-receipt'), 'r-1');
  });

  test('onReceived, version 2: options.responseCode.values with a custom code, and noResponseBody', async () => {
    await hooked(
      n8nChain('Answer v2', [
        webhookNode(2, { path: 'answers-v2', options: { responseCode: { values: { responseCode: 'customCode', customCode: 299 } }, noResponseBody: true } }),
        codeNode([{ ok: true }]),
      ]),
      'answers-v2',
      'onReceived',
    );
    const answer = await hook('answers-v2');
    assert.equal(answer.status, 299);
    assert.equal(answer.bytes.length, 0);
  });

  test('lastNode, version 2.1: the first item’s field (responsePropertyName) with the selected code', async () => {
    await hooked(
      n8nChain('Answer field', [
        webhookNode(2.1, {
          path: 'answers-field',
          responseMode: 'lastNode',
          options: { responseCode: { values: { responseCode: 201 } }, responsePropertyName: 'order' },
        }),
        codeNode([{ order: { id: 42, lines: 3 } }, { order: { id: 43 } }]),
      ]),
      'answers-field',
      'lastNode',
    );
    const answer = await hook('answers-field');
    assert.equal(answer.status, 201, answer.text);
    assert.match(answer.headers.get('content-type') ?? '', /^application\/json/);
    assert.deepEqual(JSON.parse(answer.text), { id: 42, lines: 3 });
  });

  test('lastNode: responseContentType sends the first item’s field as that type, byte for byte', async () => {
    const xml = '<order id="42"><lines>3</lines></order>';
    await hooked(
      n8nChain('Answer xml', [
        webhookNode(2, { path: 'answers-xml', responseMode: 'lastNode', options: { responsePropertyName: 'xml', responseContentType: 'application/xml' } }),
        codeNode([{ xml }]),
      ]),
      'answers-xml',
      'lastNode',
    );
    const answer = await hook('answers-xml');
    assert.equal(answer.status, 200);
    assert.equal(answer.headers.get('content-type'), 'application/xml');
    assert.equal(answer.text, xml);
  });

  test('lastNode: allEntries answers every item’s json; noData answers no body, with the headers', async () => {
    await hooked(
      n8nChain('Answer all', [webhookNode(1.1, { path: 'answers-all', responseMode: 'lastNode', responseData: 'allEntries' }), codeNode([{ n: 1 }, { n: 2 }])]),
      'answers-all',
      'lastNode',
    );
    const all = await hook('answers-all');
    assert.equal(all.status, 200);
    assert.deepEqual(JSON.parse(all.text), [{ n: 1 }, { n: 2 }]);

    await hooked(
      n8nChain('Answer none', [
        webhookNode(2, {
          path: 'answers-none',
          responseMode: 'lastNode',
          responseData: 'noData',
          options: { responseHeaders: { entries: [{ name: 'x-done', value: 'yes' }] } },
        }),
        codeNode([{ n: 1 }]),
      ]),
      'answers-none',
      'lastNode',
    );
    const none = await hook('answers-none');
    assert.equal(none.status, 200);
    assert.equal(none.bytes.length, 0);
    assert.equal(none.headers.get('x-done'), 'yes');
  });

  test('lastNode, firstEntryBinary: a 1.5 MB upload answered back from the binary store, intact, with its type and length', async () => {
    await hooked(
      n8nChain('Answer file', [
        webhookNode(1, {
          path: 'answers-file',
          binaryData: true,
          responseMode: 'lastNode',
          responseData: 'firstEntryBinary',
          responseBinaryPropertyName: 'data',
        }),
        { name: 'Pass', type: 'n8n-nodes-base.noOp', typeVersion: 1 },
      ]),
      'answers-file',
      'lastNode',
    );
    const file = Buffer.concat([Buffer.from('%PDF-1.4\n'), randomBytes(1_500_000)]);
    assertFileAnswer(await hook('answers-file', file, 'application/pdf'), file, 'application/pdf');
  });

  test('an uploaded file goes through If and Filter with its item, as in n8n, and is answered back', async () => {
    const passes = {
      conditions: {
        combinator: 'and',
        conditions: [{ leftValue: '={{ $binary.data.mimeType }}', rightValue: 'pdf', operator: { type: 'string', operation: 'contains' } }],
      },
    };
    await hooked(
      n8nChain('File through If', [
        webhookNode(1, { path: 'answers-if-file', binaryData: true, responseMode: 'lastNode', responseData: 'firstEntryBinary' }),
        { name: 'If', type: 'n8n-nodes-base.if', typeVersion: 2, parameters: passes },
        { name: 'Filter', type: 'n8n-nodes-base.filter', typeVersion: 2, parameters: passes },
      ]),
      'answers-if-file',
      'lastNode',
    );
    const file = Buffer.concat([Buffer.from('%PDF-1.4\n'), randomBytes(2_000)]);
    // The file the If and the Filter passed on.
    assertFileAnswer(await hook('answers-if-file', file, 'application/pdf'), file, 'application/pdf');
  });

  test('lastNode, firstEntryBinary without that file: n8n’s error, 500', async () => {
    await hooked(
      n8nChain('Answer no file', [
        webhookNode(2, { path: 'answers-no-file', responseMode: 'lastNode', responseData: 'firstEntryBinary', responseBinaryPropertyName: 'report' }),
        codeNode([{ n: 1 }]),
      ]),
      'answers-no-file',
      'lastNode',
    );
    const answer = await hook('answers-no-file');
    assert.equal(answer.status, 500);
    const body = JSON.parse(answer.text) as { success: boolean; error: { message: string } };
    assert.equal(body.success, false);
    assert.match(body.error.message, /binary property "report" which should be returned does not exist/);
  });

  test('rawBody: a JSON body is parsed and its bytes are the file data as well', async () => {
    const id = await hooked(
      n8nChain('Answer raw', [
        webhookNode(2, { path: 'answers-raw', responseMode: 'lastNode', responseData: 'firstEntryBinary', options: { rawBody: true } }),
        { name: 'Pass', type: 'n8n-nodes-base.noOp', typeVersion: 1 },
      ]),
      'answers-raw',
      'lastNode',
    );
    const raw = '{ "order": { "id": 42 } }';
    const answer = await hook('answers-raw', raw);
    assert.equal(answer.status, 200, answer.text);
    assert.equal(answer.headers.get('content-type'), 'application/json');
    assert.equal(answer.text, raw, 'the body as it came, spaces and all');
    const runs = await p.rest<V1<{ executions: Execution<{ body: unknown }>[] }>>('GET', `/v1/engine/executions?workflowId=${id}`);
    const run = await p.rest<V1<Execution<{ body: unknown }>>>('GET', `/v1/engine/executions/${runs.body.data.executions[0]!.executionId}`);
    assert.deepEqual(run.body.data.result.items[0]!.body, { order: { id: 42 } }, 'and parsed for the workflow');
  });

  test('Respond to Webhook, binary: a 1.2 MB file streamed to the caller with its type and length', async () => {
    await hooked(
      n8nChain('Respond file', [
        webhookNode(1, { path: 'respond-file', binaryData: true, responseMode: 'responseNode' }),
        { name: 'Respond to Webhook', type: 'n8n-nodes-base.respondToWebhook', typeVersion: 1.1, parameters: { respondWith: 'binary', options: {} } },
      ]),
      'respond-file',
      'lastNode',
    );
    const file = randomBytes(1_200_000);
    assertFileAnswer(await hook('respond-file', file, 'image/png'), file, 'image/png');

    // The same answer as the receiveWebhook operation's GraphQL value: the bytes in base64.
    const small = randomBytes(3_000);
    const res = await p.graphql<Gql<{ receiveWebhook: { status: number; headers: Record<string, string>; body: string; bodyEncoding: string } }>>(
      `mutation ($request: WorkflowWebhookRequestInput!) { receiveWebhook(request: $request) { status headers body bodyEncoding } }`,
      { request: { path: 'respond-file', method: 'POST', headers: { 'content-type': 'image/png' }, body: small.toString('base64'), bodyEncoding: 'base64' } },
      null,
    );
    assert.equal(res.body.errors, undefined, JSON.stringify(res.body.errors));
    const reply = res.body.data!.receiveWebhook;
    assert.deepEqual([reply.status, reply.headers['content-type'], reply.bodyEncoding], [200, 'image/png', 'base64']);
    assert.ok(Buffer.from(reply.body, 'base64').equals(small), 'the bytes, base64-encoded');
  });
});

describe('a Wait resumed by its URL answers from the workflow', () => {
  const execution = async (id: string) => (await p.rest<V1<Execution>>('GET', `/v1/engine/executions/${id}`)).body.data;
  const waiting = (id: string) =>
    untilValue(
      `execution ${id} to wait`,
      () => execution(id),
      (e) => e.status === 'waiting',
      { timeoutMs: 20_000, everyMs: 100 },
    );

  /** Imports the export, starts it, and answers its execution once the Wait waits for its URL. */
  async function started(workflow: ReturnType<typeof n8nChain>): Promise<Execution> {
    const id = await importN8n(p, workflow);
    assert.equal((await p.rest('POST', `/v1/engine/workflows/${id}/activate`)).status, 200);
    const run = await p.rest<V1<{ executionId: string }>>('POST', `/v1/engine/workflows/${id}/execute`, { body: { data: { order: 7 } } });
    assert.equal(run.status, 200, JSON.stringify(run.body));
    return waiting(run.body.data.executionId);
  }

  const approved: N8nNode = {
    name: 'Edit Fields',
    type: 'n8n-nodes-base.set',
    typeVersion: 3.4,
    parameters: {
      assignments: { assignments: [{ id: '1', name: 'approved', value: '={{ $json.body.approved }}', type: 'boolean' }] },
      options: {},
    },
  };

  test('responseMode lastNode: the resume call’s answer is the last node’s output once the rest has run', async () => {
    const wait = await started(
      n8nChain('Resume last node', [
        { name: 'Start', type: 'n8n-nodes-base.manualTrigger', typeVersion: 1 },
        {
          name: 'Wait',
          type: 'n8n-nodes-base.wait',
          typeVersion: 1.1,
          webhookId: 'w1',
          parameters: { resume: 'webhook', httpMethod: 'POST', responseMode: 'lastNode', responseData: 'allEntries', options: {} },
        },
        approved,
      ]),
    );
    const answer = await call(wait.resumeUrl, '{"approved":true}');
    assert.equal(answer.status, 200, answer.text);
    assert.deepEqual(JSON.parse(answer.text), [{ approved: true }]);
    assert.equal((await execution(wait.executionId)).status, 'success', 'the run had finished when the caller got its answer');
  });

  test('responseMode responseNode: the resume call’s answer is the Respond to Webhook’s', async () => {
    const wait = await started(
      n8nChain('Resume respond', [
        { name: 'Start', type: 'n8n-nodes-base.manualTrigger', typeVersion: 1 },
        {
          name: 'Wait',
          type: 'n8n-nodes-base.wait',
          typeVersion: 1.1,
          webhookId: 'w2',
          parameters: { resume: 'webhook', httpMethod: 'POST', responseMode: 'responseNode', options: {} },
        },
        approved,
        {
          name: 'Respond to Webhook',
          type: 'n8n-nodes-base.respondToWebhook',
          typeVersion: 1.1,
          parameters: {
            respondWith: 'json',
            responseBody: '={{ { "approved": $json.approved, "by": "workflow" } }}',
            options: { responseCode: 201, responseHeaders: { entries: [{ name: 'x-step', value: 'respond' }] } },
          },
        },
      ]),
    );
    const answer = await call(wait.resumeUrl, '{"approved":false}');
    assert.equal(answer.status, 201, answer.text);
    assert.equal(answer.headers.get('x-step'), 'respond');
    assert.deepEqual(JSON.parse(answer.text), { approved: false, by: 'workflow' });
    const done = await untilValue(
      `execution ${wait.executionId} to finish`,
      () => execution(wait.executionId),
      (e) => e.status !== 'running',
      { timeoutMs: 20_000, everyMs: 100 },
    );
    assert.equal(done.status, 'success');
  });
});

describe('files answered from an S3 bucket (BINARY_DATA_MODE=s3)', () => {
  let sp: TestPlatform;
  let s3: S3Server;
  beforeAll(async () => {
    s3 = await startS3Server();
    sp = await startTestPlatform({ ...s3BinaryEnv(s3), OUTBOUND_ALLOW_PRIVATE_NETWORKS: 'true' });
  });
  afterAll(async () => {
    await sp?.stop();
    await s3?.close();
  });

  test('lastNode firstEntryBinary and Respond to Webhook binary: the caller has the first bytes while the bucket still holds the rest', async () => {
    await hooked(
      n8nChain('S3 last node file', [
        webhookNode(1, { path: 's3-last', binaryData: true, responseMode: 'lastNode', responseData: 'firstEntryBinary' }),
        { name: 'Pass', type: 'n8n-nodes-base.noOp', typeVersion: 1 },
      ]),
      's3-last',
      'lastNode',
      sp,
    );
    await hooked(
      n8nChain('S3 respond file', [
        webhookNode(1, { path: 's3-respond', binaryData: true, responseMode: 'responseNode' }),
        { name: 'Respond to Webhook', type: 'n8n-nodes-base.respondToWebhook', typeVersion: 1.1, parameters: { respondWith: 'binary', options: {} } },
      ]),
      's3-respond',
      'lastNode',
      sp,
    );
    const held = 256 * 1024;
    for (const hookPath of ['s3-last', 's3-respond']) {
      const file = randomBytes(1_100_000);
      const gate = s3.holdGets(held);
      const res = await fetch(`${sp.url}/webhook/${hookPath}`, { method: 'POST', headers: { 'content-type': 'application/zip' }, body: file });
      assert.equal(res.status, 200, hookPath);
      assert.equal(res.headers.get('content-type'), 'application/zip');
      assert.equal(res.headers.get('content-length'), String(file.length));
      const reader = res.body!.getReader();
      const chunks: Buffer[] = [];
      let got = 0;
      while (got < held) {
        const { value, done } = await reader.read();
        if (done) break;
        chunks.push(Buffer.from(value));
        got += value.length;
      }
      assert.equal(got, held, `${hookPath}: the bytes the bucket has sent so far, and no more, have reached the caller`);
      gate.release();
      for (;;) {
        const { value, done } = await reader.read();
        if (done) break;
        chunks.push(Buffer.from(value));
      }
      assert.ok(Buffer.concat(chunks).equals(file), `${hookPath}: the bytes arrive as they were sent`);
    }
    assert.deepEqual(s3.refused, []);
  });
});
