import { page, Where } from '../../../kernel/db/page';
import { one, prepared, rows, type Queryable } from '../../../kernel/db/rows';
import { Tally } from '../../../kernel/db/tally';
import type { CarriedBeside } from '../../../kernel/db/transaction';
import { addJobFrom, jobsCompletedSql, type JobCompletion, type JobSpec } from '../../../kernel/queue';
import type { TaskStep } from '../../../kernel/topics';

/**
 * Where agent tasks (control_plane.tasks) and the files they wrote (control_plane.task_artifacts)
 * are read and written: task.service.ts and task.runtime.ts decide, this file holds their
 * statements. The runtime's statements are on the agent-task hot path (benchmarked): each state
 * change is one statement.
 */

export const TASK_STATUSES = ['queued', 'running', 'completed', 'failed', 'cancelled'] as const;
export type TaskStatus = (typeof TASK_STATUSES)[number];
export const FINISHED_STATUSES: readonly TaskStatus[] = ['completed', 'failed', 'cancelled'];
export const TASK_PRIORITIES = ['low', 'normal', 'high', 'critical'] as const;
export type TaskPriority = (typeof TASK_PRIORITIES)[number];
export const TASK_MODES = ['async', 'sync'] as const;
export type TaskMode = (typeof TASK_MODES)[number];
export const TASK_EVENTS = ['task.started', 'task.completed', 'task.failed'] as const;
export type TaskEvent = (typeof TASK_EVENTS)[number];
export const ARTIFACT_KINDS = ['created', 'modified'] as const;
export type ArtifactKind = (typeof ARTIFACT_KINDS)[number];

/** A task's progress: stored in its row, and carried by its events (kernel/topics.ts). */
export type TaskProgress = TaskStep;

export interface TaskResult {
  output: Record<string, unknown>;
  filesCreated: string[];
  filesModified: string[];
  linesWritten: number;
  /** The model that answered ("offline:<model>" for the offline provider). */
  model: string;
  tokensUsed: number;
  /** The prompt-library prompt and version the task ran. */
  promptId: string;
  promptVersion: number;
}

export interface TaskError {
  code: string;
  message: string;
  details: Record<string, unknown>;
}

export interface TaskForge {
  stage?: string;
  validateGates?: boolean;
  outputs?: Record<string, unknown>;
}

export interface TaskModelConfig {
  model?: string;
  temperature?: number;
  maxTokens?: number;
}

/** A row of control_plane.tasks as TASK_COLUMNS reads it (the webhook secret is not among them). */
export interface TaskRow {
  id: string;
  agent_id: string;
  task_type: string;
  status: TaskStatus;
  priority: TaskPriority;
  mode: TaskMode;
  /** Seconds, 5 to 3600. */
  timeout_seconds: number;
  context: Record<string, unknown>;
  forge: TaskForge | null;
  model_config: TaskModelConfig | null;
  webhook_url: string | null;
  webhook_events: TaskEvent[] | null;
  progress: TaskProgress | null;
  result: TaskResult | null;
  error: TaskError | null;
  job_id: string | null;
  created_by_key: string | null;
  orchestration_id: string | null;
  stage: string | null;
  estimated_duration: number;
  duration_ms: number | null;
  cancel_reason: string | null;
  /** The trace of the request that created the task, when it was traced. */
  trace_id: string | null;
  created_at: Date;
  started_at: Date | null;
  completed_at: Date | null;
  failed_at: Date | null;
  cancelled_at: Date | null;
  updated_at: Date;
  /** bigint, read as text: raised by every change of the row. */
  version: string;
}

/** An agent task (one execution of an agent), as the services handle it. */
export interface TaskRecord {
  /** The taskId. */
  id: string;
  agentId: string;
  taskType: string;
  status: TaskStatus;
  priority: TaskPriority;
  mode: TaskMode;
  /** Seconds, 5 to 3600. */
  timeoutSeconds: number;
  context: Record<string, unknown>;
  forge: TaskForge | null;
  modelConfig: TaskModelConfig | null;
  webhookUrl: string | null;
  webhookEvents: TaskEvent[] | null;
  progress: TaskProgress | null;
  result: TaskResult | null;
  error: TaskError | null;
  jobId: string | null;
  /** The API key that created the task (per-key concurrency); null for the platform itself. */
  createdByKey: string | null;
  /** Set for tasks an orchestration runs (they skip the per-key concurrency limit). */
  orchestrationId: string | null;
  stage: string | null;
  /** Seconds, from the history of the agent and task type at creation. */
  estimatedDuration: number;
  durationMs: number | null;
  cancelReason: string | null;
  /** The trace of the request that created the task (its job, model calls and statements are in it), when it was traced. */
  traceId: string | null;
  createdAt: Date;
  startedAt: Date | null;
  completedAt: Date | null;
  failedAt: Date | null;
  cancelledAt: Date | null;
  updatedAt: Date;
  version: number;
}

/** A file an agent task produced, listed in the task's result. */
export interface ArtifactRow {
  task_id: string;
  /** Relative path, unique within the task. */
  path: string;
  kind: ArtifactKind;
  content: string;
  lines: number;
  bytes: number;
  created_at: Date;
}

export interface TaskArtifactRecord {
  taskId: string;
  path: string;
  kind: ArtifactKind;
  content: string;
  lines: number;
  bytes: number;
  createdAt: Date;
}

/** Columns every read selects (the secret is never read outside the runtime). */
export const TASK_COLUMNS = `id, agent_id, task_type, status, priority, mode, timeout_seconds, context, forge, model_config,
  webhook_url, webhook_events, progress, result, error, job_id, created_by_key, orchestration_id, stage,
  estimated_duration, duration_ms, cancel_reason, trace_id, created_at, started_at, completed_at, failed_at, cancelled_at, updated_at, version`;

/** TASK_COLUMNS of the table under `alias`, where a statement joins it to others. */
function prefixed(alias: string): string {
  return TASK_COLUMNS.split(',')
    .map((c) => `${alias}.${c.trim()}`)
    .join(', ');
}

export function toTaskRecord(r: TaskRow): TaskRecord {
  return {
    id: r.id,
    agentId: r.agent_id,
    taskType: r.task_type,
    status: r.status,
    priority: r.priority,
    mode: r.mode,
    timeoutSeconds: r.timeout_seconds,
    context: r.context,
    forge: r.forge,
    modelConfig: r.model_config,
    webhookUrl: r.webhook_url,
    webhookEvents: r.webhook_events,
    progress: r.progress,
    result: r.result,
    error: r.error,
    jobId: r.job_id,
    createdByKey: r.created_by_key,
    orchestrationId: r.orchestration_id,
    stage: r.stage,
    estimatedDuration: Number(r.estimated_duration),
    durationMs: r.duration_ms,
    cancelReason: r.cancel_reason,
    traceId: r.trace_id,
    createdAt: r.created_at,
    startedAt: r.started_at,
    completedAt: r.completed_at,
    failedAt: r.failed_at,
    cancelledAt: r.cancelled_at,
    updatedAt: r.updated_at,
    version: Number(r.version),
  };
}

export function toArtifact(r: ArtifactRow): TaskArtifactRecord {
  return { taskId: r.task_id, path: r.path, kind: r.kind, content: r.content, lines: r.lines, bytes: r.bytes, createdAt: r.created_at };
}

/** A task to create (insertQueued): the columns it is created with, its key's limit of active tasks (null: none) and its job. */
export interface NewTask extends Omit<
  TaskRow,
  'status' | 'progress' | 'result' | 'error' | 'job_id' | 'duration_ms' | 'cancel_reason' | 'trace_id' | 'version' | `${string}_at`
> {
  /** The trace of the creating request (currentTraceId); none when it was not traced. */
  trace_id?: string | null;
  webhook_secret_enc: Buffer | null;
  limit: number | null;
  job: JobSpec;
}

/**
 * What the create statement answers per task: the key's active tasks before it (null: no limit),
 * and what the database gave the row (all null when it was not written). The rest of the row is
 * what was written (queuedRow), not sent back and parsed again: a context may be 512 KB.
 */
interface CreatedTaskRow extends Pick<TaskRow, 'job_id' | 'created_at' | 'updated_at'> {
  id: string | null;
  active_before: number | null;
}

/** What a completion answers: what its event and webhook need, not the result it was just given. */
const COMPLETED_COLUMNS = ['id', 'agent_id', 'status', 'orchestration_id', 'webhook_url', 'duration_ms', 'version'] as const;
export type CompletedTaskRow = Pick<TaskRow, (typeof COMPLETED_COLUMNS)[number]> & { job_state: string | null };

/** A task's end as the runtime completes it: its result, final progress and files, and its job. */
export interface TaskCompletion {
  taskId: string;
  result: TaskResult;
  progress: TaskProgress;
  /** The task's artifacts (task.files.ts drafts them). */
  files: readonly Omit<ArtifactRow, 'task_id' | 'created_at'>[];
  /** When it started: written here when no step of it was (`starting`). */
  startedAt: Date;
  job: Pick<JobCompletion, 'jobId' | 'workerId'>;
}

/** A task moved by the runtime, with what the step needs besides the task. */
export interface RunningTaskRow extends TaskRow {
  previous: TaskStatus;
  webhook_secret_enc: Buffer | null;
}

/** A task as it starts without a write (`starting`): its row, its webhook secret, and when it started (its first start, else now). */
export interface StartingTaskRow extends TaskRow {
  webhook_secret_enc: Buffer | null;
  start: Date;
}

/** A running task's step written to its row, with its start (written with the first step, see `starting`). */
export interface TaskStepWrite {
  taskId: string;
  progress: TaskProgress;
  startedAt: Date;
}

/** The list's sort fields and their columns. */
export const TASK_SORTS: Record<string, string> = { createdAt: 'created_at', completedAt: 'completed_at', duration: 'duration_ms' };

/** The task list's filters, as columns (only those given, so each combination can use its index). */
export interface TaskListWhere {
  agentId?: string | null;
  status?: string | null;
  taskType?: string | null;
  orchestrationId?: string | null;
}

/** Tasks counted by the columns the list filters on by equality (migration TaskTally1763769601740). */
export const TASK_TALLY = new Tally('control_plane.tasks', ['agent_id', 'task_type', 'status']);

/** The row insertQueued wrote for `task`: its columns as given, and what the database set. */
function queuedRow(task: NewTask, db: CreatedTaskRow): TaskRow {
  const { webhook_secret_enc: _secret, limit: _limit, job: _job, ...given } = task;
  return {
    ...given,
    status: 'queued',
    progress: null,
    result: null,
    error: null,
    job_id: db.job_id,
    duration_ms: null,
    cancel_reason: null,
    trace_id: task.trace_id ?? null,
    created_at: db.created_at,
    started_at: null,
    completed_at: null,
    failed_at: null,
    cancelled_at: null,
    updated_at: db.updated_at,
    version: '1',
  };
}

export const taskStore = {
  /** Mean duration of the last 50 completed runs of the agent and task type (null when none), and how many there were. */
  recentDurations: (q: Queryable, agentId: string, taskType: string) =>
    one<{ avg_ms: number | null; n: number }>(
      q,
      `SELECT avg(duration_ms)::float AS avg_ms, count(*)::int AS n FROM (
         SELECT duration_ms FROM control_plane.tasks
          WHERE agent_id = $1 AND task_type = $2 AND status = 'completed'
          ORDER BY completed_at DESC LIMIT 50) recent`,
      [agentId, taskType],
    ),

  /** The task (taskId already checked to be a UUID), or undefined. */
  byId: (q: Queryable, taskId: string) => one<TaskRow>(q, prepared(`SELECT ${TASK_COLUMNS} FROM control_plane.tasks WHERE id = $1`), [taskId]),

  /** One page of the list and the total; sortBy is a key of TASK_SORTS (checked by the service). */
  async list(
    q: Queryable,
    filter: TaskListWhere,
    sort: { sortBy: string; ascending: boolean },
    limit: number,
    offset: number,
  ): Promise<{ rows: TaskRow[]; total: number }> {
    const where = new Where()
      .equals('agent_id', filter.agentId)
      .equals('status', filter.status)
      .equals('task_type', filter.taskType)
      .equals('orchestration_id', filter.orchestrationId);
    const counted = { agent_id: filter.agentId, task_type: filter.taskType, status: filter.status, orchestration_id: filter.orchestrationId };
    const dir = sort.ascending ? 'ASC' : 'DESC';
    const orderBy = `${TASK_SORTS[sort.sortBy]} ${dir}${sort.sortBy === 'createdAt' ? '' : ' NULLS LAST'}, id ${dir}`;
    // The page's ids first (an index-only scan skips the offset without reading the rows it
    // skips), then only those rows: a deep offset costs index entries, not whole tasks. The
    // total comes from the tally when it covers the filters (an orchestration's tasks are few).
    return page<TaskRow>(
      q,
      { select: TASK_COLUMNS, from: `FROM control_plane.tasks ${where}`, orderBy, params: where.params },
      { limit, offset },
      {
        keysFirst: { key: 'id', join: 'JOIN control_plane.tasks USING (id)' },
        total: TASK_TALLY.totalOf(counted),
      },
    );
  },

  /** The files of these tasks (UUIDs), by task and path. */
  artifactsOf: (q: Queryable, taskIds: string[]) =>
    rows<ArtifactRow>(
      q,
      `SELECT task_id, path, kind, content, lines, bytes, created_at FROM control_plane.task_artifacts WHERE task_id = ANY($1::uuid[]) ORDER BY task_id, path`,
      [taskIds],
    ),

  /**
   * Tasks and their queue jobs in one statement, answered in `tasks`' order: each limited key
   * (`limit`) is first locked and counted (control_plane.lock_key_tasks, keys in order, so two
   * such statements never deadlock), and its tasks are written in order while under the limit —
   * the others get no row (`task` null) and the active count they met (`activeBefore`).
   */
  async insertQueued(q: Queryable, tasks: readonly NewTask[], beside?: CarriedBeside | null): Promise<{ task: TaskRow | null; activeBefore: number | null }[]> {
    // The creations' audit entries in the same statement, each only when its task was written.
    const carried = beside?.sql(2, `resource_id IN (SELECT id::text FROM task)`);
    const created = await rows<CreatedTaskRow>(
      q,
      prepared(`
        WITH input AS (
          SELECT e.ord, i.*
            FROM jsonb_array_elements($1::jsonb) WITH ORDINALITY AS e(v, ord),
                 jsonb_to_record(e.v) AS i(id uuid, agent_id text, task_type text, priority text, mode text, timeout_seconds int,
                   context jsonb, forge jsonb, model_config jsonb, webhook_url text, webhook_events text[], webhook_secret_enc text,
                   created_by_key uuid, orchestration_id uuid, stage text, estimated_duration real, trace_id text, "limit" int, job jsonb)
        ), locked AS (
          SELECT k.key, control_plane.lock_key_tasks(k.key) AS active
            FROM (SELECT DISTINCT created_by_key AS key FROM input WHERE "limit" IS NOT NULL ORDER BY 1) k
        ), ranked AS (
          SELECT i.*, (l.active + row_number() OVER (PARTITION BY i.created_by_key, i."limit" IS NULL ORDER BY i.ord) - 1)::int AS active_before
            FROM input i LEFT JOIN locked l ON i."limit" IS NOT NULL AND l.key = i.created_by_key
        ), job AS (
          SELECT r.ord, ${addJobFrom('r.job')} AS id FROM ranked r WHERE r."limit" IS NULL OR r.active_before < r."limit"
        ), task AS (
          INSERT INTO control_plane.tasks
            (id, agent_id, task_type, status, priority, mode, timeout_seconds, context, forge, model_config,
             webhook_url, webhook_events, webhook_secret_enc, job_id, created_by_key, orchestration_id, stage, estimated_duration, trace_id)
          SELECT r.id, r.agent_id, r.task_type, 'queued', r.priority, r.mode, r.timeout_seconds, r.context, r.forge, r.model_config,
                 r.webhook_url, r.webhook_events, decode(r.webhook_secret_enc, 'base64'), job.id, r.created_by_key, r.orchestration_id, r.stage, r.estimated_duration, r.trace_id
            FROM ranked r JOIN job ON job.ord = r.ord
           WHERE job.id IS NOT NULL
          RETURNING id, job_id, created_at, updated_at)${carried ? `, carried AS (${carried.text})` : ''}
        SELECT r.active_before, task.* FROM ranked r LEFT JOIN task ON task.id = r.id ORDER BY r.ord`),
      [JSON.stringify(tasks.map((t) => ({ ...t, webhook_secret_enc: t.webhook_secret_enc?.toString('base64') ?? null }))), ...(carried?.params ?? [])],
    );
    return created.map((row, i) => ({ task: row.id ? queuedRow(tasks[i]!, row) : null, activeBefore: row.active_before }));
  },

  /**
   * queued or running -> cancelled; undefined when the task is not (any more) either. `startedAt`:
   * a start announced and not written yet (`starting`).
   */
  cancel: (q: Queryable, taskId: string, reason: string | null, startedAt: Date | null) =>
    one<TaskRow>(
      q,
      `UPDATE control_plane.tasks
          SET status = 'cancelled', cancel_reason = $2, started_at = coalesce(started_at, $3), updated_at = now()
        WHERE id = $1 AND status IN ('queued','running')
        RETURNING ${TASK_COLUMNS}`,
      [taskId, reason, startedAt],
    ),

  /** Tasks by status, for the Prometheus gauge (from the tally: a scrape reads no task). */
  countsByStatus: (q: Queryable) =>
    rows<{ status: TaskStatus; n: number }>(q, `SELECT status, sum(n)::int AS n FROM ${TASK_TALLY.rows('')} x GROUP BY status HAVING sum(n) <> 0`),
  // ---- the runtime's steps (task.runtime.ts) ----------------------------------------------

  /**
   * queued (or running, for a resumed attempt) -> running at once (a task whose task.started
   * webhook is stored with its start; the others start with `starting`), with the status each had
   * and its webhook secret; a task not runnable any more has no row. Like progress, `running` is
   * re-derived by a resumed attempt (the claimed job is durable): its commit need not wait for
   * the WAL flush. The rows are locked in id order, so two such statements never deadlock.
   */
  markRunning: (q: Queryable, taskIds: readonly string[]) =>
    rows<RunningTaskRow>(
      q,
      prepared(`WITH relaxed AS (SELECT set_config('synchronous_commit', 'off', true)),
           p AS (SELECT id, status AS previous FROM control_plane.tasks WHERE id = ANY($1::uuid[]) ORDER BY id FOR UPDATE)
         UPDATE control_plane.tasks t
            SET status = 'running', started_at = coalesce(t.started_at, now()), updated_at = now(),
                progress = CASE WHEN coalesce((t.forge->>'validateGates')::boolean, false)
                  THEN '{"percentage": 0, "currentStep": "validating the entry gate", "stepsCompleted": 0, "stepsTotal": 4}'::jsonb
                  ELSE '{"percentage": 0, "currentStep": "rendering instructions", "stepsCompleted": 0, "stepsTotal": 3}'::jsonb END
           FROM p, relaxed
          WHERE t.id = p.id AND t.status IN ('queued','running')
          RETURNING ${prefixed('t')}, p.previous, t.webhook_secret_enc`),
      [taskIds],
    ),

  /**
   * The tasks a worker starts (queued, or running for a resumed attempt), read without a write: a
   * start is announced in the task's event at once and written with its first stored step
   * (`stepped`) or with its end (`complete`, `fail`), so a task that ends within
   * STEP_STORED_AFTER_MS costs one write less. A task not runnable any more has no row.
   */
  starting: (q: Queryable, taskIds: readonly string[]) =>
    rows<StartingTaskRow>(
      q,
      prepared(`SELECT ${TASK_COLUMNS}, webhook_secret_enc, coalesce(started_at, now()) AS start
         FROM control_plane.tasks WHERE id = ANY($1::uuid[]) AND status IN ('queued','running')`),
      [taskIds],
    ),

  /**
   * Running tasks' steps, with their start for a task not written running yet (a task no longer
   * queued or running is left alone). Like its start, a step is re-derived by a resumed attempt,
   * so its commit need not wait for the WAL flush.
   */
  stepped: (q: Queryable, steps: readonly TaskStepWrite[]) =>
    rows<never>(
      q,
      prepared(`WITH relaxed AS (SELECT set_config('synchronous_commit', 'off', true))
       UPDATE control_plane.tasks t
          SET status = 'running', started_at = coalesce(t.started_at, m.started_at), progress = m.progress, updated_at = now()
         FROM unnest($1::uuid[], $2::jsonb[], $3::timestamptz[]) AS m(id, progress, started_at), relaxed
        WHERE t.id = m.id AND t.status IN ('queued','running')`),
      [steps.map((m) => m.taskId), steps.map((m) => JSON.stringify(m.progress)), steps.map((m) => m.startedAt)],
    ),

  /**
   * running -> completed with the result, the files and the job's end (the queue's
   * `jobsCompletedSql`), for each of `completions` in one statement, with the start when it was
   * not written yet (`starting`); a task no longer queued or running has no row (and its job is
   * left to the queue).
   */
  complete: (q: Queryable, completions: readonly TaskCompletion[]) =>
    rows<CompletedTaskRow>(
      q,
      prepared(`WITH input AS (
           SELECT * FROM jsonb_to_recordset($1::jsonb) AS i(id uuid, result jsonb, progress jsonb, files jsonb, job_id uuid, worker_id uuid, started_at timestamptz)
         ), t AS (
           UPDATE control_plane.tasks c
              SET status = 'completed', result = i.result, progress = i.progress, started_at = coalesce(c.started_at, i.started_at), updated_at = now()
             FROM input i
            WHERE c.id = i.id AND c.status IN ('queued','running')
            RETURNING ${COMPLETED_COLUMNS.map((col) => `c.${col}`).join(', ')}, i.files AS done_files, i.job_id AS done_job, i.worker_id AS done_worker
         ), files AS (
           INSERT INTO control_plane.task_artifacts (task_id, path, kind, content, lines, bytes)
           SELECT t.id, f.path, f.kind, f.content, f.lines, f.bytes
             FROM t, jsonb_to_recordset(t.done_files) AS f(path text, kind text, content text, lines int, bytes int)
           RETURNING 1
         ), jobs AS (
           ${jobsCompletedSql('(SELECT done_job AS id, done_worker AS worker_id FROM t)')}
         )
         SELECT ${COMPLETED_COLUMNS.map((col) => `t.${col}`).join(', ')}, jobs.state AS job_state FROM t LEFT JOIN jobs ON jobs.id = t.done_job`),
      [
        JSON.stringify(
          completions.map((c) => ({
            id: c.taskId,
            result: c.result,
            progress: c.progress,
            files: c.files,
            job_id: c.job.jobId,
            worker_id: c.job.workerId,
            started_at: c.startedAt,
          })),
        ),
      ],
    ),

  /**
   * queued or running -> failed, with its webhook secret; undefined for a finished task. `startedAt`:
   * the start of a run that failed before its start was written (`starting`).
   */
  fail: (q: Queryable, taskId: string, error: TaskError, startedAt: Date | null = null) =>
    one<TaskRow & { webhook_secret_enc: Buffer | null }>(
      q,
      `UPDATE control_plane.tasks
            SET status = 'failed', error = $2, started_at = coalesce(started_at, $3), updated_at = now()
          WHERE id = $1 AND status IN ('queued','running')
          RETURNING ${TASK_COLUMNS}, webhook_secret_enc`,
      [taskId, JSON.stringify(error), startedAt],
    ),

  /**
   * queued or running -> cancelled after its job was (a reason given first is kept), with the start
   * of its run if not written yet; undefined for a finished task.
   */
  jobCancelled: (q: Queryable, taskId: string, reason: string, startedAt: Date | null) =>
    one<TaskRow>(
      q,
      `UPDATE control_plane.tasks
          SET status = 'cancelled', cancel_reason = coalesce(cancel_reason, $2), started_at = coalesce(started_at, $3), updated_at = now()
        WHERE id = $1 AND status IN ('queued','running')
        RETURNING ${TASK_COLUMNS}`,
      [taskId, reason, startedAt],
    ),

  /** Unfinished tasks unchanged for `staleSeconds`, oldest first (at most 200). */
  stale: (q: Queryable, staleSeconds: number) =>
    rows<{ id: string; job_id: string | null }>(
      q,
      `SELECT id, job_id FROM control_plane.tasks
        WHERE status IN ('queued','running') AND updated_at < now() - $1::int * interval '1 second'
        ORDER BY updated_at LIMIT 200`,
      [staleSeconds],
    ),
};
