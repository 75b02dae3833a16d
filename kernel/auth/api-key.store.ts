import { count, exec, one, prepared, rows, type Queryable } from '../db/rows';
import type { Environment, KeyService, Tier } from './principal';

/**
 * Where platform API keys (platform.api_keys) and their daily usage (platform.api_key_usage) are
 * read and written for api-key.service.ts. Only the SHA-256 of a key is stored; only the
 * authentication reads it back.
 */

/** A platform API key, as KEY_COLUMNS reads it (columns under their property names). */
export interface ApiKeyRecord {
  id: string;
  name: string;
  service: KeyService;
  environment: Environment;
  tier: Tier;
  permissions: string[];
  keyPrefix: string;
  createdBy: string | null;
  createdAt: Date;
  updatedAt: Date;
  expiresAt: Date | null;
  revokedAt: Date | null;
  lastUsedAt: Date | null;
  lastUsedIp: string | null;
  /** A bigint, as text. */
  requestCount: string;
}

/** The columns under their property names (key_hash is never read back, outside the authentication). */
const KEY_COLUMNS = `id, name, service, environment, tier, permissions, key_prefix AS "keyPrefix", created_by AS "createdBy", created_at AS "createdAt",
  updated_at AS "updatedAt", expires_at AS "expiresAt", revoked_at AS "revokedAt", last_used_at AS "lastUsedAt", last_used_ip AS "lastUsedIp",
  request_count::text AS "requestCount"`;

export interface NewKey {
  name: string;
  service: KeyService;
  environment: Environment;
  tier: Tier;
  permissions: string[];
  keyHash: Buffer;
  keyPrefix: string;
  createdBy: string | null;
  expiresAt: Date | null;
}

export const apiKeyStore = {
  /** The key with this digest, with the stored digest (for the constant-time compare). */
  byHash: (q: Queryable, hash: Buffer) =>
    one<ApiKeyRecord & { keyHash: Buffer }>(q, prepared(`SELECT ${KEY_COLUMNS}, key_hash AS "keyHash" FROM platform.api_keys WHERE key_hash = $1`), [hash]),

  /** The key (id already checked to be a UUID), or undefined. */
  byId: (q: Queryable, id: string) => one<ApiKeyRecord>(q, prepared(`SELECT ${KEY_COLUMNS} FROM platform.api_keys WHERE id = $1`), [id]),

  /** The keys of these ids (UUIDs already checked); absent ones are left out. */
  byIds: (q: Queryable, ids: readonly string[]) =>
    rows<ApiKeyRecord>(q, prepared(`SELECT ${KEY_COLUMNS} FROM platform.api_keys WHERE id = ANY($1::uuid[])`), [ids]),

  /** Every key, newest first; with `keyId`, only that key and the keys it created. */
  list: (q: Queryable, keyId: string | null) =>
    keyId === null
      ? rows<ApiKeyRecord>(q, `SELECT ${KEY_COLUMNS} FROM platform.api_keys ORDER BY created_at DESC`)
      : rows<ApiKeyRecord>(q, `SELECT ${KEY_COLUMNS} FROM platform.api_keys WHERE created_by = $1 OR id = $1 ORDER BY created_at DESC`, [keyId]),

  /** The new key's id. */
  insert: async (q: Queryable, k: NewKey): Promise<string> =>
    (await one<{ id: string }>(
      q,
      `INSERT INTO platform.api_keys (name, service, environment, tier, permissions, key_hash, key_prefix, created_by, expires_at)
       VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9) RETURNING id`,
      [k.name, k.service, k.environment, k.tier, k.permissions, k.keyHash, k.keyPrefix, k.createdBy, k.expiresAt],
    ))!.id,

  /** Sets the fields given (undefined: unchanged); updated_at moves either way. */
  update(q: Queryable, id: string, change: { name?: string; expiresAt?: Date | null }): Promise<void> {
    const params: unknown[] = [id];
    const sets: string[] = [];
    if (change.name !== undefined) sets.push(`name = $${params.push(change.name)}`);
    if (change.expiresAt !== undefined) sets.push(`expires_at = $${params.push(change.expiresAt)}`);
    return exec(q, `UPDATE platform.api_keys SET ${[...sets, 'updated_at = now()'].join(', ')} WHERE id = $1`, params);
  },

  /** Idempotent: revoking twice keeps the first revocation time. */
  revoke: (q: Queryable, id: string) =>
    exec(q, `UPDATE platform.api_keys SET revoked_at = now(), updated_at = now() WHERE id = $1 AND revoked_at IS NULL`, [id]),

  /** Requests of the key today and this month (UTC days). */
  usage: async (q: Queryable, id: string) =>
    (await one<{ today: string; month: string }>(
      q,
      `SELECT
         coalesce(sum(requests) FILTER (WHERE day = (now() AT TIME ZONE 'UTC')::date), 0)::bigint AS today,
         coalesce(sum(requests) FILTER (WHERE day >= date_trunc('month', now() AT TIME ZONE 'UTC')::date), 0)::bigint AS month
       FROM platform.api_key_usage WHERE key_id = $1`,
      [id],
    ))!,

  count: (q: Queryable) => count(q, `SELECT count(*)::int AS n FROM platform.api_keys`),

  /** BOOTSTRAP_API_KEY: created, or made whole again (`*`, not revoked, not expiring). */
  ensureBootstrap: (q: Queryable, environment: Environment, hash: Buffer, prefix: string) =>
    exec(
      q,
      `INSERT INTO platform.api_keys (name, service, environment, tier, permissions, key_hash, key_prefix)
         VALUES ('bootstrap', 'control-plane', $1, 'enterprise', '{*}', $2, $3)
         ON CONFLICT (key_hash) DO UPDATE SET permissions = '{*}', revoked_at = NULL, expires_at = NULL`,
      [environment, hash, prefix],
    ),

  /** A generated bootstrap key (there was no key at all). */
  insertBootstrap: (q: Queryable, hash: Buffer, prefix: string) =>
    exec(
      q,
      `INSERT INTO platform.api_keys (name, service, environment, tier, permissions, key_hash, key_prefix)
       VALUES ('bootstrap', 'control-plane', 'live', 'enterprise', '{*}', $1, $2)`,
      [hash, prefix],
    ),
};
