import assert from 'node:assert/strict';
import { disposeHarness, importRefusal, runNode, runWorkflow } from '../../../../../test/support/n8n-harness';

afterAll(disposeHarness);

const node = (parameters: Record<string, unknown>) => ({ type: 'n8n-nodes-base.compareDatasets', typeVersion: 2.3, parameters });
const byId = { mergeByFields: { values: [{ field1: 'id', field2: 'id' }] } };

// The inputs of n8n's own Compare Datasets test workflow.
const A = [
  { id: 1, text: 'foo', data: 'A', data2: 555, memo: 'test' },
  { id: 2, text: 'bar bar', data: 'E' },
  { id: 3, text: 'spam', data: 'C' },
  { id: 4, text: 'not matched', data: 'Y' },
];
const B = [
  { id: 1, text: 'foo', data: 'D', data3: 111, memo: 'test' },
  { id: 1, text: 'foo', data: 'DD' },
  { id: 2, text: 'bar bar', data: 'E' },
  { id: 3, text: 'spam', data: 'F' },
  { id: 5, text: 'spam', data: 'X' },
];

describe("n8n's Compare Datasets 2.3", () => {
  test('first match by two fields: in A only, same, different (both versions), in B only', async () => {
    const [onlyA, same, different, onlyB] = await runNode(
      node({
        mergeByFields: {
          values: [
            { field1: 'id', field2: 'id' },
            { field1: 'text', field2: 'text' },
          ],
        },
        options: { multipleMatches: 'first' },
      }),
      [A, B],
    );
    assert.deepEqual(onlyA, [A[3]]);
    assert.deepEqual(same, [A[1]]);
    assert.deepEqual(different, [
      {
        keys: { id: 1, text: 'foo' },
        same: { memo: 'test' },
        different: { data: { inputA: 'A', inputB: 'D' }, data2: { inputA: 555, inputB: null }, data3: { inputA: null, inputB: 111 } },
      },
      { keys: { id: 3, text: 'spam' }, same: {}, different: { data: { inputA: 'C', inputB: 'F' } } },
    ]);
    // B's second id 1 matched nobody under "first": it is in B only, with id 5.
    assert.deepEqual(onlyB, [B[1], B[4]]);
  });

  test('all matches: an A item is compared with every B item it matches', async () => {
    const [, , different, onlyB] = await runNode(node({ ...byId, options: { multipleMatches: 'all' } }), [A, B]);
    assert.deepEqual(
      different.map((d) => [(d.keys as { id: unknown }).id, (d.different as { data?: { inputB: unknown } }).data?.inputB]),
      [
        [1, 'D'],
        [1, 'DD'],
        [3, 'F'],
      ],
    );
    assert.deepEqual(onlyB, [B[4]]);
  });

  test('preferInput2 and mix take one version, mix with the named fields from the other', async () => {
    const a = [{ id: 1, data: 'A', note: 'a' }];
    const b = [{ id: 1, data: 'B', note: 'b' }];
    assert.deepEqual((await runNode(node({ ...byId, resolve: 'preferInput2' }), [a, b]))[2], b);
    assert.deepEqual((await runNode(node({ ...byId, resolve: 'mix', exceptWhenMix: 'note' }), [a, b]))[2], [{ id: 1, data: 'A', note: 'b' }]);
    assert.deepEqual((await runNode(node({ ...byId, resolve: 'mix', preferWhenMix: 'input2', exceptWhenMix: 'note' }), [a, b]))[2], [
      { id: 1, data: 'B', note: 'a' },
    ]);
  });

  test('skipFields are not compared; fuzzyCompare takes "1" and 1 as equal', async () => {
    const [, same] = await runNode(node({ ...byId, options: { skipFields: 'seen' } }), [[{ id: 1, seen: 'today' }], [{ id: 1, seen: 'never' }]]);
    assert.deepEqual(same, [{ id: 1, seen: 'today' }]);
    const [, fuzzy, different] = await runNode(node({ ...byId, fuzzyCompare: true }), [[{ id: '1', n: '2' }], [{ id: 1, n: 2 }]]);
    assert.deepEqual([fuzzy, different], [[{ id: '1', n: '2' }], []]);
    const [onlyA] = await runNode(node(byId), [[{ id: '1' }], [{ id: 1 }]]);
    assert.deepEqual(onlyA, [{ id: '1' }]);
  });

  test('imported and run: each of the four outputs feeds its own branch', async () => {
    const noOp = (name: string, y: number) => ({ name, type: 'n8n-nodes-base.noOp', typeVersion: 1, position: [600, y], parameters: {} });
    const run = await runWorkflow(
      {
        nodes: [
          { name: 'A', type: 'n8n-nodes-base.noOp', typeVersion: 1, position: [0, 0], parameters: {} },
          { name: 'B', type: 'n8n-nodes-base.noOp', typeVersion: 1, position: [0, 200], parameters: {} },
          { name: 'Compare', position: [300, 0], ...node({ ...byId, resolve: 'preferInput1' }) },
          noOp('Only A', 0),
          noOp('Same', 100),
          noOp('Different', 200),
          noOp('Only B', 300),
        ],
        connections: {
          A: { main: [[{ node: 'Compare', type: 'main', index: 0 }]] },
          B: { main: [[{ node: 'Compare', type: 'main', index: 1 }]] },
          Compare: { main: ['Only A', 'Same', 'Different', 'Only B'].map((n) => [{ node: n, type: 'main', index: 0 }]) },
        },
        settings: { executionOrder: 'v1' },
      },
      { pinned: { A: [[{ id: 1, v: 1 }, { id: 2, v: 2 }, { id: 3 }]], B: [[{ id: 1, v: 1 }, { id: 2, v: 3 }, { id: 4 }]] } },
    );
    assert.equal(run.status, 'success');
    assert.deepEqual(run.nodes.get('Only A'), [[{ id: 3 }]]);
    assert.deepEqual(run.nodes.get('Same'), [[{ id: 1, v: 1 }]]);
    assert.deepEqual(run.nodes.get('Different'), [[{ id: 2, v: 2 }]]);
    assert.deepEqual(run.nodes.get('Only B'), [[{ id: 4 }]]);
  });

  test('the versions before 2.3 are refused at import, naming the one supported', () => {
    assert.deepEqual(importRefusal({ type: 'n8n-nodes-base.compareDatasets', typeVersion: 1 })?.supportedVersions, [2.3]);
  });
});
