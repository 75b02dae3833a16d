import { randomUUID } from 'node:crypto';
import { withTransaction, type Tx } from '../../kernel/db/transaction';
import { rowsOf } from '../../kernel/db/rows';
import { UUID } from '../../kernel/ids';
import type { JobAttempt, JobContext, Queue } from '../../kernel/queue';
import type { ExecutionErrorInfo } from './executor';
import { eventFor, type NotifyConfig } from './execution.notify';
import { publishUpdate, type RunnerDeps } from './execution.context';
import type { ExecutionReads } from './execution.reads';
import type { ExecutionRuns } from './execution.run';
import { JOB } from '../../kernel/topics';

/**
 * The queue's side of executions: the `engine.execute` job runs a queued execution, the
 * `engine.resume` job continues a waiting one (its timer ran out, or its resume URL was called),
 * both from the node outputs stored so far, in any process and also after a restart. A job the
 * queue gives up on (lost worker, job timeout) fails its execution.
 */
export class ExecutionJobs {
  constructor(
    private readonly deps: Pick<RunnerDeps, 'db' | 'queue' | 'events' | 'logger' | 'workflows' | 'notifier'>,
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
    await publishUpdate(this.deps, id, 'running');
    return this.continueStored(row, job);
  }

  /** Runs a stored execution on from the node outputs it has recorded (queued, resumed or re-run after a lost worker). */
  private async continueStored(row: any, job: JobContext<{ executionId: string }>): Promise<unknown> {
    const version = await this.deps.workflows.version(row.workflow_id, row.workflow_version);
    const { done, stored: storedRuns, nextSeq } = await this.reads.loadDone(row.id);
    const view = await this.runs.run({
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
    const resumed = await withTransaction(this.deps.db, async (tx) => {
      const m = tx.manager;
      // A key of its own: an earlier resume job of this execution may still be finishing; the update below lets one call resume.
      const jobId = await this.deps.queue.enqueue(JOB.resume, { executionId }, { key: `${JOB.resume}:${executionId}:${randomUUID()}`, maxAttempts: 2 }, tx);
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
      await publishUpdate(this.deps, executionId, 'error');
      await this.notifyStored(executionId, rows[0].notify);
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
