import assert from 'node:assert/strict';
import { existsSync, mkdirSync, mkdtempSync, readFileSync, rmSync, symlinkSync, truncateSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { disposeHarness, importRefusal, itemsFailure as failureIn, runItems as runIn, type NodeUnderTest } from '../../../../../test/support/n8n-harness';
import { prepareBinary, type Item } from '../../../nodes';
import { MAX_READ_BYTES } from './folder';

/** Runs with the files folder every run gets from its services. */
const runItems = (node: NodeUnderTest, items: Item[]) => runIn(node, items, { services: { filesDir: folder } });
const itemsFailure = (node: NodeUnderTest, items: Item[]) => failureIn(node, items, { services: { filesDir: folder } });

const base = mkdtempSync(path.join(tmpdir(), 'rw-files-'));
const folder = path.join(base, 'files');
const elsewhere = path.join(base, 'elsewhere');

beforeAll(() => {
  mkdirSync(path.join(folder, 'reports'), { recursive: true });
  mkdirSync(elsewhere, { recursive: true });
  writeFileSync(path.join(folder, 'reports', 'a.csv'), 'a\n1');
  writeFileSync(path.join(folder, 'reports', 'b.csv'), 'b\n2');
  writeFileSync(path.join(folder, 'reports', 'c.txt'), 'c');
  writeFileSync(path.join(folder, 'reports', '.hidden.csv'), 'h');
  writeFileSync(path.join(elsewhere, 'secret.txt'), 'secret');
  symlinkSync(path.join(elsewhere, 'secret.txt'), path.join(folder, 'reports', 'link.csv'));
  symlinkSync(elsewhere, path.join(folder, 'out'));
});
afterAll(() => {
  disposeHarness();
  rmSync(base, { recursive: true, force: true });
});

const rw = (parameters: Record<string, unknown>) => ({ type: 'n8n-nodes-base.readWriteFile', typeVersion: 1, parameters });
const text = (item: Item, key = 'data') => Buffer.from(item.binary![key]!.data, 'base64').toString();

describe('n8n Read/Write Files from Disk, inside FILES_DIR', () => {
  test('read: a pattern in the file name gives one item per file (no hidden files, no links out), described in json', async () => {
    const [out] = await runItems(rw({ fileSelector: 'reports/*.csv' }), [{ json: {} }]);
    assert.deepEqual(
      out!.map((i) => [i.json.fileName, text(i)]),
      [
        ['a.csv', 'a\n1'],
        ['b.csv', 'b\n2'],
      ],
    );
    assert.deepEqual(out![0]!.json, { mimeType: 'text/csv', fileType: 'text', fileName: 'a.csv', fileExtension: 'csv', fileSize: '3 B' });
    assert.equal(out![0]!.binary!.data!.directory, 'reports');
    const [one] = await runItems(
      rw({ fileSelector: path.join(folder, 'reports', '?.txt'), options: { dataPropertyName: 'f', fileName: 'renamed.txt', mimeType: 'text/x-c' } }),
      [{ json: {} }],
    );
    assert.equal(one!.length, 1);
    assert.equal(one![0]!.binary!.f!.fileName, 'renamed.txt');
    assert.equal(one![0]!.binary!.f!.mimeType, 'text/x-c');
    const [none] = await runItems(rw({ fileSelector: 'reports/*.pdf' }), [{ json: {} }]);
    assert.deepEqual(none, []);
  });

  test('write: the item file to a path inside (folders made, append), the item going on with fileName', async () => {
    const item: Item = { json: { n: 1 }, binary: { data: prepareBinary(Buffer.from('one'), { fileName: 'x.txt' }) } };
    const [[written]] = (await runItems(rw({ operation: 'write', fileName: 'new/dir/x.txt' }), [item])) as [[Item]];
    assert.deepEqual(written.json, { n: 1, fileName: 'new/dir/x.txt' });
    assert.equal(readFileSync(path.join(folder, 'new', 'dir', 'x.txt'), 'utf8'), 'one');
    await runItems(rw({ operation: 'write', fileName: 'new/dir/x.txt', options: { append: true } }), [item]);
    assert.equal(readFileSync(path.join(folder, 'new', 'dir', 'x.txt'), 'utf8'), 'oneone');
  });

  test('paths that leave the folder are refused: ../, absolute elsewhere, a link to a file or folder outside', async () => {
    const item: Item = { json: {}, binary: { data: prepareBinary(Buffer.from('evil')) } };
    for (const fileName of ['../elsewhere/evil.txt', path.join(elsewhere, 'evil.txt'), 'out/evil.txt', 'reports/link.csv']) {
      const failure = await itemsFailure(rw({ operation: 'write', fileName }), [item]);
      assert.match(failure.message, /outside the files folder \(FILES_DIR\)/, fileName);
    }
    assert.equal(existsSync(path.join(elsewhere, 'evil.txt')), false);
    assert.equal(readFileSync(path.join(elsewhere, 'secret.txt'), 'utf8'), 'secret');
    for (const fileSelector of ['../elsewhere/secret.txt', path.join(elsewhere, 'secret.txt'), 'out/secret.txt', 'reports/link.csv', '/etc/passwd']) {
      const failure = await itemsFailure(rw({ fileSelector }), [{ json: {} }]);
      assert.match(failure.message, /outside the files folder/, fileSelector);
    }
  });

  test('patterns in folder names and ** are refused; nothing found gives no item in 1 and fails in 1.1', async () => {
    assert.match((await itemsFailure(rw({ fileSelector: '*/a.csv' }), [{ json: {} }])).message, /in the file name only/);
    assert.match((await itemsFailure(rw({ fileSelector: 'reports/**' }), [{ json: {} }])).message, /"\*\*" is not supported/);
    assert.deepEqual(await runItems(rw({ fileSelector: 'reports/none.csv' }), [{ json: {} }]), [[]]);
    const none = await itemsFailure({ ...rw({ fileSelector: 'reports/none.csv' }), typeVersion: 1.1 }, [{ json: {} }]);
    assert.match(none.message, /No file\(s\) found: no file matching the selector "reports\/none.csv" found/);
    const item: Item = { json: {}, binary: { data: prepareBinary(Buffer.from('x')) } };
    const blocked = await itemsFailure(rw({ operation: 'write', fileName: 'reports/a.csv/inner.txt' }), [item]);
    assert.match(blocked.message, /"reports\/a.csv\/inner.txt" goes through a file as if it were a folder/);
    assert.doesNotMatch(blocked.message, new RegExp(base));
  });

  test('a file larger than an item may hold is refused before it is read', async () => {
    const big = path.join(folder, 'big.bin');
    writeFileSync(big, '');
    truncateSync(big, MAX_READ_BYTES + 1); // sparse: no disk or memory spent
    const failure = await itemsFailure(rw({ fileSelector: 'big.bin' }), [{ json: {} }]);
    assert.match(failure.message, /"big.bin" is larger than 256 MB/);
  });

  test('a missing path is refused at import', () => {
    assert.equal(importRefusal(rw({ operation: 'write' }))?.message.includes('fileName'), true);
    assert.equal(importRefusal(rw({ fileSelector: 'a.txt' })), undefined);
  });
});
