import { rowsOf } from '../../kernel/db/rows';
import type { DataSource, EntityManager } from 'typeorm';
import type { Principal } from '../../kernel/auth/principal';
import type { SecretCipher } from '../../kernel/crypto';
import { AppError } from '../../kernel/errors';
import type { EventBus } from '../../kernel/events';
import type { Logger } from '../../kernel/logger';
import type { Queue } from '../../kernel/queue';
import type { WebhookSender } from '../../kernel/webhooks';
import { gateCriteria, hasValue, validateGate, type GateValidationResult, type StageName } from './gate.catalog';
import {
  OrchestrationStageEntity,
  OrchestrationTaskEntity,
  type OrchestrationFailure,
  type OrchestrationOutcome,
  type OrchestrationStatus,
  type OrchestrationTaskStatus,
} from './orchestration.entity';

/**
 * The orchestration state machine. All state lives in the three orchestration tables; `advance`
 * reads it under a row lock on the orchestration, mirrors its started tasks from the task service,
 * then moves as far as it can:
 *
 *   stage pending  -> running (currentStage)
 *   stage running  -> starts every pending task whose wait is over: in a parallel stage those whose
 *                     dependencies completed, otherwise also the one before it; each through
 *                     TaskService.create in this same transaction, with the previous stages' outputs
 *   all tasks done -> outputs = merged result.output (+ files) of the stage's tasks; the exit gate is
 *                     validated when enabled; passed: stage completed, `orchestration.stage_completed`,
 *                     next stage; failed: stage and orchestration failed with forge_gate_failure
 *   a task failed  -> stage and orchestration failed (agent_execution_failed); its siblings are cancelled
 *   no stage left  -> orchestration completed with result, `orchestration.completed`
 *
 * A paused orchestration only mirrors its tasks; cancelled, completed and failed ones too (tasks left
 * running by a cancel with cancelRunningTasks false still finish). `advance` is idempotent and runs as
 * the durable job `control-plane.orchestration.advance`, keyed per orchestration so triggers coalesce.
 * Triggers: create, resume, every `control-plane.task.updated` event of one of its tasks, a watchdog
 * while tasks run (in case an event was lost), and at start every unfinished orchestration, so a
 * restart mid-run resumes where the rows say it was.
 */

export const ADVANCE_JOB = 'control-plane.orchestration.advance';
export const UPDATED_TOPIC = 'control-plane.orchestration.updated';
export const TASK_UPDATED_TOPIC = 'control-plane.task.updated';
const WATCHDOG_MS = 15_000;
/** Seconds a task is assumed to take when the agent catalogue gives no average. */
export const DEFAULT_TASK_SECONDS = 60;

/** What the orchestration needs of a control-plane task (TaskService's TaskEntity). */
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
    origin?: { orchestrationId: string; stage: string; manager?: EntityManager },
  ): Promise<TaskLike>;
  get(principal: Principal, taskId: string): Promise<TaskLike>;
  cancel(principal: Principal, taskId: string, reason?: string): Promise<TaskLike>;
}

/** The principal an orchestration reads and cancels its tasks as (they are created on behalf of its creator). */
export function orchestrationPrincipal(orchestrationId: string): Principal {
  return { kind: 'service', name: `orchestration:${orchestrationId}` };
}

interface OrchestrationRow {
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
}

const TASK_STATUS: Record<string, OrchestrationTaskStatus> = {
  queued: 'running',
  running: 'running',
  completed: 'completed',
  failed: 'failed',
  cancelled: 'cancelled',
};

export class OrchestrationEngine {
  private readonly logger: Logger;
  private off?: () => void;

  constructor(
    private readonly deps: {
      db: DataSource;
      queue: Queue;
      events: EventBus;
      webhooks: WebhookSender;
      cipher: SecretCipher;
      tasks: () => TaskPort;
      taskSeconds: (agentId: string, taskType: string) => number;
      logger: Logger;
    },
  ) {
    this.logger = deps.logger.child({ component: 'orchestration-engine' });
  }

  register(): void {
    this.deps.queue.register<{ orchestrationId: string }>(ADVANCE_JOB, (job) => this.advance(job.data.orchestrationId), {
      onFinalFailure: (job, error) => this.failStuck((job.data as { orchestrationId: string }).orchestrationId, error),
    });
  }

  /** Listens to task events and resumes every unfinished orchestration (the service's start hook). */
  async start(): Promise<void> {
    this.off?.();
    this.off = this.deps.events.subscribe(TASK_UPDATED_TOPIC, (p: { orchestrationId?: string | null } | undefined) => {
      if (p?.orchestrationId) {
        this.trigger(p.orchestrationId).catch((err) => this.logger.warn('orchestration trigger failed', { err, orchestrationId: p.orchestrationId }));
      }
    });
    const rows: { orchestration_id: string }[] = await this.deps.db.query(
      `SELECT o.orchestration_id FROM control_plane.orchestrations o
        WHERE o.status IN ('running','paused')
           OR EXISTS (SELECT 1 FROM control_plane.orchestration_tasks t WHERE t.orchestration_id = o.orchestration_id AND t.status = 'running')`,
    );
    for (const r of rows) await this.trigger(r.orchestration_id);
    if (rows.length) this.logger.info('resuming orchestrations', { count: rows.length });
  }

  stop(): void {
    this.off?.();
    this.off = undefined;
  }

  /**
   * Asks for an advance. Triggers coalesce on the job key while the job waits; when the keyed job
   * already runs (it may have read the state before this change), a follow-up job is added.
   */
  async trigger(orchestrationId: string, manager?: EntityManager, runAt?: Date): Promise<void> {
    const data = { orchestrationId };
    const opts = { maxAttempts: 5, backoffMs: 500, timeoutMs: 120_000 };
    if (runAt) {
      await this.deps.queue.enqueue(ADVANCE_JOB, data, { ...opts, runAt, key: `${ADVANCE_JOB}:watch:${orchestrationId}` }, manager);
      return;
    }
    const id = await this.deps.queue.enqueue(ADVANCE_JOB, data, { ...opts, key: `${ADVANCE_JOB}:${orchestrationId}` }, manager);
    const job = await this.deps.queue.get(id);
    if (job && job.state !== 'queued') await this.deps.queue.enqueue(ADVANCE_JOB, data, opts, manager);
  }

  /** One step of the state machine (see the file comment). Idempotent. */
  async advance(orchestrationId: string): Promise<void> {
    const afterCommit: (() => Promise<unknown>)[] = [];
    let publish: OrchestrationStatus | null = null;
    await this.deps.db.transaction(async (m) => {
      const [o]: OrchestrationRow[] = await m.query(
        `SELECT orchestration_id, name, status, current_stage, stages_completed, tasks_completed, created_at,
                webhook_url, webhook_events, webhook_secret_enc, principal
           FROM control_plane.orchestrations WHERE orchestration_id = $1 FOR UPDATE`,
        [orchestrationId],
      );
      if (!o) return;
      const principal = orchestrationPrincipal(orchestrationId);
      const stages = await m.getRepository(OrchestrationStageEntity).find({ where: { orchestrationId }, order: { position: 'ASC' } });
      const tasks = await m.getRepository(OrchestrationTaskEntity).find({ where: { orchestrationId }, order: { stagePosition: 'ASC', position: 'ASC' } });
      let changed = await this.mirrorTasks(m, principal, tasks);

      const counts = async () => {
        for (const s of stages) {
          const done = tasks.filter((t) => t.stagePosition === s.position && t.status === 'completed').length;
          if (done !== s.tasksCompleted) {
            s.tasksCompleted = done;
            await m.query(`UPDATE control_plane.orchestration_stages SET tasks_completed = $3 WHERE orchestration_id = $1 AND position = $2`, [
              orchestrationId,
              s.position,
              done,
            ]);
          }
        }
        o.tasks_completed = tasks.filter((t) => t.status === 'completed').length;
        o.stages_completed = stages.filter((s) => s.status === 'completed').length;
      };
      await counts();

      const webhook = async (event: string, body: Record<string, unknown>) => {
        if (!o.webhook_url || !o.webhook_events?.includes(event)) return;
        let secret: string | undefined;
        try {
          secret = o.webhook_secret_enc ? this.deps.cipher.decrypt(o.webhook_secret_enc, orchestrationId) : undefined;
        } catch (err) {
          // The platform secret changed: an unsigned delivery would look forged, so none is sent.
          this.logger.error('orchestration webhook secret unreadable; event not sent', { err: String(err), orchestrationId, event });
          return;
        }
        await this.deps.webhooks.send(
          {
            url: o.webhook_url,
            secret,
            event,
            payload: { event, orchestrationId, name: o.name, timestamp: new Date().toISOString(), ...body },
            source: { service: 'control-plane', resourceType: 'orchestration', resourceId: orchestrationId },
          },
          m,
        );
      };
      const fail = async (stage: OrchestrationStageEntity, error: OrchestrationFailure) => {
        stage.status = 'failed';
        await m.query(
          `UPDATE control_plane.orchestration_stages SET status = 'failed', failed_at = now(), outputs = $3, gate_result = $4
            WHERE orchestration_id = $1 AND position = $2`,
          [orchestrationId, stage.position, json(stage.outputs), json(stage.gateResult)],
        );
        o.status = 'failed';
        await m.query(
          `UPDATE control_plane.orchestrations SET status = 'failed', error = $2, failed_at = now(), estimated_completion_at = NULL, updated_at = now()
            WHERE orchestration_id = $1`,
          [orchestrationId, JSON.stringify(error)],
        );
        await webhook('orchestration.failed', { stage: stage.stage, error });
        // Work of the failed orchestration that still runs is wasted: stop it.
        for (const t of tasks.filter((x) => x.status === 'running' && x.taskId)) {
          afterCommit.push(() => this.deps.tasks().cancel(principal, t.taskId!, `orchestration ${orchestrationId} failed`));
        }
      };

      if (o.status === 'running') {
        for (;;) {
          const stage = stages.find((s) => s.status === 'pending' || s.status === 'running');
          if (!stage) {
            const outputs = mergeOutputs(stages.map((s) => s.outputs ?? {}));
            const result: OrchestrationOutcome = {
              success: true,
              stagesCompleted: o.stages_completed,
              tasksCompleted: o.tasks_completed,
              outputs,
            };
            await m.query(
              `UPDATE control_plane.orchestrations
                  SET status = 'completed', result = $2, completed_at = now(), estimated_completion_at = NULL,
                      stages_completed = $3, tasks_completed = $4, updated_at = now()
                WHERE orchestration_id = $1`,
              [orchestrationId, JSON.stringify(result), o.stages_completed, o.tasks_completed],
            );
            o.status = 'completed';
            await webhook('orchestration.completed', { result });
            changed = true;
            break;
          }
          if (stage.status === 'pending') {
            stage.status = 'running';
            await m.query(
              `UPDATE control_plane.orchestration_stages SET status = 'running', started_at = now() WHERE orchestration_id = $1 AND position = $2`,
              [orchestrationId, stage.position],
            );
            await m.query(`UPDATE control_plane.orchestrations SET current_stage = $2 WHERE orchestration_id = $1`, [orchestrationId, stage.stage]);
            o.current_stage = stage.stage;
            changed = true;
          }
          const own = tasks.filter((t) => t.stagePosition === stage.position);
          const broken = own.find((t) => t.status === 'failed' || t.status === 'cancelled');
          if (broken) {
            await fail(stage, taskFailure(stage.stage, broken));
            changed = true;
            break;
          }
          if (own.every((t) => t.status === 'completed')) {
            stage.outputs = mergeOutputs(own.map(taskOutputs));
            let gate: GateValidationResult | null = null;
            if (stage.gateEnabled) {
              gate = validateGate(stage.stage, 'exit', stage.outputs, stage.gateRequired ?? undefined);
              stage.gateResult = gate;
            }
            changed = true;
            if (gate && !gate.passed) {
              await fail(stage, gateFailure(gate, stage.outputs));
              break;
            }
            stage.status = 'completed';
            await m.query(
              `UPDATE control_plane.orchestration_stages SET status = 'completed', completed_at = now(), outputs = $3, gate_result = $4
                WHERE orchestration_id = $1 AND position = $2`,
              [orchestrationId, stage.position, JSON.stringify(stage.outputs), json(gate)],
            );
            await counts();
            await m.query(`UPDATE control_plane.orchestrations SET stages_completed = $2, updated_at = now() WHERE orchestration_id = $1`, [
              orchestrationId,
              o.stages_completed,
            ]);
            await webhook('orchestration.stage_completed', {
              stage: stage.stage,
              result: {
                stage: stage.stage,
                tasksCompleted: stage.tasksCompleted,
                outputs: stage.outputs,
                gateValidation: { exitGatePassed: gate ? gate.passed : null, outputs: Object.keys(stage.outputs) },
              },
            });
            continue;
          }
          const previous = mergeOutputs(stages.filter((s) => s.position < stage.position).map((s) => s.outputs ?? {}));
          // Tasks are created on behalf of whoever created the orchestration (their key is the tasks' creator).
          const outcome = await this.startReady(m, o.principal ?? principal, o, stage, own, previous);
          if (outcome.started) changed = true;
          if (outcome.failure) {
            await fail(stage, outcome.failure);
            changed = true;
          }
          break;
        }
      }

      if (changed) {
        await counts();
        const eta = o.status === 'running' || o.status === 'paused' ? this.estimate(stages, tasks) : null;
        await m.query(
          `UPDATE control_plane.orchestrations
              SET stages_completed = $2, tasks_completed = $3, estimated_completion_at = $4, updated_at = now()
            WHERE orchestration_id = $1`,
          [orchestrationId, o.stages_completed, o.tasks_completed, eta],
        );
        publish = o.status;
      }
      if (tasks.some((t) => t.status === 'running')) await this.trigger(orchestrationId, m, new Date(Date.now() + WATCHDOG_MS));
    });
    if (publish) await this.published(orchestrationId, publish);
    for (const run of afterCommit) {
      await run().catch((err) => this.logger.info('task of a failed orchestration not cancelled', { err: String(err), orchestrationId }));
    }
  }

  async published(orchestrationId: string, status: OrchestrationStatus): Promise<void> {
    await this.deps.events.publish(UPDATED_TOPIC, { orchestrationId, status }).catch((err) => this.logger.warn('orchestration event not published', { err }));
  }

  /** Copies the state of started, unfinished tasks from the task service into their rows. */
  private async mirrorTasks(m: EntityManager, principal: Principal, tasks: OrchestrationTaskEntity[]): Promise<boolean> {
    let changed = false;
    for (const t of tasks) {
      if (t.status !== 'running' || !t.taskId) continue;
      let task: TaskLike;
      try {
        task = await this.deps.tasks().get(principal, t.taskId);
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
      if (status === 'failed' || status === 'cancelled') t.error = (task.error ?? { code: status, message: `The task was ${status}` }) as Record<string, unknown>;
      const finished = status !== 'running';
      await m.query(
        `UPDATE control_plane.orchestration_tasks
            SET status = $4, progress = $5, result = $6, error = $7, finished_at = CASE WHEN $8 THEN coalesce(finished_at, now()) END
          WHERE orchestration_id = $1 AND stage_position = $2 AND position = $3`,
        [t.orchestrationId, t.stagePosition, t.position, status, progress, json(t.result), json(t.error), finished],
      );
      if (finished) t.finishedAt = new Date();
      changed = true;
    }
    return changed;
  }

  /** Starts the stage's tasks whose wait is over. */
  private async startReady(
    m: EntityManager,
    principal: Principal,
    o: OrchestrationRow,
    stage: OrchestrationStageEntity,
    own: OrchestrationTaskEntity[],
    previous: Record<string, unknown>,
  ): Promise<{ started: boolean; failure?: OrchestrationFailure }> {
    const byKey = new Map(own.map((t) => [t.taskKey, t]));
    let started = false;
    for (const [i, t] of own.entries()) {
      if (t.status !== 'pending') continue;
      const waits = t.dependsOn.some((k) => byKey.get(k)?.status !== 'completed') || (!stage.parallel && i > 0 && own[i - 1]!.status !== 'completed');
      if (waits) continue;
      await m.query('SAVEPOINT start_task');
      let task: TaskLike;
      try {
        task = await this.deps.tasks().create(
          principal,
          {
            agentId: t.agentId,
            taskType: t.taskType,
            context: t.context,
            forge: { stage: stage.stage, validateGates: false, outputs: previous },
            execution: { mode: 'async' },
          },
          { orchestrationId: o.orchestration_id, stage: stage.stage, manager: m },
        );
      } catch (err) {
        await m.query('ROLLBACK TO SAVEPOINT start_task');
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
      await m.query('RELEASE SAVEPOINT start_task');
      t.taskId = task.id;
      t.status = TASK_STATUS[task.status] ?? 'running';
      if (t.status === 'completed') t.result = (task.result ?? {}) as Record<string, unknown>;
      if (t.status === 'failed' || t.status === 'cancelled') t.error = (task.error ?? { code: t.status, message: `The task was ${t.status}` }) as Record<string, unknown>;
      if (t.status === 'pending') t.status = 'running';
      t.progress = t.status === 'completed' ? 100 : 0;
      t.startedAt = new Date();
      await m.query(
        `UPDATE control_plane.orchestration_tasks
            SET task_id = $4, status = $5, progress = $6, result = $7, error = $8, started_at = now(),
                finished_at = CASE WHEN $5 <> 'running' THEN now() END
          WHERE orchestration_id = $1 AND stage_position = $2 AND position = $3`,
        [t.orchestrationId, t.stagePosition, t.position, task.id, t.status, t.progress, json(t.result), json(t.error)],
      );
      started = true;
    }
    return { started };
  }

  /** Seconds left: the stages not completed, a parallel stage as long as its longest task. */
  estimate(stages: OrchestrationStageEntity[], tasks: OrchestrationTaskEntity[]): Date {
    let seconds = 0;
    for (const s of stages) {
      if (s.status === 'completed' || s.status === 'failed' || s.status === 'cancelled') continue;
      const left = tasks
        .filter((t) => t.stagePosition === s.position && (t.status === 'pending' || t.status === 'running'))
        .map((t) => this.deps.taskSeconds(t.agentId, t.taskType) * (t.status === 'running' ? Math.max(0.05, 1 - t.progress / 100) : 1));
      seconds += s.parallel ? Math.max(0, ...left) : left.reduce((a, b) => a + b, 0);
    }
    return new Date(Date.now() + Math.round(seconds * 1000));
  }

  /** The advance job failed for good (a bug or a lasting outage): nothing stays running forever. */
  private async failStuck(orchestrationId: string, error: { code: string; message: string }): Promise<void> {
    const rows = await this.deps.db.query(
      `UPDATE control_plane.orchestrations
          SET status = 'failed', failed_at = now(), estimated_completion_at = NULL, updated_at = now(),
              error = jsonb_build_object('code', 'internal_server_error', 'message', 'The orchestration could not advance', 'details', jsonb_build_object('reason', $2::text))
        WHERE orchestration_id = $1 AND status IN ('running','paused')
        RETURNING orchestration_id`,
      [orchestrationId, `${error.code}: ${error.message}`],
    );
    if (rowsOf(rows).length) await this.published(orchestrationId, 'failed');
  }
}

// ---------------------------------------------------------------------------------------------

/** A task's contribution to its stage's outputs: result.output, plus the files it touched. */
export function taskOutputs(t: { result: Record<string, unknown> | null }): Record<string, unknown> {
  const r = (t.result ?? {}) as { output?: unknown; filesCreated?: unknown; filesModified?: unknown };
  const out: Record<string, unknown> = r.output && typeof r.output === 'object' && !Array.isArray(r.output) ? { ...(r.output as object) } : {};
  if (Array.isArray(r.filesCreated) && r.filesCreated.length) out.filesCreated = r.filesCreated;
  if (Array.isArray(r.filesModified) && r.filesModified.length) out.filesModified = r.filesModified;
  return out;
}

/** Later maps win, except that file lists are concatenated and empty values never hide a value. */
export function mergeOutputs(maps: Record<string, unknown>[]): Record<string, unknown> {
  const merged: Record<string, unknown> = {};
  for (const map of maps) {
    for (const [k, v] of Object.entries(map)) {
      if ((k === 'filesCreated' || k === 'filesModified') && Array.isArray(v)) {
        merged[k] = [...new Set([...((merged[k] as unknown[]) ?? []), ...v])];
      } else if (hasValue(v) || !(k in merged)) merged[k] = v;
    }
  }
  return merged;
}

function gateFailure(gate: GateValidationResult, outputs: Record<string, unknown>): OrchestrationFailure {
  return {
    code: 'forge_gate_failure',
    message: `The exit gate of ${gate.stage} failed: missing ${gate.missingCriteria?.join(', ')}`,
    details: {
      gate: { stage: gate.stage, gateType: gate.gateType },
      // `actual`: what the outputs hold under the criterion's name or its evidence names (empty), else null.
      failed_criteria: (gate.missingCriteria ?? []).map((criterion) => {
        const evidence = gateCriteria(gate.stage as StageName, 'exit').find((k) => k.name === criterion)?.evidence ?? [];
        const actual = [criterion, ...evidence].map((n) => outputs[n]).find((v) => v !== undefined) ?? null;
        return { criterion, required: true, actual };
      }),
      validation: gate,
    },
  };
}

function taskFailure(stage: string, t: OrchestrationTaskEntity): OrchestrationFailure {
  const e = (t.error ?? {}) as { code?: string; message?: string };
  return {
    code: 'agent_execution_failed',
    message: `Task ${t.taskKey} (${t.agentId}) of stage ${stage} ${t.status === 'cancelled' ? 'was cancelled' : `failed: ${e.message ?? 'unknown error'}`}`,
    details: {
      agent_id: t.agentId,
      execution_id: t.taskId,
      reason: e.code ?? t.status,
      retryable: false,
      stage,
      task: t.taskKey,
      error: t.error,
    },
  };
}

function clampPercent(n: unknown): number {
  const v = Number(n);
  return Number.isFinite(v) ? Math.min(100, Math.max(0, v)) : 0;
}

function json(v: unknown): string | null {
  return v === null || v === undefined ? null : JSON.stringify(v);
}

