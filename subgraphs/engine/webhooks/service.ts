import { auditResource } from '../../../kernel/audit';
import { withTransaction } from '../../../kernel/db/transaction';
import { UUID } from '../../../kernel/ids';
import { byKey, defineLoader, type LoaderDefinition } from '../../../kernel/loaders';
import type { DataSource } from 'typeorm';
import type { Principal } from '../../../kernel/auth/principal';
import { SecretCipher, sha256 } from '../../../kernel/crypto';
import { AppError, errors } from '../../../kernel/errors';
import type { RateLimiter } from '../../../kernel/rate-limit';
import { workflowNotFound, type WorkflowService } from '../workflows';
import {
  RESPONSE_MODES,
  toLogView,
  toStats,
  toView,
  WEBHOOK_AUTH_TYPES,
  WEBHOOK_METHODS,
  webhookTriggerStore as store,
  webhookUrl,
  type TriggerChanges,
  type TriggerStats,
  type TriggerView,
  type WebhookAuthConfig,
  type WebhookLogView,
  type WebhookRateLimit,
} from './store';

export type { TriggerStats, TriggerView, WebhookLogView } from './store';

/**
 * Webhook triggers: registration (with their own authentication, never the platform's API
 * keys), request logs and statistics. The API key, basic password and bearer token are stored
 * as SHA-256 digests; the HMAC secret, needed to verify, AES-256-GCM encrypted with the trigger
 * id as associated data. None is ever returned. Inbound requests: inbound.ts.
 */

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

const RESERVED = ['resume'];
/** A path segment `:name` is a parameter (n8n's `/webhook/orders/:orderId`): the workflow gets its value in `$json.params`. */
const PARAMETER = /^[A-Za-z_][A-Za-z0-9_]{0,63}$/;
const HEADER_NAME = /^[A-Za-z0-9!#$%&'*+.^_`|~-]{1,100}$/;
const PATH = /^[A-Za-z0-9._~:@!$&'()*+,;=-]+(\/[A-Za-z0-9._~:@!$&'()*+,;=-]+)*$/;
const REGISTRATIONS_PER_MINUTE = 10;

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
    return webhookUrl(path);
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
    const view = await withTransaction(this.db, async ({ manager: m }) => {
      const id = await store.newId(m);
      auditResource('WorkflowWebhook', id);
      try {
        await store.insert(m, id, {
          workflowId,
          path,
          method,
          authType: auth.type,
          authConfig: auth.config,
          secretHash: auth.hash ?? null,
          secretEnc: auth.hmacSecret ? this.cipher.encrypt(auth.hmacSecret, id) : null,
          responseMode,
          rateLimit,
          active: input.active ?? true,
          createdBy: principal.kind === 'apiKey' ? principal.keyId : null,
        });
      } catch (err) {
        if ((err as { code?: string }).code === '23505') {
          throw errors.alreadyExists('path', `${method} /${path}`); // also a parameterised path of the same shape
        }
        throw err;
      }
      return toView((await store.byId(m, id))!);
    });
    await this.changed();
    return view;
  }

  async get(id: string): Promise<TriggerView> {
    if (!UUID.test(id)) throw webhookNotFound(id);
    const row = await store.byId(this.db, id);
    if (!row) throw webhookNotFound(id);
    return toView(row);
  }

  async list(filter: { workflowId?: string; active?: boolean; limit: number; offset: number }): Promise<{ webhooks: TriggerView[]; total: number }> {
    if (filter.workflowId !== undefined && !UUID.test(filter.workflowId)) return { webhooks: [], total: 0 };
    const { rows, total } = await store.list(this.db, filter);
    return { webhooks: rows.map(toView), total };
  }

  async update(id: string, input: TriggerInput): Promise<TriggerView> {
    if (!UUID.test(id)) throw webhookNotFound(id);
    await withTransaction(this.db, async ({ manager: m }) => {
      const current = await store.lockForUpdate(m, id);
      if (!current) throw webhookNotFound(id);
      const changes: TriggerChanges = {};
      if (input.path !== undefined) changes.path = checkPath(input.path);
      if (input.method !== undefined) changes.method = checkMethod(input.method);
      if (input.responseMode !== undefined) changes.responseMode = checkResponseMode(input.responseMode);
      if (input.rateLimit !== undefined) changes.rateLimit = checkRateLimit(input.rateLimit);
      if (input.active !== undefined && input.active !== null) changes.active = input.active;
      if (input.authentication !== undefined && input.authentication !== null) {
        const auth = checkAuthentication(input.authentication, current.auth_type);
        changes.auth = {
          type: auth.type,
          config: auth.config,
          // Kept (no new secret of the same type): the stored one stays.
          secret: auth.keep ? undefined : { hash: auth.hash ?? null, enc: auth.hmacSecret ? this.cipher.encrypt(auth.hmacSecret, id) : null },
        };
      }
      try {
        await store.update(m, id, changes);
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
    const deletedAt = await store.deleteById(this.db, id);
    if (!deletedAt) throw webhookNotFound(id);
    await this.changed();
    return { webhookId: id, deletedAt };
  }

  async logs(id: string, filter: { limit: number; offset: number; status?: string }): Promise<{ logs: WebhookLogView[]; total: number }> {
    await this.get(id);
    if (filter.status !== undefined && !['success', 'failed', 'rejected'].includes(filter.status)) {
      throw errors.field('status', 'must be success, failed or rejected');
    }
    const { rows, total } = await store.logs(this.db, id, filter);
    return { total, logs: rows.map(toLogView) };
  }

  /** Triggers by id (null for a missing one): federation references. */
  readonly byId: LoaderDefinition<string, TriggerView | null> = defineLoader('engine.webhooksById', async (keys) => {
    const ids = keys.filter((id) => UUID.test(id));
    const rows = ids.length ? await store.byIds(this.db, ids) : [];
    return byKey(keys, rows, (r) => r.id, null, toView);
  });

  /** From the request logs (test calls excluded); zeros for a trigger without any. */
  readonly statisticsByWebhook: LoaderDefinition<string, TriggerStats> = defineLoader('engine.statisticsByWebhook', async (keys) => {
    const ids = keys.filter((id) => UUID.test(id));
    const rows = ids.length ? await store.statistics(this.db, ids) : [];
    const stats = byKey(keys, rows, (r) => r.webhook_id, null, toStats);
    return stats.map(
      (s) => s ?? { totalRequests: 0, successfulRequests: 0, failedRequests: 0, rejectedRequests: 0, averageResponseTime: 0, lastTriggered: null },
    );
  });

  /** The URL path of each workflow's first active trigger (null for a workflow without one). */
  readonly webhookUrlByWorkflow: LoaderDefinition<string, string | null> = defineLoader('engine.webhookUrlByWorkflow', async (keys) => {
    const ids = keys.filter((id) => UUID.test(id));
    const rows = ids.length ? await store.firstActivePaths(this.db, ids) : [];
    return byKey(
      keys,
      rows,
      (r) => r.workflow_id,
      null,
      (r) => this.urlFor(r.path),
    );
  });
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
