import { page, Where, type PageWindow } from '../../../kernel/db/page';
import { exec, one, rows, type Queryable } from '../../../kernel/db/rows';

/**
 * Where credentials are kept (engine.credentials): the shown fields in `settings`, the data as
 * ciphertext (`data_enc`) with its key's id. service.ts decides; this reads and writes.
 */

/** A credential as it may be shown: no ciphertext. */
export interface CredentialRow {
  id: string;
  name: string;
  type: string;
  settings: Record<string, string>;
  /** When an OAuth2 credential last received tokens. */
  connected_at: Date | null;
  created_at: Date;
  updated_at: Date;
}

/** A credential with its ciphertext, for the engine's own use only. */
export interface SealedRow extends CredentialRow {
  data_enc: Buffer;
  key_id: string;
}

const SHOWN = 'id, name, type, settings, connected_at, created_at, updated_at';

export async function insert(
  q: Queryable,
  row: { id: string; name: string; type: string; settings: Record<string, string>; dataEnc: Buffer; keyId: string },
): Promise<CredentialRow | undefined> {
  return one<CredentialRow>(
    q,
    `INSERT INTO engine.credentials (id, name, type, settings, data_enc, key_id) VALUES ($1, $2, $3, $4, $5, $6)
     ON CONFLICT (name) DO NOTHING RETURNING ${SHOWN}`,
    [row.id, row.name, row.type, JSON.stringify(row.settings), row.dataEnc, row.keyId],
  );
}

export function byName(q: Queryable, name: string): Promise<{ id: string } | undefined> {
  return one(q, `SELECT id FROM engine.credentials WHERE name = $1`, [name]);
}

export function shown(q: Queryable, id: string): Promise<CredentialRow | undefined> {
  return one<CredentialRow>(q, `SELECT ${SHOWN} FROM engine.credentials WHERE id = $1`, [id]);
}

export function sealed(q: Queryable, id: string): Promise<SealedRow | undefined> {
  return one<SealedRow>(q, `SELECT ${SHOWN}, data_enc, key_id FROM engine.credentials WHERE id = $1`, [id]);
}

/** Credentials by id or by name (either list may be empty): what an import resolves against. */
export function byIdsOrNames(q: Queryable, ids: string[], names: string[]): Promise<CredentialRow[]> {
  return rows<CredentialRow>(q, `SELECT ${SHOWN} FROM engine.credentials WHERE id = ANY($1::uuid[]) OR name = ANY($2::text[])`, [ids, names]);
}

export function list(q: Queryable, filter: { type?: string } & PageWindow): Promise<{ rows: CredentialRow[]; total: number }> {
  const where = new Where().equals('type', filter.type);
  return page<CredentialRow>(q, { select: SHOWN, from: `FROM engine.credentials ${where}`, orderBy: 'created_at DESC, id DESC', params: where.params }, filter);
}

export function remove(q: Queryable, id: string): Promise<{ id: string } | undefined> {
  return one(q, `DELETE FROM engine.credentials WHERE id = $1 RETURNING id`, [id]);
}

/** New ciphertext: re-encrypted under the current key (rotation), or with new tokens (`connected`). */
export async function reseal(q: Queryable, id: string, dataEnc: Buffer, keyId: string, connected = false): Promise<void> {
  await exec(q, `UPDATE engine.credentials SET data_enc = $2, key_id = $3, connected_at = CASE WHEN $4 THEN now() ELSE connected_at END WHERE id = $1`, [
    id,
    dataEnc,
    keyId,
    connected,
  ]);
}

/** The rows not under the current key (rotation). */
export function underOtherKeys(q: Queryable, currentKeyId: string): Promise<{ id: string }[]> {
  return rows(q, `SELECT id FROM engine.credentials WHERE key_id <> $1`, [currentKeyId]);
}

/** Locks one row for an update of its ciphertext (refresh, rotation). */
export function lockSealed(q: Queryable, id: string): Promise<SealedRow | undefined> {
  return one<SealedRow>(q, `SELECT ${SHOWN}, data_enc, key_id FROM engine.credentials WHERE id = $1 FOR UPDATE`, [id]);
}

export async function setConsentState(q: Queryable, id: string, stateHash: Buffer, redirectUrl: string): Promise<void> {
  await exec(q, `UPDATE engine.credentials SET oauth_state_hash = $2, oauth_redirect_url = $3 WHERE id = $1`, [id, stateHash, redirectUrl]);
}

/** The credential waiting for this consent, its state taken (a state is used once). */
export function takeConsentState(q: Queryable, stateHash: Buffer): Promise<{ id: string; oauth_redirect_url: string } | undefined> {
  return one(
    q,
    `UPDATE engine.credentials c SET oauth_state_hash = NULL FROM (SELECT id, oauth_redirect_url FROM engine.credentials WHERE oauth_state_hash = $1 FOR UPDATE) old
     WHERE c.id = old.id RETURNING c.id, old.oauth_redirect_url`,
    [stateHash],
  );
}
