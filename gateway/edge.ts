import { randomUUID } from 'node:crypto';
import type { ApiKeyService } from '../kernel/auth/api-key.service';
import { ANONYMOUS } from '../kernel/auth/principal';
import type { AppError } from '../kernel/errors';
import { RateLimitExceeded, rateLimitHeaders, type RateLimiter } from '../kernel/rate-limit';
import type { RequestContext } from '../kernel/subgraph';

export interface Presented {
  authorization?: string;
  engineKey?: string;
  queryKey?: string;
  ip?: string;
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

/**
 * The edge authenticates a request once, into a principal, and applies the key's rate limits.
 * No credential gives an anonymous principal: each operation decides (in its subgraph) whether
 * it needs one. A credential that is present but wrong is refused here.
 */
export class Edge {
  constructor(
    private readonly keys: ApiKeyService,
    private readonly limiter: RateLimiter,
  ) {}

  async admit(presented: Presented, requestId: string = newRequestId()): Promise<Admission> {
    const headers: Record<string, string> = { 'x-request-id': requestId };
    const credential = bearer(presented.authorization) ?? presented.engineKey ?? presented.queryKey;
    if (!credential) {
      // No usable credential (none, or not a Bearer token): anonymous. Operations that need a
      // caller answer missing_authorization; introspection and public operations still work.
      return { context: { principal: ANONYMOUS, requestId, ip: presented.ip }, headers };
    }
    let principal;
    try {
      principal = await this.keys.authenticate(credential, presented.ip);
    } catch (err) {
      throw new EdgeRejection(err as AppError, headers);
    }
    try {
      const rateLimit = await this.limiter.consume(principal.keyId, principal.tier);
      Object.assign(headers, rateLimitHeaders(rateLimit));
      return { context: { principal, requestId, rateLimit, ip: presented.ip }, headers };
    } catch (err) {
      if (err instanceof RateLimitExceeded) {
        Object.assign(headers, rateLimitHeaders(err.snapshot), { 'retry-after': String(err.retryAfter) });
      }
      throw new EdgeRejection(err as AppError, headers);
    }
  }
}

export function newRequestId(): string {
  return `req_${randomUUID().replace(/-/g, '').slice(0, 20)}`;
}

function bearer(header: string | undefined): string | undefined {
  if (!header) return undefined;
  const match = /^Bearer\s+(\S+)\s*$/i.exec(header);
  return match?.[1];
}
