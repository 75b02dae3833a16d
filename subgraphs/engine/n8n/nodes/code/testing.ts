import assert from 'node:assert/strict';
import { NodeFailed, disposeHarness, runNode, type Json } from '../../../../../test/support/n8n-harness';
import type { BinaryData } from '../../../expressions';
import type { Item, NodeContext } from '../../../nodes';
import { CODE_LIMITS, Sandbox } from '../../../sandbox';
import { code } from './code';

/** Test helpers for the Code node's tests (code*.test.ts). */

const sandbox = new Sandbox({ ...CODE_LIMITS, poolSize: 1 });

/** For an `after` hook: the sandboxes hold isolates. */
export function disposeCodeTesting(): void {
  disposeHarness();
  sandbox.dispose();
}

/** Output items compared with n8n's: values, types, item count and the order of keys. */
export function assertItems(actual: Json[] | undefined, expected: Json[]): void {
  assert.deepEqual(actual, expected);
  assert.equal(JSON.stringify(actual), JSON.stringify(expected), 'key order differs');
}

export interface Options {
  mode?: 'runOnceForAllItems' | 'runOnceForEachItem';
  version?: number;
  language?: string;
}

/** A Code node as n8n exports it. */
export function node(jsCode: string, opts: Options = {}) {
  const parameters: Json = { jsCode };
  if (opts.mode) parameters.mode = opts.mode;
  if (opts.language) parameters.language = opts.language;
  return { type: 'n8n-nodes-base.code', typeVersion: opts.version ?? 2, parameters };
}

/** The json of the items the node passes on. */
export async function run(jsCode: string, items: Json[] = [{}], opts: Options = {}): Promise<Json[]> {
  const out = await runNode(node(jsCode, opts), items);
  return out[0]!;
}

export const each = (jsCode: string, items: Json[] = [{}], opts: Options = {}) => run(jsCode, items, { ...opts, mode: 'runOnceForEachItem' });

/** The message the node fails with. */
export async function failure(jsCode: string, items: Json[] = [{}], opts: Options = {}): Promise<string> {
  try {
    await runNode(node(jsCode, opts), items);
  } catch (err) {
    assert.ok(err instanceof NodeFailed, String(err));
    return err.info.message.replace(/^Node "Node" failed: /, '');
  }
  assert.fail('the node did not fail');
}

/** The node run directly: its log lines, its items' paired items and files, a time limit of its own, what a v1 executor tells it. */
export async function direct(
  jsCode: string,
  items: Json[],
  extra: Partial<Pick<NodeContext, 'continueOnFail' | 'inputSource' | 'lineage'>> & {
    timeout?: number;
    mode?: string;
    nodes?: Record<string, Json[]>;
    /** The input items' files, by item. */
    files?: (Record<string, BinaryData> | undefined)[];
    maxBinaryBytes?: number;
    /** Told the payload each sandbox run is given. */
    onInput?: (input: string) => void;
  } = {},
) {
  const logs: [string, string][] = [];
  const parameters = { jsCode, ...(extra.mode ? { mode: extra.mode } : {}) };
  const input = items.map((json, i): Item => (extra.files?.[i] ? { json, binary: extra.files[i] } : { json }));
  const ctx: NodeContext = {
    continueOnFail: extra.continueOnFail ?? false,
    inputSource: extra.inputSource,
    lineage: extra.lineage,
    node: { name: 'Code', type: 'n8n-nodes-base.code', typeVersion: 2, position: [0, 0], parameters, timeout: extra.timeout },
    inputs: [input],
    items: input,
    parameters: async () => [parameters],
    checkOutput: () => undefined,
    expressionData: {
      items: input,
      nodes: new Map(Object.entries(extra.nodes ?? {}).map(([name, list]) => [name, list.map((json) => ({ json }))])),
      execution: { id: 'e1', mode: 'webhook', resumeUrl: 'http://x/resume/e1' },
      workflow: { id: 'w1', name: 'W', active: true },
    },
    signal: new AbortController().signal,
    services: {
      codeSandbox: extra.onInput
        ? { memoryMb: sandbox.memoryMb, timeoutMs: sandbox.timeoutMs, dispose: () => undefined, run: (req) => (extra.onInput!(req.input), sandbox.run(req)) }
        : sandbox,
      maxBinaryBytes: extra.maxBinaryBytes,
      fetch: async () => assert.fail('no network'),
      runWorkflow: async () => assert.fail('no sub-workflows'),
    },
    log: (message, level = 'info') => void logs.push([level, message]),
  };
  const result = await code.execute(ctx);
  const out = result.outputs[0]!;
  return { items: out.map((i) => i.json), paired: out.map((i) => i.pairedItem), binary: out.map((i) => i.binary), logs };
}
