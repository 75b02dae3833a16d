import assert from 'node:assert/strict';
import { mkdtempSync, readdirSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import type { V1 } from './support/answers';
import { importN8n, n8nChain, type N8nNode } from './support/n8n-export';
import { startTestPlatform, type TestPlatform } from './support/platform';
import { s3BinaryEnv, startS3Server, type S3Server } from './support/s3-server';
import { until, untilValue } from './support/until';

/**
 * Files kept outside the database (a folder, an S3 bucket) by a call or a run that loses a race:
 * two calls of one resume URL at once, a resume call and a cancel, a cancel while a node's file
 * is being kept. The side whose write is not recorded deletes the files it kept: afterwards the
 * store holds exactly the files the recorded side refers to.
 */

interface StoredFile {
  id: string;
  url: string;
  bytes: number;
}
interface OutputItem {
  json: Record<string, unknown>;
  binary?: Record<string, StoredFile>;
}
interface Execution {
  executionId: string;
  status: string;
  resumeUrl: string | null;
  nodeData: { nodeName: string; output: { main: OutputItem[][] } }[];
}

/** Manual start, then a Wait for its resume URL whose raw body is the file `upload`. */
const waitForUpload = (name: string) =>
  n8nChain(name, [
    { name: 'Start', type: 'n8n-nodes-base.manualTrigger', typeVersion: 1 },
    {
      name: 'Wait',
      type: 'n8n-nodes-base.wait',
      typeVersion: 1.1,
      webhookId: '5b0c8e2d-0000-4000-8000-000000000202',
      parameters: { resume: 'webhook', httpMethod: 'POST', options: { rawBody: true, binaryPropertyName: 'upload' } },
    },
    { name: 'Done', type: 'n8n-nodes-base.noOp', typeVersion: 1 },
  ]);

/** A Code node that makes a file, then a node after it. */
const makesFile = (name: string) =>
  n8nChain(name, [
    { name: 'Start', type: 'n8n-nodes-base.manualTrigger', typeVersion: 1 },
    {
      name: 'Code',
      type: 'n8n-nodes-base.code',
      typeVersion: 2,
      parameters: { jsCode: "return [{ json: {}, binary: { made: await this.helpers.prepareBinaryData('made by the run', 'made.txt') } }]" },
    },
    { name: 'Done', type: 'n8n-nodes-base.noOp', typeVersion: 1 },
  ]);

const png = (fill: number) => Buffer.concat([Buffer.from([0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a]), Buffer.alloc(4000, fill)]);

async function execution(p: TestPlatform, id: string): Promise<Execution> {
  const res = await p.rest<V1<Execution>>('GET', `/v1/engine/executions/${id}?includeData=true`);
  assert.equal(res.status, 200, JSON.stringify(res.body));
  return res.body.data;
}

const whenStatus = (p: TestPlatform, id: string, status: string) =>
  untilValue(
    `execution ${id} to be ${status}`,
    () => execution(p, id),
    (e) => e.status === status,
    { timeoutMs: 30_000, everyMs: 100 },
  );

/** Starts the workflow (queued) and answers the execution's id. */
async function start(p: TestPlatform, workflowId: string): Promise<string> {
  const res = await p.rest<V1<{ executionId: string }>>('POST', `/v1/engine/workflows/${workflowId}/execute`, { body: { data: {} } });
  assert.equal(res.status, 200, JSON.stringify(res.body));
  return res.body.data.executionId;
}

async function waiting(p: TestPlatform, workflow: unknown): Promise<Execution> {
  const id = await importN8n(p, workflow);
  const w = await whenStatus(p, await start(p, id), 'waiting');
  assert.ok(w.resumeUrl, 'a waiting execution has its resume URL');
  return w;
}

const resume = (url: string, body: Buffer) => fetch(url, { method: 'POST', headers: { 'content-type': 'image/png' }, body });

async function cancel(p: TestPlatform, id: string): Promise<void> {
  const res = await p.rest<V1<{ status: string }>>('POST', `/v1/engine/executions/${id}/cancel`, { body: {} });
  assert.equal(res.status, 200, JSON.stringify(res.body));
  assert.equal(res.body.data.status, 'canceled');
}

function waitUpload(e: Execution): StoredFile {
  const file = e.nodeData.find((n) => n.nodeName === 'Wait')?.output.main[0]?.[0]?.binary?.upload;
  assert.ok(file, `the Wait node's item has the upload: ${JSON.stringify(e.nodeData.map((n) => n.nodeName))}`);
  return file;
}

describe('a losing side deletes its files: folder (BINARY_DATA_MODE=filesystem)', () => {
  let p: TestPlatform;
  let dir: string;
  /** The files in the folder (ids), a write in progress left out. */
  const files = (): string[] =>
    readdirSync(dir, { recursive: true, withFileTypes: true })
      .filter((f) => f.isFile() && !f.name.endsWith('.part'))
      .map((f) => f.name)
      .sort();

  beforeAll(async () => {
    dir = mkdtempSync(path.join(tmpdir(), 'binary-races-'));
    p = await startTestPlatform({ BINARY_DATA_MODE: 'filesystem', BINARY_DATA_DIR: dir });
  });
  afterAll(async () => {
    await p?.stop();
    rmSync(dir, { recursive: true, force: true });
  });

  test('three calls of one resume URL at once: one resumes (200), the others get 409 and the folder holds only the winner’s file', async () => {
    const w = await waiting(p, waitForUpload('Three resume calls'));
    const before = files();
    const answers = await Promise.all([1, 2, 3].map((fill) => resume(w.resumeUrl!, png(fill))));
    const statuses = answers.map((a) => a.status).sort();
    assert.deepEqual(statuses, [200, 409, 409], 'one call resumes the execution');
    const done = await whenStatus(p, w.executionId, 'success');
    const upload = waitUpload(done);
    const added = files().filter((f) => !before.includes(f));
    assert.deepEqual(added, [upload.id], 'the refused calls left no file behind');
    const got = await fetch(`${p.url}${upload.url}`, { headers: { authorization: `Bearer ${p.adminKey}` } });
    assert.equal(got.status, 200);
    assert.equal((await got.arrayBuffer()).byteLength, upload.bytes);
  });
});

describe('a losing side deletes its files: S3 bucket (BINARY_DATA_MODE=s3)', () => {
  let p: TestPlatform;
  let s3: S3Server;
  const objects = () => [...s3.objects.keys()].filter((k) => k.startsWith('binary-data/')).sort();
  const heldPuts = (held: { readonly held: number }, n: number) => until(`${n} PUT(s) held by the bucket`, () => held.held >= n, 10_000);

  beforeAll(async () => {
    s3 = await startS3Server();
    p = await startTestPlatform(s3BinaryEnv(s3));
  });
  afterAll(async () => {
    await p?.stop();
    await s3?.close();
  });

  test('two resume calls whose files are both being stored: one resumes, the other gets 409 and its object is deleted', async () => {
    const w = await waiting(p, waitForUpload('Two resume calls'));
    const before = objects();
    const held = s3.holdPuts();
    let answers: Response[];
    try {
      const calls = [resume(w.resumeUrl!, png(1)), resume(w.resumeUrl!, png(2))];
      // Both calls found the execution waiting and are storing their files.
      await heldPuts(held, 2);
      held.release();
      answers = await Promise.all(calls);
    } finally {
      held.release();
    }
    assert.deepEqual(answers.map((a) => a.status).sort(), [200, 409]);
    const upload = waitUpload(await whenStatus(p, w.executionId, 'success'));
    assert.deepEqual(
      objects().filter((k) => !before.includes(k)),
      [`binary-data/${upload.id}`],
      'only the winner’s object is in the bucket',
    );
    assert.deepEqual(s3.refused, []);
  });

  test('a cancel that lands while a resume call stores its file: the call gets 409 and its object is deleted', async () => {
    const w = await waiting(p, waitForUpload('Resume and cancel'));
    const before = objects();
    const held = s3.holdPuts();
    let answer: Response;
    try {
      const call = resume(w.resumeUrl!, png(3));
      await heldPuts(held, 1);
      await cancel(p, w.executionId);
      held.release();
      answer = await call;
    } finally {
      held.release();
    }
    assert.equal(answer.status, 409);
    assert.equal((await execution(p, w.executionId)).status, 'canceled');
    assert.deepEqual(objects(), before, 'the refused call left no object behind');
  });

  test('a cancel that lands while a node’s file is being stored: the run’s write is refused and its object is deleted', async () => {
    const id = await importN8n(p, makesFile('Cancel while storing'));
    const before = objects();
    const deletedBefore = s3.deleted.length;
    const held = s3.holdPuts();
    let executionId: string;
    try {
      executionId = await start(p, id);
      await heldPuts(held, 1);
      await cancel(p, executionId);
    } finally {
      held.release();
    }
    // Stored once released, then deleted by the run that finds its write refused.
    await until('the run’s object to be deleted', () => s3.deleted.length > deletedBefore, 15_000);
    assert.deepEqual(objects(), before, 'no object of the canceled run is left');
    const e = await execution(p, executionId);
    assert.equal(e.status, 'canceled');
    assert.ok(!e.nodeData.some((n) => n.nodeName === 'Code'), 'the Code node’s run was not recorded');
  });
});
