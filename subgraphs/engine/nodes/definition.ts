import { AppError } from '../../../kernel/errors';

/*
 * The shapes of a workflow definition (n8n's format) and the small helpers nodes need. The
 * checks and the compilation are the executor's (executor/compile.ts): they look up every node
 * type, so a node that imported them would close a circle.
 */

export interface WorkflowNode {
  name: string;
  /** `engine.<name>` */
  type: string;
  position: [number, number];
  parameters: Record<string, unknown>;
  id?: string;
  typeVersion?: number;
  notes?: string;
  /** A disabled node passes its first input on unchanged. */
  disabled?: boolean;
  retryOnFail?: boolean;
  /** Attempts when retryOnFail (default 3, at most 10). */
  maxTries?: number;
  /** Milliseconds between attempts (default 1000, at most 300000). */
  waitBetweenTries?: number;
  /** A failure becomes an item {error} on the main output and the execution goes on. */
  continueOnFail?: boolean;
  /** Seconds one attempt of the node may take (the code node's sandbox time limit too). */
  timeout?: number;
  /**
   * n8n nodes (executor/loop.ts): `continueRegularOutput` passes the input on when the node fails,
   * `continueErrorOutput` adds a last output for the items that failed; default stopWorkflow.
   */
  onError?: OnError;
  /** n8n nodes: a node that outputs nothing passes one empty item on. */
  alwaysOutputData?: boolean;
  /** n8n nodes: runs with the first item of each input only. */
  executeOnce?: boolean;
  /** The stored credentials the node uses, by n8n credential type: `{httpHeaderAuth: {id, name}}` (credentials/). */
  credentials?: Record<string, { id: string; name: string }>;
}

export const ON_ERROR = ['stopWorkflow', 'continueRegularOutput', 'continueErrorOutput'] as const;
export type OnError = (typeof ON_ERROR)[number];

export interface Connection {
  node: string;
  type: 'main';
  index: number;
}

export type Connections = Record<string, { main: Connection[][] }>;

export interface WorkflowSettings {
  timezone?: string;
  /** A workflow run (as an async execution) with the failure's details when an execution fails. */
  errorWorkflow?: string;
  /** Seconds an execution may run (waiting not counted): lowers the platform's ENGINE_EXECUTION_MAX_DURATION_MS (nodes/budgets.ts). */
  executionTimeout?: number;
  [key: string]: unknown;
}

export interface WorkflowDefinition {
  nodes: WorkflowNode[];
  connections: Connections;
  settings: WorkflowSettings;
}

/** The node's typeVersion (n8n's default: 1). */
export function versionOf(node: WorkflowNode): number {
  return node.typeVersion ?? 1;
}

export function workflowInvalid(message: string, details: Record<string, unknown>): AppError {
  return new AppError('WORKFLOW_INVALID', message, details);
}
