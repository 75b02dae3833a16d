import { sqlNow, type Clock } from '../../../kernel/clock';
import { count, exec, one, rows, type Queryable } from '../../../kernel/db/rows';
import type { WorkflowNode, WorkflowSettings } from '../nodes';

/**
 * Where schedules are kept (engine.schedules, both kinds: the control plane's and those of the
 * scheduleTrigger nodes, `node_name` set). service.ts explains how they fire; this
 * reads and writes, the caller holding the transaction (and the locks) where one is needed.
 */

export interface ScheduleRow {
  id: string;
  workflow_id: string;
  node_name: string | null;
  cron: string;
  timezone: string;
  payload: Record<string, unknown> | null;
  enabled: boolean;
  next_run_at: Date | null;
  last_run_at: Date | null;
  last_scheduled_for: Date | null;
  last_execution_id: string | null;
  runs: number;
  created_at: Date;
  updated_at: Date;
}

export interface ScheduleView {
  id: string;
  workflowId: string;
  /** Set for a scheduleTrigger node's schedule (changed through the workflow, not here). */
  nodeName: string | null;
  cron: string;
  timezone: string;
  payload: Record<string, unknown>;
  enabled: boolean;
  nextRunAt: Date | null;
  lastRunAt: Date | null;
  lastScheduledFor: Date | null;
  lastExecutionId: string | null;
  runs: number;
  createdAt: Date;
  updatedAt: Date;
}

/** What a node schedule is made from: its workflow's activation and definition. */
export interface ScheduledWorkflowRow {
  id: string;
  active: boolean;
  nodes: WorkflowNode[];
  settings: WorkflowSettings | null;
}

/** The fields a control-plane schedule is written with. */
export interface ScheduleFields {
  cron: string | undefined;
  timezone: string | undefined;
  payload: Record<string, unknown>;
  enabled: boolean;
  nextRunAt: Date | null;
}

/** What a fired due time leaves on the row. */
export interface FiredFields {
  nextRunAt: Date | null;
  enabled: boolean;
  scheduledFor: Date;
  executionId: string | null;
}

const COLUMNS = `s.id, s.workflow_id, s.node_name, s.cron, s.timezone, s.payload, s.enabled, s.next_run_at, s.last_run_at,
  s.last_scheduled_for, s.last_execution_id, s.runs, s.created_at, s.updated_at`;

export function toView(r: ScheduleRow): ScheduleView {
  return {
    id: r.id,
    workflowId: r.workflow_id,
    nodeName: r.node_name,
    cron: r.cron,
    timezone: r.timezone,
    payload: r.payload ?? {},
    enabled: r.enabled,
    nextRunAt: r.enabled ? r.next_run_at : null,
    lastRunAt: r.last_run_at,
    lastScheduledFor: r.last_scheduled_for,
    lastExecutionId: r.last_execution_id,
    runs: r.runs,
    createdAt: r.created_at,
    updatedAt: r.updated_at,
  };
}

export const scheduleStore = {
  /** Workflows that have, or should have, node schedules: active with a schedule trigger node of `types`, or holding one still. */
  async workflowsWithNodeSchedules(q: Queryable, types: readonly string[]): Promise<string[]> {
    const found = await rows<{ id: string }>(
      q,
      `SELECT w.id FROM engine.workflows w
       WHERE (w.active AND EXISTS (SELECT 1 FROM jsonb_array_elements(w.nodes) n WHERE n->>'type' = ANY($1::text[])))
          OR EXISTS (SELECT 1 FROM engine.schedules s WHERE s.workflow_id = w.id AND s.node_name IS NOT NULL)`,
      [types],
    );
    return found.map((r) => r.id);
  },

  /** Enabled schedules due more than `seconds` ago on `clock`. */
  overdue(q: Queryable, seconds: number, clock: Clock): Promise<{ id: string; next_run_at: Date }[]> {
    const params: unknown[] = [seconds];
    return rows<{ id: string; next_run_at: Date }>(
      q,
      `SELECT id, next_run_at FROM engine.schedules WHERE enabled AND next_run_at < ${sqlNow(clock, params)} - $1::int * interval '1 second'`,
      params,
    );
  },

  /** The workflow a node schedule follows, locked until the transaction ends. */
  lockWorkflow(q: Queryable, workflowId: string): Promise<ScheduledWorkflowRow | undefined> {
    return one<ScheduledWorkflowRow>(q, `SELECT id, active, nodes, settings FROM engine.workflows WHERE id = $1 FOR UPDATE`, [workflowId]);
  },

  /** Removes the workflow's node schedules whose node is not among `keep`. */
  deleteNodeSchedulesExcept(q: Queryable, workflowId: string, keep: string[]): Promise<void> {
    return exec(q, `DELETE FROM engine.schedules WHERE workflow_id = $1 AND node_name IS NOT NULL AND NOT (node_name = ANY($2::text[]))`, [workflowId, keep]);
  },

  /**
   * A node's schedule, inserted or brought in step: an unchanged one (same cron and time zone,
   * enabled) keeps its due time, a changed one takes `next`.
   */
  async upsertNodeSchedule(
    q: Queryable,
    workflowId: string,
    node: string,
    cron: string,
    timezone: string,
    next: Date,
  ): Promise<{ id: string; next_run_at: Date }> {
    const row = await one<{ id: string; next_run_at: Date }>(
      q,
      `INSERT INTO engine.schedules AS s (workflow_id, node_name, cron, timezone, enabled, next_run_at)
       VALUES ($1, $2, $3, $4, true, $5)
       ON CONFLICT (workflow_id, node_name) WHERE node_name IS NOT NULL DO UPDATE SET
         next_run_at = CASE WHEN s.cron = EXCLUDED.cron AND s.timezone = EXCLUDED.timezone AND s.enabled THEN s.next_run_at ELSE EXCLUDED.next_run_at END,
         updated_at = CASE WHEN s.cron = EXCLUDED.cron AND s.timezone = EXCLUDED.timezone AND s.enabled THEN s.updated_at ELSE now() END,
         cron = EXCLUDED.cron, timezone = EXCLUDED.timezone, enabled = true
       RETURNING id, next_run_at`,
      [workflowId, node, cron, timezone, next],
    );
    return row!;
  },

  /** The workflow's control-plane schedules (node schedules not counted). */
  countOfWorkflow(q: Queryable, workflowId: string): Promise<number> {
    return count(q, `SELECT count(*)::int AS n FROM engine.schedules WHERE workflow_id = $1 AND node_name IS NULL`, [workflowId]);
  },

  async insert(q: Queryable, workflowId: string, f: ScheduleFields, createdBy: string | null): Promise<ScheduleRow> {
    const row = await one<ScheduleRow>(
      q,
      `INSERT INTO engine.schedules AS s (workflow_id, cron, timezone, payload, enabled, next_run_at, created_by)
       VALUES ($1, $2, $3, $4, $5, $6, $7) RETURNING ${COLUMNS}`,
      [workflowId, f.cron, f.timezone, JSON.stringify(f.payload), f.enabled, f.nextRunAt, createdBy],
    );
    return row!;
  },

  byId(q: Queryable, id: string): Promise<ScheduleRow | undefined> {
    return one<ScheduleRow>(q, `SELECT ${COLUMNS} FROM engine.schedules s WHERE s.id = $1`, [id]);
  },

  /** The row, locked until the transaction ends. */
  lockForUpdate(q: Queryable, id: string): Promise<ScheduleRow | undefined> {
    return one<ScheduleRow>(q, `SELECT ${COLUMNS} FROM engine.schedules s WHERE s.id = $1 FOR UPDATE`, [id]);
  },

  /** The workflow's schedules, oldest first. */
  ofWorkflow(q: Queryable, workflowId: string): Promise<ScheduleRow[]> {
    return rows<ScheduleRow>(q, `SELECT ${COLUMNS} FROM engine.schedules s WHERE s.workflow_id = $1 ORDER BY s.created_at, s.id`, [workflowId]);
  },

  async update(q: Queryable, id: string, f: ScheduleFields): Promise<ScheduleRow> {
    const row = await one<ScheduleRow>(
      q,
      `UPDATE engine.schedules s SET cron = $2, timezone = $3, payload = $4, enabled = $5, next_run_at = $6, updated_at = now()
       WHERE s.id = $1 RETURNING ${COLUMNS}`,
      [id, f.cron, f.timezone, JSON.stringify(f.payload), f.enabled, f.nextRunAt],
    );
    return row!;
  },

  /** Deletes a control-plane schedule (never a node's): when, or undefined when there was none. */
  async deleteById(q: Queryable, id: string): Promise<Date | undefined> {
    const row = await one<{ deleted_at: Date }>(q, `DELETE FROM engine.schedules WHERE id = $1 AND node_name IS NULL RETURNING now() AS deleted_at`, [id]);
    return row?.deleted_at;
  },

  /**
   * The claim of a due time: the row locked only while it is enabled and still due at exactly
   * `due` (a concurrent claimer waits, then finds it moved), with its workflow's active flag.
   */
  claimDue(q: Queryable, id: string, due: Date): Promise<(ScheduleRow & { workflow_active: boolean; created_by: string | null }) | undefined> {
    return one<ScheduleRow & { workflow_active: boolean; created_by: string | null }>(
      q,
      `SELECT ${COLUMNS}, w.active AS workflow_active, s.created_by FROM engine.schedules s JOIN engine.workflows w ON w.id = s.workflow_id
       WHERE s.id = $1 AND s.enabled AND s.next_run_at = $2 FOR UPDATE OF s`,
      [id, due],
    );
  },

  /** Moves a claimed row on; a run is counted only when an execution started (at the clock's now). */
  fired(q: Queryable, id: string, f: FiredFields, clock: Clock): Promise<void> {
    const params: unknown[] = [id, f.nextRunAt, f.enabled, f.scheduledFor, f.executionId];
    return exec(
      q,
      `UPDATE engine.schedules SET next_run_at = $2, enabled = $3, last_scheduled_for = $4,
              last_run_at = CASE WHEN $5::uuid IS NULL THEN last_run_at ELSE ${sqlNow(clock, params)} END,
              last_execution_id = coalesce($5::uuid, last_execution_id),
              runs = runs + CASE WHEN $5::uuid IS NULL THEN 0 ELSE 1 END, updated_at = now()
       WHERE id = $1`,
      params,
    );
  },
};
