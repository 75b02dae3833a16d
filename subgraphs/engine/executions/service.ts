import { UUID } from '../../../kernel/ids';
import { byKey, defineLoader, groupedByKey, type LoaderDefinition } from '../../../kernel/loaders';
import { randomUUID } from 'node:crypto';
import type { DataSource } from 'typeorm';
import type { Principal, Tier } from '../../../kernel/auth/principal';
import { AppError, errors, type FieldError } from '../../../kernel/errors';
import type { Logger } from '../../../kernel/logger';
import type { RateLimiter } from '../../../kernel/rate-limit';
import { compile, descendants, chooseStart } from '../executor';
import { BUDGET_DESCRIPTIONS, BUDGET_VARIABLES, type BudgetName } from '../nodes';
import type { ExecutionNotifier, NotifyInput } from './notify';
import { EXECUTION_STATUSES, type ExecutionStatus, type KnownJson } from './writes.store';
import { executionReads as store, toLogRow, toNodeData, type ExecutionFilter, type ExecutionLogRow, type NodeDataRow } from './reads.store';
import { deleteExecution } from './state.store';
import type { BinaryStore, BinaryStream, StoredBinary } from './binary.store';
import type { ExecutionRunner, ExecutionView } from './runner';
import { isPlainObject } from '../nodes';
import { runAsOf, type WorkflowService } from '../workflows';

/** The executions API: execute (sync or async), read, list, retry, cancel, delete, logs. No GraphQL here. */

export const MAX_PAYLOAD_BYTES = 5 * 1024 * 1024;
export const DEFAULT_SYNC_TIMEOUT_S = 300;
const MAX_SYNC_TIMEOUT_S = 3600;
/** Workflow executions per minute per key, by tier. */
export const EXECUTIONS_PER_MINUTE: Record<Tier, number> = { free: 10, starter: 60, professional: 300, enterprise: 1000 };
/** The control plane's workflow triggers per minute per key. */
export const TRIGGERS_PER_MINUTE = 100;
/** The synchronous request maximum. */
export const TRIGGER_SYNC_MAX_S = 300;
const PRIORITIES = ['low', 'normal', 'high', 'critical'] as const;

/** `POST /v1/control-plane/workflows/trigger`. */
export interface TriggerInput {
  workflowId?: string | null;
  payload?: Record<string, unknown> | null;
  execution?: { mode?: string | null; timeout?: number | null; priority?: string | null } | null;
  webhook?: NotifyInput | null;
  environment?: string | null;
}

export interface ExecuteInput {
  data?: Record<string, unknown> | null;
  mode?: string | null;
  timeout?: number | null;
}

export type { ExecutionFilter as ExecutionListFilter, ExecutionLogRow, NodeDataRow } from './reads.store';

export interface ExecutionDetail extends ExecutionView {
  estimatedCompletionAt: Date | null;
}

export function executionNotFound(id: string): AppError {
  return errors.notFound('execution', id);
}

/** Refuses a payload over 5 MB; its JSON text, made to measure it, is kept for the execution's writes (KnownJson). */
export function checkPayload(value: unknown): KnownJson {
  const text = JSON.stringify(value ?? {}) ?? '{}';
  const bytes = Buffer.byteLength(text);
  if (bytes > MAX_PAYLOAD_BYTES) {
    throw new AppError('PAYLOAD_TOO_LARGE', 'The workflow payload exceeds 5 MB', { limit_bytes: MAX_PAYLOAD_BYTES, size_bytes: bytes });
  }
  const known: KnownJson = new WeakMap();
  if (value !== null && typeof value === 'object') known.set(value, { text, bytes });
  return known;
}

export class ExecutionService {
  constructor(
    private readonly db: DataSource,
    private readonly runner: ExecutionRunner,
    private readonly workflows: WorkflowService,
    private readonly limiter: RateLimiter,
    private readonly notifier?: ExecutionNotifier,
    private readonly binaries?: BinaryStore,
    private readonly logger?: Logger,
  ) {}

  /**
   * The control plane's trigger: the workflow by id or slug, active only (409 WORKFLOW_INACTIVE),
   * `payload` as the start node's item, async (a queued run with the given priority) or sync
   * (inline, waiting up to `timeout` seconds, at most 300), and the webhook subscription kept
   * with the execution. Everything is checked before anything starts.
   */
  /** `baseUrl`: the caller's address of the platform (RequestContext.baseUrl), for the links of the execution's webhooks. */
  async trigger(principal: Principal, input: TriggerInput, baseUrl?: string): Promise<ExecutionDetail> {
    const problems: FieldError[] = [];
    if (typeof input.workflowId !== 'string' || !input.workflowId.trim()) problems.push({ field: 'workflowId', message: 'is required (an id or a slug)' });
    if (input.payload === undefined || input.payload === null) problems.push({ field: 'payload', message: 'is required (an object; {} for none)' });
    else if (!isPlainObject(input.payload)) problems.push({ field: 'payload', message: 'must be an object' });
    const ex = input.execution ?? {};
    if (!isPlainObject(ex)) problems.push({ field: 'execution', message: 'must be an object' });
    const mode = ex.mode ?? 'async';
    if (mode !== 'sync' && mode !== 'async') problems.push({ field: 'execution.mode', message: 'must be async or sync' });
    const timeout = ex.timeout ?? TRIGGER_SYNC_MAX_S;
    if (!Number.isInteger(timeout) || timeout < 1 || timeout > TRIGGER_SYNC_MAX_S) {
      problems.push({ field: 'execution.timeout', message: `must be whole seconds from 1 to ${TRIGGER_SYNC_MAX_S}` });
    }
    const priority = ex.priority ?? 'normal';
    if (!(PRIORITIES as readonly string[]).includes(priority))
      problems.push({ field: 'execution.priority', message: `must be one of ${PRIORITIES.join(', ')}` });
    if (input.environment !== undefined && input.environment !== null && (typeof input.environment !== 'string' || input.environment.length > 50)) {
      problems.push({ field: 'environment', message: 'must be a string of at most 50 characters' });
    }
    if (input.webhook !== undefined && input.webhook !== null && !isPlainObject(input.webhook))
      problems.push({ field: 'webhook', message: 'must be an object' });
    if (problems.length) throw errors.validation(problems);
    const known = checkPayload(input.payload);
    const id = randomUUID();
    const notify = input.webhook ? this.notifier!.configure(input.webhook, id, baseUrl) : null;
    if (principal.kind === 'apiKey') {
      await this.limiter.consumeNamed('control-plane.workflow-triggers', principal.keyId, TRIGGERS_PER_MINUTE, 60, principal.tier);
    }
    const workflow = await this.workflows.resolve(input.workflowId!);
    if (!workflow.active) {
      throw new AppError('WORKFLOW_INACTIVE', `Workflow ${workflow.name} is not active`, { workflowId: workflow.id, name: workflow.name });
    }
    const version = await this.workflows.version(workflow.id, workflow.version);
    const started = await this.runner.begin({
      id,
      version,
      mode: 'manual',
      input: [{ json: input.payload! }],
      inline: mode === 'sync',
      priority: priority as (typeof PRIORITIES)[number],
      notify,
      runAs: runAsOf(principal),
      known,
    });
    return this.settle(started, timeout);
  }

  async execute(principal: Principal, workflowId: string, input: ExecuteInput): Promise<ExecutionDetail> {
    const mode = input.mode ?? 'async';
    if (mode !== 'sync' && mode !== 'async') throw errors.field('mode', 'must be sync or async');
    const timeout = input.timeout ?? DEFAULT_SYNC_TIMEOUT_S;
    if (!Number.isFinite(timeout) || timeout < 1 || timeout > MAX_SYNC_TIMEOUT_S)
      throw errors.field('timeout', `must be seconds from 1 to ${MAX_SYNC_TIMEOUT_S}`);
    const data = input.data ?? {};
    if (!isPlainObject(data)) throw errors.field('data', 'must be an object');
    const known = checkPayload(data);
    await this.limit(principal);
    const version = await this.workflows.current(workflowId);
    const started = await this.runner.begin({ version, mode: 'manual', input: [{ json: data }], inline: mode === 'sync', runAs: runAsOf(principal), known });
    return this.settle(started, timeout);
  }

  /** A queued run as started; an inline one once it stops running, or as it is after `timeout` seconds. */
  private async settle(started: Awaited<ReturnType<ExecutionRunner['begin']>>, timeout: number): Promise<ExecutionDetail> {
    if (!started.done) return { ...started.view, estimatedCompletionAt: null };
    let timer: NodeJS.Timeout | undefined;
    const late = new Promise<null>((resolve) => (timer = setTimeout(() => resolve(null), timeout * 1000)));
    const finished = await Promise.race([started.done, late]);
    clearTimeout(timer);
    if (finished) return { ...finished, estimatedCompletionAt: null };
    // Still running: answer with its id; it goes on (and can be polled or watched).
    return this.get(started.view.id).catch(() => ({ ...started.view, estimatedCompletionAt: null }));
  }

  async get(id: string): Promise<ExecutionDetail> {
    const view = await this.runner.view(id);
    if (!view) throw executionNotFound(id);
    let estimatedCompletionAt: Date | null = null;
    if (view.status === 'running') {
      const avg = await store.averageSuccessMs(this.db, view.workflowId);
      if (avg !== null) estimatedCompletionAt = new Date(view.startedAt.getTime() + Math.round(avg));
    }
    return { ...view, estimatedCompletionAt };
  }

  async list(filter: ExecutionFilter): Promise<{ executions: ExecutionDetail[]; total: number }> {
    if (filter.workflowId !== undefined && !UUID.test(filter.workflowId)) return { executions: [], total: 0 };
    if (filter.status !== undefined && !EXECUTION_STATUSES.includes(filter.status as ExecutionStatus)) {
      throw errors.field('status', `must be one of ${EXECUTION_STATUSES.join(', ')}`);
    }
    const { rows, total } = await store.list(this.db, filter);
    return { executions: rows.map((r) => ({ ...this.runner.toView(r), estimatedCompletionAt: null })), total };
  }

  /**
   * A new execution of the workflow's current definition with the original's input. The
   * outputs of the nodes before `fromNode` (default: the node that failed) are reused, not run
   * again; `fromNode` and everything after it runs.
   */
  async retry(principal: Principal, id: string, fromNode?: string | null): Promise<ExecutionDetail> {
    const original = await this.runner.load(id);
    if (!original) throw executionNotFound(id);
    if (original.status !== 'error' && original.status !== 'canceled') {
      throw errors.conflict(`Execution ${id} is ${original.status}; only failed or canceled executions can be retried`, {
        executionId: id,
        status: original.status,
      });
    }
    await this.limit(principal);
    const version = await this.workflows.current(original.workflow_id);
    const compiled = compile(version.definition);
    if (fromNode !== undefined && fromNode !== null && !compiled.byName.has(fromNode)) {
      throw errors.field('fromNode', `no node is named "${fromNode}" in workflow ${version.workflowId}`);
    }
    const failed = (original.error as { node?: string } | null)?.node;
    const start = fromNode ?? (failed && compiled.byName.has(failed) ? failed : null);
    let reuse: string[] = [];
    if (start) {
      const rerun = descendants(compiled, start);
      reuse = (await store.nodesWithOutput(this.db, id)).filter((n) => compiled.byName.has(n) && !rerun.has(n));
    }
    const startNode =
      original.start_node && compiled.byName.has(original.start_node)
        ? original.start_node
        : chooseStart(compiled, original.mode === 'retry' ? 'manual' : original.mode);
    const started = await this.runner.begin({
      version,
      mode: 'retry',
      input: original.input,
      startNode,
      runAs: runAsOf(principal),
      inline: false,
      originalExecutionId: id,
      webhookId: original.webhook_id,
      reuse: reuse.length ? { executionId: id, nodes: reuse } : undefined,
    });
    return { ...started.view, estimatedCompletionAt: null };
  }

  async cancel(id: string, reason?: string | null): Promise<ExecutionDetail> {
    if (reason !== undefined && reason !== null && (typeof reason !== 'string' || reason.length > 1000))
      throw errors.field('reason', 'must be at most 1000 characters');
    if (!UUID.test(id)) throw executionNotFound(id);
    const result = await this.runner.cancel(id, reason);
    if (!result) {
      const view = await this.runner.view(id);
      if (!view) throw executionNotFound(id);
      throw errors.conflict(`Execution ${id} is ${view.status}; only running or waiting executions can be canceled`, { executionId: id, status: view.status });
    }
    return this.get(id);
  }

  /** Deletes an execution with its run data and logs (a running one is canceled first). */
  /** One file of an execution's binary data (run data shows its metadata and url): not found unless the execution refers to it. */
  async binary(executionId: string, binaryId: string): Promise<StoredBinary & { binaryId: string }> {
    if (!UUID.test(executionId) || !(await store.viewRow(this.db, executionId))) throw executionNotFound(executionId);
    const found = UUID.test(binaryId) && this.binaries ? (await this.binaries.read(executionId, [binaryId])).get(binaryId) : undefined;
    if (!found) throw errors.notFound('binary data', binaryId);
    return { ...found, binaryId };
  }

  /** One file of an execution's binary data, to send as it is read from the store (the download route). */
  async openBinary(executionId: string, binaryId: string): Promise<BinaryStream> {
    if (!UUID.test(executionId) || !(await store.viewRow(this.db, executionId))) throw executionNotFound(executionId);
    const found = UUID.test(binaryId) && this.binaries ? await this.binaries.open(executionId, binaryId) : null;
    if (!found) throw errors.notFound('binary data', binaryId);
    return found;
  }

  async delete(id: string): Promise<{ executionId: string; deletedAt: Date }> {
    const view = await this.runner.view(id);
    if (!view) throw executionNotFound(id);
    if (view.status === 'running' || view.status === 'waiting') await this.runner.cancel(id);
    const deleted = await deleteExecution(this.db, id);
    if (!deleted) throw executionNotFound(id);
    const { deletedAt, ...row } = deleted;
    await this.runner.announceDeletion(id, row);
    // Its files kept in a folder or a bucket go now, not at the next maintenance run; one that
    // fails stays queued (binary_trash) for maintenance to retry.
    await this.binaries?.drain().catch((err) => this.logger?.warn('binary data of a deleted execution not deleted yet', { err, executionId: id }));
    return { executionId: id, deletedAt };
  }

  /** Cancels what still runs of a workflow about to be deleted. */
  async cancelAllOf(workflowId: string): Promise<void> {
    for (const id of await store.activeOfWorkflow(this.db, workflowId)) await this.runner.cancel(id);
  }

  /** Executions by id (null for a missing one), as the list shows them: federation references. */
  readonly byId: LoaderDefinition<string, ExecutionDetail | null> = defineLoader('engine.executionsById', async (keys) => {
    const ids = keys.filter((id) => UUID.test(id));
    const rows = ids.length ? await store.viewRows(this.db, ids) : [];
    return byKey(
      keys,
      rows,
      (r) => r.id,
      null,
      (r): ExecutionDetail => ({ ...this.runner.toView(r), estimatedCompletionAt: null }),
    );
  });

  /**
   * Each execution's log, oldest first, at most 5000 entries each: one statement whose lateral
   * subquery reads each execution's first entries from the (execution_id, id) index.
   */
  readonly logsByExecution: LoaderDefinition<string, ExecutionLogRow[]> = defineLoader('engine.logsByExecution', async (keys) => {
    const ids = keys.filter((id) => UUID.test(id));
    const rows = ids.length ? await store.logs(this.db, ids) : [];
    return groupedByKey(keys, rows, (r) => r.execution_id, toLogRow);
  });

  /** Each execution's run data per node (empty for one without). */
  readonly nodeDataByExecution: LoaderDefinition<string, NodeDataRow[]> = defineLoader('engine.nodeDataByExecution', async (keys) => {
    const ids = keys.filter((id) => UUID.test(id));
    const rows = ids.length ? await store.nodeData(this.db, ids) : [];
    return groupedByKey(keys, rows, (r) => r.execution_id, toNodeData);
  });

  /** What one execution may use, as configured (the executionBudgets query). */
  budgets(): { name: BudgetName; variable: string; limit: number; unit: string; description: string }[] {
    return (Object.keys(BUDGET_VARIABLES) as BudgetName[]).map((name) => ({
      name,
      variable: BUDGET_VARIABLES[name],
      limit: this.runner.budgets[name],
      ...BUDGET_DESCRIPTIONS[name],
    }));
  }

  /** Executions per minute by the calling key's tier (the platform itself is not limited). */
  private async limit(principal: Principal): Promise<void> {
    if (principal.kind !== 'apiKey') return;
    await this.limiter.consumeNamed('engine.executions', principal.keyId, EXECUTIONS_PER_MINUTE[principal.tier], 60, principal.tier);
  }
}
