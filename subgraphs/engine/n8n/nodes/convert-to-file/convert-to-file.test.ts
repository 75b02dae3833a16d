import assert from 'node:assert/strict';
import ExcelJS from 'exceljs';
import { strFromU8, unzipSync } from 'fflate';
import { disposeHarness, importRefusal, itemsFailure, runItems } from '../../../../../test/support/n8n-harness';
import type { Item } from '../../../nodes';

afterAll(disposeHarness);

const convert = (parameters: Record<string, unknown>, typeVersion = 1.1) => ({ type: 'n8n-nodes-base.convertToFile', typeVersion, parameters });
const items = (...list: Record<string, unknown>[]): Item[] => list.map((json) => ({ json }));
const text = (item: Item, key = 'data') => Buffer.from(item.binary![key]!.data, 'base64').toString('utf8');

describe('n8n Convert To File', () => {
  test('csv (the default): one file of all items, nested fields flattened, cells quoted as needed, booleans as TRUE/FALSE', async () => {
    const [[file, ...rest]] = (await runItems(convert({}), items({ name: 'Ann', tags: { a: 1 } }, { name: 'Bo, "B"', ok: true }))) as [Item[]];
    assert.equal(rest.length, 0);
    assert.deepEqual(file!.json, {});
    assert.equal(text(file!), 'name,tags.a,ok\nAnn,1,\n"Bo, ""B""",,TRUE');
    assert.equal(file!.binary!.data!.fileName, 'File.csv');
    assert.equal(file!.binary!.data!.mimeType, 'text/csv');
  });

  test('csv options: delimiter, no header row, fileName, binaryPropertyName', async () => {
    const params = { operation: 'csv', binaryPropertyName: 'sheet', options: { delimiter: ';', headerRow: false, fileName: 'out.csv' } };
    const [[file]] = (await runItems(convert(params), items({ a: 1, b: 'x;y' }))) as [[Item]];
    assert.equal(text(file, 'sheet'), '1;"x;y"');
    assert.equal(file.binary!.sheet!.fileName, 'out.csv');
  });

  test('xlsx: a workbook exceljs reads back with typed cells under sheetName', async () => {
    const [[file]] = (await runItems(convert({ operation: 'xlsx', options: { sheetName: 'People' } }), items({ name: 'Ann', age: 31, member: true }))) as [
      [Item],
    ];
    const workbook = new ExcelJS.Workbook();
    await workbook.xlsx.load(Buffer.from(file.binary!.data!.data, 'base64') as unknown as ArrayBuffer);
    const sheet = workbook.getWorksheet('People')!;
    assert.deepEqual((sheet.getRow(1).values as unknown[]).slice(1), ['name', 'age', 'member']);
    assert.deepEqual((sheet.getRow(2).values as unknown[]).slice(1), ['Ann', 31, true]);
    assert.equal(file.binary!.data!.fileName, 'File.xlsx');
  });

  test('html: one table, its text escaped', async () => {
    const [[file]] = (await runItems(convert({ operation: 'html' }), items({ a: '<b>' }))) as [[Item]];
    assert.match(text(file), /<table><tr><td>a<\/td><\/tr><tr><td>&lt;b&gt;<\/td><\/tr><\/table>/);
  });

  test('toJson: all items in one file (format indents), or one file per item', async () => {
    const [[once]] = (await runItems(convert({ operation: 'toJson', options: { format: true } }), items({ a: 1 }, { a: 2 }))) as [[Item]];
    assert.equal(text(once), '[\n  {\n    "a": 1\n  },\n  {\n    "a": 2\n  }\n]');
    assert.equal(once.binary!.data!.fileName, 'file.json');
    const [each] = await runItems(
      convert({ operation: 'toJson', mode: 'each', options: { fileName: '={{ "item-" + $json.a + ".json" }}' } }),
      items({ a: 1 }, { a: 2 }),
    );
    assert.deepEqual(
      each!.map((i) => [text(i), i.binary!.data!.fileName, i.pairedItem]),
      [
        ['{"a":1}', 'item-1.json', { item: 0 }],
        ['{"a":2}', 'item-2.json', { item: 1 }],
      ],
    );
  });

  test('toText: a field (dotted path) as a text file, with encoding and BOM', async () => {
    const [[file]] = (await runItems(
      convert({ operation: 'toText', sourceProperty: 'body.text', options: { encoding: 'utf16le', addBOM: true } }),
      items({ body: { text: 'hé' } }),
    )) as [[Item]];
    const bytes = Buffer.from(file.binary!.data!.data, 'base64');
    assert.deepEqual([...bytes], [0xff, 0xfe, 0x68, 0x00, 0xe9, 0x00]);
    assert.equal(file.binary!.data!.fileName, 'file.txt');
    const missing = await itemsFailure(convert({ operation: 'toText', sourceProperty: 'nope' }), items({ a: 1 }));
    assert.match(missing.message, /The value in "nope" is not set/);
  });

  test('toBinary: a base64 field (or a data: URL) as a file with fileName and mimeType; text that is not base64 fails', async () => {
    const base64 = Buffer.from('%PDF-1.4').toString('base64');
    const [[file]] = (await runItems(convert({ operation: 'toBinary', sourceProperty: 'b64', options: { fileName: 'doc.pdf' } }), items({ b64: base64 }))) as [
      [Item],
    ];
    assert.equal(text(file), '%PDF-1.4');
    assert.equal(file.binary!.data!.mimeType, 'application/pdf');
    const [[url]] = (await runItems(convert({ operation: 'toBinary', sourceProperty: 'u' }), items({ u: `data:image/png;base64,${base64}` }))) as [[Item]];
    assert.equal(url.binary!.data!.mimeType, 'image/png');
    assert.equal(url.binary!.data!.fileName, 'file.png');
    const bad = await itemsFailure(convert({ operation: 'toBinary', sourceProperty: 'u' }), items({ u: 'not base64!' }));
    assert.match(bad.message, /The provided string is not valid base64 data/);
  });

  test('iCal: one event file per item', async () => {
    const params = {
      operation: 'iCal',
      title: '={{ $json.t }}',
      start: '2026-01-02T10:00:00Z',
      end: '2026-01-02T11:30:00Z',
      additionalFields: { location: 'Room 1', uid: 'abc@example.com' },
    };
    const [[file]] = (await runItems(convert(params), items({ t: 'Review' }))) as [[Item]];
    const ics = text(file);
    assert.match(ics, /BEGIN:VEVENT/);
    assert.match(ics, /SUMMARY:Review/);
    assert.match(ics, /DTSTART:20260102T100000Z/);
    assert.match(ics, /DTEND:20260102T113000Z/);
    assert.match(ics, /LOCATION:Room 1/);
    assert.match(ics, /UID:abc@example.com/);
    assert.equal(file.binary!.data!.fileName, 'event.ics');
    assert.equal(file.binary!.data!.mimeType, 'text/calendar');
  });

  test('ods: an OpenDocument spreadsheet (mimetype first, stored) with typed cells and text kept as written', async () => {
    const [[file]] = (await runItems(
      convert({ operation: 'ods', options: { fileName: 'stock.ods', sheetName: 'Stock & co' } }),
      items({ sku: 'A<1>', qty: 3.5, ok: true, note: 'two  spaces\tand\nlines' }, { sku: 'B', nested: { x: 1 } }),
    )) as [[Item]];
    assert.deepEqual(file.json, {});
    assert.equal(file.binary!.data!.fileName, 'stock.ods');
    assert.equal(file.binary!.data!.mimeType, 'application/vnd.oasis.opendocument.spreadsheet');
    const bytes = Buffer.from(file.binary!.data!.data, 'base64');
    // A reader recognises the format by the first entry's name and its uncompressed content at offset 38.
    assert.equal(bytes.subarray(30, 38).toString(), 'mimetype');
    assert.equal(bytes.subarray(38, 84).toString(), 'application/vnd.oasis.opendocument.spreadsheet');
    const content = strFromU8(unzipSync(new Uint8Array(bytes))['content.xml']!);
    assert.match(content, /<table:table table:name="Stock &amp; co">/);
    assert.match(content, /<text:p>sku<\/text:p>.*<text:p>nested\.x<\/text:p>/);
    assert.match(content, /<table:table-cell office:value-type="string"><text:p>A&lt;1&gt;<\/text:p><\/table:table-cell>/);
    assert.match(content, /office:value-type="float" office:value="3\.5"/);
    assert.match(content, /office:value-type="boolean" office:boolean-value="true"><text:p>TRUE<\/text:p>/);
    assert.match(content, /<text:p>two <text:s text:c="1"\/>spaces<text:tab\/>and<\/text:p><text:p>lines<\/text:p>/);
    const [rows] = await runItems({ type: 'n8n-nodes-base.extractFromFile', typeVersion: 1, parameters: { operation: 'ods', options: { rawData: true } } }, [
      file,
    ]);
    assert.deepEqual(
      rows!.map((i) => i.json),
      [
        { sku: 'A<1>', qty: 3.5, ok: true, note: 'two  spaces\tand\nlines' },
        { sku: 'B', 'nested.x': 1 },
      ],
    );
  });

  test('xls: an Excel 97-2003 workbook (a Compound File) under sheetName, with File.xls and its MIME type', async () => {
    const [[file]] = (await runItems(convert({ operation: 'xls', options: { sheetName: 'People' } }), items({ name: 'Ann', age: 31, member: true }))) as [
      [Item],
    ];
    const bytes = Buffer.from(file.binary!.data!.data, 'base64');
    assert.equal(bytes.subarray(0, 8).toString('hex'), 'd0cf11e0a1b11ae1');
    assert.equal(file.binary!.data!.fileName, 'File.xls');
    assert.equal(file.binary!.data!.mimeType, 'application/vnd.ms-excel');
    const back = await runItems(
      { type: 'n8n-nodes-base.extractFromFile', typeVersion: 1.1, parameters: { operation: 'xls', options: { sheetName: 'People', rawData: true } } },
      [file],
    );
    assert.deepEqual(
      back[0]!.map((i) => i.json),
      [{ name: 'Ann', age: 31, member: true }],
    );
  });

  test('xls: a sheet name Excel refuses, a cell longer than Excel holds, more columns than a sheet has fail the node saying so', async () => {
    assert.match((await itemsFailure(convert({ operation: 'xls', options: { sheetName: 'a/b' } }), items({ a: 1 }))).message, /may not/);
    assert.match((await itemsFailure(convert({ operation: 'xls' }), items({ a: 'x'.repeat(40_000) }))).message, /more than the 32767 an XLS cell may hold/);
    const wide = Object.fromEntries(Array.from({ length: 300 }, (_, i) => [`c${i}`, i]));
    assert.match((await itemsFailure(convert({ operation: 'xls' }), items(wide))).message, /300 columns, more than the 256/);
  });

  test('rtf: one table of text, \\ { } escaped, past ASCII as \\uN, every cell written', async () => {
    const [[file]] = (await runItems(convert({ operation: 'rtf' }), items({ a: 'x{y}', b: 'é' }, { a: 'z\\' }))) as [[Item]];
    assert.equal(file.binary!.data!.fileName, 'File.rtf');
    assert.equal(file.binary!.data!.mimeType, 'application/rtf');
    const body = text(file);
    assert.match(body, /^\{\\rtf1\\ansi/);
    assert.equal(body.match(/\\row/g)?.length, 3);
    assert.match(body, /\\pard\\intbl x\\\{y\\\}\\cell \\u233\?\\cell\\pard\\intbl\\row/);
    assert.match(body, /\\pard\\intbl z\\\\\\cell \\cell\\pard\\intbl\\row/);
  });

  test('iCal attendees and unknown encodings are refused at import, naming them', () => {
    for (const operation of ['rtf', 'xls', 'ods']) assert.equal(importRefusal(convert({ operation })), undefined, operation);
    assert.equal(importRefusal(convert({ operation: 'iCal', additionalFields: { attendeesUi: { values: [] } } }))?.option, 'additionalFields.attendeesUi');
    assert.equal(importRefusal(convert({ operation: 'toText', sourceProperty: 'a', options: { encoding: 'win1252' } }))?.option, 'options.encoding: win1252');
    assert.equal(importRefusal(convert({ operation: 'xlsx' }, 1)), undefined);
    assert.equal(importRefusal(convert({}, 2))?.reason, 'unsupported_version');
    assert.match(importRefusal(convert({ operation: 'toPdf' }))?.message ?? '', /operation.*must be one of csv/);
  });
});
