import { AppError, errors } from '../../kernel/errors';
import { omitNulls } from '../output';
import { bodyField, defineRoute, type RouteDef } from '../route';
import { controlPlaneWorkflowRoutes } from './control-plane-workflows.routes';
import {
  ApiKeyUsageDocument,
  CreateApiKeyDocument,
  CreateOrchestrationWorkflowDocument,
  ExecuteAgentDocument,
  GetApiKeyDocument,
  ListApiKeysDocument,
  OrchestrationWorkflowDocument,
  RevokeApiKeyDocument,
  UpdateApiKeyDocument,
  type ApiKeyFieldsFragment,
  type OrchestrationFieldsFragment,
} from './generated';

/** The control plane's alternate layout, `{control_plane_url}/api/v1` (snake_case bodies). Operations: control-plane-api.graphql. */

type Instant = 'createdAt' | 'expiresAt' | 'lastUsedAt' | 'revokedAt';
/** A key as selected; the bench baseline passes the resolver's own object, whose instants are Dates (both serialise alike). */
type ApiKey = Omit<ApiKeyFieldsFragment, Instant> & { [F in Instant]: ApiKeyFieldsFragment[F] | Date };

/** The snake_case fields of a key, as this surface answers them (the bench baseline reuses it). */
export const keyOut = (k: ApiKey) => ({
  id: k.id,
  name: k.name,
  permissions: k.permissions,
  service: k.service,
  environment: k.environment,
  tier: k.tier,
  key_prefix: k.keyPrefix,
  status: k.status,
  created_at: k.createdAt,
  expires_at: k.expiresAt,
  last_used_at: k.lastUsedAt,
  revoked_at: k.revokedAt,
});

export const apiKeyRoutes = [
  defineRoute({
    method: 'POST',
    path: '/auth/api-keys',
    operation: CreateApiKeyDocument,
    variables: ({ body }) => ({ input: body ?? {} }),
    status: 201,
    pick: ({ createApiKey: { apiKey, key } }) => {
      const { id, ...rest } = keyOut(key);
      return { api_key_id: id, api_key: apiKey, ...rest };
    },
  }),
  defineRoute({
    method: 'GET',
    path: '/auth/api-keys',
    operation: ListApiKeysDocument,
    pick: ({ apiKeys }) => ({ api_keys: apiKeys.map(keyOut) }),
  }),
  defineRoute({
    method: 'GET',
    path: '/auth/api-keys/:key_id',
    operation: GetApiKeyDocument,
    variables: ({ params }) => ({ id: params.key_id }),
    pick: ({ apiKey }) => keyOut(apiKey),
  }),
  defineRoute({
    method: 'PATCH',
    path: '/auth/api-keys/:key_id',
    operation: UpdateApiKeyDocument,
    refusals: [{ code: 'conflict', when: 'the key is revoked' }],
    variables: ({ params, body }) => ({ id: params.key_id, input: body ?? {} }),
    pick: ({ updateApiKey }) => keyOut(updateApiKey),
  }),
  defineRoute({
    method: 'DELETE',
    path: '/auth/api-keys/:key_id',
    operation: RevokeApiKeyDocument,
    variables: ({ params }) => ({ id: params.key_id }),
    pick: ({ revokeApiKey }) => ({ ...keyOut(revokeApiKey), revoked: true }),
  }),
  defineRoute({
    method: 'GET',
    path: '/auth/api-keys/:key_id/usage',
    operation: ApiKeyUsageDocument,
    variables: ({ params }) => ({ id: params.key_id }),
    pick: ({ apiKeyUsage: u }) => ({
      key_id: u.keyId,
      usage: {
        requests_today: u.requestsToday,
        requests_this_month: u.requestsThisMonth,
        total_requests: u.totalRequests,
        last_used_at: u.lastUsedAt,
        last_used_ip: u.lastUsedIp,
      },
    }),
  }),
];

// ---- Orchestration workflows (alternate layout): an orchestration of agents grouped by stage ----

/** The orchestration in the alternate layout's snake_case; outputs and details are kept verbatim. */
function workflowOut(o: OrchestrationFieldsFragment) {
  return omitNulls({
    workflow_id: o.orchestrationId,
    name: o.name,
    description: o.description,
    status: o.status,
    current_stage: o.currentStage,
    forge_validation: o.stages.some((s) => s.gateValidation.enabled),
    progress: {
      stages_completed: o.progress.stagesCompleted,
      stages_total: o.progress.stagesTotal,
      tasks_completed: o.progress.tasksCompleted,
      tasks_total: o.progress.tasksTotal,
      overall_percentage: o.progress.overallPercentage,
    },
    stages: o.stages.map((s) =>
      omitNulls({
        stage: s.stage,
        status: s.status,
        tasks_total: s.tasksTotal,
        tasks_completed: s.tasksCompleted,
        started_at: s.startedAt,
        completed_at: s.completedAt,
        duration: s.duration,
        exit_gate_passed: s.gateValidation.exitGatePassed,
        missing_criteria: s.gateValidation.validation?.missingCriteria,
        outputs: s.gateValidation.outputs,
        agents: (s.tasks ?? []).map((t) => omitNulls({ agent_id: t.agentId, task_type: t.taskType, task_id: t.taskId, status: t.status })),
      }),
    ),
    result: o.result
      ? { success: o.result.success, stages_completed: o.result.stagesCompleted, tasks_completed: o.result.tasksCompleted, outputs: o.result.outputs }
      : null,
    error: o.error ? omitNulls(o.error) : null,
    created_at: o.createdAt,
    estimated_completion_at: o.estimatedCompletionAt,
    paused_at: o.pausedAt,
    completed_at: o.completedAt,
    failed_at: o.failedAt,
    cancelled_at: o.cancelledAt,
    duration: o.duration,
  });
}

export const orchestrationWorkflowRoutes = [
  defineRoute({
    method: 'POST',
    path: '/orchestration/workflows',
    operation: CreateOrchestrationWorkflowDocument,
    refusals: [
      { code: 'AGENT_NOT_FOUND', when: "a stage's task names no agent" },
      { code: 'CONTEXT_VALIDATION_FAILED', when: "a task's context does not satisfy its task type's schema" },
      { code: 'workflow_validation_failed', when: "the stages' dependencies are missing or circular" },
    ],
    variables: ({ body }) => ({ input: body ?? {} }),
    opaque: ['context'],
    status: 201,
    pick: ({ createOrchestrationWorkflow }) => workflowOut(createOrchestrationWorkflow),
  }),
  defineRoute({
    method: 'GET',
    path: '/orchestration/workflows/:workflow_id',
    operation: OrchestrationWorkflowDocument,
    variables: ({ params }) => ({ id: params.workflow_id }),
    pick: ({ orchestration }) => workflowOut(orchestration),
  }),
];

// ---- Agent execution (alternate layout): a synchronous `custom` task of the agent ----

export const agentExecuteRoutes = [
  defineRoute({
    method: 'POST',
    path: '/agents/:agent_id/execute',
    operation: ExecuteAgentDocument,
    refusals: [
      { code: 'AGENT_NOT_FOUND', when: 'no agent has this id' },
      { code: 'CONTEXT_VALIDATION_FAILED', when: "the context does not satisfy the task type's schema" },
    ],
    variables: ({ params, body }) => {
      if (body !== undefined && (body === null || typeof body !== 'object' || Array.isArray(body)))
        throw new AppError('invalid_json', 'The body must be a JSON object', { parse_error: 'not an object' });
      const input = bodyField(body, 'input');
      const config = bodyField(body, 'config');
      if (typeof input !== 'string' || !input.trim()) throw errors.field('input', 'is required: the request, as a string');
      return {
        input: {
          agentId: params.agent_id,
          taskType: 'custom',
          context: { input },
          execution: { mode: 'sync' },
          ...(config !== undefined && { config }),
        },
      };
    },
    status: ({ executeTask }) => (executeTask.status === 'running' || executeTask.status === 'queued' ? 202 : 200),
    pick: ({ executeTask: t }) => ({
      execution_id: t.taskId,
      agent_id: t.agentId,
      status: t.status,
      output: t.result
        ? { ...t.result.output, files_created: t.result.filesCreated, files_modified: t.result.filesModified, lines_written: t.result.linesWritten }
        : null,
      ...(t.error && { error: t.error }),
      metrics: { duration_ms: t.duration === null ? null : Math.round(t.duration * 1000), tokens_used: t.result?.tokensUsed ?? 0 },
    }),
  }),
];

// ---- Platform overview (alternate layout): the workflow list, in this layout's snake_case ----

const workflowList = controlPlaneWorkflowRoutes.find((r) => r.method === 'GET' && r.path === '/control-plane/workflows')!;

export const overviewWorkflowRoutes: RouteDef[] = [{ ...workflowList, path: '/workflows', snakeCase: true }];
