import assert from 'node:assert/strict';
import { existsSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { pdfFile } from './support/file-fixtures';
import { startTestPlatform, type TestPlatform } from './support/platform';
import { importN8n, runSync } from './support/n8n-export';

/**
 * n8n's file nodes end to end, on PostgreSQL: n8n exports that turn items into files and back
 * (Convert To File, Compression, Extract From File, Move Binary Data, Spreadsheet File, Read
 * PDF): CSV, XLSX, XLS, ODS, RTF, zip, tar.gz, PDF and iCal; and Read/Write Files from Disk inside
 * FILES_DIR, refusing paths that leave it.
 */

let p: TestPlatform;
const base = mkdtempSync(path.join(tmpdir(), 'n8n-files-e2e-'));
const filesDir = path.join(base, 'files');

beforeAll(async () => {
  writeFileSync(path.join(base, 'secret.txt'), 'not for workflows');
  p = await startTestPlatform({ FILES_DIR: filesDir });
});
afterAll(async () => {
  await p?.stop();
  rmSync(base, { recursive: true, force: true });
});

const to = (node: string, index = 0) => ({ node, type: 'main', index });
const node = (name: string, type: string, typeVersion: number, x: number, parameters: Record<string, unknown>) => ({
  id: name,
  name,
  type: `n8n-nodes-base.${type}`,
  typeVersion,
  position: [x, 0],
  parameters,
});
/** Start -> Rows (the execution's data.rows as items) -> each node of `chain` in turn. */
const pipeline = (name: string, chain: ReturnType<typeof node>[]) => {
  const nodes = [
    node('Start', 'manualTrigger', 1, 0, {}),
    node('Rows', 'code', 2, 200, { jsCode: 'return $input.first().json.rows.map((json) => ({ json }));' }),
    ...chain,
  ];
  const connections: Record<string, unknown> = {};
  for (let i = 0; i < nodes.length - 1; i++) connections[nodes[i]!.name] = { main: [[to(nodes[i + 1]!.name)]] };
  return { name, settings: { executionOrder: 'v1' }, nodes, connections };
};

const importWorkflow = (workflow: Record<string, unknown>) => importN8n(p, workflow);
const run = (workflowId: string, data: Record<string, unknown>) => runSync(p, workflowId, data);

const ROWS = [
  { sku: 'A-1', name: 'Bolt, small', qty: '3' },
  { sku: 'B-2', name: 'Nut "hex"', qty: '40' },
];

describe('n8n file nodes, persisted', () => {
  test('items -> CSV -> zip -> unzip -> rows: the original items come back', async () => {
    const id = await importWorkflow(
      pipeline('CSV round trip', [
        node('To CSV', 'convertToFile', 1.1, 400, { options: { fileName: 'orders.csv' } }),
        node('Zip', 'compression', 1.1, 600, { operation: 'compress', outputFormat: 'zip', fileName: 'orders.zip' }),
        node('Unzip', 'compression', 1.1, 800, { operation: 'decompress' }),
        node('Rows back', 'extractFromFile', 1, 1000, { binaryPropertyName: 'file_0' }),
      ]),
    );
    const out = await run(id, { rows: ROWS });
    assert.equal(out.status, 'success', JSON.stringify(out.error));
    assert.deepEqual(out.result.items, ROWS);
  });

  test('Move Binary Data both ways: fields to a JSON file and back; one field to a text file and back into another', async () => {
    const id = await importWorkflow(
      pipeline('Move both ways', [
        node('To file', 'moveBinaryData', 1.1, 400, { mode: 'jsonToBinary', options: { fileName: 'row.json' } }),
        node('Back', 'moveBinaryData', 1, 600, {}),
        node('Name to file', 'moveBinaryData', 1.1, 800, {
          mode: 'jsonToBinary',
          convertAllData: false,
          sourceKey: 'name',
          destinationKey: 'label',
          options: { useRawData: true, mimeType: 'text/plain' },
        }),
        node('Label back', 'moveBinaryData', 1.1, 1000, { setAllData: false, sourceKey: 'label', destinationKey: 'label' }),
      ]),
    );
    const out = await run(id, { rows: ROWS });
    assert.equal(out.status, 'success', JSON.stringify(out.error));
    assert.deepEqual(
      out.result.items,
      ROWS.map(({ name, ...rest }) => ({ ...rest, label: name })),
    );
  });

  test('a spreadsheet round trip through XLSX keeps the rows, typed with rawData', async () => {
    const id = await importWorkflow(
      pipeline('XLSX round trip', [
        node('To XLSX', 'spreadsheetFile', 2, 400, { operation: 'toFile', fileFormat: 'xlsx', options: { sheetName: 'Stock' } }),
        node('From XLSX', 'spreadsheetFile', 2, 600, { options: { sheetName: 'Stock', rawData: true } }),
      ]),
    );
    const rows = [
      { sku: 'A-1', qty: 3, ok: true },
      { sku: 'B-2', qty: 40, ok: false },
    ];
    const out = await run(id, { rows });
    assert.equal(out.status, 'success', JSON.stringify(out.error));
    assert.deepEqual(out.result.items, rows);
  });

  test('Read/Write Files from Disk: writes and reads inside FILES_DIR; ../ and an absolute path outside fail the node', async () => {
    const id = await importWorkflow(
      pipeline('Disk round trip', [
        node('To text', 'convertToFile', 1.1, 400, { operation: 'toText', sourceProperty: 'name' }),
        node('Write', 'readWriteFile', 1, 600, { operation: 'write', fileName: "=notes/{{ $('Rows').item.json.sku }}.txt" }),
        node('Read', 'readWriteFile', 1, 800, { fileSelector: 'notes/*.txt', options: { dataPropertyName: 'note' } }),
        node('Text', 'extractFromFile', 1, 1000, { operation: 'text', binaryPropertyName: 'note', destinationKey: 'text', options: { keepSource: 'json' } }),
      ]),
    );
    const out = await run(id, { rows: ROWS });
    assert.equal(out.status, 'success', JSON.stringify(out.error));
    assert.equal(readFileSync(path.join(filesDir, 'notes', 'A-1.txt'), 'utf8'), 'Bolt, small');
    // Read runs once per written item: each run reads both files.
    assert.deepEqual(
      out.result.items.map((i) => [i.fileName, i.text]),
      [
        ['A-1.txt', 'Bolt, small'],
        ['B-2.txt', 'Nut "hex"'],
        ['A-1.txt', 'Bolt, small'],
        ['B-2.txt', 'Nut "hex"'],
      ],
    );

    const escape = await importWorkflow(
      pipeline('Escape', [
        node('To text', 'convertToFile', 1.1, 400, { operation: 'toText', sourceProperty: 'name' }),
        node('Write', 'readWriteFile', 1, 600, { operation: 'write', fileName: '../escaped.txt' }),
      ]),
    );
    const refused = await run(escape, { rows: [ROWS[0]] });
    assert.equal(refused.status, 'error');
    assert.equal(refused.error.node, 'Write');
    assert.match(refused.error.message, /"\.\.\/escaped\.txt" is outside the files folder \(FILES_DIR\)/);
    assert.equal(existsSync(path.join(base, 'escaped.txt')), false);

    const steal = await importWorkflow(pipeline('Steal', [node('Read', 'readWriteFile', 1, 400, { fileSelector: path.join(base, 'secret.txt') })]));
    const denied = await run(steal, { rows: [{}] });
    assert.equal(denied.status, 'error');
    assert.match(denied.error.message, /is outside the files folder/);
    assert.doesNotMatch(JSON.stringify(denied), /not for workflows/);
  });

  test('a PDF sent as base64 becomes a file and is read: text, pages and description; the legacy Read PDF opens an encrypted one', async () => {
    const id = await importWorkflow(
      pipeline('PDF text', [
        node('To file', 'convertToFile', 1.1, 400, { operation: 'toBinary', sourceProperty: 'pdf', options: { fileName: 'invoice.pdf' } }),
        node('Read', 'extractFromFile', 1, 600, { operation: 'pdf', options: { joinPages: false } }),
      ]),
    );
    const pdf = pdfFile({ pages: [['Invoice 42', 'Total 10 EUR'], ['Thank you']], info: { Title: 'Invoice 42', Author: 'Acme' } });
    const out = await run(id, { rows: [{ pdf: pdf.toString('base64') }] });
    assert.equal(out.status, 'success', JSON.stringify(out.error));
    const [item] = out.result.items as [
      { customer: string; numpages: number; numrender: number; text: string[]; info: Record<string, unknown>; version: string },
    ];
    assert.deepEqual(Object.keys(item), ['numpages', 'numrender', 'info', 'text', 'version']);
    assert.equal(item.numpages, 2);
    assert.equal(item.numrender, 2);
    assert.deepEqual(item.text, ['Invoice 42\nTotal 10 EUR', 'Thank you']);
    assert.equal(item.info.Title, 'Invoice 42');
    assert.equal(item.info.Author, 'Acme');
    assert.equal(item.version, '4.9.155');

    const legacy = await importWorkflow(
      pipeline('Read PDF', [
        node('To file', 'convertToFile', 1.1, 400, { operation: 'toBinary', sourceProperty: 'pdf', options: { fileName: 'payroll.pdf' } }),
        node('Read PDF', 'readPDF', 1, 600, { encrypted: true, password: '={{ $("Rows").item.json.password }}' }),
      ]),
    );
    const locked = pdfFile({ pages: [['Payroll March']], password: 's3cret' });
    const opened = await run(legacy, { rows: [{ pdf: locked.toString('base64'), password: 's3cret' }] });
    assert.equal(opened.status, 'success', JSON.stringify(opened.error));
    assert.equal(opened.result.items[0]!.text, 'Payroll March');
    const refused = await run(legacy, { rows: [{ pdf: locked.toString('base64'), password: 'guess' }] });
    assert.equal(refused.status, 'error');
    assert.equal(refused.error.node, 'Read PDF');
    assert.match(refused.error.message, /The PDF could not be opened: the password is incorrect/);
  });

  test('an iCalendar file becomes one object with its events', async () => {
    const id = await importWorkflow(
      pipeline('ICS', [
        node('To file', 'convertToFile', 1.1, 400, { operation: 'toText', sourceProperty: 'ics', options: { fileName: 'team.ics' } }),
        node('Events', 'extractFromFile', 1, 600, { operation: 'fromIcs', destinationKey: 'calendar' }),
      ]),
    );
    const ics = [
      'BEGIN:VCALENDAR',
      'VERSION:2.0',
      'PRODID:-//Acme//Planner//EN',
      'BEGIN:VEVENT',
      'UID:review@acme',
      'DTSTAMP:20260101T080000Z',
      'DTSTART:20260302T100000Z',
      'DTEND:20260302T110000Z',
      'SUMMARY:Review',
      'END:VEVENT',
      'END:VCALENDAR',
    ].join('\r\n');
    const out = await run(id, { rows: [{ ics }] });
    assert.equal(out.status, 'success', JSON.stringify(out.error));
    assert.deepEqual(out.result.items, [
      {
        calendar: {
          version: '2.0',
          prodId: '-//Acme//Planner//EN',
          events: [
            {
              uid: 'review@acme',
              summary: 'Review',
              start: { date: '2026-03-02T10:00:00.000Z', type: 'DATE-TIME' },
              end: { date: '2026-03-02T11:00:00.000Z', type: 'DATE-TIME' },
              stamp: { date: '2026-01-01T08:00:00.000Z', type: 'DATE-TIME' },
            },
          ],
        },
      },
    ]);
  });

  test('items -> CSV -> tar.gz -> unpacked -> rows, and items -> ODS -> rows typed with rawData: the original items come back', async () => {
    const tgz = await importWorkflow(
      pipeline('Tar round trip', [
        node('To CSV', 'convertToFile', 1.1, 400, { options: { fileName: 'orders.csv' } }),
        node('Tar', 'compression', 1.1, 600, { operation: 'compress', outputFormat: 'targz', fileName: 'orders.tar.gz' }),
        node('Untar', 'compression', 1.1, 800, { operation: 'decompress', outputPrefix: 'member_' }),
        node('Rows back', 'extractFromFile', 1, 1000, { binaryPropertyName: 'member_0' }),
      ]),
    );
    const out = await run(tgz, { rows: ROWS });
    assert.equal(out.status, 'success', JSON.stringify(out.error));
    assert.deepEqual(out.result.items, ROWS);

    const ods = await importWorkflow(
      pipeline('ODS round trip', [
        node('To ODS', 'convertToFile', 1.1, 400, { operation: 'ods', options: { sheetName: 'Stock' } }),
        node('From ODS', 'extractFromFile', 1, 600, { operation: 'ods', options: { sheetName: 'Stock', rawData: true } }),
      ]),
    );
    const rows = [
      { sku: 'A-1', qty: 3, ok: true },
      { sku: 'B-2', qty: 40.5, ok: false },
    ];
    const typed = await run(ods, { rows });
    assert.equal(typed.status, 'success', JSON.stringify(typed.error));
    assert.deepEqual(typed.result.items, rows);
  });

  test('Extract From File 1.1 fails on a CSV record of the wrong length where 1 keeps the rows before it; skipRecordsWithErrors drops it', async () => {
    const csvPipeline = (name: string, version: number, options: Record<string, unknown> = {}) =>
      pipeline(name, [
        node('To file', 'convertToFile', 1.1, 400, { operation: 'toText', sourceProperty: 'csv', options: { fileName: 'stock.csv' } }),
        node('Rows back', 'extractFromFile', version, 600, { options }),
      ]);
    const rows = [{ csv: 'sku,qty\nA-1,3\nB-2,40,extra\nC-3,7\n' }];
    const v1 = await run(await importWorkflow(csvPipeline('CSV 1', 1)), { rows });
    assert.equal(v1.status, 'success', JSON.stringify(v1.error));
    assert.deepEqual(v1.result.items, [{ sku: 'A-1', qty: '3' }]);
    const v11 = await run(await importWorkflow(csvPipeline('CSV 1.1', 1.1)), { rows });
    assert.equal(v11.status, 'error');
    assert.equal(v11.error.node, 'Rows back');
    assert.match(v11.error.message, /Invalid Record Length: columns length is 2, got 3 on line 3/);
    const skipping = await run(await importWorkflow(csvPipeline('CSV 1.1 skipping', 1.1, { skipRecordsWithErrors: { value: { enabled: true } } })), { rows });
    assert.equal(skipping.status, 'success', JSON.stringify(skipping.error));
    assert.deepEqual(skipping.result.items, [
      { sku: 'A-1', qty: '3' },
      { sku: 'C-3', qty: '7' },
    ]);
  });

  test("items -> XLS (Spreadsheet File's default) -> rows typed with rawData, items -> RTF -> rows as text; a file that is no XLS fails the node", async () => {
    const rows = [
      { sku: 'A-1', name: 'Zoë 😀', qty: 3, ok: true },
      { sku: 'B-2', name: 'x'.repeat(9000), qty: 40.5, ok: false },
    ];
    const xls = await importWorkflow(
      pipeline('XLS round trip', [
        node('To XLS', 'spreadsheetFile', 2, 400, { operation: 'toFile', options: { sheetName: 'Stock' } }),
        node('From XLS', 'extractFromFile', 1.1, 600, { operation: 'xls', options: { sheetName: 'Stock', rawData: true } }),
      ]),
    );
    const typed = await run(xls, { rows });
    assert.equal(typed.status, 'success', JSON.stringify(typed.error));
    assert.deepEqual(typed.result.items, rows);

    const rtf = await importWorkflow(
      pipeline('RTF round trip', [
        node('To RTF', 'convertToFile', 1.1, 400, { operation: 'rtf', options: { fileName: 'stock.rtf' } }),
        node('From RTF', 'spreadsheetFile', 2, 600, {}),
      ]),
    );
    const text = await run(rtf, { rows: ROWS });
    assert.equal(text.status, 'success', JSON.stringify(text.error));
    assert.deepEqual(text.result.items, ROWS);

    const junk = await importWorkflow(
      pipeline('Not an XLS', [
        node('To file', 'convertToFile', 1.1, 400, { operation: 'toText', sourceProperty: 'sku', options: { fileName: 'stock.xls' } }),
        node('Read sheet', 'extractFromFile', 1.1, 600, { operation: 'xls' }),
      ]),
    );
    const failed = await run(junk, { rows: ROWS });
    assert.equal(failed.status, 'error');
    assert.equal(failed.error.node, 'Read sheet');
    assert.match(failed.error.message, /not a readable XLS workbook: it is not a Compound File/);
  });
});
