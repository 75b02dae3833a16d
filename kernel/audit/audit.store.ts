import { exec, one, type Queryable } from '../db/rows';
import { page, Where, type PageWindow } from '../db/page';

/** A row of platform.audit_log (migration 1764500000000). */
export interface AuditRow {
  id: string;
  at: Date;
  actor_kind: string;
  actor_id: string | null;
  actor_name: string | null;
  actor_service: string | null;
  ip: string | null;
  user_agent: string | null;
  request_id: string | null;
  subgraph: string;
  operation: string;
  resource_type: string;
  resource_id: string | null;
  changed_fields: string[];
}

export type NewAuditRow = Omit<AuditRow, 'id' | 'at'>;

/** Which entries a reader asks for: each filter given narrows the list; `since`/`until` bound `at` (inclusive, exclusive). */
export interface AuditFilter {
  actor?: string | null;
  actorKind?: string | null;
  operation?: string | null;
  resourceType?: string | null;
  resourceId?: string | null;
  since?: Date | null;
  until?: Date | null;
}

const COLUMNS = `id::text AS id, at, actor_kind, actor_id, actor_name, actor_service, ip, user_agent, request_id, subgraph, operation,
  resource_type, resource_id, changed_fields`;

/** The columns an insert writes (`resourceId`: what it selects for resource_id), and the record type its rows arrive as (a jsonb array). */
const inserted = (resourceId = 'resource_id') =>
  `actor_kind, actor_id, actor_name, actor_service, ip, user_agent, request_id, subgraph, operation, resource_type, ${resourceId}, changed_fields`;
const INSERTED = inserted();
const RECORD = `actor_kind text, actor_id text, actor_name text, actor_service text, ip text, user_agent text, request_id text, subgraph text,
  operation text, resource_type text, resource_id text, changed_fields text[]`;

/** PostgreSQL text cannot hold U+0000 (a hostile webhook path can): it is dropped rather than losing the entry. */
const withoutNul = (_key: string, value: unknown) => (typeof value === 'string' ? value.replaceAll('\0', '') : value);

/**
 * The rows as the inserts' JSON parameter. Stringified without the replacer first (a replacer
 * function makes JSON.stringify call back for every key and value): only a text that holds an
 * escaped U+0000 is stringified again with it.
 */
function rowsJson(rows: readonly object[]): string {
  const json = JSON.stringify(rows);
  return json.includes('\\u0000') ? JSON.stringify(rows, withoutNul) : json;
}

/** The texts of the insert beside a lone write, one per placement (what kernel/db/rows.ts passes): the same string each time. */
const alongsideTexts = new Map<string, string>();

export const auditStore = {
  /** Entries of concurrent mutations in one statement (AuditTrail groups them). */
  async insertMany(q: Queryable, rows: readonly NewAuditRow[]): Promise<void> {
    await exec(q, `INSERT INTO platform.audit_log (${INSERTED}) SELECT ${INSERTED} FROM jsonb_to_recordset($1::jsonb) AS r(${RECORD})`, [rowsJson(rows)]);
  },

  /**
   * The same insert as a statement to run beside a lone write (kernel/db/rows.ts): only when
   * `guard` holds, and an entry naming no resource takes the id the write created, else the
   * id-like argument it was given.
   */
  insertAlongside(rows: readonly (NewAuditRow & { argument_id: string | null })[], sql: { param: number; createdId: string; guard: string }) {
    const key = `${sql.param}\n${sql.createdId}\n${sql.guard}`;
    let text = alongsideTexts.get(key);
    if (text === undefined) {
      text = `INSERT INTO platform.audit_log (${INSERTED})
       SELECT ${inserted(`coalesce(resource_id, left(${sql.createdId}, 200), argument_id)`)}
         FROM jsonb_to_recordset($${sql.param}::jsonb) AS r(${RECORD}, argument_id text) WHERE ${sql.guard}`;
      alongsideTexts.set(key, text);
    }
    return { text, params: [rowsJson(rows)] };
  },

  /** Newest first. `actor` matches the actor's id or name. */
  list(q: Queryable, f: AuditFilter, window: PageWindow): Promise<{ rows: AuditRow[]; total: number }> {
    const where = new Where()
      .and(f.actor, (p) => `(actor_id = ${p} OR actor_name = ${p})`)
      .equals('actor_kind', f.actorKind)
      .equals('operation', f.operation)
      .equals('resource_type', f.resourceType)
      .equals('resource_id', f.resourceId)
      .and(f.since, (p) => `at >= ${p}`)
      .and(f.until, (p) => `at < ${p}`);
    return page<AuditRow>(q, { select: COLUMNS, from: `FROM platform.audit_log ${where}`, orderBy: 'at DESC, id DESC', params: where.params }, window);
  },

  /** Deletes the entries older than `retentionDays` (the only DELETE the table's trigger lets through); how many went. */
  async sweep(q: Queryable, retentionDays: number): Promise<number> {
    const row = await one<{ deleted: number }>(q, `SELECT platform.sweep_audit_log($1) AS deleted`, [retentionDays]);
    return Number(row?.deleted ?? 0);
  },
};
