import { omitNulls } from '../output';
import { bodyField, boolParam, defineRoute, intParam, strParam, type RestRequest } from '../route';
import {
  CancelOrchestrationDocument,
  CreateOrchestrationDocument,
  GateCatalogDocument,
  ListOrchestrationsDocument,
  OrchestrationStatusDocument,
  PauseOrchestrationDocument,
  ResumeOrchestrationDocument,
  ValidateGateDocument,
  type OrchestrationFieldsFragment,
} from './generated';

/** Orchestrations and gates on the main layout, `{base_url}/v1/control-plane/orchestration`. Operations: orchestration.graphql. */

type OrchestrationStage = OrchestrationFieldsFragment['stages'][number];

const body = (req: RestRequest) => req.body ?? {};

function stageOut(s: OrchestrationStage) {
  const gate = s.gateValidation;
  return omitNulls({
    stage: s.stage,
    status: s.status,
    parallel: s.parallel,
    tasksTotal: s.tasksTotal,
    tasksCompleted: s.tasksCompleted,
    startedAt: s.startedAt,
    completedAt: s.completedAt,
    duration: s.duration,
    gateValidation: omitNulls({
      enabled: gate.enabled,
      required: gate.required,
      exitGatePassed: gate.exitGatePassed,
      outputs: gate.outputs,
      missingCriteria: gate.validation?.missingCriteria,
      validatedAt: gate.validation?.validatedAt,
    }),
    tasks: s.tasks?.map((t) =>
      omitNulls({
        taskId: t.taskId,
        key: t.key,
        agentId: t.agentId,
        taskType: t.taskType,
        status: t.status,
        dependencies: t.dependencies,
        progress: t.progress,
        result: t.result,
        error: t.error,
        startedAt: t.startedAt,
        completedAt: t.completedAt,
      }),
    ),
  });
}

/** The status endpoint's Orchestration: the fields of its state (running, completed, failed, …). */
export function orchestrationOut(o: OrchestrationFieldsFragment) {
  return omitNulls({
    orchestrationId: o.orchestrationId,
    name: o.name,
    description: o.description,
    status: o.status,
    currentStage: o.currentStage,
    progress: o.progress,
    stages: o.stages.map(stageOut),
    result: o.result,
    error: o.error ? omitNulls(o.error) : null,
    createdAt: o.createdAt,
    estimatedCompletionAt: o.estimatedCompletionAt,
    pausedAt: o.pausedAt,
    pauseReason: o.pauseReason,
    resumedAt: o.resumedAt,
    completedAt: o.completedAt,
    failedAt: o.failedAt,
    cancelledAt: o.cancelledAt,
    cancelReason: o.cancelReason,
    tasksCancelled: o.tasksCancelled,
    duration: o.duration,
  });
}

export const orchestrationRoutes = [
  defineRoute({
    method: 'POST',
    path: '/control-plane/orchestration/create',
    operation: CreateOrchestrationDocument,
    refusals: [
      { code: 'AGENT_NOT_FOUND', when: "a stage's task names no agent" },
      { code: 'CONTEXT_VALIDATION_FAILED', when: "a task's context does not satisfy its task type's schema" },
      { code: 'workflow_validation_failed', when: "the stages' dependencies are missing or circular" },
    ],
    variables: (req) => ({ input: body(req) }),
    status: 201,
    pick: ({ createOrchestration: o }) => ({
      orchestrationId: o.orchestrationId,
      name: o.name,
      status: o.status,
      currentStage: o.currentStage,
      stages: o.stages.map((s) => ({ stage: s.stage, status: s.status, tasksTotal: s.tasksTotal, tasksCompleted: s.tasksCompleted })),
      createdAt: o.createdAt,
      estimatedCompletionAt: o.estimatedCompletionAt,
    }),
  }),
  defineRoute({
    method: 'GET',
    path: '/control-plane/orchestration/status/:orchestrationId',
    operation: OrchestrationStatusDocument,
    variables: ({ params, query }) => ({ orchestrationId: params.orchestrationId, includeTaskDetails: boolParam(query.includeTaskDetails) }),
    pick: ({ orchestration }) => orchestrationOut(orchestration),
  }),
  defineRoute({
    method: 'POST',
    path: '/control-plane/orchestration/validate-gate',
    operation: ValidateGateDocument,
    variables: (req) => ({ input: body(req) }),
    omitNulls: true,
  }),
  defineRoute({
    method: 'GET',
    path: '/control-plane/orchestration/gates',
    operation: GateCatalogDocument,
    pick: ({ gateCatalog }) => ({ stages: gateCatalog }),
  }),
  defineRoute({
    method: 'POST',
    path: '/control-plane/orchestration/:orchestrationId/pause',
    operation: PauseOrchestrationDocument,
    refusals: [{ code: 'conflict', when: 'the orchestration is not running' }],
    variables: ({ params, body }) => ({ orchestrationId: params.orchestrationId, reason: bodyField(body, 'reason') }),
    omitNulls: true,
  }),
  defineRoute({
    method: 'POST',
    path: '/control-plane/orchestration/:orchestrationId/resume',
    operation: ResumeOrchestrationDocument,
    refusals: [{ code: 'conflict', when: 'the orchestration is not paused' }],
    variables: ({ params }) => ({ orchestrationId: params.orchestrationId }),
    omitNulls: true,
  }),
  defineRoute({
    method: 'POST',
    path: '/control-plane/orchestration/:orchestrationId/cancel',
    operation: CancelOrchestrationDocument,
    refusals: [{ code: 'conflict', when: 'the orchestration has already ended' }],
    variables: ({ params, body }) => ({
      orchestrationId: params.orchestrationId,
      reason: bodyField(body, 'reason'),
      cancelRunningTasks: bodyField(body, 'cancelRunningTasks'),
    }),
    omitNulls: true,
  }),
  defineRoute({
    method: 'GET',
    path: '/control-plane/orchestration/list',
    operation: ListOrchestrationsDocument,
    variables: ({ query }) => ({
      status: strParam(query.status),
      stage: strParam(query.stage),
      limit: intParam(query.limit),
      offset: intParam(query.offset),
    }),
    pick: ({ orchestrations }) => ({
      orchestrations: orchestrations.orchestrations.map((o) => ({ ...o, progress: o.progress.overallPercentage })),
      pagination: orchestrations.pagination,
    }),
  }),
];
