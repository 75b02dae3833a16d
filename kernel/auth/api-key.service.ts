import { hash, randomBytes, timingSafeEqual } from 'node:crypto';
import { mkdir, writeFile } from 'node:fs/promises';
import path from 'node:path';
import type { DataSource } from 'typeorm';
import { AppError, errors, type FieldError } from '../errors';
import type { EventBus } from '../events';
import type { Logger } from '../logger';
import { apiKeyStore, type ApiKeyRecord } from './api-key.store';
import { KEY_SERVICES, TIERS, hasPermission, isPlatformAdmin, type Environment, type KeyService, type Principal, type Tier } from './principal';
import { UsageRecorder } from './usage-recorder';
import { UUID } from '../ids';
import { defineLoader, type LoaderDefinition } from '../loaders';
import { TOPIC } from '../topics';

/** Key prefixes per service and environment. */
export const KEY_PREFIXES: Record<KeyService, Record<Environment, string>> = {
  'control-plane': { live: 'cp_live_sk_', test: 'cp_test_sk_' },
  promptlib: { live: 'ver_live_', test: 'ver_test_' },
  engine: { live: 'eng_live_', test: 'eng_test_' },
  links: { live: 'lnk_live_', test: 'lnk_test_' },
  infra: { live: 'inf_live_', test: 'inf_test_' },
};

const PERMISSION = /^(\*|[a-z][a-z-]*:(\*|[a-z][a-z-]*))$/;
const CACHE_TTL_MS = 10_000;
export function parseKeyPrefix(plain: string): { service: KeyService; environment: Environment } | null {
  for (const service of KEY_SERVICES) {
    for (const environment of ['live', 'test'] as const) {
      if (plain.startsWith(KEY_PREFIXES[service][environment])) return { service, environment };
    }
  }
  return null;
}

/** SHA-256 of a key, one-shot (half the time of a createHash object, on every authenticated request). */
export function hashKey(plain: string): Buffer {
  return hash('sha256', plain, 'buffer');
}

function generateKey(service: KeyService, environment: Environment): string {
  return KEY_PREFIXES[service][environment] + randomBytes(24).toString('base64url');
}

export interface CreateKeyInput {
  name?: string;
  permissions?: string[];
  expiresAt?: Date | null;
  service?: KeyService;
  environment?: Environment;
  tier?: Tier;
}
export interface UpdateKeyInput {
  name?: string;
  expiresAt?: Date | null;
}
export interface KeyUsage {
  keyId: string;
  requestsToday: number;
  requestsThisMonth: number;
  totalRequests: number;
  lastUsedAt: Date | null;
  lastUsedIp: string | null;
}

type ApiKeyPrincipal = Extract<Principal, { kind: 'apiKey' }>;
interface CachedKey {
  row: ApiKeyRecord;
  hash: Buffer;
  at: number;
}

/**
 * The platform's one key store: creation, listing, update, revocation, usage, and the
 * authentication every API-key request goes through. Keys are stored as SHA-256 digests (a key
 * carries 192 random bits, so a fast digest is safe, unlike passwords); lookups are by digest and
 * confirmed with a constant-time compare.
 */
export class ApiKeyService {
  private readonly cache = new Map<string, CachedKey>();
  readonly usage: UsageRecorder;

  constructor(
    private readonly db: DataSource,
    private readonly events: EventBus,
    private readonly logger: Logger,
  ) {
    this.usage = new UsageRecorder(db, logger);
    // A revoked or changed key must stop working at once in every process.
    events.subscribe(TOPIC.apiKeyChanged, ({ id }: { id: string }) => {
      for (const [hash, entry] of this.cache) if (entry.row.id === id) this.cache.delete(hash);
    });
  }

  /** Resolves a presented key into a principal, or throws invalid_api_key / expired_api_key. */
  async authenticate(plain: string, ip?: string): Promise<ApiKeyPrincipal> {
    const row = await this.valid(plain, false);
    this.usage.record(row.id, ip);
    return toPrincipal(row);
  }

  /**
   * The key as it stands now, for a connection that outlives the request that presented it (a
   * subscription, a followed stream): not counted as a use. `fresh` reads past the cache, for a
   * check after the key changed or at its expiry.
   */
  async current(plain: string, fresh: boolean): Promise<{ principal: ApiKeyPrincipal; expiresAt: Date | null }> {
    const row = await this.valid(plain, fresh);
    return { principal: toPrincipal(row), expiresAt: row.expiresAt };
  }

  /** The key's row if it is valid now; invalid_api_key / expired_api_key otherwise. */
  private async valid(plain: string, fresh: boolean): Promise<ApiKeyRecord> {
    if (!parseKeyPrefix(plain) || plain.length > 200) throw errors.invalidApiKey();
    const hash = hashKey(plain);
    const cacheKey = hash.toString('hex');
    let entry = fresh ? undefined : this.cache.get(cacheKey);
    if (!entry || Date.now() - entry.at > CACHE_TTL_MS) {
      const row = await apiKeyStore.byHash(this.db, hash);
      if (!row) throw errors.invalidApiKey();
      entry = { row, hash: row.keyHash, at: Date.now() };
      if (this.cache.size > 10_000) this.cache.clear();
      this.cache.set(cacheKey, entry);
    }
    const { row } = entry;
    if (!timingSafeEqual(entry.hash, hash) || row.revokedAt) throw errors.invalidApiKey();
    if (row.expiresAt && row.expiresAt.getTime() <= Date.now()) throw errors.expiredApiKey(row.expiresAt);
    return row;
  }

  async create(actor: Principal, input: CreateKeyInput): Promise<{ key: ApiKeyRecord; plain: string }> {
    const caller = requireKeyActor(actor);
    const permissions = input.permissions ?? ['*'];
    const service = input.service ?? 'control-plane';
    const environment = input.environment ?? caller.environment;
    const tier = input.tier ?? 'professional';
    validate({ ...input, permissions, service, environment, tier });
    // A test key stays in the sandbox, whatever its permissions: the keys it creates are test keys.
    if (caller.environment === 'test' && environment !== 'test') {
      throw new AppError('insufficient_permissions', `A test key creates test keys only: a ${environment} key needs a ${environment} key to create it`, {
        field: 'environment',
        required: environment,
        has: caller.environment,
      });
    }
    // Nobody hands out more than they hold: permissions and tier are capped by the caller's.
    if (!caller.permissions.includes('*')) {
      const missing = permissions.filter((p) => !hasPermission(caller.permissions, p));
      if (missing.length) throw errors.insufficientPermissions(missing, caller.permissions);
      if (TIERS.indexOf(tier) > TIERS.indexOf(caller.tier)) {
        throw errors.insufficientPermissions('*', caller.permissions);
      }
    }
    const plain = generateKey(service, environment);
    const id = await apiKeyStore.insert(this.db, {
      name: input.name ?? 'Unnamed key',
      service,
      environment,
      tier,
      permissions: [...new Set(permissions)],
      keyHash: hashKey(plain),
      keyPrefix: plain.slice(0, KEY_PREFIXES[service][environment].length + 4),
      createdBy: caller.keyId,
      expiresAt: input.expiresAt ?? null,
    });
    return { key: await this.load(id), plain };
  }

  async list(actor: Principal): Promise<ApiKeyRecord[]> {
    const caller = requireKeyActor(actor);
    return apiKeyStore.list(this.db, isPlatformAdmin(caller) ? null : caller.keyId);
  }

  async get(actor: Principal, id: string): Promise<ApiKeyRecord> {
    // One plain statement: this read serves every key lookup (and the REST read the bench measures).
    const key = UUID.test(id) ? await apiKeyStore.byId(this.db, id) : undefined;
    if (!key || !this.visibleTo(actor, key)) throw errors.notFound('api_key', id);
    return key;
  }

  /** A key is seen by a platform admin, by the key that created it, and by itself; to others it does not exist. */
  visibleTo(actor: Principal, key: ApiKeyRecord): boolean {
    const caller = requireKeyActor(actor);
    return isPlatformAdmin(caller) || key.createdBy === caller.keyId || key.id === caller.keyId;
  }

  /** Keys by id in one statement (federation references to ApiKey); null for a missing or malformed id. */
  readonly byId: LoaderDefinition<string, ApiKeyRecord | null> = defineLoader('auth.apiKeysById', async (ids) => {
    const found = await apiKeyStore.byIds(
      this.db,
      ids.filter((id) => UUID.test(id)),
    );
    const byId = new Map(found.map((k) => [k.id, k]));
    return ids.map((id) => byId.get(id) ?? null);
  });

  async update(actor: Principal, id: string, input: UpdateKeyInput): Promise<ApiKeyRecord> {
    const key = await this.get(actor, id);
    validate(input);
    if (key.revokedAt) throw errors.conflict('A revoked key cannot be changed', { key_id: id });
    await apiKeyStore.update(this.db, id, { name: input.name, expiresAt: input.expiresAt });
    await this.changed(id);
    return this.load(id);
  }

  async revoke(actor: Principal, id: string): Promise<ApiKeyRecord> {
    await this.get(actor, id);
    // Idempotent: revoking twice keeps the first revocation time.
    await apiKeyStore.revoke(this.db, id);
    await this.changed(id);
    return this.load(id);
  }

  async usageOf(actor: Principal, id: string): Promise<KeyUsage> {
    const key = await this.get(actor, id);
    await this.usage.flush();
    const row = await apiKeyStore.usage(this.db, id);
    const fresh = await this.load(id);
    return {
      keyId: key.id,
      requestsToday: Number(row.today),
      requestsThisMonth: Number(row.month),
      totalRequests: Number(fresh.requestCount),
      lastUsedAt: fresh.lastUsedAt,
      lastUsedIp: fresh.lastUsedIp,
    };
  }

  /**
   * BOOTSTRAP_API_KEY is ensured to exist with `*`; without it, and with
   * no key at all, one is generated, printed once and written to DATA_DIR/bootstrap-key.
   */
  async ensureBootstrap(opts: { plain?: string; dataDir: string }): Promise<string | undefined> {
    if (opts.plain) {
      const parsed = parseKeyPrefix(opts.plain);
      if (parsed?.service !== 'control-plane') throw new Error('BOOTSTRAP_API_KEY must be a control-plane key');
      await apiKeyStore.ensureBootstrap(this.db, parsed.environment, hashKey(opts.plain), opts.plain.slice(0, 15));
      return undefined;
    }
    if ((await apiKeyStore.count(this.db)) > 0) return undefined;
    const plain = generateKey('control-plane', 'live');
    await apiKeyStore.insertBootstrap(this.db, hashKey(plain), plain.slice(0, 15));
    await mkdir(opts.dataDir, { recursive: true });
    const file = path.join(opts.dataDir, 'bootstrap-key');
    await writeFile(file, plain + '\n', { mode: 0o600 });
    this.logger.info('generated the bootstrap API key (shown once; also written to DATA_DIR/bootstrap-key)', { apiKey: plain, file });
    return plain;
  }

  private async load(id: string): Promise<ApiKeyRecord> {
    const key = await apiKeyStore.byId(this.db, id);
    if (!key) throw errors.notFound('api_key', id);
    return key;
  }

  private async changed(id: string): Promise<void> {
    await this.events.publish(TOPIC.apiKeyChanged, { id });
  }
}

function requireKeyActor(actor: Principal): ApiKeyPrincipal {
  if (actor.kind !== 'apiKey') throw errors.missingAuthorization();
  return actor;
}

function toPrincipal(row: ApiKeyRecord): ApiKeyPrincipal {
  return {
    kind: 'apiKey',
    keyId: row.id,
    name: row.name,
    service: row.service,
    environment: row.environment,
    tier: row.tier,
    permissions: row.permissions,
  };
}

function validate(input: CreateKeyInput): void {
  const problems: FieldError[] = [];
  if (input.name !== undefined && (input.name.trim().length === 0 || input.name.length > 200)) {
    problems.push({ field: 'name', message: 'must be 1 to 200 characters' });
  }
  if (input.permissions !== undefined) {
    if (input.permissions.length === 0) problems.push({ field: 'permissions', message: 'must not be empty' });
    input.permissions.forEach((p, i) => {
      if (!PERMISSION.test(p)) problems.push({ field: `permissions.${i}`, message: `"${p}" is not "*" or "resource:action"` });
    });
  }
  if (input.expiresAt && input.expiresAt.getTime() <= Date.now()) {
    problems.push({ field: 'expires_at', message: 'must be in the future' });
  }
  if (input.service !== undefined && !KEY_SERVICES.includes(input.service)) {
    problems.push({ field: 'service', message: `must be one of ${KEY_SERVICES.join(', ')}` });
  }
  if (input.environment !== undefined && input.environment !== 'live' && input.environment !== 'test') {
    problems.push({ field: 'environment', message: 'must be live or test' });
  }
  if (input.tier !== undefined && !TIERS.includes(input.tier)) {
    problems.push({ field: 'tier', message: `must be one of ${TIERS.join(', ')}` });
  }
  if (problems.length) throw errors.validation(problems);
}
