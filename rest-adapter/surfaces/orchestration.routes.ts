import { omitNulls } from '../output';
import { bodyField, boolParam, defineRoute, intParam, strParam, type RestRequest } from '../route';
import { PAGINATION, type Pagination } from './selections';

/** Orchestrations and gates on the main layout, `{base_url}/v1/control-plane/orchestration` (spec 1). */

const GATE_RESULT = `stage gateType passed criteria { name required met } missingCriteria validatedAt`;
/** An Orchestration, whole: the status endpoint's and the alternate layout's workflow. */
export const ORCHESTRATION = /* GraphQL */ `
  orchestrationId name description status currentStage
  progress { stagesCompleted stagesTotal tasksCompleted tasksTotal overallPercentage }
  stages {
    stage status parallel tasksTotal tasksCompleted startedAt completedAt duration
    gateValidation { enabled required exitGatePassed outputs validation { missingCriteria validatedAt } }
    tasks { key taskId agentId taskType status dependencies progress result error startedAt completedAt }
  }
  result { success stagesCompleted tasksCompleted outputs }
  error { code message details }
  pauseReason cancelReason tasksCancelled createdAt pausedAt resumedAt completedAt failedAt cancelledAt estimatedCompletionAt duration updatedAt`;
export interface OrchestrationTask {
  key: string;
  taskId: string | null;
  agentId: string;
  taskType: string;
  status: string;
  dependencies: string[];
  progress: number;
  result: Record<string, unknown> | null;
  error: Record<string, unknown> | null;
  startedAt: string | null;
  completedAt: string | null;
}
export interface OrchestrationStage {
  stage: string;
  status: string;
  parallel: boolean;
  tasksTotal: number;
  tasksCompleted: number;
  startedAt: string | null;
  completedAt: string | null;
  duration: number | null;
  gateValidation: {
    enabled: boolean;
    required: string[] | null;
    exitGatePassed: boolean | null;
    outputs: string[];
    validation: { missingCriteria: string[] | null; validatedAt: string } | null;
  };
  /** Null unless the task details were asked for. */
  tasks: OrchestrationTask[] | null;
}
export interface Orchestration {
  orchestrationId: string;
  name: string;
  description: string | null;
  status: string;
  currentStage: string | null;
  progress: { stagesCompleted: number; stagesTotal: number; tasksCompleted: number; tasksTotal: number; overallPercentage: number };
  stages: OrchestrationStage[];
  result: { success: boolean; stagesCompleted: number; tasksCompleted: number; outputs: Record<string, unknown> } | null;
  error: { code: string; message: string; details: Record<string, unknown> | null } | null;
  pauseReason: string | null;
  cancelReason: string | null;
  tasksCancelled: number | null;
  createdAt: string;
  pausedAt: string | null;
  resumedAt: string | null;
  completedAt: string | null;
  failedAt: string | null;
  cancelledAt: string | null;
  estimatedCompletionAt: string | null;
  duration: number | null;
  updatedAt: string;
}

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
export function orchestrationOut(o: Orchestration) {
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
  defineRoute<{
    createOrchestration: Pick<Orchestration, 'orchestrationId' | 'name' | 'status' | 'currentStage' | 'createdAt' | 'estimatedCompletionAt'> & {
      stages: Pick<OrchestrationStage, 'stage' | 'status' | 'tasksTotal' | 'tasksCompleted'>[];
    };
  }>({
    method: 'POST',
    path: '/control-plane/orchestration/create',
    operation: /* GraphQL */ `
      mutation CreateOrchestration($input: CreateOrchestrationInput!) {
        createOrchestration(input: $input) {
          orchestrationId
          name
          status
          currentStage
          createdAt
          estimatedCompletionAt
          stages {
            stage
            status
            tasksTotal
            tasksCompleted
          }
        }
      }
    `,
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
  defineRoute<{ orchestration: Orchestration }>({
    method: 'GET',
    path: '/control-plane/orchestration/status/:orchestrationId',
    operation: /* GraphQL */ `
      query OrchestrationStatus($orchestrationId: ID!, $includeTaskDetails: Boolean) {
        orchestration(orchestrationId: $orchestrationId, includeTaskDetails: $includeTaskDetails) {
          ${ORCHESTRATION}
        }
      }
    `,
    variables: ({ params, query }) => ({ orchestrationId: params.orchestrationId, includeTaskDetails: boolParam(query.includeTaskDetails) }),
    pick: ({ orchestration }) => orchestrationOut(orchestration),
  }),
  defineRoute({
    method: 'POST',
    path: '/control-plane/orchestration/validate-gate',
    operation: /* GraphQL */ `query ValidateGate($input: ValidateGateInput!) { validateGate(input: $input) { ${GATE_RESULT} } }`,
    variables: (req) => ({ input: body(req) }),
    omitNulls: true,
  }),
  defineRoute<{ gateCatalog: unknown[] }>({
    method: 'GET',
    path: '/control-plane/orchestration/gates',
    operation: /* GraphQL */ `
      query GateCatalog {
        gateCatalog {
          stage
          entry {
            name
            required
            description
            evidence
          }
          exit {
            name
            required
            description
            evidence
          }
        }
      }
    `,
    pick: ({ gateCatalog }) => ({ stages: gateCatalog }),
  }),
  defineRoute({
    method: 'POST',
    path: '/control-plane/orchestration/:orchestrationId/pause',
    operation: /* GraphQL */ `
      mutation PauseOrchestration($orchestrationId: ID!, $reason: String) {
        pauseOrchestration(orchestrationId: $orchestrationId, reason: $reason) {
          orchestrationId
          status
          pausedAt
          reason: pauseReason
          currentStage
        }
      }
    `,
    variables: ({ params, body }) => ({ orchestrationId: params.orchestrationId, reason: bodyField(body, 'reason') }),
    omitNulls: true,
  }),
  defineRoute({
    method: 'POST',
    path: '/control-plane/orchestration/:orchestrationId/resume',
    operation: /* GraphQL */ `
      mutation ResumeOrchestration($orchestrationId: ID!) {
        resumeOrchestration(orchestrationId: $orchestrationId) {
          orchestrationId
          status
          resumedAt
          currentStage
          estimatedCompletionAt
        }
      }
    `,
    variables: ({ params }) => ({ orchestrationId: params.orchestrationId }),
    omitNulls: true,
  }),
  defineRoute({
    method: 'POST',
    path: '/control-plane/orchestration/:orchestrationId/cancel',
    operation: /* GraphQL */ `
      mutation CancelOrchestration($orchestrationId: ID!, $reason: String, $cancelRunningTasks: Boolean) {
        cancelOrchestration(orchestrationId: $orchestrationId, reason: $reason, cancelRunningTasks: $cancelRunningTasks) {
          orchestrationId
          status
          cancelledAt
          reason: cancelReason
          tasksCancelled
        }
      }
    `,
    variables: ({ params, body }) => ({
      orchestrationId: params.orchestrationId,
      reason: bodyField(body, 'reason'),
      cancelRunningTasks: bodyField(body, 'cancelRunningTasks'),
    }),
    omitNulls: true,
  }),
  defineRoute<{
    orchestrations: {
      orchestrations: (Pick<Orchestration, 'orchestrationId' | 'name' | 'status' | 'currentStage' | 'createdAt'> & {
        progress: { overallPercentage: number };
      })[];
      pagination: Pagination;
    };
  }>({
    method: 'GET',
    path: '/control-plane/orchestration/list',
    operation: /* GraphQL */ `
      query ListOrchestrations($status: String, $stage: String, $limit: Int, $offset: Int) {
        orchestrations(status: $status, stage: $stage, limit: $limit, offset: $offset) {
          orchestrations {
            orchestrationId
            name
            status
            currentStage
            progress {
              overallPercentage
            }
            createdAt
          }
          ${PAGINATION}
        }
      }
    `,
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
