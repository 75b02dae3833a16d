import { omitNulls } from '../output';
import { bodyField, defineRoute, intParam, strParam, type RestRequest } from '../route';
import {
  CancelTaskDocument,
  ExecuteAgentTaskDocument,
  GetAgentDocument,
  GetTaskDocument,
  ListAgentsDocument,
  ListTasksDocument,
  TaskArtifactsDocument,
  type ExecuteAgentTaskMutation,
  type TaskFieldsFragment,
} from './generated';

/** The control plane's main layout, `{base_url}/v1/control-plane`: agents and tasks. Operations: control-plane.graphql. */

const TASK_STATUSES = ['queued', 'running', 'completed', 'failed', 'cancelled'];
/** The shapes of a task's answer (taskOut), one per status. */
const taskShapes = (at: string) => TASK_STATUSES.map((status) => ({ [`${at}.status`]: status }));

const finished = (status: string) => status === 'completed' || status === 'failed' || status === 'cancelled';

/** A task in the shape of its state: progress while running, result when completed, error when failed. */
export function taskOut(t: TaskFieldsFragment) {
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

type ExecutedTask = ExecuteAgentTaskMutation['executeTask'];
/** The whole task is selected (`...TaskFields @include(if: $sync)`) for a sync run only. */
const whole = (t: ExecutedTask): t is ExecutedTask & TaskFieldsFragment => t.mode === 'sync';

const getTask = (path: string) =>
  defineRoute({
    method: 'GET',
    path,
    operation: GetTaskDocument,
    variables: ({ params }) => ({ taskId: params.taskId }),
    pick: ({ task }) => taskOut(task),
    shapes: taskShapes('task'),
  });

export const controlPlaneRoutes = [
  defineRoute({
    method: 'POST',
    path: '/control-plane/agents/execute',
    operation: ExecuteAgentTaskDocument,
    refusals: [
      { code: 'AGENT_NOT_FOUND', when: 'no agent has this id' },
      { code: 'CONTEXT_VALIDATION_FAILED', when: "the context does not satisfy the task type's schema" },
    ],
    variables: (req: RestRequest) => ({ input: req.body ?? {}, sync: bodyField(bodyField(req.body, 'execution'), 'mode') === 'sync' }),
    // async: 202 queued; sync: 200 with the finished task, or 202 when it still runs after the wait.
    status: ({ executeTask }) => (finished(executeTask.status) ? 200 : 202),
    pick: ({ executeTask: t }) =>
      whole(t)
        ? taskOut(t)
        : { taskId: t.taskId, status: t.status, agentId: t.agentId, taskType: t.taskType, createdAt: t.createdAt, estimatedDuration: t.estimatedDuration },
    shapes: [{ 'executeTask.mode': 'async' }, ...taskShapes('executeTask').map((shape) => ({ ...shape, 'executeTask.mode': 'sync' }))],
  }),
  defineRoute({
    method: 'GET',
    path: '/control-plane/agents',
    operation: ListAgentsDocument,
    variables: ({ query }) => ({ domain: strParam(query.domain) }),
    pick: ({ agents }) => ({ agents }),
  }),
  defineRoute({
    method: 'GET',
    path: '/control-plane/agents/tasks',
    operation: ListTasksDocument,
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
    operation: TaskArtifactsDocument,
    variables: ({ params }) => ({ taskId: params.taskId }),
  }),
  defineRoute({
    method: 'POST',
    path: '/control-plane/agents/tasks/:taskId/cancel',
    operation: CancelTaskDocument,
    refusals: [{ code: 'conflict', when: 'the task is no longer queued or running' }],
    variables: ({ params, body }) => ({ taskId: params.taskId, reason: bodyField(body, 'reason') }),
    omitNulls: true,
  }),
  defineRoute({
    method: 'GET',
    path: '/control-plane/agents/:agentId',
    operation: GetAgentDocument,
    refusals: [{ code: 'AGENT_NOT_FOUND', when: 'no agent has this id' }],
    variables: ({ params }) => ({ agentId: params.agentId }),
  }),
  // The platform overview's polling example.
  getTask('/control-plane/tasks/:taskId'),
];
