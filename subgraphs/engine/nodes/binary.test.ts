import assert from 'node:assert/strict';
import { binaryBuffer, prepareBinary } from './binary';

test('binary item data: described as n8n describes a file, and its bytes given back', () => {
  const binary = prepareBinary(Buffer.from('a,b\n1,2\n'), { fileName: 'rows.csv' });
  assert.deepEqual(binary, {
    data: Buffer.from('a,b\n1,2\n').toString('base64'),
    mimeType: 'text/csv',
    fileType: 'text',
    fileName: 'rows.csv',
    fileExtension: 'csv',
    fileSize: '8 B',
    bytes: 8,
  });
  assert.equal(binaryBuffer({ json: {}, binary: { data: binary } }, 'data').toString(), 'a,b\n1,2\n');
});

test('binary item data: the extension comes from the MIME type when there is no file name', () => {
  const binary = prepareBinary(Buffer.alloc(2048), { mimeType: 'application/pdf' });
  assert.equal(binary.fileExtension, 'pdf');
  assert.equal(binary.fileType, 'pdf');
  assert.equal(binary.fileSize, '2.05 kB');
});

test('binary item data: a missing key is named, with the keys the item has', () => {
  const item = { json: {}, binary: { file: prepareBinary(Buffer.from('x')) } };
  assert.throws(() => binaryBuffer(item, 'data', 3), /no binary field 'data' \(it has: file\)/);
});
