import assert from 'node:assert/strict';
import ExcelJS from 'exceljs';
import { disposeHarness, importRefusal, itemsFailure, runItems, runWorkflow } from '../../../../../test/support/n8n-harness';
import { prepareBinary, type Item } from '../../../nodes';

afterAll(disposeHarness);

const extract = (parameters: Record<string, unknown>) => ({ type: 'n8n-nodes-base.extractFromFile', typeVersion: 1, parameters });
const file = (content: string | Buffer, fileName: string, json: Record<string, unknown> = {}, key = 'data'): Item => ({
  json,
  binary: { [key]: prepareBinary(typeof content === 'string' ? Buffer.from(content) : content, { fileName }) },
});
const jsonOf = (out: Item[][]) => out[0]!.map((i) => i.json);

describe("n8n's Convert To File test workflow, through Extract From File", () => {
  const GATSBY = {
    id: '23423532',
    name: 'Jay Gatsby',
    email: 'gatsby@west-egg.com',
    notes: 'Keeps asking about a green light??',
    country: 'US',
    created: '1925-04-10',
    base64: 'VGhpcyBpcyBzb21lIHRleHQgZW5jb2RlZCBhcyBiYXNlNjQ=',
  };
  const n = (name: string, type: string, typeVersion: number, parameters: Record<string, unknown>) => ({
    name,
    type: `n8n-nodes-base.${type}`,
    typeVersion,
    position: [0, 0],
    parameters,
  });
  const to = (node: string) => ({ node, type: 'main', index: 0 });
  /** Each Convert To File of n8n's workflow, the Extract From File after it, and the result it pins. */
  const PAIRS: [string, Record<string, unknown>, number, string, Record<string, unknown>, Record<string, unknown>][] = [
    [
      'Convert to File2',
      { operation: 'toBinary', sourceProperty: 'base64', options: {} },
      1.1,
      'Extract From File',
      { operation: 'text', options: {} },
      { data: 'This is some text encoded as base64' },
    ],
    [
      'Convert to Text File',
      { operation: 'toText', sourceProperty: 'notes', options: {} },
      1,
      'Extract From Text File',
      { operation: 'text', options: {} },
      { data: GATSBY.notes },
    ],
    [
      'Convert to JSON (with Formatting)',
      { operation: 'toJson', options: { format: true } },
      1.1,
      'Extract From JSON (1)',
      { operation: 'text', options: {} },
      { data: JSON.stringify([GATSBY], null, 2) },
    ],
    [
      'Convert to JSON',
      { operation: 'toJson', options: {} },
      1.1,
      'Extract From JSON (2)',
      { operation: 'text', options: {} },
      { data: JSON.stringify([GATSBY]) },
    ],
    ['Convert to CSV', { options: {} }, 1.1, 'Extract From CSV', { options: {} }, GATSBY],
    ['Convert to CSV (custom delimiter)', { options: { delimiter: '|' } }, 1.1, 'Extract From Custom Delimiter', { options: { delimiter: '|' } }, GATSBY],
  ];

  test('every pinned result is reproduced', async () => {
    const run = await runWorkflow(
      {
        nodes: [
          n('Start', 'manualTrigger', 1, {}),
          n('Code', 'noOp', 1, {}),
          ...PAIRS.flatMap(([convert, cp, version, extract, ep]) => [n(convert, 'convertToFile', version, cp), n(extract, 'extractFromFile', 1, ep)]),
        ],
        connections: {
          Start: { main: [[to('Code')]] },
          Code: { main: [PAIRS.map(([convert]) => to(convert))] },
          ...Object.fromEntries(PAIRS.map(([convert, , , extract]) => [convert, { main: [[to(extract)]] }])),
        },
        settings: { executionOrder: 'v1' },
      },
      { pinned: { Code: [[GATSBY]] } },
    );
    assert.equal(run.status, 'success', JSON.stringify(run.error));
    for (const [, , , extract, , expected] of PAIRS) assert.deepEqual(run.nodes.get(extract), [[expected]], extract);
  });
});

describe('n8n Extract From File', () => {
  test('csv (the default): one item per row keyed by the header, every cell text, empty cells left out', async () => {
    const out = await runItems(extract({}), [file('name,age,note\nAnn,31,\n"Bo, B",7,"say ""hi"""\n', 'people.csv')]);
    assert.deepEqual(jsonOf(out), [
      { name: 'Ann', age: '31' },
      { name: 'Bo, B', age: '7', note: 'say "hi"' },
    ]);
    assert.deepEqual(
      out[0]!.map((i) => i.pairedItem),
      [{ item: 0 }, { item: 0 }],
    );
  });

  test('csv options: delimiter, includeEmptyCells, headerRow off ({row}), fromLine, maxRowCount, binaryPropertyName', async () => {
    const csv = 'a;b\n1;\n2;x\n3;y\n';
    assert.deepEqual(jsonOf(await runItems(extract({ options: { delimiter: ';', includeEmptyCells: true, maxRowCount: 2 } }), [file(csv, 'f.csv')])), [
      { a: '1', b: '' },
      { a: '2', b: 'x' },
    ]);
    assert.deepEqual(
      jsonOf(await runItems(extract({ binaryPropertyName: 'f', options: { delimiter: ';', headerRow: false, fromLine: 2 } }), [file(csv, 'f.csv', {}, 'f')])),
      [{ row: ['2', 'x'] }, { row: ['3', 'y'] }],
    );
  });

  test('xlsx: the first sheet (or sheetName) as text cells, rawData keeps numbers and booleans', async () => {
    const workbook = new ExcelJS.Workbook();
    workbook.addWorksheet('First').addRows([['id'], ['x']]);
    workbook.addWorksheet('People').addRows([
      ['name', 'age', 'member'],
      ['Ann', 31, true],
    ]);
    const bytes = Buffer.from(await workbook.xlsx.writeBuffer());
    assert.deepEqual(jsonOf(await runItems(extract({ operation: 'xlsx' }), [file(bytes, 'w.xlsx')])), [{ id: 'x' }]);
    assert.deepEqual(jsonOf(await runItems(extract({ operation: 'xlsx', options: { sheetName: 'People' } }), [file(bytes, 'w.xlsx')])), [
      { name: 'Ann', age: '31', member: 'TRUE' },
    ]);
    assert.deepEqual(jsonOf(await runItems(extract({ operation: 'xlsx', options: { sheetName: 'People', rawData: true } }), [file(bytes, 'w.xlsx')])), [
      { name: 'Ann', age: 31, member: true },
    ]);
    const missing = await itemsFailure(extract({ operation: 'xlsx', options: { sheetName: 'Nope' } }), [file(bytes, 'w.xlsx')]);
    assert.match(missing.message, /no sheet named "Nope"/);
  });

  test('html: the first table', async () => {
    const html = '<p>x</p><table><tr><th>k</th><th>v</th></tr><tr><td>a</td><td>1</td></tr></table>';
    assert.deepEqual(jsonOf(await runItems(extract({ operation: 'html' }), [file(html, 't.html')])), [{ k: 'a', v: '1' }]);
  });

  test('fromJson, text, xml, binaryToPropery into destinationKey; keepSource json, binary, both or unset; BOM stripped; an item without the file left out', async () => {
    const json = file('\ufeff{"a":[1,2]}', 'a.json', { kept: true });
    const [[parsed]] = (await runItems(extract({ operation: 'fromJson' }), [json])) as [[Item]];
    assert.deepEqual(parsed.json, { data: { a: [1, 2] } });
    assert.equal(parsed.binary, undefined);
    const [[kept]] = (await runItems(extract({ operation: 'fromJson', options: { keepSource: 'json' } }), [json])) as [[Item]];
    assert.deepEqual(kept.json, { kept: true, data: { a: [1, 2] } });
    assert.equal(kept.binary, undefined);
    const [[both]] = (await runItems(extract({ operation: 'text', destinationKey: 'body.text', options: { keepSource: 'both' } }), [json])) as [[Item]];
    assert.deepEqual(both.json, { kept: true, body: { text: '{"a":[1,2]}' } });
    assert.ok(both.binary?.data);
    const [[binaryOnly]] = (await runItems(extract({ operation: 'text', options: { keepSource: 'binary', stripBOM: false } }), [json])) as [[Item]];
    assert.deepEqual(binaryOnly.json, { data: '\ufeff{"a":[1,2]}' });
    const [skipped] = await runItems(extract({ operation: 'text' }), [{ json: { none: true } }, json]);
    assert.deepEqual(
      skipped!.map((i) => i.pairedItem),
      [{ item: 1 }],
    );
    assert.ok(binaryOnly.binary?.data);
    const [[xml]] = (await runItems(extract({ operation: 'xml' }), [file('<r><id>1</id></r>', 'r.xml')])) as [[Item]];
    assert.deepEqual(xml.json, { data: { r: { id: '1' } } });
    const [[b64]] = (await runItems(extract({ operation: 'binaryToPropery', destinationKey: 'b' }), [file('hi', 'h.txt')])) as [[Item]];
    assert.deepEqual(b64.json, { b: 'aGk=' });
    const bad = await itemsFailure(extract({ operation: 'fromJson' }), [file('{nope', 'x.json')]);
    assert.match(bad.message, /not valid JSON/);
  });

  test('an item without the file fails naming the field; with continueRegularOutput it becomes {error}', async () => {
    const failure = await itemsFailure(extract({}), [{ json: {} }]);
    assert.match(failure.message, /no binary field 'data'/);
    const [out] = await runItems({ ...extract({}), onError: 'continueRegularOutput' }, [{ json: {} }, file('a\n1', 'a.csv')]);
    assert.equal(out!.length, 2);
    assert.match(String(out![0]!.json.error), /no binary field/);
    assert.deepEqual(out![1]!.json, { a: '1' });
  });

  test('pdf, fromIcs, ods, rtf, xls and the range option are refused at import, naming them', () => {
    for (const operation of ['pdf', 'fromIcs', 'ods', 'rtf', 'xls']) {
      const refusal = importRefusal(extract({ operation }));
      assert.equal(refusal?.option, `operation: ${operation}`);
      assert.equal(refusal?.reason, 'unsupported_option');
    }
    assert.equal(importRefusal(extract({ operation: 'xlsx', options: { range: 'A1:B2' } }))?.option, 'options.range');
    assert.equal(importRefusal(extract({ operation: 'xlsx' })), undefined);
  });
});

test('an operation Extract From File does not have is refused at import, listing the ones it has', () => {
  assert.match(importRefusal(extract({ operation: 'fromDocx' }))?.message ?? '', /operation.*must be one of csv/);
});
