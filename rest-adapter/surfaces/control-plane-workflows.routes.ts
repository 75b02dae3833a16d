import { omitNulls } from '../output';
import { bodyField, boolParam, defineRoute, intParam, strParam, type RouteDef } from '../route';
import {
  ControlPlaneCancelExecutionDocument,
  ControlPlaneCreateScheduleDocument,
  ControlPlaneCreateWebhookDocument,
  ControlPlaneDeleteScheduleDocument,
  ControlPlaneExecutionDocument,
  ControlPlaneExecutionsDocument,
  ControlPlaneSchedulesDocument,
  ControlPlaneTriggerWorkflowDocument,
  ControlPlaneUpdateScheduleDocument,
  ControlPlaneWorkflowsDocument,
  type ControlPlaneExecutionQuery,
} from './generated';

/**
 * The control plane's workflow paths, `/v1/control-plane/workflows…`, served
 * by the workflow engine's operations (the engine owns workflows, executions, webhook triggers
 * and schedules; these operations also accept control-plane keys). The control plane's spelling: statuses
 * completed / failed / cancelled (the engine's `controlPlaneStatus`), durations in seconds,
 * `completedAt` / `cancelledAt`, `error.nodeName`. Operations: control-plane-workflows.graphql.
 */

/** Payloads may be 5 MB (PAYLOAD_TOO_LARGE past it); the headroom lets the service say so with details. */
const PAYLOAD_BODY_LIMIT = 6 * 1024 * 1024;

/** An execution, with its node runs where they were selected (GET …/executions/:executionId?includeData=true). */
type Execution = ControlPlaneExecutionQuery['controlPlaneExecution'];
type ExecutionEnd = Pick<Execution, 'controlPlaneStatus' | 'finishedAt' | 'failedAt' | 'canceledAt'>;

const seconds = (ms: number | null | undefined) => (ms === null || ms === undefined ? undefined : ms / 1000);

/** The finish time under the name of the state it finished in (completedAt, failedAt, cancelledAt). */
function endTimes(e: ExecutionEnd) {
  switch (e.controlPlaneStatus) {
    case 'completed':
      return { completedAt: e.finishedAt };
    case 'failed':
      return { failedAt: e.failedAt ?? e.finishedAt };
    case 'cancelled':
      return { cancelledAt: e.canceledAt ?? e.finishedAt };
    default:
      return {};
  }
}

/** A workflow execution in the shape of its state. */
export function executionOut(e: Execution) {
  const r = e.result as { lastNode?: string | null; items?: unknown[]; nodesExecuted?: number } | null;
  return omitNulls({
    executionId: e.executionId,
    workflowId: e.workflowId,
    workflowName: e.workflowName,
    status: e.controlPlaneStatus,
    progress: e.progress,
    result: r
      ? { success: true, outputs: { lastNode: r.lastNode ?? null, items: r.items ?? [] }, nodesExecuted: r.nodesExecuted ?? 0, duration: seconds(e.duration) }
      : undefined,
    error: e.error ? { code: e.error.code, message: e.error.message, nodeName: e.error.node ?? null, details: e.error.details ?? {} } : undefined,
    nodeData: e.nodeData
      ? e.nodeData.map((n) => ({
          nodeName: n.nodeName,
          runIndex: n.runIndex,
          nodeType: n.nodeType,
          status: n.status === 'success' ? 'completed' : n.status === 'error' ? 'failed' : n.status,
          duration: n.duration / 1000,
          output: n.output,
        }))
      : undefined,
    engineExecutionUrl: e.engineExecutionUrl,
    startedAt: e.startedAt,
    ...endTimes(e),
    estimatedCompletionAt: e.estimatedCompletionAt,
    waitTill: e.waitTill,
    duration: seconds(e.duration),
  });
}

const unfinished = (status: string) => status === 'running' || status === 'waiting';

export const controlPlaneWorkflowRoutes: RouteDef[] = [
  defineRoute({
    method: 'GET',
    path: '/control-plane/workflows',
    operation: ControlPlaneWorkflowsDocument,
    variables: ({ query }) => ({
      active: boolParam(query.active),
      tag: strParam(query.tag),
      limit: intParam(query.limit) ?? 20,
      offset: intParam(query.offset) ?? 0,
    }),
    pick: ({ controlPlaneWorkflows: page }) => ({
      workflows: page.workflows.map((w) =>
        omitNulls({
          workflowId: w.workflowId,
          name: w.name,
          description: w.description,
          tags: w.tags,
          active: w.active,
          version: w.version,
          nodes: w.nodeCount,
          averageDuration: w.statistics.averageDuration / 1000,
          executionCount: w.statistics.executions,
          successRate: w.statistics.successRate,
          lastExecutedAt: w.lastExecuted,
          webhookUrl: w.webhookUrl,
        }),
      ),
      pagination: page.pagination,
    }),
  }),
  defineRoute({
    method: 'POST',
    path: '/control-plane/workflows/trigger',
    operation: ControlPlaneTriggerWorkflowDocument,
    refusals: [
      { code: 'WORKFLOW_NOT_FOUND', when: 'no workflow has this id or slug' },
      { code: 'WORKFLOW_INACTIVE', when: 'the workflow is not active' },
      { code: 'conflict', when: 'several workflows have the slug given' },
    ],
    variables: ({ body }) => ({ input: body ?? {} }),
    bodyLimit: PAYLOAD_BODY_LIMIT,
    // async: 202 running; sync: 200 once it ended (a failed run too: the error is in the execution), 202 while it still runs or waits.
    status: ({ triggerWorkflow: e }) => (unfinished(e.controlPlaneStatus) ? 202 : 200),
    pick: ({ triggerWorkflow: e }, req) => {
      const mode = bodyField(bodyField(req.body, 'execution'), 'mode') ?? 'async';
      if (mode === 'async') {
        return {
          executionId: e.executionId,
          workflowId: e.workflowId,
          status: e.controlPlaneStatus,
          startedAt: e.startedAt,
          engineExecutionUrl: e.engineExecutionUrl,
        };
      }
      return executionOut(e);
    },
    shapes: [
      { 'body.execution.mode': 'async' },
      ...['running', 'waiting', 'completed', 'failed', 'cancelled'].map((status) => ({
        'body.execution.mode': 'sync',
        'triggerWorkflow.controlPlaneStatus': status,
      })),
    ],
  }),
  defineRoute({
    method: 'GET',
    path: '/control-plane/workflows/executions',
    operation: ControlPlaneExecutionsDocument,
    variables: ({ query }) => ({
      workflowId: strParam(query.workflowId),
      status: strParam(query.status),
      startDate: strParam(query.startDate),
      endDate: strParam(query.endDate),
      limit: intParam(query.limit) ?? 20,
      offset: intParam(query.offset) ?? 0,
    }),
    pick: ({ controlPlaneExecutions: page }) => ({
      executions: page.executions.map((e) =>
        omitNulls({
          executionId: e.executionId,
          workflowId: e.workflowId,
          workflowName: e.workflowName,
          status: e.controlPlaneStatus,
          startedAt: e.startedAt,
          ...endTimes(e),
          duration: seconds(e.duration),
        }),
      ),
      pagination: page.pagination,
    }),
  }),
  defineRoute({
    method: 'GET',
    path: '/control-plane/workflows/executions/:executionId',
    operation: ControlPlaneExecutionDocument,
    variables: ({ params, query }) => ({ executionId: params.executionId, includeData: boolParam(query.includeData) ?? false }),
    pick: ({ controlPlaneExecution }) => executionOut(controlPlaneExecution),
    shapes: ['running', 'waiting', 'completed', 'failed', 'cancelled'].map((status) => ({ 'controlPlaneExecution.controlPlaneStatus': status })),
  }),
  defineRoute({
    method: 'POST',
    path: '/control-plane/workflows/executions/:executionId/cancel',
    operation: ControlPlaneCancelExecutionDocument,
    refusals: [{ code: 'conflict', when: 'the execution is neither running nor waiting' }],
    variables: ({ params, body }) => ({ executionId: params.executionId, reason: bodyField(body, 'reason') }),
  }),
  defineRoute({
    method: 'POST',
    path: '/control-plane/workflows/:workflowId/webhooks',
    operation: ControlPlaneCreateWebhookDocument,
    refusals: [{ code: 'resource_already_exists', when: 'another webhook has this method and path' }],
    variables: ({ params, body }) => ({ workflowId: params.workflowId, input: body ?? {} }),
    status: 201,
    pick: ({ controlPlaneCreateWorkflowWebhook: w }) => ({
      webhookId: w.webhookId,
      workflowId: w.workflowId,
      url: w.url,
      path: w.path,
      method: w.method,
      active: w.active,
      responseMode: w.responseMode,
      authentication: omitNulls(w.authentication),
      createdAt: w.createdAt,
    }),
  }),
  defineRoute({
    method: 'POST',
    path: '/control-plane/workflows/:workflowId/schedule',
    operation: ControlPlaneCreateScheduleDocument,
    refusals: [
      { code: 'WORKFLOW_NOT_FOUND', when: 'no workflow has this id or slug' },
      { code: 'conflict', when: 'the workflow already has its most schedules, or several workflows have the slug given' },
    ],
    variables: ({ params, body }) => ({ workflowId: params.workflowId, input: body ?? {} }),
    status: 201,
    bodyLimit: PAYLOAD_BODY_LIMIT,
    omitNulls: true,
  }),
  defineRoute({
    method: 'GET',
    path: '/control-plane/workflows/:workflowId/schedules',
    operation: ControlPlaneSchedulesDocument,
    refusals: [
      { code: 'WORKFLOW_NOT_FOUND', when: 'no workflow has this id or slug' },
      { code: 'conflict', when: 'several workflows have the slug given' },
    ],
    variables: ({ params }) => ({ workflowId: params.workflowId }),
    pick: ({ workflowSchedules }) => ({ schedules: workflowSchedules.map(omitNulls) }),
  }),
  defineRoute({
    method: 'PUT',
    path: '/control-plane/workflows/schedules/:scheduleId',
    operation: ControlPlaneUpdateScheduleDocument,
    refusals: [{ code: 'conflict', when: "the schedule belongs to a workflow's scheduleTrigger node" }],
    variables: ({ params, body }) => ({ scheduleId: params.scheduleId, input: body ?? {} }),
    bodyLimit: PAYLOAD_BODY_LIMIT,
    omitNulls: true,
  }),
  defineRoute({
    method: 'DELETE',
    path: '/control-plane/workflows/schedules/:scheduleId',
    operation: ControlPlaneDeleteScheduleDocument,
    refusals: [{ code: 'conflict', when: "the schedule belongs to a workflow's scheduleTrigger node" }],
    variables: ({ params }) => ({ scheduleId: params.scheduleId }),
  }),
];
