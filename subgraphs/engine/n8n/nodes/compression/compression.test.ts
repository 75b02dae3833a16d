import assert from 'node:assert/strict';
import { unzipSync, zipSync } from 'fflate';
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
    assert.match(plain.message, /neither a zip nor a gzip/);
    // A zip whose member says it unfolds to 2 GB: refused before anything is inflated.
    const bomb = Buffer.from(zipSync({ 'big.bin': new Uint8Array(16) }));
    const central = bomb.indexOf(Buffer.from([0x50, 0x4b, 0x01, 0x02]));
    bomb.writeUInt32LE(0x7fffffff, central + 24);
    bomb.writeUInt32LE(0x7fffffff, 22);
    const big = await itemsFailure(compression({}), [{ json: {}, binary: { data: prepareBinary(bomb, { fileName: 'big.zip' }) } }]);
    assert.match(big.message, new RegExp(`unpacks to more than ${MAX_UNPACKED_BYTES / 1024 / 1024} MB`));
  });

  test('a format these versions do not have is refused at import, naming it', () => {
    assert.equal(importRefusal(compression({ operation: 'compress', outputFormat: 'tar' }))?.option, 'outputFormat: tar');
    assert.equal(importRefusal(compression({ operation: 'compress', outputFormat: 'zip' }, 1)), undefined);
  });
});
