import type * as Jose from 'jose';
import { AppError } from '../errors';
import type { Principal } from './principal';

/**
 * Sign-in tokens of the services whose callers are people (feedback, infra): HS256 JWTs signed
 * with the platform's JWT secret (JWT_SECRET, else generated into DATA_DIR). The audience names
 * the service, so a feedback token never opens the infrastructure surface and the reverse.
 */
/** jose, loaded at the first token signed or checked: ~200 ms of every start otherwise, for a sign-in few processes see. */
let joseModule: typeof Jose | undefined;
const jose = (): typeof Jose => (joseModule ??= require('jose') as typeof Jose);

export type TokenService = 'feedback' | 'infra';

export interface TokenClaims {
  userId: string;
  service: TokenService;
  roles: string[];
  permissions: string[];
}

const ISSUER = 'automation-platform';

export class TokenSigner {
  private readonly key: Uint8Array;

  constructor(secret: string) {
    this.key = new TextEncoder().encode(secret);
  }

  /** A token for `claims` valid `ttlSeconds` from now. */
  async issue(claims: TokenClaims, ttlSeconds: number): Promise<string> {
    return new (jose().SignJWT)({ roles: claims.roles, permissions: claims.permissions })
      .setProtectedHeader({ alg: 'HS256', typ: 'JWT' })
      .setSubject(claims.userId)
      .setAudience(claims.service)
      .setIssuer(ISSUER)
      .setIssuedAt()
      .setExpirationTime(Math.floor(Date.now() / 1000) + ttlSeconds)
      .sign(this.key);
  }

  /** The principal a token stands for; 401 `unauthorized` when it is forged, expired or malformed. */
  async verify(token: string): Promise<Extract<Principal, { kind: 'user' }> & { expiresAt: Date }> {
    try {
      const { payload } = await jose().jwtVerify(token, this.key, { issuer: ISSUER, algorithms: ['HS256'] });
      const service = Array.isArray(payload.aud) ? payload.aud[0] : payload.aud;
      if ((service !== 'feedback' && service !== 'infra') || typeof payload.sub !== 'string') throw new Error('bad claims');
      return {
        kind: 'user',
        userId: payload.sub,
        service,
        roles: stringList(payload.roles),
        permissions: stringList(payload.permissions),
        expiresAt: new Date((payload.exp ?? 0) * 1000),
      };
    } catch (err) {
      const expired = err instanceof jose().errors.JWTExpired;
      throw new AppError('unauthorized', expired ? 'The token has expired' : 'The token is invalid', { reason: expired ? 'expired' : 'invalid' });
    }
  }
}

/** A compact JWS (three base64url segments); API keys never contain a dot. */
export function looksLikeJwt(credential: string): boolean {
  return /^[A-Za-z0-9_-]+\.[A-Za-z0-9_-]+\.[A-Za-z0-9_-]*$/.test(credential);
}

function stringList(v: unknown): string[] {
  return Array.isArray(v) ? v.filter((x): x is string => typeof x === 'string') : [];
}
