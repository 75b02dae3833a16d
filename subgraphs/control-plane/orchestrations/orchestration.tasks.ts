import type { Queryable } from '../../../kernel/db/rows';
import type { Tx } from '../../../kernel/db/transaction';
import type { Principal } from '../../../kernel/auth/principal';
import { AppError } from '../../../kernel/errors';
import { orchestrationEngineStore } from './orchestration.engine.store';
import type { OrchestrationFailure, OrchestrationTaskRecord, OrchestrationTaskStatus, StageRecord } from './orchestration.store';

/**
 * An orchestration's tasks as the task service runs them (task.service.ts, reached through
 * TaskPort): their rows in orchestration_tasks mirror the tasks' state, and a task whose wait is
 * over is created in the orchestration's transaction. The state machine (orchestration.engine.ts)
 * decides when; this file knows how.
 */

/** What the orchestration needs of a control-plane task (TaskService's TaskRecord). */
export interface TaskLike {
  id: string;
  status: string;
  result?: { output?: unknown; filesCreated?: string[] | null; filesModified?: string[] | null; linesWritten?: number | null } | null;
  error?: { code?: string; message?: string; details?: unknown } | null;
  progress?: { percentage?: number | null } | null;
}

/** The part of TaskService (task.service.ts) the orchestration uses. */
export interface TaskPort {
  create(
    principal: Principal,
    input: {
      agentId: string;
      taskType: string;
      context: Record<string, unknown>;
      forge?: { stage?: string; validateGates?: boolean; outputs?: Record<string, unknown> };
      execution?: { mode?: 'async' | 'sync' };
    },
    origin?: { orchestrationId: string; stage: string; tx?: Tx },
  ): Promise<TaskLike>;
  get(principal: Principal, taskId: string): Promise<TaskLike>;
  cancel(principal: Principal, taskId: string, reason?: string): Promise<TaskLike>;
}

/** The principal an orchestration reads and cancels its tasks as (they are created on behalf of its creator). */
export function orchestrationPrincipal(orchestrationId: string): Principal {
  return { kind: 'service', name: `orchestration:${orchestrationId}` };
}

const TASK_STATUS: Record<string, OrchestrationTaskStatus> = {
  queued: 'running',
  running: 'running',
  completed: 'completed',
  failed: 'failed',
  cancelled: 'cancelled',
};

export class OrchestrationTasks {
  constructor(private readonly port: () => TaskPort) {}

  /** Copies the state of started, unfinished tasks from the task service into their rows. */
  async mirror(m: Queryable, principal: Principal, tasks: OrchestrationTaskRecord[]): Promise<boolean> {
    let changed = false;
    for (const t of tasks) {
      if (t.status !== 'running' || !t.taskId) continue;
      let task: TaskLike;
      try {
        task = await this.port().get(principal, t.taskId);
      } catch (err) {
        if (err instanceof AppError && err.code === 'resource_not_found') {
          task = { id: t.taskId, status: 'failed', error: { code: 'resource_not_found', message: `Task ${t.taskId} no longer exists` } };
        } else throw err;
      }
      const status = TASK_STATUS[task.status] ?? 'running';
      const progress = status === 'completed' ? 100 : clampPercent(task.progress?.percentage ?? t.progress);
      if (status === t.status && progress === t.progress) continue;
      t.status = status;
      t.progress = progress;
      if (status === 'completed') t.result = (task.result ?? {}) as Record<string, unknown>;
      if (status === 'failed' || status === 'cancelled')
        t.error = (task.error ?? { code: status, message: `The task was ${status}` }) as Record<string, unknown>;
      const finished = status !== 'running';
      await orchestrationEngineStore.mirrorTask(m, [t.orchestrationId, t.stagePosition, t.position, status, progress, json(t.result), json(t.error), finished]);
      if (finished) t.finishedAt = new Date();
      changed = true;
    }
    return changed;
  }

  /** Starts the stage's tasks whose wait is over. */
  async startReady(
    tx: Tx,
    principal: Principal,
    orchestrationId: string,
    stage: StageRecord,
    own: OrchestrationTaskRecord[],
    previous: Record<string, unknown>,
  ): Promise<{ started: boolean; failure?: OrchestrationFailure }> {
    const m = tx.manager;
    const byKey = new Map(own.map((t) => [t.taskKey, t]));
    let started = false;
    for (const [i, t] of own.entries()) {
      if (t.status !== 'pending') continue;
      const waits = t.dependsOn.some((k) => byKey.get(k)?.status !== 'completed') || (!stage.parallel && i > 0 && own[i - 1]!.status !== 'completed');
      if (waits) continue;
      await orchestrationEngineStore.savepoint(m);
      let task: TaskLike;
      try {
        task = await this.port().create(
          principal,
          {
            agentId: t.agentId,
            taskType: t.taskType,
            context: t.context,
            forge: { stage: stage.stage, validateGates: false, outputs: previous },
            execution: { mode: 'async' },
          },
          { orchestrationId, stage: stage.stage, tx },
        );
      } catch (err) {
        await orchestrationEngineStore.rollbackToSavepoint(m);
        if (err instanceof AppError && err.status !== 429 && err.status < 500) {
          return {
            started,
            failure: {
              code: err.code,
              message: `Task ${t.taskKey} (${t.agentId}) of stage ${stage.stage} could not start: ${err.message}`,
              details: { stage: stage.stage, task: t.taskKey, agentId: t.agentId, ...err.details },
            },
          };
        }
        throw err; // a passing condition (rate limit, database): the job retries
      }
      await orchestrationEngineStore.releaseSavepoint(m);
      t.taskId = task.id;
      t.status = TASK_STATUS[task.status] ?? 'running';
      if (t.status === 'completed') t.result = (task.result ?? {}) as Record<string, unknown>;
      if (t.status === 'failed' || t.status === 'cancelled')
        t.error = (task.error ?? { code: t.status, message: `The task was ${t.status}` }) as Record<string, unknown>;
      if (t.status === 'pending') t.status = 'running';
      t.progress = t.status === 'completed' ? 100 : 0;
      t.startedAt = new Date();
      await orchestrationEngineStore.taskStarted(m, [
        t.orchestrationId,
        t.stagePosition,
        t.position,
        task.id,
        t.status,
        t.progress,
        json(t.result),
        json(t.error),
      ]);
      started = true;
    }
    return { started };
  }
}

function clampPercent(n: unknown): number {
  const v = Number(n);
  return Number.isFinite(v) ? Math.min(100, Math.max(0, v)) : 0;
}

/** A jsonb parameter: null and undefined stay SQL NULL (JSON.stringify would give 'null' or nothing). */
export function json(v: unknown): string | null {
  return v === null || v === undefined ? null : JSON.stringify(v);
}
