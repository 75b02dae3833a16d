import { omitNulls } from '../output';
import { bodyField, boolParam, defineRoute, intParam, type RouteDef } from '../route';
import { EXECUTION_NODE_DATA, EXECUTION_RUN, PAGINATION, WEBHOOK_AUTHENTICATION, WEBHOOK_SUMMARY, WORKFLOW_STATISTICS, WORKFLOW_SUMMARY } from './selections';
import type { ExecutionNodeData, ExecutionRun, Pagination, WebhookAuthentication, WebhookSummary, WorkflowSummary } from './selections';

/**
 * The workflow engine (spec 2): `/v1/engine/...` (main layout) and the native interface
 * `/engine/api/v1/...` (header X-ENGINE-API-KEY). Field names as spec 2's tables; opaque JSON
 * (node parameters, connections, settings, data, outputs) passes through unchanged.
 */

/** Payloads may be 5 MB (PAYLOAD_TOO_LARGE past it); the headroom lets the service say so with details. */
const PAYLOAD_BODY_LIMIT = 6 * 1024 * 1024;

const WORKFLOW = /* GraphQL */ `
  workflowId name description tags active version nodeCount
  nodes {
    name type position parameters id typeVersion notes disabled retryOnFail maxTries waitBetweenTries continueOnFail timeout onError alwaysOutputData
    executeOnce
  }
  connections settings createdAt updatedAt webhookUrl lastExecuted ${WORKFLOW_STATISTICS}`;
/** A node's fields as selected (null where the node does not set one): answered without its nulls. */
type WorkflowNode = Record<string, unknown>;
interface Workflow extends Omit<WorkflowSummary, 'description'> {
  description: string | null;
  nodes: WorkflowNode[];
  connections: Record<string, unknown>;
  settings: Record<string, unknown>;
  createdAt: string;
  updatedAt: string;
}

const EXECUTION = /* GraphQL */ `${EXECUTION_RUN} status mode resumeUrl originalExecutionId`;
interface Execution extends ExecutionRun {
  status: string;
  mode: string;
  resumeUrl: string | null;
  originalExecutionId: string | null;
  /** Selected by GET /executions/:id?includeData=true only. */
  nodeData?: ExecutionNodeData[] | null;
}

const WEBHOOK = /* GraphQL */ `
  webhookId workflowId workflowName path url method responseMode active createdAt updatedAt ${WEBHOOK_AUTHENTICATION}
  rateLimit { windowMs maxRequests keyBy }
  statistics { totalRequests successfulRequests failedRequests rejectedRequests averageResponseTime lastTriggered }`;
interface Webhook {
  webhookId: string;
  workflowId: string;
  workflowName: string;
  path: string;
  url: string;
  method: string;
  responseMode: string;
  active: boolean;
  createdAt: string;
  updatedAt: string;
  authentication: WebhookAuthentication;
  rateLimit: { windowMs: number; maxRequests: number; keyBy: string } | null;
  statistics: {
    totalRequests: number;
    successfulRequests: number;
    failedRequests: number;
    rejectedRequests: number;
    averageResponseTime: number;
    lastTriggered: string | null;
  };
}

const workflowOut = (w: Workflow) => ({
  workflowId: w.workflowId,
  name: w.name,
  ...(w.description !== null ? { description: w.description } : {}),
  tags: w.tags,
  nodes: w.nodes.map(omitNulls),
  connections: w.connections,
  active: w.active,
  version: w.version,
  settings: w.settings,
  statistics: w.statistics,
  createdAt: w.createdAt,
  updatedAt: w.updatedAt,
  lastExecuted: w.lastExecuted,
  webhookUrl: w.webhookUrl,
});

const executionOut = (e: Execution) => ({
  executionId: e.executionId,
  workflowId: e.workflowId,
  workflowName: e.workflowName,
  status: e.status,
  mode: e.mode,
  progress: e.progress,
  ...omitNulls({
    result: e.result,
    error: e.error,
    duration: e.duration,
    startedAt: e.startedAt,
    finishedAt: e.finishedAt,
    failedAt: e.failedAt,
    canceledAt: e.canceledAt,
    estimatedCompletionAt: e.estimatedCompletionAt,
    waitTill: e.waitTill,
    resumeUrl: e.resumeUrl,
    originalExecutionId: e.originalExecutionId,
  }),
  ...(e.nodeData ? { nodeData: e.nodeData.map(omitNulls) } : {}),
});

const webhookOut = (w: Webhook) => ({
  webhookId: w.webhookId,
  workflowId: w.workflowId,
  workflowName: w.workflowName,
  path: w.path,
  url: w.url,
  method: w.method,
  authentication: omitNulls(w.authentication),
  responseMode: w.responseMode,
  ...(w.rateLimit ? { rateLimit: w.rateLimit } : {}),
  active: w.active,
  statistics: w.statistics,
  createdAt: w.createdAt,
  updatedAt: w.updatedAt,
});

const UPDATE_FIELDS = ['name', 'description', 'tags', 'nodes', 'connections', 'active', 'settings'];

// ---------------------------------------------------------------------------------------------
// Routes shared by both layouts (paths relative to the engine's base)

const getWorkflow = defineRoute<{ workflow: Workflow }>({
  method: 'GET',
  path: '/workflows/:workflowId',
  operation: /* GraphQL */ `
    query EngineWorkflow($workflowId: ID!) {
      workflow(workflowId: $workflowId) {
        ${WORKFLOW}
      }
    }
  `,
  variables: ({ params }) => ({ workflowId: params.workflowId }),
  pick: ({ workflow }) => workflowOut(workflow),
});

const listWorkflows = defineRoute<{ workflows: { workflows: WorkflowSummary[]; pagination: Pagination } }>({
  method: 'GET',
  path: '/workflows',
  operation: /* GraphQL */ `
    query EngineWorkflows($active: Boolean, $tag: String, $search: String, $limit: Int, $offset: Int) {
      workflows(active: $active, tag: $tag, search: $search, limit: $limit, offset: $offset) {
        workflows { ${WORKFLOW_SUMMARY} }
        ${PAGINATION}
      }
    }
  `,
  variables: ({ query }) => ({
    active: boolParam(query.active),
    tag: query.tag,
    search: query.search,
    limit: intParam(query.limit) ?? 20,
    offset: intParam(query.offset) ?? 0,
  }),
  pick: ({ workflows: page }) => ({
    workflows: page.workflows.map((w) => ({
      workflowId: w.workflowId,
      name: w.name,
      active: w.active,
      tags: w.tags,
      nodes: w.nodeCount,
      lastExecuted: w.lastExecuted,
      executions: w.statistics.executions,
      successRate: w.statistics.successRate,
      averageDuration: w.statistics.averageDuration,
      ...(w.webhookUrl ? { webhookUrl: w.webhookUrl } : {}),
    })),
    pagination: page.pagination,
  }),
});

const deleteWorkflow = defineRoute({
  method: 'DELETE',
  path: '/workflows/:workflowId',
  operation: /* GraphQL */ `
    mutation EngineDeleteWorkflow($workflowId: ID!) {
      deleteWorkflow(workflowId: $workflowId) {
        workflowId
        deletedAt
      }
    }
  `,
  variables: ({ params }) => ({ workflowId: params.workflowId }),
});

const activation = (action: 'activate' | 'deactivate') =>
  defineRoute({
    method: 'POST',
    path: `/workflows/:workflowId/${action}`,
    operation: `mutation Engine_${action}($workflowId: ID!) { ${action}Workflow(workflowId: $workflowId) { workflowId active version updatedAt } }`,
    variables: ({ params }) => ({ workflowId: params.workflowId }),
  });

const duplicateWorkflow = defineRoute<{ duplicateWorkflow: Pick<Workflow, 'workflowId' | 'name' | 'active' | 'version' | 'createdAt'> }>({
  method: 'POST',
  path: '/workflows/:workflowId/duplicate',
  operation: /* GraphQL */ `
    mutation EngineDuplicateWorkflow($workflowId: ID!, $name: String!) {
      duplicateWorkflow(workflowId: $workflowId, name: $name) {
        workflowId
        name
        active
        version
        createdAt
      }
    }
  `,
  variables: ({ params, body }) => ({ workflowId: params.workflowId, name: bodyField(body, 'name') }),
  status: 201,
  pick: ({ duplicateWorkflow: w }, req) => ({
    workflowId: w.workflowId,
    name: w.name,
    sourceWorkflowId: req.params.workflowId,
    active: w.active,
    version: w.version,
    createdAt: w.createdAt,
  }),
});

const exportWorkflow = defineRoute({
  method: 'GET',
  path: '/workflows/:workflowId/export',
  operation: /* GraphQL */ `
    query EngineExportWorkflow($workflowId: ID!, $format: String) {
      exportWorkflow(workflowId: $workflowId, format: $format) {
        format
        workflow
      }
    }
  `,
  variables: ({ params, query }) => ({ workflowId: params.workflowId, format: query.format ?? 'json' }),
});

const importWorkflow = defineRoute({
  method: 'POST',
  path: '/workflows/import',
  operation: /* GraphQL */ `
    mutation EngineImportWorkflow($workflow: JSON!, $name: String) {
      importWorkflow(workflow: $workflow, name: $name) {
        workflowId
        name
        nodes: nodeCount
        active
        version
        createdAt
      }
    }
  `,
  variables: ({ body }) => ({ workflow: bodyField(body, 'workflow'), name: bodyField(body, 'name') }),
  status: 201,
  bodyLimit: PAYLOAD_BODY_LIMIT,
});

const executeWorkflow = defineRoute<{ executeWorkflow: Execution }>({
  method: 'POST',
  path: '/workflows/:workflowId/execute',
  operation: /* GraphQL */ `
    mutation EngineExecuteWorkflow($workflowId: ID!, $input: ExecuteWorkflowInput) {
      executeWorkflow(workflowId: $workflowId, input: $input) {
        ${EXECUTION}
      }
    }
  `,
  variables: ({ params, body }) => ({ workflowId: params.workflowId, input: body ?? {} }),
  bodyLimit: PAYLOAD_BODY_LIMIT,
  pick: ({ executeWorkflow: e }) => {
    const out = executionOut(e);
    // async: executionId, workflowId, status running, startedAt; sync: the finished execution.
    return e.status === 'running'
      ? {
          executionId: out.executionId,
          workflowId: out.workflowId,
          workflowName: out.workflowName,
          status: out.status,
          startedAt: out.startedAt,
          progress: out.progress,
        }
      : out;
  },
});

const getExecution = defineRoute<{ execution: Execution }>({
  method: 'GET',
  path: '/executions/:executionId',
  operation: /* GraphQL */ `
    query EngineExecution($executionId: ID!, $includeData: Boolean!) {
      execution(executionId: $executionId) {
        ${EXECUTION}
        nodeData @include(if: $includeData) { ${EXECUTION_NODE_DATA} }
      }
    }
  `,
  variables: ({ params, query }) => ({ executionId: params.executionId, includeData: boolParam(query.includeData) ?? false }),
  pick: ({ execution }) => executionOut(execution),
});

const listExecutions = defineRoute<{ executions: { executions: Record<string, unknown>[]; pagination: Pagination } }>({
  method: 'GET',
  path: '/executions',
  operation: /* GraphQL */ `
    query EngineExecutions($workflowId: ID, $status: String, $startDate: DateTimeISO, $endDate: DateTimeISO, $limit: Int, $offset: Int) {
      executions(workflowId: $workflowId, status: $status, startDate: $startDate, endDate: $endDate, limit: $limit, offset: $offset) {
        executions {
          executionId
          workflowId
          workflowName
          status
          mode
          duration
          startedAt
          finishedAt
        }
        ${PAGINATION}
      }
    }
  `,
  variables: ({ query }) => ({
    workflowId: query.workflowId,
    status: query.status,
    startDate: query.startDate,
    endDate: query.endDate,
    limit: intParam(query.limit) ?? 20,
    offset: intParam(query.offset) ?? 0,
  }),
  pick: ({ executions: page }) => ({ executions: page.executions.map(omitNulls), pagination: page.pagination }),
});

const retryExecution = defineRoute({
  method: 'POST',
  path: '/executions/:executionId/retry',
  operation: /* GraphQL */ `
    mutation EngineRetryExecution($executionId: ID!, $fromNode: String) {
      retryExecution(executionId: $executionId, fromNode: $fromNode) {
        executionId
        originalExecutionId
        workflowId
        status
        startedAt
      }
    }
  `,
  variables: ({ params, body }) => ({ executionId: params.executionId, fromNode: bodyField(body, 'fromNode') }),
  status: 201,
});

const cancelExecution = defineRoute({
  method: 'POST',
  path: '/executions/:executionId/cancel',
  operation: /* GraphQL */ `
    mutation EngineCancelExecution($executionId: ID!) {
      cancelExecution(executionId: $executionId) {
        executionId
        status
        canceledAt
      }
    }
  `,
  variables: ({ params }) => ({ executionId: params.executionId }),
});

const deleteExecution = defineRoute({
  method: 'DELETE',
  path: '/executions/:executionId',
  operation: /* GraphQL */ `
    mutation EngineDeleteExecution($executionId: ID!) {
      deleteExecution(executionId: $executionId) {
        executionId
        deletedAt
      }
    }
  `,
  variables: ({ params }) => ({ executionId: params.executionId }),
});

const executionLogs = defineRoute<{ execution: { executionId: string; logs: Record<string, unknown>[] } }>({
  method: 'GET',
  path: '/executions/:executionId/logs',
  operation: /* GraphQL */ `
    query EngineExecutionLogs($executionId: ID!) {
      execution(executionId: $executionId) {
        executionId
        logs {
          timestamp
          level
          node
          message
        }
      }
    }
  `,
  variables: ({ params }) => ({ executionId: params.executionId }),
  pick: ({ execution }) => ({ executionId: execution.executionId, logs: execution.logs.map(omitNulls) }),
});

const createWebhook = defineRoute<{ createWorkflowWebhook: Webhook }>({
  method: 'POST',
  path: '/webhooks',
  operation: /* GraphQL */ `
    mutation EngineCreateWebhook($input: CreateWorkflowWebhookInput!) {
      createWorkflowWebhook(input: $input) {
        ${WEBHOOK}
      }
    }
  `,
  variables: ({ body }) => ({ input: body }),
  status: 201,
  pick: ({ createWorkflowWebhook: w }) => webhookOut(w),
});

const getWebhook = defineRoute<{ workflowWebhook: Webhook }>({
  method: 'GET',
  path: '/webhooks/:webhookId',
  operation: /* GraphQL */ `
    query EngineWebhook($webhookId: ID!) {
      workflowWebhook(webhookId: $webhookId) {
        ${WEBHOOK}
      }
    }
  `,
  variables: ({ params }) => ({ webhookId: params.webhookId }),
  pick: ({ workflowWebhook: w }) => webhookOut(w),
});

/** A webhook as its list shows it. */
type ListedWebhook = WebhookSummary & {
  statistics: Pick<Webhook['statistics'], 'totalRequests' | 'lastTriggered'>;
};

const listWebhooks = defineRoute<{ workflowWebhooks: { webhooks: ListedWebhook[]; pagination: Pagination } }>({
  method: 'GET',
  path: '/webhooks',
  operation: /* GraphQL */ `
    query EngineWebhooks($workflowId: ID, $active: Boolean, $limit: Int, $offset: Int) {
      workflowWebhooks(workflowId: $workflowId, active: $active, limit: $limit, offset: $offset) {
        webhooks {
          ${WEBHOOK_SUMMARY}
          statistics {
            totalRequests
            lastTriggered
          }
        }
        ${PAGINATION}
      }
    }
  `,
  variables: ({ query }) => ({
    workflowId: query.workflowId,
    active: boolParam(query.active),
    limit: intParam(query.limit) ?? 20,
    offset: intParam(query.offset) ?? 0,
  }),
  pick: ({ workflowWebhooks: page }) => ({
    webhooks: page.webhooks.map((w) => ({
      webhookId: w.webhookId,
      workflowId: w.workflowId,
      path: w.path,
      url: w.url,
      method: w.method,
      active: w.active,
      responseMode: w.responseMode,
      totalRequests: w.statistics.totalRequests,
      lastTriggered: w.statistics.lastTriggered,
    })),
    pagination: page.pagination,
  }),
});

const updateWebhook = defineRoute<{ updateWorkflowWebhook: Webhook }>({
  method: 'PUT',
  path: '/webhooks/:webhookId',
  operation: /* GraphQL */ `
    mutation EngineUpdateWebhook($webhookId: ID!, $input: UpdateWorkflowWebhookInput!) {
      updateWorkflowWebhook(webhookId: $webhookId, input: $input) {
        ${WEBHOOK}
      }
    }
  `,
  variables: ({ params, body }) => ({ webhookId: params.webhookId, input: body ?? {} }),
  pick: ({ updateWorkflowWebhook: w }) => ({ ...webhookOut(w), webhookId: w.webhookId, updatedAt: w.updatedAt }),
});

const deleteWebhook = defineRoute({
  method: 'DELETE',
  path: '/webhooks/:webhookId',
  operation: /* GraphQL */ `
    mutation EngineDeleteWebhook($webhookId: ID!) {
      deleteWorkflowWebhook(webhookId: $webhookId) {
        webhookId
        deletedAt
      }
    }
  `,
  variables: ({ params }) => ({ webhookId: params.webhookId }),
});

const testWebhook = defineRoute({
  method: 'POST',
  path: '/webhooks/:webhookId/test',
  operation: /* GraphQL */ `
    mutation EngineTestWebhook($webhookId: ID!, $input: TestWorkflowWebhookInput) {
      testWorkflowWebhook(webhookId: $webhookId, input: $input) {
        testExecutionId
        webhookResponse {
          status
          headers
          body
        }
        workflowResult {
          status
          duration
        }
      }
    }
  `,
  variables: ({ params, body }) => ({ webhookId: params.webhookId, input: body ?? {} }),
  bodyLimit: PAYLOAD_BODY_LIMIT,
});

const webhookLogs = defineRoute<{ workflowWebhookLogs: { webhookId: string; logs: Record<string, unknown>[]; pagination: Pagination } }>({
  method: 'GET',
  path: '/webhooks/:webhookId/logs',
  operation: /* GraphQL */ `
    query EngineWebhookLogs($webhookId: ID!, $limit: Int, $offset: Int, $status: String) {
      workflowWebhookLogs(webhookId: $webhookId, limit: $limit, offset: $offset, status: $status) {
        webhookId
        logs {
          timestamp
          method
          sourceIp
          status
          reason
          statusCode
          responseTime
          executionId
          test
        }
        ${PAGINATION}
      }
    }
  `,
  variables: ({ params, query }) => ({
    webhookId: params.webhookId,
    limit: intParam(query.limit) ?? 50,
    offset: intParam(query.offset) ?? 0,
    status: query.status,
  }),
  pick: ({ workflowWebhookLogs: page }) => ({ webhookId: page.webhookId, logs: page.logs.map(omitNulls), pagination: page.pagination }),
});

const shared: RouteDef[] = [
  getWorkflow,
  listWorkflows,
  deleteWorkflow,
  activation('activate'),
  activation('deactivate'),
  duplicateWorkflow,
  exportWorkflow,
  importWorkflow,
  executeWorkflow,
  getExecution,
  listExecutions,
  retryExecution,
  cancelExecution,
  deleteExecution,
  executionLogs,
  createWebhook,
  getWebhook,
  listWebhooks,
  updateWebhook,
  deleteWebhook,
  testWebhook,
  webhookLogs,
];

// ---------------------------------------------------------------------------------------------
// Main layout: /v1/engine/...

const createWorkflow = defineRoute({
  method: 'POST',
  path: '/workflows',
  operation: /* GraphQL */ `
    mutation EngineCreateWorkflow($input: CreateWorkflowInput!) {
      createWorkflow(input: $input) {
        workflowId
        name
        active
        version
        createdAt
        webhookUrl
      }
    }
  `,
  variables: ({ body }) => ({ input: body }),
  status: 201,
  bodyLimit: PAYLOAD_BODY_LIMIT,
});

const updateWorkflow = defineRoute({
  method: 'PUT',
  path: '/workflows/:workflowId',
  operation: /* GraphQL */ `
    mutation EngineUpdateWorkflow($workflowId: ID!, $input: UpdateWorkflowInput!) {
      updateWorkflow(workflowId: $workflowId, input: $input) {
        workflowId
        name
        active
        version
        updatedAt
      }
    }
  `,
  variables: ({ params, body }) => ({ workflowId: params.workflowId, input: body ?? {} }),
  bodyLimit: PAYLOAD_BODY_LIMIT,
});

/** `/v1` surface routes (prefixed /engine). */
export const engineRoutes: RouteDef[] = [createWorkflow, updateWorkflow, ...shared].map((r) => ({ ...r, path: `/engine${r.path}` }));

// ---------------------------------------------------------------------------------------------
// Native interface: /engine/api/v1/... (n8n-like: POST /workflows imports, PATCH with {active})

const nativeCreate = defineRoute<{ importWorkflow: Workflow }>({
  method: 'POST',
  path: '/workflows',
  operation: /* GraphQL */ `
    mutation EngineNativeCreate($workflow: JSON!) {
      importWorkflow(workflow: $workflow) {
        ${WORKFLOW}
      }
    }
  `,
  variables: ({ body }) => ({ workflow: body }),
  status: 201,
  bodyLimit: PAYLOAD_BODY_LIMIT,
  pick: ({ importWorkflow: w }) => workflowOut(w),
});

const nativeUpdate = (method: 'PUT' | 'PATCH') =>
  defineRoute<{ updateWorkflow: Workflow }>({
    method,
    path: '/workflows/:workflowId',
    operation: /* GraphQL */ `
      mutation EngineNativeUpdate($workflowId: ID!, $input: UpdateWorkflowInput!) {
        updateWorkflow(workflowId: $workflowId, input: $input) {
          ${WORKFLOW}
        }
      }
    `,
    // Clients of the native interface send whole workflow objects (id, versionId, …): only the fields we own are taken.
    variables: ({ params, body }) => ({
      workflowId: params.workflowId,
      input: Object.fromEntries(Object.entries(body ?? {}).filter(([k]) => UPDATE_FIELDS.includes(k))),
    }),
    bodyLimit: PAYLOAD_BODY_LIMIT,
    pick: ({ updateWorkflow: w }) => workflowOut(w),
  });

/** `/engine/api/v1` surface routes. */
export const engineNativeRoutes: RouteDef[] = [nativeCreate, nativeUpdate('PUT'), nativeUpdate('PATCH'), ...shared];
