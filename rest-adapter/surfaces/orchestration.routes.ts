import { omitNulls } from '../output';
import { boolParam, defineRoute, intParam, strParam, type RestRequest } from '../route';

/** Orchestrations and gates on the main layout, `{base_url}/v1/control-plane/orchestration` (spec 1). */

const GATE_RESULT = `stage gateType passed criteria { name required met } missingCriteria validatedAt`;
export const ORCHESTRATION_FIELDS = /* GraphQL */ `
  fragment OrchestrationFields on Orchestration {
    orchestrationId
    name
    description
    status
    currentStage
    progress {
      stagesCompleted
      stagesTotal
      tasksCompleted
      tasksTotal
      overallPercentage
    }
    stages {
      stage
      status
      parallel
      tasksTotal
      tasksCompleted
      startedAt
      completedAt
      duration
      gateValidation {
        enabled
        required
        exitGatePassed
        outputs
        validation {
          missingCriteria
          validatedAt
        }
      }
      tasks {
        key
        taskId
        agentId
        taskType
        status
        dependencies
        progress
        result
        error
        startedAt
        completedAt
      }
    }
    result {
      success
      stagesCompleted
      tasksCompleted
      outputs
    }
    error {
      code
      message
      details
    }
    pauseReason
    cancelReason
    tasksCancelled
    createdAt
    pausedAt
    resumedAt
    completedAt
    failedAt
    cancelledAt
    estimatedCompletionAt
    duration
    updatedAt
  }
`;

const body = (req: RestRequest) => req.body ?? {};

function stageOut(s: any) {
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
    tasks: s.tasks?.map((t: any) =>
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
export function orchestrationOut(o: any) {
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
      stages: o.stages.map((s: any) => ({ stage: s.stage, status: s.status, tasksTotal: s.tasksTotal, tasksCompleted: s.tasksCompleted })),
      createdAt: o.createdAt,
      estimatedCompletionAt: o.estimatedCompletionAt,
    }),
  }),
  defineRoute({
    method: 'GET',
    path: '/control-plane/orchestration/status/:orchestrationId',
    operation: /* GraphQL */ `
      query OrchestrationStatus($orchestrationId: ID!, $includeTaskDetails: Boolean) {
        orchestration(orchestrationId: $orchestrationId, includeTaskDetails: $includeTaskDetails) {
          ...OrchestrationFields
        }
      }
      ${ORCHESTRATION_FIELDS}
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
  defineRoute({
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
    variables: ({ params, body }) => ({ orchestrationId: params.orchestrationId, reason: body?.reason }),
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
      reason: body?.reason,
      cancelRunningTasks: body?.cancelRunningTasks,
    }),
    omitNulls: true,
  }),
  defineRoute({
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
          pagination {
            total
            limit
            offset
            hasMore
          }
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
      orchestrations: orchestrations.orchestrations.map((o: any) => ({ ...o, progress: o.progress.overallPercentage })),
      pagination: orchestrations.pagination,
    }),
  }),
];
