import assert from 'node:assert/strict';
import { disposeHarness, importRefusal, outputFailure, runOutput, runWorkflow } from '../../../../../test/support/n8n-harness';

afterAll(disposeHarness);

describe("n8n's Debug Helper 1", () => {
  test('doNothing passes the items on', async () => {
    assert.deepEqual(await runOutput('debugHelper', 1, { category: 'doNothing' }, [{ a: 1 }, { b: 2 }]), [{ a: 1 }, { b: 2 }]);
  });

  test('throwError (the default category) fails with its default message, or the one given', async () => {
    assert.match((await outputFailure('debugHelper', 1, {}, [{}])).message, /Node has thrown an error$/);
    const info = await outputFailure('debugHelper', 1, { category: 'throwError', throwErrorType: 'Error', throwErrorMessage: '={{ "bad " + $json.n }}' }, [
      { n: 7 },
    ]);
    assert.match(info.message, /bad 7$/);
  });

  test('with onError continueRegularOutput the thrown error does not stop the workflow', async () => {
    const run = await runWorkflow({
      nodes: [
        { name: 'Start', type: 'n8n-nodes-base.manualTrigger', typeVersion: 1, position: [0, 0], parameters: {} },
        {
          name: 'Debug',
          type: 'n8n-nodes-base.debugHelper',
          typeVersion: 1,
          onError: 'continueRegularOutput',
          position: [200, 0],
          parameters: { category: 'throwError', throwErrorMessage: 'boom' },
        },
        { name: 'After', type: 'n8n-nodes-base.noOp', typeVersion: 1, position: [400, 0], parameters: {} },
      ],
      connections: { Start: { main: [[{ node: 'Debug', type: 'main', index: 0 }]] }, Debug: { main: [[{ node: 'After', type: 'main', index: 0 }]] } },
    });
    assert.equal(run.status, 'success');
    assert.deepEqual(run.nodes.get('After'), [[{}]]);
  });

  test('the memory and random-data categories are refused at import, naming the option', () => {
    for (const category of ['oom', 'randomData']) {
      const refusal = importRefusal({ type: 'n8n-nodes-base.debugHelper', typeVersion: 1, parameters: { category } });
      assert.equal(refusal?.option, 'category', category);
    }
    assert.equal(importRefusal({ type: 'n8n-nodes-base.debugHelper', typeVersion: 1, parameters: { category: 'doNothing' } }), undefined);
  });
});
