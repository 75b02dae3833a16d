import assert from 'node:assert/strict';
import { disposeHarness, importRefusal, runWorkflow, type Json } from '../../../../../test/support/n8n-harness';
import type { Item, NodeContext, SourceData } from '../../../nodes';
import { splitInBatches } from './split-in-batches';

afterAll(disposeHarness);

/** One run of the node itself, with a context kept between calls (as the executor keeps it). */
async function call(version: number, parameters: Json, items: Json[], state: Record<string, unknown>, source: SourceData | null = null) {
  const input = items.map((json, i) => ({ json, pairedItem: { item: i } }));
  const ctx = {
    node: { name: 'Loop', type: 'n8n-nodes-base.splitInBatches', typeVersion: version, position: [0, 0], parameters },
    inputs: [input],
    items: input,
    parameters: async () => [parameters],
    state,
    inputSource: [source],
  } as unknown as NodeContext;
  const result = await splitInBatches.execute(ctx);
  return result.outputs.map((list: Item[]) => list.map((i) => i.json));
}

const numbers = (n: number) => Array.from({ length: n }, (_, i) => ({ n: i + 1 }));
const loopSource: SourceData = { previousNode: 'Body', previousNodeOutput: 0, previousNodeRun: 0 };

describe('n8n Split In Batches: the node', () => {
  test('v3 (Loop Over Items): batches by "loop" (output 1), then every item that came back by "done" (output 0); batchSize 1 by default', async () => {
    const state: Record<string, unknown> = {};
    assert.deepEqual(await call(3, { batchSize: 2 }, numbers(3), state), [[], [{ n: 1 }, { n: 2 }]]);
    assert.equal(state.noItemsLeft, false);
    assert.equal(state.currentRunIndex, 0);
    assert.deepEqual(
      await call(
        3,
        { batchSize: 2 },
        [
          { n: 1, ok: true },
          { n: 2, ok: true },
        ],
        state,
        loopSource,
      ),
      [[], [{ n: 3 }]],
    );
    assert.equal(state.noItemsLeft, true);
    assert.deepEqual(await call(3, { batchSize: 2 }, [{ n: 3, ok: true }], state, loopSource), [
      [
        { n: 1, ok: true },
        { n: 2, ok: true },
        { n: 3, ok: true },
      ],
      [],
    ]);
    assert.equal(state.done, true);
    assert.equal(state.currentRunIndex, 2);
    assert.deepEqual(await call(3, {}, numbers(2), {}), [[], [{ n: 1 }]], 'batchSize 1 by default');
  });

  test('v2: "loop" is output 0 and "done" output 1; v1: one output that ends when nothing is left', async () => {
    const v2: Record<string, unknown> = {};
    assert.deepEqual(await call(2, { batchSize: 2 }, numbers(2), v2), [[{ n: 1 }, { n: 2 }], []]);
    assert.deepEqual(await call(2, { batchSize: 2 }, [{ n: 9 }], v2, loopSource), [[], [{ n: 9 }]]);
    const v1: Record<string, unknown> = {};
    assert.deepEqual(await call(1, {}, numbers(12), v1), [numbers(10)], 'batchSize 10 by default');
    assert.deepEqual(await call(1, {}, [{}], v1), [[{ n: 11 }, { n: 12 }]]);
    assert.equal(v1.noItemsLeft, true);
    assert.deepEqual(await call(1, {}, [{}], v1), [[]]);
  });

  test('options.reset: the items of this run are a new set', async () => {
    const state: Record<string, unknown> = {};
    await call(3, { batchSize: 1 }, numbers(3), state);
    assert.deepEqual(await call(3, { batchSize: 1, options: { reset: true } }, [{ x: 1 }, { x: 2 }], state), [[], [{ x: 1 }]]);
    assert.deepEqual(
      (state.items as Item[]).map((i) => i.json),
      [{ x: 2 }],
    );
    assert.equal(state.currentRunIndex, 0);
  });

  test("later batches keep their paired item to the first run's input (n8n's sourceOverwrite)", async () => {
    const first: SourceData = { previousNode: 'Start', previousNodeOutput: 0, previousNodeRun: 0 };
    const state: Record<string, unknown> = {};
    await call(3, { batchSize: 1 }, numbers(2), state, first);
    const ctx = {
      node: { name: 'Loop', type: 'n8n-nodes-base.splitInBatches', typeVersion: 3, position: [0, 0], parameters: {} },
      inputs: [[{ json: {}, pairedItem: { item: 0 } }]],
      items: [{ json: {}, pairedItem: { item: 0 } }],
      parameters: async () => [{ batchSize: 1 }],
      state,
      inputSource: [loopSource],
    } as unknown as NodeContext;
    const out = await splitInBatches.execute(ctx);
    assert.deepEqual(out.outputs[1]![0]!.pairedItem, { item: 1, sourceOverwrite: first });
  });

  test('versions 1 to 3 are accepted; a batch size below 1 is refused at import', () => {
    for (const typeVersion of [1, 2, 3]) assert.equal(importRefusal({ type: 'n8n-nodes-base.splitInBatches', typeVersion, parameters: {} }), undefined);
    assert.equal(importRefusal({ type: 'n8n-nodes-base.splitInBatches', typeVersion: 4, parameters: {} })?.reason, 'unsupported_version');
    assert.equal(importRefusal({ type: 'n8n-nodes-base.splitInBatches', typeVersion: 3, parameters: { batchSize: 0 } })?.reason, 'invalid_parameter');
  });
});

// ---------------------------------------------------------------------------------------------
// In a workflow (executionOrder v1): the loop runs batch by batch

const trigger = { name: 'Start', type: 'n8n-nodes-base.manualTrigger', typeVersion: 1, position: [0, 0], parameters: {} };
const body = { name: 'Body', type: 'engine.set', position: [400, 200], parameters: { values: { seen: '{{ $json.n * 10 }}' } } };
const after1 = { name: 'After', type: 'n8n-nodes-base.noOp', typeVersion: 1, position: [400, -200], parameters: {} };
const loopNode = (typeVersion: number, parameters: Json = {}) => ({
  name: 'Loop',
  type: 'n8n-nodes-base.splitInBatches',
  typeVersion,
  position: [200, 0],
  parameters,
});
const to = (node: string, index = 0) => ({ node, type: 'main', index });

describe('n8n Split In Batches: loops (execution order v1)', () => {
  test('v3: each batch goes round the loop, then "done" carries every processed item on', async () => {
    const run = await runWorkflow(
      {
        settings: { executionOrder: 'v1' },
        nodes: [trigger, loopNode(3, { batchSize: 2 }), body, after1],
        connections: { Start: { main: [[to('Loop')]] }, Loop: { main: [[to('After')], [to('Body')]] }, Body: { main: [[to('Loop')]] } },
      },
      { input: numbers(5) },
    );
    assert.equal(run.status, 'success', JSON.stringify(run.error));
    const seq = run.runs.map((r) => `${r.node}#${r.runIndex}`);
    assert.deepEqual(seq, ['Start#0', 'Loop#0', 'Body#0', 'Loop#1', 'Body#1', 'Loop#2', 'Body#2', 'Loop#3', 'After#0']);
    assert.deepEqual(
      run.runs.filter((r) => r.node === 'Body').map((r) => r.output[0]!.map((j) => j.n)),
      [[1, 2], [3, 4], [5]],
    );
    assert.deepEqual(
      run.result,
      numbers(5).map((j) => ({ ...j, seen: j.n * 10 })),
    );
  });

  test('v2: "loop" is output 0, "done" output 1', async () => {
    const run = await runWorkflow(
      {
        settings: { executionOrder: 'v1' },
        nodes: [trigger, loopNode(2, { batchSize: 2 }), body, after1],
        connections: { Start: { main: [[to('Loop')]] }, Loop: { main: [[to('Body')], [to('After')]] }, Body: { main: [[to('Loop')]] } },
      },
      { input: numbers(3) },
    );
    assert.equal(run.status, 'success', JSON.stringify(run.error));
    assert.deepEqual(
      run.runs.filter((r) => r.node === 'Body').map((r) => r.output[0]!.length),
      [2, 1],
    );
    assert.deepEqual(
      run.result.map((j) => j.seen),
      [10, 20, 30],
    );
  });

  test('v1: batches until none is left; the branch then ends', async () => {
    const run = await runWorkflow(
      {
        settings: { executionOrder: 'v1' },
        nodes: [trigger, loopNode(1, { batchSize: 2 }), body],
        connections: { Start: { main: [[to('Loop')]] }, Loop: { main: [[to('Body')]] }, Body: { main: [[to('Loop')]] } },
      },
      { input: numbers(4) },
    );
    assert.equal(run.status, 'success', JSON.stringify(run.error));
    assert.deepEqual(
      run.runs.filter((r) => r.node === 'Body').map((r) => r.output[0]!.map((j) => j.n)),
      [
        [1, 2],
        [3, 4],
      ],
    );
    assert.equal(run.runs.filter((r) => r.node === 'Loop').length, 3);
  });

  test('a loop that never ends stops at the limit, naming the node', async () => {
    const run = await runWorkflow(
      {
        settings: { executionOrder: 'v1' },
        nodes: [trigger, loopNode(3, { batchSize: 1, options: { reset: true } }), body],
        connections: { Start: { main: [[to('Loop')]] }, Loop: { main: [[], [to('Body')]] }, Body: { main: [[to('Loop')]] } },
      },
      { input: numbers(2), maxNodeRuns: 30 },
    );
    assert.equal(run.status, 'error');
    assert.equal(run.error?.code, 'EXECUTION_FAILED');
    assert.equal(run.error?.details.reason, 'loop_limit');
    assert.ok(['Loop', 'Body'].includes(run.error!.node!));
  });
});
