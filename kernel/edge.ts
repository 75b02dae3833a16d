import { randomUUID } from 'node:crypto';
import type { ApiKeyService } from './auth/api-key.service';
import { looksLikeJwt, type TokenSigner } from './auth/jwt';
import { ANONYMOUS, type Principal } from './auth/principal';
import { AppError } from './errors';
import { INFRA_HOURLY_LIMITS, RateLimitExceeded, rateLimitHeaders, type RateLimiter, type WindowStatus } from './rate-limit';
import type { RequestContext } from './subgraph';

export interface Presented {
  authorization?: string;
  engineKey?: string;
  /** `X-API-Key` (the infrastructure service's header). */
  apiKeyHeader?: string;
  queryKey?: string;
  ip?: string;
  /** The client's User-Agent header, as it came (kept in the audit trail). */
  userAgent?: string;
  /** The request's scheme and host (Fastify's, which follow X-Forwarded-* only with TRUST_PROXY). */
  origin?: string;
}

export interface Admission {
  context: RequestContext;
  /** Headers every response to this request carries (rate limits, request id). */
  headers: Record<string, string>;
}

/** An edge refusal: the error plus the headers the answer must still carry (Retry-After, limits). */
export class EdgeRejection extends Error {
  constructor(
    readonly error: AppError,
    readonly headers: Record<string, string>,
  ) {
    super(error.message);
  }
}

export interface EdgeOptions {
  keys: ApiKeyService;
  limiter: RateLimiter;
  tokens: TokenSigner;
  /** PUBLIC_URL: the base of absolute URLs; unset, each request's own scheme and host. */
  publicUrl?: string;
  /** Requests without a credential, per client address and minute (ANONYMOUS_RATE_LIMIT). */
  anonymousPerMinute?: number;
}

/** Per client address: failed authentications a minute (then 429 instead of 401), and anonymous introspection. */
export const AUTH_FAILURES_PER_MINUTE = 30;
export const ANONYMOUS_INTROSPECTION_PER_MINUTE = 10;

/**
 * The edge authenticates a request once, into a principal, and applies the key's rate limits.
 * No credential gives an anonymous principal: each operation decides (in its subgraph) whether
 * it needs one. A credential that is present but wrong is refused here.
 */
export class Edge {
  constructor(private readonly opts: EdgeOptions) {}

  /** The base of absolute URLs for this request (PUBLIC_URL, else the request's own). */
  baseUrl(presented: Pick<Presented, 'origin'>): string | undefined {
    return this.opts.publicUrl ?? presented.origin;
  }

  async admit(presented: Presented, requestId: string = newRequestId()): Promise<Admission> {
    const { keys, limiter, tokens } = this.opts;
    const headers: Record<string, string> = { 'x-request-id': requestId };
    const baseUrl = this.baseUrl(presented);
    const credential = credentialOf(presented);
    if (!credential) {
      // No usable credential (none, or not a Bearer token): anonymous. Operations that need a
      // caller answer missing_authorization; introspection and public operations still work,
      // within a per-address limit.
      await this.perAddress('anonymous', presented.ip, this.opts.anonymousPerMinute ?? 120, headers);
      return { context: { principal: ANONYMOUS, requestId, ip: presented.ip, userAgent: presented.userAgent, baseUrl }, headers };
    }
    if (looksLikeJwt(credential)) {
      // A person signed in to the feedback or infrastructure service; those services apply their
      // own per-user limits, the key tiers do not apply to people.
      let principal;
      try {
        principal = await tokens.verify(credential);
      } catch (err) {
        await this.failedAuthentication(presented.ip, headers);
        throw new EdgeRejection(err as AppError, headers);
      }
      if (principal.service === 'infra') await this.hourly('infra-user', principal.userId, INFRA_HOURLY_LIMITS.perUser, headers);
      return { context: { principal, requestId, ip: presented.ip, userAgent: presented.userAgent, baseUrl }, headers };
    }
    let principal;
    try {
      principal = await keys.authenticate(credential, presented.ip);
    } catch (err) {
      await this.failedAuthentication(presented.ip, headers);
      throw new EdgeRejection(err as AppError, headers);
    }
    if (principal.service === 'infra') {
      // The infrastructure service's own limit: per key and hour, whatever the tier.
      await this.hourly('infra-key', principal.keyId, INFRA_HOURLY_LIMITS.perKey, headers);
      return { context: { principal, requestId, ip: presented.ip, userAgent: presented.userAgent, baseUrl }, headers };
    }
    try {
      const rateLimit = await limiter.consume(principal.keyId, principal.tier);
      Object.assign(headers, rateLimitHeaders(rateLimit));
      return { context: { principal, requestId, rateLimit, ip: presented.ip, userAgent: presented.userAgent, baseUrl }, headers };
    } catch (err) {
      if (err instanceof RateLimitExceeded) {
        Object.assign(headers, rateLimitHeaders(err.snapshot), { 'retry-after': String(err.retryAfter) });
      }
      throw new EdgeRejection(err as AppError, headers);
    }
  }

  /**
   * A credential admitted earlier, checked again for a connection that outlives its request (a
   * subscription, a followed stream; kernel/credential-watch.ts): the principal it stands for now
   * and when it stops being valid, or the refusal a request with it would get now
   * (invalid_api_key, expired_api_key, unauthorized). It counts against no limit and as no use of
   * the key; `fresh` reads a key past the key cache.
   */
  async recheck(presented: Presented, fresh: boolean): Promise<{ principal: Principal; expiresAt: Date | null }> {
    const credential = credentialOf(presented);
    if (!credential) return { principal: ANONYMOUS, expiresAt: null };
    if (looksLikeJwt(credential)) {
      const principal = await this.opts.tokens.verify(credential);
      return { principal, expiresAt: principal.expiresAt };
    }
    return this.opts.keys.current(credential, fresh);
  }

  /** A fixed hourly window per key or person, with the X-RateLimit-* headers; 429 with Retry-After beyond it. */
  private async hourly(name: string, id: string, perHour: number, headers: Record<string, string>): Promise<void> {
    try {
      Object.assign(headers, windowHeaders(await this.opts.limiter.consumeNamed(name, id, perHour, 3600)));
    } catch (err) {
      if (err instanceof AppError && err.code === 'RATE_LIMIT_EXCEEDED') {
        const retryAfter = Number(err.details.retryAfter ?? 3600);
        Object.assign(headers, windowHeaders({ limit: perHour, remaining: 0, resetAt: new Date(Date.now() + retryAfter * 1000) }), {
          'retry-after': String(retryAfter),
        });
        throw new EdgeRejection(
          new AppError('RATE_LIMIT_EXCEEDED', `Rate limit of ${perHour} requests per hour exceeded`, { ...err.details, scope: name }),
          headers,
        );
      }
      throw err;
    }
  }

  /** Anonymous introspection has its own, lower limit per address (the schema is the costliest answer). */
  async admitIntrospection(context: RequestContext, headers: Record<string, string>): Promise<void> {
    if (context.principal.kind === 'anonymous') await this.perAddress('anonymous-introspection', context.ip, ANONYMOUS_INTROSPECTION_PER_MINUTE, headers);
  }

  /** Guessing keys from one address ends in 429 (with Retry-After) rather than more 401s. */
  private async failedAuthentication(ip: string | undefined, headers: Record<string, string>): Promise<void> {
    await this.perAddress('auth-failures', ip, AUTH_FAILURES_PER_MINUTE, headers);
  }

  private async perAddress(name: string, ip: string | undefined, perMinute: number, headers: Record<string, string>): Promise<void> {
    try {
      const w = await this.opts.limiter.consumeNamed(`edge:${name}`, ip ?? 'unknown', perMinute, 60);
      Object.assign(headers, windowHeaders(w));
    } catch (err) {
      if (err instanceof AppError && err.code === 'RATE_LIMIT_EXCEEDED') {
        const retryAfter = Number(err.details.retryAfter ?? 60);
        Object.assign(headers, windowHeaders({ limit: perMinute, remaining: 0, resetAt: new Date(Date.now() + retryAfter * 1000) }), {
          'retry-after': String(retryAfter),
        });
        throw new EdgeRejection(
          new AppError(
            'RATE_LIMIT_EXCEEDED',
            `Too many ${name === 'auth-failures' ? 'failed authentications' : name.replace('-', ' ') + ' requests'} from this address: at most ${perMinute} a minute`,
            {
              ...err.details,
              scope: 'address',
            },
          ),
          headers,
        );
      }
      throw err;
    }
  }
}

function windowHeaders(w: WindowStatus): Record<string, string> {
  return {
    'x-ratelimit-limit': String(w.limit),
    'x-ratelimit-remaining': String(w.remaining),
    'x-ratelimit-reset': String(Math.ceil(w.resetAt.getTime() / 1000)),
  };
}

export function newRequestId(): string {
  return `req_${randomUUID().replace(/-/g, '').slice(0, 20)}`;
}

/** The credential a request presents, in the order the headers are believed. */
function credentialOf(presented: Presented): string | undefined {
  return bearer(presented.authorization) ?? presented.engineKey ?? presented.apiKeyHeader ?? presented.queryKey;
}

function bearer(header: string | undefined): string | undefined {
  if (!header) return undefined;
  const match = /^Bearer\s+(\S+)\s*$/i.exec(header);
  return match?.[1];
}
