import assert from 'node:assert/strict';
import { outputFailure, runNode, type Json } from '../../../../../test/support/n8n-harness';

/** Test support for the Merge node tests (merge*.test.ts). */

export function mergeNode(typeVersion: number, parameters: Json = {}) {
  return { type: 'n8n-nodes-base.merge', typeVersion, parameters };
}

/** The items of the node's only output, run with one list per input. */
export async function merged(typeVersion: number, parameters: Json, inputs: Json[][]): Promise<Json[]> {
  const out = await runNode(mergeNode(typeVersion, parameters), inputs);
  assert.equal(out.length <= 1, true, 'the Merge node has one output');
  return out[0] ?? [];
}

/** Equal items, keys in the same order (n8n users see key order in tables and downstream nodes). */
export function same(actual: unknown, expected: unknown): void {
  assert.deepEqual(actual, expected);
  assert.equal(JSON.stringify(actual), JSON.stringify(expected), 'same key order');
}

/** The message the execution reports when Merge at `typeVersion` fails on these inputs. */
export async function mergeFailure(typeVersion: number, parameters: Json, inputs: Json[][]): Promise<string> {
  return (await outputFailure('merge', typeVersion, parameters, inputs)).message;
}
