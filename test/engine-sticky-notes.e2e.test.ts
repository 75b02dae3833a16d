import assert from 'node:assert/strict';
import type { Platform, V1 } from './support/answers';
import type { Execution, Workflow, WorkflowList, WorkflowSummary } from './support/engine-answers';
import { startTestPlatform, type TestPlatform } from './support/platform';

/** A workflow as the engine reads it back, with its notes apart from its nodes. */
type Annotated = Workflow & { stickyNotes: unknown };

/**
 * The sticky notes of an n8n export are kept with the imported workflow: read back over REST and
 * GraphQL at their place, size and color, carried by exports as n8n stickyNote nodes (so they
 * survive a round trip), copied by duplicate, and never run.
 */

let p: TestPlatform;
beforeAll(async () => {
  p = await startTestPlatform();
});
afterAll(async () => {
  await p?.stop();
});

const sticky = (name: string, position: [number, number], parameters: Record<string, unknown>) => ({
  id: name,
  name,
  type: 'n8n-nodes-base.stickyNote',
  typeVersion: 1,
  position,
  parameters,
});

const EXPORT = {
  name: 'Annotated',
  settings: { executionOrder: 'v1' },
  nodes: [
    { id: 'start', name: 'Start', type: 'n8n-nodes-base.manualTrigger', typeVersion: 1, position: [0, 0], parameters: {} },
    {
      id: 'set',
      name: 'Set',
      type: 'n8n-nodes-base.set',
      typeVersion: 3.4,
      position: [220, 0],
      parameters: { assignments: { assignments: [{ id: 'a', name: 'greeting', value: 'hello', type: 'string' }] }, options: {} },
    },
    sticky('How it works', [-40, -220], { content: '## How it works\n\nStart, then **Set** adds a greeting.', width: 420, height: 180, color: 4 }),
    sticky('Plain', [300, 200], { content: 'n8n defaults' }),
  ],
  connections: { Start: { main: [[{ node: 'Set', type: 'main', index: 0 }]] } },
};

const EXPECTED = [
  { name: 'How it works', content: '## How it works\n\nStart, then **Set** adds a greeting.', position: [-40, -220], width: 420, height: 180, color: 4 },
  { name: 'Plain', content: 'n8n defaults', position: [300, 200], width: 240, height: 160, color: 1 },
];

async function imported(workflow: unknown): Promise<string> {
  const res = await p.rest<V1<WorkflowSummary>>('POST', '/v1/engine/workflows/import', { body: { workflow } });
  assert.equal(res.status, 201, JSON.stringify(res.body));
  return res.body.data.workflowId;
}

test('an import keeps its sticky notes: REST and GraphQL reads give them at their place, size and color, apart from the nodes', async () => {
  const id = await imported(EXPORT);
  const read = await p.rest<V1<Annotated>>('GET', `/v1/engine/workflows/${id}`);
  assert.equal(read.status, 200, JSON.stringify(read.body));
  assert.deepEqual(read.body.data.stickyNotes, EXPECTED);
  assert.deepEqual(
    read.body.data.nodes.map((n) => n.name),
    ['Start', 'Set'],
    'the notes are not nodes',
  );
  const native = await p.rest<Platform<Annotated>>('GET', `/engine/api/v1/workflows/${id}`);
  assert.equal(native.status, 200, JSON.stringify(native.body));
  assert.deepEqual(native.body.data.stickyNotes, EXPECTED);
  const gql = await p.graphql(`query ($id: ID!) { workflow(workflowId: $id) { nodeCount stickyNotes { name content position width height color } } }`, { id });
  assert.deepEqual(gql.body, { data: { workflow: { nodeCount: 2, stickyNotes: EXPECTED } } });
});

test('a note is never run: the execution runs the two nodes only', async () => {
  const id = await imported(EXPORT);
  const run = await p.rest<V1<Execution>>('POST', `/v1/engine/workflows/${id}/execute`, { body: { mode: 'sync', data: {}, timeout: 60 } });
  assert.equal(run.status, 200, JSON.stringify(run.body));
  assert.equal(run.body.data.status, 'success', JSON.stringify(run.body.data));
  const execution = await p.rest<V1<Execution>>('GET', `/v1/engine/executions/${run.body.data.executionId}?includeData=true`);
  assert.equal(execution.status, 200, JSON.stringify(execution.body));
  assert.deepEqual(execution.body.data.nodeData.map((n) => n.nodeName).sort(), ['Set', 'Start']);
});

test('an export carries the notes as n8n stickyNote nodes; importing it again, and duplicating, keep them', async () => {
  const id = await imported(EXPORT);
  const exported = await p.rest<V1<{ workflow: { nodes: { name: string; type: string; position: number[]; parameters: unknown }[] } }>>(
    'GET',
    `/v1/engine/workflows/${id}/export`,
  );
  assert.equal(exported.status, 200, JSON.stringify(exported.body));
  const workflow = exported.body.data.workflow;
  const notes = workflow.nodes.filter((n: { type: string }) => n.type === 'n8n-nodes-base.stickyNote');
  assert.deepEqual(
    notes.map((n: { name: string; position: number[]; parameters: unknown }) => [n.name, n.position, n.parameters]),
    EXPECTED.map((e) => [e.name, e.position, { content: e.content, width: e.width, height: e.height, color: e.color }]),
  );
  const again = await imported(workflow);
  assert.deepEqual((await p.rest<V1<Annotated>>('GET', `/v1/engine/workflows/${again}`)).body.data.stickyNotes, EXPECTED);
  const copy = await p.graphql(`mutation ($id: ID!) { duplicateWorkflow(workflowId: $id, name: "Annotated copy") { stickyNotes { name } } }`, { id });
  assert.deepEqual(copy.body, { data: { duplicateWorkflow: { stickyNotes: [{ name: 'How it works' }, { name: 'Plain' }] } } });
});

test('an export with more sticky notes than are kept is refused whole, naming the limit', async () => {
  const before = (await p.rest<V1<WorkflowList>>('GET', '/v1/engine/workflows?limit=100')).body.data.pagination.total;
  const many = { ...EXPORT, nodes: [...EXPORT.nodes, ...Array.from({ length: 101 }, (_, i) => sticky(`Note ${i}`, [i, i], { content: 'x' }))] };
  const res = await p.rest<V1<never>>('POST', '/v1/engine/workflows/import', { body: { workflow: many } });
  assert.equal(res.status, 400, JSON.stringify(res.body));
  assert.equal(res.body.error.code, 'WORKFLOW_INVALID');
  assert.match(res.body.error.message, /at most 100/);
  assert.equal((await p.rest<V1<WorkflowList>>('GET', '/v1/engine/workflows?limit=100')).body.data.pagination.total, before, 'nothing was stored');
});
