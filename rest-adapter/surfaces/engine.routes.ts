import { omitNulls } from '../output';
import { bodyField, boolParam, defineRoute, intParam, strParam, type RouteDef } from '../route';
import {
  EngineAuthorizeCredentialDocument,
  EngineCancelExecutionDocument,
  EngineCreateVariableDocument,
  EngineCompleteCredentialAuthorizationDocument,
  EngineCreateCredentialDocument,
  EngineCredentialDocument,
  EngineCredentialsDocument,
  EngineDeleteCredentialDocument,
  EngineCreateWebhookDocument,
  EngineCreateWorkflowDocument,
  EngineDeleteExecutionDocument,
  EngineDeleteVariableDocument,
  EngineDeleteWebhookDocument,
  EngineDeleteWorkflowDocument,
  EngineDuplicateWorkflowDocument,
  EngineExecuteWorkflowDocument,
  EngineExecutionDocument,
  EngineExecutionLogsDocument,
  EngineExecutionsDocument,
  EngineExportWorkflowDocument,
  EngineImportWorkflowDocument,
  EngineNativeCreateDocument,
  EngineNativeUpdateDocument,
  EngineRetryExecutionDocument,
  EngineTestWebhookDocument,
  EngineVariableDocument,
  EngineVariablesDocument,
  EngineUpdateVariableDocument,
  EngineUpdateWebhookDocument,
  EngineUpdateWorkflowDocument,
  EngineWebhookDocument,
  EngineWebhookLogsDocument,
  EngineWebhooksDocument,
  EngineWorkflowDocument,
  EngineWorkflowsDocument,
  Engine_ActivateDocument,
  Engine_DeactivateDocument,
  type Engine_ActivateMutation,
  type Engine_ActivateMutationVariables,
  type Engine_DeactivateMutation,
  type EngineExecutionQuery,
  type EngineWebhookFieldsFragment,
  type EngineWorkflowFieldsFragment,
} from './generated';

/**
 * The workflow engine: `/v1/engine/...` (main layout) and the native interface
 * `/engine/api/v1/...` (header X-ENGINE-API-KEY). Field names as documented; opaque JSON
 * (node parameters, connections, settings, data, outputs) passes through unchanged. Operations:
 * engine.graphql.
 */

/** Payloads may be 5 MB (PAYLOAD_TOO_LARGE past it); the headroom lets the service say so with details. */
const PAYLOAD_BODY_LIMIT = 6 * 1024 * 1024;

const workflowOut = (w: EngineWorkflowFieldsFragment) => ({
  workflowId: w.workflowId,
  name: w.name,
  ...(w.description !== null ? { description: w.description } : {}),
  tags: w.tags,
  nodes: w.nodes.map(omitNulls),
  connections: w.connections,
  active: w.active,
  version: w.version,
  settings: w.settings,
  stickyNotes: w.stickyNotes,
  statistics: w.statistics,
  createdAt: w.createdAt,
  updatedAt: w.updatedAt,
  lastExecuted: w.lastExecuted,
  webhookUrl: w.webhookUrl,
});

/** An execution, with its node runs where they were selected (GET /executions/:id?includeData=true). */
const executionOut = (e: EngineExecutionQuery['execution']) => ({
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

const webhookOut = (w: EngineWebhookFieldsFragment) => ({
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

const getWorkflow = defineRoute({
  method: 'GET',
  path: '/workflows/:workflowId',
  operation: EngineWorkflowDocument,
  refusals: [{ code: 'WORKFLOW_NOT_FOUND', when: 'no workflow has this id' }],
  variables: ({ params }) => ({ workflowId: params.workflowId }),
  pick: ({ workflow }) => workflowOut(workflow),
});

const listWorkflows = defineRoute({
  method: 'GET',
  path: '/workflows',
  operation: EngineWorkflowsDocument,
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
  operation: EngineDeleteWorkflowDocument,
  refusals: [{ code: 'WORKFLOW_NOT_FOUND', when: 'no workflow has this id' }],
  variables: ({ params }) => ({ workflowId: params.workflowId }),
});

const activation = (action: 'activate' | 'deactivate') =>
  defineRoute<Engine_ActivateMutation | Engine_DeactivateMutation, Engine_ActivateMutationVariables>({
    method: 'POST',
    path: `/workflows/:workflowId/${action}`,
    operation: action === 'activate' ? Engine_ActivateDocument : Engine_DeactivateDocument,
    variables: ({ params }) => ({ workflowId: params.workflowId }),
  });

const duplicateWorkflow = defineRoute({
  method: 'POST',
  path: '/workflows/:workflowId/duplicate',
  operation: EngineDuplicateWorkflowDocument,
  refusals: [{ code: 'WORKFLOW_NOT_FOUND', when: 'no workflow has this id' }],
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
  operation: EngineExportWorkflowDocument,
  refusals: [{ code: 'WORKFLOW_NOT_FOUND', when: 'no workflow has this id' }],
  variables: ({ params, query }) => ({ workflowId: params.workflowId, format: query.format ?? 'json' }),
});

const importWorkflow = defineRoute({
  method: 'POST',
  path: '/workflows/import',
  operation: EngineImportWorkflowDocument,
  variables: ({ body }) => ({ workflow: bodyField(body, 'workflow'), name: bodyField(body, 'name') }),
  status: 201,
  bodyLimit: PAYLOAD_BODY_LIMIT,
});

const executeWorkflow = defineRoute({
  method: 'POST',
  path: '/workflows/:workflowId/execute',
  operation: EngineExecuteWorkflowDocument,
  refusals: [{ code: 'WORKFLOW_NOT_FOUND', when: 'no workflow has this id' }],
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
  shapes: ['running', 'success', 'error', 'waiting', 'canceled'].map((status) => ({ 'executeWorkflow.status': status })),
});

const getExecution = defineRoute({
  method: 'GET',
  path: '/executions/:executionId',
  operation: EngineExecutionDocument,
  variables: ({ params, query }) => ({ executionId: params.executionId, includeData: boolParam(query.includeData) ?? false }),
  pick: ({ execution }) => executionOut(execution),
});

const listExecutions = defineRoute({
  method: 'GET',
  path: '/executions',
  operation: EngineExecutionsDocument,
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
  operation: EngineRetryExecutionDocument,
  refusals: [{ code: 'conflict', when: 'the execution is neither failed nor canceled' }],
  variables: ({ params, body }) => ({ executionId: params.executionId, fromNode: bodyField(body, 'fromNode') }),
  status: 201,
});

const cancelExecution = defineRoute({
  method: 'POST',
  path: '/executions/:executionId/cancel',
  operation: EngineCancelExecutionDocument,
  refusals: [{ code: 'conflict', when: 'the execution is neither running nor waiting' }],
  variables: ({ params }) => ({ executionId: params.executionId }),
});

const deleteExecution = defineRoute({
  method: 'DELETE',
  path: '/executions/:executionId',
  operation: EngineDeleteExecutionDocument,
  variables: ({ params }) => ({ executionId: params.executionId }),
});

const executionLogs = defineRoute({
  method: 'GET',
  path: '/executions/:executionId/logs',
  operation: EngineExecutionLogsDocument,
  variables: ({ params }) => ({ executionId: params.executionId }),
  pick: ({ execution }) => ({ executionId: execution.executionId, logs: execution.logs.map(omitNulls) }),
});

const createWebhook = defineRoute({
  method: 'POST',
  path: '/webhooks',
  operation: EngineCreateWebhookDocument,
  refusals: [{ code: 'resource_already_exists', when: 'another webhook has this method and path' }],
  variables: ({ body }) => ({ input: body }),
  status: 201,
  pick: ({ createWorkflowWebhook: w }) => webhookOut(w),
});

const getWebhook = defineRoute({
  method: 'GET',
  path: '/webhooks/:webhookId',
  operation: EngineWebhookDocument,
  variables: ({ params }) => ({ webhookId: params.webhookId }),
  pick: ({ workflowWebhook: w }) => webhookOut(w),
});

const listWebhooks = defineRoute({
  method: 'GET',
  path: '/webhooks',
  operation: EngineWebhooksDocument,
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

const updateWebhook = defineRoute({
  method: 'PUT',
  path: '/webhooks/:webhookId',
  operation: EngineUpdateWebhookDocument,
  refusals: [{ code: 'resource_already_exists', when: 'another webhook has this method and path' }],
  variables: ({ params, body }) => ({ webhookId: params.webhookId, input: body ?? {} }),
  pick: ({ updateWorkflowWebhook: w }) => ({ ...webhookOut(w), webhookId: w.webhookId, updatedAt: w.updatedAt }),
});

const deleteWebhook = defineRoute({
  method: 'DELETE',
  path: '/webhooks/:webhookId',
  operation: EngineDeleteWebhookDocument,
  variables: ({ params }) => ({ webhookId: params.webhookId }),
});

const testWebhook = defineRoute({
  method: 'POST',
  path: '/webhooks/:webhookId/test',
  operation: EngineTestWebhookDocument,
  variables: ({ params, body }) => ({ webhookId: params.webhookId, input: body ?? {} }),
  bodyLimit: PAYLOAD_BODY_LIMIT,
});

const webhookLogs = defineRoute({
  method: 'GET',
  path: '/webhooks/:webhookId/logs',
  operation: EngineWebhookLogsDocument,
  variables: ({ params, query }) => ({
    webhookId: params.webhookId,
    limit: intParam(query.limit) ?? 50,
    offset: intParam(query.offset) ?? 0,
    status: query.status,
  }),
  pick: ({ workflowWebhookLogs: page }) => ({ webhookId: page.webhookId, logs: page.logs.map(omitNulls), pagination: page.pagination }),
});

// Variables ($vars): read with workflow:read, changed with variable:write.

const listVariables = defineRoute({
  method: 'GET',
  path: '/variables',
  operation: EngineVariablesDocument,
  variables: () => ({}),
  pick: ({ workflowVariables }) => ({ variables: workflowVariables }),
});

const getVariable = defineRoute({
  method: 'GET',
  path: '/variables/:variableId',
  operation: EngineVariableDocument,
  variables: ({ params }) => ({ variableId: params.variableId }),
  pick: ({ workflowVariable }) => workflowVariable,
});

const createVariable = defineRoute({
  method: 'POST',
  path: '/variables',
  operation: EngineCreateVariableDocument,
  refusals: [
    { code: 'validation_error', when: 'the key is missing, too long or has characters other than A-Z, a-z, 0-9 and _, or the value is missing or too long' },
    { code: 'resource_already_exists', when: 'another variable has this key' },
  ],
  variables: ({ body }) => ({ input: body ?? {} }),
  status: 201,
  pick: ({ createWorkflowVariable }) => createWorkflowVariable,
});

const updateVariable = defineRoute({
  method: 'PUT',
  path: '/variables/:variableId',
  operation: EngineUpdateVariableDocument,
  refusals: [
    { code: 'validation_error', when: 'the key is missing, too long or has characters other than A-Z, a-z, 0-9 and _, or the value is missing or too long' },
    { code: 'resource_already_exists', when: 'another variable has this key' },
  ],
  variables: ({ params, body }) => ({ variableId: params.variableId, input: body ?? {} }),
  pick: ({ updateWorkflowVariable }) => updateWorkflowVariable,
});

const deleteVariable = defineRoute({
  method: 'DELETE',
  path: '/variables/:variableId',
  operation: EngineDeleteVariableDocument,
  variables: ({ params }) => ({ variableId: params.variableId }),
});

const variableRoutes: RouteDef[] = [listVariables, getVariable, createVariable, updateVariable, deleteVariable];

// Credentials: their secrets go in, never out.

const createCredential = defineRoute({
  method: 'POST',
  path: '/credentials',
  operation: EngineCreateCredentialDocument,
  refusals: [
    { code: 'validation_error', when: "the type is not one the platform knows, or the data lacks or mistypes the type's fields" },
    { code: 'resource_already_exists', when: 'another credential has this name' },
  ],
  variables: ({ body }) => ({ input: body }),
  status: 201,
  // The type's fields are the client's own names.
  opaque: ['data', 'settings'],
});

const listCredentials = defineRoute({
  method: 'GET',
  path: '/credentials',
  operation: EngineCredentialsDocument,
  refusals: [{ code: 'validation_error', when: 'limit is not 1 to 100 or offset is negative' }],
  variables: ({ query }) => ({ type: strParam(query.type), limit: intParam(query.limit) ?? 20, offset: intParam(query.offset) ?? 0 }),
  opaque: ['settings'],
});

const getCredential = defineRoute({
  method: 'GET',
  path: '/credentials/:credentialId',
  operation: EngineCredentialDocument,
  variables: ({ params }) => ({ credentialId: params.credentialId }),
  opaque: ['settings'],
});

const deleteCredential = defineRoute({
  method: 'DELETE',
  path: '/credentials/:credentialId',
  operation: EngineDeleteCredentialDocument,
  variables: ({ params }) => ({ credentialId: params.credentialId }),
});

const authorizeCredential = defineRoute({
  method: 'POST',
  path: '/credentials/:credentialId/authorize',
  operation: EngineAuthorizeCredentialDocument,
  refusals: [{ code: 'validation_error', when: 'the credential is not an oAuth2Api credential with the authorizationCode grant' }],
  variables: ({ params }) => ({ credentialId: params.credentialId }),
});

/** PUBLIC: where the authorization server sends the person back (?state=…&code=… or &error=…). */
const credentialCallback = defineRoute({
  method: 'GET',
  path: '/credentials/oauth2/callback',
  operation: EngineCompleteCredentialAuthorizationDocument,
  refusals: [
    { code: 'validation_error', when: 'state does not match a consent in progress (it is used once), or the authorization server refused the consent' },
    { code: 'upstream_error', when: "the credential's token endpoint refused the code or could not be reached" },
  ],
  variables: ({ query }) => ({ state: strParam(query.state), code: strParam(query.code), error: strParam(query.error) }),
  opaque: ['settings'],
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
  ...variableRoutes,
  createCredential,
  listCredentials,
  getCredential,
  deleteCredential,
  authorizeCredential,
  credentialCallback,
];

// ---------------------------------------------------------------------------------------------
// Main layout: /v1/engine/...

const createWorkflow = defineRoute({
  method: 'POST',
  path: '/workflows',
  operation: EngineCreateWorkflowDocument,
  variables: ({ body }) => ({ input: body }),
  status: 201,
  bodyLimit: PAYLOAD_BODY_LIMIT,
});

const updateWorkflow = defineRoute({
  method: 'PUT',
  path: '/workflows/:workflowId',
  operation: EngineUpdateWorkflowDocument,
  refusals: [{ code: 'WORKFLOW_NOT_FOUND', when: 'no workflow has this id' }],
  variables: ({ params, body }) => ({ workflowId: params.workflowId, input: body ?? {} }),
  bodyLimit: PAYLOAD_BODY_LIMIT,
});

/** `/v1` surface routes (prefixed /engine). */
export const engineRoutes: RouteDef[] = [createWorkflow, updateWorkflow, ...shared].map((r) => ({ ...r, path: `/engine${r.path}` }));

// ---------------------------------------------------------------------------------------------
// Native interface: /engine/api/v1/... (n8n-like: POST /workflows imports, PATCH with {active})

const nativeCreate = defineRoute({
  method: 'POST',
  path: '/workflows',
  operation: EngineNativeCreateDocument,
  variables: ({ body }) => ({ workflow: body }),
  status: 201,
  bodyLimit: PAYLOAD_BODY_LIMIT,
  pick: ({ importWorkflow: w }) => workflowOut(w),
});

const nativeUpdate = (method: 'PUT' | 'PATCH') =>
  defineRoute({
    method,
    path: '/workflows/:workflowId',
    operation: EngineNativeUpdateDocument,
    refusals: [{ code: 'WORKFLOW_NOT_FOUND', when: 'no workflow has this id' }],
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
