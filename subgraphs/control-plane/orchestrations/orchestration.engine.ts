import type { DataSource } from 'typeorm';
import { withTransaction, type Tx } from '../../../kernel/db/transaction';
import type { SecretCipher } from '../../../kernel/crypto';
import type { EventBus } from '../../../kernel/events';
import type { Clock } from '../../../kernel/clock';
import type { Logger } from '../../../kernel/logger';
import type { Queue } from '../../../kernel/queue';
import type { WebhookSender } from '../../../kernel/webhooks';
import { validateGate, type GateValidationResult } from '../gates';
import { orchestrationEngineStore } from './orchestration.engine.store';
import {
  type OrchestrationFailure,
  type OrchestrationOutcome,
  type OrchestrationStatus,
  type OrchestrationTaskRecord,
  type StageRecord,
} from './orchestration.store';
import { gateFailure, mergeOutputs, taskFailure, taskOutputs } from './orchestration.outcome';
import { json, orchestrationPrincipal, OrchestrationTasks, type TaskPort } from './orchestration.tasks';
import { JOB, TOPIC } from '../../../kernel/topics';
import { contextOf, recordSpan } from '../../../kernel/tracing';

/**
 * The orchestration state machine. State lives only in the orchestration tables; `advance` reads it
 * under the orchestration's row lock, mirrors its tasks, and moves as far as it can (stage to running,
 * start tasks whose wait is over, merge outputs and check the exit gate, fail on a failed task).
 * `advance` is idempotent and runs as the `control-plane.orchestration.advance` job keyed per
 * orchestration, so triggers (create, resume, task events, a watchdog, start-up) coalesce and a
 * restart resumes where the rows say. Mirroring: orchestration.tasks.ts; outcomes: orchestration.outcome.ts.
 */

const WATCHDOG_MS = 15_000;
/** Seconds a task is assumed to take when the agent catalogue gives no average. */
export const DEFAULT_TASK_SECONDS = 60;

export class OrchestrationEngine {
  private readonly logger: Logger;
  private off?: () => void;
  private readonly tasks: OrchestrationTasks;

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
      /** When the watchdog is due (kernel/clock.ts). */
      clock: Clock;
    },
  ) {
    this.logger = deps.logger.child({ component: 'orchestration-engine' });
    this.tasks = new OrchestrationTasks(deps.tasks);
  }

  register(): void {
    this.deps.queue.register(JOB.orchestrationAdvance, (job) => this.advance(job.data.orchestrationId), {
      onFinalFailure: (job, error) => this.failStuck((job.data as { orchestrationId: string }).orchestrationId, error),
    });
  }

  /** Listens to task events and resumes every unfinished orchestration (the service's start hook). */
  async start(): Promise<void> {
    this.off?.();
    this.off = this.deps.events.subscribe(TOPIC.taskUpdated, (p: { orchestrationId?: string | null } | undefined) => {
      if (p?.orchestrationId) {
        this.trigger(p.orchestrationId).catch((err) => this.logger.warn('orchestration trigger failed', { err, orchestrationId: p.orchestrationId }));
      }
    });
    const rows = await orchestrationEngineStore.unfinished(this.deps.db);
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
  async trigger(orchestrationId: string, tx?: Tx, runAt?: Date): Promise<void> {
    const data = { orchestrationId };
    const opts = { maxAttempts: 5, backoffMs: 500, timeoutMs: 120_000 };
    if (runAt) {
      await this.deps.queue.enqueue(JOB.orchestrationAdvance, data, { ...opts, runAt, key: `${JOB.orchestrationAdvance}:watch:${orchestrationId}` }, tx);
      return;
    }
    const id = await this.deps.queue.enqueue(JOB.orchestrationAdvance, data, { ...opts, key: `${JOB.orchestrationAdvance}:${orchestrationId}` }, tx);
    const job = await this.deps.queue.get(id);
    if (job && job.state !== 'queued') await this.deps.queue.enqueue(JOB.orchestrationAdvance, data, opts, tx);
  }

  /** One step of the state machine (see the file comment). Idempotent. */
  async advance(orchestrationId: string): Promise<void> {
    const afterCommit: (() => Promise<unknown>)[] = [];
    await withTransaction(this.deps.db, async (tx) => {
      const m = tx.manager;
      const o = await orchestrationEngineStore.lockForAdvance(m, orchestrationId);
      if (!o) return;
      const principal = orchestrationPrincipal(orchestrationId);
      const stages = await orchestrationEngineStore.stages(m, orchestrationId);
      const tasks = await orchestrationEngineStore.tasks(m, orchestrationId);
      let changed = await this.tasks.mirror(m, principal, tasks);

      const counts = async () => {
        for (const s of stages) {
          const done = tasks.filter((t) => t.stagePosition === s.position && t.status === 'completed').length;
          if (done !== s.tasksCompleted) {
            s.tasksCompleted = done;
            await orchestrationEngineStore.setStageTasksCompleted(m, orchestrationId, s.position, done);
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
          tx,
        );
      };
      // Each stage ended is a span from its start to now, under the request that created the orchestration.
      const stageSpan = (stage: StageRecord, failed?: OrchestrationFailure) =>
        recordSpan(
          `orchestration stage ${stage.stage}`,
          {
            startTime: stage.startedAt ?? new Date(),
            attributes: {
              'orchestration.id': orchestrationId,
              'orchestration.name': o.name,
              'orchestration.stage': stage.stage,
              'orchestration.stage.position': stage.position,
              'orchestration.stage.status': stage.status,
              'orchestration.stage.tasks': stage.tasksTotal,
              ...(stage.gateResult && { 'orchestration.stage.gate_passed': stage.gateResult.passed }),
            },
            failed: failed && `${failed.code}: ${failed.message}`,
          },
          o.trace_parent ? contextOf(o.trace_parent) : undefined,
        );
      const fail = async (stage: StageRecord, error: OrchestrationFailure) => {
        stage.status = 'failed';
        stageSpan(stage, error);
        await orchestrationEngineStore.failStage(m, orchestrationId, stage.position, json(stage.outputs), json(stage.gateResult));
        o.status = 'failed';
        await orchestrationEngineStore.fail(m, orchestrationId, JSON.stringify(error));
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
            await orchestrationEngineStore.complete(m, orchestrationId, JSON.stringify(result), o.stages_completed, o.tasks_completed);
            o.status = 'completed';
            await webhook('orchestration.completed', { result });
            changed = true;
            break;
          }
          if (stage.status === 'pending') {
            stage.status = 'running';
            await orchestrationEngineStore.startStage(m, orchestrationId, stage.position);
            await orchestrationEngineStore.setCurrentStage(m, orchestrationId, stage.stage);
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
            await orchestrationEngineStore.completeStage(m, orchestrationId, stage.position, JSON.stringify(stage.outputs), json(gate));
            stageSpan(stage);
            await counts();
            await orchestrationEngineStore.setStagesCompleted(m, orchestrationId, o.stages_completed);
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
          const outcome = await this.tasks.startReady(tx, o.principal ?? principal, o.orchestration_id, stage, own, previous);
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
        await orchestrationEngineStore.setCounts(m, orchestrationId, o.stages_completed, o.tasks_completed, eta);
        const status = o.status;
        tx.afterCommit(() => this.published(orchestrationId, status));
      }
      if (tasks.some((t) => t.status === 'running')) await this.trigger(orchestrationId, tx, new Date(this.deps.clock.now().getTime() + WATCHDOG_MS));
    });
    for (const run of afterCommit) {
      await run().catch((err) => this.logger.info('task of a failed orchestration not cancelled', { err: String(err), orchestrationId }));
    }
  }

  async published(orchestrationId: string, status: OrchestrationStatus): Promise<void> {
    await this.deps.events
      .publish(TOPIC.orchestrationUpdated, { orchestrationId, status })
      .catch((err) => this.logger.warn('orchestration event not published', { err }));
  }

  /** Seconds left: the stages not completed, a parallel stage as long as its longest task. */
  estimate(stages: StageRecord[], tasks: OrchestrationTaskRecord[]): Date {
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
    if (await orchestrationEngineStore.failStuck(this.deps.db, orchestrationId, `${error.code}: ${error.message}`))
      await this.published(orchestrationId, 'failed');
  }
}
