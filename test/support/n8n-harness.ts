import { AppError } from '../../kernel/errors';
import { compile, validateDefinition } from '../../subgraphs/engine/executor/compile';
import { UNLIMITED } from '../../subgraphs/engine/nodes';
import { chooseStart, WorkflowExecutor } from '../../subgraphs/engine/executor/loop';
import type { ExecutionErrorInfo } from '../../subgraphs/engine/executor/types';
import { ExpressionEngine, type Item } from '../../subgraphs/engine/expressions/engine';
import { importWorkflow } from '../../subgraphs/engine/n8n/import';
import { NODE_TYPES } from '../../subgraphs/engine/executor/catalog';
import type { NodeDefinition, NodeServices, WebhookReply } from '../../subgraphs/engine/nodes/types';
import { splitInBatches } from '../../subgraphs/engine/n8n/nodes/split-in-batches/split-in-batches';
import { CODE_LIMITS, EXPRESSION_LIMITS, Sandbox } from '../../subgraphs/engine/sandbox/isolate';
import type { JsonAnswer } from './platform';

/**
 * Runs n8n-format nodes and workflows as an import and an execution would (validation, the executor,
 * the real expression engine and sandboxes), without the database: what the n8n compatibility tests
 * compare with n8n's documented outputs. The node under test is "Node", fed by already-run nodes
 * "Input 1", "Input 2", …; call `disposeHarness` afterwards (the sandboxes hold isolates).
 */

/** An item's json (or a node's parameters) as the tests write and read it: reached into directly, like `rest`'s bodies (the assertions check its shape). */
export type Json = Record<string, JsonAnswer['body']>;

export interface NodeUnderTest {
  type: string;
  typeVersion?: number;
  parameters?: Json;
  /** Node settings as n8n exports them: onError, alwaysOutputData, executeOnce, retryOnFail, … */
  [setting: string]: unknown;
}

export interface HarnessOptions {
  /** The workflow's settings (n8n's `settings`: timezone, …). */
  settings?: Json;
  /** Services besides the sandbox (fetch, runWorkflow). */
  services?: Partial<NodeServices>;
}

/** The node failed and stopped the execution: `info` is what the execution reports. */
export class NodeFailed extends Error {
  constructor(readonly info: ExecutionErrorInfo) {
    super(info.message);
  }
}

/**
 * Split In Batches until the n8n node registry (n8n/nodes/index.ts) lists it: added to the node
 * types of this process for the tests (a no-op once it is registered).
 */
export function registerTestNode(def: NodeDefinition, type = `n8n-nodes-base.${def.name}`): void {
  const types = NODE_TYPES as Map<string, NodeDefinition>;
  if (!types.has(type)) types.set(type, def);
}
registerTestNode(splitInBatches);

let sandboxes: { expressions: Sandbox; code: Sandbox; executor: WorkflowExecutor } | undefined;

function harness() {
  if (!sandboxes) {
    const expressions = new Sandbox({ ...EXPRESSION_LIMITS, poolSize: 2 });
    sandboxes = { expressions, code: new Sandbox({ ...CODE_LIMITS, poolSize: 2 }), executor: new WorkflowExecutor(new ExpressionEngine(expressions)) };
  }
  return sandboxes;
}

export function disposeHarness(): void {
  sandboxes?.expressions.dispose();
  sandboxes?.code.dispose();
  sandboxes = undefined;
}

/** One node fed with `inputs` (the items of input 1, or a list per input): the json of each of its outputs. */
export async function runNode(node: NodeUnderTest, inputs: Json[] | Json[][], opts: HarnessOptions = {}): Promise<Json[][]> {
  const lists: Json[][] = inputs.length > 0 && inputs.every((i) => Array.isArray(i)) ? (inputs as Json[][]) : [inputs as Json[]];
  const sources = lists.map((_, i) => ({ name: `Input ${i + 1}`, type: 'n8n-nodes-base.noOp', typeVersion: 1, position: [0, i * 200], parameters: {} }));
  const workflow = {
    nodes: [...sources, { position: [400, 0], ...node, name: 'Node' }],
    connections: Object.fromEntries(sources.map((s, i) => [s.name, { main: [[{ node: 'Node', type: 'main', index: i }]] }])),
    settings: opts.settings ?? {},
  };
  const pinned = Object.fromEntries(sources.map((s, i) => [s.name, [lists[i]!]]));
  const run = await runWorkflow(workflow, { ...opts, pinned });
  if (run.error) throw new NodeFailed(run.error);
  return run.nodes.get('Node') ?? [];
}

/** The json of output 0 of n8n's `type` (its short name: `sort`, `itemLists`, …) at `typeVersion`, fed `items`. */
export async function runOutput(type: string, typeVersion: number, parameters: Json, items: Json[] | Json[][], opts?: HarnessOptions): Promise<Json[]> {
  return (await runNode({ type: `n8n-nodes-base.${type}`, typeVersion, parameters }, items, opts))[0] ?? [];
}

/** What the execution reports when that node fails (`runOutput`'s arguments); the test fails if it does not. */
export async function outputFailure(
  type: string,
  typeVersion: number,
  parameters: Json,
  items: Json[] | Json[][],
  opts?: HarnessOptions,
): Promise<ExecutionErrorInfo> {
  const err = await runOutput(type, typeVersion, parameters, items, opts).then(
    () => {
      throw new Error(`n8n-nodes-base.${type} ${typeVersion} should have failed`);
    },
    (e: unknown) => e,
  );
  if (!(err instanceof NodeFailed)) throw err;
  return err.info;
}

export interface WorkflowRun {
  status: 'success' | 'error' | 'waiting' | 'aborted';
  error?: ExecutionErrorInfo;
  /** Each node that ran: the json of its items by output (the last run's, if it ran more than once). */
  nodes: Map<string, Json[][]>;
  /** The json of the last node's items (the execution's result). */
  result: Json[];
  replies: WebhookReply[];
  /** Every node run in order (v1 workflows run a node once per arriving branch, and again in loops). */
  runs: { node: string; runIndex: number; output: Json[][] }[];
  /** Each node's whole items (json and binary files) by output, as `nodes` holds their json. */
  items: Map<string, Item[][]>;
}

/**
 * An n8n export run once: `input` is what its trigger emits; `pinned` gives nodes that count as
 * already run, with their outputs (as n8n's pinData, but their successors run).
 */
export async function runWorkflow(
  exported: Json,
  opts: HarnessOptions & {
    input?: Json[];
    pinned?: Record<string, Json[][]>;
    /** As `pinned`, whole items (with binary files). */
    pinnedItems?: Record<string, Item[][]>;
    mode?: string;
    maxNodeRuns?: number;
  } = {},
): Promise<WorkflowRun> {
  const { executor, code } = harness();
  const imported = importWorkflow({ settings: opts.settings ?? {}, ...exported });
  const definition = validateDefinition(imported);
  const compiled = compile(definition);
  const nodes = new Map<string, Json[][]>();
  const done = new Map<string, Item[][]>([
    ...Object.entries(opts.pinned ?? {}).map(([name, outputs]): [string, Item[][]] => [name, outputs.map((list) => list.map((json) => ({ json })))]),
    ...Object.entries(opts.pinnedItems ?? {}),
  ]);
  const items = new Map<string, Item[][]>();
  const replies: WebhookReply[] = [];
  const runs: WorkflowRun['runs'] = [];
  const mode = opts.mode ?? 'manual';
  const outcome = await executor.run({
    compiled,
    execution: { id: 'harness', mode, resumeUrl: 'http://localhost/resume' },
    workflow: { id: 'harness', name: typeof exported.name === 'string' ? exported.name : 'Harness', active: false, timezone: definition.settings.timezone },
    input: (opts.input ?? [{}]).map((json) => ({ json })),
    startNode: chooseStart(compiled, mode),
    done,
    budgets: opts.maxNodeRuns ? { ...UNLIMITED, maxLoopTurns: opts.maxNodeRuns } : undefined,
    signal: new AbortController().signal,
    services: {
      codeSandbox: code,
      runInline(json, items, signal) {
        return executor.runInline(json, items, { execution: { id: 'harness', mode, resumeUrl: '' }, signal, services: this });
      },
      fetch: async () => {
        throw new Error('no network in the n8n harness');
      },
      runWorkflow: async () => {
        throw new Error('no sub-workflows in the n8n harness unless given');
      },
      ...opts.services,
    },
    hooks: {
      afterNode: (run) => {
        if (!run.output) return;
        const output = run.output.map((list) => list.map((i) => i.json));
        nodes.set(run.node, output);
        items.set(run.node, run.output);
        runs.push({ node: run.node, runIndex: run.runIndex, output });
      },
      reply: (r) => void replies.push(r),
    },
  });
  return {
    status: outcome.status,
    error: outcome.status === 'error' ? outcome.error : undefined,
    nodes,
    result: outcome.status === 'success' ? outcome.result.items : [],
    replies,
    runs,
    items,
  };
}

/** One node fed with whole `items` (binary files included) on input 1: its outputs' whole items. */
export async function runItems(node: NodeUnderTest, items: Item[], opts: HarnessOptions = {}): Promise<Item[][]> {
  const workflow = {
    nodes: [
      { name: 'Input 1', type: 'n8n-nodes-base.noOp', typeVersion: 1, position: [0, 0], parameters: {} },
      { position: [400, 0], ...node, name: 'Node' },
    ],
    connections: { 'Input 1': { main: [[{ node: 'Node', type: 'main', index: 0 }]] } },
    settings: opts.settings ?? {},
  };
  const run = await runWorkflow(workflow, { ...opts, pinnedItems: { 'Input 1': [items] } });
  if (run.error) throw new NodeFailed(run.error);
  return run.items.get('Node') ?? [];
}

/** What the execution reports when that node fails on whole `items`; the test fails if it does not. */
export async function itemsFailure(node: NodeUnderTest, items: Item[], opts: HarnessOptions = {}): Promise<ExecutionErrorInfo> {
  const err = await runItems(node, items, opts).then(
    () => {
      throw new Error(`${node.type} should have failed`);
    },
    (e: unknown) => e,
  );
  if (!(err instanceof NodeFailed)) throw err;
  return err.info;
}

/** What an import of this node answers when it is refused (WORKFLOW_INVALID's details), or undefined when accepted. */
export function importRefusal(node: NodeUnderTest): (Json & { message: string }) | undefined {
  try {
    validateDefinition(importWorkflow({ nodes: [{ name: 'Node', position: [0, 0], ...node }], connections: {} }));
    return undefined;
  } catch (err) {
    if (err instanceof AppError && err.code === 'WORKFLOW_INVALID') return { message: err.message, ...err.details };
    throw err;
  }
}
