import { randomUUID } from 'node:crypto';
import { withTransaction, type Tx } from '../../../kernel/db/transaction';
import { UUID } from '../../../kernel/ids';
import type { JobAttempt, JobContext, Queue } from '../../../kernel/queue';
import type { ExecutionErrorInfo } from '../executor';
import { checkBinary, type WebhookReply } from '../nodes';
import { eventFor } from './notify';
import type { NotifyConfig } from './types';
import { publishUpdate, type RunnerDeps } from './context';
import type { ExecutionReads } from './reads';
import type { ExecutionRuns } from './in-flight';
import { BinaryKeeper } from './binary';
import { insertBinaries, type BinaryRow } from './binary.store';
import type { BinaryData } from '../expressions';
import type { ExecutionRow, ExecutionView } from './writes.store';
import { claimResume, failLost, setResumeData } from './state.store';
import { JOB } from '../../../kernel/topics';

/**
 * The queue's side of executions: the `engine.execute` job runs a queued execution, the
 * `engine.resume` job continues a waiting one (its timer ran out, or its resume URL was called),
 * both from the node outputs stored so far, in any process and also after a restart. A job the
 * queue gives up on (lost worker, job timeout) fails its execution.
 */
export class ExecutionJobs {
  constructor(
    private readonly deps: Pick<RunnerDeps, 'db' | 'queue' | 'events' | 'logger' | 'workflows' | 'notifier' | 'budgets' | 'binaries'>,
    private readonly reads: ExecutionReads,
    private readonly runs: ExecutionRuns,
  ) {}

  /** The two job handlers; both fail their execution once the queue stops retrying. */
  register(queue: Queue): void {
    const onFinalFailure = async (ctx: JobAttempt, error: { code: string; message: string }) => {
      await this.failLost((ctx.data as { executionId: string }).executionId, ctx.id, `${error.code}: ${error.message}`);
    };
    queue.register(JOB.execute, (ctx) => this.runQueued(ctx), { onFinalFailure });
    queue.register(JOB.resume, (ctx) => this.resume(ctx), { onFinalFailure });
  }

  private async runQueued(job: JobContext<{ executionId: string }>): Promise<unknown> {
    const id = job.data.executionId;
    const row = await this.reads.load(id);
    if (!row || row.status !== 'running') return { skipped: row?.status ?? 'missing' };
    return { status: (await this.continueStored(row, { signal: job.signal })).status };
  }

  private async resume(job: JobContext<{ executionId: string }>): Promise<unknown> {
    const id = job.data.executionId;
    // waiting -> running, recording the waiting node's output in the same statement; a re-run of
    // this job (lost worker) finds the row running under its own job id and continues.
    const row = await claimResume(this.deps.db, id, job.id, 'engine.wait');
    if (!row) return { skipped: true };
    await publishUpdate(this.deps, id, 'running');
    return { status: (await this.continueStored(row, { signal: job.signal })).status };
  }

  /** Runs a stored execution on from the node outputs it has recorded (queued, resumed or re-run after a lost worker). */
  private async continueStored(
    row: ExecutionRow,
    how: { signal?: AbortSignal; inline?: boolean; onReply?: (reply: WebhookReply) => void },
  ): Promise<ExecutionView> {
    const version = await this.deps.workflows.version(row.workflow_id, row.workflow_version);
    const { done, stored: storedRuns, nextSeq, runDataBytes, storedStates } = await this.reads.loadDone(row.id);
    // Its files back in memory: the input's and those of the outputs it continues from (the stored runs share their lists).
    const binaries = this.deps.binaries ? new BinaryKeeper(this.deps.binaries, row.id, this.deps.budgets, await this.deps.binaries.total(row.id)) : undefined;
    await binaries?.load([row.input, ...[...done.values()].flat()]);
    return this.runs.run({
      id: row.id,
      version,
      mode: row.mode,
      input: row.input,
      startNode: row.start_node,
      runAs: row.run_as,
      startedAt: row.started_at,
      done,
      storedRuns,
      seq: nextSeq,
      inline: how.inline ?? false,
      stored: true,
      depth: 0,
      signal: how.signal,
      onReply: how.onReply,
      meta: { originalExecutionId: row.original_execution_id, parentExecutionId: row.parent_execution_id, webhookId: row.webhook_id },
      notify: row.notify ?? null,
      ranMs: row.ran_ms,
      runDataBytes,
      storedStates,
      binaries,
    });
  }

  /**
   * A resume-URL call: the request becomes the waiting node's item (its files, checked against the
   * binary budgets, kept as the nodes' are); the resume job continues, in any process. With
   * `inline` the run continues here instead, at once (its answer goes to the caller: a Wait that
   * answers from the workflow), and `done` is the execution once it stops running; such a run
   * heartbeats as an inline start does. A BudgetExceeded when a file is over them, and then
   * nothing is kept.
   */
  async resumeByWebhook(
    executionId: string,
    data: Record<string, unknown>,
    files?: { node: string; binary: Record<string, BinaryData> },
    inline?: { onReply?: (reply: WebhookReply) => void },
  ): Promise<{ outcome: 'resumed'; done?: Promise<ExecutionView> } | { outcome: 'not_waiting' }> {
    if (!UUID.test(executionId)) return { outcome: 'not_waiting' };
    const store = this.deps.binaries;
    let kept: Record<string, BinaryData> | undefined;
    const rows: BinaryRow[] = [];
    if (files) {
      kept = {};
      let total = store ? await store.total(executionId) : 0;
      const node = { name: files.node, type: 'n8n-nodes-base.wait' };
      for (const [key, b] of Object.entries(files.binary)) {
        const bytes = Buffer.from(b.data, 'base64');
        total += bytes.length;
        checkBinary(bytes.length, total, this.deps.budgets, node, key);
      }
      try {
        for (const [key, b] of Object.entries(files.binary)) {
          if (!store) {
            kept[key] = b;
            continue;
          }
          const id = randomUUID();
          rows.push(await store.keep(executionId, id, Buffer.from(b.data, 'base64'), { mimeType: b.mimeType, fileName: b.fileName }));
          kept[key] = { ...b, data: '', id };
        }
      } catch (err) {
        // A file that could not be kept: those kept before it go too.
        if (store && rows.length) await store.discard(rows);
        throw err;
      }
    }
    const resumed = await withTransaction(this.deps.db, async (tx) => {
      const m = tx.manager;
      // A key of its own: an earlier resume job of this execution may still be finishing; the update below lets one call resume.
      const jobId = inline
        ? null
        : await this.deps.queue.enqueue(JOB.resume, { executionId }, { key: `${JOB.resume}:${executionId}:${randomUUID()}`, maxAttempts: 2 }, tx);
      if (!(await setResumeData(m, executionId, data, jobId, kept))) throw new NotWaiting();
      if (rows.length) await insertBinaries(m, rows);
      if (!inline) return true;
      // Inline: claimed in the same transaction, so that no timer's job takes it meanwhile; no job owns it.
      const claimed = await claimResume(m, executionId, null, 'engine.wait');
      if (!claimed) throw new NotWaiting();
      return claimed;
    }).catch(async (err) => {
      // Nothing was recorded (another call resumed it, a cancel landed first, or the write failed): its files go.
      if (store && rows.length) await store.discard(rows);
      if (err instanceof NotWaiting) return false;
      throw err;
    });
    if (!resumed) return { outcome: 'not_waiting' };
    if (resumed === true) return { outcome: 'resumed' };
    await publishUpdate(this.deps, executionId, 'running');
    return { outcome: 'resumed', done: this.continueStored(resumed, { inline: true, onReply: inline?.onReply }) };
  }

  /** Marks an execution whose job the queue gave up on (lost worker, job timeout) as failed. */
  private async failLost(executionId: string, jobId: string, reason: string): Promise<void> {
    const error: ExecutionErrorInfo = { code: 'EXECUTION_FAILED', message: `The execution stopped: ${reason}`, details: { reason: 'worker_lost' } };
    const failed = await failLost(this.deps.db, executionId, jobId, error);
    if (failed) {
      await publishUpdate(this.deps, executionId, 'error');
      await this.notifyStored(executionId, failed.notify);
    }
  }

  /** Announces the stored state of an execution changed outside a run (lost worker, stale run). */
  async notifyStored(executionId: string, notify: NotifyConfig | null | undefined): Promise<void> {
    if (!notify || !this.deps.notifier) return;
    const view = await this.reads.view(executionId);
    if (view) await this.deps.notifier.emit(notify, eventFor(view.status), view);
  }
}

class NotWaiting extends Error {}
