import assert from 'node:assert/strict';
import { NodeFailed, runNode, runWorkflow, type Json, type NodeUnderTest } from '../../../../../test/support/n8n-harness';

/** Helpers of the If / Filter / Switch tests. */

/** What the execution reports when the node fails. */
export async function failure(node: NodeUnderTest, items: Json[]): Promise<NodeFailed['info']> {
  const err = await runNode(node, items).then(
    () => assert.fail('expected the node to fail'),
    (e: unknown) => e,
  );
  assert.ok(err instanceof NodeFailed, String(err));
  return err.info;
}

/** WORKFLOW_INVALID's details for an export connecting `output` of the node to another node, or undefined when accepted. */
export async function connectionRefusal(node: NodeUnderTest, output: number): Promise<Json | undefined> {
  const next = { name: 'Next', type: 'n8n-nodes-base.noOp', typeVersion: 1, position: [400, 0], parameters: {} };
  const main = [...Array.from({ length: output }, () => []), [{ node: 'Next', type: 'main', index: 0 }]];
  try {
    await runWorkflow({ nodes: [{ name: 'Node', position: [0, 0], ...node }, next], connections: { Node: { main } } });
    return undefined;
  } catch (err) {
    return (err as { details?: Json }).details ?? { error: String(err) };
  }
}
