import { UUID } from '../../kernel/ids';
import { rowsOf } from '../../kernel/db/rows';
import { createHmac, randomUUID, timingSafeEqual } from 'node:crypto';
import type { DataSource, EntityManager } from 'typeorm';
import { AppError } from '../../kernel/errors';
import type { EventBus } from '../../kernel/events';
import type { Logger } from '../../kernel/logger';
import { guardedFetch, type OutboundPolicy } from '../../kernel/outbound';
import { QUEUE_WAKEUP, type JobAttempt, type JobContext, type Priority, type Queue } from '../../kernel/queue';
import { compile, executionTimeoutSeconds } from './definition';
import type { ExecutionMode, ExecutionStatus } from './execution.entity';
import { chooseStart, WorkflowExecutor, type ExecutionErrorInfo, type LogEntry, type Progress, type RunOutcome, type StoredRun } from './executor';
import { ExpressionEngine, type Item } from './expressions';
import { NodeError, type NodeServices, type PromptTestRequest, type TaskRequest, type WebhookReply } from './nodes/types';
import { eventFor, type ExecutionNotifier, type NotifyConfig } from './execution.notify';
import { runPromptTest, runTask, type OperationsLike } from './execution.platform';
import { CODE_LIMITS, EXPRESSION_LIMITS, type CodeRunner } from './sandbox';
import { ProcessSandbox } from './sandbox.process';
import {
  EXECUTION_COLUMNS,
  REQUEST_LOG_INSERT,
  nodeRow,
  requestLogRow,
  toView,
  writeExecution,
  type ExecutionView,
  type Pending,
  type RequestLog,
  type RowUpdate,
  type StoreTarget,
} from './execution.store';
import { type WorkflowService, type WorkflowVersion } from './workflow.service';

/**
 * Runs executions and keeps them: the row in engine.executions, run data in execution_nodes,
 * logs in execution_logs, an `engine.execution.updated` event on every status and progress
 * change. Async executions are `engine.execute` jobs; sync ones (and webhooks answering with
 * the last node, and sub-workflows) run inline in the request, persisted the same way, and
 * heartbeat so that a process dying mid-run leaves no execution `running` forever.
 *
 * Writes are batched: the node rows and log lines of fast nodes wait (at most 50 ms) for the
 * next write, which is one statement (execution.store.ts); a node that may take long (HTTP, code,
 * sub-workflow, wait) flushes them before it starts and names itself as the current node. An
 * inline run inserts its row with its first write, so a fast one (a sync Webhook -> Set) is a
 * single statement, its webhook request log included.
 *
 * `wait` nodes: the execution becomes `waiting` with the resume state (the waiting node and its
 * items; the outputs so far are in execution_nodes), plus a delayed `engine.resume` job for a
 * timer, or a resume URL for `resume: "webhook"`. Resuming continues from the stored state, in
 * any process, also after a restart.
 */

export type { ExecutionView, RequestLog } from './execution.store';

export const EXECUTION_UPDATED = 'engine.execution.updated';
const EXECUTION_CANCEL = 'engine.execution.cancel';
export const EXECUTE_JOB = 'engine.execute';
export const RESUME_JOB = 'engine.resume';
const SLOW_TYPES = new Set(['engine.httpRequest', 'engine.code', 'engine.executeWorkflow', 'engine.wait', 'engine.agent', 'engine.prompt']);
const FLUSH_AFTER_MS = 50;
const HEARTBEAT_MS = 10_000;
const MAX_DEPTH = 10;

export interface StartOptions {
  version: WorkflowVersion;
  /** The execution's id (default: a new one); given when something must be bound to it first. */
  id?: string;
  /** Queued runs: enqueue inside this transaction (the caller commits, then calls `wake()`). */
  manager?: EntityManager;
  /** Queued runs: the job's priority. */
  priority?: Priority;
  /** A control-plane trigger's webhook subscription (execution.started|completed|failed|waiting). */
  notify?: NotifyConfig | null;
  mode: ExecutionMode;
  input: Item[];
  /** Run now in this process (and return `done`) rather than as a queued job. */
  inline: boolean;
  startNode?: string | null;
  webhookId?: string | null;
  parentExecutionId?: string | null;
  originalExecutionId?: string | null;
  /** Node outputs copied from another execution (retry): those nodes do not run again. */
  reuse?: { executionId: string; nodes: string[] };
  onReply?: (reply: WebhookReply) => void;
  parentSignal?: AbortSignal;
  depth?: number;
  /** The webhook request that started it: its log entry is written with the execution's (one statement). */
  requestLog?: RequestLog;
}

export interface Started {
  view: ExecutionView;
  /** Inline runs: the execution once it stops running (success, error, waiting, canceled). */
  done?: Promise<ExecutionView>;
}

/** One run of an execution in this process (StoreTarget: what its writes need). */
interface RunContext extends StoreTarget {
  done: Map<string, Item[][]>;
  /** v1 workflows: the stored runs, by node and run index (the execution is replayed through them). */
  storedRuns?: Map<string, StoredRun[]>;
  seq: number;
  inline: boolean;
  depth: number;
  signal?: AbortSignal;
  onReply?: (reply: WebhookReply) => void;
}

interface ResumeState {
  node: string;
  /** The waiting node's run index (v1 workflows: a wait inside a loop). */
  runIndex?: number;
  items: Item[];
  webhook: boolean;
  until: string | null;
  since: string;
  resumeData?: Record<string, unknown>;
}

/** Why an execution's signal was aborted. */
export class ExecutionStop extends Error {
  constructor(
    readonly code: 'canceled' | 'timeout',
    message: string,
  ) {
    super(message);
    this.name = 'ExecutionStop';
  }
}

export interface RunnerDeps {
  db: DataSource;
  queue: Queue;
  events: EventBus;
  logger: Logger;
  workflows: WorkflowService;
  policy: OutboundPolicy;
  /** Signs resume URLs. */
  secret: string;
  /** Webhooks of executions started by the control plane's trigger. */
  notifier?: ExecutionNotifier;
  /** Other services' public operations (agent and prompt nodes). */
  operations?: OperationsLike;
  /** Sandbox processes per pool (SANDBOX_PROCESSES): code nodes and expressions each have one pool. */
  sandboxProcesses?: number;
}

export class ExecutionRunner {
  readonly executor: WorkflowExecutor;
  readonly expressions: ExpressionEngine;
  readonly codeSandbox: CodeRunner;
  private readonly local = new Map<string, { controller: AbortController; inline: boolean }>();
  private heartbeat?: NodeJS.Timeout;
  private readonly logger: Logger;

  constructor(private readonly deps: RunnerDeps) {
    const processes = deps.sandboxProcesses ?? 2;
    this.expressions = new ExpressionEngine(new ProcessSandbox({ ...EXPRESSION_LIMITS, processes }));
    this.codeSandbox = new ProcessSandbox({ ...CODE_LIMITS, processes });
    this.executor = new WorkflowExecutor(this.expressions);
    this.logger = deps.logger;
  }

  /** Job handlers and the cross-process cancel signal. */
  register(queue: Queue): void {
    const onFinalFailure = async (ctx: JobAttempt, error: { code: string; message: string }) => {
      await this.failLost((ctx.data as { executionId: string }).executionId, ctx.id, `${error.code}: ${error.message}`);
    };
    queue.register<{ executionId: string }>(EXECUTE_JOB, (ctx) => this.runQueued(ctx), { onFinalFailure });
    queue.register<{ executionId: string }>(RESUME_JOB, (ctx) => this.resume(ctx), { onFinalFailure });
    this.deps.events.subscribe(EXECUTION_CANCEL, (p: { executionId?: string } | undefined) => {
      if (p?.executionId) this.local.get(p.executionId)?.controller.abort(new ExecutionStop('canceled', 'The execution was canceled'));
    });
  }

  resumeToken(executionId: string): string {
    return createHmac('sha256', this.deps.secret).update(`engine-resume:${executionId}`).digest('hex').slice(0, 40);
  }

  resumeUrl(executionId: string): string {
    return `/webhook/resume/${executionId}/${this.resumeToken(executionId)}`;
  }

  checkResumeToken(executionId: string, token: string): boolean {
    const expected = Buffer.from(this.resumeToken(executionId));
    const given = Buffer.from(String(token));
    return given.length === expected.length && timingSafeEqual(given, expected);
  }

  // -------------------------------------------------------------------------------------------
  // Starting

  async begin(opts: StartOptions): Promise<Started> {
    const id = opts.id ?? randomUUID();
    const { version } = opts;
    const compiled = compile(version.definition);
    const startNode = opts.startNode !== undefined ? opts.startNode : chooseStart(compiled, opts.mode);
    const meta = { originalExecutionId: opts.originalExecutionId ?? null, parentExecutionId: opts.parentExecutionId ?? null, webhookId: opts.webhookId ?? null };
    const started = `Execution started (${opts.mode}${opts.originalExecutionId ? `, retry of ${opts.originalExecutionId}` : ''})`;
    const view = (startedAt: Date): ExecutionView => ({
      id,
      workflowId: version.workflowId,
      workflowName: version.name,
      workflowVersion: version.version,
      status: 'running',
      mode: opts.mode,
      progress: { nodesCompleted: opts.reuse?.nodes.length ?? 0, nodesTotal: compiled.order.length, currentNode: null },
      result: null,
      error: null,
      startedAt,
      finishedAt: null,
      failedAt: null,
      canceledAt: null,
      durationMs: null,
      waitTill: null,
      resumeUrl: null,
      ...meta,
    });

    if (!opts.inline) {
      // Queued: the row, its first log line, the job (and the request's log entry) in one transaction.
      const timeoutMs = (executionTimeoutSeconds(version.definition.settings) + 60) * 1000;
      const store = async (m: EntityManager) => {
        const jobId = await this.deps.queue.enqueue(
          EXECUTE_JOB,
          { executionId: id },
          { timeoutMs, maxAttempts: 2, key: `${EXECUTE_JOB}:${id}`, priority: opts.priority ?? 'normal' },
          m,
        );
        const log = opts.requestLog ? [requestLogRow(opts.requestLog, { status: 'running', error: null }, id)] : [];
        const [row] = rowsOf(
          await m.query(
            `WITH e AS (
               INSERT INTO engine.executions (id, workflow_id, workflow_version, status, mode, input, start_node, nodes_total,
                                              original_execution_id, parent_execution_id, webhook_id, job_id, notify)
               VALUES ($1, $2, $3, 'running', $4, $5, $6, $7, $8, $9, $10, $11, $14) RETURNING started_at
             ), l AS (
               INSERT INTO engine.execution_logs (execution_id, level, message) VALUES ($1, 'info', $12)
             ), w AS (${REQUEST_LOG_INSERT('$13')})
             SELECT started_at FROM e`,
            [
              id,
              version.workflowId,
              version.version,
              opts.mode,
              JSON.stringify(opts.input),
              startNode,
              compiled.order.length,
              meta.originalExecutionId,
              meta.parentExecutionId,
              meta.webhookId,
              jobId,
              started,
              JSON.stringify(log),
              opts.notify ? JSON.stringify(opts.notify) : null,
            ],
          ),
        );
        if (opts.reuse) {
          await m.query(
            `INSERT INTO engine.execution_nodes (execution_id, node_name, run_index, seq, node_type, status, started_at, duration_ms, tries, reused, output, error, state)
             SELECT $1, node_name, run_index, seq, node_type, status, started_at, duration_ms, tries, true, output, error, state
             FROM engine.execution_nodes WHERE execution_id = $2 AND node_name = ANY($3::text[]) AND output IS NOT NULL`,
            [id, opts.reuse.executionId, opts.reuse.nodes],
          );
        }
        const at = row.started_at as Date;
        await this.deps.notifier?.emit(opts.notify, 'execution.started', view(at), m);
        return at;
      };
      const startedAt = opts.manager ? await store(opts.manager) : await this.deps.db.transaction(store);
      if (!opts.manager) {
        this.wakeQueue(EXECUTE_JOB);
        await this.publish(id, 'running');
      }
      return { view: view(startedAt) };
    }

    // Inline: the row is inserted by the first write (a fast run writes everything once, at its end).
    const startedAt = new Date();
    const ctx: RunContext = {
      id,
      version,
      mode: opts.mode,
      input: opts.input,
      startNode,
      startedAt,
      done: new Map(),
      seq: 0,
      inline: true,
      stored: false,
      depth: opts.depth ?? 0,
      signal: opts.parentSignal,
      onReply: opts.onReply,
      requestLog: opts.requestLog,
      meta,
      notify: opts.notify ?? null,
    };
    if (opts.notify) await this.deps.notifier?.emit(opts.notify, 'execution.started', view(startedAt));
    return { view: view(startedAt), done: this.run(ctx, [{ at: startedAt, level: 'info', message: started }]) };
  }

  // -------------------------------------------------------------------------------------------
  // Running

  private async run(ctx: RunContext, firstLogs: LogEntry[] = []): Promise<ExecutionView> {
    const controller = new AbortController();
    const onOuterAbort = () => controller.abort(ctx.signal!.reason);
    if (ctx.signal?.aborted) controller.abort(ctx.signal.reason);
    ctx.signal?.addEventListener('abort', onOuterAbort, { once: true });
    const timeoutS = executionTimeoutSeconds(ctx.version.definition.settings);
    const timer = setTimeout(() => controller.abort(new ExecutionStop('timeout', `The execution ran past its time limit of ${timeoutS} s`)), timeoutS * 1000);
    this.local.set(ctx.id, { controller, inline: ctx.inline });
    if (ctx.inline) this.startHeartbeat();

    const pending: Pending = { rows: [], logs: [...firstLogs], since: firstLogs.length ? Date.now() : 0 };
    let progress: Progress = { nodesCompleted: ctx.done.size, nodesTotal: ctx.version.definition.nodes.length, currentNode: null };
    const flush = async (currentNode: string | null) => {
      if (await this.write(ctx, pending, { nodes_completed: progress.nodesCompleted, current_node: currentNode })) await this.publish(ctx.id, 'running');
    };

    let outcome: RunOutcome;
    const resumeUrl = (id: string) => this.resumeUrl(id);
    try {
      const compiled = compile(ctx.version.definition);
      outcome = await this.executor.run({
        compiled,
        // The resume URL is an HMAC: computed only when an expression or a wait node asks for it.
        execution: { id: ctx.id, mode: ctx.mode, get resumeUrl() { return resumeUrl(ctx.id); } },
        workflow: { id: ctx.version.workflowId, name: ctx.version.name, active: ctx.version.active, timezone: ctx.version.definition.settings.timezone },
        input: ctx.input,
        startNode: ctx.startNode,
        done: ctx.done,
        stored: ctx.storedRuns,
        signal: controller.signal,
        services: this.services(ctx),
        hooks: {
          beforeNode: async (node, p) => {
            progress = p;
            const slow = SLOW_TYPES.has(node.type);
            if (slow || (pending.since && Date.now() - pending.since > FLUSH_AFTER_MS)) await flush(node.name);
          },
          afterNode: (run, p) => {
            progress = p;
            if (!pending.since) pending.since = Date.now();
            pending.rows.push(nodeRow(run, ctx.seq++));
          },
          log: (entry) => {
            if (!pending.since) pending.since = Date.now();
            pending.logs.push(entry);
          },
          reply: (reply) => ctx.onReply?.(reply),
        },
      });
    } catch (err) {
      this.logger.error('execution failed unexpectedly', { err, executionId: ctx.id });
      outcome = {
        status: 'error',
        error: { code: 'EXECUTION_FAILED', message: 'The execution failed unexpectedly', details: { reason: 'internal' } },
        nodesExecuted: 0,
      };
    } finally {
      clearTimeout(timer);
      ctx.signal?.removeEventListener('abort', onOuterAbort);
      this.local.delete(ctx.id);
    }
    return this.finish(ctx, outcome, pending, progress);
  }

  private async finish(ctx: RunContext, outcome: RunOutcome, pending: Pending, progress: Progress): Promise<ExecutionView> {
    const log = (level: LogEntry['level'], message: string) => pending.logs.push({ at: new Date(), level, message });
    const done = { nodes_completed: progress.nodesCompleted, current_node: null };
    let row: any | null = null;
    switch (outcome.status) {
      case 'success': {
        log('info', `Execution succeeded (${outcome.result.nodesExecuted} node${outcome.result.nodesExecuted === 1 ? '' : 's'} run)`);
        const result = { lastNode: outcome.result.lastNode, items: outcome.result.items, nodesExecuted: outcome.result.nodesExecuted };
        row = await this.write(ctx, pending, { ...done, nodes_completed: progress.nodesTotal, status: 'success', result });
        // The result as produced (jsonb would reorder its keys).
        if (row) row.result = result;
        break;
      }
      case 'error':
        log('error', outcome.error.message);
        row = await this.write(ctx, pending, { ...done, status: 'error', error: outcome.error });
        if (row) await this.runErrorWorkflow(ctx, outcome.error);
        break;
      case 'waiting': {
        const state: ResumeState = {
          node: outcome.node,
          ...(outcome.runIndex ? { runIndex: outcome.runIndex } : {}),
          items: outcome.items,
          webhook: outcome.webhook,
          until: outcome.until?.toISOString() ?? null,
          since: new Date().toISOString(),
        };
        log('info', outcome.webhook ? 'Execution waiting for its resume URL' : `Execution waiting until ${state.until}`);
        await this.deps.db.transaction(async (m) => {
          const jobId = outcome.until
            ? await this.deps.queue.enqueue(
                RESUME_JOB,
                { executionId: ctx.id },
                {
                  runAt: outcome.until,
                  maxAttempts: 2,
                  timeoutMs: (executionTimeoutSeconds(ctx.version.definition.settings) + 60) * 1000,
                  // Per wait: a later wait (another Wait node, a loop) is enqueued while this execution's resume job still runs.
                  key: `${RESUME_JOB}:${ctx.id}:${outcome.node}:${outcome.runIndex}`,
                },
                m,
              )
            : null;
          row = await this.write(
            ctx,
            pending,
            { nodes_completed: progress.nodesCompleted, current_node: outcome.node, status: 'waiting', resume_state: state, wait_till: outcome.until, job_id: jobId },
            m,
          );
        });
        break;
      }
      case 'aborted': {
        const code = (outcome.reason as { code?: string } | undefined)?.code;
        const message = (outcome.reason as Error | undefined)?.message ?? 'aborted';
        if (code === 'timeout') {
          const error: ExecutionErrorInfo = { code: 'EXECUTION_FAILED', message, details: { reason: 'timeout' } };
          log('error', message);
          row = await this.write(ctx, pending, { ...done, status: 'error', error });
        } else if (code === 'shutdown' || code === 'worker_lost') {
          // Queued runs go back to the queue and continue from the stored node outputs.
          log('warn', `Execution interrupted (${code}); it continues from the nodes already run`);
          await this.write(ctx, pending, done);
          throw Object.assign(new Error(message), { code });
        } else {
          log('warn', 'Execution canceled');
          row = await this.write(ctx, pending, { ...done, status: 'canceled' });
        }
        break;
      }
    }
    // Not updated: a cancel (or delete) landed first; the stored row tells.
    const view = row ? this.toView({ ...row, workflow_name: ctx.version.name }) : await this.view(ctx.id);
    if (view) await this.publish(ctx.id, view.status);
    if (row && view && ctx.notify) await this.deps.notifier?.emit(ctx.notify, eventFor(view.status), view);
    return view ?? this.gone(ctx);
  }

  private services(ctx: RunContext): NodeServices {
    return {
      codeSandbox: this.codeSandbox,
      fetch: (url, init) => guardedFetch(url, init, this.deps.policy),
      runWorkflow: (workflowId, items, signal) => this.runChild(ctx, workflowId, items, signal),
      runInline: (json, items, signal) => {
        if (ctx.depth + 1 > MAX_DEPTH) throw new NodeError(`Workflows call each other more than ${MAX_DEPTH} levels deep`, { reason: 'depth' });
        const execution = { id: ctx.id, mode: ctx.mode, resumeUrl: '' };
        return this.executor.runInline(json, items, { execution, signal, services: this.services({ ...ctx, depth: ctx.depth + 1 }) });
      },
      runTask: (request: TaskRequest, signal: AbortSignal) => runTask(this.operations(), request, signal),
      testPrompt: (request: PromptTestRequest, signal: AbortSignal) => runPromptTest(this.operations(), request, signal),
    };
  }

  private operations(): OperationsLike {
    if (!this.deps.operations) throw new NodeError('Other services are not reachable from this process', { reason: 'no_operations' });
    return this.deps.operations;
  }

  private async runChild(parent: RunContext, workflowId: string, items: Item[], signal: AbortSignal): Promise<Item[]> {
    if (parent.depth + 1 > MAX_DEPTH) throw new NodeError(`Workflows call each other more than ${MAX_DEPTH} levels deep`, { reason: 'depth' });
    let version: WorkflowVersion;
    try {
      version = await this.deps.workflows.current(workflowId);
    } catch (err) {
      if (err instanceof AppError) throw new NodeError(err.message, { code: err.code, workflowId });
      throw err;
    }
    const started = await this.begin({
      version,
      mode: 'subworkflow',
      input: items.length ? items : [{ json: {} }],
      inline: true,
      parentExecutionId: parent.id,
      parentSignal: signal,
      depth: parent.depth + 1,
    });
    const view = await started.done!;
    const details = { executionId: view.id, workflowId };
    switch (view.status) {
      case 'success':
        return ((view.result as { items?: Record<string, unknown>[] })?.items ?? []).map((json) => ({ json }));
      case 'error':
        throw new NodeError(`Workflow "${version.name}" failed: ${view.error?.message ?? 'unknown error'}`, details);
      case 'waiting':
        throw new NodeError(`Workflow "${version.name}" is waiting (execution ${view.id}); a sub-workflow must finish without waiting`, details);
      default:
        throw new NodeError(`Workflow "${version.name}" was ${view.status}`, details);
    }
  }

  private async runErrorWorkflow(ctx: RunContext, error: ExecutionErrorInfo): Promise<void> {
    const target = ctx.version.definition.settings.errorWorkflow;
    if (!target || ctx.mode === 'error') return;
    try {
      const version = await this.deps.workflows.current(target);
      await this.begin({
        version,
        mode: 'error',
        inline: false,
        input: [
          {
            json: {
              execution: { id: ctx.id, mode: ctx.mode, error, lastNodeExecuted: error.node ?? null },
              workflow: { id: ctx.version.workflowId, name: ctx.version.name },
            },
          },
        ],
      });
    } catch (err) {
      this.logger.warn('error workflow not started', { err, executionId: ctx.id, errorWorkflow: target });
    }
  }

  // -------------------------------------------------------------------------------------------
  // Jobs

  private async runQueued(job: JobContext<{ executionId: string }>): Promise<unknown> {
    const id = job.data.executionId;
    const row = await this.load(id);
    if (!row || row.status !== 'running') return { skipped: row?.status ?? 'missing' };
    return this.continueStored(row, job);
  }

  private async resume(job: JobContext<{ executionId: string }>): Promise<unknown> {
    const id = job.data.executionId;
    // waiting -> running, recording the waiting node's output in the same statement; a re-run of
    // this job (lost worker) finds the row running under its own job id and continues.
    const [row] = rowsOf(
      await this.deps.db.query(
        `WITH old AS (
           SELECT id, resume_state, status FROM engine.executions
           WHERE id = $1 AND (status = 'waiting' OR (status = 'running' AND job_id = $2)) FOR UPDATE
         ), seq AS (
           SELECT coalesce(max(seq) + 1, 0) AS next FROM engine.execution_nodes WHERE execution_id = $1
         ), n AS (
           INSERT INTO engine.execution_nodes (execution_id, node_name, run_index, seq, node_type, status, started_at, duration_ms, tries, output)
           SELECT $1, old.resume_state->>'node', coalesce((old.resume_state->>'runIndex')::int, 0), seq.next, $3, 'success', (old.resume_state->>'since')::timestamptz,
                  greatest(0, round(extract(epoch FROM (now() - (old.resume_state->>'since')::timestamptz)) * 1000))::int, 1,
                  jsonb_build_array(CASE WHEN old.resume_state ? 'resumeData'
                                         THEN jsonb_build_array(jsonb_build_object('json', old.resume_state->'resumeData'))
                                         ELSE old.resume_state->'items' END)
           FROM old, seq WHERE old.status = 'waiting'
           ON CONFLICT (execution_id, node_name, run_index) DO UPDATE SET output = EXCLUDED.output, status = 'success', duration_ms = EXCLUDED.duration_ms
         ), l AS (
           INSERT INTO engine.execution_logs (execution_id, level, node, message)
           SELECT $1, 'info', old.resume_state->>'node', 'Resumed' FROM old WHERE old.status = 'waiting'
         )
         UPDATE engine.executions e SET status = 'running', resume_state = NULL, wait_till = NULL, job_id = $2,
                heartbeat_at = now(), updated_at = now()
         FROM old WHERE e.id = old.id
         RETURNING e.*`,
        [id, job.id, 'engine.wait'],
      ),
    );
    if (!row) return { skipped: true };
    await this.publish(id, 'running');
    return this.continueStored(row, job);
  }

  /** Runs a stored execution on from the node outputs it has recorded (queued, resumed or re-run after a lost worker). */
  private async continueStored(row: any, job: JobContext<{ executionId: string }>): Promise<unknown> {
    const version = await this.deps.workflows.version(row.workflow_id, row.workflow_version);
    const { done, stored: storedRuns, nextSeq } = await this.loadDone(row.id);
    const view = await this.run({
      id: row.id,
      version,
      mode: row.mode,
      input: row.input,
      startNode: row.start_node,
      startedAt: row.started_at,
      done,
      storedRuns,
      seq: nextSeq,
      inline: false,
      stored: true,
      depth: 0,
      signal: job.signal,
      meta: { originalExecutionId: row.original_execution_id, parentExecutionId: row.parent_execution_id, webhookId: row.webhook_id },
      notify: row.notify ?? null,
    });
    return { status: view.status };
  }

  /** A resume-URL call: the request becomes the waiting node's item; the resume job continues. */
  async resumeByWebhook(executionId: string, data: Record<string, unknown>): Promise<'resumed' | 'not_waiting'> {
    if (!UUID.test(executionId)) return 'not_waiting';
    const resumed = await this.deps.db.transaction(async (m) => {
      // A key of its own: an earlier resume job of this execution may still be finishing; the update below lets one call resume.
      const jobId = await this.deps.queue.enqueue(RESUME_JOB, { executionId }, { key: `${RESUME_JOB}:${executionId}:${randomUUID()}`, maxAttempts: 2 }, m);
      const rows = rowsOf(
        await m.query(
          `UPDATE engine.executions SET resume_state = resume_state || jsonb_build_object('resumeData', $2::jsonb), job_id = $3, updated_at = now()
           WHERE id = $1 AND status = 'waiting' AND (resume_state->>'webhook')::boolean AND NOT resume_state ? 'resumeData'
           RETURNING id`,
          [executionId, JSON.stringify(data), jobId],
        ),
      );
      if (!rows.length) throw new NotWaiting();
      return true;
    }).catch((err) => {
      if (err instanceof NotWaiting) return false;
      throw err;
    });
    if (resumed) this.wakeQueue(RESUME_JOB);
    return resumed ? 'resumed' : 'not_waiting';
  }

  /** Marks an execution whose job the queue gave up on (lost worker, job timeout) as failed. */
  private async failLost(executionId: string, jobId: string, reason: string): Promise<void> {
    const error: ExecutionErrorInfo = { code: 'EXECUTION_FAILED', message: `The execution stopped: ${reason}`, details: { reason: 'worker_lost' } };
    const rows = rowsOf(
      await this.deps.db.query(
        `UPDATE engine.executions SET status = 'error', error = $3, current_node = NULL, resume_state = NULL, wait_till = NULL, updated_at = now()
         WHERE id = $1 AND job_id = $2 AND status IN ('running','waiting') RETURNING id, notify`,
        [executionId, jobId, JSON.stringify(error)],
      ),
    );
    if (rows.length) {
      await this.publish(executionId, 'error');
      await this.notifyStored(executionId, rows[0].notify);
    }
  }

  /** Announces the stored state of an execution changed outside a run (lost worker, stale run). */
  async notifyStored(executionId: string, notify: NotifyConfig | null | undefined): Promise<void> {
    if (!notify || !this.deps.notifier) return;
    const view = await this.view(executionId);
    if (view) await this.deps.notifier.emit(notify, eventFor(view.status), view);
  }

  // -------------------------------------------------------------------------------------------
  // Cancel

  /** Cancels a running or waiting execution; the process running it stops between nodes and aborts the current one. */
  async cancel(executionId: string, reason?: string | null): Promise<{ previous: ExecutionStatus } | null> {
    const message = reason ? `Execution canceled: ${reason.slice(0, 1000)}` : 'Execution canceled';
    const [row] = rowsOf(
      await this.deps.db.query(
        `WITH old AS (SELECT id, status, job_id FROM engine.executions WHERE id = $1 AND status IN ('running','waiting') FOR UPDATE),
         l AS (INSERT INTO engine.execution_logs (execution_id, level, message) SELECT id, 'warn', $2 FROM old)
         UPDATE engine.executions e SET status = 'canceled', current_node = NULL, resume_state = NULL, wait_till = NULL, updated_at = now()
         FROM old WHERE e.id = old.id
         RETURNING old.status AS previous, old.job_id`,
        [executionId, message],
      ),
    );
    if (!row) return null;
    this.local.get(executionId)?.controller.abort(new ExecutionStop('canceled', 'The execution was canceled'));
    await this.deps.events.publish(EXECUTION_CANCEL, { executionId });
    if (row.job_id) await this.deps.queue.cancel(row.job_id, 'execution canceled');
    // Sub-executions started by this one stop with it.
    const children = await this.deps.db.query(
      `SELECT id FROM engine.executions WHERE parent_execution_id = $1 AND status IN ('running','waiting')`,
      [executionId],
    );
    for (const c of children) await this.cancel(c.id);
    await this.publish(executionId, 'canceled');
    return { previous: row.previous };
  }

  // -------------------------------------------------------------------------------------------
  // Reading

  async load(id: string): Promise<any | null> {
    if (!UUID.test(id)) return null;
    const [row] = await this.deps.db.query(`SELECT e.*, w.name AS workflow_name FROM engine.executions e JOIN engine.workflows w ON w.id = e.workflow_id WHERE e.id = $1`, [id]);
    return row ?? null;
  }

  async view(id: string): Promise<ExecutionView | null> {
    if (!UUID.test(id)) return null;
    const [row] = await this.deps.db.query(
      `SELECT ${EXECUTION_COLUMNS}, w.name AS workflow_name FROM engine.executions e JOIN engine.workflows w ON w.id = e.workflow_id WHERE e.id = $1`,
      [id],
    );
    return row ? this.toView(row) : null;
  }

  toView(row: any): ExecutionView {
    return toView(row, (id) => this.resumeUrl(id));
  }

  private write(ctx: RunContext, pending: Pending, set: RowUpdate, manager?: EntityManager): Promise<any | null> {
    return writeExecution(manager ?? this.deps.db, ctx, pending, set);
  }

  columns(): string {
    return EXECUTION_COLUMNS;
  }

  /**
   * The runs an execution has stored: `done`, each node's last output (the legacy order runs a
   * node once), and `stored`, every run by run index with the node's context after it (v1 replay).
   */
  private async loadDone(id: string): Promise<{ done: Map<string, Item[][]>; stored: Map<string, StoredRun[]>; nextSeq: number }> {
    const rows = await this.deps.db.query(
      `SELECT node_name, run_index, seq, output, state FROM engine.execution_nodes WHERE execution_id = $1 AND output IS NOT NULL ORDER BY seq`,
      [id],
    );
    const done = new Map<string, Item[][]>();
    const stored = new Map<string, StoredRun[]>();
    let nextSeq = 0;
    for (const r of rows) {
      done.set(r.node_name, r.output);
      let runs = stored.get(r.node_name);
      if (!runs) stored.set(r.node_name, (runs = []));
      runs[r.run_index] = { output: r.output, state: r.state };
      nextSeq = Math.max(nextSeq, r.seq + 1);
    }
    return { done, stored, nextSeq };
  }

  private gone(ctx: RunContext): ExecutionView {
    return {
      id: ctx.id,
      workflowId: ctx.version.workflowId,
      workflowName: ctx.version.name,
      workflowVersion: ctx.version.version,
      status: 'canceled',
      mode: ctx.mode,
      progress: { nodesCompleted: 0, nodesTotal: ctx.version.definition.nodes.length, currentNode: null },
      result: null,
      error: null,
      startedAt: ctx.startedAt,
      finishedAt: new Date(),
      failedAt: null,
      canceledAt: new Date(),
      durationMs: null,
      waitTill: null,
      resumeUrl: null,
      ...ctx.meta,
    };
  }

  /**
   * The queue announces a job when it is enqueued, which inside a transaction is before the
   * commit: the workers would only find it at their next poll. Announce it again once committed.
   */
  /** After committing a transaction given as `manager` to `begin`: let the workers know. */
  wake(): void {
    this.wakeQueue(EXECUTE_JOB);
  }

  private wakeQueue(name: string): void {
    void this.deps.events.publish(QUEUE_WAKEUP, { name }).catch(() => undefined);
  }

  async publish(executionId: string, status: ExecutionStatus): Promise<void> {
    await this.deps.events.publish(EXECUTION_UPDATED, { executionId, status }).catch((err) => this.logger.warn('execution event not published', { err }));
  }

  private startHeartbeat(): void {
    if (this.heartbeat) return;
    this.heartbeat = setInterval(() => {
      const ids = [...this.local.entries()].filter(([, v]) => v.inline).map(([id]) => id);
      if (!ids.length) {
        clearInterval(this.heartbeat);
        this.heartbeat = undefined;
        return;
      }
      this.deps.db
        .query(`UPDATE engine.executions SET heartbeat_at = now() WHERE id = ANY($1::uuid[]) AND status = 'running'`, [ids])
        .catch((err) => this.logger.warn('execution heartbeat failed', { err }));
    }, HEARTBEAT_MS);
    this.heartbeat.unref();
  }
}

class NotWaiting extends Error {}


