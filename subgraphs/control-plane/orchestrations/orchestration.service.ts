import { auditResource } from '../../../kernel/audit';
import { randomUUID } from 'node:crypto';
import type { DataSource } from 'typeorm';
import type { Queryable } from '../../../kernel/db/rows';
import { withTransaction, type Tx } from '../../../kernel/db/transaction';
import type { Principal } from '../../../kernel/auth/principal';
import type { SecretCipher } from '../../../kernel/crypto';
import { AppError, errors, type FieldError } from '../../../kernel/errors';
import { pageInfo } from '../../../kernel/graphql-types';
import { validateCallbackUrl } from '../../../kernel/outbound';
import { findAgent, findTaskType } from '../agents';
import { present } from '../tasks';
import { STAGES, isStage, stageIndex } from '../gates';
import {
  ORCHESTRATION_EVENTS,
  orchestrationStore,
  type OrchestrationRecord,
  type OrchestrationStatus,
  type OrchestrationTaskRecord,
  type StageRecord,
} from './orchestration.store';
import { DEFAULT_TASK_SECONDS, type OrchestrationEngine } from './orchestration.engine';
import { orchestrationPrincipal, type TaskPort } from './orchestration.tasks';
import type { CreateOrchestrationInput, CreateOrchestrationWorkflowInput, OrchestrationListArgs, OrchestrationWebhookInput } from './orchestration.inputs';
import { planOrchestration, type PlannedStage, type StageSpec, type TaskChecker } from './orchestration.plan';
import type { Orchestration, OrchestrationList, OrchestrationStage, OrchestrationTask } from './orchestration.types';
import { UUID } from '../../../kernel/ids';
import { currentTraceparent } from '../../../kernel/tracing';

/** What the orchestration needs of the agent catalogue (agent.catalog.ts). */
export interface AgentDirectory {
  /** Throws AGENT_NOT_FOUND, INVALID_TASK_TYPE or CONTEXT_VALIDATION_FAILED. */
  checkTask: TaskChecker;
  /** The agent's task types, first the default; undefined for an unknown agent. */
  capabilities(agentId: string): string[] | undefined;
  /** Expected seconds of one task, for estimatedCompletionAt. */
  taskSeconds(agentId: string, taskType: string): number;
}

/** The agent catalogue (agent.catalog.ts) as the orchestration reads it. */
export const catalogDirectory: AgentDirectory = {
  checkTask(agentId, taskType, context) {
    const agent = findAgent(agentId);
    if (!agent) throw new AppError('AGENT_NOT_FOUND', `Agent ${agentId} does not exist`, { agentId });
    const spec = findTaskType(agent, taskType);
    if (!spec) {
      throw new AppError('INVALID_TASK_TYPE', `Agent ${agentId} does not support task type ${taskType}`, {
        agentId,
        taskType,
        supportedTaskTypes: agent.taskTypes.map((t) => t.taskType),
      });
    }
    // The same rule and details as TaskService.create (task.service.ts), checked before anything starts.
    const missing = spec.required.filter((f) => !present(context[f]));
    const invalid = Object.entries(spec.checks ?? {})
      .filter(([f]) => present(context[f]))
      .map(([f, check]) => ({ field: f, message: check(context[f]) }))
      .filter((p): p is { field: string; message: string } => p.message !== null);
    if (missing.length || invalid.length) {
      const parts = [missing.length ? `missing ${missing.join(', ')}` : '', ...invalid.map((p) => `${p.field} ${p.message}`)].filter(Boolean);
      throw new AppError('CONTEXT_VALIDATION_FAILED', `The context of ${agentId}/${taskType} is invalid: ${parts.join('; ')}`, {
        agentId,
        taskType,
        missing,
        invalid,
        required: spec.required,
        optional: spec.optional,
      });
    }
  },
  capabilities: (agentId) => findAgent(agentId)?.taskTypes.map((t) => t.taskType),
  taskSeconds(agentId, taskType) {
    const agent = findAgent(agentId);
    return (agent && findTaskType(agent, taskType)?.typicalSeconds) || DEFAULT_TASK_SECONDS;
  },
};

/**
 * Orchestrations: create (validated into a plan, stored, first advance enqueued in the same
 * transaction), status, list, pause, resume, cancel. The state machine itself is
 * orchestration.engine.ts.
 */
export class OrchestrationService {
  constructor(
    private readonly deps: {
      db: DataSource;
      engine: OrchestrationEngine;
      cipher: SecretCipher;
      webhookPolicy: { allowHttp: boolean; allowPrivateNetworks?: boolean };
      tasks: () => TaskPort;
      agents: () => AgentDirectory;
    },
  ) {}

  async create(principal: Principal, input: CreateOrchestrationInput): Promise<Orchestration> {
    const plan = planOrchestration(input.stages as StageSpec[], this.deps.agents().checkTask);
    return this.store(principal, input, plan);
  }

  /**
   * The alternate layout's workflow: its agents grouped by stage (delivery order; agents in the
   * order given), each running its first capability unless a taskType is given, with its own
   * context, else the workflow's, else {}. forge_validation turns every stage's exit gate on.
   */
  async createFromWorkflow(principal: Principal, input: CreateOrchestrationWorkflowInput): Promise<Orchestration> {
    const problems: FieldError[] = [];
    if (!input.agents?.length) problems.push({ field: 'agents', message: 'must hold at least one agent' });
    const byStage = new Map<string, StageSpec>();
    input.agents?.forEach((a, i) => {
      if (!isStage(a.stage)) {
        problems.push({ field: `agents[${i}].stage`, message: `must be one of ${STAGES.join(', ')}` });
        return;
      }
      let taskType = a.taskType ?? undefined;
      if (!taskType) {
        const capabilities = this.deps.agents().capabilities(a.agentId);
        if (!capabilities) throw new AppError('AGENT_NOT_FOUND', `Agent ${a.agentId} does not exist`, { agentId: a.agentId, field: `agents[${i}].agentId` });
        taskType = capabilities[0];
        if (!taskType) {
          problems.push({ field: `agents[${i}].taskType`, message: `agent ${a.agentId} has no capability; name a taskType` });
          return;
        }
      }
      const stage = byStage.get(a.stage) ?? { stage: a.stage, tasks: [], parallel: input.parallel ?? true };
      stage.tasks.push({ agentId: a.agentId, taskType, context: a.context ?? input.context ?? {} });
      byStage.set(a.stage, stage);
    });
    if (problems.length) throw errors.validation(problems);
    const stages = [...byStage.values()].sort((x, y) => stageIndex(x.stage as never) - stageIndex(y.stage as never));
    const plan = planOrchestration(stages, this.deps.agents().checkTask, { gates: input.forgeValidation ? 'all' : 'none' });
    return this.store(principal, { name: input.name, description: input.description, webhook: input.webhook }, plan, true);
  }

  async get(principal: Principal, orchestrationId: string, includeTaskDetails = false): Promise<Orchestration> {
    // One snapshot: the engine commits a task's status and its stage's counters together, and a
    // reader must not see one without the other.
    const [view] = await this.deps.db.transaction('REPEATABLE READ', async (m) => this.load([await this.row(orchestrationId, m)], includeTaskDetails, m));
    return view!;
  }

  async list(_principal: Principal, args: OrchestrationListArgs): Promise<OrchestrationList> {
    const limit = args.limit ?? 20;
    const offset = args.offset ?? 0;
    if (args.stage && !isStage(args.stage)) throw errors.field('stage', `must be one of ${STAGES.join(', ')}`);
    const { rows, total } = await orchestrationStore.list(this.deps.db, { status: args.status, stage: args.stage }, limit, offset);
    return { orchestrations: await this.load(rows, false), pagination: pageInfo(total, limit, offset) };
  }

  async pause(principal: Principal, orchestrationId: string, reason?: string | null): Promise<Orchestration> {
    checkReason(reason);
    await this.transition(orchestrationId, ['running'], 'pause', (m) => orchestrationStore.pause(m, orchestrationId, reason ?? null));
    await this.deps.engine.published(orchestrationId, 'paused');
    return this.get(principal, orchestrationId);
  }

  async resume(principal: Principal, orchestrationId: string): Promise<Orchestration> {
    await this.transition(orchestrationId, ['paused'], 'resume', async (m, tx) => {
      await orchestrationStore.resume(m, orchestrationId);
      await this.deps.engine.trigger(orchestrationId, tx);
    });
    await this.deps.engine.published(orchestrationId, 'running');
    return this.get(principal, orchestrationId);
  }

  /**
   * Cancels a running or paused orchestration: no task starts any more, the running stage is
   * marked cancelled, and unless cancelRunningTasks is false its running tasks are cancelled
   * (tasksCancelled counts those the task service cancelled; one that finished meanwhile is not).
   */
  async cancel(principal: Principal, orchestrationId: string, reason?: string | null, cancelRunningTasks = true): Promise<Orchestration> {
    checkReason(reason);
    let running: string[] = [];
    await this.transition(orchestrationId, ['running', 'paused'], 'cancel', async (m) => {
      await orchestrationStore.cancel(m, orchestrationId, reason ?? null);
      await orchestrationStore.cancelRunningStages(m, orchestrationId);
      running = await orchestrationStore.runningTaskIds(m, orchestrationId);
    });
    if (cancelRunningTasks && running.length) {
      const acting = orchestrationPrincipal(orchestrationId);
      const why = reason ? `orchestration cancelled: ${reason}` : 'orchestration cancelled';
      const outcomes = await Promise.all(
        running.map((taskId) =>
          this.deps
            .tasks()
            .cancel(acting, taskId, why)
            .then((t) => t.status === 'cancelled')
            .catch((err) => {
              if (err instanceof AppError && (err.status === 409 || err.status === 404)) return false; // finished meanwhile
              throw err;
            }),
        ),
      );
      const cancelled = running.filter((_, i) => outcomes[i]);
      await withTransaction(this.deps.db, async ({ manager: m }) => {
        await orchestrationStore.setTasksCancelled(m, orchestrationId, cancelled.length);
        await orchestrationStore.cancelTasks(m, orchestrationId, cancelled);
      });
    }
    await this.deps.engine.published(orchestrationId, 'cancelled');
    return this.get(principal, orchestrationId);
  }

  // -------------------------------------------------------------------------------------------

  private async store(
    principal: Principal,
    input: { name: string; description?: string | null; webhook?: OrchestrationWebhookInput | null },
    plan: PlannedStage[],
    includeTaskDetails = false,
  ): Promise<Orchestration> {
    const webhook = this.checkWebhook(input.webhook);
    const id = randomUUID();
    // Both creating mutations (createOrchestration, createOrchestrationWorkflow) come here.
    auditResource('Orchestration', id);
    auditResource('OrchestrationWorkflow', id);
    const tasksTotal = plan.reduce((n, s) => n + s.tasks.length, 0);
    const agents = this.deps.agents();
    let seconds = 0;
    for (const s of plan) {
      const each = s.tasks.map((t) => agents.taskSeconds(t.agentId, t.taskType));
      seconds += s.parallel ? Math.max(...each) : each.reduce((a, b) => a + b, 0);
    }
    await withTransaction(this.deps.db, async (tx) => {
      const m = tx.manager;
      await orchestrationStore.insert(m, [
        id,
        input.name,
        input.description ?? null,
        plan[0]!.stage,
        plan.length,
        tasksTotal,
        webhook?.url ?? null,
        webhook?.events ?? null,
        webhook?.secret ? this.deps.cipher.encrypt(webhook.secret, id) : null,
        JSON.stringify(principal),
        principal.kind === 'apiKey' ? principal.keyId : null,
        Math.round(seconds),
        currentTraceparent(),
      ]);
      for (const s of plan) {
        await orchestrationStore.insertStage(m, [
          id,
          s.position,
          s.stage,
          s.position === 0 ? 'running' : 'pending',
          s.parallel,
          s.gateEnabled,
          s.gateEnabled ? s.gateRequired : null,
          s.tasks.length,
          s.position === 0 ? new Date() : null,
        ]);
        for (const t of s.tasks) {
          await orchestrationStore.insertTask(m, [
            id,
            s.position,
            t.position,
            t.key,
            t.agentId,
            t.taskType,
            JSON.stringify(t.context),
            t.dependencies,
            t.dependsOn,
          ]);
        }
      }
      await this.deps.engine.trigger(id, tx);
    });
    await this.deps.engine.published(id, 'running');
    return this.get(principal, id, includeTaskDetails);
  }

  private checkWebhook(webhook?: OrchestrationWebhookInput | null): { url: string; events: string[]; secret?: string } | null {
    if (!webhook) return null;
    validateCallbackUrl(webhook.url, this.deps.webhookPolicy, 'webhook.url');
    const events = webhook.events ?? [...ORCHESTRATION_EVENTS];
    const unknown = events.filter((e) => !(ORCHESTRATION_EVENTS as readonly string[]).includes(e));
    if (unknown.length || events.length === 0) {
      throw new AppError('WEBHOOK_INVALID', `webhook.events must be among ${ORCHESTRATION_EVENTS.join(', ')}`, {
        field: 'webhook.events',
        reason: 'unknown_event',
        unknown,
      });
    }
    if (webhook.secret !== undefined && webhook.secret !== null && (webhook.secret.length < 1 || webhook.secret.length > 256)) {
      throw new AppError('WEBHOOK_INVALID', 'webhook.secret must be 1 to 256 characters', { field: 'webhook.secret', reason: 'invalid_secret' });
    }
    return { url: webhook.url, events: [...new Set(events)], secret: webhook.secret ?? undefined };
  }

  private async row(orchestrationId: string, m: Queryable = this.deps.db, lock = false): Promise<OrchestrationRecord> {
    if (!UUID.test(orchestrationId)) throw errors.notFound('orchestration', orchestrationId);
    const row = await orchestrationStore.byId(m, orchestrationId, lock);
    if (!row) throw errors.notFound('orchestration', orchestrationId);
    return row;
  }

  private async transition(
    orchestrationId: string,
    from: OrchestrationStatus[],
    action: string,
    apply: (m: Queryable, tx: Tx) => Promise<unknown>,
  ): Promise<void> {
    await withTransaction(this.deps.db, async (tx) => {
      const m = tx.manager;
      const row = await this.row(orchestrationId, m, true);
      if (!from.includes(row.status)) {
        throw errors.conflict(`Cannot ${action} an orchestration that is ${row.status}`, {
          orchestrationId,
          status: row.status,
          allowed_from: from,
        });
      }
      await apply(m, tx);
    });
  }

  private async load(rows: OrchestrationRecord[], includeTaskDetails: boolean, m: Queryable = this.deps.db): Promise<Orchestration[]> {
    if (!rows.length) return [];
    const ids = rows.map((r) => r.orchestrationId);
    const stages = await orchestrationStore.stagesOf(m, ids);
    const tasks = includeTaskDetails ? await orchestrationStore.tasksOf(m, ids) : [];
    return rows.map((r) =>
      toOrchestration(
        r,
        stages.filter((s) => s.orchestrationId === r.orchestrationId),
        includeTaskDetails ? tasks.filter((t) => t.orchestrationId === r.orchestrationId) : null,
      ),
    );
  }
}

function checkReason(reason?: string | null): void {
  if (reason !== undefined && reason !== null && reason.length > 1000) throw errors.field('reason', 'must be at most 1000 characters');
}

const seconds = (from: Date | null, to: Date | null) => (from && to ? Math.round(to.getTime() - from.getTime()) / 1000 : null);

export function toOrchestration(o: OrchestrationRecord, stages: StageRecord[], tasks: OrchestrationTaskRecord[] | null): Orchestration {
  const current = stages.find((s) => s.stage === o.currentStage && s.status !== 'completed');
  const share = current && current.tasksTotal ? current.tasksCompleted / current.tasksTotal : 0;
  const overall = o.status === 'completed' ? 100 : Math.round(((o.stagesCompleted + share) / o.stagesTotal) * 1000) / 10;
  const end = o.completedAt ?? o.failedAt ?? o.cancelledAt;
  return {
    orchestrationId: o.orchestrationId,
    name: o.name,
    description: o.description,
    status: o.status,
    currentStage: o.currentStage,
    progress: {
      stagesCompleted: o.stagesCompleted,
      stagesTotal: o.stagesTotal,
      tasksCompleted: o.tasksCompleted,
      tasksTotal: o.tasksTotal,
      overallPercentage: overall,
    },
    stages: stages.map((s) => toStage(s, tasks ? tasks.filter((t) => t.stagePosition === s.position) : null)),
    result: o.result,
    error: o.error ? { code: o.error.code, message: o.error.message, details: o.error.details ?? null } : null,
    pauseReason: o.pauseReason,
    cancelReason: o.cancelReason,
    tasksCancelled: o.tasksCancelled,
    createdAt: o.createdAt,
    pausedAt: o.pausedAt,
    resumedAt: o.resumedAt,
    completedAt: o.completedAt,
    failedAt: o.failedAt,
    cancelledAt: o.cancelledAt,
    estimatedCompletionAt: o.status === 'running' || o.status === 'paused' ? o.estimatedCompletionAt : null,
    duration: seconds(o.createdAt, end),
    updatedAt: o.updatedAt,
    traceId: o.traceId,
    version: o.version,
  };
}

function toStage(s: StageRecord, tasks: OrchestrationTaskRecord[] | null): OrchestrationStage {
  return {
    stage: s.stage,
    status: s.status,
    parallel: s.parallel,
    tasksTotal: s.tasksTotal,
    tasksCompleted: s.tasksCompleted,
    startedAt: s.startedAt,
    completedAt: s.completedAt,
    duration: seconds(s.startedAt, s.completedAt ?? s.failedAt),
    tasks: tasks ? tasks.map(toTask) : null,
    gateValidation: {
      enabled: s.gateEnabled,
      required: s.gateRequired,
      exitGatePassed: s.gateResult ? s.gateResult.passed : null,
      outputs: Object.keys(s.outputs ?? {}),
      validation: s.gateResult ? { ...s.gateResult, validatedAt: new Date(s.gateResult.validatedAt) } : null,
    },
  };
}

function toTask(t: OrchestrationTaskRecord): OrchestrationTask {
  return {
    key: t.taskKey,
    taskId: t.taskId,
    agentId: t.agentId,
    taskType: t.taskType,
    status: t.status,
    dependencies: t.dependencies,
    progress: t.progress,
    result: t.result,
    error: t.error,
    startedAt: t.startedAt,
    completedAt: t.status === 'completed' ? t.finishedAt : null,
  };
}
