import { page, Where } from '../../../kernel/db/page';
import { exec, one, rows, type CamelCased, type Queryable } from '../../../kernel/db/rows';
import type { StickyNote } from '../n8n';
import type { Connections, WorkflowNode, WorkflowSettings } from '../nodes';

/**
 * Where workflows are kept: the definition as it is now (engine.workflows) and every version of
 * it, immutable (engine.workflow_versions: an execution runs and resumes the version it started
 * with). service.ts decides; this reads and writes.
 */

export interface WorkflowRow {
  id: string;
  name: string;
  description: string | null;
  tags: string[];
  active: boolean;
  version: number;
  nodes: WorkflowNode[];
  connections: Connections;
  settings: WorkflowSettings;
  /** Sticky notes drawn with the graph (an n8n export's), never run; not part of a version. */
  sticky_notes: StickyNote[];
  /** The key that last saved or activated it (null: the platform): whose authority its scheduleTrigger runs carry (authority.ts). */
  saved_by: string | null;
  created_at: Date;
  updated_at: Date;
}

export type WorkflowRecord = CamelCased<WorkflowRow>;

export interface WorkflowVersionRow {
  workflow_id: string;
  version: number;
  name: string;
  active: boolean;
  nodes: WorkflowNode[];
  connections: Connections;
  settings: WorkflowSettings;
  saved_by: string | null;
}

/** A workflow's executions, aggregated (statisticsByWorkflow). */
export interface WorkflowStatsRow {
  workflow_id: string;
  executions: number;
  succeeded: number;
  finished: number;
  average_duration: number | null;
  last_executed: Date | null;
}

export interface WorkflowStats {
  executions: number;
  successRate: number;
  averageDuration: number;
  lastExecuted: Date | null;
}

/** The fields a create or an update writes. */
export interface WorkflowFields {
  name: string;
  description: string | null;
  tags: string[];
  active: boolean;
  nodes: WorkflowNode[];
  connections: Connections;
  settings: WorkflowSettings;
}

export interface WorkflowFilter {
  active?: boolean;
  tag?: string;
  search?: string;
  limit: number;
  offset: number;
}

const COLUMNS = `id, name, description, tags, active, version, nodes, connections, settings, sticky_notes, saved_by, created_at, updated_at`;

export function toRecord(row: WorkflowRow): WorkflowRecord {
  return {
    id: row.id,
    name: row.name,
    description: row.description,
    tags: row.tags,
    active: row.active,
    version: row.version,
    nodes: row.nodes,
    connections: row.connections,
    settings: row.settings,
    stickyNotes: row.sticky_notes,
    savedBy: row.saved_by,
    createdAt: row.created_at,
    updatedAt: row.updated_at,
  };
}

export function toStats(r: WorkflowStatsRow): WorkflowStats {
  return {
    executions: r.executions,
    successRate: r.finished ? Math.round((r.succeeded / r.finished) * 10_000) / 100 : 0,
    averageDuration: r.average_duration === null ? 0 : Math.round(r.average_duration),
    lastExecuted: r.last_executed,
  };
}

export const workflowStore = {
  /** n8n's pinned data kept with an imported workflow (read by manual runs). */
  setPinData(q: Queryable, id: string, pinData: Record<string, unknown>): Promise<void> {
    return exec(q, `UPDATE engine.workflows SET pin_data = $2::jsonb WHERE id = $1`, [id, JSON.stringify(pinData)]);
  },
  setStickyNotes(q: Queryable, id: string, notes: StickyNote[]): Promise<void> {
    return exec(q, `UPDATE engine.workflows SET sticky_notes = $2::jsonb WHERE id = $1`, [id, JSON.stringify(notes)]);
  },
  async insert(q: Queryable, f: WorkflowFields, createdBy: string | null): Promise<WorkflowRow> {
    const row = await one<WorkflowRow>(
      q,
      `INSERT INTO engine.workflows (name, description, tags, active, nodes, connections, settings, created_by, saved_by)
       VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $8) RETURNING ${COLUMNS}`,
      [f.name, f.description, f.tags, f.active, JSON.stringify(f.nodes), JSON.stringify(f.connections), JSON.stringify(f.settings), createdBy],
    );
    return row!;
  },

  byId(q: Queryable, id: string): Promise<WorkflowRow | undefined> {
    return one<WorkflowRow>(q, `SELECT ${COLUMNS} FROM engine.workflows WHERE id = $1`, [id]);
  },

  /** The row, locked until the transaction ends. */
  lockForUpdate(q: Queryable, id: string): Promise<WorkflowRow | undefined> {
    return one<WorkflowRow>(q, `SELECT ${COLUMNS} FROM engine.workflows WHERE id = $1 FOR UPDATE`, [id]);
  },

  /** The newest ten whose name, as a slug (service.ts slugify), is `slug`. */
  bySlug(q: Queryable, slug: string): Promise<WorkflowRow[]> {
    return rows<WorkflowRow>(
      q,
      `SELECT ${COLUMNS} FROM engine.workflows
       WHERE trim(both '-' from regexp_replace(lower(name), '[^a-z0-9]+', '-', 'g')) = $1 ORDER BY created_at DESC LIMIT 10`,
      [slug],
    );
  },

  byIds(q: Queryable, ids: string[]): Promise<WorkflowRow[]> {
    return rows<WorkflowRow>(q, `SELECT ${COLUMNS} FROM engine.workflows WHERE id = ANY($1::uuid[])`, [ids]);
  },

  /** A page, newest first, and the number of matches. */
  list(q: Queryable, filter: WorkflowFilter): Promise<{ rows: WorkflowRow[]; total: number }> {
    const where = new Where()
      .equals('active', filter.active)
      .and(filter.tag, (p) => `${p} = ANY(tags)`)
      .and(filter.search && `%${filter.search.replace(/[\\%_]/g, (c) => `\\${c}`)}%`, (p) => `name ILIKE ${p}`);
    return page<WorkflowRow>(q, { select: COLUMNS, from: `FROM engine.workflows ${where}`, orderBy: 'created_at DESC, id DESC', params: where.params }, filter);
  },

  /** Writes every field and counts a new version; `savedBy` is the key it is saved under. */
  async update(q: Queryable, id: string, f: WorkflowFields, savedBy: string | null): Promise<WorkflowRow> {
    const row = await one<WorkflowRow>(
      q,
      `UPDATE engine.workflows SET name = $2, description = $3, tags = $4, active = $5, nodes = $6, connections = $7, settings = $8,
              saved_by = $9, version = version + 1, updated_at = now()
       WHERE id = $1 RETURNING ${COLUMNS}`,
      [id, f.name, f.description, f.tags, f.active, JSON.stringify(f.nodes), JSON.stringify(f.connections), JSON.stringify(f.settings), savedBy],
    );
    return row!;
  },

  /** When it was deleted, or undefined when there was no such row. */
  async deleteById(q: Queryable, id: string): Promise<Date | undefined> {
    return (await one<{ deleted_at: Date }>(q, `DELETE FROM engine.workflows WHERE id = $1 RETURNING now() AS deleted_at`, [id]))?.deleted_at;
  },

  currentVersion(q: Queryable, id: string): Promise<{ version: number } | undefined> {
    return one<{ version: number }>(q, `SELECT version FROM engine.workflows WHERE id = $1`, [id]);
  },

  version(q: Queryable, workflowId: string, version: number): Promise<WorkflowVersionRow | undefined> {
    return one<WorkflowVersionRow>(
      q,
      `SELECT workflow_id, version, name, active, nodes, connections, settings, saved_by FROM engine.workflow_versions WHERE workflow_id = $1 AND version = $2`,
      [workflowId, version],
    );
  },

  insertVersion(q: Queryable, r: WorkflowRecord): Promise<void> {
    return exec(
      q,
      `INSERT INTO engine.workflow_versions (workflow_id, version, name, active, nodes, connections, settings, saved_by) VALUES ($1, $2, $3, $4, $5, $6, $7, $8)`,
      [r.id, r.version, r.name, r.active, JSON.stringify(r.nodes), JSON.stringify(r.connections), JSON.stringify(r.settings), r.savedBy],
    );
  },

  /** Every workflow's executions that exist, aggregated in one statement. */
  statistics(q: Queryable, ids: string[]): Promise<WorkflowStatsRow[]> {
    return rows<WorkflowStatsRow>(
      q,
      `SELECT workflow_id, count(*)::int AS executions,
              count(*) FILTER (WHERE status = 'success')::int AS succeeded,
              count(*) FILTER (WHERE status IN ('success','error'))::int AS finished,
              avg(duration_ms) FILTER (WHERE status IN ('success','error'))::float AS average_duration,
              max(started_at) AS last_executed
       FROM engine.executions WHERE workflow_id = ANY($1::uuid[]) GROUP BY workflow_id`,
      [ids],
    );
  },
};
