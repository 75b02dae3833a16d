import assert from 'node:assert/strict';
import { randomBytes } from 'node:crypto';
import { closeSync, existsSync, mkdtempSync, openSync, readdirSync, readFileSync, rmSync, writeSync } from 'node:fs';
import { tmpdir } from 'node:os';
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import path from 'node:path';
import busboy from 'busboy';
import type { V1 } from './support/answers';
import { startTestPlatform, type TestPlatform } from './support/platform';
import { s3BinaryEnv, startS3Server, type S3Server } from './support/s3-server';
import { importN8n } from './support/n8n-export';
import { sleep, until, untilValue } from './support/until';

/**
 * n8n binary data: kept outside the run data (database, filesystem, S3), shown in execution
 * reads as metadata and a download url, downloaded byte for byte as reading the execution is
 * authorised; Webhook uploads and the HTTP Request node's files; the binary budgets.
 */

const PDF = Buffer.concat([Buffer.from('%PDF-1.4\n'), Buffer.from(Array.from({ length: 3000 }, (_, i) => i % 256))]);
const PNG = Buffer.concat([Buffer.from([0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a]), Buffer.alloc(700, 7)]);

/** A multipart/form-data body as a browser sends it. */
function form(parts: ({ name: string; value: string } | { name: string; fileName: string; type: string; bytes: Buffer })[]) {
  const boundary = '----test-boundary-7d1f';
  const chunks: Buffer[] = [];
  for (const p of parts) {
    if ('value' in p) chunks.push(Buffer.from(`--${boundary}\r\nContent-Disposition: form-data; name="${p.name}"\r\n\r\n${p.value}\r\n`));
    else {
      chunks.push(
        Buffer.from(`--${boundary}\r\nContent-Disposition: form-data; name="${p.name}"; filename="${p.fileName}"\r\nContent-Type: ${p.type}\r\n\r\n`),
      );
      chunks.push(p.bytes, Buffer.from('\r\n'));
    }
  }
  chunks.push(Buffer.from(`--${boundary}--\r\n`));
  return { body: Buffer.concat(chunks), type: `multipart/form-data; boundary=${boundary}` };
}

async function workflow(p: TestPlatform, name: string, nodes: Record<string, unknown>[]): Promise<string> {
  const connections: Record<string, unknown> = {};
  for (let i = 0; i < nodes.length - 1; i++) connections[nodes[i]!.name as string] = { main: [[{ node: nodes[i + 1]!.name, type: 'main', index: 0 }]] };
  const res = await p.rest<V1<{ workflowId: string }>>('POST', '/v1/engine/workflows', { body: { name, nodes, connections, active: true } });
  assert.equal(res.status, 201, JSON.stringify(res.body));
  return res.body.data.workflowId;
}

/** A workflow whose Webhook node takes uploads on `path`, registered; answers the path to post to. */
async function uploadHook(p: TestPlatform, hookPath: string, parameters: Record<string, unknown> = {}): Promise<string> {
  const workflowId = await workflow(p, `Uploads ${hookPath}`, [
    { name: 'Hook', type: 'engine.webhook', parameters: { path: hookPath, ...parameters } },
    { name: 'Pass', type: 'engine.noOp' },
  ]);
  const res = await p.rest<V1<unknown>>('POST', '/v1/engine/webhooks', { body: { workflowId, method: 'POST', path: hookPath } });
  assert.equal(res.status, 201, JSON.stringify(res.body));
  return hookPath;
}

async function post(p: TestPlatform, hookPath: string, body: Buffer, type: string): Promise<string> {
  const res = await fetch(`${p.url}/webhook/${hookPath}`, { method: 'POST', headers: { 'content-type': type }, body });
  const answer = (await res.json()) as { executionId?: string };
  assert.equal(res.status, 200, JSON.stringify(answer));
  return answer.executionId!;
}

/** The execution once finished, with its run data. */
async function finished(p: TestPlatform, executionId: string): Promise<Execution> {
  return untilValue(
    `execution ${executionId} to finish`,
    async () => {
      const res = await p.rest<V1<Execution>>('GET', `/v1/engine/executions/${executionId}?includeData=true`);
      assert.equal(res.status, 200, JSON.stringify(res.body));
      return res.body.data;
    },
    (e) => e.status !== 'running',
    { timeoutMs: 30_000 },
  );
}

/** A stored file an item carries, as the run data shows it. */
interface BinaryRef {
  id: string;
  url: string;
  fileName: string;
  mimeType: string;
  fileExtension?: string;
  bytes: number;
  /** Always empty: the bytes live in the store, not in the run data. */
  data: string;
}

interface OutputItem {
  json: Record<string, unknown>;
  binary: Record<string, BinaryRef>;
}

interface RunData {
  nodeData: { nodeName: string; output: { main: OutputItem[][] } }[];
}

/** An execution as the engine surface reads it (only what these tests look at). */
interface Execution extends RunData {
  executionId: string;
  status: string;
  /** Set when the execution failed (the tests read it only then). */
  error: { code: string; message: string; node: string; details: unknown };
}

function nodeOutput(execution: RunData, node: string): OutputItem[] {
  const run = execution.nodeData.find((n) => n.nodeName === node);
  assert.ok(run, `node ${node} ran: ${JSON.stringify(execution.nodeData.map((n) => n.nodeName))}`);
  return run.output.main[0]!;
}

async function download(p: TestPlatform, url: string, key?: string) {
  const res = await fetch(`${p.url}${url}`, { headers: { authorization: `Bearer ${key ?? p.adminKey}` } });
  return { status: res.status, headers: res.headers, bytes: Buffer.from(await res.arrayBuffer()) };
}

/** A local server: GET /files/<name> answers `files[name]` as a download; POST /upload records the multipart form it got. */
async function fileServer(files: Record<string, { bytes: Buffer; type: string; disposition?: string }>) {
  const received: { fields: Record<string, string>; files: { field: string; fileName: string; mimeType: string; bytes: Buffer }[] }[] = [];
  const raw: { type: string; bytes: Buffer }[] = [];
  const server = http.createServer((req, res) => {
    if (req.method === 'GET' && req.url?.startsWith('/files/')) {
      const file = files[decodeURIComponent(req.url.slice('/files/'.length))];
      if (!file) return res.writeHead(404).end();
      res.writeHead(200, {
        'content-type': file.type,
        'content-length': String(file.bytes.length),
        ...(file.disposition ? { 'content-disposition': file.disposition } : {}),
      });
      return res.end(file.bytes);
    }
    if (req.method === 'POST' && req.url === '/upload' && !String(req.headers['content-type']).startsWith('multipart/form-data')) {
      const chunks: Buffer[] = [];
      req.on('data', (c: Buffer) => chunks.push(c));
      req.on('end', () => {
        raw.push({ type: String(req.headers['content-type']), bytes: Buffer.concat(chunks) });
        res.writeHead(204).end();
      });
      return;
    }
    if (req.method === 'POST' && req.url === '/upload') {
      const got: (typeof received)[number] = { fields: {}, files: [] };
      const parser = busboy({ headers: req.headers });
      parser.on('field', (name, value) => (got.fields[name] = value));
      parser.on('file', (field, stream, info) => {
        const chunks: Buffer[] = [];
        stream.on('data', (c: Buffer) => chunks.push(c));
        stream.on('end', () => got.files.push({ field, fileName: info.filename ?? '', mimeType: info.mimeType, bytes: Buffer.concat(chunks) }));
      });
      parser.on('close', () => {
        received.push(got);
        res.writeHead(200, { 'content-type': 'application/json' }).end(JSON.stringify({ stored: got.files.length }));
      });
      return req.pipe(parser);
    }
    res.writeHead(404).end();
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as AddressInfo;
  return { url: `http://127.0.0.1:${port}`, received, raw, close: () => new Promise<void>((r) => server.close(() => r())) };
}

/** A refusal on /webhook, as the webhook envelope carries it. */
interface WebhookError {
  error: { message: string };
}

/** A workflow answering its webhook on `hookPath` with a file: n8n's Webhook, then Respond to Webhook with `respondWith: binary` and `respond`. */
async function fileAnswerHook(p: TestPlatform, hookPath: string, respond: Record<string, unknown>): Promise<string> {
  const workflowId = await importN8n(p, {
    name: `Answer ${hookPath}`,
    nodes: [
      {
        id: '00000000-0000-4000-8000-000000000001',
        name: 'Webhook',
        type: 'n8n-nodes-base.webhook',
        typeVersion: 2,
        position: [0, 0],
        webhookId: '7d6c2f0e-0000-4000-8000-000000000001',
        parameters: { httpMethod: 'POST', path: hookPath, responseMode: 'responseNode', options: {} },
      },
      {
        id: '00000000-0000-4000-8000-000000000002',
        name: 'Respond',
        type: 'n8n-nodes-base.respondToWebhook',
        typeVersion: 1.1,
        position: [220, 0],
        parameters: { respondWith: 'binary', ...respond },
      },
    ],
    connections: { Webhook: { main: [[{ node: 'Respond', type: 'main', index: 0 }]] } },
    settings: { executionOrder: 'v1' },
  });
  assert.equal((await p.rest<V1<unknown>>('POST', `/v1/engine/workflows/${workflowId}/activate`)).status, 200);
  // Registrations are limited per key and minute: one key each.
  const { key } = await p.createKey({ service: 'engine', permissions: ['workflow:read', 'workflow:write'] });
  const res = await p.rest<V1<unknown>>('POST', '/v1/engine/webhooks', { key, body: { workflowId, method: 'POST', path: hookPath, responseMode: 'lastNode' } });
  assert.equal(res.status, 201, JSON.stringify(res.body));
  return hookPath;
}

/** Respond to Webhook with a file, through a real webhook request: the first item's first file, then one named by inputFieldName. */
async function answersWithFiles(p: TestPlatform, prefix: string): Promise<void> {
  const upload = form([
    { name: 'note', value: 'quarterly' },
    { name: 'report', fileName: 'report.pdf', type: 'application/pdf', bytes: PDF },
    { name: 'logo', fileName: 'logo.png', type: 'image/png', bytes: PNG },
  ]);
  const call = async (hookPath: string) => {
    const res = await fetch(`${p.url}/webhook/${hookPath}`, { method: 'POST', headers: { 'content-type': upload.type }, body: upload.body });
    return { status: res.status, headers: res.headers, bytes: Buffer.from(await res.arrayBuffer()) };
  };
  const first = await call(await fileAnswerHook(p, `${prefix}-answer-first`, {}));
  assert.equal(first.status, 200, first.bytes.toString('utf8', 0, 500));
  assert.equal(first.headers.get('content-type'), 'application/pdf');
  assert.equal(first.headers.get('content-disposition'), 'attachment; filename="report.pdf"');
  assert.equal(first.headers.get('content-length'), String(PDF.length));
  assert.deepEqual(first.bytes, PDF, 'the exact bytes of the uploaded file');

  const named = await call(
    await fileAnswerHook(p, `${prefix}-answer-named`, {
      responseDataSource: 'set',
      inputFieldName: 'logo',
      options: { responseCode: 201, responseHeaders: { entries: [{ name: 'Cache-Control', value: 'no-store' }] } },
    }),
  );
  assert.equal(named.status, 201, named.bytes.toString('utf8', 0, 500));
  assert.equal(named.headers.get('content-type'), 'image/png');
  assert.equal(named.headers.get('content-disposition'), 'attachment; filename="logo.png"');
  assert.equal(named.headers.get('cache-control'), 'no-store');
  assert.deepEqual(named.bytes, PNG);

  const missing = await call(await fileAnswerHook(p, `${prefix}-answer-missing`, { responseDataSource: 'set', inputFieldName: 'invoice' }));
  assert.equal(missing.status, 500);
  assert.match((JSON.parse(missing.bytes.toString('utf8')) as WebhookError).error.message, /The first item has no binary field "invoice"/);
}

/**
 * The files of an execution go with it, wherever they are kept (`present` says whether the store
 * still holds one): deleted through the API (gone when the answer comes), and pruned by retention
 * (the maintenance job, once the execution is older than ENGINE_EXECUTION_MAX_AGE_DAYS).
 */
async function filesGoWithExecutions(p: TestPlatform, prefix: string, present: (binaryId: string) => Promise<boolean> | boolean): Promise<void> {
  const upload = form([{ name: 'report', fileName: 'report.pdf', type: 'application/pdf', bytes: PDF }]);
  const id = await post(p, await uploadHook(p, `${prefix}-deleted`), upload.body, upload.type);
  const [item] = nodeOutput(await finished(p, id), 'Pass');
  const binaryId = item!.binary.report!.id;
  assert.equal(await present(binaryId), true, 'the file is kept');
  const deleted = await p.rest<V1<unknown>>('DELETE', `/v1/engine/executions/${id}`);
  assert.equal(deleted.status, 200, JSON.stringify(deleted.body));
  assert.equal(await present(binaryId), false, 'the file went with its execution');
  assert.equal((await download(p, item!.binary.report!.url)).status, 404);

  const old = await post(p, await uploadHook(p, `${prefix}-old`), upload.body, upload.type);
  const [oldItem] = nodeOutput(await finished(p, old), 'Pass');
  const oldId = oldItem!.binary.report!.id;
  const kept = await post(p, `${prefix}-old`, upload.body, upload.type);
  const [keptItem] = nodeOutput(await finished(p, kept), 'Pass');
  assert.equal(await present(oldId), true);
  await p.platform.kernel.db.query(`UPDATE engine.executions SET finished_at = now() - interval '30 days' WHERE id = $1`, [old]);
  await p.platform.kernel.queue.enqueue('engine.maintenance', {});
  await until(
    'the old execution and its file to be pruned',
    async () => (await p.rest<V1<unknown>>('GET', `/v1/engine/executions/${old}`)).status === 404 && !(await present(oldId)),
    30_000,
  );
  assert.equal(await present(keptItem!.binary.report!.id), true, 'a recent execution keeps its file');
  assert.deepEqual((await download(p, keptItem!.binary.report!.url)).bytes, PDF);
}

/** A file close to the 16 MB budget (BINARY_DATA_MAX_BYTES), random so that nothing compresses it. */
const BIG = randomBytes(16 * 1024 * 1024 - 64 * 1024);

/** An execution whose HTTP Request node downloaded BIG: the file's download url. */
async function bigFile(p: TestPlatform): Promise<string> {
  const server = await fileServer({ 'big.bin': { bytes: BIG, type: 'application/octet-stream', disposition: 'attachment; filename="big.bin"' } });
  try {
    const workflowId = await workflow(p, `Big file ${randomBytes(4).toString('hex')}`, [
      { name: 'Start', type: 'engine.manualTrigger' },
      { name: 'Download', type: 'engine.httpRequest', parameters: { url: `${server.url}/files/big.bin`, responseFormat: 'file', timeout: 120_000 } },
    ]);
    const res = await p.rest<V1<Execution>>('POST', `/v1/engine/workflows/${workflowId}/execute`, { body: { mode: 'sync', timeout: 120 } });
    assert.equal(res.status, 200, JSON.stringify(res.body));
    assert.equal(res.body.data.status, 'success', JSON.stringify(res.body.data.error));
    const [item] = nodeOutput(await finished(p, res.body.data.executionId), 'Download');
    assert.equal(item!.binary.data!.bytes, BIG.length);
    return item!.binary.data!.url;
  } finally {
    await server.close();
  }
}

type Reader = ReadableStreamDefaultReader<Uint8Array>;
/** A read of a body, pending. */
type Read = ReturnType<Reader['read']>;

/** A read of a body still waiting for bytes (in an object: an async function's answer would wait for it). */
interface Stalled {
  pending: Read;
}

/** Reads into `chunks` until nothing arrives for `quietMs`: the read still pending then, or null when the body ended. */
async function readUntilQuiet(reader: Reader, chunks: Uint8Array[], quietMs: number): Promise<Stalled | null> {
  for (;;) {
    const next = reader.read();
    const got = await Promise.race([next, sleep(quietMs).then(() => null)]);
    if (got === null) return { pending: next };
    if (got.done) return null;
    chunks.push(got.value);
  }
}

/** Reads the rest of a body into `chunks`, starting with a read left pending. */
async function readRest(reader: Reader, chunks: Uint8Array[], stalled: Stalled | null): Promise<Buffer> {
  for (let next = stalled ? await stalled.pending : await reader.read(); !next.done; next = await reader.read()) chunks.push(next.value);
  return Buffer.concat(chunks);
}

/** Starts the download of `url` (the admin's): its answer, once its headers arrived, and its body's reader. */
async function startDownload(p: TestPlatform, url: string) {
  const res = await fetch(`${p.url}${url}`, { headers: { authorization: `Bearer ${p.adminKey}` } });
  assert.equal(res.status, 200);
  assert.equal(res.headers.get('content-length'), String(BIG.length));
  assert.equal(res.headers.get('content-type'), 'application/octet-stream');
  assert.equal(res.headers.get('content-disposition'), `attachment; filename="big.bin"; filename*=UTF-8''big.bin`);
  return { res, reader: res.body!.getReader() };
}

describe('binary data in the database (default)', () => {
  let p: TestPlatform;
  beforeAll(async () => {
    p = await startTestPlatform({ OUTBOUND_ALLOW_PRIVATE_NETWORKS: 'true', BINARY_DATA_MAX_BYTES: '200000' });
  });
  afterAll(async () => {
    await p?.stop();
  });

  test('a multipart upload of two files and a field: items with the files, run data with metadata and url (no base64), downloads byte for byte', async () => {
    const hook = await uploadHook(p, 'binary-upload');
    const upload = form([
      { name: 'note', value: 'quarterly' },
      { name: 'report', fileName: 'report.pdf', type: 'application/pdf', bytes: PDF },
      { name: 'logo', fileName: 'logo.png', type: 'image/png', bytes: PNG },
    ]);
    const id = await post(p, hook, upload.body, upload.type);
    const execution = await finished(p, id);
    assert.equal(execution.status, 'success', JSON.stringify(execution.error));
    const [item] = nodeOutput(execution, 'Pass');
    assert.deepEqual(item.json.body, { note: 'quarterly' });
    assert.deepEqual(Object.keys(item.binary).sort(), ['logo', 'report']);
    const report = item.binary.report;
    assert.equal(report.fileName, 'report.pdf');
    assert.equal(report.mimeType, 'application/pdf');
    assert.equal(report.fileExtension, 'pdf');
    assert.equal(report.bytes, PDF.length);
    assert.equal(report.data, '', 'no bytes in the run data');
    assert.match(report.id, /^[0-9a-f-]{36}$/);
    assert.equal(report.url, `/v1/engine/executions/${id}/binary/${report.id}`);
    assert.ok(!JSON.stringify(execution).includes(PDF.subarray(0, 200).toString('base64')), 'the base64 of the file appears nowhere in the read');

    const got = await download(p, report.url);
    assert.equal(got.status, 200);
    assert.deepEqual(got.bytes, PDF);
    assert.equal(got.headers.get('content-type'), 'application/pdf');
    assert.equal(got.headers.get('content-length'), String(PDF.length));
    assert.match(got.headers.get('content-disposition') ?? '', /^attachment; filename="report\.pdf"/);
    const logo = await download(p, item.binary.logo.url);
    assert.deepEqual(logo.bytes, PNG);
    assert.equal(logo.headers.get('content-type'), 'image/png');
  });

  test('several files under one field are name0, name1…; the binaryPropertyName option names every file <option><n>', async () => {
    const hook = await uploadHook(p, 'binary-many');
    const upload = form([
      { name: 'scan', fileName: 'a.png', type: 'image/png', bytes: PNG },
      { name: 'scan', fileName: 'b.pdf', type: 'application/pdf', bytes: PDF },
    ]);
    const [item] = nodeOutput(await finished(p, await post(p, hook, upload.body, upload.type)), 'Pass');
    assert.deepEqual(Object.keys(item.binary).sort(), ['scan0', 'scan1']);
    assert.equal(item.binary.scan1.fileName, 'b.pdf');

    const named = await uploadHook(p, 'binary-named', { options: { binaryPropertyName: 'file' } });
    const [renamed] = nodeOutput(await finished(p, await post(p, named, upload.body, upload.type)), 'Pass');
    assert.deepEqual(Object.keys(renamed.binary).sort(), ['file0', 'file1']);
    assert.deepEqual((await download(p, renamed.binary.file1.url)).bytes, PDF);
  });

  test('with the rawBody option a binary body becomes binary.data', async () => {
    const hook = await uploadHook(p, 'binary-raw', { options: { rawBody: true } });
    const [item] = nodeOutput(await finished(p, await post(p, hook, PNG, 'image/png')), 'Pass');
    assert.equal(item.binary.data.mimeType, 'image/png');
    assert.equal(item.binary.data.bytes, PNG.length);
    assert.deepEqual((await download(p, item.binary.data.url)).bytes, PNG);
  });

  test('the download is authorised as reading the execution: no key 401, a key without workflow:read 403, another execution 404', async () => {
    const hook = await uploadHook(p, 'binary-auth');
    const upload = form([{ name: 'report', fileName: 'report.pdf', type: 'application/pdf', bytes: PDF }]);
    const id = await post(p, hook, upload.body, upload.type);
    const [item] = nodeOutput(await finished(p, id), 'Pass');
    const url: string = item.binary.report.url;

    const anonymous = await fetch(`${p.url}${url}`);
    assert.equal(anonymous.status, 401);
    const { key } = await p.createKey({ service: 'engine', permissions: ['workflow:execute'] });
    const denied = await download(p, url, key);
    assert.equal(denied.status, 403);
    const envelope = JSON.parse(denied.bytes.toString('utf8'));
    assert.equal(envelope.success, false);
    assert.equal(envelope.error.details.required, 'workflow:read');
    const reader = (await p.createKey({ service: 'engine', permissions: ['workflow:read'] })).key;
    assert.deepEqual((await download(p, url, reader)).bytes, PDF);

    const other = await post(p, await uploadHook(p, 'binary-other'), upload.body, upload.type);
    await finished(p, other);
    const elsewhere = await download(p, url.replace(id, other));
    assert.equal(elsewhere.status, 404, 'a binary of one execution is not read through another');
    const unknown = await download(p, url.replace(item.binary.report.id, '00000000-0000-4000-8000-000000000000'));
    assert.equal(unknown.status, 404);
  });

  test('Respond to Webhook answers the request with a file: status, type, name and the exact bytes', () => answersWithFiles(p, 'db'));

  test('an execution deleted or pruned by retention takes its rows of file bytes with it', () =>
    filesGoWithExecutions(p, 'db', async (binaryId) => {
      const [row] = await p.platform.kernel.db.query<{ n: number }[]>(`SELECT count(*)::int AS n FROM engine.execution_binaries WHERE id = $1`, [binaryId]);
      return row!.n > 0;
    }));

  test('deleting the execution deletes its files: the download is 404 after', async () => {
    const upload = form([{ name: 'report', fileName: 'report.pdf', type: 'application/pdf', bytes: PDF }]);
    const id = await post(p, await uploadHook(p, 'binary-deleted'), upload.body, upload.type);
    const [item] = nodeOutput(await finished(p, id), 'Pass');
    assert.equal((await download(p, item.binary.report.url)).status, 200);
    const deleted = await p.rest<V1<unknown>>('DELETE', `/v1/engine/executions/${id}`);
    assert.equal(deleted.status, 200, JSON.stringify(deleted.body));
    assert.equal((await download(p, item.binary.report.url)).status, 404);
  });

  test('the HTTP Request node downloads a file and uploads it in a multipart form to another server', async () => {
    const server = await fileServer({
      'q3.pdf': { bytes: PDF, type: 'application/pdf', disposition: 'attachment; filename="Q3 report.pdf"' },
      'logo.png': { bytes: PNG, type: 'image/png' },
    });
    try {
      const workflowId = await workflow(p, 'Download and forward', [
        { name: 'Start', type: 'engine.manualTrigger' },
        { name: 'Download', type: 'engine.httpRequest', parameters: { url: `${server.url}/files/q3.pdf`, responseFormat: 'file', outputPropertyName: 'doc' } },
        {
          name: 'Forward',
          type: 'engine.httpRequest',
          parameters: {
            method: 'POST',
            url: `${server.url}/upload`,
            multipart: [
              { name: 'title', value: '{{ $binary.doc.fileName }}' },
              { name: 'attachment', binary: 'doc' },
            ],
          },
        },
      ]);
      const res = await p.rest<V1<Execution>>('POST', `/v1/engine/workflows/${workflowId}/execute`, { body: { mode: 'sync' } });
      assert.equal(res.status, 200, JSON.stringify(res.body));
      assert.equal(res.body.data.status, 'success', JSON.stringify(res.body.data.error));
      assert.equal(server.received.length, 1);
      const [got] = server.received;
      assert.deepEqual(got!.fields, { title: 'Q3 report.pdf' });
      assert.equal(got!.files.length, 1);
      assert.equal(got!.files[0]!.field, 'attachment');
      assert.equal(got!.files[0]!.fileName, 'Q3 report.pdf');
      assert.equal(got!.files[0]!.mimeType, 'application/pdf');
      assert.deepEqual(got!.files[0]!.bytes, PDF);

      const execution = await finished(p, res.body.data.executionId);
      const [downloaded] = nodeOutput(execution, 'Download');
      assert.equal(downloaded.binary.doc.fileName, 'Q3 report.pdf');
      assert.equal(downloaded.binary.doc.mimeType, 'application/pdf');
      assert.deepEqual((await download(p, downloaded.binary.doc.url)).bytes, PDF);

      // No Content-Disposition: the name is the URL's; a file sent as the whole body.
      const raw = await workflow(p, 'Download and send raw', [
        { name: 'Start', type: 'engine.manualTrigger' },
        { name: 'Download', type: 'engine.httpRequest', parameters: { url: `${server.url}/files/logo.png`, responseFormat: 'file' } },
        { name: 'Send', type: 'engine.httpRequest', parameters: { method: 'POST', url: `${server.url}/upload`, bodyBinary: 'data' } },
      ]);
      const second = await p.rest<V1<Execution>>('POST', `/v1/engine/workflows/${raw}/execute`, { body: { mode: 'sync' } });
      assert.equal(second.body.data.status, 'success', JSON.stringify(second.body.data.error));
      const [logo] = nodeOutput(await finished(p, second.body.data.executionId), 'Download');
      assert.equal(logo.binary.data.fileName, 'logo.png');
      assert.equal(logo.binary.data.mimeType, 'image/png');
      assert.deepEqual(server.raw, [{ type: 'image/png', bytes: PNG }], 'the file went out as the whole body, with its type');
    } finally {
      await server.close();
    }
  });

  test('a retry from the failed node gets the original execution’s files back and sends them', async () => {
    let calls = 0;
    const got: Buffer[] = [];
    const server = http.createServer((req, res) => {
      const chunks: Buffer[] = [];
      req.on('data', (c: Buffer) => chunks.push(c));
      req.on('end', () => {
        calls++;
        if (calls === 1) return res.writeHead(503).end('not yet');
        got.push(Buffer.concat(chunks));
        res.writeHead(204).end();
      });
    });
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    const target = `http://127.0.0.1:${(server.address() as AddressInfo).port}/in`;
    try {
      const workflowId = await workflow(p, 'Upload then forward', [
        { name: 'Hook', type: 'engine.webhook', parameters: { path: 'binary-retry' } },
        { name: 'Send', type: 'engine.httpRequest', parameters: { method: 'POST', url: target, bodyBinary: 'report' } },
      ]);
      const hook = await p.rest<V1<unknown>>('POST', '/v1/engine/webhooks', { body: { workflowId, method: 'POST', path: 'binary-retry' } });
      assert.equal(hook.status, 201, JSON.stringify(hook.body));
      const upload = form([{ name: 'report', fileName: 'report.pdf', type: 'application/pdf', bytes: PDF }]);
      const first = await finished(p, await post(p, 'binary-retry', upload.body, upload.type));
      assert.equal(first.status, 'error');
      assert.equal(first.error.node, 'Send');

      const retry = await p.rest<V1<{ executionId: string }>>('POST', `/v1/engine/executions/${first.executionId}/retry`, { body: {} });
      assert.equal(retry.status, 201, JSON.stringify(retry.body));
      const second = await finished(p, retry.body.data.executionId);
      assert.equal(second.status, 'success', JSON.stringify(second.error));
      assert.deepEqual(got, [PDF], 'the retry sent the bytes the original execution received');
      const [reused] = nodeOutput(second, 'Hook');
      assert.deepEqual((await download(p, reused.binary.report.url)).bytes, PDF, 'the retry’s reused output is downloadable through the retry');
    } finally {
      await new Promise<void>((r) => server.close(() => r()));
    }
  });

  test('a file over BINARY_DATA_MAX_BYTES fails the execution with an error naming the limit', async () => {
    const big = Buffer.alloc(250_000, 1);
    const server = await fileServer({ 'big.bin': { bytes: big, type: 'application/octet-stream' } });
    try {
      const workflowId = await workflow(p, 'Too big', [
        { name: 'Start', type: 'engine.manualTrigger' },
        { name: 'Download', type: 'engine.httpRequest', parameters: { url: `${server.url}/files/big.bin`, responseFormat: 'file' } },
      ]);
      const res = await p.rest<V1<Execution>>('POST', `/v1/engine/workflows/${workflowId}/execute`, { body: { mode: 'sync' } });
      assert.equal(res.status, 200, JSON.stringify(res.body));
      const execution = res.body.data;
      assert.equal(execution.status, 'error');
      assert.equal(execution.error.code, 'EXECUTION_FAILED');
      assert.equal(execution.error.node, 'Download');
      assert.match(execution.error.message, /BINARY_DATA_MAX_BYTES is 200000 bytes/);
      assert.deepEqual(execution.error.details, { reason: 'binary_limit', budget: 'BINARY_DATA_MAX_BYTES', limit: 200_000, value: big.length });
    } finally {
      await server.close();
    }
  });
});

describe('a file close to the 16 MB budget kept in the database', () => {
  let p: TestPlatform;
  beforeAll(async () => {
    p = await startTestPlatform({ OUTBOUND_ALLOW_PRIVATE_NETWORKS: 'true' });
  });
  afterAll(async () => {
    await p?.stop();
  });

  test('is downloaded a chunk of the row at a time: while the table is locked the client gets part of the file, the rest once it is unlocked', async () => {
    const { reader } = await startDownload(p, await bigFile(p));
    const chunks: Uint8Array[] = [];
    const first = await reader.read();
    assert.ok(!first.done);
    chunks.push(first.value);
    const lock = p.platform.kernel.db.createQueryRunner();
    await lock.connect();
    let pending: Stalled | null;
    try {
      await lock.startTransaction();
      await lock.query('LOCK TABLE engine.execution_binaries IN ACCESS EXCLUSIVE MODE');
      pending = await readUntilQuiet(reader, chunks, 1500);
      const received = chunks.reduce((n, c) => n + c.length, 0);
      assert.ok(pending && received < BIG.length, `only what was read before the lock arrived: ${received} of ${BIG.length} bytes`);
      await lock.commitTransaction();
    } finally {
      if (lock.isTransactionActive) await lock.rollbackTransaction();
      await lock.release();
    }
    assert.ok((await readRest(reader, chunks, pending)).equals(BIG), 'the exact bytes');
  });
});

describe('binary data in a folder (BINARY_DATA_MODE=filesystem)', () => {
  let p: TestPlatform;
  let dir: string;
  beforeAll(async () => {
    dir = mkdtempSync(path.join(tmpdir(), 'binary-data-'));
    p = await startTestPlatform({ BINARY_DATA_MODE: 'filesystem', BINARY_DATA_DIR: dir, OUTBOUND_ALLOW_PRIVATE_NETWORKS: 'true' });
  });
  afterAll(async () => {
    await p?.stop();
    rmSync(dir, { recursive: true, force: true });
  });

  test('the bytes are a file in BINARY_DATA_DIR, not in the database; the download reads them back', async () => {
    const hook = await uploadHook(p, 'fs-upload');
    const upload = form([{ name: 'report', fileName: 'report.pdf', type: 'application/pdf', bytes: PDF }]);
    const id = await post(p, hook, upload.body, upload.type);
    const [item] = nodeOutput(await finished(p, id), 'Pass');
    const binaryId: string = item.binary.report.id;
    const file = path.join(dir, binaryId.slice(0, 2), binaryId);
    assert.ok(existsSync(file), `the file is under ${dir}: ${existsSync(dir) ? readdirSync(dir) : 'no folder'}`);
    assert.deepEqual(readFileSync(file), PDF);
    const got = await download(p, item.binary.report.url);
    assert.equal(got.status, 200);
    assert.deepEqual(got.bytes, PDF);
    assert.equal(got.headers.get('content-type'), 'application/pdf');
  });

  test('Respond to Webhook answers the request with a file kept in the folder', () => answersWithFiles(p, 'fs'));

  test('an execution deleted or pruned by retention takes its files out of the folder', () =>
    filesGoWithExecutions(p, 'fs', (binaryId) => existsSync(path.join(dir, binaryId.slice(0, 2), binaryId))));

  test('a file close to the 16 MB budget is streamed from the folder: bytes changed in the file while the client waits reach it', async () => {
    const url = await bigFile(p);
    const binaryId = url.split('/').pop()!;
    const file = path.join(dir, binaryId.slice(0, 2), binaryId);
    const { reader } = await startDownload(p, url);
    const chunks: Uint8Array[] = [];
    const first = await reader.read();
    assert.ok(!first.done);
    chunks.push(first.value);
    await sleep(500);
    // Its last megabyte rewritten in place while the download waits for its reader: a stream reads
    // the file as it goes and sends the new bytes; a file read whole before answering would not.
    const tail = BIG.length - 1024 * 1024;
    const fd = openSync(file, 'r+');
    try {
      writeSync(fd, Buffer.alloc(BIG.length - tail, 0xee), 0, BIG.length - tail, tail);
    } finally {
      closeSync(fd);
    }
    const got = await readRest(reader, chunks, null);
    assert.equal(got.length, BIG.length);
    assert.ok(got.subarray(0, tail).equals(BIG.subarray(0, tail)), 'the bytes before the rewritten part as they were');
    assert.ok(got.subarray(tail).equals(Buffer.alloc(BIG.length - tail, 0xee)), 'the rewritten part as it is now');
  });
});

describe('binary data in an S3 bucket (BINARY_DATA_MODE=s3)', () => {
  let p: TestPlatform;
  let s3: S3Server;
  beforeAll(async () => {
    s3 = await startS3Server();
    p = await startTestPlatform({ ...s3BinaryEnv(s3), OUTBOUND_ALLOW_PRIVATE_NETWORKS: 'true' });
  });
  afterAll(async () => {
    await p?.stop();
    await s3?.close();
  });

  test('the bytes are an object in the bucket, PUT and GET with signed requests; the download reads them back', async () => {
    const hook = await uploadHook(p, 's3-upload');
    const upload = form([{ name: 'logo', fileName: 'logo.png', type: 'image/png', bytes: PNG }]);
    const id = await post(p, hook, upload.body, upload.type);
    const [item] = nodeOutput(await finished(p, id), 'Pass');
    const binaryId: string = item.binary.logo.id;
    assert.deepEqual(s3.objects.get(`binary-data/${binaryId}`), PNG);
    assert.deepEqual(s3.refused, [], 'every request was signed as S3 checks');
    const got = await download(p, item.binary.logo.url);
    assert.equal(got.status, 200);
    assert.deepEqual(got.bytes, PNG);
    assert.equal(got.headers.get('content-disposition'), `attachment; filename="logo.png"; filename*=UTF-8''logo.png`);
  });

  test('Respond to Webhook answers the request with a file kept in the bucket', () => answersWithFiles(p, 's3'));

  test('an execution deleted or pruned by retention takes its objects out of the bucket', () =>
    filesGoWithExecutions(p, 's3', (binaryId) => s3.objects.has(`binary-data/${binaryId}`)));

  test('a file close to the 16 MB budget is piped from the bucket: its first bytes reach the client while the bucket still holds the rest back', async () => {
    const url = await bigFile(p);
    const held = s3.holdGets(1024 * 1024);
    try {
      const { reader } = await startDownload(p, url);
      const chunks: Uint8Array[] = [];
      const pending = await readUntilQuiet(reader, chunks, 1000);
      assert.equal(
        chunks.reduce((n, c) => n + c.length, 0),
        1024 * 1024,
        'the client got what the bucket sent so far',
      );
      held.release();
      assert.ok((await readRest(reader, chunks, pending)).equals(BIG), 'the exact bytes');
      assert.deepEqual(s3.refused, []);
    } finally {
      held.release();
    }
  });
});
