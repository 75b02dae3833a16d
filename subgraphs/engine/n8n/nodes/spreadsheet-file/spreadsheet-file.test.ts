import assert from 'node:assert/strict';
import { disposeHarness, importRefusal, itemsFailure, runItems } from '../../../../../test/support/n8n-harness';
import { prepareBinary, type Item } from '../../../nodes';

afterAll(disposeHarness);

const sheet = (parameters: Record<string, unknown>, typeVersion = 2) => ({ type: 'n8n-nodes-base.spreadsheetFile', typeVersion, parameters });
const ROWS = [{ json: { name: 'Ann', city: 'Oslo' } }, { json: { name: 'Bo', city: 'Rome' } }];

describe('n8n Spreadsheet File', () => {
  for (const version of [1, 2]) {
    test(`${version}: toFile xlsx then fromFile (autodetected) gives the rows back`, async () => {
      const [[file]] = (await runItems(sheet({ operation: 'toFile', fileFormat: 'xlsx', options: { fileName: 'people.xlsx' } }, version), ROWS)) as [[Item]];
      assert.equal(file.binary!.data!.fileName, 'people.xlsx');
      const [rows] = await runItems(sheet({}, version), [file]);
      assert.deepEqual(
        rows!.map((i) => i.json),
        ROWS.map((i) => i.json),
      );
    });
  }

  test('csv both ways, with a header row or without', async () => {
    const [[file]] = (await runItems(sheet({ operation: 'toFile', fileFormat: 'csv', binaryPropertyName: 'csv' }), ROWS)) as [[Item]];
    assert.equal(Buffer.from(file.binary!.csv!.data, 'base64').toString(), 'name,city\nAnn,Oslo\nBo,Rome');
    assert.equal(file.binary!.csv!.fileName, 'spreadsheet.csv');
    const [rows] = await runItems(sheet({ binaryPropertyName: 'csv', fileFormat: 'csv', options: { headerRow: false } }), [file]);
    assert.deepEqual(rows![0]!.json, { row: ['name', 'city'] });
  });

  test('ods both ways: toFile ods then fromFile (autodetected) gives the rows back, typed with rawData', async () => {
    const rows = [{ json: { name: 'Ann', age: 31, member: true } }, { json: { name: 'Bo', age: 7, member: false } }];
    const [[file]] = (await runItems(sheet({ operation: 'toFile', fileFormat: 'ods', options: { sheetName: 'People' } }), rows)) as [[Item]];
    assert.equal(file.binary!.data!.fileName, 'spreadsheet.ods');
    assert.equal(file.binary!.data!.mimeType, 'application/vnd.oasis.opendocument.spreadsheet');
    const [typed] = await runItems(sheet({ options: { sheetName: 'People', rawData: true } }), [file]);
    assert.deepEqual(
      typed!.map((i) => i.json),
      rows.map((i) => i.json),
    );
    const [text] = await runItems(sheet({}, 1), [file]);
    assert.deepEqual(text![0]!.json, { name: 'Ann', age: '31', member: 'TRUE' });
  });

  for (const version of [1, 2]) {
    test(`${version}: toFile with n8n's default format (xls) then fromFile (autodetected) gives the rows back, typed with rawData`, async () => {
      const rows = [{ json: { name: 'Ann', age: 31, member: true } }, { json: { name: 'Bo', age: 7.5, member: false } }];
      const [[file]] = (await runItems(sheet({ operation: 'toFile', options: { sheetName: 'People' } }, version), rows)) as [[Item]];
      assert.equal(file.binary!.data!.fileName, 'spreadsheet.xls');
      assert.equal(file.binary!.data!.mimeType, 'application/vnd.ms-excel');
      const [typed] = await runItems(sheet({ options: { rawData: true } }, version), [file]);
      assert.deepEqual(
        typed!.map((i) => i.json),
        rows.map((i) => i.json),
      );
    });
  }

  test('rtf both ways: toFile rtf then fromFile (autodetected, then chosen) gives the rows back as text', async () => {
    const [[file]] = (await runItems(sheet({ operation: 'toFile', fileFormat: 'rtf' }), ROWS)) as [[Item]];
    assert.equal(file.binary!.data!.fileName, 'spreadsheet.rtf');
    for (const params of [{}, { fileFormat: 'rtf' }]) {
      const [rows] = await runItems(sheet(params), [file]);
      assert.deepEqual(
        rows!.map((i) => i.json),
        ROWS.map((i) => i.json),
      );
    }
  });

  test('autodetect reads the first bytes: an XLS by another name, and a CSV sent as application/vnd.ms-excel', async () => {
    const [[xls]] = (await runItems(sheet({ operation: 'toFile', fileFormat: 'xls' }), ROWS)) as [[Item]];
    const renamed: Item = { json: {}, binary: { data: prepareBinary(Buffer.from(xls.binary!.data!.data, 'base64'), { fileName: 'export.bin' }) } };
    const csv: Item = {
      json: {},
      binary: { data: prepareBinary(Buffer.from('name,city\nAnn,Oslo\nBo,Rome'), { fileName: 'upload', mimeType: 'application/vnd.ms-excel' }) },
    };
    for (const file of [renamed, csv]) {
      const [rows] = await runItems(sheet({}), [file]);
      assert.deepEqual(
        rows!.map((i) => i.json),
        ROWS.map((i) => i.json),
      );
    }
  });

  test('a file of another format fails naming it; every format n8n offers is imported', async () => {
    const pdf: Item = { json: {}, binary: { data: prepareBinary(Buffer.from('%PDF'), { fileName: 'a.pdf' }) } };
    assert.match((await itemsFailure(sheet({}), [pdf])).message, /only CSV, XLSX, XLS, ODS, HTML and RTF/);
    assert.equal(importRefusal(sheet({ operation: 'toFile' })), undefined);
    assert.equal(importRefusal(sheet({ operation: 'toFile', fileFormat: 'rtf' }, 1)), undefined);
    assert.equal(importRefusal(sheet({ fileFormat: 'xls' })), undefined);
    assert.equal(importRefusal(sheet({ operation: 'toFile', fileFormat: 'ods' }, 1)), undefined);
    assert.equal(importRefusal(sheet({ operation: 'toFile', fileFormat: 'xlsx' })), undefined);
    assert.equal(importRefusal(sheet({}, 3))?.reason, 'unsupported_version');
  });
});
