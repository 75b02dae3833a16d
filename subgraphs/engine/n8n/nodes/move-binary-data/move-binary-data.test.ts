import assert from 'node:assert/strict';
import { disposeHarness, importRefusal, runItems, runWorkflow } from '../../../../../test/support/n8n-harness';
import { prepareBinary, type Item } from '../../../nodes';

afterAll(disposeHarness);

/** The file of n8n's own Move Binary Data test workflow. */
const SAMPLE = '{\n\t"id": 1,\n\t"title": "My Title",\n\t"description": "Lorem Ipsum ..."\n}';
const sampleItem = (): Item => ({ json: {}, binary: { data: prepareBinary(Buffer.from(SAMPLE), { fileName: 'sample.json' }) } });

const move = (name: string, parameters: Record<string, unknown>, x: number) => ({
  name,
  type: 'n8n-nodes-base.moveBinaryData',
  typeVersion: 1,
  position: [x, 0],
  parameters,
});
const to = (node: string) => ({ node, type: 'main', index: 0 });

describe('n8n Move Binary Data', () => {
  test("n8n's test workflow: both ways, with and without all data, jsonParse, base64", async () => {
    const run = await runWorkflow(
      {
        nodes: [
          { name: 'Start', type: 'n8n-nodes-base.manualTrigger', typeVersion: 1, position: [0, 0], parameters: {} },
          { name: 'Read Binary File', type: 'n8n-nodes-base.noOp', typeVersion: 1, position: [200, 0], parameters: {} },
          move('Binary to JSON', { options: {} }, 400),
          move('Binary to JSON - No Set All Data', { setAllData: false, options: {} }, 400),
          move('Binary to JSON - No Set All Data + Json Parse', { setAllData: false, options: { jsonParse: true } }, 400),
          move('Binary to JSON - No Set All Data + Encoding base64', { setAllData: false, options: { encoding: 'base64' } }, 400),
          move('Binary to JSON - Keep as Base64', { setAllData: false, options: { keepAsBase64: true } }, 400),
          move('JSON to Binary', { mode: 'jsonToBinary', options: {} }, 600),
          move(
            'JSON to Binary - No Convert All Data',
            { mode: 'jsonToBinary', convertAllData: false, sourceKey: 'title', options: { fileName: 'example.json' } },
            600,
          ),
        ],
        connections: {
          Start: { main: [[to('Read Binary File')]] },
          'Read Binary File': {
            main: [
              [
                to('Binary to JSON'),
                to('Binary to JSON - No Set All Data'),
                to('Binary to JSON - No Set All Data + Json Parse'),
                to('Binary to JSON - No Set All Data + Encoding base64'),
                to('Binary to JSON - Keep as Base64'),
              ],
            ],
          },
          'Binary to JSON': { main: [[to('JSON to Binary'), to('JSON to Binary - No Convert All Data')]] },
        },
        settings: { executionOrder: 'v1' },
      },
      { pinnedItems: { 'Read Binary File': [[sampleItem()]] } },
    );
    assert.equal(run.status, 'success', JSON.stringify(run.error));
    const out = (name: string) => run.items.get(name)![0]!;
    const parsed = { id: 1, title: 'My Title', description: 'Lorem Ipsum ...' };
    assert.deepEqual(out('Binary to JSON'), [{ json: parsed, pairedItem: { item: 0 } }]);
    assert.deepEqual(out('Binary to JSON - No Set All Data')[0]!.json, { data: SAMPLE });
    assert.equal(out('Binary to JSON - No Set All Data')[0]!.binary, undefined);
    assert.deepEqual(out('Binary to JSON - No Set All Data + Json Parse')[0]!.json, { data: parsed });
    const base64 = 'ewoJImlkIjogMSwKCSJ0aXRsZSI6ICJNeSBUaXRsZSIsCgkiZGVzY3JpcHRpb24iOiAiTG9yZW0gSXBzdW0gLi4uIgp9';
    assert.deepEqual(out('Binary to JSON - No Set All Data + Encoding base64')[0]!.json, { data: base64 });
    assert.deepEqual(out('Binary to JSON - Keep as Base64')[0]!.json, { data: base64 });

    const [all] = out('JSON to Binary');
    assert.deepEqual(all!.json, {});
    const { data, mimeType, fileType, fileSize, fileExtension } = all!.binary!.data!;
    assert.deepEqual(
      { data, mimeType, fileType, fileSize, fileExtension },
      {
        data: 'eyJpZCI6MSwidGl0bGUiOiJNeSBUaXRsZSIsImRlc2NyaXB0aW9uIjoiTG9yZW0gSXBzdW0gLi4uIn0=',
        mimeType: 'application/json',
        fileType: 'json',
        fileSize: '59 B',
        fileExtension: 'json',
      },
    );
    const [one] = out('JSON to Binary - No Convert All Data');
    assert.deepEqual(one!.json, { id: 1, description: 'Lorem Ipsum ...' });
    assert.equal(one!.binary!.data!.data, 'Ik15IFRpdGxlIg==');
    assert.equal(one!.binary!.data!.fileName, 'example.json');
    assert.equal(one!.binary!.data!.fileSize, '10 B');
  });

  test('jsonToBinary options: useRawData, addBOM, encoding, mimeType, keepSource, destinationKey; binaryToJson back with stripBOM and destinationKey', async () => {
    const node = {
      type: 'n8n-nodes-base.moveBinaryData',
      typeVersion: 1.1,
      parameters: {
        mode: 'jsonToBinary',
        convertAllData: false,
        sourceKey: 'note.text',
        destinationKey: 'file',
        options: { useRawData: true, addBOM: true, mimeType: 'text/plain', fileName: 'note.txt', keepSource: true },
      },
    };
    const [[made]] = (await runItems(node, [{ json: { note: { text: 'héllo' } } }])) as [[Item]];
    assert.deepEqual(made.json, { note: { text: 'héllo' } });
    const bytes = Buffer.from(made.binary!.file!.data, 'base64');
    assert.deepEqual([...bytes.subarray(0, 3)], [0xef, 0xbb, 0xbf]);
    assert.equal(bytes.subarray(3).toString('utf8'), 'héllo');
    assert.equal(made.binary!.file!.mimeType, 'text/plain');

    const back = {
      type: 'n8n-nodes-base.moveBinaryData',
      typeVersion: 1.1,
      parameters: { setAllData: false, sourceKey: 'file', destinationKey: 'read.back', options: { keepSource: true } },
    };
    const [[read]] = (await runItems(back, [made])) as [[Item]];
    assert.deepEqual(read.json, { note: { text: 'héllo' }, read: { back: 'héllo' } });
    assert.ok(read.binary?.file, 'keepSource keeps the file');
  });

  test('an item without the file to move is left out; a file that is no JSON object fails naming it', async () => {
    const [out] = await runItems({ type: 'n8n-nodes-base.moveBinaryData', typeVersion: 1, parameters: {} }, [{ json: { a: 1 } }, sampleItem()]);
    assert.equal(out!.length, 1);
    assert.deepEqual(out![0]!.pairedItem, { item: 1 });
    await assert.rejects(
      runItems({ type: 'n8n-nodes-base.moveBinaryData', typeVersion: 1, parameters: {} }, [{ json: {}, binary: { data: prepareBinary(Buffer.from('[1]')) } }]),
      /holds no JSON object/,
    );
  });

  test('an encoding Node cannot read is refused at import, naming it', () => {
    const refusal = importRefusal({ type: 'n8n-nodes-base.moveBinaryData', typeVersion: 1, parameters: { options: { encoding: 'win1252' } } });
    assert.equal(refusal?.option, 'options.encoding: win1252');
    assert.equal(importRefusal({ type: 'n8n-nodes-base.moveBinaryData', typeVersion: 2 })?.reason, 'unsupported_version');
  });
});
