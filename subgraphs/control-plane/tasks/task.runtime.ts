import type { DataSource } from 'typeorm';
import { withTransaction, type Tx } from '../../../kernel/db/transaction';
import type { SecretCipher } from '../../../kernel/crypto';
import { AppError, isAppError } from '../../../kernel/errors';
import { setOwn } from '../../../kernel/names';
import type { LlmProvider } from '../../../kernel/llm';
import type { Logger } from '../../../kernel/logger';
import type { Operations } from '../../../kernel/operations';
import { JobAbortedError, type JobContext, type Queue } from '../../../kernel/queue';
import type { WebhookSender } from '../../../kernel/webhooks';
import { inSpan } from '../../../kernel/tracing';
import { SpanKind } from '@opentelemetry/api';
import { findAgent, findTaskType, promptIdOf, type AgentSpec, type TaskTypeSpec } from '../agents';
import { validateGate } from '../gates';
import { grouped, inOrderOf } from '../../../kernel/db/grouped';
import {
  taskStore,
  toTaskRecord,
  type TaskCompletion,
  type TaskError,
  type TaskEvent,
  type TaskProgress,
  type TaskRecord,
  type TaskResult,
  type TaskStepWrite,
} from './task.store';
import { buildResult } from './task.results';
import { present, type TaskJobData, type TaskService } from './task.service';
import { JOB } from '../../../kernel/topics';

/**
 * The `control-plane.task` job: one task from queued to its end in published steps (entry gate, render
 * instructions, call the model with the job's signal, store files and result with the job's end).
 * Concurrent tasks' step writes are grouped per kind; a step's row is written only once it has lasted
 * STEP_STORED_AFTER_MS (its event carries it at once, TaskService reads it from there), so a quick task
 * is written twice in all. Artifacts are written only at the end, so a resumed attempt starts over
 * safely; webhooks are stored in the transaction of the state they announce.
 */

const RENDER = /* GraphQL */ `
  query AgentPrompt($promptId: ID!, $variables: JSONObject) {
    renderPrompt(promptId: $promptId, variables: $variables) {
      promptId
      version
      rendered
    }
  }
`;
const VARIABLE = /^[A-Za-z_][A-Za-z0-9_-]*$/;
const NOT_PROVIDED = '(not provided)';
const DEFAULT_TEMPERATURE = 0.2;
const RECONCILE_EVERY_MS = 60_000;
const STALE_AFTER_S = 60;
/** How long a step lasts before its progress is written to the task's row too. */
export const STEP_STORED_AFTER_MS = 1_000;

/** The task left `running` under us (cancelled): stop quietly. */
class TaskStopped extends Error {}

interface RunningRow {
  task: TaskRecord;
  secretEnc: Buffer | null;
}

export interface TaskRuntimeDeps {
  db: DataSource;
  tasks: TaskService;
  operations: Operations;
  llm: LlmProvider;
  webhooks: WebhookSender;
  cipher?: SecretCipher;
  logger: Logger;
}

function valueText(value: unknown): string {
  return typeof value === 'string' ? value : JSON.stringify(value, null, 2);
}

/** Variables of an agent prompt: the task type's inputs (or "(not provided)"), the other context fields, and the task's frame. */
export function promptVariables(agent: AgentSpec, spec: TaskTypeSpec, task: TaskRecord): Record<string, string> {
  const v: Record<string, string> = {};
  for (const [k, val] of Object.entries(task.context)) if (VARIABLE.test(k) && present(val)) setOwn(v, k, valueText(val));
  for (const name of [...spec.required, ...spec.optional]) if (!Object.hasOwn(v, name)) v[name] = NOT_PROVIDED;
  v.context = JSON.stringify(task.context, null, 2);
  v.agentId = agent.agentId;
  v.taskType = spec.taskType;
  v.forgeStage = task.stage ?? task.forge?.stage ?? agent.forgeStage;
  v.previousOutputs = task.forge?.outputs ? JSON.stringify(task.forge.outputs, null, 2) : '(none)';
  v.primaryPath = spec.artifact.path(task.context);
  return v;
}

export class TaskRuntime {
  private reconcileTimer?: NodeJS.Timeout;
  /**
   * The steps every task takes outside a transaction, each kind grouped across the tasks running
   * at the moment into one statement (kernel/db/grouped.ts): a claimed batch is read in one, its
   * tasks' lasting steps and ends go in a few.
   */
  private readonly grouped = {
    starting: grouped(async (ids: readonly string[]) => inOrderOf(ids, await taskStore.starting(this.deps.db, ids), (r) => r.id)),
    stepped: grouped(async (steps: readonly TaskStepWrite[]) => {
      await taskStore.stepped(this.deps.db, steps);
      return steps.map(() => undefined);
    }),
    complete: grouped(async (ends: readonly TaskCompletion[]) =>
      inOrderOf(
        ends.map((e) => e.taskId),
        await taskStore.complete(this.deps.db, ends),
        (r) => r.id,
      ),
    ),
  };

  constructor(private readonly deps: TaskRuntimeDeps) {}

  register(queue: Queue): void {
    queue.register(JOB.task, (job) => this.run(job), {
      onFinalFailure: async (job, error) => {
        const data = job.data as TaskJobData;
        const timedOut = error.code === 'timeout';
        await this.fail(data.taskId, {
          code: timedOut ? 'TASK_TIMEOUT' : 'agent_execution_failed',
          message: timedOut ? 'The task exceeded its execution timeout' : `The task's job failed: ${error.message}`,
          details: timedOut ? {} : { reason: error.code, retryable: false },
        });
      },
    });
  }

  // ---- the job ------------------------------------------------------------------------------

  async run(job: JobContext<TaskJobData>): Promise<unknown> {
    const { taskId } = job.data;
    const running = await this.markRunning(taskId, job.data.notifyStart);
    if (!running) return { skipped: 'not runnable' };
    const { task } = running;
    const agent = findAgent(task.agentId);
    const spec = agent && findTaskType(agent, task.taskType);
    if (!agent || !spec) {
      await this.fail(
        taskId,
        { code: 'agent_execution_failed', message: `${task.agentId}/${task.taskType} is no longer in the agent catalogue`, details: { retryable: false } },
        task.startedAt,
      );
      return { failed: 'unknown agent' };
    }
    const deadline = task.startedAt!.getTime() + task.timeoutSeconds * 1000;
    const controller = new AbortController();
    const onAbort = () => controller.abort(job.signal.reason);
    job.signal.addEventListener('abort', onAbort, { once: true });
    const timer = setTimeout(
      () => controller.abort(new JobAbortedError('timeout', `Task exceeded its timeout of ${task.timeoutSeconds} s`)),
      Math.max(0, deadline - Date.now()),
    );
    try {
      // The agent's run as a GenAI `invoke_agent` span, its prompt rendering and model calls under it.
      const attributes = {
        'gen_ai.operation.name': 'invoke_agent',
        'gen_ai.agent.id': agent.agentId,
        'gen_ai.agent.name': agent.name,
        'platform.task.id': taskId,
        'platform.task.type': task.taskType,
        ...(task.orchestrationId && { 'orchestration.id': task.orchestrationId }),
      };
      await inSpan(`invoke_agent ${agent.agentId}`, { kind: SpanKind.INTERNAL, attributes }, () =>
        this.steps(task, agent, spec, running.secretEnc, controller.signal, deadline, job),
      );
      return { completed: true };
    } catch (err) {
      const reason = controller.signal.aborted ? controller.signal.reason : null;
      if (err instanceof TaskStopped) return { stopped: true };
      if (reason instanceof JobAbortedError) {
        // A stopping or lost worker hands the task on: the next attempt resumes it.
        if (reason.code === 'shutdown' || reason.code === 'worker_lost') throw reason;
        if (reason.code === 'cancelled') {
          await this.cancelled(taskId, reason.message, task.startedAt);
          return { cancelled: true };
        }
        await this.fail(taskId, this.timeoutError(task), task.startedAt);
        return { failed: 'TASK_TIMEOUT' };
      }
      if (isAppError(err) && err.code === 'timeout' && Date.now() >= deadline - 100) {
        await this.fail(taskId, this.timeoutError(task), task.startedAt);
        return { failed: 'TASK_TIMEOUT' };
      }
      await this.fail(taskId, describe(err, task), task.startedAt);
      return { failed: isAppError(err) ? err.code : 'agent_execution_failed' };
    } finally {
      clearTimeout(timer);
      job.signal.removeEventListener('abort', onAbort);
    }
  }

  private timeoutError(task: TaskRecord): TaskError {
    const elapsedMs = Date.now() - task.startedAt!.getTime();
    return {
      code: 'TASK_TIMEOUT',
      message: `The task exceeded its execution timeout of ${task.timeoutSeconds} s`,
      details: { timeout: task.timeoutSeconds, timeout_ms: task.timeoutSeconds * 1000, elapsed_ms: elapsedMs },
    };
  }

  private async steps(
    task: TaskRecord,
    agent: AgentSpec,
    spec: TaskTypeSpec,
    secretEnc: Buffer | null,
    signal: AbortSignal,
    deadline: number,
    job: JobContext<TaskJobData>,
  ): Promise<void> {
    const gate = task.forge?.validateGates === true;
    const names = stepNames(task);
    let done = 0;
    // The start (step 0) is written like any step that lasts.
    let storing = setTimeout(() => void this.storeStep(task, task.progress!), STEP_STORED_AFTER_MS);
    const advance = async (detail?: string) => {
      signal.throwIfAborted();
      const progress = progressOf(names, ++done, detail);
      clearTimeout(storing);
      storing = setTimeout(() => void this.storeStep(task, progress), STEP_STORED_AFTER_MS);
      await this.deps.tasks.publish({
        id: task.id,
        status: 'running',
        orchestrationId: task.orchestrationId,
        agentId: task.agentId,
        progress,
        startedAt: task.startedAt,
      });
    };
    try {
      if (gate) {
        const stage = task.forge!.stage!;
        const result = validateGate(stage, 'entry', task.forge!.outputs ?? {});
        if (!result.passed) {
          await this.fail(
            task.id,
            {
              code: 'GATE_VALIDATION_FAILED',
              message: `The entry gate of ${stage} is not met: missing ${result.missingCriteria!.join(', ')}`,
              details: { stage, gateType: 'entry', missingOutputs: result.missingCriteria, criteria: result.criteria, validatedAt: result.validatedAt },
            },
            task.startedAt,
          );
          throw new TaskStopped();
        }
        await advance();
      }

      const promptId = promptIdOf(agent.agentId, spec.taskType);
      const rendering = await this.deps.operations.execute<{ renderPrompt: { promptId: string; version: number; rendered: string } }>(RENDER, {
        promptId,
        variables: promptVariables(agent, spec, task),
      });
      const { rendered, version } = rendering.renderPrompt;
      const cfg = task.modelConfig ?? {};
      const model = this.deps.llm.resolveModel(cfg.model);
      await advance(`calling the model (${model})`);

      const completion = await this.deps.llm.complete({
        model,
        messages: [{ role: 'user', content: rendered }],
        temperature: cfg.temperature ?? DEFAULT_TEMPERATURE,
        maxTokens: cfg.maxTokens,
        signal,
        timeoutMs: Math.max(1000, deadline - Date.now()),
      });

      // Storing the result is the completion statement below, in memory until then: the completed
      // event is that step's event (a progress write of its own would be overwritten at once).
      signal.throwIfAborted();
      const built = buildResult(agent, spec, task.context, completion.output);
      const result: TaskResult = {
        output: built.output,
        filesCreated: built.filesCreated,
        filesModified: built.filesModified,
        linesWritten: built.linesWritten,
        model: completion.model,
        tokensUsed: completion.tokens.total,
        promptId,
        promptVersion: version,
      };
      const wantsWebhook = !!task.webhookUrl && task.webhookEvents?.includes('task.completed');
      const jobEnd = job.completion();
      const end: TaskCompletion = {
        taskId: task.id,
        result,
        progress: progressOf(names, names.length),
        files: built.files,
        job: jobEnd,
        startedAt: task.startedAt!,
      };
      // The result, its files and the job's end in one statement (one commit), grouped with the
      // other tasks' ends of the moment; in a transaction of its own when a webhook delivery is
      // stored with it.
      const row = wantsWebhook
        ? await withTransaction(this.deps.db, async (tx) => {
            const [done] = await taskStore.complete(tx.manager, [end]);
            if (done)
              await this.notify(tx, { id: done.id, agentId: done.agent_id, webhookUrl: done.webhook_url }, 'task.completed', secretEnc, {
                ...result,
                duration: seconds(done.duration_ms),
              });
            return done;
          })
        : await this.grouped.complete(end);
      if (!row) throw new TaskStopped();
      jobEnd.done(); // committed: the job ended with the task
      await this.deps.tasks.publish({
        id: row.id,
        status: row.status,
        orchestrationId: row.orchestration_id,
        agentId: row.agent_id,
        version: Number(row.version),
      });
    } finally {
      clearTimeout(storing);
    }
  }

  // ---- state changes ------------------------------------------------------------------------

  /**
   * queued (or running, for a resumed attempt) -> running, announced; null when the task is not
   * runnable. The start is written with the task's first lasting step or its end, except when a
   * task.started webhook is stored with it.
   */
  private async markRunning(taskId: string, notifyStart: boolean): Promise<RunningRow | null> {
    const running = notifyStart ? await withTransaction(this.deps.db, (tx) => this.startNotifying(tx, taskId)) : await this.start(taskId);
    if (!running) return null;
    // A resumed task whose deadline passed while no worker held it ends here.
    if (Date.now() > running.task.startedAt!.getTime() + running.task.timeoutSeconds * 1000) {
      await this.fail(taskId, this.timeoutError(running.task), running.task.startedAt);
      return null;
    }
    await this.deps.tasks.publish(running.task);
    return running;
  }

  /** The task as it starts, read, not written (taskStore.starting). */
  private async start(taskId: string): Promise<RunningRow | null> {
    const row = await this.grouped.starting(taskId);
    if (!row) return null;
    const read = toTaskRecord(row);
    const task: TaskRecord = { ...read, status: 'running', startedAt: row.start, progress: progressOf(stepNames(read), 0) };
    return { task, secretEnc: row.webhook_secret_enc };
  }

  /** The start written at once, in `tx` with the task.started webhook it announces. */
  private async startNotifying(tx: Tx, taskId: string): Promise<RunningRow | null> {
    const [row] = await taskStore.markRunning(tx.manager, [taskId]);
    if (!row) return null;
    const task = toTaskRecord(row);
    if (row.previous === 'queued' && task.webhookEvents?.includes('task.started')) {
      await this.notify(tx, task, 'task.started', row.webhook_secret_enc, {
        status: 'running',
        startedAt: task.startedAt,
        estimatedDuration: task.estimatedDuration,
      });
    }
    return { task, secretEnc: row.webhook_secret_enc };
  }

  /** A step that has lasted (the start among them), into the row (a task no longer running is left alone). */
  private async storeStep(task: TaskRecord, progress: TaskProgress): Promise<void> {
    await this.grouped
      .stepped({ taskId: task.id, progress, startedAt: task.startedAt! })
      .catch((err) => this.deps.logger.warn('task progress not stored', { err, taskId: task.id }));
  }

  /**
   * Ends an unfinished task as failed (and sends task.failed); a finished task is left alone.
   * `startedAt`: the run's start, written here if it was not yet.
   */
  async fail(taskId: string, error: TaskError, startedAt: Date | null = null): Promise<void> {
    const task = await withTransaction(this.deps.db, async (tx) => {
      const row = await taskStore.fail(tx.manager, taskId, error, startedAt);
      if (!row) return null;
      const failed = toTaskRecord(row);
      if (failed.webhookUrl && failed.webhookEvents?.includes('task.failed')) {
        await this.notify(tx, failed, 'task.failed', row.webhook_secret_enc, { status: 'failed', error, duration: seconds(failed.durationMs) });
      }
      return failed;
    });
    if (task) await this.deps.tasks.publish(task);
  }

  /** The job was cancelled without the task (the queue's own cancel): the task follows. */
  private async cancelled(taskId: string, reason: string, startedAt: Date | null): Promise<void> {
    const row = await taskStore.jobCancelled(this.deps.db, taskId, reason, startedAt);
    if (row) await this.deps.tasks.publish(toTaskRecord(row));
  }

  /** Stores the delivery in `tx` (outside the rare statement without one: in its own). */
  private async notify(
    tx: Tx | undefined,
    task: Pick<TaskRecord, 'id' | 'agentId' | 'webhookUrl'>,
    event: TaskEvent,
    secretEnc: Buffer | null,
    result: Record<string, unknown>,
  ): Promise<void> {
    let secret: string | undefined;
    if (secretEnc && this.deps.cipher) {
      try {
        secret = this.deps.cipher.decrypt(secretEnc, task.id);
      } catch (err) {
        // The platform secret changed: sending unsigned would look forged, so do not send.
        this.deps.logger.error('task webhook secret unreadable; event not sent', { err, taskId: task.id, event });
        return;
      }
    }
    await this.deps.webhooks.send(
      {
        url: task.webhookUrl!,
        secret,
        event,
        payload: { event, taskId: task.id, agentId: task.agentId, timestamp: new Date().toISOString(), result },
        source: { service: 'control-plane', resourceType: 'task', resourceId: task.id },
      },
      tx,
    );
  }

  // ---- recovery -----------------------------------------------------------------------------

  /**
   * Unfinished tasks whose job has ended without finishing them (a job failed by a sweep in a
   * process without this handler, a lost row) are failed, so nothing stays running forever.
   */
  async reconcile(queue: Queue): Promise<number> {
    const rows = await taskStore.stale(this.deps.db, STALE_AFTER_S);
    let failed = 0;
    for (const r of rows) {
      const job = r.job_id ? await queue.get(r.job_id) : null;
      if (job && (job.state === 'queued' || job.state === 'running')) continue;
      failed++;
      await this.fail(r.id, {
        code: 'agent_execution_failed',
        message: 'The task’s job ended without finishing the task',
        details: { reason: job?.lastError ?? 'job missing', jobState: job?.state ?? null, retryable: false },
      });
    }
    return failed;
  }

  startReconciling(queue: Queue): void {
    if (this.reconcileTimer) return;
    const tick = () => void this.reconcile(queue).catch((err) => this.deps.logger.warn('task reconcile failed', { err }));
    this.reconcileTimer = setInterval(tick, RECONCILE_EVERY_MS);
    this.reconcileTimer.unref();
    tick();
  }

  stopReconciling(): void {
    clearInterval(this.reconcileTimer);
    this.reconcileTimer = undefined;
  }
}

/** The steps a task takes (its progress counts them). */
function stepNames(task: TaskRecord): string[] {
  const gate = task.forge?.validateGates === true;
  return [...(gate ? ['validating the entry gate'] : []), 'rendering instructions', 'calling the model', 'storing the result'];
}

function progressOf(names: string[], done: number, detail?: string): TaskProgress {
  return {
    percentage: Math.round((done / names.length) * 100),
    currentStep: done >= names.length ? 'completed' : (detail ?? names[done]!),
    stepsCompleted: done,
    stepsTotal: names.length,
  };
}

function seconds(ms: number | null): number | null {
  return ms === null ? null : Math.round(ms) / 1000;
}

function describe(err: unknown, task: TaskRecord): TaskError {
  if (err instanceof AppError) return { code: err.code, message: err.message, details: err.details ?? {} };
  const message = err instanceof Error ? err.message : String(err);
  return {
    code: 'agent_execution_failed',
    message: `The agent failed: ${message}`,
    details: { agent_id: task.agentId, execution_id: task.id, reason: message, retryable: false },
  };
}
