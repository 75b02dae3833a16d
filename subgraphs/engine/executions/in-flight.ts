import type { Queryable } from '../../../kernel/db/rows';
import { withTransaction, type Tx } from '../../../kernel/db/transaction';
import { compile, type WorkflowExecutor, type ExecutionErrorInfo, type LogEntry, type Progress, type RunOutcome } from '../executor';
import type { Item } from '../expressions';
import { BudgetExceeded, checkRunData, durationLimit, Yielder, type ResumeWebhookOptions, WebhookFile, WorkflowStaticData } from '../nodes';
import { staticDataStore } from './static-data.store';
import { eventFor } from './notify';
import { ExecutionStop, publishUpdate, type RunContext, type RunnerDeps } from './context';
import type { ExecutionChildren } from './children';
import type { ExecutionReads } from './reads';
import { BinaryKeeper } from './binary';
import {
  heartbeat,
  insertFinished,
  nodeRow,
  writeExecution,
  type ExecutionView,
  type ExecutionViewRow,
  type FinishedRun,
  type Pending,
  type RowUpdate,
} from './writes.store';
import { grouped } from '../../../kernel/db/grouped';
import { JOB } from '../../../kernel/topics';

/**
 * The executions running in this process: one run from its start (or its stored node outputs)
 * until it stops, its writes batched (a slow node flushes them first; runs that finish at their
 * first write are grouped into one statement), and how it ends — the final row, the `waiting`
 * state and its resume job, or a worker stop that hands the job back.
 * Inline runs heartbeat so that a process dying mid-run leaves no execution `running` forever;
 * `abort` reaches a run of this process (cancel, the cross-process cancel signal).
 */

// n8n's Execute Workflow too: a sub-execution's row refers to this one's, which must be written first.
/** n8n keeps the static data of production runs only. */
const STATIC_DATA_NOT_KEPT = new Set(['manual', 'test']);

const SLOW_TYPES = new Set([
  'engine.httpRequest',
  'engine.code',
  'engine.executeWorkflow',
  'engine.wait',
  'engine.agent',
  'engine.prompt',
  'n8n-nodes-base.executeWorkflow',
  'n8n-nodes-base.wait',
]);
const FLUSH_AFTER_MS = 50;
const MAX_FLUSH_AFTER_MS = 1000;
/**
 * A run not yet stored is first written by time only once it has lasted this long (or at a slow
 * node): a run that ends sooner is written once, grouped with others. Under load a short run's
 * nodes wait for the CPU (or a sandbox process) longer than FLUSH_AFTER_MS, and writing each such
 * run twice, its end apart from the others', made the load heavier still.
 */
const FIRST_FLUSH_AFTER_MS = 1000;
const HEARTBEAT_MS = 10_000;

/** What a budget crossed by the input's files names as the node. */
function triggerOf(ctx: RunContext): { name: string; type: string } {
  const node = ctx.version.definition.nodes.find((n) => n.name === ctx.startNode);
  return { name: ctx.startNode ?? 'input', type: node?.type ?? 'input' };
}

/** An item whose files could not be kept (a budget crossed as the run stopped): its json only. */
function withoutBinary(item: Item): Item {
  const { binary: _binary, ...rest } = item;
  return rest;
}

interface ResumeState {
  node: string;
  /** The waiting node's run index (v1 workflows: a wait inside a loop). */
  runIndex?: number;
  /** The waiting node's type, recorded with its run when it resumes (engine.wait when absent: states written before it was kept). */
  nodeType?: string;
  items: Item[];
  webhook: boolean;
  /** How the resume URL takes its call (the Wait node's webhook options). */
  resume?: ResumeWebhookOptions;
  until: string | null;
  since: string;
  resumeData?: Record<string, unknown>;
}

export class ExecutionRuns {
  private readonly local = new Map<string, { controller: AbortController; inline: boolean }>();
  private heartbeat?: NodeJS.Timeout;

  constructor(
    private readonly deps: Pick<RunnerDeps, 'db' | 'queue' | 'events' | 'logger' | 'notifier' | 'budgets' | 'variables' | 'binaries'>,
    private readonly executor: WorkflowExecutor,
    private readonly reads: ExecutionReads,
    private readonly children: ExecutionChildren,
  ) {}

  /** Stops a run of this process, if it runs here: it stops between nodes and aborts the current one. */
  abort(executionId: string, reason: ExecutionStop): void {
    this.local.get(executionId)?.controller.abort(reason);
  }

  async run(ctx: RunContext, firstLogs: LogEntry[] = []): Promise<ExecutionView> {
    const controller = new AbortController();
    const onOuterAbort = () => controller.abort(ctx.signal!.reason);
    if (ctx.signal?.aborted) controller.abort(ctx.signal.reason);
    ctx.signal?.addEventListener('abort', onOuterAbort, { once: true });
    const { budgets } = this.deps;
    const yielder = new Yielder();
    const segmentStart = performance.now();
    const time = durationLimit(budgets, ctx.version.definition.settings);
    // What is left of it: the stretches before earlier waits counted.
    const timer = setTimeout(
      () => {
        const ran = ctx.ranMs + Math.round(performance.now() - segmentStart);
        const value = time.setBy === 'settings.executionTimeout' ? Math.round(ran / 1000) : ran;
        const unit = time.setBy === 'settings.executionTimeout' ? 's' : 'ms';
        const budget = new BudgetExceeded(
          'maxDurationMs',
          time.limit,
          value,
          `The execution ran past its time limit of ${time.limit} ${unit} (${time.setBy})`,
          time.setBy,
        );
        controller.abort(new ExecutionStop('timeout', budget.message, budget));
      },
      Math.max(0, time.ms - ctx.ranMs),
    );
    this.local.set(ctx.id, { controller, inline: ctx.inline });
    if (ctx.inline) this.startHeartbeat();

    const pending: Pending = { rows: [], logs: [...firstLogs], since: firstLogs.length ? Date.now() : 0, clear: [] };
    let progress: Progress = { nodesCompleted: ctx.done.size, nodesTotal: ctx.version.definition.nodes.length, currentNode: null };
    // Sealing large contexts (a loop's items) costs the same at every write: writes due only by
    // time wait five times what the last seal took (at most a second), so that a tight loop spends
    // most of its time looping, not serialising its context.
    let flushAfterMs = FLUSH_AFTER_MS;
    const flush = async (currentNode: string | null) => {
      const started = performance.now();
      this.seal(ctx, pending, false);
      flushAfterMs = Math.min(MAX_FLUSH_AFTER_MS, Math.max(FLUSH_AFTER_MS, 5 * (performance.now() - started)));
      if (await this.write(ctx, pending, { nodes_completed: progress.nodesCompleted, current_node: currentNode }))
        await publishUpdate(this.deps, ctx.id, 'running');
    };

    let outcome: RunOutcome;
    let staticData: WorkflowStaticData | undefined;
    const resumeUrl = (id: string) => this.reads.resumeUrl(id);
    const binaries = this.binaries(ctx);
    try {
      // The input's files are kept with the first write, as the trigger's.
      if (binaries && !ctx.stored && !ctx.storedInput) ctx.storedInput = await binaries.items(ctx.input, triggerOf(ctx));
      const compiled = compile(ctx.version.definition);
      const uses = storedInputsOf(ctx.version.definition);
      const vars = uses.vars ? ((await this.deps.variables?.()) ?? {}) : {};
      const stored =
        uses.staticData || ctx.mode === 'manual' ? await staticDataStore.read(this.deps.db, ctx.version.workflowId) : { staticData: {}, pinData: null };
      staticData = new WorkflowStaticData(stored.staticData);
      // As n8n: pinned data replaces its nodes in manual runs only, never in production runs.
      const pinned = ctx.mode === 'manual' && stored.pinData ? new Map(Object.entries(stored.pinData)) : undefined;
      outcome = await this.executor.run({
        compiled,
        pinned,
        vars,
        staticData,
        // The resume URL is an HMAC: computed only when an expression or a wait node asks for it.
        execution: {
          id: ctx.id,
          mode: ctx.mode,
          get resumeUrl() {
            return resumeUrl(ctx.id);
          },
        },
        workflow: { id: ctx.version.workflowId, name: ctx.version.name, active: ctx.version.active, timezone: ctx.version.definition.settings.timezone },
        input: ctx.input,
        startNode: ctx.startNode,
        done: ctx.done,
        stored: ctx.storedRuns,
        budgets,
        signal: controller.signal,
        services: this.children.services(ctx),
        hooks: {
          beforeNode: async (node, p) => {
            progress = p;
            const slow = SLOW_TYPES.has(node.type);
            const due = ctx.stored ? flushAfterMs : FIRST_FLUSH_AFTER_MS;
            if (slow || (pending.since && Date.now() - pending.since > due)) await flush(node.name);
          },
          afterNode: async (run, p) => {
            progress = p;
            // Serialising a large output holds the event loop: other work gets its turn first.
            await yielder.maybe();
            // Measured before it is kept: a run whose output would cross the budget is not stored.
            // The trigger's output is the input, whose text may be known; by a later node it may have been changed in place.
            const known = run.node === ctx.startNode && run.runIndex === 0 ? ctx.known : undefined;
            const output = binaries && run.output ? await binaries.outputs(run.output, { name: run.node, type: run.nodeType }) : run.output;
            const { row, outputBytes } = nodeRow(output === run.output ? run : { ...run, output }, ctx.seq, known);
            checkRunData(ctx.runDataBytes + outputBytes, budgets, { name: run.node, type: run.nodeType });
            ctx.seq++;
            ctx.runDataBytes += outputBytes;
            if (!pending.since) pending.since = Date.now();
            pending.rows.push(row);
          },
          log: (entry) => {
            if (!pending.since) pending.since = Date.now();
            pending.logs.push(entry);
          },
          reply: (reply) => {
            // A file answered is read from the binary store where this run keeps it, not from the item in memory.
            const file = reply.body;
            if (binaries && file instanceof WebhookFile) file.readFrom(async (before) => (await binaries.open(file.binary)) ?? before());
            ctx.onReply?.(reply);
          },
        },
      });
    } catch (err) {
      if (err instanceof BudgetExceeded) {
        outcome = { status: 'error', error: err.info(), nodesExecuted: 0 };
      } else {
        this.deps.logger.error('execution failed unexpectedly', { err, executionId: ctx.id });
        outcome = {
          status: 'error',
          error: { code: 'EXECUTION_FAILED', message: 'The execution failed unexpectedly', details: { reason: 'internal' } },
          nodesExecuted: 0,
        };
      }
    } finally {
      clearTimeout(timer);
      ctx.signal?.removeEventListener('abort', onOuterAbort);
      this.local.delete(ctx.id);
    }
    ctx.ranMs += Math.round(performance.now() - segmentStart);
    // As n8n: kept after production runs only (not manual or test runs), whatever their outcome.
    if (staticData && !STATIC_DATA_NOT_KEPT.has(ctx.mode)) {
      await staticDataStore
        .save(this.deps.db, ctx.version.workflowId, staticData)
        .catch((err) => this.deps.logger.error('workflow static data not saved', { err, executionId: ctx.id }));
    }
    await yielder.maybe();
    this.seal(ctx, pending, true);
    return this.finish(ctx, outcome, pending, progress);
  }

  /**
   * Each node's context goes into the row of its latest pending run (once per write, not once
   * per loop turn) and replaces the context stored with an earlier run, which the write drops:
   * a replay needs only the latest. A context that would cross the run data budget fails the
   * execution; at its last write it is left out instead (nothing continues from it).
   */
  private seal(ctx: RunContext, pending: Pending, last: boolean): void {
    const latest = new Map<string, (typeof pending.rows)[number]>();
    for (const row of pending.rows) if (row.state) latest.set(row.node, row);
    for (const row of pending.rows) if (latest.get(row.node) !== row) delete row.state;
    for (const [node, row] of latest) {
      const json = JSON.stringify(row.state);
      delete row.state;
      const bytes = Buffer.byteLength(json);
      const before = ctx.storedStates.get(node);
      const total = ctx.runDataBytes + bytes - (before?.bytes ?? 0);
      if (last && total > this.deps.budgets.maxRunDataBytes) continue;
      checkRunData(total, this.deps.budgets, { name: node, type: row.type });
      row.json = `${row.json.slice(0, -1)},"state":${json}}`;
      if (before && before.runIndex !== row.runIndex) pending.clear.push({ node_name: node, run_index: before.runIndex });
      ctx.storedStates.set(node, { runIndex: row.runIndex, bytes });
      ctx.runDataBytes = total;
    }
  }

  /** The run's binary keeper (made for its first run in this process), when the engine stores binary data. */
  private binaries(ctx: RunContext): BinaryKeeper | undefined {
    if (!ctx.binaries && this.deps.binaries) ctx.binaries = new BinaryKeeper(this.deps.binaries, ctx.id, this.deps.budgets);
    return ctx.binaries;
  }

  private async finish(ctx: RunContext, outcome: RunOutcome, pending: Pending, progress: Progress): Promise<ExecutionView> {
    const log = (level: LogEntry['level'], message: string) => pending.logs.push({ at: new Date(), level, message });
    const done = { nodes_completed: progress.nodesCompleted, current_node: null };
    let row: ExecutionViewRow | null = null;
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
        if (row) await this.children.runErrorWorkflow(ctx, outcome.error);
        break;
      case 'waiting': {
        const waiting = { name: outcome.node, type: 'engine.wait' };
        const state: ResumeState = {
          node: outcome.node,
          ...(outcome.runIndex ? { runIndex: outcome.runIndex } : {}),
          nodeType: ctx.version.definition.nodes.find((n) => n.name === outcome.node)?.type ?? 'engine.wait',
          // Its files are kept as the nodes' (a resume loads them back with the node's stored output).
          items: ctx.binaries ? await ctx.binaries.items(outcome.items, waiting).catch(() => outcome.items.map(withoutBinary)) : outcome.items,
          webhook: outcome.webhook,
          ...(outcome.resume ? { resume: outcome.resume } : {}),
          until: outcome.until?.toISOString() ?? null,
          since: new Date().toISOString(),
        };
        log('info', outcome.webhook ? 'Execution waiting for its resume URL' : `Execution waiting until ${state.until}`);
        await withTransaction(this.deps.db, async (tx) => {
          const m = tx.manager;
          const jobId = outcome.until
            ? await this.deps.queue.enqueue(
                JOB.resume,
                { executionId: ctx.id },
                {
                  runAt: outcome.until,
                  maxAttempts: 2,
                  timeoutMs: durationLimit(this.deps.budgets, ctx.version.definition.settings).ms + 60_000,
                  // Per wait: a later wait (another Wait node, a loop) is enqueued while this execution's resume job still runs.
                  key: `${JOB.resume}:${ctx.id}:${outcome.node}:${outcome.runIndex}`,
                },
                tx,
              )
            : null;
          row = await this.write(
            ctx,
            pending,
            {
              nodes_completed: progress.nodesCompleted,
              current_node: outcome.node,
              status: 'waiting',
              resume_state: state,
              wait_till: outcome.until,
              job_id: jobId,
              ran_ms: ctx.ranMs,
            },
            m,
          );
        });
        break;
      }
      case 'aborted': {
        const code = (outcome.reason as { code?: string } | undefined)?.code;
        const message = (outcome.reason as Error | undefined)?.message ?? 'aborted';
        if (code === 'timeout') {
          const budget = (outcome.reason as ExecutionStop).budget;
          const error: ExecutionErrorInfo = budget?.info() ?? { code: 'EXECUTION_FAILED', message, details: { reason: 'timeout' } };
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
    const view = row ? this.reads.toView({ ...row, workflow_name: ctx.version.name }) : await this.reads.view(ctx.id);
    if (view) await publishUpdate(this.deps, ctx.id, view.status, row ? { workflowId: row.workflow_id, version: Number(row.version) } : undefined);
    if (row && view && ctx.notify) await this.deps.notifier?.emit(ctx.notify, eventFor(view.status), view);
    return view ?? this.gone(ctx);
  }

  /**
   * A run's write. A run that finishes at its first write (an inline run of fast nodes, the
   * webhook path) is grouped with the other runs finishing at that moment into one statement.
   */
  private write(ctx: RunContext, pending: Pending, set: RowUpdate, manager?: Queryable): Promise<ExecutionViewRow | null> {
    if (!manager && !ctx.stored && set.status && set.status !== 'running' && set.status !== 'waiting') {
      return this.finishedAtOnce({ ctx, pending, set: { ...set, status: set.status } });
    }
    return writeExecution(manager ?? this.deps.db, ctx, pending, set);
  }

  /**
   * A run started by a recorded change (a webhook request answered with its last node) carries that
   * change's audit entry: the group's statement and the entries of the runs it wrote commit together.
   */
  private readonly finishedAtOnce = grouped((runs: readonly FinishedRun[], carried) =>
    carried.some((c) => c?.state === 'pending')
      ? withTransaction(this.deps.db, async (tx) => {
          const written = await insertFinished(tx.manager, runs);
          await tx.carry(carried.filter((_, i) => written[i]));
          return written;
        })
      : insertFinished(this.deps.db, runs),
  );

  /** The view of a run whose row is gone (deleted while it ran): canceled, as it stopped. */
  private gone(ctx: RunContext): ExecutionView {
    return {
      id: ctx.id,
      workflowId: ctx.version.workflowId,
      workflowName: ctx.version.name,
      workflowVersion: ctx.version.version,
      status: 'canceled',
      mode: ctx.mode,
      version: 1,
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

  private startHeartbeat(): void {
    if (this.heartbeat) return;
    this.heartbeat = setInterval(() => {
      const ids = [...this.local.entries()].filter(([, v]) => v.inline).map(([id]) => id);
      if (!ids.length) {
        clearInterval(this.heartbeat);
        this.heartbeat = undefined;
        return;
      }
      heartbeat(this.deps.db, ids).catch((err) => this.deps.logger.warn('execution heartbeat failed', { err }));
    }, HEARTBEAT_MS);
    this.heartbeat.unref();
  }
}

const storedInputs = new WeakMap<object, { vars: boolean; staticData: boolean }>();

/**
 * What a run of this definition reads beyond it: `$vars` and the workflow's static data only where
 * its nodes name them (an expression or code can reach them no other way), so other runs spare
 * those reads; pinned data is read for manual runs only.
 */
function storedInputsOf(definition: { nodes: readonly unknown[] }): { vars: boolean; staticData: boolean } {
  let uses = storedInputs.get(definition);
  if (!uses) {
    const text = JSON.stringify(definition.nodes);
    uses = { vars: text.includes('$vars'), staticData: text.includes('getWorkflowStaticData') };
    storedInputs.set(definition, uses);
  }
  return uses;
}
