import { omitNulls } from '../output';
import { bodyField, defineRoute, intParam, strParam, type RestRequest } from '../route';
import { PAGINATION } from './selections';

/** The control plane's main layout, `{base_url}/v1/control-plane` (spec 1): agents and tasks. */

/** A Task, whole: the task endpoints' and the agent execution's. */
export const TASK = /* GraphQL */ `
  taskId status agentId taskType priority mode timeout
  progress { percentage currentStep stepsCompleted stepsTotal }
  result { output filesCreated filesModified linesWritten model tokensUsed promptId promptVersion }
  error { code message details }
  createdAt startedAt completedAt failedAt cancelledAt cancelReason estimatedDuration estimatedCompletionAt duration orchestrationId stage`;

/** TASK's data as the gateway answers it (declared by hand, checked against TASK by review: no code generator). */
export interface TaskRow {
  taskId: string;
  status: string;
  agentId: string;
  taskType: string;
  priority: string;
  mode: string;
  timeout: number;
  progress: { percentage: number; currentStep: string; stepsCompleted: number; stepsTotal: number } | null;
  result: {
    output: Record<string, unknown>;
    filesCreated: string[];
    filesModified: string[];
    linesWritten: number;
    model: string;
    tokensUsed: number;
    promptId: string;
    promptVersion: number;
  } | null;
  error: { code: string; message: string; details: Record<string, unknown> } | null;
  createdAt: string;
  startedAt: string | null;
  completedAt: string | null;
  failedAt: string | null;
  cancelledAt: string | null;
  cancelReason: string | null;
  estimatedDuration: number;
  estimatedCompletionAt: string | null;
  duration: number | null;
  orchestrationId: string | null;
  stage: string | null;
}

const AGENT = /* GraphQL */ `
  agentId name domain forgeStage version description capabilities
  inputs { required optional }
  outputs
  taskTypes { taskType title description inputs { required optional } artifactFormat expectedSections typicalDuration }
  averageDuration successRate totalExecutions`;

const finished = (status: string) => status === 'completed' || status === 'failed' || status === 'cancelled';

/** A task in the shape of its state (spec 1, Task): progress while running, result when completed, error when failed. */
export function taskOut(t: TaskRow) {
  const base = {
    taskId: t.taskId,
    status: t.status,
    agentId: t.agentId,
    taskType: t.taskType,
    priority: t.priority,
    createdAt: t.createdAt,
    startedAt: t.startedAt,
    estimatedDuration: t.estimatedDuration,
    orchestrationId: t.orchestrationId,
    stage: t.stage,
  };
  switch (t.status) {
    case 'queued':
      return omitNulls({ ...base, estimatedCompletionAt: t.estimatedCompletionAt });
    case 'running':
      return omitNulls({ ...base, progress: t.progress, estimatedCompletionAt: t.estimatedCompletionAt });
    case 'completed':
      return omitNulls({ ...base, progress: t.progress, result: t.result, completedAt: t.completedAt, duration: t.duration });
    case 'failed':
      return omitNulls({ ...base, progress: t.progress, error: t.error, failedAt: t.failedAt, duration: t.duration });
    default:
      return omitNulls({ ...base, progress: t.progress, cancelledAt: t.cancelledAt, cancelReason: t.cancelReason, duration: t.duration });
  }
}

/**
 * The whole task only for a sync run: an async one answers six fields (mode picks the shape), and
 * building the others cost each create about 12 of its 87 KB of allocations.
 */
const EXECUTE = /* GraphQL */ `
  mutation ExecuteAgentTask($input: ExecuteTaskInput!, $sync: Boolean!) {
    executeTask(input: $input) {
      taskId status agentId taskType mode createdAt estimatedDuration
      ... @include(if: $sync) {
        ${TASK}
      }
    }
  }
`;

const getTask = (path: string) =>
  defineRoute<{ task: TaskRow }>({
    method: 'GET',
    path,
    operation: /* GraphQL */ `
      query GetTask($taskId: ID!) {
        task(taskId: $taskId) {
          ${TASK}
        }
      }
    `,
    variables: ({ params }) => ({ taskId: params.taskId }),
    pick: ({ task }) => taskOut(task),
  });

export const controlPlaneRoutes = [
  defineRoute<{ executeTask: TaskRow }>({
    method: 'POST',
    path: '/control-plane/agents/execute',
    operation: EXECUTE,
    variables: (req: RestRequest) => ({ input: req.body ?? {}, sync: bodyField(bodyField(req.body, 'execution'), 'mode') === 'sync' }),
    // async: 202 queued; sync: 200 with the finished task, or 202 when it still runs after the wait.
    status: ({ executeTask }) => (finished(executeTask.status) ? 200 : 202),
    pick: ({ executeTask: t }) =>
      t.mode === 'sync'
        ? taskOut(t)
        : { taskId: t.taskId, status: t.status, agentId: t.agentId, taskType: t.taskType, createdAt: t.createdAt, estimatedDuration: t.estimatedDuration },
  }),
  defineRoute({
    method: 'GET',
    path: '/control-plane/agents',
    operation: /* GraphQL */ `
      query ListAgents($domain: String) {
        agents(domain: $domain) {
          ${AGENT}
        }
      }
    `,
    variables: ({ query }) => ({ domain: strParam(query.domain) }),
    pick: ({ agents }) => ({ agents }),
  }),
  defineRoute({
    method: 'GET',
    path: '/control-plane/agents/tasks',
    operation: /* GraphQL */ `
      query ListTasks(
        $agentId: String
        $status: String
        $taskType: String
        $orchestrationId: ID
        $limit: Int
        $offset: Int
        $sortBy: String
        $sortOrder: String
      ) {
        tasks(
          agentId: $agentId
          status: $status
          taskType: $taskType
          orchestrationId: $orchestrationId
          limit: $limit
          offset: $offset
          sortBy: $sortBy
          sortOrder: $sortOrder
        ) {
          tasks {
            taskId
            agentId
            taskType
            status
            createdAt
            completedAt
            duration
          }
          ${PAGINATION}
        }
      }
    `,
    variables: ({ query }) => ({
      agentId: strParam(query.agentId),
      status: strParam(query.status),
      taskType: strParam(query.taskType),
      orchestrationId: strParam(query.orchestrationId),
      limit: intParam(query.limit),
      offset: intParam(query.offset),
      sortBy: strParam(query.sortBy),
      sortOrder: strParam(query.sortOrder),
    }),
  }),
  getTask('/control-plane/agents/tasks/:taskId'),
  defineRoute({
    method: 'GET',
    path: '/control-plane/agents/tasks/:taskId/artifacts',
    operation: /* GraphQL */ `
      query TaskArtifacts($taskId: ID!) {
        task(taskId: $taskId) {
          taskId
          artifacts {
            path
            kind
            lines
            bytes
            content
            createdAt
          }
        }
      }
    `,
    variables: ({ params }) => ({ taskId: params.taskId }),
  }),
  defineRoute({
    method: 'POST',
    path: '/control-plane/agents/tasks/:taskId/cancel',
    operation: /* GraphQL */ `
      mutation CancelTask($taskId: ID!, $reason: String) {
        cancelTask(taskId: $taskId, reason: $reason) {
          taskId
          status
          cancelledAt
          cancelReason
        }
      }
    `,
    variables: ({ params, body }) => ({ taskId: params.taskId, reason: bodyField(body, 'reason') }),
    omitNulls: true,
  }),
  defineRoute({
    method: 'GET',
    path: '/control-plane/agents/:agentId',
    operation: /* GraphQL */ `
      query GetAgent($agentId: ID!) {
        agent(agentId: $agentId) {
          ${AGENT}
        }
      }
    `,
    variables: ({ params }) => ({ agentId: params.agentId }),
  }),
  // The platform overview's polling example.
  getTask('/control-plane/tasks/:taskId'),
];
