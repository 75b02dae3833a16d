import type { WorkflowNode } from './fixtures';

/**
 * The workflow engine's resources as the engine tests read them (`/v1/engine`, `/engine/api/v1`):
 * the `data` inside `V1<…>`/`Platform<…>`. Items are what the workflow made: the tests compare them.
 */

/** One item's JSON as a node emits it. */
export type Item = Record<string, unknown>;

export interface Page {
  total: number;
  limit: number;
  offset: number;
  hasMore: boolean;
}

export interface ExecutionError {
  code: string;
  message: string;
  node: string | null;
  nodeType: string | null;
  details: Record<string, unknown>;
}

/** A node's run in an execution read with `includeData=true`; `J`: its items' JSON as the test reads it. */
export interface NodeRun<J = Item> {
  nodeName: string;
  nodeType: string;
  status: string;
  reused: boolean;
  duration: number;
  output: { main: { json: J; binary?: Record<string, Record<string, unknown>> }[][] };
  error?: ExecutionError | null;
}

/** `I`: the items the workflow ends with, and `J` the nodes' items, as the test reads them. */
export interface Execution<I = Item, J = Item> {
  executionId: string;
  workflowId: string;
  workflowName: string;
  status: string;
  mode: string;
  progress: { nodesCompleted: number; nodesTotal: number; currentNode: string | null };
  result: { items: I[]; lastNode: string };
  /** Set when the execution failed (the tests read it after checking the status). */
  error: ExecutionError;
  duration: number | null;
  startedAt: string;
  finishedAt: string | null;
  failedAt: string | null;
  canceledAt: string | null;
  waitTill: string | null;
  resumeUrl: string;
  originalExecutionId: string | null;
  deletedAt: string;
  /** Only with `includeData=true`. */
  nodeData: NodeRun<J>[];
}

export interface ExecutionList {
  executions: Execution[];
  pagination: Page;
}

export interface Workflow {
  workflowId: string;
  name: string;
  active: boolean;
  version: number;
  webhookUrl: string | null;
  nodes: WorkflowNode[];
  connections: unknown;
  settings: Record<string, unknown>;
  tags: string[];
  statistics: { executions: number; successRate: number; averageDuration: number };
  lastExecuted: string | null;
  updatedAt: string;
  deletedAt: string;
  sourceWorkflowId: string;
}

/** A workflow as a list or an import names it: `nodes` and `executions` are counts. */
export interface WorkflowSummary {
  workflowId: string;
  name: string;
  active: boolean;
  nodes: number;
  executions: number;
}

export interface WorkflowList {
  workflows: WorkflowSummary[];
  pagination: Page;
}

export interface ExecutionLogs {
  executionId: string;
  logs: { level: string; message: string; node?: string | null }[];
}
