import assert from 'node:assert/strict';
import { BudgetExceeded } from '../../../nodes';
import type { BinaryData } from '../../../expressions';
import { prepareBinary } from '../../../nodes';
import { runItems } from '../../../../../test/support/n8n-harness';
import { direct, disposeCodeTesting, node } from './testing';

/**
 * Files in n8n's Code node: items' files are visible to the code as metadata, their bytes through
 * `this.helpers.getBinaryDataBuffer`, and what the code returns under `binary` passes on (new files
 * from base64 or `helpers.prepareBinaryData`, input files by the id the code saw them under).
 */

afterAll(disposeCodeTesting);

const csv = () => prepareBinary(Buffer.from('a,b\n1,2\n'), { fileName: 'in.csv' });
const text = (b: BinaryData | undefined) => Buffer.from(b?.data ?? '', 'base64').toString('utf8');

describe('n8n Code: files', () => {
  test('the code sees the files of its items as metadata (no bytes), under $input.item.binary, items[i].binary and $binary', async () => {
    const code = 'return items.map((i, n) => ({ json: { all: i.binary, item: $input.all()[n].binary?.data.fileName } }))';
    const out = await direct(code, [{}, {}], { files: [csv(), undefined].map((f) => (f ? { data: f } : undefined)) });
    const seen = out.items[0]!.all as Record<string, Record<string, unknown>>;
    assert.deepEqual(Object.keys(seen), ['data']);
    assert.equal(seen.data!.fileName, 'in.csv');
    assert.equal(seen.data!.mimeType, 'text/csv');
    assert.equal(seen.data!.fileExtension, 'csv');
    assert.equal(seen.data!.fileSize, '8 B');
    assert.equal(seen.data!.data, undefined, 'the bytes stay out of the metadata');
    assert.equal(out.items[0]!.item, 'in.csv');
    assert.deepEqual(out.items[1], {}, 'an item without files has none');

    const each = await direct('return { json: { name: $binary.data.fileName, type: $input.item.binary.data.mimeType } }', [{}], {
      mode: 'runOnceForEachItem',
      files: [{ data: csv() }],
    });
    assert.deepEqual(each.items, [{ name: 'in.csv', type: 'text/csv' }]);
  });

  test('returning the items passes their files on as the same files; changed metadata is kept', async () => {
    const file = csv();
    const same = await direct('return items', [{}], { files: [{ data: file }] });
    assert.equal(same.binary[0]?.data, file, 'the very file, not a copy');

    const renamed = await direct("items[0].binary.data.fileName = 'out.csv'; return items", [{}], { files: [{ data: file }] });
    assert.equal(renamed.binary[0]?.data?.fileName, 'out.csv');
    assert.equal(renamed.binary[0]?.data?.data, file.data);
    assert.equal(file.fileName, 'in.csv', "the input's file is not changed");

    const spread = await direct('return [{ json: {}, binary: { copy: { ...$input.first().binary.data } } }]', [{}], { files: [{ data: file }] });
    assert.equal(spread.binary[0]?.copy, file);
  });

  test('helpers.getBinaryDataBuffer gives the bytes; toString reads them as utf8, base64, hex or latin1', async () => {
    const file = prepareBinary(Buffer.from('héllo'), { fileName: 'h.txt' });
    const code = `const buf = await this.helpers.getBinaryDataBuffer(0, 'data');
return [{ json: { length: buf.length, text: buf.toString(), utf8: buf.toString('utf-8'), b64: buf.toString('base64'), hex: buf.toString('hex'), first: buf[0], isBytes: buf instanceof Uint8Array } }]`;
    const out = await direct(code, [{}], { files: [{ data: file }] });
    assert.deepEqual(out.items, [{ length: 6, text: 'héllo', utf8: 'héllo', b64: 'aMOpbGxv', hex: '68c3a96c6c6f', first: 104, isBytes: true }]);
  });

  test('getBinaryDataBuffer on a missing field or item fails with a message naming it', async () => {
    const keyMissing = await direct("await helpers.getBinaryDataBuffer(0, 'nope')", [{}], { files: [{ data: csv() }] }).catch((e: Error) => e.message);
    assert.equal(keyMissing, "This item has no binary field 'nope'");
    const itemMissing = await direct("await helpers.getBinaryDataBuffer(3, 'data')", [{}], { files: [{ data: csv() }] }).catch((e: Error) => e.message);
    assert.equal(itemMissing, 'There is no input item 3');
  });

  test('helpers.prepareBinaryData makes a file from bytes or text; base64 `data` is a file too', async () => {
    const code = `const buf = await this.helpers.getBinaryDataBuffer(0, 'data');
const withHeader = 'x,y\\n' + buf.toString();
return [{ json: {}, binary: {
  edited: await this.helpers.prepareBinaryData(withHeader, 'edited.csv'),
  copied: await this.helpers.prepareBinaryData(buf, 'copy.bin', 'application/x-test'),
  raw: { data: btoa('plain'), mimeType: 'text/plain', fileName: 'p.txt' },
} }]`;
    const out = await direct(code, [{}], { files: [{ data: csv() }] });
    const files = out.binary[0]!;
    assert.equal(text(files.edited), 'x,y\na,b\n1,2\n');
    assert.equal(files.edited?.mimeType, 'text/csv');
    assert.equal(files.edited?.fileName, 'edited.csv');
    assert.equal(files.edited?.bytes, 12);
    assert.equal(text(files.copied), 'a,b\n1,2\n');
    assert.equal(files.copied?.mimeType, 'application/x-test');
    assert.equal(text(files.raw), 'plain');
    assert.equal(files.raw?.fileExtension, 'txt');
  });

  test('a returned file larger than BINARY_DATA_MAX_BYTES fails the node before it is decoded', async () => {
    const err = await direct("return [{ json: {}, binary: { big: { data: btoa('x'.repeat(3000)) } } }]", [{}], { maxBinaryBytes: 2048 }).then(
      () => assert.fail('the node should fail'),
      (e: unknown) => e,
    );
    assert.ok(err instanceof BudgetExceeded, String(err));
    assert.equal(err.budget, 'maxBinaryBytes');
    assert.equal(err.value, 3000);
    assert.match(err.message, /binary field 'big'.*BINARY_DATA_MAX_BYTES is 2048 bytes/);
  });

  test("items without files cost nothing extra: no binary in the sandbox's payload, no bytes unless the code reads them", async () => {
    const inputs: string[] = [];
    await direct('return items', [{ a: 1 }, { b: 2 }], { onInput: (i) => inputs.push(i) });
    const plain = JSON.parse(inputs[0]!) as { items: unknown[]; buffers?: unknown };
    assert.deepEqual(plain.items, [{ json: { a: 1 } }, { json: { b: 2 } }]);
    assert.equal('buffers' in plain, false);

    await direct('return items', [{}], { files: [{ data: csv() }], onInput: (i) => inputs.push(i) });
    assert.equal(inputs[1]!.includes(csv().data), false, "a file's bytes are not sent to code that does not read them");
    await direct("await helpers.getBinaryDataBuffer(0, 'data'); return items", [{}], { files: [{ data: csv() }], onInput: (i) => inputs.push(i) });
    assert.equal(inputs[2]!.includes(csv().data), true);
  });

  test('in a workflow, files pass through a Code node to the next node', async () => {
    const out = await runItems(
      node("const b = await this.helpers.getBinaryDataBuffer(0, 'data'); return [{ json: { n: b.length }, binary: $input.first().binary }]"),
      [{ json: {}, binary: { data: csv() } }],
    );
    assert.deepEqual(out[0]![0]!.json, { n: 8 });
    assert.equal(text(out[0]![0]!.binary?.data), 'a,b\n1,2\n');
  });
});
