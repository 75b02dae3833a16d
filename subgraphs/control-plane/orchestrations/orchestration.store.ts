import type { Principal } from '../../../kernel/auth/principal';
import { page, Where } from '../../../kernel/db/page';
import { exec, one, rows, type Queryable } from '../../../kernel/db/rows';
import type { GateValidationResult, StageName } from '../gates';
import { traceIdOf } from '../../../kernel/tracing';

/**
 * Where orchestrations are read and where orchestration.service.ts writes them: the three tables
 * control_plane.orchestrations, orchestration_stages and orchestration_tasks, their rows and the
 * records the service and the engine work on. The state machine's own statements are in
 * orchestration.engine.store.ts.
 */

export const ORCHESTRATION_STATUSES = ['running', 'paused', 'completed', 'failed', 'cancelled'] as const;
export type OrchestrationStatus = (typeof ORCHESTRATION_STATUSES)[number];
/** `failed`: the stage's exit gate failed or one of its tasks failed; `cancelled`: it was running when the orchestration was cancelled. */
export const STAGE_STATUSES = ['pending', 'running', 'completed', 'failed', 'cancelled'] as const;
export type StageStatus = (typeof STAGE_STATUSES)[number];
/** `running` covers a task that is queued or running in the task service. */
export const ORCHESTRATION_TASK_STATUSES = ['pending', 'running', 'completed', 'failed', 'cancelled'] as const;
export type OrchestrationTaskStatus = (typeof ORCHESTRATION_TASK_STATUSES)[number];

export const ORCHESTRATION_EVENTS = ['orchestration.stage_completed', 'orchestration.completed', 'orchestration.failed'] as const;

export interface OrchestrationFailure {
  code: string;
  message: string;
  details?: Record<string, unknown>;
}

export interface OrchestrationOutcome {
  success: boolean;
  stagesCompleted: number;
  tasksCompleted: number;
  outputs: Record<string, unknown>;
}

/** A row of control_plane.orchestrations as ORCHESTRATION_COLUMNS reads it (not the webhook secret). */
export interface OrchestrationRow {
  orchestration_id: string;
  name: string;
  description: string | null;
  status: OrchestrationStatus;
  current_stage: StageName | null;
  stages_total: number;
  stages_completed: number;
  tasks_total: number;
  tasks_completed: number;
  result: OrchestrationOutcome | null;
  error: OrchestrationFailure | null;
  webhook_url: string | null;
  webhook_events: string[] | null;
  /** Who created it: the tasks it starts run on that caller's behalf. */
  principal: Principal;
  key_id: string | null;
  pause_reason: string | null;
  cancel_reason: string | null;
  tasks_cancelled: number | null;
  /** The W3C traceparent of the request that created it, when it was traced. */
  trace_parent: string | null;
  created_at: Date;
  paused_at: Date | null;
  resumed_at: Date | null;
  completed_at: Date | null;
  failed_at: Date | null;
  cancelled_at: Date | null;
  estimated_completion_at: Date | null;
  updated_at: Date;
  /** bigint, read as text: raised by every change of the row. */
  version: string;
}

export interface StageRow {
  orchestration_id: string;
  position: number;
  stage: StageName;
  status: StageStatus;
  parallel: boolean;
  /** Whether the exit gate is validated when the stage's tasks are done. */
  gate_enabled: boolean;
  /** gateValidation.exit.required as given; null: the catalogue's required criteria. */
  gate_required: string[] | null;
  tasks_total: number;
  tasks_completed: number;
  /** The merged outputs of the stage's completed tasks, set when its tasks are done. */
  outputs: Record<string, unknown> | null;
  gate_result: GateValidationResult | null;
  started_at: Date | null;
  completed_at: Date | null;
  failed_at: Date | null;
}

export interface OrchestrationTaskRow {
  orchestration_id: string;
  stage_position: number;
  position: number;
  /** The name dependencies use: the task's `id` as given, else its agentId (made unique). */
  task_key: string;
  agent_id: string;
  task_type: string;
  context: Record<string, unknown>;
  /** As given by the caller. */
  dependencies: string[];
  /** Keys of the tasks of the same stage this one waits for (dependencies resolved at create). */
  depends_on: string[];
  task_id: string | null;
  status: OrchestrationTaskStatus;
  progress: number;
  result: Record<string, unknown> | null;
  error: Record<string, unknown> | null;
  started_at: Date | null;
  finished_at: Date | null;
}

/** An orchestration as the service reads it. */
export interface OrchestrationRecord {
  orchestrationId: string;
  name: string;
  description: string | null;
  status: OrchestrationStatus;
  currentStage: StageName | null;
  stagesTotal: number;
  stagesCompleted: number;
  tasksTotal: number;
  tasksCompleted: number;
  result: OrchestrationOutcome | null;
  error: OrchestrationFailure | null;
  webhookUrl: string | null;
  webhookEvents: string[] | null;
  principal: Principal;
  keyId: string | null;
  pauseReason: string | null;
  cancelReason: string | null;
  tasksCancelled: number | null;
  /** The trace of the request that created it (its stages' spans are recorded there), when that trace was recorded. */
  traceId: string | null;
  createdAt: Date;
  pausedAt: Date | null;
  resumedAt: Date | null;
  completedAt: Date | null;
  failedAt: Date | null;
  cancelledAt: Date | null;
  estimatedCompletionAt: Date | null;
  updatedAt: Date;
  version: number;
}

/** A stage as the service and the engine work on it (the engine changes it as it moves). */
export interface StageRecord {
  orchestrationId: string;
  position: number;
  stage: StageName;
  status: StageStatus;
  parallel: boolean;
  gateEnabled: boolean;
  gateRequired: string[] | null;
  tasksTotal: number;
  tasksCompleted: number;
  outputs: Record<string, unknown> | null;
  gateResult: GateValidationResult | null;
  startedAt: Date | null;
  completedAt: Date | null;
  failedAt: Date | null;
}

/** A task of an orchestration as the service and the engine work on it. */
export interface OrchestrationTaskRecord {
  orchestrationId: string;
  stagePosition: number;
  position: number;
  taskKey: string;
  agentId: string;
  taskType: string;
  context: Record<string, unknown>;
  dependencies: string[];
  dependsOn: string[];
  taskId: string | null;
  status: OrchestrationTaskStatus;
  progress: number;
  result: Record<string, unknown> | null;
  error: Record<string, unknown> | null;
  startedAt: Date | null;
  finishedAt: Date | null;
}

const ORCHESTRATION_COLUMNS = `orchestration_id, name, description, status, current_stage, stages_total, stages_completed, tasks_total,
  tasks_completed, result, error, webhook_url, webhook_events, principal, key_id, pause_reason, cancel_reason, tasks_cancelled,
  trace_parent, created_at, paused_at, resumed_at, completed_at, failed_at, cancelled_at, estimated_completion_at, updated_at, version`;
export const STAGE_COLUMNS = `orchestration_id, position, stage, status, parallel, gate_enabled, gate_required, tasks_total, tasks_completed,
  outputs, gate_result, started_at, completed_at, failed_at`;
export const ORCHESTRATION_TASK_COLUMNS = `orchestration_id, stage_position, position, task_key, agent_id, task_type, context, dependencies, depends_on,
  task_id, status, progress, result, error, started_at, finished_at`;

export function toOrchestrationRecord(r: OrchestrationRow): OrchestrationRecord {
  return {
    orchestrationId: r.orchestration_id,
    name: r.name,
    description: r.description,
    status: r.status,
    currentStage: r.current_stage,
    stagesTotal: r.stages_total,
    stagesCompleted: r.stages_completed,
    tasksTotal: r.tasks_total,
    tasksCompleted: r.tasks_completed,
    result: r.result,
    error: r.error,
    webhookUrl: r.webhook_url,
    webhookEvents: r.webhook_events,
    principal: r.principal,
    keyId: r.key_id,
    pauseReason: r.pause_reason,
    cancelReason: r.cancel_reason,
    tasksCancelled: r.tasks_cancelled,
    traceId: traceIdOf(r.trace_parent),
    createdAt: r.created_at,
    pausedAt: r.paused_at,
    resumedAt: r.resumed_at,
    completedAt: r.completed_at,
    failedAt: r.failed_at,
    cancelledAt: r.cancelled_at,
    estimatedCompletionAt: r.estimated_completion_at,
    updatedAt: r.updated_at,
    version: Number(r.version),
  };
}

export function toStageRecord(r: StageRow): StageRecord {
  return {
    orchestrationId: r.orchestration_id,
    position: r.position,
    stage: r.stage,
    status: r.status,
    parallel: r.parallel,
    gateEnabled: r.gate_enabled,
    gateRequired: r.gate_required,
    tasksTotal: r.tasks_total,
    tasksCompleted: r.tasks_completed,
    outputs: r.outputs,
    gateResult: r.gate_result,
    startedAt: r.started_at,
    completedAt: r.completed_at,
    failedAt: r.failed_at,
  };
}

export function toOrchestrationTaskRecord(r: OrchestrationTaskRow): OrchestrationTaskRecord {
  return {
    orchestrationId: r.orchestration_id,
    stagePosition: r.stage_position,
    position: r.position,
    taskKey: r.task_key,
    agentId: r.agent_id,
    taskType: r.task_type,
    context: r.context,
    dependencies: r.dependencies,
    dependsOn: r.depends_on,
    taskId: r.task_id,
    status: r.status,
    progress: r.progress,
    result: r.result,
    error: r.error,
    startedAt: r.started_at,
    finishedAt: r.finished_at,
  };
}

export const orchestrationStore = {
  // ---- reads ----------------------------------------------------------------------------------

  /** The orchestration (orchestrationId already checked to be a UUID), locked FOR UPDATE when asked. */
  async byId(q: Queryable, orchestrationId: string, lock = false): Promise<OrchestrationRecord | undefined> {
    const row = await one<OrchestrationRow>(
      q,
      `SELECT ${ORCHESTRATION_COLUMNS} FROM control_plane.orchestrations WHERE orchestration_id = $1 LIMIT 1${lock ? ' FOR UPDATE' : ''}`,
      [orchestrationId],
    );
    return row && toOrchestrationRecord(row);
  },

  /** One page, newest first, and the total. */
  async list(
    q: Queryable,
    filter: { status?: string | null; stage?: string | null },
    limit: number,
    offset: number,
  ): Promise<{ rows: OrchestrationRecord[]; total: number }> {
    const where = new Where().equals('status', filter.status).equals('current_stage', filter.stage);
    const found = await page<OrchestrationRow>(
      q,
      {
        select: ORCHESTRATION_COLUMNS,
        from: `FROM control_plane.orchestrations ${where}`,
        orderBy: 'created_at DESC, orchestration_id DESC',
        params: where.params,
      },
      { limit, offset },
    );
    return { rows: found.rows.map(toOrchestrationRecord), total: found.total };
  },

  /** The stages of these orchestrations, by position. */
  stagesOf: async (q: Queryable, orchestrationIds: string[]): Promise<StageRecord[]> =>
    (
      await rows<StageRow>(
        q,
        `SELECT ${STAGE_COLUMNS} FROM control_plane.orchestration_stages WHERE orchestration_id = ANY($1::uuid[]) ORDER BY position ASC`,
        [orchestrationIds],
      )
    ).map(toStageRecord),

  /** The tasks of these orchestrations, by stage and position. */
  tasksOf: async (q: Queryable, orchestrationIds: string[]): Promise<OrchestrationTaskRecord[]> =>
    (
      await rows<OrchestrationTaskRow>(
        q,
        `SELECT ${ORCHESTRATION_TASK_COLUMNS} FROM control_plane.orchestration_tasks WHERE orchestration_id = ANY($1::uuid[])
          ORDER BY stage_position ASC, position ASC`,
        [orchestrationIds],
      )
    ).map(toOrchestrationTaskRecord),

  // ---- the service's writes -------------------------------------------------------------------

  insert: (q: Queryable, params: unknown[]) =>
    exec(
      q,
      `INSERT INTO control_plane.orchestrations
           (orchestration_id, name, description, status, current_stage, stages_total, tasks_total, webhook_url, webhook_events,
            webhook_secret_enc, principal, key_id, estimated_completion_at, trace_parent)
         VALUES ($1, $2, $3, 'running', $4, $5, $6, $7, $8, $9, $10, $11, now() + $12::int * interval '1 second', $13)`,
      params,
    ),

  insertStage: (q: Queryable, params: unknown[]) =>
    exec(
      q,
      `INSERT INTO control_plane.orchestration_stages
             (orchestration_id, position, stage, status, parallel, gate_enabled, gate_required, tasks_total, started_at)
           VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9)`,
      params,
    ),

  insertTask: (q: Queryable, params: unknown[]) =>
    exec(
      q,
      `INSERT INTO control_plane.orchestration_tasks
               (orchestration_id, stage_position, position, task_key, agent_id, task_type, context, dependencies, depends_on)
             VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9)`,
      params,
    ),

  pause: (q: Queryable, orchestrationId: string, reason: string | null) =>
    exec(q, `UPDATE control_plane.orchestrations SET status = 'paused', paused_at = now(), pause_reason = $2, updated_at = now() WHERE orchestration_id = $1`, [
      orchestrationId,
      reason,
    ]),

  resume: (q: Queryable, orchestrationId: string) =>
    exec(q, `UPDATE control_plane.orchestrations SET status = 'running', resumed_at = now(), updated_at = now() WHERE orchestration_id = $1`, [
      orchestrationId,
    ]),

  cancel: (q: Queryable, orchestrationId: string, reason: string | null) =>
    exec(
      q,
      `UPDATE control_plane.orchestrations
            SET status = 'cancelled', cancelled_at = now(), cancel_reason = $2, tasks_cancelled = 0, estimated_completion_at = NULL, updated_at = now()
          WHERE orchestration_id = $1`,
      [orchestrationId, reason],
    ),

  cancelRunningStages: (q: Queryable, orchestrationId: string) =>
    exec(q, `UPDATE control_plane.orchestration_stages SET status = 'cancelled' WHERE orchestration_id = $1 AND status = 'running'`, [orchestrationId]),

  /** The task-service ids of the orchestration's running tasks. */
  runningTaskIds: async (q: Queryable, orchestrationId: string): Promise<string[]> =>
    (
      await rows<{ task_id: string }>(q, `SELECT task_id FROM control_plane.orchestration_tasks WHERE orchestration_id = $1 AND status = 'running'`, [
        orchestrationId,
      ])
    ).map((r) => r.task_id),

  setTasksCancelled: (q: Queryable, orchestrationId: string, n: number) =>
    exec(q, `UPDATE control_plane.orchestrations SET tasks_cancelled = $2, updated_at = now() WHERE orchestration_id = $1`, [orchestrationId, n]),

  /** Marks these (still running) tasks cancelled. */
  cancelTasks: (q: Queryable, orchestrationId: string, taskIds: string[]) =>
    exec(
      q,
      `UPDATE control_plane.orchestration_tasks SET status = 'cancelled', finished_at = coalesce(finished_at, now())
            WHERE orchestration_id = $1 AND task_id = ANY($2::uuid[]) AND status = 'running'`,
      [orchestrationId, taskIds],
    ),
};
