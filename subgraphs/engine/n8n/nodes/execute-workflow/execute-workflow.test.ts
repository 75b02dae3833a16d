import assert from 'node:assert/strict';
import { disposeHarness, importRefusal, NodeFailed, runNode } from '../../../../../test/support/n8n-harness';
import type { Item } from '../../../expressions';

afterAll(disposeHarness);

/** An n8n sub-workflow: Execute Workflow Trigger → a node of ours that shows what it received. */
function subWorkflow(last: Record<string, unknown>) {
  return JSON.stringify({
    nodes: [
      { name: 'When called', type: 'n8n-nodes-base.executeWorkflowTrigger', typeVersion: 1.1, position: [0, 0], parameters: { inputSource: 'passthrough' } },
      { name: 'Last', position: [200, 0], ...last },
    ],
    connections: { 'When called': { main: [[{ node: 'Last', type: 'main', index: 0 }]] } },
  });
}

const doubled = subWorkflow({ type: 'engine.set', parameters: { values: { doubled: '{{ $json.n * 2 }}' } } });
const counted = subWorkflow({ type: 'engine.code', parameters: { code: 'return [{ json: { count: items.length, first: items[0].json.n } }]' } });

describe('n8n Execute Workflow', () => {
  for (const typeVersion of [1, 1.1, 1.2]) {
    test(`${typeVersion}: an inline workflow (source parameter) runs with all items and passes on its last node's items`, async () => {
      const out = await runNode({ type: 'n8n-nodes-base.executeWorkflow', typeVersion, parameters: { source: 'parameter', workflowJson: doubled } }, [
        { n: 1 },
        { n: 2 },
      ]);
      assert.deepEqual(out, [
        [
          { n: 1, doubled: 2 },
          { n: 2, doubled: 4 },
        ],
      ]);
    });
  }

  test('mode each: one run per item, the results in item order', async () => {
    const out = await runNode(
      { type: 'n8n-nodes-base.executeWorkflow', typeVersion: 1.1, parameters: { source: 'parameter', workflowJson: counted, mode: 'each' } },
      [{ n: 5 }, { n: 6 }],
    );
    assert.deepEqual(out, [
      [
        { count: 1, first: 5 },
        { count: 1, first: 6 },
      ],
    ]);
    const once = await runNode({ type: 'n8n-nodes-base.executeWorkflow', typeVersion: 1.1, parameters: { source: 'parameter', workflowJson: counted } }, [
      { n: 5 },
      { n: 6 },
    ]);
    assert.deepEqual(once, [[{ count: 2, first: 5 }]]);
  });

  test('waitForSubWorkflow false passes the input on', async () => {
    const node = {
      type: 'n8n-nodes-base.executeWorkflow',
      typeVersion: 1.1,
      parameters: { source: 'parameter', workflowJson: doubled, options: { waitForSubWorkflow: false } },
    };
    assert.deepEqual(await runNode(node, [{ n: 1 }]), [[{ n: 1 }]]);
  });

  test('a stored workflow by id (text in 1, resource locator from 1.1) gets the items', async () => {
    const calls: [string, unknown[]][] = [];
    const services = {
      runWorkflow: async (id: string, items: Item[]) => {
        calls.push([id, items.map((i) => i.json)]);
        return [{ json: { from: id } }];
      },
    };
    const v1 = await runNode({ type: 'n8n-nodes-base.executeWorkflow', typeVersion: 1, parameters: { workflowId: 'wf-1' } }, [{ n: 1 }], { services });
    const v12 = await runNode(
      {
        type: 'n8n-nodes-base.executeWorkflow',
        typeVersion: 1.2,
        parameters: { workflowId: { __rl: true, value: 'wf-2', mode: 'list' }, workflowInputs: { mappingMode: 'defineBelow', value: {} } },
      },
      [{ n: 2 }],
      { services },
    );
    assert.deepEqual([v1, v12], [[[{ from: 'wf-1' }]], [[{ from: 'wf-2' }]]]);
    assert.deepEqual(calls, [
      ['wf-1', [{ n: 1 }]],
      ['wf-2', [{ n: 2 }]],
    ]);
  });

  test('1.2 workflowInputs defined below: each item becomes the mapped fields', async () => {
    const node = {
      type: 'n8n-nodes-base.executeWorkflow',
      typeVersion: 1.2,
      parameters: {
        source: 'parameter',
        workflowJson: counted,
        workflowInputs: { mappingMode: 'defineBelow', value: { n: '={{ $json.price * 10 }}' }, schema: [] },
      },
    };
    assert.deepEqual(await runNode(node, [{ price: 3 }, { price: 4 }]), [[{ count: 2, first: 30 }]]);
  });

  test('a failing sub-workflow fails the node with its reason', async () => {
    const failing = subWorkflow({ type: 'engine.code', parameters: { code: "throw new Error('sub broke')" } });
    await assert.rejects(
      runNode({ type: 'n8n-nodes-base.executeWorkflow', typeVersion: 1.1, parameters: { source: 'parameter', workflowJson: failing } }, [{}]),
      (err: unknown) => err instanceof NodeFailed && /The inline workflow failed: Node "Last" failed: Code failed: Error: sub broke/.test(err.message),
    );
  });

  test('an inline workflow that is not valid fails with the import’s reason', async () => {
    const unknown = JSON.stringify({ nodes: [{ name: 'X', type: 'n8n-nodes-base.slack', typeVersion: 2, position: [0, 0], parameters: {} }], connections: {} });
    await assert.rejects(
      runNode({ type: 'n8n-nodes-base.executeWorkflow', typeVersion: 1.1, parameters: { source: 'parameter', workflowJson: unknown } }, [{}]),
      /The inline workflow is not valid: Node "X" has the n8n type "n8n-nodes-base.slack", which has no equivalent here/,
    );
  });

  test('files and URLs as sources, JSON that is not JSON, and a missing id are refused at import', () => {
    assert.deepEqual(
      pick(importRefusal({ type: 'n8n-nodes-base.executeWorkflow', typeVersion: 1, parameters: { source: 'localFile', workflowPath: '/x.json' } })),
      { reason: 'unsupported_option', option: 'source: localFile' },
    );
    assert.equal(
      importRefusal({ type: 'n8n-nodes-base.executeWorkflow', typeVersion: 1.1, parameters: { source: 'url', workflowUrl: 'https://x' } })?.option,
      'source: url',
    );
    const bad = importRefusal({ type: 'n8n-nodes-base.executeWorkflow', typeVersion: 1.1, parameters: { source: 'parameter', workflowJson: '{nope' } });
    assert.equal(bad?.reason, 'invalid_parameter');
    assert.match(bad!.message, /workflowJson is not JSON/);
    assert.deepEqual(
      importRefusal({ type: 'n8n-nodes-base.executeWorkflow', typeVersion: 1.1, parameters: { workflowId: { __rl: true, value: '', mode: 'list' } } })
        ?.missingParameters,
      ['workflowId'],
    );
  });
});

function pick(r: Record<string, unknown> | undefined) {
  return r && { reason: r.reason, option: r.option };
}
