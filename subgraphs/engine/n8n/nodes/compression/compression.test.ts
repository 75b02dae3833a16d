import assert from 'node:assert/strict';
import { gunzipSync, gzipSync, unzipSync, zipSync } from 'fflate';
import * as tar from 'tar-stream';
import { disposeHarness, importRefusal, itemsFailure, runItems } from '../../../../../test/support/n8n-harness';
import { prepareBinary, type Item } from '../../../nodes';
import { MAX_UNPACKED_BYTES } from './compression';

afterAll(disposeHarness);

const compression = (parameters: Record<string, unknown>, typeVersion = 1.1) => ({ type: 'n8n-nodes-base.compression', typeVersion, parameters });
const bytesOf = (item: Item, key: string) => Buffer.from(item.binary![key]!.data, 'base64');
const two = (): Item => ({
  json: { id: 7 },
  binary: {
    a: prepareBinary(Buffer.from('first'), { fileName: 'a.txt' }),
    b: prepareBinary(Buffer.from('second'), { fileName: 'b.csv' }),
  },
});

describe('n8n Compression', () => {
  test('compress to zip: the named files in one archive under binaryPropertyOutput; the fields stay', async () => {
    const [[zipped]] = (await runItems(
      compression({ operation: 'compress', binaryPropertyName: 'a, b', fileName: 'both.zip', binaryPropertyOutput: 'archive' }),
      [two()],
    )) as [[Item]];
    assert.deepEqual(zipped.json, { id: 7 });
    assert.deepEqual(Object.keys(zipped.binary!), ['archive']);
    assert.equal(zipped.binary!.archive!.fileName, 'both.zip');
    assert.equal(zipped.binary!.archive!.mimeType, 'application/zip');
    const members = unzipSync(new Uint8Array(bytesOf(zipped, 'archive')));
    assert.deepEqual(Object.keys(members).sort(), ['a.txt', 'b.csv']);
    assert.equal(Buffer.from(members['b.csv']!).toString(), 'second');
  });

  test('decompress (the default): each member as file_0, file_1 … with its name; folders and __MACOSX copies left out', async () => {
    const zip = zipSync({
      'x.txt': new TextEncoder().encode('X'),
      'dir/': new Uint8Array(),
      'dir/y.txt': new TextEncoder().encode('Y'),
      '__MACOSX/._x.txt': new Uint8Array(4),
    });
    const [[out]] = (await runItems(compression({}), [{ json: { k: 1 }, binary: { data: prepareBinary(Buffer.from(zip), { fileName: 'f.zip' }) } }])) as [
      [Item],
    ];
    assert.deepEqual(out.json, { k: 1 });
    assert.deepEqual(Object.keys(out.binary!), ['file_0', 'file_1']);
    assert.deepEqual(
      Object.values(out.binary!).map((b) => [b.fileName, b.directory, Buffer.from(b.data, 'base64').toString()]),
      [
        ['x.txt', undefined, 'X'],
        ['y.txt', 'dir', 'Y'],
      ],
    );
  });

  test('gzip both ways: 1 names the outputs <outputPrefix><n>, 1.1 binaryPropertyOutput; outputPrefix on decompress', async () => {
    const [[v1]] = (await runItems(compression({ operation: 'compress', outputFormat: 'gzip', binaryPropertyName: 'a,b' }, 1), [two()])) as [[Item]];
    assert.deepEqual(Object.keys(v1.binary!), ['data0', 'data1']);
    assert.equal(v1.binary!.data0!.fileName, 'a.gzip');
    const [[v11]] = (await runItems(compression({ operation: 'compress', outputFormat: 'gzip', binaryPropertyName: 'a', binaryPropertyOutput: 'gz' }), [
      two(),
    ])) as [[Item]];
    assert.deepEqual(Object.keys(v11.binary!), ['gz']);
    const [[back]] = (await runItems(compression({ operation: 'decompress', binaryPropertyName: 'gz', outputPrefix: 'out_' }), [v11])) as [[Item]];
    assert.equal(back.binary!.out_0!.fileName, 'a');
    assert.equal(bytesOf(back, 'out_0').toString(), 'first');
  });

  test('a file that is no archive, or one that unpacks beyond the cap, fails the item', async () => {
    const plain = await itemsFailure(compression({}), [{ json: {}, binary: { data: prepareBinary(Buffer.from('hello'), { fileName: 'h.txt' }) } }]);
    assert.match(plain.message, /is not a zip, gzip, tar or tar\.gz archive/);
    // A zip whose member says it unfolds to 2 GB: refused before anything is inflated.
    const bomb = Buffer.from(zipSync({ 'big.bin': new Uint8Array(16) }));
    const central = bomb.indexOf(Buffer.from([0x50, 0x4b, 0x01, 0x02]));
    bomb.writeUInt32LE(0x7fffffff, central + 24);
    bomb.writeUInt32LE(0x7fffffff, 22);
    const big = await itemsFailure(compression({}), [{ json: {}, binary: { data: prepareBinary(bomb, { fileName: 'big.zip' }) } }]);
    assert.match(big.message, new RegExp(`unpacks to more than ${MAX_UNPACKED_BYTES / 1024 / 1024} MB`));
  });

  test('a format n8n does not have is refused at import, naming it', () => {
    assert.equal(importRefusal(compression({ operation: 'compress', outputFormat: '7z' }))?.option, 'outputFormat: 7z');
    for (const outputFormat of ['zip', 'gzip', 'tar', 'targz']) assert.equal(importRefusal(compression({ operation: 'compress', outputFormat }, 1)), undefined);
  });
});

/** A tar's members as [name, type, text], read with tar-stream. */
async function members(bytes: Buffer): Promise<[string, string | null | undefined, string][]> {
  const out: [string, string | null | undefined, string][] = [];
  const extract = tar.extract();
  const done = (async () => {
    for await (const entry of extract) {
      const chunks: Buffer[] = [];
      for await (const chunk of entry) chunks.push(chunk as Buffer);
      out.push([entry.header.name, entry.header.type, Buffer.concat(chunks).toString()]);
    }
  })();
  extract.end(bytes);
  await done;
  return out;
}

/** A tar as GNU tar writes one: a folder, a file in it, a file at the top and a symbolic link. */
async function tarball(): Promise<Buffer> {
  const pack = tar.pack();
  pack.entry({ name: 'docs/', type: 'directory' });
  pack.entry({ name: 'docs/readme.md', size: 6 }, Buffer.from('# Docs'));
  pack.entry({ name: 'top.csv', size: 3 }, Buffer.from('a,b'));
  pack.entry({ name: 'link', type: 'symlink', linkname: '/etc/passwd' });
  pack.finalize();
  const chunks: Buffer[] = [];
  for await (const chunk of pack) chunks.push(chunk as Buffer);
  return Buffer.concat(chunks);
}

describe('n8n Compression: tar and tar.gz (n8n 2.28)', () => {
  test('compress to tar and targz: the named files in one archive under binaryPropertyOutput', async () => {
    const [[plain]] = (await runItems(compression({ operation: 'compress', outputFormat: 'tar', binaryPropertyName: 'a,b', fileName: 'both.tar' }), [
      two(),
    ])) as [[Item]];
    assert.deepEqual(plain.json, { id: 7 });
    assert.equal(plain.binary!.data!.fileName, 'both.tar');
    assert.equal(plain.binary!.data!.mimeType, 'application/x-tar');
    assert.deepEqual(await members(bytesOf(plain, 'data')), [
      ['a.txt', 'file', 'first'],
      ['b.csv', 'file', 'second'],
    ]);
    const [[gz]] = (await runItems(compression({ operation: 'compress', outputFormat: 'targz', binaryPropertyName: 'b', binaryPropertyOutput: 'archive' }), [
      two(),
    ])) as [[Item]];
    assert.equal(gz.binary!.archive!.fileName, 'file.tar.gz');
    assert.equal(gz.binary!.archive!.mimeType, 'application/gzip');
    assert.deepEqual(await members(Buffer.from(gunzipSync(new Uint8Array(bytesOf(gz, 'archive'))))), [['b.csv', 'file', 'second']]);
  });

  test('decompress a .tar and a .tgz: their files in order with their folders; folders and links left out; a plain .gz stays one file', async () => {
    const bytes = await tarball();
    const input: Item = {
      json: {},
      binary: {
        t: prepareBinary(bytes, { fileName: 'bundle.tar' }),
        z: prepareBinary(Buffer.from(gzipSync(new Uint8Array(bytes))), { fileName: 'bundle.tgz' }),
      },
    };
    const [[out]] = (await runItems(compression({ operation: 'decompress', binaryPropertyName: 't, z' }), [input])) as [[Item]];
    assert.deepEqual(
      Object.entries(out.binary!).map(([key, b]) => [key, b.fileName, b.directory, Buffer.from(b.data, 'base64').toString()]),
      [
        ['file_0', 'readme.md', 'docs', '# Docs'],
        ['file_1', 'top.csv', undefined, 'a,b'],
        ['file_2', 'readme.md', 'docs', '# Docs'],
        ['file_3', 'top.csv', undefined, 'a,b'],
      ],
    );
    const [[gz]] = (await runItems(compression({ operation: 'decompress' }), [
      { json: {}, binary: { data: prepareBinary(Buffer.from(gzipSync(new Uint8Array(bytes))), { fileName: 'bundle.gz' }) } },
    ])) as [[Item]];
    assert.deepEqual(Object.keys(gz.binary!), ['file_0']);
    assert.equal(gz.binary!.file_0!.fileName, 'bundle');
  });

  test('a tar whose member says it is larger than the cap is refused before it is read; a broken tar fails the item', async () => {
    const pack = tar.pack();
    pack.entry({ name: 'big.bin', size: MAX_UNPACKED_BYTES + 1 });
    const header = await new Promise<Buffer>((resolve) => pack.once('data', (chunk) => resolve(chunk as Buffer)));
    const big = await itemsFailure(compression({}), [
      { json: {}, binary: { data: prepareBinary(Buffer.concat([header, Buffer.alloc(1024)]), { fileName: 'big.tar' }) } },
    ]);
    assert.match(big.message, new RegExp(`unpacks to more than ${MAX_UNPACKED_BYTES / 1024 / 1024} MB`));
    const broken = Buffer.from(await tarball()).subarray(0, 700);
    const failed = await itemsFailure(compression({}), [{ json: {}, binary: { data: prepareBinary(broken, { fileName: 'broken.tar' }) } }]);
    assert.match(failed.message, /not a readable tar archive/);
  });
});
