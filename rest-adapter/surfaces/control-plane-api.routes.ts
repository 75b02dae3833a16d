import { AppError, errors } from '../../kernel/errors';
import { omitNulls } from '../output';
import { bodyField, defineRoute, type RouteDef } from '../route';
import type { TaskRow } from './control-plane.routes';
import { controlPlaneWorkflowRoutes } from './control-plane-workflows.routes';
import { ORCHESTRATION, type Orchestration } from './orchestration.routes';

/** The control plane's alternate layout, `{control_plane_url}/api/v1` (snake_case bodies). */

const KEY = /* GraphQL */ `id name service environment tier permissions keyPrefix status createdAt expiresAt lastUsedAt revokedAt`;
/** A DateTimeISO: the gateway answers an ISO string; the bench baseline passes the resolver's Date (both serialise alike). */
type Instant = string | Date;
export interface ApiKey {
  id: string;
  name: string;
  service: string;
  environment: string;
  tier: string;
  permissions: string[];
  keyPrefix: string;
  status: string;
  createdAt: Instant;
  expiresAt: Instant | null;
  lastUsedAt: Instant | null;
  revokedAt: Instant | null;
}

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
  defineRoute<{ createApiKey: { apiKey: string; key: ApiKey } }>({
    method: 'POST',
    path: '/auth/api-keys',
    operation: /* GraphQL */ `
      mutation CreateApiKey($input: CreateApiKeyInput!) {
        createApiKey(input: $input) {
          apiKey
          key { ${KEY} }
        }
      }
    `,
    variables: ({ body }) => ({ input: body ?? {} }),
    status: 201,
    pick: ({ createApiKey: { apiKey, key } }) => {
      const { id, ...rest } = keyOut(key);
      return { api_key_id: id, api_key: apiKey, ...rest };
    },
  }),
  defineRoute<{ apiKeys: ApiKey[] }>({
    method: 'GET',
    path: '/auth/api-keys',
    operation: /* GraphQL */ `
      query ListApiKeys {
        apiKeys {
          ${KEY}
        }
      }
    `,
    pick: ({ apiKeys }) => ({ api_keys: apiKeys.map(keyOut) }),
  }),
  defineRoute<{ apiKey: ApiKey }>({
    method: 'GET',
    path: '/auth/api-keys/:key_id',
    operation: /* GraphQL */ `
      query GetApiKey($id: ID!) {
        apiKey(id: $id) {
          ${KEY}
        }
      }
    `,
    variables: ({ params }) => ({ id: params.key_id }),
    pick: ({ apiKey }) => keyOut(apiKey),
  }),
  defineRoute<{ updateApiKey: ApiKey }>({
    method: 'PATCH',
    path: '/auth/api-keys/:key_id',
    operation: /* GraphQL */ `
      mutation UpdateApiKey($id: ID!, $input: UpdateApiKeyInput!) {
        updateApiKey(id: $id, input: $input) {
          ${KEY}
        }
      }
    `,
    variables: ({ params, body }) => ({ id: params.key_id, input: body ?? {} }),
    pick: ({ updateApiKey }) => keyOut(updateApiKey),
  }),
  defineRoute<{ revokeApiKey: ApiKey }>({
    method: 'DELETE',
    path: '/auth/api-keys/:key_id',
    operation: /* GraphQL */ `
      mutation RevokeApiKey($id: ID!) {
        revokeApiKey(id: $id) {
          ${KEY}
        }
      }
    `,
    variables: ({ params }) => ({ id: params.key_id }),
    pick: ({ revokeApiKey }) => ({ ...keyOut(revokeApiKey), revoked: true }),
  }),
  defineRoute<{
    apiKeyUsage: {
      keyId: string;
      requestsToday: number;
      requestsThisMonth: number;
      totalRequests: number;
      lastUsedAt: string | null;
      lastUsedIp: string | null;
    };
  }>({
    method: 'GET',
    path: '/auth/api-keys/:key_id/usage',
    operation: /* GraphQL */ `
      query ApiKeyUsage($id: ID!) {
        apiKeyUsage(id: $id) {
          keyId
          requestsToday
          requestsThisMonth
          totalRequests
          lastUsedAt
          lastUsedIp
        }
      }
    `,
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
function workflowOut(o: Orchestration) {
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
  defineRoute<{ createOrchestrationWorkflow: Orchestration }>({
    method: 'POST',
    path: '/orchestration/workflows',
    operation: /* GraphQL */ `
      mutation CreateOrchestrationWorkflow($input: CreateOrchestrationWorkflowInput!) {
        createOrchestrationWorkflow(input: $input) {
          ${ORCHESTRATION}
        }
      }
    `,
    variables: ({ body }) => ({ input: body ?? {} }),
    opaque: ['context'],
    status: 201,
    pick: ({ createOrchestrationWorkflow }) => workflowOut(createOrchestrationWorkflow),
  }),
  defineRoute<{ orchestration: Orchestration }>({
    method: 'GET',
    path: '/orchestration/workflows/:workflow_id',
    operation: /* GraphQL */ `
      query OrchestrationWorkflow($id: ID!) {
        orchestration(orchestrationId: $id, includeTaskDetails: true) {
          ${ORCHESTRATION}
        }
      }
    `,
    variables: ({ params }) => ({ id: params.workflow_id }),
    pick: ({ orchestration }) => workflowOut(orchestration),
  }),
];

// ---- Agent execution (alternate layout): a synchronous `custom` task of the agent ----

export const agentExecuteRoutes = [
  defineRoute<{ executeTask: Pick<TaskRow, 'taskId' | 'agentId' | 'status' | 'result' | 'error' | 'duration'> }>({
    method: 'POST',
    path: '/agents/:agent_id/execute',
    operation: /* GraphQL */ `
      mutation ExecuteAgent($input: ExecuteTaskInput!) {
        executeTask(input: $input) {
          taskId
          agentId
          status
          result {
            output
            filesCreated
            filesModified
            linesWritten
            tokensUsed
          }
          error {
            code
            message
            details
          }
          duration
        }
      }
    `,
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
