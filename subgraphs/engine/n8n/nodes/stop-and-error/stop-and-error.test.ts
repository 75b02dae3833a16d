import assert from 'node:assert/strict';
import { disposeHarness, importRefusal, outputFailure, runWorkflow } from '../../../../../test/support/n8n-harness';

afterAll(disposeHarness);

describe('n8n Stop and Error 1', () => {
  test('errorMessage (the default type): the execution fails at the node with that message, expressions resolved', async () => {
    const info = await outputFailure('stopAndError', 1, { errorMessage: '=Order {{ $json.id }} is missing' }, [{ id: 7 }]);
    assert.equal(info.code, 'NODE_EXECUTION_FAILED');
    assert.equal(info.node, 'Node');
    assert.equal(info.message, 'Node "Node" failed: Order 7 is missing');
  });

  test('errorObject: its message, else description, else error, else the object as JSON; description, type and the object in the details', async () => {
    const full = await outputFailure(
      'stopAndError',
      1,
      { errorType: 'errorObject', errorObject: '{"message": "Bad", "description": "Why", "type": "T", "code": 404}' },
      [{}],
    );
    assert.equal(full.message, 'Node "Node" failed: Bad');
    assert.equal(full.details.description, 'Why');
    assert.equal(full.details.type, 'T');
    assert.deepEqual(full.details.metadata, { message: 'Bad', description: 'Why', type: 'T', code: 404 });
    const described = await outputFailure(
      'stopAndError',
      1,
      { errorType: 'errorObject', errorObject: '{"code": "404", "description": "The resource could not be fetched"}' },
      [{}],
    );
    assert.equal(described.message, 'Node "Node" failed: The resource could not be fetched');
    const error = await outputFailure('stopAndError', 1, { errorType: 'errorObject', errorObject: '{"message": "", "error": "E"}' }, [{}]);
    assert.equal(error.message, 'Node "Node" failed: E');
    const bare = await outputFailure('stopAndError', 1, { errorType: 'errorObject', errorObject: '{"code": 1}' }, [{}]);
    assert.equal(bare.message, 'Node "Node" failed: Error: {"code":1}');
    const bad = await outputFailure('stopAndError', 1, { errorType: 'errorObject', errorObject: '{nope' }, [{}]);
    assert.match(bad.message, /The error object is not valid JSON/);
  });

  test('in a workflow the nodes before it keep their output, nothing after it runs; an unknown type is refused at import', async () => {
    const run = await runWorkflow(
      {
        nodes: [
          { name: 'Start', type: 'n8n-nodes-base.manualTrigger', typeVersion: 1, position: [0, 0], parameters: {} },
          {
            name: 'If',
            type: 'n8n-nodes-base.if',
            typeVersion: 1,
            position: [200, 0],
            parameters: { conditions: { number: [{ value1: '={{ $json.n }}', operation: 'larger', value2: 1 }] } },
          },
          { name: 'Fail', type: 'n8n-nodes-base.stopAndError', typeVersion: 1, position: [400, 0], parameters: { errorMessage: 'too large' } },
          { name: 'Fine', type: 'n8n-nodes-base.noOp', typeVersion: 1, position: [400, 200], parameters: {} },
        ],
        connections: {
          Start: { main: [[{ node: 'If', type: 'main', index: 0 }]] },
          If: { main: [[{ node: 'Fail', type: 'main', index: 0 }], [{ node: 'Fine', type: 'main', index: 0 }]] },
        },
        settings: { executionOrder: 'v1' },
      },
      { input: [{ n: 5 }] },
    );
    assert.equal(run.status, 'error');
    assert.equal(run.error?.node, 'Fail');
    assert.equal(run.error?.message, 'Node "Fail" failed: too large');
    assert.deepEqual(run.nodes.get('If'), [[{ n: 5 }], []]);
    assert.equal(run.nodes.has('Fine'), false);
    assert.ok(importRefusal({ type: 'n8n-nodes-base.stopAndError', typeVersion: 1, parameters: { errorType: 'warning' } }));
  });
});

describe('n8n Error Trigger', () => {
  test('imports as the start of an error workflow and passes on what the failed execution reports', async () => {
    const failed = { execution: { id: '9', mode: 'manual', error: { message: 'boom' }, lastNodeExecuted: 'Fail' }, workflow: { id: 'w1', name: 'Orders' } };
    const run = await runWorkflow(
      {
        nodes: [
          { name: 'Error Trigger', type: 'n8n-nodes-base.errorTrigger', typeVersion: 1, position: [0, 0], parameters: {} },
          {
            name: 'Set',
            type: 'n8n-nodes-base.set',
            typeVersion: 3.4,
            position: [200, 0],
            parameters: {
              assignments: {
                assignments: [{ id: '1', name: 'text', value: '={{ $json.workflow.name }} failed at {{ $json.execution.lastNodeExecuted }}', type: 'string' }],
              },
            },
          },
        ],
        connections: { 'Error Trigger': { main: [[{ node: 'Set', type: 'main', index: 0 }]] } },
        settings: { executionOrder: 'v1' },
      },
      { input: [failed], mode: 'error' },
    );
    assert.equal(run.status, 'success');
    assert.deepEqual(run.result, [{ text: 'Orders failed at Fail' }]);
  });
});

describe('n8n Function and Function Item (1)', () => {
  const workflow = (node: Record<string, unknown>) => ({
    nodes: [
      { name: 'Start', type: 'n8n-nodes-base.manualTrigger', typeVersion: 1, position: [0, 0], parameters: {} },
      { name: 'F', typeVersion: 1, position: [200, 0], ...node },
    ],
    connections: { Start: { main: [[{ node: 'F', type: 'main', index: 0 }]] } },
  });

  test('Function: n8n code over `items` runs in the code sandbox', async () => {
    const run = await runWorkflow(
      workflow({
        type: 'n8n-nodes-base.function',
        parameters: { functionCode: 'for (const item of items) { item.json.double = item.json.n * 2; }\nreturn items;' },
      }),
      { input: [{ n: 1 }, { n: 4 }] },
    );
    assert.deepEqual(run.result, [
      { n: 1, double: 2 },
      { n: 4, double: 8 },
    ]);
  });

  test('Function Item: `item` is the json of each item', async () => {
    const run = await runWorkflow(workflow({ type: 'n8n-nodes-base.functionItem', parameters: { functionCode: 'item.seen = true;\nreturn item;' } }), {
      input: [{ a: 1 }, { a: 2 }],
    });
    assert.deepEqual(run.result, [
      { a: 1, seen: true },
      { a: 2, seen: true },
    ]);
  });

  test('neither reaches the server: no process, no require', async () => {
    const run = await runWorkflow(
      workflow({ type: 'n8n-nodes-base.function', parameters: { functionCode: 'return [{ json: { p: typeof process, r: typeof require } }];' } }),
    );
    assert.deepEqual(run.result, [{ p: 'undefined', r: 'undefined' }]);
    const item = await runWorkflow(workflow({ type: 'n8n-nodes-base.functionItem', parameters: { functionCode: 'return { g: typeof globalThis.process };' } }));
    assert.deepEqual(item.result, [{ g: 'undefined' }]);
  });
});
