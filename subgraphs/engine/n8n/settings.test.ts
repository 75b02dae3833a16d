import assert from 'node:assert/strict';
import { AppError } from '../../../kernel/errors';
import { disposeHarness, importRefusal, runNode, runWorkflow } from '../../../test/support/n8n-harness';

afterAll(disposeHarness);

/** n8n's node settings, applied by the executor to any node (n8n's WorkflowExecute semantics). */
describe('n8n node settings', () => {
  const failing = { type: 'engine.code', parameters: { code: "throw new Error('boom')" } };

  test('onError continueRegularOutput: a node that fails as a whole passes its first input on', async () => {
    const out = await runNode({ ...failing, onError: 'continueRegularOutput' }, [{ a: 1 }, { a: 2 }]);
    assert.deepEqual(out, [[{ a: 1 }, { a: 2 }]]);
  });

  test('onError stopWorkflow (the default) fails the execution, naming the node', async () => {
    await assert.rejects(runNode(failing, [{ a: 1 }]), /Node "Node" failed: Code failed: Error: boom/);
  });

  test('onError continueErrorOutput: error items leave by an extra last output, merged into the input item they came from', async () => {
    const node = {
      type: 'engine.code',
      onError: 'continueErrorOutput',
      parameters: { code: "return items.map((i) => i.json.n === 2 ? { json: { error: 'n is 2' } } : i)" },
    };
    const out = await runNode(node, [{ n: 1 }, { n: 2 }, { n: 3 }]);
    assert.deepEqual(out, [[{ n: 1 }, { n: 3 }], [{ n: 2, error: 'n is 2' }]]);
  });

  test('the error output can be connected: its branch runs with the failed items', async () => {
    const run = await runWorkflow(
      {
        nodes: [
          { name: 'Start', type: 'n8n-nodes-base.noOp', typeVersion: 1, position: [0, 0], parameters: {} },
          {
            name: 'Check',
            type: 'engine.code',
            onError: 'continueErrorOutput',
            position: [200, 0],
            parameters: { code: "return [{ json: { error: 'no' } }]" },
          },
          { name: 'Failed', type: 'n8n-nodes-base.noOp', typeVersion: 1, position: [400, 100], parameters: {} },
        ],
        connections: { Start: { main: [[{ node: 'Check', type: 'main', index: 0 }]] }, Check: { main: [[], [{ node: 'Failed', type: 'main', index: 0 }]] } },
      },
      { pinned: { Start: [[{ id: 7 }]] } },
    );
    assert.equal(run.status, 'success');
    assert.deepEqual(run.nodes.get('Failed'), [[{ id: 7, error: 'no' }]]);
  });

  test('without continueErrorOutput, a connection from a second output of a one-output node is refused', async () => {
    const workflow = {
      nodes: [
        { name: 'Check', type: 'n8n-nodes-base.noOp', typeVersion: 1, position: [0, 0], parameters: {} },
        { name: 'Failed', type: 'n8n-nodes-base.noOp', typeVersion: 1, position: [200, 0], parameters: {} },
      ],
      connections: { Check: { main: [[], [{ node: 'Failed', type: 'main', index: 0 }]] } },
    };
    await assert.rejects(runWorkflow(workflow), (err) => err instanceof AppError && err.code === 'WORKFLOW_INVALID' && err.details.reason === 'invalid_output');
    workflow.nodes[0] = { ...workflow.nodes[0]!, onError: 'continueErrorOutput' } as (typeof workflow.nodes)[number];
    assert.equal((await runWorkflow(workflow)).status, 'success');
  });

  test('an onError value n8n does not have is not imported', () => {
    assert.equal(importRefusal({ type: 'n8n-nodes-base.noOp', typeVersion: 1, onError: 'sometimes' }), undefined);
  });

  test('alwaysOutputData: an empty output becomes one empty item, so the next nodes run', async () => {
    const node = { type: 'engine.filter', alwaysOutputData: true, parameters: { condition: '{{ false }}' } };
    assert.deepEqual(await runNode(node, [{ a: 1 }]), [[{}]]);
    assert.deepEqual(await runNode({ ...node, alwaysOutputData: false }, [{ a: 1 }]), [[]]);
  });

  test('executeOnce: the node runs with the first item only', async () => {
    const out = await runNode({ type: 'n8n-nodes-base.noOp', typeVersion: 1, executeOnce: true }, [{ a: 1 }, { a: 2 }]);
    assert.deepEqual(out, [[{ a: 1 }]]);
  });
});

describe("n8n's v1 order in expressions", () => {
  test('$prevNode, $runIndex and $("Node").item follow the items back through the runs', async () => {
    const run = await runWorkflow(
      {
        nodes: [
          { name: 'Start', type: 'n8n-nodes-base.noOp', typeVersion: 1, position: [0, 0], parameters: {} },
          {
            name: 'Sort',
            type: 'n8n-nodes-base.sort',
            typeVersion: 1,
            position: [200, 0],
            parameters: { sortFieldsUi: { sortField: [{ fieldName: 'id', order: 'descending' }] } },
          },
          {
            name: 'Tag',
            type: 'n8n-nodes-base.set',
            typeVersion: 3.4,
            position: [400, 0],
            parameters: {
              includeOtherFields: true,
              assignments: {
                assignments: [
                  { id: 'a', name: 'prev', value: '={{ $prevNode.name }}', type: 'string' },
                  { id: 'b', name: 'run', value: '={{ $runIndex }}', type: 'number' },
                  { id: 'c', name: 'origin', value: "={{ $('Start').item.json.label }}", type: 'string' },
                ],
              },
              options: {},
            },
          },
        ],
        connections: { Start: { main: [[{ node: 'Sort', type: 'main', index: 0 }]] }, Sort: { main: [[{ node: 'Tag', type: 'main', index: 0 }]] } },
        settings: { executionOrder: 'v1' },
      },
      {
        pinned: {
          Start: [
            [
              { id: 1, label: 'one' },
              { id: 2, label: 'two' },
            ],
          ],
        },
      },
    );
    assert.equal(run.status, 'success', JSON.stringify(run.error));
    assert.deepEqual(run.nodes.get('Tag'), [
      [
        { id: 2, label: 'two', prev: 'Sort', run: 0, origin: 'two' },
        { id: 1, label: 'one', prev: 'Sort', run: 0, origin: 'one' },
      ],
    ]);
  });
});
