import type { CompiledWorkflow } from './compile';
import type { WorkflowNode, ItemLineage, NodeResult, NodeServices, ResumeWebhookOptions, SourceData, WebhookReply, WorkflowStaticData } from '../nodes';
import type { Item } from '../expressions';
import type { ExecutionBudgets } from '../nodes';

/**
 * What the engine loop takes, reports and returns (loop.ts, and loop-v1.ts for n8n's v1
 * order). Apart from the loop so that the v1 order, the execution service and the stores share
 * them without importing the loop itself.
 */

export interface ExecutionErrorInfo {
  code: 'NODE_EXECUTION_FAILED' | 'EXECUTION_FAILED';
  message: string;
  node?: string;
  nodeType?: string;
  details: Record<string, unknown>;
}

export interface NodeRun {
  node: string;
  /** Which run of the node this is in the execution, from 0 (only v1 workflows run a node more than once). */
  runIndex: number;
  nodeType: string;
  status: 'success' | 'error';
  startedAt: Date;
  durationMs: number;
  tries: number;
  /** Null when the node failed and stopped the execution. */
  output: Item[][] | null;
  error?: { message: string; details: Record<string, unknown> };
  /** v1: the node's context after this run (NodeContext.state), when it keeps one; stored so that a replay restores it. */
  state?: Record<string, unknown> | null;
}

/** A node run already stored (v1 replay): its outputs and the node's context after it. */
export interface StoredRun {
  output: Item[][];
  state?: Record<string, unknown> | null;
}

/** What a v1 node run gets besides its items (loop-v1.ts). */
export interface V1RunContext {
  state: Record<string, unknown>;
  inputSource: readonly (SourceData | null)[];
  lineage: ItemLineage;
}

export interface LogEntry {
  at: Date;
  level: 'debug' | 'info' | 'warn' | 'error';
  node?: string;
  message: string;
}

export interface Progress {
  nodesCompleted: number;
  nodesTotal: number;
  currentNode: string | null;
}

export interface ExecutorHooks {
  beforeNode?(node: WorkflowNode, progress: Progress): Promise<void> | void;
  afterNode?(run: NodeRun, progress: Progress): Promise<void> | void;
  log?(entry: LogEntry): void;
  /** The first respondToWebhook's answer, as soon as it is known. */
  reply?(reply: WebhookReply): void;
}

export interface RunRequest {
  compiled: CompiledWorkflow;
  execution: { id: string; mode: string; resumeUrl: string };
  /** timezone: the workflow's settings.timezone (dates in expressions and date nodes; default UTC). */
  workflow: { id: string; name: string; active: boolean; timezone?: string };
  /** n8n's pinned data by node name (manual runs only): those nodes output it instead of running. */
  pinned?: ReadonlyMap<string, readonly Item[]>;
  /** n8n's workflow static data for the code nodes; absent: none kept (each run starts empty). */
  staticData?: WorkflowStaticData;
  /** n8n's `$vars`: read-only text values by key (none when absent). */
  vars?: Readonly<Record<string, string>>;
  /** What the start node emits. */
  input: Item[];
  /** The trigger that receives the input (chooseStart); null: every node without inputs. */
  startNode: string | null;
  done?: ReadonlyMap<string, Item[][]>;
  /**
   * v1 workflows: the node runs already stored, by node and run index (resume, retry, re-run).
   * The execution is replayed from its start, each stored run taken from here instead of being run.
   * Without it, `done` counts as run 0 of each of its nodes.
   */
  stored?: ReadonlyMap<string, readonly (StoredRun | undefined)[]>;
  /** What the execution may use (budgets.ts); absent: no limits. Shared with its inline workflows. */
  budgets?: ExecutionBudgets;
  /** An inline workflow's run: a budget it crosses fails the execution that runs it, not only its node. */
  nested?: boolean;
  signal: AbortSignal;
  services: NodeServices;
  hooks?: ExecutorHooks;
}

export interface ExecutionResultData {
  lastNode: string | null;
  /** The json of the last node's items. */
  items: Record<string, unknown>[];
  nodesExecuted: number;
}

export type RunOutcome =
  | { status: 'success'; result: ExecutionResultData }
  | { status: 'error'; error: ExecutionErrorInfo; nodesExecuted: number }
  | {
      status: 'waiting';
      node: string;
      runIndex: number;
      items: Item[];
      until: Date | null;
      webhook: boolean;
      resume?: ResumeWebhookOptions;
      nodesExecuted: number;
    }
  | { status: 'aborted'; reason: unknown; nodesExecuted: number };

/** A node run as WorkflowExecutor.runNode reports it: the result and its record, or the failure that stops the execution. */
export type NodeRunOutcome = { kind: 'ok'; result: NodeResult; run: NodeRun } | { kind: 'failed'; run: NodeRun; error: ExecutionErrorInfo };

/** What the v1 order needs of WorkflowExecutor: one node run (retries, time limit, errors), the same in both orders. */
export interface NodeRunner {
  runNode(
    node: WorkflowNode,
    inputs: Item[][],
    seen: ReadonlyMap<string, Item[]>,
    req: RunRequest,
    log: (level: LogEntry['level'], message: string, node?: string) => void,
    v1?: V1RunContext,
  ): Promise<NodeRunOutcome>;
}
