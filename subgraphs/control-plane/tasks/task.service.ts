import { windowProblems } from '../../../kernel/db/page';
import { randomUUID } from 'node:crypto';
import type { DataSource } from 'typeorm';
import type { Queryable } from '../../../kernel/db/rows';
import type { Principal } from '../../../kernel/auth/principal';
import { realClock, type Clock } from '../../../kernel/clock';
import type { SecretCipher } from '../../../kernel/crypto';
import { AppError, errors, type FieldError } from '../../../kernel/errors';
import type { EventBus } from '../../../kernel/events';
import type { LlmProvider } from '../../../kernel/llm';
import type { Logger } from '../../../kernel/logger';
import { validateCallbackUrl, type OutboundPolicy } from '../../../kernel/outbound';
import type { Queue } from '../../../kernel/queue';
import { carriedBeside, withTransaction, type Tx } from '../../../kernel/db/transaction';
import { auditResource } from '../../../kernel/audit';
import { grouped } from '../../../kernel/db/grouped';
import { TIER_LIMITS } from '../../../kernel/rate-limit';
import { currentTraceId } from '../../../kernel/tracing';
import { findAgent, findTaskType, type AgentSpec, type TaskTypeSpec } from '../agents';
import { STAGES } from '../gates';
import {
  FINISHED_STATUSES,
  TASK_EVENTS,
  TASK_MODES,
  TASK_PRIORITIES,
  TASK_SORTS,
  TASK_STATUSES,
  taskStore,
  toArtifact,
  toTaskRecord,
  type NewTask,
  type TaskArtifactRecord,
  type TaskEvent,
  type TaskForge,
  type TaskModelConfig,
  type TaskMode,
  type TaskPriority,
  type TaskProgress,
  type TaskRecord,
  type TaskStatus,
} from './task.store';
import { UUID } from '../../../kernel/ids';
import { defineLoader, groupedByKey, type LoaderDefinition } from '../../../kernel/loaders';
import { JOB, TOPIC, type Jobs, type Topics } from '../../../kernel/topics';

/**
 * Agent tasks: validation, creation (row and durable job in one transaction), reads, list, cancel and
 * sync waiting; task.runtime.ts runs them. Everything is validated before anything is stored.
 * Orchestration tasks do not count toward a key's concurrent limit. The runtime stores short steps
 * (the start among them) only in their `taskUpdated` event, so reads of a running task take the later
 * of the row's step and the last event's, and a row not yet written running reads as running (`steps`).
 */

/** The documented limit: agent executions one worker process runs at once. */
export const AGENT_CONCURRENCY = 50;
export const DEFAULT_TIMEOUT_SECONDS = 300;
/** The synchronous request maximum. */
export const SYNC_MAX_SECONDS = 300;
const MAX_CONTEXT_BYTES = 512 * 1024;
const ESTIMATE_TTL_MS = 5_000;
/** Running tasks whose announced step is kept: far more than the workers of a deployment run at once. */
const MAX_STEPS = 10_000;

export interface ExecuteTaskInput {
  agentId: string;
  taskType: string;
  context: Record<string, unknown>;
  forge?: { stage?: string; validateGates?: boolean; outputs?: Record<string, unknown> } | null;
  execution?: { mode?: TaskMode; timeout?: number; priority?: TaskPriority } | null;
  webhook?: { url: string; events?: string[] | null; secret?: string | null } | null;
  /** Model settings (the alternate layout's `config`). */
  config?: TaskModelConfig | null;
}

export interface TaskOrigin {
  orchestrationId: string;
  stage: string;
  /** Create inside the caller's transaction: the workers are woken and the task announced after its COMMIT. */
  tx?: Tx;
}

/** The topic's payload (kernel/topics.ts), with this service's status type. */
export type TaskUpdatedEvent = Omit<Topics[typeof TOPIC.taskUpdated], 'status'> & { status: TaskStatus };

export interface TaskListFilter {
  agentId?: string | null;
  status?: string | null;
  taskType?: string | null;
  orchestrationId?: string | null;
  limit?: number | null;
  offset?: number | null;
  sortBy?: string | null;
  sortOrder?: string | null;
}

/** The job's data: the task, and whether task.started must be delivered with the move to running. */
export type TaskJobData = Jobs[typeof JOB.task];

export interface TaskServiceDeps {
  db: DataSource;
  events: EventBus;
  /** Enqueues and cancels task jobs (any Queue instance reaches the same table). */
  queue: Queue;
  llm: LlmProvider;
  webhookPolicy: OutboundPolicy;
  /** Encrypts webhook secrets at rest; absent where nothing runs (schema emission). */
  cipher?: SecretCipher;
  logger: Logger;
  /** How long a sync request waits is counted on it (kernel/clock.ts); the wall clock when absent. */
  clock?: Clock;
}

interface Validated {
  agent: AgentSpec;
  spec: TaskTypeSpec;
  context: Record<string, unknown>;
  forge: TaskForge | null;
  mode: TaskMode;
  timeout: number;
  priority: TaskPriority;
  webhook: { url: string; events: TaskEvent[]; secret: string | null } | null;
  config: TaskModelConfig | null;
}

const isObject = (v: unknown): v is Record<string, unknown> => v !== null && typeof v === 'object' && !Array.isArray(v);

/** A context value that counts as given: not undefined or null, not a blank string, not an empty array. */
export function present(value: unknown): boolean {
  if (value === undefined || value === null) return false;
  if (typeof value === 'string') return value.trim().length > 0;
  if (Array.isArray(value)) return value.length > 0;
  return true;
}

export class TaskService {
  private readonly estimates = new Map<string, { seconds: number; at: number }>();
  private readonly waiters = new Map<string, Set<(e: TaskUpdatedEvent) => void>>();
  /** The step and start each running task last announced (its events, from any process), until it ends. */
  private readonly steps = new Map<string, { progress: TaskProgress; startedAt?: string }>();

  constructor(private readonly deps: TaskServiceDeps) {
    deps.events.subscribe(TOPIC.taskUpdated, (e) => {
      // The kernel's registry types a status as a string; this topic only carries this service's TaskStatus.
      const event = e as TaskUpdatedEvent;
      this.noteStep(event);
      for (const wake of this.waiters.get(event.taskId) ?? []) wake(event);
    });
  }

  // ---- create -------------------------------------------------------------------------------

  /**
   * Validates and creates a task (+ its queue job in the same statement). `origin` tasks skip the
   * per-key limit; with `origin.tx` the task is created in the caller's transaction. Either way the
   * workers are woken and the queued state published once the task's transaction has committed.
   */
  async create(principal: Principal, input: ExecuteTaskInput, origin?: TaskOrigin): Promise<TaskRecord> {
    const v = this.validate(input, origin);
    const estimatedDuration = await this.estimate(v.agent.agentId, v.spec);
    const id = randomUUID();
    auditResource('Task', id);
    const limit = principal.kind === 'apiKey' && !origin ? TIER_LIMITS[principal.tier].concurrentExecutions : null;
    const data: TaskJobData = { taskId: id, notifyStart: !!v.webhook?.events.includes('task.started') };
    const row: NewTask = {
      id,
      agent_id: v.agent.agentId,
      task_type: v.spec.taskType,
      priority: v.priority,
      mode: v.mode,
      timeout_seconds: v.timeout,
      context: v.context,
      forge: v.forge,
      model_config: v.config,
      webhook_url: v.webhook?.url ?? null,
      webhook_events: v.webhook?.events ?? null,
      webhook_secret_enc: v.webhook?.secret ? this.cipherOrFail().encrypt(v.webhook.secret, id) : null,
      created_by_key: principal.kind === 'apiKey' ? principal.keyId : null,
      orchestration_id: origin?.orchestrationId ?? null,
      stage: origin?.stage ?? null,
      estimated_duration: estimatedDuration,
      trace_id: currentTraceId() ?? null,
      limit,
      // A second attempt only ever runs after a lost worker; it resumes within the same deadline.
      job: this.deps.queue.jobSpec(JOB.task, data, { priority: v.priority, timeoutMs: v.timeout * 1000, maxAttempts: 2, key: `${JOB.task}:${id}` }),
    };
    // One statement: in the caller's transaction, or grouped with the other creations of the
    // moment (their own transaction, no BEGIN/COMMIT round trips).
    const tx = origin?.tx;
    const created = tx ? (await taskStore.insertQueued(tx.manager, [row]))[0]! : await this.insert(row);
    if (!created.task) {
      if (limit === null || principal.kind !== 'apiKey') throw errors.conflict(`Could not enqueue the job of task ${id}`);
      throw new AppError('RATE_LIMIT_EXCEEDED', `At most ${limit} tasks of this key may be queued or running at once`, {
        limit,
        window: 'concurrent',
        retryAfter: Math.max(1, Math.ceil(estimatedDuration)),
        tier: principal.tier,
        active: created.activeBefore ?? limit,
      });
    }
    const task = toTaskRecord(created.task);
    if (tx)
      tx.afterCommit(async () => {
        await this.deps.queue.added(JOB.task);
        await this.publish(task);
      });
    else await this.publish(task);
    return task;
  }

  /** Creations outside a caller's transaction, grouped into one statement (kernel/db/grouped.ts); the workers are woken once per statement. */
  private readonly insert = grouped(async (tasks: readonly NewTask[], carried) => {
    // The callers' audit entries commit with their tasks: in the same statement where they can,
    // else in one transaction for the group, and nowhere when no caller carries one (the
    // platform's own creations).
    const beside = carriedBeside(carried);
    const created = beside
      ? await beside.writing(
          () => taskStore.insertQueued(this.deps.db, tasks, beside),
          (rows) => (i) => rows[i]?.task != null,
        )
      : carried.some(Boolean)
        ? await withTransaction(this.deps.db, async (tx) => {
            const rows = await taskStore.insertQueued(tx.manager, tasks);
            await tx.carry(carried.filter((_, i) => rows[i]?.task));
            return rows;
          })
        : await taskStore.insertQueued(this.deps.db, tasks);
    if (created.some((c) => c.task)) await this.deps.queue.added(JOB.task);
    return created;
  });

  /** create, then in sync mode wait for the end (at most min(timeout + 5, 300) s; then the task as it is). */
  async execute(principal: Principal, input: ExecuteTaskInput): Promise<TaskRecord> {
    const task = await this.create(principal, input);
    if (task.mode !== 'sync') return task;
    return this.waitForEnd(task.id, Math.min(task.timeoutSeconds + 5, SYNC_MAX_SECONDS) * 1000);
  }

  private validate(input: ExecuteTaskInput, origin?: TaskOrigin): Validated {
    const problems: FieldError[] = [];
    const add = (field: string, message: string) => problems.push({ field, message });
    if (!isObject(input)) throw errors.field('input', 'must be an object');
    if (typeof input.agentId !== 'string' || !input.agentId) add('agentId', 'is required');
    if (typeof input.taskType !== 'string' || !input.taskType) add('taskType', 'is required');
    if (!isObject(input.context)) add('context', 'must be an object');
    else if (Buffer.byteLength(JSON.stringify(input.context)) > MAX_CONTEXT_BYTES) add('context', `must be at most ${MAX_CONTEXT_BYTES / 1024} KB as JSON`);

    let forge: TaskForge | null = null;
    if (input.forge !== undefined && input.forge !== null) {
      if (!isObject(input.forge)) add('forge', 'must be an object');
      else {
        const f = input.forge;
        if (f.stage !== undefined && f.stage !== null && !(STAGES as readonly string[]).includes(f.stage))
          add('forge.stage', `must be one of ${STAGES.join(', ')}`);
        if (f.validateGates !== undefined && f.validateGates !== null && typeof f.validateGates !== 'boolean') add('forge.validateGates', 'must be a boolean');
        if (f.outputs !== undefined && f.outputs !== null && !isObject(f.outputs)) add('forge.outputs', 'must be an object');
        if (f.validateGates === true && !f.stage) add('forge.stage', 'is required when forge.validateGates is true');
        forge = {
          ...(f.stage ? { stage: f.stage } : {}),
          validateGates: f.validateGates === true,
          ...(isObject(f.outputs) ? { outputs: f.outputs } : {}),
        };
      }
    }
    if (origin && !(STAGES as readonly string[]).includes(origin.stage)) add('stage', `must be one of ${STAGES.join(', ')}`);

    const ex = input.execution ?? {};
    if (!isObject(ex)) add('execution', 'must be an object');
    const mode = (ex.mode ?? 'async') as TaskMode;
    if (!TASK_MODES.includes(mode)) add('execution.mode', `must be one of ${TASK_MODES.join(', ')}`);
    const timeout = ex.timeout ?? DEFAULT_TIMEOUT_SECONDS;
    if (!Number.isInteger(timeout) || timeout < 5 || timeout > 3600) add('execution.timeout', 'must be an integer number of seconds from 5 to 3600');
    const priority = (ex.priority ?? 'normal') as TaskPriority;
    if (!TASK_PRIORITIES.includes(priority)) add('execution.priority', `must be one of ${TASK_PRIORITIES.join(', ')}`);

    let webhook: Validated['webhook'] = null;
    if (input.webhook !== undefined && input.webhook !== null) {
      const w = input.webhook;
      if (!isObject(w)) add('webhook', 'must be an object');
      else {
        if (typeof w.url !== 'string' || !w.url) add('webhook.url', 'is required');
        const events = w.events ?? [...TASK_EVENTS];
        if (!Array.isArray(events) || events.length === 0 || events.some((e) => !(TASK_EVENTS as readonly string[]).includes(e))) {
          add('webhook.events', `must be a non-empty list of ${TASK_EVENTS.join(', ')}`);
        }
        if (w.secret !== undefined && w.secret !== null && (typeof w.secret !== 'string' || w.secret.length < 1 || w.secret.length > 500)) {
          add('webhook.secret', 'must be a string of 1 to 500 characters');
        }
        webhook = { url: w.url, events: [...new Set(events as TaskEvent[])], secret: w.secret || null };
      }
    }
    if (problems.length) throw errors.validation(problems);

    const config = this.checkConfig(input.config);
    const agent = findAgent(input.agentId);
    if (!agent) throw new AppError('AGENT_NOT_FOUND', `Agent ${input.agentId} not found`, { agentId: input.agentId });
    const spec = findTaskType(agent, input.taskType);
    if (!spec) {
      throw new AppError('INVALID_TASK_TYPE', `Agent ${agent.agentId} does not support the task type ${input.taskType}`, {
        agentId: agent.agentId,
        taskType: input.taskType,
        supportedTaskTypes: agent.taskTypes.map((t) => t.taskType),
      });
    }
    const missing = spec.required.filter((name) => !present(input.context[name]));
    const invalid = Object.entries(spec.checks ?? {})
      .filter(([name]) => present(input.context[name]))
      .map(([name, check]) => ({ field: name, message: check(input.context[name]) }))
      .filter((p): p is FieldError => p.message !== null);
    if (missing.length || invalid.length) {
      const parts = [missing.length ? `missing ${missing.join(', ')}` : '', ...invalid.map((p) => `${p.field} ${p.message}`)].filter(Boolean);
      throw new AppError('CONTEXT_VALIDATION_FAILED', `The context of ${agent.agentId}/${spec.taskType} is invalid: ${parts.join('; ')}`, {
        agentId: agent.agentId,
        taskType: spec.taskType,
        missing,
        invalid,
        required: spec.required,
        optional: spec.optional,
      });
    }
    if (webhook) validateCallbackUrl(webhook.url, this.deps.webhookPolicy, 'webhook.url');
    return { agent, spec, context: input.context, forge, mode, timeout, priority, webhook, config };
  }

  private checkConfig(config: TaskModelConfig | null | undefined): TaskModelConfig | null {
    if (config === undefined || config === null) return null;
    const bad = (field: string, value: unknown, range: string) =>
      new AppError('invalid_agent_configuration', `config.${field} must be ${range}`, { field: `config.${field}`, value, valid_range: range });
    if (!isObject(config as unknown)) throw bad('', config, 'an object');
    const out: TaskModelConfig = {};
    if (config.model !== undefined && config.model !== null) {
      if (!this.deps.llm.models.includes(config.model)) throw bad('model', config.model, `one of ${this.deps.llm.models.join(', ')}`);
      out.model = config.model;
    }
    if (config.temperature !== undefined && config.temperature !== null) {
      const t = config.temperature;
      if (typeof t !== 'number' || !(t >= 0 && t <= 1)) throw bad('temperature', t, '0.0-1.0');
      out.temperature = t;
    }
    if (config.maxTokens !== undefined && config.maxTokens !== null) {
      const n = config.maxTokens;
      if (!Number.isInteger(n) || n < 1 || n > 128_000) throw bad('max_tokens', n, '1-128000');
      out.maxTokens = n;
    }
    return Object.keys(out).length ? out : null;
  }

  private cipherOrFail(): SecretCipher {
    if (!this.deps.cipher) throw new Error('TaskService: no cipher configured for webhook secrets');
    return this.deps.cipher;
  }

  /**
   * Seconds a new task of this agent and task type is expected to take: the mean of its last 50
   * completed runs, else the task type's typical duration. Cached a few seconds per task type.
   */
  async estimate(agentId: string, spec: TaskTypeSpec): Promise<number> {
    const key = `${agentId}:${spec.taskType}`;
    const cached = this.estimates.get(key);
    if (cached && Date.now() - cached.at < ESTIMATE_TTL_MS) return cached.seconds;
    const row = await taskStore.recentDurations(this.deps.db, agentId, spec.taskType);
    const seconds = row && row.n > 0 && row.avg_ms !== null ? Math.round(row.avg_ms) / 1000 : spec.typicalSeconds;
    this.estimates.set(key, { seconds, at: Date.now() });
    return seconds;
  }

  // ---- reads --------------------------------------------------------------------------------

  async get(_principal: Principal, taskId: string): Promise<TaskRecord> {
    const task = await this.find(taskId);
    if (!task) throw errors.notFound('task', taskId);
    return task;
  }

  async find(taskId: string, q: Queryable = this.deps.db.manager): Promise<TaskRecord | null> {
    if (typeof taskId !== 'string' || !UUID.test(taskId)) return null;
    const row = await taskStore.byId(q, taskId);
    return row ? this.withStep(toTaskRecord(row)) : null;
  }

  async list(_principal: Principal, filter: TaskListFilter): Promise<{ tasks: TaskRecord[]; total: number; limit: number; offset: number }> {
    const problems: FieldError[] = [];
    const limit = filter.limit ?? 20;
    const offset = filter.offset ?? 0;
    const sortBy = filter.sortBy ?? 'createdAt';
    const sortOrder = (filter.sortOrder ?? 'desc').toLowerCase();
    problems.push(...windowProblems({ limit, offset }));
    if (!Object.hasOwn(TASK_SORTS, sortBy)) problems.push({ field: 'sortBy', message: `must be one of ${Object.keys(TASK_SORTS).join(', ')}` });
    if (sortOrder !== 'asc' && sortOrder !== 'desc') problems.push({ field: 'sortOrder', message: 'must be asc or desc' });
    if (filter.status != null && !(TASK_STATUSES as readonly string[]).includes(filter.status)) {
      problems.push({ field: 'status', message: `must be one of ${TASK_STATUSES.join(', ')}` });
    }
    if (filter.orchestrationId != null && !UUID.test(filter.orchestrationId)) problems.push({ field: 'orchestrationId', message: 'must be a UUID' });
    if (problems.length) throw errors.validation(problems);

    const { rows, total } = await taskStore.list(
      this.deps.db,
      { agentId: filter.agentId, status: filter.status, taskType: filter.taskType, orchestrationId: filter.orchestrationId },
      { sortBy, ascending: sortOrder === 'asc' },
      limit,
      offset,
    );
    return { tasks: rows.map((r) => this.withStep(toTaskRecord(r))), total, limit, offset };
  }

  /** The files each task wrote, by path (empty for a task without any): one query for a whole list of tasks. */
  readonly artifactsByTask: LoaderDefinition<string, TaskArtifactRecord[]> = defineLoader('control-plane.artifactsByTask', async (taskIds) => {
    const ids = taskIds.filter((id) => UUID.test(id));
    const rows = ids.length ? await taskStore.artifactsOf(this.deps.db, ids) : [];
    return groupedByKey(taskIds, rows, (r) => r.task_id, toArtifact);
  });

  // ---- cancel -------------------------------------------------------------------------------

  /** Cancels a queued or running task; a finished one is a 409 conflict. */
  async cancel(principal: Principal, taskId: string, reason?: string | null): Promise<TaskRecord> {
    if (reason !== undefined && reason !== null && (typeof reason !== 'string' || reason.length > 1000)) {
      throw errors.field('reason', 'must be a string of at most 1000 characters');
    }
    if (typeof taskId !== 'string' || !UUID.test(taskId)) throw errors.notFound('task', String(taskId));
    // A running task's start may be announced and not written yet: the cancel writes it.
    const announced = this.steps.get(taskId)?.startedAt;
    const row = await taskStore.cancel(this.deps.db, taskId, reason ?? null, announced ? new Date(announced) : null);
    if (!row) {
      const task = await this.get(principal, taskId);
      throw errors.conflict(`Task ${taskId} is already ${task.status}; only queued or running tasks can be cancelled`, { taskId, status: task.status });
    }
    const task = toTaskRecord(row);
    // The queue aborts a running job's signal (its model call) within a second; a queued job never starts.
    if (task.jobId)
      await this.deps.queue.cancel(task.jobId, reason ?? 'task cancelled').catch((err) => this.deps.logger.warn('task job not cancelled', { err, taskId }));
    await this.publish(task);
    return task;
  }

  // ---- events -------------------------------------------------------------------------------

  /** `version`: the row's, as the change that is announced left it (none for a step announced, not written). */
  async publish(
    task: Pick<TaskRecord, 'id' | 'status' | 'orchestrationId' | 'agentId'> & { version?: number; progress?: TaskProgress | null; startedAt?: Date | null },
  ): Promise<void> {
    const event: TaskUpdatedEvent = {
      taskId: task.id,
      status: task.status,
      orchestrationId: task.orchestrationId,
      agentId: task.agentId,
      ...(task.version !== undefined && { version: task.version }),
      ...(task.status === 'running' && task.progress && { progress: task.progress }),
      ...(task.status === 'running' && task.startedAt && { startedAt: task.startedAt.toISOString() }),
    };
    await this.deps.events.publish(TOPIC.taskUpdated, event).catch((err) => this.deps.logger.warn('task event not published', { err, taskId: task.id }));
  }

  private noteStep(e: TaskUpdatedEvent): void {
    if (e.status !== 'running') this.steps.delete(e.taskId);
    else if (e.progress) {
      this.steps.delete(e.taskId); // re-inserted last: the oldest entries go first when full
      this.steps.set(e.taskId, { progress: e.progress, startedAt: e.startedAt });
      if (this.steps.size > MAX_STEPS) this.steps.delete(this.steps.keys().next().value!);
    }
  }

  /**
   * A running task with the step its events announced, when that is later than its row's; a task
   * whose start is announced but not written yet (its row still queued) as running since then.
   */
  private withStep(task: TaskRecord): TaskRecord {
    const step = this.steps.get(task.id);
    if (!step) return task;
    if (task.status === 'queued') return { ...task, status: 'running', startedAt: step.startedAt ? new Date(step.startedAt) : null, progress: step.progress };
    if (task.status !== 'running') {
      this.steps.delete(task.id); // its end event went missing
      return task;
    }
    return step.progress.stepsCompleted >= (task.progress?.stepsCompleted ?? 0) ? { ...task, progress: step.progress } : task;
  }

  /** The task once it has finished, or as it is after `ms` (woken by events, never polling). */
  async waitForEnd(taskId: string, ms: number): Promise<TaskRecord> {
    let wake!: (e: TaskUpdatedEvent | null) => void;
    const woken = new Promise<TaskUpdatedEvent | null>((resolve) => (wake = resolve));
    const set = this.waiters.get(taskId) ?? new Set();
    const onEvent = (e: TaskUpdatedEvent) => FINISHED_STATUSES.includes(e.status) && wake(e);
    set.add(onEvent);
    this.waiters.set(taskId, set);
    const waited = new AbortController();
    void (this.deps.clock ?? realClock).sleep(ms, waited.signal).then(
      () => wake(null),
      () => undefined, // the task ended first
    );
    try {
      const now = await this.find(taskId);
      if (!now) throw errors.notFound('task', taskId);
      if (FINISHED_STATUSES.includes(now.status)) return now;
      await woken;
      return (await this.find(taskId))!;
    } finally {
      waited.abort();
      set.delete(onEvent);
      if (!set.size) this.waiters.delete(taskId);
    }
  }
}
