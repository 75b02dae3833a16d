import { withTransaction } from '../../../kernel/db/transaction';
import { createHash, randomBytes, randomUUID } from 'node:crypto';
import type { DataSource } from 'typeorm';
import { realClock, type Clock } from '../../../kernel/clock';
import { checkWindow } from '../../../kernel/db/page';
import { AppError, errors, registerErrorCodes } from '../../../kernel/errors';
import { UUID } from '../../../kernel/ids';
import type { Logger } from '../../../kernel/logger';
import { isPlainObject, NodeError, workflowInvalid, type CredentialRef, type NodeCredentials, type WorkflowNode } from '../nodes';
import { checkData, CREDENTIAL_KINDS, settingsOf } from './kinds';
import type { CredentialKeyRing } from './keys';
import { consentUrl, tokenRequest, TokenRefused, type Fetch, type TokenData } from './oauth2';
import * as store from './store';

export const CREDENTIAL_CODES = registerErrorCodes({ CREDENTIAL_MISSING: 400 });

/** A credential as every answer shows it: never its secret fields nor its tokens. */
export interface CredentialView {
  credentialId: string;
  name: string;
  type: string;
  settings: Record<string, string>;
  connectedAt: Date | null;
  createdAt: Date;
  updatedAt: Date;
}

const toView = (r: store.CredentialRow): CredentialView => ({
  credentialId: r.id,
  name: r.name,
  type: r.type,
  settings: r.settings,
  connectedAt: r.connected_at,
  createdAt: r.created_at,
  updatedAt: r.updated_at,
});

/** A token still this many milliseconds from its expiry is renewed before it is used. */
const EXPIRY_MARGIN_MS = 30_000;

/**
 * n8n credentials: created, listed, deleted (never shown back), their data sealed under the key
 * ring (keys.ts); resolved by id, then name, when a workflow that names them is saved; handed to
 * the nodes that use them at run time, an OAuth2 credential's tokens fetched and refreshed here.
 */
export class CredentialService {
  constructor(
    private readonly db: DataSource,
    private readonly keys: () => CredentialKeyRing,
    private readonly fetch: Fetch,
    private readonly logger: Logger,
    private readonly clock: Clock = realClock,
  ) {}

  async create(input: { name: string; type: string; data: Record<string, unknown> }): Promise<CredentialView> {
    const name = typeof input.name === 'string' ? input.name.trim() : '';
    if (!name || name.length > 200) throw errors.field('name', 'must be 1 to 200 characters');
    if (!isPlainObject(input.data)) throw errors.field('data', 'must be an object of the type’s fields');
    const data = checkData(input.type, input.data);
    const id = randomUUID();
    const { ciphertext, keyId } = this.keys().seal(data, id);
    const row = await store.insert(this.db, { id, name, type: input.type, settings: settingsOf(input.type, data), dataEnc: ciphertext, keyId });
    if (!row) throw errors.alreadyExists('name', name, (await store.byName(this.db, name))?.id);
    return toView(row);
  }

  async get(id: string): Promise<CredentialView> {
    const row = UUID.test(id) ? await store.shown(this.db, id) : undefined;
    if (!row) throw errors.notFound('credential', id);
    return toView(row);
  }

  async list(filter: { type?: string; limit: number; offset: number }): Promise<{ credentials: CredentialView[]; total: number }> {
    checkWindow(filter);
    const { rows, total } = await store.list(this.db, filter);
    return { credentials: rows.map(toView), total };
  }

  /** Workflows that name it keep their reference: their next run fails naming the credential. */
  async delete(id: string): Promise<{ credentialId: string; deletedAt: Date }> {
    const row = UUID.test(id) ? await store.remove(this.db, id) : undefined;
    if (!row) throw errors.notFound('credential', id);
    return { credentialId: id, deletedAt: this.clock.now() };
  }

  /**
   * The nodes with every `credentials` reference made one of ours: by id, else by name (an n8n
   * export carries n8n's ids), of the type it is named under. A reference that matches none is
   * 400 CREDENTIAL_MISSING naming the node, the type and the credential.
   */
  async resolveNodes(nodes: unknown[]): Promise<unknown[]> {
    const refs: { node: string; type: string; id?: string; name?: string }[] = [];
    for (const n of nodes) {
      if (!isPlainObject(n) || n.credentials === undefined || n.credentials === null) continue;
      if (!isPlainObject(n.credentials))
        throw workflowInvalid(`Node "${n.name}": credentials must be an object {<type>: {id, name}}`, { reason: 'invalid_credentials', node: n.name });
      for (const [type, ref] of Object.entries(n.credentials)) {
        const r = isPlainObject(ref) ? ref : {};
        const id = r.id === undefined || r.id === null ? undefined : String(r.id);
        const name = typeof r.name === 'string' ? r.name : undefined;
        refs.push({ node: String(n.name), type, id, name });
      }
    }
    if (!refs.length) return nodes;
    const found = await store.byIdsOrNames(
      this.db,
      refs.map((r) => r.id).filter((id): id is string => id !== undefined && UUID.test(id)),
      refs.map((r) => r.name).filter((n): n is string => n !== undefined),
    );
    const resolved = new Map<string, CredentialRef>();
    for (const r of refs) {
      const hit = found.find((c) => c.id === r.id && c.type === r.type) ?? found.find((c) => c.name === r.name && c.type === r.type);
      if (!hit) throw missing(r);
      resolved.set(`${r.node}\u0000${r.type}`, { id: hit.id, name: hit.name });
    }
    return nodes.map((n) => {
      if (!isPlainObject(n) || !isPlainObject(n.credentials)) return n;
      const credentials = Object.fromEntries(Object.keys(n.credentials).map((type) => [type, resolved.get(`${n.name}\u0000${type}`)!]));
      return { ...n, credentials };
    });
  }

  /** What a run's nodes get (NodeServices.credentials). */
  forNodes(): NodeCredentials {
    return {
      data: async (type, ref) => {
        const { data } = await this.open(type, ref);
        const fields = Object.keys(CREDENTIAL_KINDS[type] ?? {});
        return Object.fromEntries(Object.entries(data).filter(([k, v]) => fields.includes(k) && typeof v === 'string'));
      },
      accessToken: (ref, signal, renew) => this.accessToken(ref, signal, renew === true),
    };
  }

  /** Starts the authorization-code grant: the URL where a person consents; `redirectUri` receives the code. */
  async authorize(id: string, redirectUri: string): Promise<{ credentialId: string; authorizationUrl: string }> {
    const row = UUID.test(id) ? await store.sealed(this.db, id) : undefined;
    if (!row) throw errors.notFound('credential', id);
    if (row.type !== 'oAuth2Api' || row.settings.grantType !== 'authorizationCode') {
      throw errors.field('credentialId', 'must name an oAuth2Api credential with the authorizationCode grant');
    }
    const state = randomBytes(32).toString('base64url');
    await store.setConsentState(this.db, id, digest(state), redirectUri);
    return { credentialId: id, authorizationUrl: consentUrl(row.settings, redirectUri, state) };
  }

  /** The consent's answer (the callback): the code exchanged for tokens, stored in the credential. */
  async completeAuthorization(input: { state?: string; code?: string; error?: string }): Promise<CredentialView> {
    if (!input.state) throw errors.field('state', 'is required', 'required_field_missing');
    const pending = await store.takeConsentState(this.db, digest(input.state));
    if (!pending) throw errors.field('state', 'does not match a consent in progress (it is used once)');
    if (input.error) throw errors.field('error', `the authorization server refused the consent: ${input.error.slice(0, 200)}`);
    if (!input.code) throw errors.field('code', 'is required', 'required_field_missing');
    const { row, data } = await this.open('oAuth2Api', { id: pending.id, name: '' });
    let tokens: TokenData;
    try {
      tokens = await tokenRequest(
        this.fetch,
        data,
        { grant_type: 'authorization_code', code: input.code, redirect_uri: pending.oauth_redirect_url },
        this.clock.now().getTime(),
      );
    } catch (err) {
      if (err instanceof TokenRefused)
        throw new AppError('upstream_error', err.message, { credentialId: row.id, status: err.status, oauthError: err.oauthError });
      throw err;
    }
    await this.storeTokens(row.id, data, tokens);
    return this.get(row.id);
  }

  /** Re-encrypts every credential under an older key (CREDENTIALS_KEY_PREVIOUS) under the current one; the count. */
  async reencrypt(): Promise<number> {
    const ring = this.keys();
    let done = 0;
    for (const { id } of await store.underOtherKeys(this.db, ring.currentId)) {
      await withTransaction(this.db, async ({ manager: m }) => {
        const row = await store.lockSealed(m, id);
        if (!row || row.key_id === ring.currentId) return;
        if (!ring.knows(row.key_id)) {
          this.logger.warn('credential under an unknown key: set CREDENTIALS_KEY_PREVIOUS to the key it was encrypted with', {
            credentialId: id,
            keyId: row.key_id,
          });
          return;
        }
        const sealed = ring.seal(ring.open(row.data_enc, row.key_id, id)!, id);
        await store.reseal(m, id, sealed.ciphertext, sealed.keyId);
        done++;
      });
    }
    if (done) this.logger.info('credentials re-encrypted under the current key', { count: done, keyId: ring.currentId });
    return done;
  }

  private async open(type: string, ref: CredentialRef): Promise<{ row: store.SealedRow; data: Record<string, string> }> {
    const row = UUID.test(ref.id) ? await store.sealed(this.db, ref.id) : undefined;
    const label = `The ${type} credential "${ref.name || ref.id}"`;
    if (!row)
      throw new NodeError(`${label} does not exist (deleted?): create it and save the workflow again`, { credential: ref, reason: 'credential_missing' });
    if (row.type !== type) throw new NodeError(`${label} is of type ${row.type}, not ${type}`, { credential: ref, reason: 'credential_type' });
    const data = this.keys().open(row.data_enc, row.key_id, row.id);
    if (!data) {
      throw new NodeError(`${label} is encrypted under a key this platform does not have (CREDENTIALS_KEY_PREVIOUS)`, {
        credential: ref,
        reason: 'credential_key',
      });
    }
    return { row, data: data as Record<string, string> };
  }

  private async accessToken(ref: CredentialRef, signal: AbortSignal, renew: boolean): Promise<string> {
    const { row, data } = await this.open('oAuth2Api', ref);
    const held = readTokens(data);
    const now = this.clock.now().getTime();
    if (!renew && held && (held.expiresAt === undefined || held.expiresAt - EXPIRY_MARGIN_MS > now)) return held.accessToken;
    let tokens: TokenData | undefined;
    try {
      if (held?.refreshToken) {
        try {
          tokens = await tokenRequest(this.fetch, data, { grant_type: 'refresh_token', refresh_token: held.refreshToken }, now, signal);
          // A server that does not rotate refresh tokens keeps the one it gave.
          if (!tokens.refreshToken) tokens.refreshToken = held.refreshToken;
        } catch (err) {
          if (!(err instanceof TokenRefused) || data.grantType !== 'clientCredentials') throw err;
        }
      }
      if (!tokens) {
        if (data.grantType !== 'clientCredentials') {
          throw new NodeError(
            `The oAuth2Api credential "${row.name}" is not connected: a person completes its consent once (POST /v1/engine/credentials/${row.id}/authorize)`,
            { credential: { id: row.id, name: row.name }, reason: 'credential_not_connected' },
          );
        }
        tokens = await tokenRequest(this.fetch, data, { grant_type: 'client_credentials', ...(data.scope ? { scope: data.scope } : {}) }, now, signal);
      }
    } catch (err) {
      if (err instanceof TokenRefused) {
        throw new NodeError(`The oAuth2Api credential "${row.name}" got no access token: ${err.message}`, {
          credential: { id: row.id, name: row.name },
          reason: 'credential_token',
          status: err.status,
          ...(err.oauthError ? { oauthError: err.oauthError } : {}),
        });
      }
      throw err;
    }
    await this.storeTokens(row.id, data, tokens);
    return tokens.accessToken;
  }

  private async storeTokens(id: string, data: Record<string, string>, tokens: TokenData): Promise<void> {
    const sealed = this.keys().seal({ ...data, oauthTokenData: tokens }, id);
    await store.reseal(this.db, id, sealed.ciphertext, sealed.keyId, true);
  }
}

function readTokens(data: Record<string, unknown>): TokenData | undefined {
  const t = data.oauthTokenData;
  if (!isPlainObject(t) || typeof t.accessToken !== 'string') return undefined;
  const { refreshToken, tokenType, expiresAt } = t;
  return {
    accessToken: t.accessToken,
    ...(typeof refreshToken === 'string' ? { refreshToken } : {}),
    ...(typeof tokenType === 'string' ? { tokenType } : {}),
    ...(typeof expiresAt === 'number' ? { expiresAt } : {}),
  };
}

function digest(state: string): Buffer {
  return createHash('sha256').update(state).digest();
}

function missing(r: { node: string; type: string; id?: string; name?: string }): AppError {
  const which =
    [r.name !== undefined ? `"${r.name}"` : undefined, r.id !== undefined ? `(id ${r.id})` : undefined].filter(Boolean).join(' ') || '(no id or name)';
  return new AppError(
    'CREDENTIAL_MISSING',
    `Node "${r.node}" uses the ${r.type} credential ${which}, which does not exist here: create a ${r.type} credential named "${r.name ?? ''}" (POST /v1/engine/credentials), then import again`,
    { node: r.node, type: r.type, ...(r.id !== undefined ? { credentialId: r.id } : {}), ...(r.name !== undefined ? { credentialName: r.name } : {}) },
  );
}
