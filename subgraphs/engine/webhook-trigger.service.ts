import { UUID } from '../../kernel/ids';
import { byKey, defineLoader, type LoaderDefinition } from '../../kernel/loaders';
import { rowsOf } from '../../kernel/db/rows';
import type { DataSource } from 'typeorm';
import type { Principal } from '../../kernel/auth/principal';
import { SecretCipher, sha256 } from '../../kernel/crypto';
import { AppError, errors } from '../../kernel/errors';
import type { RateLimiter } from '../../kernel/rate-limit';
import { workflowNotFound, type WorkflowService } from './workflow.service';
import { RESPONSE_MODES, WEBHOOK_AUTH_TYPES, WEBHOOK_METHODS, type WebhookAuthConfig, type WebhookRateLimit } from './webhook-trigger.entity';

/**
 * Webhook triggers: registration (with their own authentication, never the platform's API
 * keys), request logs and statistics. The API key, basic password and bearer token are stored
 * as SHA-256 digests; the HMAC secret, needed to verify, AES-256-GCM encrypted with the trigger
 * id as associated data. None is ever returned. Inbound requests: webhook-trigger.inbound.ts.
 */

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

export interface AuthenticationInput {
  type?: string | null;
  apiKeyHeader?: string | null;
  apiKeyValue?: string | null;
  hmacSecret?: string | null;
  hmacHeader?: string | null;
  hmacAlgorithm?: string | null;
  username?: string | null;
  password?: string | null;
  token?: string | null;
}

export interface TriggerInput {
  workflowId?: string;
  path?: string;
  method?: string;
  authentication?: AuthenticationInput | null;
  responseMode?: string | null;
  rateLimit?: { windowMs: number; maxRequests: number; keyBy?: string | null } | null;
  active?: boolean | null;
}

export interface TriggerStats {
  totalRequests: number;
  successfulRequests: number;
  failedRequests: number;
  rejectedRequests: number;
  averageResponseTime: number;
  lastTriggered: Date | null;
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

const WEBHOOK_PREFIX = '/webhook/';
const RESERVED = ['resume'];
/** A path segment `:name` is a parameter (n8n's `/webhook/orders/:orderId`): the workflow gets its value in `$json.params`. */
const PARAMETER = /^[A-Za-z_][A-Za-z0-9_]{0,63}$/;
const HEADER_NAME = /^[A-Za-z0-9!#$%&'*+.^_`|~-]{1,100}$/;
const PATH = /^[A-Za-z0-9._~:@!$&'()*+,;=-]+(\/[A-Za-z0-9._~:@!$&'()*+,;=-]+)*$/;
const REGISTRATIONS_PER_MINUTE = 10;
const COLUMNS = `t.id, t.workflow_id, t.path, t.method, t.auth_type, t.auth_config, t.response_mode, t.rate_limit, t.active, t.created_at, t.updated_at, w.name AS workflow_name`;

export function webhookInvalid(message: string, details: Record<string, unknown>): AppError {
  return new AppError('WEBHOOK_INVALID', message, details);
}

export function webhookNotFound(id: string): AppError {
  return errors.notFound('webhook', id);
}

/** `/orders/new/` -> `orders/new` */
export function normalisePath(path: string): string {
  return String(path ?? '')
    .trim()
    .replace(/^\/+|\/+$/g, '')
    .replace(/\/{2,}/g, '/');
}

export class WebhookTriggerService {
  private cipherInstance?: SecretCipher;

  constructor(
    private readonly db: DataSource,
    private readonly workflows: WorkflowService,
    private readonly limiter: RateLimiter,
    private readonly platformKey: () => Buffer,
    /** After a committed change of a trigger (the inbound side caches them). */
    private readonly changed: () => Promise<void> = async () => undefined,
  ) {}

  /** Built on first use (the key comes from the kernel's secrets). Shared with the inbound side. */
  get cipher(): SecretCipher {
    this.cipherInstance ??= new SecretCipher(this.platformKey(), 'automation-platform/engine-webhook-secret/v1');
    return this.cipherInstance;
  }

  urlFor(path: string): string {
    return `${WEBHOOK_PREFIX}${path}`;
  }

  // -------------------------------------------------------------------------------------------
  // Registration

  async create(principal: Principal, input: TriggerInput): Promise<TriggerView> {
    if (principal.kind === 'apiKey') {
      await this.limiter.consumeNamed('engine.webhook-registrations', principal.keyId, REGISTRATIONS_PER_MINUTE, 60, principal.tier);
    }
    if (!input.workflowId) throw workflowNotFound(String(input.workflowId));
    const workflowId = (await this.workflows.resolve(input.workflowId)).id;
    const path = checkPath(input.path);
    const method = checkMethod(input.method);
    const responseMode = checkResponseMode(input.responseMode);
    const rateLimit = checkRateLimit(input.rateLimit);
    const auth = checkAuthentication(input.authentication ?? { type: 'none' }, null);
    const view = await this.db.transaction(async (m) => {
      const [{ id }] = await m.query(`SELECT gen_random_uuid() AS id`);
      try {
        await m.query(
          `INSERT INTO engine.webhook_triggers (id, workflow_id, path, method, auth_type, auth_config, secret_hash, secret_enc, response_mode, rate_limit, active, created_by)
           VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10, $11, $12)`,
          [
            id,
            workflowId,
            path,
            method,
            auth.type,
            JSON.stringify(auth.config),
            auth.hash ?? null,
            auth.hmacSecret ? this.cipher.encrypt(auth.hmacSecret, id) : null,
            responseMode,
            rateLimit ? JSON.stringify(rateLimit) : null,
            input.active ?? true,
            principal.kind === 'apiKey' ? principal.keyId : null,
          ],
        );
      } catch (err) {
        if ((err as { code?: string }).code === '23505') {
          throw errors.alreadyExists('path', `${method} /${path}`); // also a parameterised path of the same shape
        }
        throw err;
      }
      const [row] = await m.query(`SELECT ${COLUMNS} FROM engine.webhook_triggers t JOIN engine.workflows w ON w.id = t.workflow_id WHERE t.id = $1`, [id]);
      return this.toView(row);
    });
    await this.changed();
    return view;
  }

  async get(id: string): Promise<TriggerView> {
    if (!UUID.test(id)) throw webhookNotFound(id);
    const [row] = await this.db.query(`SELECT ${COLUMNS} FROM engine.webhook_triggers t JOIN engine.workflows w ON w.id = t.workflow_id WHERE t.id = $1`, [id]);
    if (!row) throw webhookNotFound(id);
    return this.toView(row);
  }

  async list(filter: { workflowId?: string; active?: boolean; limit: number; offset: number }): Promise<{ webhooks: TriggerView[]; total: number }> {
    const where: string[] = [];
    const params: unknown[] = [];
    if (filter.workflowId !== undefined) {
      if (!UUID.test(filter.workflowId)) return { webhooks: [], total: 0 };
      where.push(`t.workflow_id = $${params.push(filter.workflowId)}`);
    }
    if (filter.active !== undefined) where.push(`t.active = $${params.push(filter.active)}`);
    const clause = where.length ? `WHERE ${where.join(' AND ')}` : '';
    const rows = await this.db.query(
      `SELECT ${COLUMNS}, count(*) OVER ()::int AS total FROM engine.webhook_triggers t JOIN engine.workflows w ON w.id = t.workflow_id ${clause}
       ORDER BY t.created_at DESC, t.id DESC LIMIT $${params.length + 1} OFFSET $${params.length + 2}`,
      [...params, filter.limit, filter.offset],
    );
    let total = rows[0]?.total ?? 0;
    if (!rows.length && filter.offset > 0) total = (await this.db.query(`SELECT count(*)::int AS n FROM engine.webhook_triggers t ${clause}`, params))[0].n;
    return { webhooks: rows.map((r: any) => this.toView(r)), total };
  }

  async update(id: string, input: TriggerInput): Promise<TriggerView> {
    if (!UUID.test(id)) throw webhookNotFound(id);
    await this.db.transaction(async (m) => {
      const [current] = await m.query(`SELECT id, auth_type, auth_config, secret_hash, secret_enc FROM engine.webhook_triggers WHERE id = $1 FOR UPDATE`, [id]);
      if (!current) throw webhookNotFound(id);
      const sets: string[] = [];
      const params: unknown[] = [id];
      if (input.path !== undefined) sets.push(`path = $${params.push(checkPath(input.path))}`);
      if (input.method !== undefined) sets.push(`method = $${params.push(checkMethod(input.method))}`);
      if (input.responseMode !== undefined) sets.push(`response_mode = $${params.push(checkResponseMode(input.responseMode))}`);
      if (input.rateLimit !== undefined) {
        const rl = checkRateLimit(input.rateLimit);
        sets.push(`rate_limit = $${params.push(rl ? JSON.stringify(rl) : null)}`);
      }
      if (input.active !== undefined && input.active !== null) sets.push(`active = $${params.push(input.active)}`);
      if (input.authentication !== undefined && input.authentication !== null) {
        const auth = checkAuthentication(input.authentication, current.auth_type);
        const keepSecret = auth.keep;
        sets.push(`auth_type = $${params.push(auth.type)}`, `auth_config = $${params.push(JSON.stringify(auth.config))}`);
        if (!keepSecret) {
          sets.push(`secret_hash = $${params.push(auth.hash ?? null)}`);
          sets.push(`secret_enc = $${params.push(auth.hmacSecret ? this.cipher.encrypt(auth.hmacSecret, id) : null)}`);
        }
      }
      if (!sets.length) return;
      try {
        await m.query(`UPDATE engine.webhook_triggers SET ${sets.join(', ')}, updated_at = now() WHERE id = $1`, params);
      } catch (err) {
        if ((err as { code?: string }).code === '23505') throw errors.alreadyExists('path', `${input.method ?? ''} /${input.path ?? ''}`.trim());
        throw err;
      }
    });
    await this.changed();
    return this.get(id);
  }

  async delete(id: string): Promise<{ webhookId: string; deletedAt: Date }> {
    if (!UUID.test(id)) throw webhookNotFound(id);
    const [row] = rowsOf(await this.db.query(`DELETE FROM engine.webhook_triggers WHERE id = $1 RETURNING now() AS deleted_at`, [id]));
    if (!row) throw webhookNotFound(id);
    await this.changed();
    return { webhookId: id, deletedAt: row.deleted_at };
  }

  async logs(id: string, filter: { limit: number; offset: number; status?: string }): Promise<{ logs: WebhookLogView[]; total: number }> {
    await this.get(id);
    const params: unknown[] = [id];
    let clause = `webhook_id = $1`;
    if (filter.status !== undefined) {
      if (!['success', 'failed', 'rejected'].includes(filter.status)) throw errors.field('status', 'must be success, failed or rejected');
      clause += ` AND status = $${params.push(filter.status)}`;
    }
    const rows = await this.db.query(
      `SELECT at, method, source_ip, status, reason, status_code, response_time_ms, execution_id, test, count(*) OVER ()::int AS total
       FROM engine.webhook_logs WHERE ${clause} ORDER BY id DESC LIMIT $${params.length + 1} OFFSET $${params.length + 2}`,
      [...params, filter.limit, filter.offset],
    );
    let total = rows[0]?.total ?? 0;
    if (!rows.length && filter.offset > 0) total = (await this.db.query(`SELECT count(*)::int AS n FROM engine.webhook_logs WHERE ${clause}`, params))[0].n;
    return {
      total,
      logs: rows.map((r: any) => ({
        timestamp: r.at,
        method: r.method,
        sourceIp: r.source_ip,
        status: r.status,
        reason: r.reason,
        statusCode: r.status_code,
        responseTime: r.response_time_ms,
        executionId: r.execution_id,
        test: r.test,
      })),
    };
  }

  /** Triggers by id (null for a missing one): federation references. */
  readonly byId: LoaderDefinition<string, TriggerView | null> = defineLoader('engine.webhooksById', async (keys) => {
    const ids = keys.filter((id) => UUID.test(id));
    const rows = ids.length
      ? await this.db.query(`SELECT ${COLUMNS} FROM engine.webhook_triggers t JOIN engine.workflows w ON w.id = t.workflow_id WHERE t.id = ANY($1::uuid[])`, [
          ids,
        ])
      : [];
    return byKey(
      keys,
      rows,
      (r: any) => r.id as string,
      null,
      (r) => this.toView(r),
    );
  });

  /** From the request logs (test calls excluded); zeros for a trigger without any. */
  readonly statisticsByWebhook: LoaderDefinition<string, TriggerStats> = defineLoader('engine.statisticsByWebhook', async (keys) => {
    const ids = keys.filter((id) => UUID.test(id));
    const rows = ids.length
      ? await this.db.query(
          `SELECT webhook_id, count(*)::int AS total, count(*) FILTER (WHERE status = 'success')::int AS ok,
                  count(*) FILTER (WHERE status = 'failed')::int AS failed, count(*) FILTER (WHERE status = 'rejected')::int AS rejected,
                  avg(response_time_ms)::float AS avg, max(at) FILTER (WHERE status <> 'rejected') AS last
           FROM engine.webhook_logs WHERE webhook_id = ANY($1::uuid[]) AND NOT test GROUP BY webhook_id`,
          [ids],
        )
      : [];
    const stats = byKey(
      keys,
      rows,
      (r: any) => r.webhook_id as string,
      null,
      (r: any): TriggerStats => ({
        totalRequests: r.total,
        successfulRequests: r.ok,
        failedRequests: r.failed + r.rejected,
        rejectedRequests: r.rejected,
        averageResponseTime: r.avg === null ? 0 : Math.round(r.avg * 100) / 100,
        lastTriggered: r.last,
      }),
    );
    return stats.map(
      (s) => s ?? { totalRequests: 0, successfulRequests: 0, failedRequests: 0, rejectedRequests: 0, averageResponseTime: 0, lastTriggered: null },
    );
  });

  /** The URL path of each workflow's first active trigger (null for a workflow without one). */
  readonly webhookUrlByWorkflow: LoaderDefinition<string, string | null> = defineLoader('engine.webhookUrlByWorkflow', async (keys) => {
    const ids = keys.filter((id) => UUID.test(id));
    const rows = ids.length
      ? await this.db.query(
          `SELECT DISTINCT ON (workflow_id) workflow_id, path FROM engine.webhook_triggers
           WHERE workflow_id = ANY($1::uuid[]) AND active ORDER BY workflow_id, created_at`,
          [ids],
        )
      : [];
    return byKey(
      keys,
      rows,
      (r: any) => r.workflow_id as string,
      null,
      (r: any) => this.urlFor(r.path),
    );
  });

  private toView(row: any): TriggerView {
    return {
      id: row.id,
      workflowId: row.workflow_id,
      workflowName: row.workflow_name,
      path: `/${row.path}`,
      url: this.urlFor(row.path),
      method: row.method,
      authentication: { type: row.auth_type, ...(row.auth_config ?? {}) },
      responseMode: row.response_mode,
      rateLimit: row.rate_limit,
      active: row.active,
      createdAt: row.created_at,
      updatedAt: row.updated_at,
    };
  }
}

// ---------------------------------------------------------------------------------------------
// Checks

function checkPath(raw: unknown): string {
  if (typeof raw !== 'string' || !raw.trim()) throw webhookInvalid('path is required', { field: 'path', reason: 'missing' });
  const path = normalisePath(raw);
  if (!path || path.length > 300 || !PATH.test(path)) {
    throw webhookInvalid("path must be URL path segments of letters, digits and -._~:@!$&'()*+,;=", { field: 'path', reason: 'invalid_path', path: raw });
  }
  if (RESERVED.includes(path.split('/')[0]!))
    throw webhookInvalid(`paths under /webhook/${path.split('/')[0]}/ are reserved`, { field: 'path', reason: 'reserved_path' });
  if (path.split('/').some((s) => s === '.' || s === '..')) {
    throw webhookInvalid('path may not contain "." or ".." segments (it must stay under /webhook/)', {
      field: 'path',
      reason: 'path_escapes_prefix',
      path: raw,
    });
  }
  const names = path
    .split('/')
    .filter((s) => s.startsWith(':'))
    .map((s) => s.slice(1));
  const bad = names.find((n) => !PARAMETER.test(n));
  if (bad !== undefined)
    throw webhookInvalid(`path parameter ":${bad}" must be a name of letters, digits and "_"`, { field: 'path', reason: 'invalid_parameter', path: raw });
  if (new Set(names).size !== names.length)
    throw webhookInvalid('path parameters must have distinct names', { field: 'path', reason: 'duplicate_parameter', path: raw });
  return path;
}

function checkMethod(raw: unknown): string {
  const method = String(raw ?? '').toUpperCase();
  if (!(WEBHOOK_METHODS as readonly string[]).includes(method)) {
    throw webhookInvalid(`method must be one of ${WEBHOOK_METHODS.join(', ')}`, { field: 'method', reason: 'invalid_method' });
  }
  return method;
}

function checkResponseMode(raw: unknown): string {
  const mode = raw ?? 'onReceived';
  if (!(RESPONSE_MODES as readonly string[]).includes(mode as string)) {
    throw webhookInvalid(`responseMode must be ${RESPONSE_MODES.join(' or ')}`, { field: 'responseMode', reason: 'invalid_response_mode' });
  }
  return mode as string;
}

function checkRateLimit(raw: TriggerInput['rateLimit']): WebhookRateLimit | null {
  if (raw === undefined || raw === null) return null;
  const { windowMs, maxRequests } = raw;
  const keyBy = raw.keyBy ?? 'ip';
  if (!Number.isInteger(windowMs) || windowMs < 1000 || windowMs > 86_400_000) {
    throw webhookInvalid('rateLimit.windowMs must be milliseconds from 1000 to 86400000', { field: 'rateLimit.windowMs', reason: 'invalid_rate_limit' });
  }
  if (!Number.isInteger(maxRequests) || maxRequests < 1 || maxRequests > 1_000_000) {
    throw webhookInvalid('rateLimit.maxRequests must be from 1 to 1000000', { field: 'rateLimit.maxRequests', reason: 'invalid_rate_limit' });
  }
  if (keyBy !== 'ip' && keyBy !== 'global' && !(keyBy.startsWith('header:') && HEADER_NAME.test(keyBy.slice(7)))) {
    throw webhookInvalid('rateLimit.keyBy must be ip, global or header:<name>', { field: 'rateLimit.keyBy', reason: 'invalid_rate_limit' });
  }
  return { windowMs, maxRequests, keyBy };
}

function checkAuthentication(
  raw: AuthenticationInput,
  currentType: string | null,
): { type: string; config: WebhookAuthConfig; hash?: Buffer; hmacSecret?: string; keep?: boolean } {
  const type = raw.type ?? 'none';
  if (!(WEBHOOK_AUTH_TYPES as readonly string[]).includes(type)) {
    throw webhookInvalid(`authentication.type must be one of ${WEBHOOK_AUTH_TYPES.join(', ')}`, {
      field: 'authentication.type',
      reason: 'invalid_authentication',
    });
  }
  // Updating other fields of the same type keeps the stored secret when none is given.
  const sameType = currentType === type;
  const secret = (field: keyof AuthenticationInput, min: number): string | undefined => {
    const v = raw[field];
    if (v === undefined || v === null || v === '') {
      if (sameType) return undefined;
      throw webhookInvalid(`authentication.${field} is required for ${type} authentication`, { field: `authentication.${field}`, reason: 'missing_secret' });
    }
    if (typeof v !== 'string' || v.length < min || v.length > 1000) {
      throw webhookInvalid(`authentication.${field} must be ${min} to 1000 characters`, { field: `authentication.${field}`, reason: 'invalid_secret' });
    }
    return v;
  };
  const header = (field: 'apiKeyHeader' | 'hmacHeader', fallback: string) => {
    const v = raw[field] ?? fallback;
    if (!HEADER_NAME.test(v))
      throw webhookInvalid(`authentication.${field} must be an HTTP header name`, { field: `authentication.${field}`, reason: 'invalid_header' });
    return v;
  };
  switch (type) {
    case 'none':
      return { type, config: {} };
    case 'apiKey': {
      const value = secret('apiKeyValue', 8);
      return { type, config: { apiKeyHeader: header('apiKeyHeader', 'X-API-Key') }, hash: value ? sha256(value) : undefined, keep: !value };
    }
    case 'hmac': {
      const value = secret('hmacSecret', 8);
      const algorithm = raw.hmacAlgorithm ?? 'sha256';
      if (!['sha256', 'sha1', 'sha512'].includes(algorithm)) {
        throw webhookInvalid('authentication.hmacAlgorithm must be sha256, sha1 or sha512', {
          field: 'authentication.hmacAlgorithm',
          reason: 'invalid_algorithm',
        });
      }
      return {
        type,
        config: { hmacHeader: header('hmacHeader', 'X-Signature'), hmacAlgorithm: algorithm as WebhookAuthConfig['hmacAlgorithm'] },
        hmacSecret: value,
        keep: !value,
      };
    }
    case 'basic': {
      const username = raw.username;
      if (typeof username !== 'string' || !username || username.length > 200 || username.includes(':')) {
        throw webhookInvalid('authentication.username is required (1 to 200 characters, no colon)', {
          field: 'authentication.username',
          reason: 'missing_secret',
        });
      }
      const password = secret('password', 8);
      return { type, config: { username }, hash: password ? sha256(password) : undefined, keep: !password };
    }
    default: {
      const token = secret('token', 16);
      return { type, config: {}, hash: token ? sha256(token) : undefined, keep: !token };
    }
  }
}
