import assert from 'node:assert/strict';
import { existsSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { startTestPlatform, type TestPlatform } from './support/platform';
import { importN8n, runSync } from './support/n8n-export';

/**
 * n8n's file nodes end to end, on PostgreSQL: n8n exports that turn items into files and back
 * (Convert To File, Compression, Extract From File, Move Binary Data, Spreadsheet File), and
 * Read/Write Files from Disk inside FILES_DIR, refusing paths that leave it.
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
      out.result.items.map((i: Record<string, unknown>) => [i.fileName, i.text]),
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

  test('what is not built is refused at import, naming the node and the option', async () => {
    const res = await p.rest('POST', '/v1/engine/workflows/import', {
      body: { workflow: pipeline('PDF', [node('Read PDF', 'extractFromFile', 1, 400, { operation: 'pdf' })]) },
    });
    assert.equal(res.status, 400, JSON.stringify(res.body));
    assert.equal(res.body.error.code, 'WORKFLOW_INVALID');
    assert.match(res.body.error.message, /Read PDF/);
    assert.match(res.body.error.message, /PDF files is not supported/);
  });
});
