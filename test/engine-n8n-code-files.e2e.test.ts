import assert from 'node:assert/strict';
import type { V1 } from './support/answers';
import { importN8n, n8nChain, type N8nNode } from './support/n8n-export';
import { startTestPlatform, type TestPlatform } from './support/platform';
import { untilValue } from './support/until';

/**
 * Files in n8n workflows imported from exports and run natively: a Code node reading an uploaded
 * file's bytes and returning new files (stored as other nodes' files, under the binary budget), a
 * Wait node's resume URL taking n8n's webhook options, and files sent to it (multipart, raw body).
 */

let p: TestPlatform;
beforeAll(async () => {
  p = await startTestPlatform({ BINARY_DATA_MAX_BYTES: '200000' });
});
afterAll(async () => {
  await p?.stop();
});

interface StoredFile {
  id: string;
  url: string;
  fileName?: string;
  mimeType: string;
  bytes: number;
  data: string;
}
interface OutputItem {
  json: Record<string, unknown>;
  binary?: Record<string, StoredFile>;
}
interface Execution {
  executionId: string;
  status: string;
  resumeUrl: string | null;
  progress: { currentNode: string | null };
  error: { code: string; node?: string; message: string; details: Record<string, unknown> } | null;
  nodeData: { nodeName: string; output: { main: OutputItem[][] } }[];
}

async function importActive(workflow: unknown): Promise<string> {
  const id = await importN8n(p, workflow);
  assert.equal((await p.rest('POST', `/v1/engine/workflows/${id}/activate`)).status, 200);
  return id;
}

/** A multipart/form-data body as a browser sends it. */
function form(parts: ({ name: string; value: string } | { name: string; fileName: string; type: string; bytes: Buffer })[]) {
  const boundary = '----files-e2e-9a2c';
  const chunks: Buffer[] = [];
  for (const part of parts) {
    if ('value' in part) chunks.push(Buffer.from(`--${boundary}\r\nContent-Disposition: form-data; name="${part.name}"\r\n\r\n${part.value}\r\n`));
    else {
      chunks.push(
        Buffer.from(`--${boundary}\r\nContent-Disposition: form-data; name="${part.name}"; filename="${part.fileName}"\r\nContent-Type: ${part.type}\r\n\r\n`),
      );
      chunks.push(part.bytes, Buffer.from('\r\n'));
    }
  }
  chunks.push(Buffer.from(`--${boundary}--\r\n`));
  return { body: Buffer.concat(chunks), type: `multipart/form-data; boundary=${boundary}` };
}

const execution = async (id: string): Promise<Execution> => {
  const res = await p.rest<V1<Execution>>('GET', `/v1/engine/executions/${id}?includeData=true`);
  assert.equal(res.status, 200, JSON.stringify(res.body));
  return res.body.data;
};
const whenStatus = (id: string, status: string) =>
  untilValue(
    `execution ${id} to be ${status}`,
    () => execution(id),
    (e) => e.status === status,
    { timeoutMs: 30_000, everyMs: 100 },
  );

function output(e: Execution, node: string): OutputItem[] {
  const run = e.nodeData.find((n) => n.nodeName === node);
  assert.ok(run, `${node} ran: ${e.nodeData.map((n) => n.nodeName).join(', ')}`);
  return run.output.main[0]!;
}

async function download(url: string): Promise<Buffer> {
  const res = await fetch(`${p.url}${url}`, { headers: { authorization: `Bearer ${p.adminKey}` } });
  assert.equal(res.status, 200);
  return Buffer.from(await res.arrayBuffer());
}

/** Starts the workflow (manual run, queued) and answers the execution once it waits. */
async function startWaiting(workflowId: string): Promise<Execution> {
  const started = await p.rest<V1<{ executionId: string }>>('POST', `/v1/engine/workflows/${workflowId}/execute`, { body: { data: {} } });
  assert.equal(started.status, 200, JSON.stringify(started.body));
  const waiting = await whenStatus(started.body.data.executionId, 'waiting');
  assert.ok(waiting.resumeUrl, 'a waiting execution has its resume URL');
  return waiting;
}

const CSV = Buffer.from('a,b\n1,2\n');

describe('n8n Code node and files', () => {
  test('an uploaded file: the code reads its bytes, returns it unchanged and a new file; both are stored and downloaded', async () => {
    const code = `const bytes = await this.helpers.getBinaryDataBuffer(0, 'sheet');
const withHeader = 'x,y\\n' + bytes.toString();
return [{
  json: { size: bytes.length, name: $input.first().binary.sheet.fileName },
  binary: { sheet: $input.first().binary.sheet, edited: await this.helpers.prepareBinaryData(withHeader, 'edited.csv') },
}];`;
    const id = await importActive(
      n8nChain('Code files', [
        {
          name: 'Webhook',
          type: 'n8n-nodes-base.webhook',
          typeVersion: 2,
          webhookId: '0d3f6a1e-0000-4000-8000-000000000101',
          parameters: { httpMethod: 'POST', path: 'code-files', options: {} },
        },
        { name: 'Code', type: 'n8n-nodes-base.code', typeVersion: 2, parameters: { jsCode: code } },
      ]),
    );
    const hook = await p.rest('POST', '/v1/engine/webhooks', { body: { workflowId: id, method: 'POST', path: 'code-files' } });
    assert.equal(hook.status, 201, JSON.stringify(hook.body));
    const upload = form([{ name: 'sheet', fileName: 'in.csv', type: 'text/csv', bytes: CSV }]);
    const res = await fetch(`${p.url}/webhook/code-files`, { method: 'POST', headers: { 'content-type': upload.type }, body: upload.body });
    const answer = (await res.json()) as { executionId: string };
    assert.equal(res.status, 200, JSON.stringify(answer));

    const done = await whenStatus(answer.executionId, 'success');
    const [uploaded] = output(done, 'Webhook');
    const [item] = output(done, 'Code');
    assert.deepEqual(item!.json, { size: CSV.length, name: 'in.csv' });
    assert.equal(item!.binary!.sheet!.id, uploaded!.binary!.sheet!.id, 'the file passed on is the uploaded one, not stored again');
    const edited = item!.binary!.edited!;
    assert.equal(edited.fileName, 'edited.csv');
    assert.equal(edited.mimeType, 'text/csv');
    assert.equal(edited.bytes, 12);
    assert.equal(edited.data, '', 'no bytes in the run data');
    assert.deepEqual(await download(edited.url), Buffer.from('x,y\na,b\n1,2\n'));
    assert.deepEqual(await download(item!.binary!.sheet!.url), CSV);
  });

  test('a file the code makes over BINARY_DATA_MAX_BYTES fails the execution naming the limit', async () => {
    const id = await importN8n(
      p,
      n8nChain('Code big file', [
        { name: 'Start', type: 'n8n-nodes-base.manualTrigger', typeVersion: 1 },
        {
          name: 'Code',
          type: 'n8n-nodes-base.code',
          typeVersion: 2,
          parameters: { jsCode: "return [{ json: {}, binary: { big: await this.helpers.prepareBinaryData('x'.repeat(250000), 'big.txt') } }]" },
        },
      ]),
    );
    const res = await p.rest<V1<Execution>>('POST', `/v1/engine/workflows/${id}/execute`, { body: { mode: 'sync', data: {} } });
    assert.equal(res.status, 200, JSON.stringify(res.body));
    const failed = res.body.data;
    assert.equal(failed.status, 'error');
    assert.equal(failed.error?.code, 'EXECUTION_FAILED');
    assert.equal(failed.error?.node, 'Code');
    assert.deepEqual(failed.error?.details, { reason: 'binary_limit', budget: 'BINARY_DATA_MAX_BYTES', limit: 200_000, value: 250_000 });
  });
});

describe("n8n Wait: the resume URL's webhook options and files", () => {
  const waitFlow = (name: string, wait: Record<string, unknown>, after: N8nNode[] = []) =>
    n8nChain(name, [
      { name: 'Start', type: 'n8n-nodes-base.manualTrigger', typeVersion: 1 },
      {
        name: 'Wait',
        type: 'n8n-nodes-base.wait',
        typeVersion: 1.1,
        webhookId: '5b0c8e2d-0000-4000-8000-000000000102',
        parameters: { resume: 'webhook', ...wait },
      },
      ...after,
    ]);

  test('method, suffix, bots and the answer: only the call the options allow resumes, and gets their answer', async () => {
    const id = await importActive(
      waitFlow('Approval with options', {
        httpMethod: 'POST',
        responseCode: 202,
        options: {
          webhookSuffix: 'approve',
          ignoreBots: true,
          ipWhitelist: '127.0.0.1, ::1',
          responseData: 'Thanks, noted',
          responseHeaders: { entries: [{ name: 'X-Step', value: 'approved' }] },
        },
      }),
    );
    const waiting = await startWaiting(id);
    const url = `${waiting.resumeUrl!}/approve`;
    // A browser's user agent: isbot counts Node's own ("node") a bot, as n8n does.
    const browser = 'Mozilla/5.0 (X11; Linux x86_64) AppleWebKit/537.36 (KHTML, like Gecko) Chrome/120.0 Safari/537.36';
    const send = (target: string, init: RequestInit = {}) =>
      fetch(target, {
        method: 'POST',
        headers: { 'content-type': 'application/json', 'user-agent': browser, ...(init.headers ?? {}) },
        body: '{"ok":true}',
        ...init,
      });

    assert.equal((await send(waiting.resumeUrl!)).status, 404, 'without its suffix the URL is not the resume URL');
    assert.equal((await send(`${waiting.resumeUrl!}/other`)).status, 404);
    const wrongMethod = await fetch(url, { method: 'GET' });
    assert.equal(wrongMethod.status, 405);
    assert.equal(wrongMethod.headers.get('allow'), 'POST');
    const bot = await send(url, {
      headers: { 'content-type': 'application/json', 'user-agent': 'Slackbot-LinkExpanding 1.0 (+https://api.slack.com/robots)' },
    });
    assert.equal(bot.status, 403);
    assert.equal((await execution(waiting.executionId)).status, 'waiting', 'refused calls do not resume');

    const taken = await send(`${url}?by=lee`);
    assert.equal(taken.status, 202);
    assert.equal(taken.headers.get('x-step'), 'approved');
    assert.equal(await taken.text(), 'Thanks, noted');
    const done = await whenStatus(waiting.executionId, 'success');
    const [resumed] = output(done, 'Wait');
    assert.deepEqual(resumed!.json.body, { ok: true });
    assert.deepEqual(resumed!.json.query, { by: 'lee' });
    assert.equal((await send(url)).status, 409, 'a used resume URL answers that the execution is not waiting');
  });

  test('ipWhitelist: a call from another address is refused with n8n’s message; noResponseBody answers no body', async () => {
    const refusing = await startWaiting(await importActive(waitFlow('Only from 10.9.9.9', { options: { ipWhitelist: '10.9.9.9' } })));
    const refused = await fetch(refusing.resumeUrl!, { method: 'POST' });
    assert.equal(refused.status, 403);
    const envelope = (await refused.json()) as V1<never>;
    assert.equal(envelope.error.message, 'IP is not whitelisted to access the webhook!');
    assert.equal((await execution(refusing.executionId)).status, 'waiting');

    const silent = await startWaiting(await importActive(waitFlow('Silent answer', { options: { noResponseBody: true } })));
    const res = await fetch(silent.resumeUrl!, { method: 'GET' });
    assert.equal(res.status, 200);
    assert.equal(await res.text(), '');
    await whenStatus(silent.executionId, 'success');
  });

  test('a multipart call resumes with its files as the item’s binary; the next Code node reads them', async () => {
    const id = await importActive(
      waitFlow('Upload to resume', { httpMethod: 'POST', options: {} }, [
        {
          name: 'Code',
          type: 'n8n-nodes-base.code',
          typeVersion: 2,
          parameters: {
            jsCode: "const b = await this.helpers.getBinaryDataBuffer(0, 'sheet'); return [{ json: { note: $json.body.note, text: b.toString() } }]",
          },
        },
      ]),
    );
    const waiting = await startWaiting(id);
    const upload = form([
      { name: 'note', value: 'signed' },
      { name: 'sheet', fileName: 'in.csv', type: 'text/csv', bytes: CSV },
    ]);
    const res = await fetch(waiting.resumeUrl!, { method: 'POST', headers: { 'content-type': upload.type }, body: upload.body });
    assert.equal(res.status, 200, await res.clone().text());
    const done = await whenStatus(waiting.executionId, 'success');
    const [resumed] = output(done, 'Wait');
    assert.deepEqual(resumed!.json.body, { note: 'signed' });
    const file = resumed!.binary!.sheet!;
    assert.equal(file.fileName, 'in.csv');
    assert.equal(file.bytes, CSV.length);
    assert.equal(file.data, '');
    assert.deepEqual(await download(file.url), CSV);
    assert.deepEqual(output(done, 'Code')[0]!.json, { note: 'signed', text: 'a,b\n1,2\n' });
  });

  test('rawBody with binaryPropertyName: a binary body is the file; one over BINARY_DATA_MAX_BYTES is refused (413) and the wait goes on', async () => {
    const id = await importActive(waitFlow('Raw resume', { options: { rawBody: true, binaryPropertyName: 'upload' } }));
    const waiting = await startWaiting(id);
    const tooBig = await fetch(waiting.resumeUrl!, { method: 'POST', headers: { 'content-type': 'application/octet-stream' }, body: Buffer.alloc(250_000, 1) });
    assert.equal(tooBig.status, 413);
    const refusal = (await tooBig.json()) as V1<never>;
    assert.equal(refusal.error.code, 'PAYLOAD_TOO_LARGE');
    assert.equal(refusal.error.details.budget, 'BINARY_DATA_MAX_BYTES');
    assert.equal((await execution(waiting.executionId)).status, 'waiting', 'nothing was kept');

    const png = Buffer.concat([Buffer.from([0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a]), Buffer.alloc(300, 7)]);
    const res = await fetch(waiting.resumeUrl!, { method: 'POST', headers: { 'content-type': 'image/png' }, body: png });
    assert.equal(res.status, 200);
    const done = await whenStatus(waiting.executionId, 'success');
    const file = output(done, 'Wait')[0]!.binary!.upload!;
    assert.equal(file.mimeType, 'image/png');
    assert.deepEqual(await download(file.url), png);
  });
});
