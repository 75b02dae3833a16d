import { page, Where } from '../../../kernel/db/page';
import { exec, one, rows, type Queryable } from '../../../kernel/db/rows';

/**
 * Where webhook triggers are kept (engine.webhook_triggers) with their request logs
 * (engine.webhook_logs). The API key, basic password and bearer token are kept as SHA-256
 * digests (secret_hash); the HMAC secret, needed to verify, AES-256-GCM encrypted with the
 * trigger id as associated data (secret_enc). Only the inbound side reads either back.
 * service.ts and inbound.ts decide; this reads and writes.
 */

export const WEBHOOK_METHODS = ['GET', 'POST', 'PUT', 'PATCH', 'DELETE'] as const;
export const WEBHOOK_AUTH_TYPES = ['none', 'apiKey', 'hmac', 'basic', 'oauth'] as const;
export const RESPONSE_MODES = ['onReceived', 'lastNode'] as const;

/** The parts of a trigger's authentication that may be shown; the secret is in secret_hash or secret_enc. */
export interface WebhookAuthConfig {
  apiKeyHeader?: string;
  hmacHeader?: string;
  hmacAlgorithm?: 'sha256' | 'sha1' | 'sha512';
  username?: string;
}

export interface WebhookRateLimit {
  windowMs: number;
  maxRequests: number;
  /** ip (default), global, or header:<name>. */
  keyBy: string;
}

const WEBHOOK_PREFIX = '/webhook/';

/** Where a trigger's path is called: `orders/new` -> `/webhook/orders/new`. */
export function webhookUrl(path: string): string {
  return `${WEBHOOK_PREFIX}${path}`;
}

/** A trigger as it is shown (no secret), with its workflow's name. */
export interface TriggerRow {
  id: string;
  workflow_id: string;
  path: string;
  method: string;
  auth_type: string;
  auth_config: WebhookAuthConfig | null;
  response_mode: string;
  rate_limit: WebhookRateLimit | null;
  active: boolean;
  created_at: Date;
  updated_at: Date;
  workflow_name: string;
}

export interface TriggerView {
  id: string;
  workflowId: string;
  workflowName: string;
  path: string;
  url: string;
  method: string;
  authentication: { type: string } & WebhookAuthConfig;
  responseMode: string;
  rateLimit: WebhookRateLimit | null;
  active: boolean;
  createdAt: Date;
  updatedAt: Date;
}

/** A trigger as an inbound request needs it: its secret, its workflow's active flag and current version. */
export type InboundTriggerRow = Omit<TriggerRow, 'created_at' | 'updated_at' | 'workflow_name'> &
  Pick<TriggerAuthRow, 'secret_hash' | 'secret_enc'> & { workflow_active: boolean; version: number; created_by: string | null };

/** What an update reads before it writes (locked). */
export interface TriggerAuthRow {
  id: string;
  auth_type: string;
  auth_config: WebhookAuthConfig | null;
  secret_hash: Buffer | null;
  secret_enc: Buffer | null;
}

export interface WebhookLogRow {
  at: Date;
  method: string;
  source_ip: string | null;
  status: string;
  reason: string | null;
  status_code: number;
  response_time_ms: number;
  execution_id: string | null;
  test: boolean;
}

export interface WebhookLogView {
  timestamp: Date;
  method: string;
  sourceIp: string | null;
  status: string;
  reason: string | null;
  statusCode: number;
  responseTime: number;
  executionId: string | null;
  test: boolean;
}

export interface TriggerStatsRow {
  webhook_id: string;
  total: number;
  ok: number;
  failed: number;
  rejected: number;
  avg: number | null;
  last: Date | null;
}

export interface TriggerStats {
  totalRequests: number;
  successfulRequests: number;
  failedRequests: number;
  rejectedRequests: number;
  averageResponseTime: number;
  lastTriggered: Date | null;
}

/** A new trigger's columns (the secrets already digested or encrypted). */
export interface TriggerFields {
  workflowId: string;
  path: string;
  method: string;
  authType: string;
  authConfig: WebhookAuthConfig;
  secretHash: Buffer | null;
  secretEnc: Buffer | null;
  responseMode: string;
  rateLimit: WebhookRateLimit | null;
  active: boolean;
  createdBy: string | null;
}

/** The columns an update changes (undefined: unchanged), already checked. */
export interface TriggerChanges {
  path?: string;
  method?: string;
  responseMode?: string;
  rateLimit?: WebhookRateLimit | null;
  active?: boolean;
  auth?: { type: string; config: WebhookAuthConfig; secret?: { hash: Buffer | null; enc: Buffer | null } };
}

/** One request's log entry. */
export interface WebhookLogEntry {
  webhookId: string;
  method: string;
  sourceIp: string | null;
  status: 'success' | 'failed' | 'rejected';
  reason: string | null;
  statusCode: number;
  responseTimeMs: number;
  executionId: string | null;
  test: boolean;
}

const COLUMNS = `t.id, t.workflow_id, t.path, t.method, t.auth_type, t.auth_config, t.response_mode, t.rate_limit, t.active, t.created_at, t.updated_at, w.name AS workflow_name`;
const INBOUND_COLUMNS = `t.id, t.workflow_id, t.path, t.method, t.auth_type, t.auth_config, t.secret_hash, t.secret_enc, t.response_mode, t.rate_limit,
  t.active, w.active AS workflow_active, w.version, t.created_by`;

export function toView(row: TriggerRow): TriggerView {
  return {
    id: row.id,
    workflowId: row.workflow_id,
    workflowName: row.workflow_name,
    path: `/${row.path}`,
    url: webhookUrl(row.path),
    method: row.method,
    authentication: { type: row.auth_type, ...(row.auth_config ?? {}) },
    responseMode: row.response_mode,
    rateLimit: row.rate_limit,
    active: row.active,
    createdAt: row.created_at,
    updatedAt: row.updated_at,
  };
}

export function toLogView(r: WebhookLogRow): WebhookLogView {
  return {
    timestamp: r.at,
    method: r.method,
    sourceIp: r.source_ip,
    status: r.status,
    reason: r.reason,
    statusCode: r.status_code,
    responseTime: r.response_time_ms,
    executionId: r.execution_id,
    test: r.test,
  };
}

export function toStats(r: TriggerStatsRow): TriggerStats {
  return {
    totalRequests: r.total,
    successfulRequests: r.ok,
    failedRequests: r.failed + r.rejected,
    rejectedRequests: r.rejected,
    averageResponseTime: r.avg === null ? 0 : Math.round(r.avg * 100) / 100,
    lastTriggered: r.last,
  };
}

export const webhookTriggerStore = {
  /** A new trigger's id, taken before the insert: the HMAC secret is encrypted with it. */
  async newId(q: Queryable): Promise<string> {
    return (await one<{ id: string }>(q, `SELECT gen_random_uuid() AS id`))!.id;
  },

  /** Fails with 23505 when the method has a trigger on the path (or a parameterised path of the same shape). */
  insert(q: Queryable, id: string, f: TriggerFields): Promise<void> {
    return exec(
      q,
      `INSERT INTO engine.webhook_triggers (id, workflow_id, path, method, auth_type, auth_config, secret_hash, secret_enc, response_mode, rate_limit, active, created_by)
       VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10, $11, $12)`,
      [
        id,
        f.workflowId,
        f.path,
        f.method,
        f.authType,
        JSON.stringify(f.authConfig),
        f.secretHash,
        f.secretEnc,
        f.responseMode,
        f.rateLimit ? JSON.stringify(f.rateLimit) : null,
        f.active,
        f.createdBy,
      ],
    );
  },

  byId(q: Queryable, id: string): Promise<TriggerRow | undefined> {
    return one<TriggerRow>(q, `SELECT ${COLUMNS} FROM engine.webhook_triggers t JOIN engine.workflows w ON w.id = t.workflow_id WHERE t.id = $1`, [id]);
  },

  byIds(q: Queryable, ids: string[]): Promise<TriggerRow[]> {
    return rows<TriggerRow>(
      q,
      `SELECT ${COLUMNS} FROM engine.webhook_triggers t JOIN engine.workflows w ON w.id = t.workflow_id WHERE t.id = ANY($1::uuid[])`,
      [ids],
    );
  },

  /** A page, newest first, and the number of matches. */
  list(q: Queryable, filter: { workflowId?: string; active?: boolean; limit: number; offset: number }): Promise<{ rows: TriggerRow[]; total: number }> {
    const where = new Where().equals('t.workflow_id', filter.workflowId).equals('t.active', filter.active);
    const from = `FROM engine.webhook_triggers t JOIN engine.workflows w ON w.id = t.workflow_id ${where}`;
    return page<TriggerRow>(q, { select: COLUMNS, from, orderBy: 't.created_at DESC, t.id DESC', params: where.params }, filter);
  },

  /** The authentication an update starts from, the row locked until the transaction ends. */
  lockForUpdate(q: Queryable, id: string): Promise<TriggerAuthRow | undefined> {
    return one<TriggerAuthRow>(q, `SELECT id, auth_type, auth_config, secret_hash, secret_enc FROM engine.webhook_triggers WHERE id = $1 FOR UPDATE`, [id]);
  },

  /**
   * Writes the given changes (nothing when there are none); a new authentication replaces the
   * secrets only when it brings one. Fails with 23505 on a path (shape) and method taken.
   */
  async update(q: Queryable, id: string, c: TriggerChanges): Promise<void> {
    const sets: string[] = [];
    const params: unknown[] = [id];
    if (c.path !== undefined) sets.push(`path = $${params.push(c.path)}`);
    if (c.method !== undefined) sets.push(`method = $${params.push(c.method)}`);
    if (c.responseMode !== undefined) sets.push(`response_mode = $${params.push(c.responseMode)}`);
    if (c.rateLimit !== undefined) sets.push(`rate_limit = $${params.push(c.rateLimit ? JSON.stringify(c.rateLimit) : null)}`);
    if (c.active !== undefined) sets.push(`active = $${params.push(c.active)}`);
    if (c.auth) {
      sets.push(`auth_type = $${params.push(c.auth.type)}`, `auth_config = $${params.push(JSON.stringify(c.auth.config))}`);
      if (c.auth.secret) {
        sets.push(`secret_hash = $${params.push(c.auth.secret.hash)}`);
        sets.push(`secret_enc = $${params.push(c.auth.secret.enc)}`);
      }
    }
    if (!sets.length) return;
    await exec(q, `UPDATE engine.webhook_triggers SET ${sets.join(', ')}, updated_at = now() WHERE id = $1`, params);
  },

  /** When it was deleted, or undefined when there was no such trigger. */
  async deleteById(q: Queryable, id: string): Promise<Date | undefined> {
    return (await one<{ deleted_at: Date }>(q, `DELETE FROM engine.webhook_triggers WHERE id = $1 RETURNING now() AS deleted_at`, [id]))?.deleted_at;
  },

  /** A trigger's request log, newest first, optionally of one status, and the number of entries. */
  logs(q: Queryable, id: string, filter: { limit: number; offset: number; status?: string }): Promise<{ rows: WebhookLogRow[]; total: number }> {
    const where = new Where([id]).always('webhook_id = $1').equals('status', filter.status);
    return page<WebhookLogRow>(
      q,
      {
        select: 'at, method, source_ip, status, reason, status_code, response_time_ms, execution_id, test',
        from: `FROM engine.webhook_logs ${where}`,
        orderBy: 'id DESC',
        params: where.params,
      },
      filter,
    );
  },

  /** Each trigger's request figures (test calls excluded), one statement for all. */
  statistics(q: Queryable, ids: string[]): Promise<TriggerStatsRow[]> {
    return rows<TriggerStatsRow>(
      q,
      `SELECT webhook_id, count(*)::int AS total, count(*) FILTER (WHERE status = 'success')::int AS ok,
              count(*) FILTER (WHERE status = 'failed')::int AS failed, count(*) FILTER (WHERE status = 'rejected')::int AS rejected,
              avg(response_time_ms)::float AS avg, max(at) FILTER (WHERE status <> 'rejected') AS last
       FROM engine.webhook_logs WHERE webhook_id = ANY($1::uuid[]) AND NOT test GROUP BY webhook_id`,
      [ids],
    );
  },

  /** The path of each workflow's first active trigger. */
  firstActivePaths(q: Queryable, workflowIds: string[]): Promise<{ workflow_id: string; path: string }[]> {
    return rows<{ workflow_id: string; path: string }>(
      q,
      `SELECT DISTINCT ON (workflow_id) workflow_id, path FROM engine.webhook_triggers
       WHERE workflow_id = ANY($1::uuid[]) AND active ORDER BY workflow_id, created_at`,
      [workflowIds],
    );
  },

  // -------------------------------------------------------------------------------------------
  // The inbound side

  inboundByPath(q: Queryable, path: string): Promise<InboundTriggerRow[]> {
    return rows<InboundTriggerRow>(
      q,
      `SELECT ${INBOUND_COLUMNS} FROM engine.webhook_triggers t JOIN engine.workflows w ON w.id = t.workflow_id WHERE t.path = $1`,
      [path],
    );
  },

  /** The parameterised triggers (`orders/:orderId`) of paths with `segments` segments. */
  inboundParameterised(q: Queryable, segments: number): Promise<InboundTriggerRow[]> {
    return rows<InboundTriggerRow>(
      q,
      `SELECT ${INBOUND_COLUMNS} FROM engine.webhook_triggers t JOIN engine.workflows w ON w.id = t.workflow_id
        WHERE t.parameterised AND t.segments = $1`,
      [segments],
    );
  },

  inboundById(q: Queryable, id: string): Promise<InboundTriggerRow | undefined> {
    return one<InboundTriggerRow>(
      q,
      `SELECT ${INBOUND_COLUMNS} FROM engine.webhook_triggers t JOIN engine.workflows w ON w.id = t.workflow_id WHERE t.id = $1`,
      [id],
    );
  },

  /** A request's log entry on its own (one that started an execution is written with it: executions/writes.store.ts). */
  insertLog(q: Queryable, e: WebhookLogEntry): Promise<void> {
    return exec(
      q,
      `INSERT INTO engine.webhook_logs (webhook_id, method, source_ip, status, reason, status_code, response_time_ms, execution_id, test)
       VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9)`,
      [e.webhookId, e.method, e.sourceIp, e.status, e.reason, e.statusCode, e.responseTimeMs, e.executionId, e.test],
    );
  },
};
