import type { Principal } from '../../../kernel/auth/principal';
import { exec, one, rows, type Queryable } from '../../../kernel/db/rows';
import {
  ORCHESTRATION_TASK_COLUMNS,
  STAGE_COLUMNS,
  toOrchestrationTaskRecord,
  toStageRecord,
  type OrchestrationStatus,
  type OrchestrationTaskRow,
  type StageRow,
} from './orchestration.store';

/**
 * The state machine's statements (orchestration.engine.ts, orchestration.tasks.ts): which
 * orchestrations to resume, the one it advances (locked) with its stages and tasks, read inside
 * the advance's transaction, and every write it makes.
 */

/** What the engine reads of the orchestration it advances, under its lock (with the webhook secret). */
export interface AdvanceRow {
  orchestration_id: string;
  name: string;
  status: OrchestrationStatus;
  current_stage: string | null;
  stages_completed: number;
  tasks_completed: number;
  created_at: Date;
  webhook_url: string | null;
  webhook_events: string[] | null;
  webhook_secret_enc: Buffer | null;
  principal: Principal;
  trace_parent: string | null;
}

export const orchestrationEngineStore = {
  // ---- one orchestration's state ------------------------------------------------------------

  /** Orchestrations to resume at start: unfinished, or with tasks still running. */
  unfinished: (q: Queryable) =>
    rows<{ orchestration_id: string }>(
      q,
      `SELECT o.orchestration_id FROM control_plane.orchestrations o
        WHERE o.status IN ('running','paused')
           OR EXISTS (SELECT 1 FROM control_plane.orchestration_tasks t WHERE t.orchestration_id = o.orchestration_id AND t.status = 'running')`,
    ),

  /** The orchestration the engine advances, locked FOR UPDATE. */
  lockForAdvance: (q: Queryable, orchestrationId: string) =>
    one<AdvanceRow>(
      q,
      `SELECT orchestration_id, name, status, current_stage, stages_completed, tasks_completed, created_at,
                webhook_url, webhook_events, webhook_secret_enc, principal, trace_parent
           FROM control_plane.orchestrations WHERE orchestration_id = $1 FOR UPDATE`,
      [orchestrationId],
    ),

  stages: async (q: Queryable, orchestrationId: string) =>
    (
      await rows<StageRow>(q, `SELECT ${STAGE_COLUMNS} FROM control_plane.orchestration_stages WHERE orchestration_id = $1 ORDER BY position ASC`, [
        orchestrationId,
      ])
    ).map(toStageRecord),

  tasks: async (q: Queryable, orchestrationId: string) =>
    (
      await rows<OrchestrationTaskRow>(
        q,
        `SELECT ${ORCHESTRATION_TASK_COLUMNS} FROM control_plane.orchestration_tasks WHERE orchestration_id = $1 ORDER BY stage_position ASC, position ASC`,
        [orchestrationId],
      )
    ).map(toOrchestrationTaskRecord),

  // ---- stages -------------------------------------------------------------------------------

  setStageTasksCompleted: (q: Queryable, orchestrationId: string, position: number, done: number) =>
    exec(q, `UPDATE control_plane.orchestration_stages SET tasks_completed = $3 WHERE orchestration_id = $1 AND position = $2`, [
      orchestrationId,
      position,
      done,
    ]),

  /** outputs and gateResult are jsonb parameters (json() of orchestration.tasks.ts). */
  failStage: (q: Queryable, orchestrationId: string, position: number, outputs: string | null, gateResult: string | null) =>
    exec(
      q,
      `UPDATE control_plane.orchestration_stages SET status = 'failed', failed_at = now(), outputs = $3, gate_result = $4
            WHERE orchestration_id = $1 AND position = $2`,
      [orchestrationId, position, outputs, gateResult],
    ),

  startStage: (q: Queryable, orchestrationId: string, position: number) =>
    exec(q, `UPDATE control_plane.orchestration_stages SET status = 'running', started_at = now() WHERE orchestration_id = $1 AND position = $2`, [
      orchestrationId,
      position,
    ]),

  completeStage: (q: Queryable, orchestrationId: string, position: number, outputs: string, gateResult: string | null) =>
    exec(
      q,
      `UPDATE control_plane.orchestration_stages SET status = 'completed', completed_at = now(), outputs = $3, gate_result = $4
                WHERE orchestration_id = $1 AND position = $2`,
      [orchestrationId, position, outputs, gateResult],
    ),

  // ---- the orchestration --------------------------------------------------------------------

  fail: (q: Queryable, orchestrationId: string, error: string) =>
    exec(
      q,
      `UPDATE control_plane.orchestrations SET status = 'failed', error = $2, failed_at = now(), estimated_completion_at = NULL, updated_at = now()
            WHERE orchestration_id = $1`,
      [orchestrationId, error],
    ),

  complete: (q: Queryable, orchestrationId: string, result: string, stagesCompleted: number, tasksCompleted: number) =>
    exec(
      q,
      `UPDATE control_plane.orchestrations
                  SET status = 'completed', result = $2, completed_at = now(), estimated_completion_at = NULL,
                      stages_completed = $3, tasks_completed = $4, updated_at = now()
                WHERE orchestration_id = $1`,
      [orchestrationId, result, stagesCompleted, tasksCompleted],
    ),

  setCurrentStage: (q: Queryable, orchestrationId: string, stage: string) =>
    exec(q, `UPDATE control_plane.orchestrations SET current_stage = $2 WHERE orchestration_id = $1`, [orchestrationId, stage]),

  setStagesCompleted: (q: Queryable, orchestrationId: string, stagesCompleted: number) =>
    exec(q, `UPDATE control_plane.orchestrations SET stages_completed = $2, updated_at = now() WHERE orchestration_id = $1`, [
      orchestrationId,
      stagesCompleted,
    ]),

  setCounts: (q: Queryable, orchestrationId: string, stagesCompleted: number, tasksCompleted: number, eta: Date | null) =>
    exec(
      q,
      `UPDATE control_plane.orchestrations
              SET stages_completed = $2, tasks_completed = $3, estimated_completion_at = $4, updated_at = now()
            WHERE orchestration_id = $1`,
      [orchestrationId, stagesCompleted, tasksCompleted, eta],
    ),

  /** running or paused -> failed by a stuck advance job; false when it had already ended. */
  async failStuck(q: Queryable, orchestrationId: string, reason: string): Promise<boolean> {
    const failed = await rows<{ orchestration_id: string }>(
      q,
      `UPDATE control_plane.orchestrations
          SET status = 'failed', failed_at = now(), estimated_completion_at = NULL, updated_at = now(),
              error = jsonb_build_object('code', 'internal_server_error', 'message', 'The orchestration could not advance', 'details', jsonb_build_object('reason', $2::text))
        WHERE orchestration_id = $1 AND status IN ('running','paused')
        RETURNING orchestration_id`,
      [orchestrationId, reason],
    );
    return failed.length > 0;
  },

  // ---- its tasks (orchestration.tasks.ts) ---------------------------------------------------

  /** The mirrored state of a started task; result and error are jsonb parameters. */
  mirrorTask: (q: Queryable, params: unknown[]) =>
    exec(
      q,
      `UPDATE control_plane.orchestration_tasks
            SET status = $4, progress = $5, result = $6, error = $7, finished_at = CASE WHEN $8 THEN coalesce(finished_at, now()) END
          WHERE orchestration_id = $1 AND stage_position = $2 AND position = $3`,
      params,
    ),

  /** The task the task service created for this row. */
  taskStarted: (q: Queryable, params: unknown[]) =>
    exec(
      q,
      `UPDATE control_plane.orchestration_tasks
            SET task_id = $4, status = $5, progress = $6, result = $7, error = $8, started_at = now(),
                finished_at = CASE WHEN $5 <> 'running' THEN now() END
          WHERE orchestration_id = $1 AND stage_position = $2 AND position = $3`,
      params,
    ),

  /** A task is created under a savepoint: a refused one leaves the advance's transaction usable. */
  savepoint: (q: Queryable) => exec(q, 'SAVEPOINT start_task'),
  rollbackToSavepoint: (q: Queryable) => exec(q, 'ROLLBACK TO SAVEPOINT start_task'),
  releaseSavepoint: (q: Queryable) => exec(q, 'RELEASE SAVEPOINT start_task'),
};
