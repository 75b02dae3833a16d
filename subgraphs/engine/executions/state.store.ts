import { exec, one, rows, type Queryable } from '../../../kernel/db/rows';
import type { ExecutionErrorInfo } from '../executor';
import type { NotifyConfig } from './types';
import type { ExecutionRow, ExecutionStatus } from './writes.store';

/**
 * Changes of an execution's row made outside a run (which writes through writes.store.ts):
 * cancel, resume (by its job or its URL), the failure of a job the queue gave up on, and the
 * engine's maintenance (pruning, inline runs whose process stopped heartbeating).
 */

/**
 * One statement: a running or waiting execution becomes canceled (locked first), with a log
 * line. Returns its previous status and job, or undefined when it was neither.
 */
export function cancel(q: Queryable, executionId: string, message: string): Promise<{ previous: ExecutionStatus; job_id: string | null } | undefined> {
  return one<{ previous: ExecutionStatus; job_id: string | null }>(
    q,
    `WITH old AS (SELECT id, status, job_id FROM engine.executions WHERE id = $1 AND status IN ('running','waiting') FOR UPDATE),
     l AS (INSERT INTO engine.execution_logs (execution_id, level, message) SELECT id, 'warn', $2 FROM old)
     UPDATE engine.executions e SET status = 'canceled', current_node = NULL, resume_state = NULL, wait_till = NULL, updated_at = now()
     FROM old WHERE e.id = old.id
     RETURNING old.status AS previous, old.job_id`,
    [executionId, message],
  );
}

/**
 * One statement: waiting -> running under the resume job `jobId`, recording the waiting node's
 * output (its type as the state records it, else `nodeType`) and a log line; a re-run of the job (lost worker) finds the row
 * running under its own job id and takes it as it is. Returns the row, or undefined.
 */
export function claimResume(q: Queryable, executionId: string, jobId: string | null, nodeType: string): Promise<ExecutionRow | undefined> {
  return one<ExecutionRow>(
    q,
    `WITH old AS (
       SELECT id, resume_state, status FROM engine.executions
       WHERE id = $1 AND (status = 'waiting' OR (status = 'running' AND job_id = $2)) FOR UPDATE
     ), seq AS (
       SELECT coalesce(max(seq) + 1, 0) AS next FROM engine.execution_nodes WHERE execution_id = $1
     ), n AS (
       INSERT INTO engine.execution_nodes (execution_id, node_name, run_index, seq, node_type, status, started_at, duration_ms, tries, output)
       SELECT $1, old.resume_state->>'node', coalesce((old.resume_state->>'runIndex')::int, 0), seq.next, coalesce(old.resume_state->>'nodeType', $3), 'success', (old.resume_state->>'since')::timestamptz,
              greatest(0, round(extract(epoch FROM (now() - (old.resume_state->>'since')::timestamptz)) * 1000))::int, 1,
              jsonb_build_array(CASE WHEN old.resume_state ? 'resumeData'
                                     THEN jsonb_build_array(jsonb_build_object('json', old.resume_state->'resumeData')
                                          || CASE WHEN old.resume_state ? 'resumeBinary' THEN jsonb_build_object('binary', old.resume_state->'resumeBinary') ELSE '{}'::jsonb END)
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
    [executionId, jobId, nodeType],
  );
}

/**
 * A resume-URL call's data, kept on an execution waiting for its URL and not yet called, with
 * the job that resumes it. False when it is not (or no longer) waiting for it.
 */
export async function setResumeData(
  q: Queryable,
  executionId: string,
  data: Record<string, unknown>,
  jobId: string | null,
  binary?: Record<string, unknown>,
): Promise<boolean> {
  const updated = await rows<{ id: string }>(
    q,
    `UPDATE engine.executions SET resume_state = resume_state || jsonb_build_object('resumeData', $2::jsonb)
            || CASE WHEN $4::jsonb IS NULL THEN '{}'::jsonb ELSE jsonb_build_object('resumeBinary', $4::jsonb) END, job_id = $3, updated_at = now()
     WHERE id = $1 AND status = 'waiting' AND (resume_state->>'webhook')::boolean AND NOT resume_state ? 'resumeData'
     RETURNING id`,
    [executionId, JSON.stringify(data), jobId, binary ? JSON.stringify(binary) : null],
  );
  return updated.length > 0;
}

/** Fails a running or waiting execution whose job `jobId` the queue gave up on; its notify config, or undefined when none was. */
export function failLost(
  q: Queryable,
  executionId: string,
  jobId: string,
  error: ExecutionErrorInfo,
): Promise<{ id: string; notify: NotifyConfig | null } | undefined> {
  return one<{ id: string; notify: NotifyConfig | null }>(
    q,
    `UPDATE engine.executions SET status = 'error', error = $3, current_node = NULL, resume_state = NULL, wait_till = NULL, updated_at = now()
     WHERE id = $1 AND job_id = $2 AND status IN ('running','waiting') RETURNING id, notify`,
    [executionId, jobId, JSON.stringify(error)],
  );
}

/** Deletes an execution (its run data and logs with it): when, and what its deletion is announced with; undefined when there was none. */
export async function deleteExecution(q: Queryable, id: string): Promise<{ deletedAt: Date; status: string; workflowId: string; version: number } | undefined> {
  return one(q, `DELETE FROM engine.executions WHERE id = $1 RETURNING now() AS "deletedAt", status, workflow_id AS "workflowId", version::float8 AS version`, [
    id,
  ]);
}

// ---------------------------------------------------------------------------------------------
// Maintenance (maintenance.ts)

/** Deletes the finished executions older than `days` (run data and logs go with them); how many. */
export async function pruneOlderThan(q: Queryable, days: number): Promise<number> {
  return (
    await rows<{ id: string }>(
      q,
      `DELETE FROM engine.executions WHERE status NOT IN ('running','waiting') AND finished_at < now() - $1::int * interval '1 day' RETURNING id`,
      [days],
    )
  ).length;
}

/** The workflows with more than `max` finished executions. */
export async function crowdedWorkflows(q: Queryable, max: number): Promise<string[]> {
  const found = await rows<{ workflow_id: string }>(
    q,
    `SELECT workflow_id FROM engine.executions WHERE status NOT IN ('running','waiting') GROUP BY workflow_id HAVING count(*) > $1`,
    [max],
  );
  return found.map((r) => r.workflow_id);
}

/** Deletes a workflow's finished executions beyond the newest `keep`; how many. */
export async function pruneBeyond(q: Queryable, workflowId: string, keep: number): Promise<number> {
  return (
    await rows<{ id: string }>(
      q,
      `DELETE FROM engine.executions WHERE id IN (
         SELECT id FROM engine.executions WHERE workflow_id = $1 AND status NOT IN ('running','waiting')
         ORDER BY started_at DESC, id DESC OFFSET $2)
       RETURNING id`,
      [workflowId, keep],
    )
  ).length;
}

/** Deletes webhook request logs older than `days`. */
export function pruneWebhookLogs(q: Queryable, days: number): Promise<void> {
  return exec(q, `DELETE FROM engine.webhook_logs WHERE at < now() - $1::int * interval '1 day'`, [days]);
}

/** Fails the inline runs (no job) whose heartbeat stopped more than `seconds` ago. */
export function failStale(q: Queryable, seconds: number, error: ExecutionErrorInfo): Promise<{ id: string; notify: NotifyConfig | null }[]> {
  return rows<{ id: string; notify: NotifyConfig | null }>(
    q,
    `UPDATE engine.executions SET status = 'error', error = $2, current_node = NULL, updated_at = now()
     WHERE status = 'running' AND job_id IS NULL AND heartbeat_at < now() - $1::int * interval '1 second'
     RETURNING id, notify`,
    [seconds, JSON.stringify(error)],
  );
}
