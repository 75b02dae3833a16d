import assert from 'node:assert/strict';
import { disposeHarness, importRefusal, runNode } from '../../../../../test/support/n8n-harness';

afterAll(disposeHarness);

describe('n8n No Operation', () => {
  test('passes its items on unchanged', async () => {
    const out = await runNode({ type: 'n8n-nodes-base.noOp', typeVersion: 1 }, [{ a: 1 }, { b: { c: [2] } }]);
    assert.deepEqual(out, [[{ a: 1 }, { b: { c: [2] } }]]);
  });

  test('a version it does not implement is refused at import, naming the node, the type and the versions', () => {
    const refusal = importRefusal({ type: 'n8n-nodes-base.noOp', typeVersion: 7 });
    assert.equal(refusal?.reason, 'unsupported_version');
    assert.equal(refusal?.node, 'Node');
    assert.deepEqual(refusal?.supportedVersions, [1]);
    assert.match(refusal!.message, /n8n-nodes-base\.noOp version 7/);
  });

  test('an unknown n8n type is refused, naming it', () => {
    const refusal = importRefusal({ type: 'n8n-nodes-base.notANode', typeVersion: 1 });
    assert.equal(refusal?.reason, 'unknown_node_type');
    assert.equal(refusal?.type, 'n8n-nodes-base.notANode');
  });
});
