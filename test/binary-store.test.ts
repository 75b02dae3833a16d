import assert from 'node:assert/strict';
import { existsSync, mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { FilesystemBackend, S3Backend } from '../subgraphs/engine/executions/binary.store';
import { startS3Server } from './support/s3-server';

/** The backends binary data is kept in besides the database: a folder, and an S3 bucket over signed HTTP. */

const BYTES = Buffer.from(Array.from({ length: 5000 }, (_, i) => (i * 7) % 256));
const ID = '3f2b8c1e-7a4d-4e5f-9b6a-1c2d3e4f5a6b';

test('filesystem: a file per id, read back byte for byte, absent once deleted', async () => {
  const dir = mkdtempSync(path.join(tmpdir(), 'binary-store-'));
  try {
    const fs = new FilesystemBackend(dir);
    assert.equal(await fs.get(ID), null, 'nothing before it is put');
    await fs.put(ID, BYTES);
    assert.ok(existsSync(path.join(dir, ID.slice(0, 2), ID)));
    assert.deepEqual(await fs.get(ID), BYTES);
    await fs.delete(ID);
    assert.equal(await fs.get(ID), null);
    await fs.delete(ID);
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
});

test('s3: signed PUT, GET and DELETE of an object; a missing object reads as absent', async () => {
  const s3 = await startS3Server();
  try {
    const store = new S3Backend({ endpoint: s3.url, bucket: s3.bucket, region: s3.region, accessKeyId: s3.accessKeyId, secretAccessKey: s3.secretAccessKey });
    await store.put(ID, BYTES);
    assert.deepEqual(s3.objects.get(`binary-data/${ID}`), BYTES);
    assert.deepEqual(await store.get(ID), BYTES);
    await store.delete(ID);
    assert.equal(s3.objects.size, 0);
    assert.equal(await store.get(ID), null);
    assert.deepEqual(s3.refused, []);
  } finally {
    await s3.close();
  }
});

test('s3: wrong keys are refused by the server and the error names its code', async () => {
  const s3 = await startS3Server();
  try {
    const store = new S3Backend({ endpoint: s3.url, bucket: s3.bucket, region: s3.region, accessKeyId: s3.accessKeyId, secretAccessKey: 'not-the-secret' });
    await assert.rejects(store.put(ID, BYTES), /S3 PUT answered 403 \(SignatureDoesNotMatch\)/);
    assert.equal(s3.objects.size, 0);
    assert.deepEqual(s3.refused, [{ method: 'PUT', path: `/${s3.bucket}/binary-data/${ID}` }]);
  } finally {
    await s3.close();
  }
});
