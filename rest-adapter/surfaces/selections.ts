/**
 * The selections several routes (or surfaces) make of one GraphQL type, written once: a route
 * interpolates the constant where it selects that shape (`{ ${PAGINATION} }`), so adding a field
 * is one edit. Each constant has the TypeScript type of what it selects, declared by hand next to
 * it (no code generator): keep the two in step. Selections one file alone makes stay in that file,
 * written the same way.
 */

/** An offset-paged list's position (every list taking `limit`/`offset`). */
export const PAGINATION = /* GraphQL */ `pagination { total limit offset hasMore }`;
export interface Pagination {
  total: number;
  limit: number;
  offset: number;
  hasMore: boolean;
}

/** A Workflow's run statistics (durations in ms). */
export const WORKFLOW_STATISTICS = /* GraphQL */ `statistics { executions successRate averageDuration }`;
export interface WorkflowStatistics {
  executions: number;
  successRate: number;
  averageDuration: number;
}

/** A Workflow as lists show it (the engine's and the control plane's). */
export const WORKFLOW_SUMMARY = /* GraphQL */ `workflowId name description tags active version nodeCount lastExecuted webhookUrl ${WORKFLOW_STATISTICS}`;
export interface WorkflowSummary {
  workflowId: string;
  name: string;
  description: string | null;
  tags: string[];
  active: boolean;
  version: number;
  nodeCount: number;
  lastExecuted: string | null;
  webhookUrl: string | null;
  statistics: WorkflowStatistics;
}

/** A WorkflowExecution's run, common to the engine's layout and the control plane's (each adds its status and links). */
export const EXECUTION_RUN = /* GraphQL */ `
  executionId workflowId workflowName
  progress { nodesCompleted nodesTotal currentNode }
  result
  error { code message node nodeType details }
  duration startedAt finishedAt failedAt canceledAt estimatedCompletionAt waitTill`;
export interface ExecutionRun {
  executionId: string;
  workflowId: string;
  workflowName: string;
  progress: { nodesCompleted: number; nodesTotal: number; currentNode: string | null };
  result: unknown;
  error: { code: string; message: string; node: string | null; nodeType: string | null; details: Record<string, unknown> } | null;
  /** Milliseconds. */
  duration: number | null;
  startedAt: string;
  finishedAt: string | null;
  failedAt: string | null;
  canceledAt: string | null;
  estimatedCompletionAt: string | null;
  waitTill: string | null;
}

/** Each node run of an execution (GET …/executions/:id?includeData=true): the engine answers it whole, the control plane in its own spelling. */
export const EXECUTION_NODE_DATA = /* GraphQL */ `nodeName runIndex nodeType status startedAt duration tries reused output error`;
export interface ExecutionNodeData {
  nodeName: string;
  runIndex: number;
  nodeType: string;
  status: string;
  startedAt: string;
  /** Milliseconds. */
  duration: number;
  tries: number;
  reused: boolean;
  output: unknown;
  error: Record<string, unknown> | null;
}

/** A workflow webhook as lists and registrations show it (each route's `pick` orders its answer). */
export const WEBHOOK_SUMMARY = /* GraphQL */ `webhookId workflowId path url method active responseMode`;
export interface WebhookSummary {
  webhookId: string;
  workflowId: string;
  path: string;
  url: string;
  method: string;
  active: boolean;
  responseMode: string;
}

/** How a workflow webhook authenticates its callers (no secret is ever selected). */
export const WEBHOOK_AUTHENTICATION = /* GraphQL */ `authentication { type apiKeyHeader hmacHeader hmacAlgorithm username }`;
export interface WebhookAuthentication {
  type: string;
  apiKeyHeader: string | null;
  hmacHeader: string | null;
  hmacAlgorithm: string | null;
  username: string | null;
}
