import assert from 'node:assert/strict';
import { splitInBatches } from '../subgraphs/engine/n8n/nodes/split-in-batches/split-in-batches';
import { NODE_TYPES } from '../subgraphs/engine/executor/catalog';
import type { NodeDefinition } from '../subgraphs/engine/nodes/types';
import type { Gql, V1 } from './support/answers';
import { startTestPlatform, type TestPlatform } from './support/platform';
import { untilValue } from './support/until';

/**
 * n8n's execution order v1 end to end, on PostgreSQL: a workflow exported from n8n with a loop
 * (Loop Over Items) and a Wait inside it runs, waits once per batch, resumes where it stopped
 * (the runs so far replayed from the database, Split In Batches' context with them) and ends
 * with n8n's result; the run data lists every run of each node with its run index.
 */

// Until the n8n node registry lists it (a no-op once it does).
if (!NODE_TYPES.has('n8n-nodes-base.splitInBatches')) (NODE_TYPES as Map<string, NodeDefinition>).set('n8n-nodes-base.splitInBatches', splitInBatches);

let p: TestPlatform;
beforeAll(async () => {
  p = await startTestPlatform();
});
afterAll(async () => {
  await p?.stop();
});

const to = (node: string, index = 0) => ({ node, type: 'main', index });

/** Start -> Make (two items) -> Loop Over Items (batch 1) -loop-> Nap (1 s) -> Mark -> back to the loop; done -> Done. */
const LOOP_WITH_WAIT = {
  name: 'Loop with a wait',
  settings: { executionOrder: 'v1' },
  nodes: [
    { id: '1', name: 'Start', type: 'n8n-nodes-base.manualTrigger', typeVersion: 1, position: [0, 0], parameters: {} },
    { id: '2', name: 'Make', type: 'engine.code', position: [200, 0], parameters: { code: 'return [{ json: { n: 1 } }, { json: { n: 2 } }];' } },
    { id: '3', name: 'Loop', type: 'n8n-nodes-base.splitInBatches', typeVersion: 3, position: [400, 0], parameters: { options: {} } },
    // The engine's own wait stores even a 1 s wait (n8n's Wait sleeps under 65 s in memory), so the execution is resumed from storage.
    { id: '4', name: 'Nap', type: 'engine.wait', position: [600, 100], parameters: { seconds: 1 } },
    { id: '5', name: 'Mark', type: 'engine.set', position: [800, 100], parameters: { values: { seen: '{{ $json.n * 10 }}' } } },
    { id: '6', name: 'Done', type: 'n8n-nodes-base.noOp', typeVersion: 1, position: [600, -100], parameters: {} },
  ],
  connections: {
    Start: { main: [[to('Make')]] },
    Make: { main: [[to('Loop')]] },
    Loop: { main: [[to('Done')], [to('Nap')]] },
    Nap: { main: [[to('Mark')]] },
    Mark: { main: [[to('Loop')]] },
  },
};

/** An execution as the `execution` query below reads it. */
interface StoredExecution {
  status: string;
  result: { items?: unknown; lastNode?: unknown };
  error: { message: string } | null;
  nodeData: { nodeName: string; runIndex: number; status: string; output: { main: { json: unknown }[][] } }[];
}

async function execution(id: string): Promise<StoredExecution> {
  const res = await p.graphql<Gql<{ execution: StoredExecution }>>(
    `query ($id: ID!) { execution(executionId: $id) { status result error { message } nodeData { nodeName runIndex status output } } }`,
    { id },
  );
  assert.equal(res.status, 200, JSON.stringify(res.body));
  assert.equal(res.body.errors, undefined, JSON.stringify(res.body.errors));
  return res.body.data.execution;
}

describe('n8n execution order v1, persisted', () => {
  test("a loop with a Wait inside runs, waits per batch, resumes in place and ends with n8n's result; each run has its run index", async () => {
    const imported = await p.rest<V1<{ workflowId: string }>>('POST', '/v1/engine/workflows/import', { body: { workflow: LOOP_WITH_WAIT } });
    assert.equal(imported.status, 201, JSON.stringify(imported.body));
    const started = await p.rest<V1<{ executionId: string }>>('POST', `/v1/engine/workflows/${imported.body.data.workflowId}/execute`, { body: { data: {} } });
    assert.equal(started.status, 200, JSON.stringify(started.body));
    const id = started.body.data.executionId;

    const waiting = await untilValue(
      'the first wait',
      () => execution(id),
      (e) => e.status === 'waiting',
      { timeoutMs: 30_000, everyMs: 50 },
    );
    assert.deepEqual(
      waiting.nodeData.map((n: { nodeName: unknown; runIndex: unknown }) => `${n.nodeName}#${n.runIndex}`),
      ['Start#0', 'Make#0', 'Loop#0'],
    );
    const loopStates = async () =>
      (
        await p.platform.kernel.db.query(
          `SELECT run_index, state FROM engine.execution_nodes WHERE execution_id = $1 AND node_name = 'Loop' ORDER BY run_index`,
          [id],
        )
      ).map((r: { run_index: unknown; state: { items: unknown[]; noItemsLeft: unknown; done: unknown } | null }) => [
        r.run_index,
        r.state && { left: r.state.items.length, noItemsLeft: r.state.noItemsLeft, done: r.state.done },
      ]);
    assert.deepEqual(await loopStates(), [[0, { left: 1, noItemsLeft: false, done: false }]], 'the context the resume continues from');

    const done = await untilValue(
      'the end',
      () => execution(id),
      (e) => {
        assert.notEqual(e.status, 'error', JSON.stringify(e.error));
        return e.status === 'success';
      },
      { timeoutMs: 30_000, everyMs: 50 },
    );
    assert.deepEqual(done.result.items, [
      { n: 1, seen: 10 },
      { n: 2, seen: 20 },
    ]);
    assert.equal(done.result.lastNode, 'Done');
    assert.deepEqual(
      done.nodeData.map((n: { nodeName: unknown; runIndex: unknown }) => `${n.nodeName}#${n.runIndex}`),
      ['Start#0', 'Make#0', 'Loop#0', 'Nap#0', 'Mark#0', 'Loop#1', 'Nap#1', 'Mark#1', 'Loop#2', 'Done#0'],
    );
    const loop = (run: number) => done.nodeData.find((n: { nodeName: unknown; runIndex: unknown }) => n.nodeName === 'Loop' && n.runIndex === run)!.output.main;
    assert.deepEqual(
      loop(0)[1].map((i: { json: unknown }) => i.json),
      [{ n: 1 }],
      'batch 1 by the loop output',
    );
    assert.deepEqual(
      loop(1)[1].map((i: { json: unknown }) => i.json),
      [{ n: 2 }],
      'batch 2: the context survived the wait',
    );
    assert.deepEqual(
      loop(2)[0].map((i: { json: unknown }) => i.json),
      [
        { n: 1, seen: 10 },
        { n: 2, seen: 20 },
      ],
      'done: every processed item',
    );
    // Only the latest run keeps the node's context: each later one replaced the one before.
    assert.deepEqual(await loopStates(), [
      [0, null],
      [1, null],
      [2, { left: 0, noItemsLeft: true, done: true }],
    ]);
  });

  test("n8n's legacy order v0 is refused at import; a workflow of ours still refuses loops", async () => {
    const v0 = await p.rest<V1<never>>('POST', '/v1/engine/workflows/import', {
      body: { workflow: { ...LOOP_WITH_WAIT, name: 'Legacy loop', settings: { executionOrder: 'v0' } } },
    });
    assert.equal(v0.status, 400, JSON.stringify(v0.body));
    assert.deepEqual([v0.body.error.code, v0.body.error.details.reason], ['WORKFLOW_INVALID', 'unsupported_execution_order']);
    const ours = await p.rest<V1<never>>('POST', '/v1/engine/workflows', {
      body: {
        name: 'Our loop',
        nodes: [
          { name: 'Start', type: 'engine.manualTrigger' },
          { name: 'A', type: 'engine.noOp' },
          { name: 'B', type: 'engine.noOp' },
        ],
        connections: {
          Start: { main: [[{ node: 'A', type: 'main', index: 0 }]] },
          A: { main: [[{ node: 'B', type: 'main', index: 0 }]] },
          B: { main: [[{ node: 'A', type: 'main', index: 0 }]] },
        },
      },
    });
    assert.equal(ours.status, 400, JSON.stringify(ours.body));
    assert.equal(ours.body.error.details.reason, 'cycle');
  });
});
