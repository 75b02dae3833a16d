import { randomUUID } from 'node:crypto';
import { withTransaction, type Tx } from '../../../kernel/db/transaction';
import type { Queue } from '../../../kernel/queue';
import { compile, chooseStart, WorkflowExecutor } from '../executor';
import { BudgetExceeded, durationLimit, type ExecutionBudgets, type WebhookReply, WebhookFile, webhookFile } from '../nodes';
import { AppError } from '../../../kernel/errors';
import type { BinaryData, Item } from '../expressions';
import type { WorkflowVersion } from '../workflows';
import { BinaryKeeper } from './binary';
import { copyBinaries, type BinaryRow } from './binary.store';
import { ExpressionEngine } from '../expressions';
import type { NotifyConfig } from './types';
import { CODE_LIMITS, EXPRESSION_LIMITS, type CodeRunner, ProcessSandbox } from '../sandbox';
import { ExecutionChildren } from './children';
import { ExecutionStop, publishUpdate, type RunContext, type RunnerDeps, type StartOptions, type Started } from './context';
import { ExecutionReads } from './reads';
import { ExecutionJobs } from './jobs';
import { ExecutionRuns } from './in-flight';
import {
  copyReusedNodes,
  insertQueued,
  requestLogRow,
  type ExecutionRow,
  type ExecutionStatus,
  type ExecutionView,
  type ExecutionViewRow,
} from './writes.store';
import { cancel } from './state.store';
import { executionReads } from './reads.store';
import { JOB, TOPIC } from '../../../kernel/topics';
import { currentTraceId } from '../../../kernel/tracing';

/**
 * Starts and cancels executions and is what the rest of the engine calls. Async runs are
 * `engine.execute` jobs; sync ones run inline, persisted the same way, and heartbeat so a dying
 * process leaves nothing `running`. Fast nodes' writes are batched into the next statement; a node that
 * may take long flushes first. `wait` nodes store the resume state, so any process can resume.
 * The parts (in-flight.ts, children.ts, jobs.ts, reads.ts, context.ts) know only those below them;
 * none imports this file.
 */

export type { ExecutionView, RequestLog } from './writes.store';

export class ExecutionRunner {
  readonly executor: WorkflowExecutor;
  readonly expressions: ExpressionEngine;
  readonly codeSandbox: CodeRunner;
  private readonly reads: ExecutionReads;
  private readonly runs: ExecutionRuns;
  private readonly jobs: ExecutionJobs;

  /** What one execution may use (ENGINE_EXECUTION_MAX_*). */
  get budgets(): ExecutionBudgets {
    return this.deps.budgets;
  }

  constructor(private readonly deps: RunnerDeps) {
    const processes = deps.sandboxProcesses ?? 2;
    this.expressions = new ExpressionEngine(new ProcessSandbox({ ...EXPRESSION_LIMITS, processes }));
    this.codeSandbox = new ProcessSandbox({ ...CODE_LIMITS, processes });
    this.executor = new WorkflowExecutor(this.expressions);
    this.reads = new ExecutionReads(deps);
    const children = new ExecutionChildren(deps, this.executor, this.codeSandbox, (opts) => this.begin(opts));
    this.runs = new ExecutionRuns(deps, this.executor, this.reads, children);
    this.jobs = new ExecutionJobs(deps, this.reads, this.runs);
  }

  /** Job handlers and the cross-process cancel signal. */
  register(queue: Queue): void {
    this.jobs.register(queue);
    this.deps.events.subscribe(TOPIC.executionCancel, (p: { executionId?: string } | undefined) => {
      if (p?.executionId) this.runs.abort(p.executionId, new ExecutionStop('canceled', 'The execution was canceled'));
    });
  }

  // -------------------------------------------------------------------------------------------
  // Starting

  async begin(opts: StartOptions): Promise<Started> {
    const id = opts.id ?? randomUUID();
    const { version } = opts;
    const compiled = compile(version.definition);
    const startNode = opts.startNode !== undefined ? opts.startNode : chooseStart(compiled, opts.mode);
    const meta = {
      originalExecutionId: opts.originalExecutionId ?? null,
      parentExecutionId: opts.parentExecutionId ?? null,
      webhookId: opts.webhookId ?? null,
    };
    const traceId = currentTraceId() ?? null;
    const started = `Execution started (${opts.mode}${opts.originalExecutionId ? `, retry of ${opts.originalExecutionId}` : ''})`;
    const view = (startedAt: Date): ExecutionView => ({
      id,
      workflowId: version.workflowId,
      workflowName: version.name,
      workflowVersion: version.version,
      status: 'running',
      version: 1,
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
      traceId,
      ...meta,
    });

    if (!opts.inline) {
      // Queued: the row, its first log line, the job (and the request's log entry) in one transaction.
      const timeoutMs = durationLimit(this.deps.budgets, version.definition.settings).ms + 60_000;
      // Its input's files are kept before its row is written; a file over its budget refuses the start.
      const stored = await this.storedInput(id, opts.input, startNode, version);
      const store = async (tx: Tx) => {
        const m = tx.manager;
        const jobId = await this.deps.queue.enqueue(
          JOB.execute,
          { executionId: id },
          { timeoutMs, maxAttempts: 2, key: `${JOB.execute}:${id}`, priority: opts.priority ?? 'normal' },
          tx,
        );
        const log = opts.requestLog ? [requestLogRow(opts.requestLog, { status: 'running', error: null }, id)] : [];
        const at = await insertQueued(m, {
          id,
          version,
          mode: opts.mode,
          input: stored.input,
          binaries: stored.binaries,
          startNode,
          runAs: opts.runAs,
          known: opts.known,
          nodesTotal: compiled.order.length,
          meta,
          jobId,
          message: started,
          requestLog: log,
          notify: opts.notify,
          traceId,
        });
        if (opts.reuse) await copyReusedNodes(m, id, opts.reuse.executionId, opts.reuse.nodes);
        // A retry's input and reused outputs refer to the original's files.
        if (opts.originalExecutionId && this.deps.binaries) await copyBinaries(m, id, opts.originalExecutionId);
        await this.deps.notifier?.emit(opts.notify, 'execution.started', view(at), tx);
        // After the COMMIT of this transaction or of the caller's (opts.tx) that it joins.
        tx.afterCommit(() => publishUpdate(this.deps, id, 'running'));
        return at;
      };
      const startedAt = await withTransaction(opts.tx ?? this.deps.db, store).catch(async (err: unknown) => {
        // Its own transaction failed (the workflow deleted meanwhile): the input's files are nobody's.
        // Within a caller's transaction they stay: whether it commits is the caller's to know.
        if (!opts.tx && stored.binaries?.length) await this.deps.binaries?.discard(stored.binaries);
        throw err;
      });
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
      runAs: opts.runAs,
      known: opts.known,
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
      traceId,
      notify: opts.notify ?? null,
      ranMs: 0,
      runDataBytes: 0,
      storedStates: new Map(),
    };
    if (opts.notify) await this.deps.notifier?.emit(opts.notify, 'execution.started', view(startedAt));
    return { view: view(startedAt), done: this.runs.run(ctx, [{ at: startedAt, level: 'info', message: started }]) };
  }

  /** A queued execution's input as its row keeps it, and the binary rows its insert writes. */
  private async storedInput(id: string, input: Item[], startNode: string | null, version: WorkflowVersion): Promise<{ input: Item[]; binaries?: BinaryRow[] }> {
    if (!this.deps.binaries) return { input };
    const keeper = new BinaryKeeper(this.deps.binaries, id, this.deps.budgets);
    const node = { name: startNode ?? 'input', type: version.definition.nodes.find((n) => n.name === startNode)?.type ?? 'input' };
    try {
      return { input: await keeper.items(input, node), binaries: keeper.take() };
    } catch (err) {
      if (err instanceof BudgetExceeded) throw new AppError('PAYLOAD_TOO_LARGE', err.message, err.info().details);
      throw err;
    }
  }

  // -------------------------------------------------------------------------------------------
  // Cancel

  /** Cancels a running or waiting execution; the process running it stops between nodes and aborts the current one. */
  /** Tells the execution's list subscribers it is gone (one version above its last); a failure to is logged, not thrown. */
  async announceDeletion(executionId: string, row: { status: string; workflowId: string; version: number }): Promise<void> {
    await this.deps.events
      .publish(TOPIC.executionUpdated, { executionId, ...row, version: row.version + 1, deleted: true })
      .catch((err: unknown) => this.deps.logger.warn('execution deletion not published', { err, executionId }));
  }

  async cancel(executionId: string, reason?: string | null): Promise<{ previous: ExecutionStatus } | null> {
    const message = reason ? `Execution canceled: ${reason.slice(0, 1000)}` : 'Execution canceled';
    const row = await cancel(this.deps.db, executionId, message);
    if (!row) return null;
    this.runs.abort(executionId, new ExecutionStop('canceled', 'The execution was canceled'));
    await this.deps.events.publish(TOPIC.executionCancel, { executionId });
    if (row.job_id) await this.deps.queue.cancel(row.job_id, 'execution canceled');
    // Sub-executions started by this one stop with it.
    for (const child of await executionReads.activeChildren(this.deps.db, executionId)) await this.cancel(child);
    await publishUpdate(this.deps, executionId, 'canceled');
    return { previous: row.previous };
  }

  // -------------------------------------------------------------------------------------------
  // What the rest of the engine asks of the parts (documented where they are done)

  resumeByWebhook(
    executionId: string,
    data: Record<string, unknown>,
    files?: { node: string; binary: Record<string, BinaryData> },
    inline?: { onReply?: (reply: WebhookReply) => void },
  ): Promise<{ outcome: 'resumed'; done?: Promise<ExecutionView> } | { outcome: 'not_waiting' }> {
    return this.jobs.resumeByWebhook(executionId, data, files, inline);
  }

  /**
   * The file `key` of the first item a node's latest run output, to send as it is read from the
   * binary store (an answer in lastNode mode); `no_item` or `no_binary` when there is none.
   */
  async firstItemFile(executionId: string, node: string, key: string): Promise<WebhookFile | 'no_item' | 'no_binary'> {
    const first = await executionReads.firstItemBinary(this.deps.db, executionId, node);
    if (!first.item) return 'no_item';
    const binary = first.binary?.[key];
    if (!binary) return 'no_binary';
    const store = this.deps.binaries;
    const file = webhookFile({ json: {}, binary: { [key]: binary } }, key);
    if (binary.id && store)
      file.readFrom(async (before) => {
        const kept = await store.open(executionId, binary.id!);
        return kept ? kept.body : before();
      });
    return file;
  }

  notifyStored(executionId: string, notify: NotifyConfig | null | undefined): Promise<void> {
    return this.jobs.notifyStored(executionId, notify);
  }

  checkResumeToken(executionId: string, token: string): boolean {
    return this.reads.checkResumeToken(executionId, token);
  }

  load(id: string): Promise<ExecutionRow | null> {
    return this.reads.load(id);
  }

  view(id: string): Promise<ExecutionView | null> {
    return this.reads.view(id);
  }

  toView(row: ExecutionViewRow): ExecutionView {
    return this.reads.toView(row);
  }

  publish(executionId: string, status: ExecutionStatus): Promise<void> {
    return publishUpdate(this.deps, executionId, status);
  }
}
